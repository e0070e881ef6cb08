"""callbench as a CI gate for your agent: a pytest plugin (``pytest11`` entry point ``callbench``).

A test marked ``@pytest.mark.callbench(...)`` that asks for the ``callbench_gate`` fixture runs a suite
against your agent (``--agent``) from a recording of its model's answers (``--replay DIR``: no network,
no key, no model) and checks thresholds that a flaky agent cannot pass by luck:

* ``min_accuracy`` on the **lower bound** of the strict accuracy's 95% interval (the run summary's
  interval: Wilson's, or clustered by case when trials repeat), not on the point estimate;
* ``min_pass_k`` on **pass^k** (every one of ``k`` trials of a case passes; ``k`` = ``trials`` unless
  ``pass_k`` says otherwise): an agent right two times in three scores 0.30 on pass^3, not 0.67;
* ``max_errors`` error records (default 0: a request the recording lacks is an error record
  ``cassette_miss``, and a gate that ran on fewer cases than it says is no gate).

A failure names every failed case (key, tier, reason codes, the agent's outcome when it did not
answer) in the assertion text, which pytest prints and JUnit XML reports carry as the failure
message; the run folder, the accuracy and its bounds are recorded as test properties
(``record_property``), and the same text is written to ``gate.txt`` in the run folder.

Example (docs/agents.md, "As a CI gate")::

    @pytest.mark.callbench(
        suite="starter",
        agent="py:my_agent:agent",
        replay="recordings/my_agent",   # relative to this test file's folder
        tier="task-completion-execution",
        trials=3,
        min_accuracy=0.8,
        min_pass_k=0.9,
    )
    def test_my_agent(callbench_gate):
        callbench_gate.check()

``pytest --callbench-record`` records instead of replaying (into the same folders, from the live model
named by ``model_proxy=`` or ``OPENAI_BASE_URL``). This module imports only the standard library and
pytest when pytest starts; callbench's engine is imported when a gate runs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

MARKER = "callbench"
DEFAULT_TIER = "task-completion-execution"
GATE_KEYS = ("min_accuracy", "min_pass_k", "pass_k", "max_errors", "out", "model_proxy", "env")
"""Marker keywords of the gate itself; the others are ``callbench.run`` keywords."""
MAX_LISTED = 40
"""Failed cases listed in the failure text (the rest are counted; ``gate.txt`` lists them all)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("callbench", "callbench agent gates")
    group.addoption(
        "--callbench-record",
        action="store_true",
        default=False,
        help="callbench gates: record the agent's model into the gates' replay folders (live model) "
        "instead of replaying them.",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "callbench(suite, agent, replay=DIR, tier=..., trials=1, min_accuracy=..., min_pass_k=..., "
        "pass_k=..., max_errors=0, out=DIR, **run_options): run a callbench suite against an agent "
        "(with the callbench_gate fixture) and check thresholds.",
    )


@dataclass
class GateResult:
    """A gate's run and what it found."""

    run_dir: Path
    tier: str
    n: int
    passed: int
    accuracy: float | None
    low: float | None
    high: float | None
    method: str
    trials: int
    pass_k: int
    pass_hat_k: float | None
    errors: dict[str, int]
    failed: dict[str, list[str]] = field(default_factory=dict)
    """Case key -> one line per failed trial (reason codes, the agent's outcome)."""
    problems: list[str] = field(default_factory=list)
    """The thresholds not met, one line each (empty: the gate passes)."""
    text: str = ""

    @property
    def ok(self) -> bool:
        return not self.problems


class CallbenchGate:
    """The ``callbench_gate`` fixture: runs the marked suite against the agent and checks it."""

    def __init__(self, request: pytest.FixtureRequest, tmp_path: Path) -> None:
        self.request = request
        self.tmp_path = tmp_path
        marker = request.node.get_closest_marker(MARKER)
        self.options: dict[str, Any] = dict(marker.kwargs) if marker is not None else {}
        if marker is not None and marker.args:
            self.options.setdefault("suite", marker.args[0])
        self.result: GateResult | None = None

    def run(self, **overrides: Any) -> GateResult:
        """Run the gate's suite (the marker's keywords, then ``overrides``); no threshold is checked."""
        options = {**self.options, **overrides}
        gate = {key: options.pop(key) for key in GATE_KEYS if key in options}
        suite = options.pop("suite", None)
        agent = options.pop("agent", None)
        if not suite or not agent:
            raise pytest.UsageError("callbench gate: give suite= and agent= (in the marker or to run())")
        tier = str(options.pop("tier", DEFAULT_TIER))
        folder = Path(self.request.node.path).parent
        for key in ("replay", "record"):
            if options.get(key) is not None and not Path(options[key]).is_absolute():
                options[key] = folder / options[key]
        if self.request.config.getoption("callbench_record", False) and options.get("replay") is not None:
            options["record"] = options.pop("replay")
            options.pop("replay_miss", None)
        if gate.get("model_proxy"):
            options["agent_model_proxy"] = gate["model_proxy"]
        out = Path(gate["out"]) if gate.get("out") else self.tmp_path / "callbench-run"
        if out.exists() and (out / "run.json").exists():
            out = out.with_name(out.name + f"-{len(list(out.parent.glob(out.name + '*')))}")
        options.setdefault("progress", "quiet")
        from callbench.errors import UserError

        with _environment(dict(gate.get("env") or {})):
            import callbench

            try:
                run = callbench.run(suite, tier=tier, agent=agent, out_dir=out, **options)
            except UserError as exc:  # a missing or stale recording, a bad option: one line
                pytest.fail(f"callbench gate could not run: {exc}", pytrace=False)
        self.result = evaluate(run.run_dir, run.summary, run.records, tier, gate)
        self.result.text = describe(self.result, agent, suite, options)
        whole = describe(self.result, agent, suite, options, listed=None)
        (run.run_dir / "gate.txt").write_text(whole + "\n", encoding="utf-8")
        self._properties(self.result)
        return self.result

    def check(self, **overrides: Any) -> GateResult:
        """Run (unless already run without ``overrides``) and fail the test, with every failed case
        named, when a threshold is not met."""
        result = self.result if self.result is not None and not overrides else self.run(**overrides)
        if not result.ok:
            pytest.fail(result.text, pytrace=False)
        return result

    def _properties(self, result: GateResult) -> None:
        node = self.request.node
        node.user_properties.append(("callbench_run_dir", str(result.run_dir)))
        node.user_properties.append(("callbench_tier", result.tier))
        for name in ("accuracy", "low", "high", "pass_hat_k"):
            value = getattr(result, name)
            if value is not None:
                node.user_properties.append((f"callbench_{name}", f"{value:.4f}"))
        node.user_properties.append(("callbench_failed_cases", " ".join(sorted(result.failed))))
        if result.errors:
            node.user_properties.append(("callbench_errors", json.dumps(result.errors, sort_keys=True)))


@pytest.fixture
def callbench_gate(request: pytest.FixtureRequest, tmp_path: Path) -> CallbenchGate:
    """Run a callbench suite against an agent and check thresholds (see :mod:`callbench.pytest_plugin`)."""
    return CallbenchGate(request, tmp_path)


@contextmanager
def _environment(given: Mapping[str, str]) -> Iterator[None]:
    """The marker's ``env`` set while the gate runs; the previous values put back afterwards."""
    values = {str(k): str(v) for k, v in given.items()}
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


# --- the verdict of a gate ------------------------------------------------------------------------


def evaluate(
    run_dir: Path, summary: Mapping[str, Any], records: Sequence[Any], tier: str, gate: Mapping[str, Any]
) -> GateResult:
    """The gate's figures from a run's summary and records, and the thresholds they miss."""
    stratum = _stratum(summary, tier)
    accuracy = (stratum or {}).get("accuracy") or {}
    trial_figures = (stratum or {}).get("trials") or {}
    trials = max((getattr(r, "trial", 1) for r in records), default=1)
    k = int(gate.get("pass_k") or trials)
    pass_hat = (trial_figures.get("pass_hat_k") or {}).get(str(k))
    figures = (summary.get("tiers") or {}).get(tier) or {}
    result = GateResult(
        run_dir=Path(run_dir),
        tier=tier,
        n=int((stratum or figures).get("n") or 0),
        passed=int((stratum or figures).get("passed") or 0),
        accuracy=accuracy.get("estimate", figures.get("accuracy")),
        low=accuracy.get("low"),
        high=accuracy.get("high"),
        method=str(accuracy.get("method") or ""),
        trials=trials,
        pass_k=k,
        pass_hat_k=pass_hat if pass_hat is not None else (None if k > 1 else accuracy.get("estimate")),
        errors=dict(summary.get("errors_by_type") or {}),
    )
    scored: dict[str, int] = {}
    why: dict[str, dict[str, list[int]]] = {}
    for record in sorted(records, key=lambda r: (r.key, r.trial)):
        verdict = (record.verdicts or {}).get(tier)
        if record.status == "error" or verdict is None or not verdict.applicable:
            continue
        scored[record.key] = scored.get(record.key, 0) + 1
        if verdict.passed:
            continue
        reason = ", ".join(verdict.codes) or "failed"
        agent = record.trace.agent
        if agent is not None and agent.outcome != "answer":
            reason += f" (agent: {agent.outcome}{': ' + agent.message if agent.message else ''})"
        why.setdefault(record.key, {}).setdefault(reason, []).append(record.trial)
    for key, reasons in why.items():
        n_failed = sum(len(trials) for trials in reasons.values())
        parts = []
        for reason, trials in reasons.items():
            label = "trial" if len(trials) == 1 else "trials"
            parts.append(f"{label} {','.join(map(str, trials))}: {reason}")
        result.failed[key] = [f"failed {n_failed}/{scored[key]}: " + "; ".join(parts)]
    _thresholds(result, gate, records)
    return result


def _stratum(summary: Mapping[str, Any], tier: str) -> dict[str, Any] | None:
    statistics = summary.get("statistics") or {}
    for stratum in statistics.get("strata") or []:
        if stratum.get("tier") == tier:
            return dict(stratum)
    return None


def _thresholds(result: GateResult, gate: Mapping[str, Any], records: Sequence[Any]) -> None:
    if result.n == 0:
        result.problems.append(f"no case was scored under tier {result.tier!r}")
        return _errors(result, gate, records)
    minimum = gate.get("min_accuracy")
    if minimum is not None and result.n:
        low = result.low if result.low is not None else 0.0
        if low < float(minimum):
            result.problems.append(
                f"strict accuracy {_pct(result.accuracy)} ({result.passed}/{result.n}), 95% interval "
                f"[{_pct(result.low)}, {_pct(result.high)}]: its lower bound {_pct(low)} is below "
                f"min_accuracy {_pct(float(minimum))}"
            )
    minimum_k = gate.get("min_pass_k")
    if minimum_k is not None:
        if result.pass_k > result.trials:
            result.problems.append(
                f"pass^{result.pass_k} needs {result.pass_k} trials; the run had {result.trials}"
            )
        elif result.pass_hat_k is None or result.pass_hat_k < float(minimum_k):
            result.problems.append(
                f"pass^{result.pass_k} {_pct(result.pass_hat_k)} (all {result.pass_k} trials of a case pass) "
                f"is below min_pass_k {_pct(float(minimum_k))}"
            )
    _errors(result, gate, records)


def _errors(result: GateResult, gate: Mapping[str, Any], records: Sequence[Any]) -> None:
    allowed = int(gate.get("max_errors", 0) or 0)
    n_errors = sum(result.errors.values())
    if n_errors > allowed:
        kinds = ", ".join(f"{kind} ×{n}" for kind, n in sorted(result.errors.items()))
        errored = sorted({f"{r.key}#{r.trial}" for r in records if r.status == "error"})
        shown = ", ".join(errored[:10]) + (f" (+{len(errored) - 10} more)" if len(errored) > 10 else "")
        hint = ""
        if "cassette_miss" in result.errors:
            hint = "; the agent asked its model something the recording does not hold: record it again"
        result.problems.append(f"{n_errors} error record(s) ({kinds}; max_errors {allowed}): {shown}{hint}")


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def describe(
    result: GateResult, agent: str, suite: Any, options: Mapping[str, Any], listed: int | None = MAX_LISTED
) -> str:
    """The gate's report: one line of what ran, the thresholds missed, the failed cases (the first
    ``listed`` of them; ``None``: all)."""
    source = (
        f"replayed from {options['replay']}"
        if options.get("replay") is not None
        else f"recorded into {options['record']}"
        if options.get("record") is not None
        else "live"
    )
    verdict = "passed" if result.ok else "FAILED"
    lines = [
        f"callbench gate {verdict}: agent {agent} on suite {suite}, tier {result.tier}, "
        f"{result.trials} trial(s), {source}"
    ]
    lines += [f"  {problem}" for problem in result.problems]
    if result.failed:
        n_cases = len(result.failed)
        lines.append(f"  failed cases ({n_cases}):")
        for n, (key, why) in enumerate(sorted(result.failed.items())):
            if n == listed:
                lines.append(f"    ... and {n_cases - n} more (gate.txt in the run folder)")
                break
            lines.append(f"    {key} [{result.tier}] " + "; ".join(why))
    lines.append(f"  run folder: {result.run_dir}")
    return "\n".join(lines)
