"""Score existing BFCL result files with callbench's BFCL checker (no model, no registered name).

Reads every ``BFCL_v4_<category>_result.json`` under a folder (BFCL's layout is
``<result-dir>/<model>/<group>/...``; any depth works), judges each entry against the question
and possible-answer files (installed ``bfcl-eval`` package or ``--data``), and returns BFCL-style
per-category accuracy and summaries.  Optionally writes BFCL-format score files.

Function names: providers that forbid ``.`` in tool names make BFCL expect ``_`` instead (the
model config's ``underscore_to_dot``).  As the model config is not needed here, the convention is
detected per file: if any call names a dotted function in its underscored form, the file is
judged with ``underscore_to_dot``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from callbench.errors import UserError
from callbench.scoring.bfcl_aggregate import summarise
from callbench.scoring.bfcl_entry import judge_entry
from callbench.scoring.bfcl_multi import judge_multi_result
from callbench.scoring.bfcl_options import BfclOptions
from callbench.suites.bfcl_data import (
    MULTI_TURN,
    SINGLE_TURN,
    VERSION_PREFIX,
    data_dir,
    load_answers,
    load_questions,
    read_jsonl,
)

_FILE = re.compile(rf"^{VERSION_PREFIX}_(?P<category>.+)_result\.json$")


@dataclass
class FileScore:
    """Verdicts of one result file."""

    path: Path
    model: str
    category: str
    underscore_to_dot: bool
    correct: int = 0
    total: int = 0
    failures: list[dict[str, Any]] = field(default_factory=list)
    differences: list[dict[str, Any]] = field(default_factory=list)
    """Improved mode: entries whose faithful verdict differs."""
    text_results: int = 0
    """AST entries whose result is plain text (a prompt-mode file, or no call made)."""

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 0.0


def find_result_files(folder: Path) -> list[tuple[Path, str]]:
    """(path, category) of every BFCL result file under ``folder`` for a supported category."""
    if not folder.is_dir():
        raise UserError(f"{folder}: not a folder of BFCL result files")
    found = []
    for path in sorted(folder.rglob(f"{VERSION_PREFIX}_*_result.json")):
        match = _FILE.match(path.name)
        if match and match.group("category") in SINGLE_TURN + MULTI_TURN:
            found.append((path, match.group("category")))
    if not found:
        raise UserError(f"{folder}: no {VERSION_PREFIX}_<category>_result.json files of supported categories")
    return found


def _model_of(path: Path, root: Path) -> str:
    parts = path.relative_to(root).parts
    return parts[0] if len(parts) >= 3 else root.name


def detect_underscores(rows: list[dict[str, Any]], docs: dict[str, list[dict]]) -> bool:
    """True when calls name dotted functions in underscored form (BFCL's underscore_to_dot)."""
    for row in rows:
        dotted = {doc["name"].replace(".", "_") for doc in docs.get(row.get("id"), []) if "." in doc["name"]}
        for name in _call_names(row.get("result")):
            if name in dotted:
                return True
    return False


def _call_names(result: Any) -> list[str]:
    if isinstance(result, dict):
        return list(result)
    if isinstance(result, list):
        return [name for item in result for name in _call_names(item)]
    return []


def score_file(path: Path, category: str, model: str, folder: Path, options: BfclOptions) -> FileScore:
    """Judge every entry of one result file."""
    rows = read_jsonl(path)
    questions = {entry["id"]: entry for entry in load_questions(category, folder)}
    answers = load_answers(category, folder)
    docs = {key: entry.get("function", []) for key, entry in questions.items()}
    underscores = options.underscore_to_dot or detect_underscores(rows, docs)
    options = replace(options, underscore_to_dot=underscores)
    score = FileScore(path, model, category, underscores)
    for number, row in enumerate(rows, 1):
        entry = questions.get(row.get("id"))
        if entry is None or "result" not in row:
            raise UserError(f"{path}:{number}: unknown entry id {row.get('id')!r} or no 'result'")
        if category in MULTI_TURN:
            check = judge_multi_result(entry, row["result"], answers[entry["id"]]).check
        else:
            check = judge_entry(category, entry["function"], row["result"], answers.get(entry["id"]), options)
            if options.improved:
                faithful = judge_entry(category, entry["function"], row["result"], answers.get(entry["id"]),
                                       BfclOptions(underscore_to_dot=underscores))
                if faithful.valid != check.valid:
                    score.differences.append({"id": entry["id"], "faithful": faithful.error_type or "pass",
                                              "improved": check.error_type or "pass"})
        score.total += 1
        score.text_results += category not in MULTI_TURN and isinstance(row["result"], str)
        if check.valid:
            score.correct += 1
        else:
            score.failures.append({"id": entry["id"], "valid": False, "error_type": check.error_type,
                                   "error": check.errors, "model_result": row["result"]})
    return score


def score_results(folder: Path, data: Path | None = None, options: BfclOptions | None = None) -> dict[str, Any]:
    """Score every result file under ``folder``; returns ``{models: {model: {categories, summary}}}``."""
    options = options or BfclOptions()
    source = data_dir(data)
    models: dict[str, dict[str, Any]] = {}
    files = []
    for path, category in find_result_files(folder):
        model = _model_of(path, folder)
        result = score_file(path, category, model, source, options)
        files.append(result)
        models.setdefault(model, {"categories": {}})["categories"][category] = {
            "accuracy": result.accuracy, "correct_count": result.correct, "total_count": result.total,
            "underscore_to_dot": result.underscore_to_dot,
        }
        if options.improved:
            models[model].setdefault("faithful_vs_improved", []).extend(result.differences)
    for figures in models.values():
        figures["summary"] = summarise(figures["categories"])
    return {"settings": options.describe(), "models": models, "files": files}


def write_score_files(report: dict[str, Any], out: Path) -> list[Path]:
    """BFCL-format score files: ``<out>/<model>/BFCL_v4_<category>_score.json``."""
    written = []
    for result in report["files"]:
        target = out / result.model / f"{VERSION_PREFIX}_{result.category}_score.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        head = {"accuracy": result.accuracy, "correct_count": result.correct, "total_count": result.total}
        lines = [json.dumps(head)] + [json.dumps(item, default=str) for item in result.failures]
        target.write_text("\n".join(lines) + "\n", encoding="utf-8")
        written.append(target)
    return written
