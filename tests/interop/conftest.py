"""Run folders the interop tests export: real runs of the starter suite (the oracle over two trials,
a noisy agent with the diagnostic state-match scorer), and a copy of one given what a live model's
records hold (token usage, reasoning, a priced model, an unparsed call, an error record)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
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
