"""Write an :class:`~callbench.benchmarks.codexomics.suite.ImportResult` as a runnable suite folder.

Layout (the native loader's folder format, see ``docs/case-format.md``)::

    OUT/suite.yaml                 name, executor, registry folder, system prompt, provenance
    OUT/cases/<suite_id>.jsonl     one case per line
    OUT/tools/<tool>.json          one contract per tool
    OUT/import-report.txt          every problem, one line each
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from callbench.plugin import UserError

if TYPE_CHECKING:
    from callbench.benchmarks.codexomics.suite import ImportResult

REPORT_NAME = "import-report.txt"


def write_suite(
    result: ImportResult, out_dir: str | Path, *, name: str = "codexomics", system_prompt: str = ""
) -> Path:
    """Write the folder; files this function owns are replaced, anything else is left alone.

    Returns:
        The output folder.
    """
    from callbench.benchmarks.codexomics.suite import SYSTEM_PROMPT

    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise UserError(f"{out}: output path exists and is not a folder")
    (out / "tools").mkdir(parents=True, exist_ok=True)
    (out / "cases").mkdir(exist_ok=True)
    _clear(out / "tools", "*.json")
    _clear(out / "cases", "*.jsonl")
    for tool, contract in sorted(result.contracts.items()):
        _write_json(out / "tools" / f"{tool}.json", contract)
    for suite_id in result.suites:
        lines = [
            json.dumps(c, ensure_ascii=False) for c in result.cases if c["metadata"]["suite_id"] == suite_id
        ]
        (out / "cases" / f"{suite_id}.jsonl").write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    header = _header(result, name, system_prompt or SYSTEM_PROMPT)
    (out / "suite.yaml").write_text(
        yaml.safe_dump(header, sort_keys=False, allow_unicode=True), encoding="utf-8"
    )
    (out / REPORT_NAME).write_text("".join(p.line() + "\n" for p in result.problems), encoding="utf-8")
    return out


def _header(result: ImportResult, name: str, system_prompt: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": "CodeXomics automatic suites imported with `callbench import codexomics`.",
        "version": "1",
        "executor": "contract",
        "registry": "tools",
        "system_prompt": system_prompt,
        "codexomics": {
            suite_id: {k: v for k, v in info.items() if v is not None}
            for suite_id, info in result.suites.items()
        },
    }


def _clear(folder: Path, pattern: str) -> None:
    for path in folder.glob(pattern):
        path.unlink()


def _write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
