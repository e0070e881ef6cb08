"""Run folders the interop tests export: real runs of the starter suite (the oracle over two trials,
a noisy agent with the diagnostic state-match scorer), and a copy of one given what a live model's
records hold (token usage, reasoning, a priced model, an unparsed call, an error record).

inspect_ai, the reference for the inspect logs, is not in the main environment: it runs in a venv of its
own (.ci/background.d/45-inspect-venv.sh, the release pinned in .ci/inspect-version.sh), through
inspect_reference.py (its log reader and writer) and its ``inspect view``. When that venv is missing (or
its build did not finish), tests that need it fail in CI (``CI`` set: there scripts/test.sh has built
it) and are skipped locally with the command that builds it (~40 s, ~290 MB under ~/.cache), as the
BFCL and τ² tests do.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import pytest

HERE = Path(__file__).parent
REPO = HERE.parents[1]
INSPECT_REFERENCE = HERE / "inspect_reference.py"
INSPECT_VENV_SCRIPT = ".ci/background.d/45-inspect-venv.sh"
# the report tests' browser helpers (system Chromium through Playwright)
sys.path.insert(0, str(HERE.parent / "report"))


def _run(out: Path, model: str, tiers: list[str], trials: int = 1) -> Path:
    import callbench

    callbench.run("starter", model, tiers, out_dir=out, cache=False, trials=trials)
    return out


@pytest.fixture(scope="session")
def oracle_run(tmp_path_factory) -> Path:
    """starter, oracle, every strict tier, two trials."""
    return _run(tmp_path_factory.mktemp("oracle") / "run", "oracle", ["all"], trials=2)


@pytest.fixture(scope="session")
def noisy_run(tmp_path_factory) -> Path:
    """starter, a noisy agent (failures and partial credit), the strict tiers and state-match."""
    return _run(tmp_path_factory.mktemp("noisy") / "run", "noisy:3", ["all", "state-match"])


PRICED_MODEL = "gpt-5-mini"
"""A model of the built-in price table."""


@pytest.fixture(scope="session")
def live_like_run(tmp_path_factory, noisy_run) -> Path:
    """The noisy run as a live model's run reads: every answered round with usage (cached tokens and
    reasoning tokens), a priced model name and reasoning text; one call whose arguments did not parse
    (refused); one error record; no summary.json (the exports compute it)."""
    out = tmp_path_factory.mktemp("live") / "run"
    shutil.copytree(noisy_run, out)
    (out / "summary.json").unlink()
    header = json.loads((out / "run.json").read_text())
    header["model"] = f"openai:{PRICED_MODEL}"
    header["provider"] = {"provider": "openai", "model": PRICED_MODEL}
    (out / "run.json").write_text(json.dumps(header))
    lines = []
    unparsed = False
    for n, line in enumerate((out / "records.jsonl").read_text().splitlines()):
        record = json.loads(line)
        for info in record["trace"]["rounds"]:
            info["model"] = PRICED_MODEL
            info["usage"] = {
                "input_tokens": 1200,
                "output_tokens": 80,
                "reasoning_tokens": 30,
                "cached_tokens": 400,
            }
            info["reasoning"] = f"Thinking about round {info['index']}."
        if n != 1 and not unparsed and record["trace"]["calls"]:
            unparsed = True
            call = record["trace"]["calls"][0]
            call.update(arguments=None, arguments_raw='{"expression": ', parse_error="unterminated JSON")
            call.update(execution="rejected", result=None, schema_valid=False)
        if n == 1:
            record.update(
                status="error", verdicts={}, error={"type": "TransientProviderError", "message": "HTTP 503"}
            )
        lines.append(json.dumps(record))
    (out / "records.jsonl").write_text("\n".join(lines) + "\n")
    return out


# --- inspect_ai's reference venv ------------------------------------------------------------------


def _inspect_version() -> str:
    """The pinned inspect_ai release (.ci/inspect-version.sh is the one place the tests take it from)."""
    text = (REPO / ".ci" / "inspect-version.sh").read_text(encoding="utf-8")
    found = re.search(r'^INSPECT_VERSION="([^"]+)"', text, re.MULTILINE)
    assert found, ".ci/inspect-version.sh sets no INSPECT_VERSION"
    return found.group(1)


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _unavailable(message: str) -> NoReturn:
    """Fail in CI, skip locally."""
    if _in_ci():
        pytest.fail(message)
    pytest.skip(message)


def _inspect_venv() -> Path:
    default = Path.home() / ".cache" / f"callbench-inspect-venv-{_inspect_version()}"
    return Path(os.environ.get("CALLBENCH_INSPECT_VENV", default))


@pytest.fixture(scope="session")
def inspect_version() -> str:
    return _inspect_version()


@pytest.fixture(scope="session")
def inspect_python() -> Path:
    """Python of the inspect_ai reference venv, if its build finished (it marks itself ready)."""
    venv = _inspect_venv()
    python = venv / "bin" / "python"
    if not ((venv / ".callbench-ready").is_file() and python.is_file()):
        _unavailable(f"inspect_ai reference venv missing at {venv}; run bash {INSPECT_VENV_SCRIPT}")
    return python


class Dumped(dict):
    """A JSON object inspect_reference.py printed, read as the inspect_ai object it is a dump of:
    keys are attributes too (``log.eval.task``, ``sample.scores["C"].value``); a missing one is an
    AttributeError."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def _reference(python: Path, arguments: list[str], stdin: str | None = None) -> list[Dumped]:
    done = subprocess.run(
        [str(python), str(INSPECT_REFERENCE), *arguments],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"inspect_reference.py exited {done.returncode}:\n{done.stderr[-4000:]}"
    return [json.loads(line, object_hook=Dumped) for line in done.stdout.splitlines() if line.strip()]


InspectRead = Callable[..., list[Dumped]]
InspectWrite = Callable[[dict[Path, dict[str, Any]]], None]


@pytest.fixture(scope="session")
def inspect_read(inspect_python: Path) -> InspectRead:
    """``(*logs) -> [{"path", "log", "summaries"} per log]``: each log read with inspect_ai's own
    ``read_eval_log`` (and its sample summaries) in the reference venv, all in one process."""

    def run(*logs: Path) -> list[Dumped]:
        lines = _reference(inspect_python, ["read", *map(str, logs)])
        assert [line.path for line in lines] == [str(log) for log in logs]
        return lines

    return run


@pytest.fixture(scope="session")
def inspect_write(inspect_python: Path) -> InspectWrite:
    """``({path: EvalLog as JSON}) -> None``: each log built from inspect_ai's own classes and written
    with its ``write_eval_log`` in the reference venv (``.eval``: inspect's zstd zip; ``.json``: its
    JSON log), all in one process."""

    def run(logs: dict[Path, dict[str, Any]]) -> None:
        request = {"logs": [{"path": str(path), "log": log} for path, log in logs.items()]}
        lines = _reference(inspect_python, ["write"], stdin=json.dumps(request))
        assert [line.path for line in lines] == [str(path) for path in logs]
        assert all(path.is_file() for path in logs)

    return run
