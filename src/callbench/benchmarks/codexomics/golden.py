"""Replay CodeXomics's golden and deliberately wrong complex-suite runs through callbench's scorer.

``complex_golden_paths.json`` (transcribed from the app's golden-path unit test) holds one ideal
call list per complex case and a set of wrong runs. Upstream scores them with its lenient legacy
evaluators, which check neither schemas nor exact strings. The replay here uses the
``task-completion-execution`` tier on traces built from the call lists, with schema verdicts left
as given (the legacy evaluators never validated schemas); ``schema_valid_runs`` reports how many
golden runs are schema-valid against the imported contracts, for information.

A failing golden run is classified: ``stale`` when every reason is an expected argument the run
does not send (the suite grew keys after the run was written), else ``mismatch``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from callbench.harness.validate import revalidate
from callbench.plugin import Suite, Trace, UserError, Verdict
from callbench.scoring.tiers import score_tier
from callbench.types.trace import trace_from_calls
from callbench.types.verdict import Tier

GOLDEN_TIER: Tier = "task-completion-execution"
GOLDEN_SUITE_ID = "automatic_complex"


@dataclass
class RunOutcome:
    """The verdict on one replayed run."""

    case_id: str
    label: str
    verdict: Verdict
    schema_valid: bool
    kind: Literal["golden", "padded", "wrong"]

    @property
    def classification(self) -> Literal["pass", "stale", "mismatch"]:
        if self.verdict.passed:
            return "pass"
        codes = {r.code for r in self.verdict.reasons}
        return "stale" if codes == {"argument_missing"} else "mismatch"


@dataclass
class GoldenReport:
    """All replayed runs, grouped by kind."""

    golden: list[RunOutcome] = field(default_factory=list)
    padded: list[RunOutcome] = field(default_factory=list)
    wrong: list[RunOutcome] = field(default_factory=list)

    def failing(self, kind: str = "golden") -> dict[str, str]:
        """case id -> classification of the runs of ``kind`` that did not pass."""
        runs = getattr(self, kind)
        return {r.case_id: r.classification for r in runs if not r.verdict.passed}

    @property
    def schema_valid_runs(self) -> int:
        return sum(1 for r in self.golden if r.schema_valid)


def replay_golden(suite: Suite, golden_path: str | Path, *, case_dir: str = "./test_data/") -> GoldenReport:
    """Score every golden, padded-golden and wrong run of ``golden_path`` against ``suite``.

    Args:
        suite: An imported suite holding the ``automatic_complex`` cases.
        golden_path: ``complex_golden_paths.json``.
        case_dir: The default directory the suite's paths were built with; the runs' own
            directory prefix (``./``) is rebased onto it.
    """
    data = _read(Path(golden_path))
    run_dir = str(data.get("default_directory", "./"))
    cases = {
        c.metadata.get("upstream_id"): c for c in suite.cases if c.metadata.get("suite_id") == GOLDEN_SUITE_ID
    }
    pad = data.get("padding_check", {})
    report = GoldenReport()
    for case_id, calls in data.get("golden_runs", {}).items():
        calls = rebase(calls, run_dir, case_dir)
        report.golden.append(_score(suite, cases, case_id, "golden", calls, False, "golden"))
        padded = pad.get("prepend", []) + calls + pad.get("append", [])
        report.padded.append(_score(suite, cases, case_id, "padded", padded, False, "padded"))
    for run in data.get("wrong_runs", []):
        calls = rebase(run.get("calls", []), run_dir, case_dir)
        report.wrong.append(
            _score(suite, cases, run["testId"], run.get("label", ""), calls, bool(run.get("failed")), "wrong")
        )
    return report


def _score(
    suite: Suite,
    cases: dict[Any, Any],
    case_id: str,
    label: str,
    calls: list[dict[str, Any]],
    failed: bool,
    kind: Literal["golden", "padded", "wrong"],
) -> RunOutcome:
    case = cases.get(case_id)
    if case is None:
        raise UserError(f"golden run for {case_id!r}: no such case in suite {suite.name!r}")
    trace = golden_trace(calls, failed=failed)
    verdict = score_tier(GOLDEN_TIER, case, trace, suite.registry_for(case))
    checked = revalidate(golden_trace(calls, failed=failed), suite.registry_for(case))
    return RunOutcome(case_id, label, verdict, all(c.schema_valid for c in checked.calls), kind)


def golden_trace(calls: list[dict[str, Any]], *, failed: bool = False) -> Trace:
    """A trace of upstream ``{tool_name, parameters}`` calls, executed ok (or failed)."""
    return trace_from_calls(
        [
            {
                "tool": c["tool_name"],
                "arguments": c.get("parameters") or {},
                "execution": "error" if failed else "ok",
                "error": "run marked failed" if failed else None,
            }
            for c in calls
        ],
        final_text="All requested steps have been completed successfully.",
    )


def rebase(value: Any, old: str, new: str) -> Any:
    """Replace the directory prefix ``old`` of path strings with ``new`` (recursively)."""
    if isinstance(value, str):
        return new + value[len(old) :] if value.startswith(old) and not value.startswith(new) else value
    if isinstance(value, list):
        return [rebase(v, old, new) for v in value]
    if isinstance(value, dict):
        return {k: rebase(v, old, new) for k, v in value.items()}
    return value


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: cannot read golden paths: {exc}") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: golden paths file must hold a JSON object")
    return data
