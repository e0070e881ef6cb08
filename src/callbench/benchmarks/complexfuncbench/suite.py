"""The ``complexfuncbench`` suite: ComplexFuncBench samples as callbench cases.

``--suite complexfuncbench --data PATH`` reads the data set's ``ComplexFuncBench.jsonl``;
``--suite complexfuncbench:fixture`` uses the small synthetic fixture shipped for tests. A mode
may follow (``complexfuncbench:faithful``, ``complexfuncbench:fixture:improved``); the default
is ``improved``. Options (``SuiteOptions.extra``): ``mode``, ``embedder``, ``min_similarity``,
``judge`` (a ``provider:model`` string), ``judge_cache`` (a folder), ``max_rounds`` (the round
budget per sample), ``strict`` (stop at the first bad line instead of skipping it).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from callbench.benchmarks.complexfuncbench.data import CfbSample, LoadReport, read_jsonl
from callbench.benchmarks.complexfuncbench.definitions import MODES, CfbSettings, turn_cap
from callbench.benchmarks.complexfuncbench.names import NameMap
from callbench.plugin import Case, ConfigError, ExpectedStep, Suite, SuiteOptions, ToolContract, UserError

log = logging.getLogger(__name__)

SUITE_NAME = "complexfuncbench"
FIXTURE = "fixture.jsonl"
FAITHFUL_ROUND_LIMIT = 50
"""Upstream has no turn cap; a run still needs a finite one. Reaching it is recorded as max_turns."""


def fixture_path() -> Path:
    """Path of the synthetic fixture shipped in the package."""
    return Path(__file__).parent / FIXTURE


def _parse_spec(spec: str, options: SuiteOptions) -> tuple[bool, str]:
    # The catalog passes the text after "complexfuncbench:"; the full spec is accepted as well.
    parts = [p for p in spec.split(":") if p and p != SUITE_NAME]
    fixture = "fixture" in parts
    modes = [p for p in parts if p in MODES]
    unknown = [p for p in parts if p != "fixture" and p not in MODES]
    if unknown:
        raise ConfigError(
            f"suite {spec!r}: unknown part(s) {unknown}; use complexfuncbench[:fixture][:faithful|:improved]"
        )
    mode = modes[0] if modes else str(options.extra.get("mode", "improved"))
    return fixture, mode


def _flag(value: Any) -> bool:
    # Options from the command line arrive as text ("-o strict=true").
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def _settings(mode: str, extra: dict[str, Any]) -> CfbSettings:
    threshold = extra.get("min_similarity")
    return CfbSettings(
        mode=mode,  # type: ignore[arg-type]  # validated by CfbSettings
        embedder=str(extra.get("embedder", "char-ngram")),
        min_similarity=float(threshold) if threshold is not None else None,
    )


def load_suite(spec: str = SUITE_NAME, options: SuiteOptions | None = None) -> Suite:
    """Load ComplexFuncBench as a suite.

    Args:
        spec: ``complexfuncbench[:fixture][:faithful|:improved]``.
        options: ``options.data`` is the local ``ComplexFuncBench.jsonl``.

    Raises:
        UserError: no ``--data`` for the real data set, or no usable line in the file.
    """
    options = options or SuiteOptions()
    fixture, mode = _parse_spec(spec, options)
    settings = _settings(mode, options.extra)
    if fixture:
        path = fixture_path()
    elif options.data is None:
        raise UserError(
            "the complexfuncbench suite needs the data set: pass --data PATH/ComplexFuncBench.jsonl "
            "(get it with 'callbench data fetch complexfuncbench'), or use --suite complexfuncbench:fixture"
        )
    else:
        path = Path(options.data)
    report = read_jsonl(path, strict=_flag(options.extra.get("strict", False)))
    for problem in report.problems:
        log.warning("skipped %s", problem)
    if report.repairs:
        lines = len({r.split(": ", 1)[0] for r in report.repairs})
        log.warning(
            "%s: repaired %d function schema problem(s) on %d line(s), e.g. %s (all in the suite "
            "metadata 'load_repairs')",
            path.name,
            len(report.repairs),
            lines,
            report.repairs[0],
        )
    if not report.samples:
        first = f"; first problem: {report.problems[0]}" if report.problems else ""
        raise UserError(f"{path}: no usable ComplexFuncBench sample{first}")
    return build_suite(
        report, settings, source=str(path) if not fixture else f"package:{FIXTURE}", extra=options.extra
    )


def build_suite(report: LoadReport, settings: CfbSettings, *, source: str, extra: dict[str, Any]) -> Suite:
    """Turn loaded samples into a suite that runs on the replay executor and ComplexEval."""
    rounds = _max_rounds(extra.get("max_rounds"))
    cases = [sample_to_case(s, settings, max_rounds=rounds) for s in report.samples]
    config = {
        "mode": settings.mode,
        "embedder": settings.embedder,
        "min_similarity": settings.min_similarity,
        "judge": extra.get("judge"),
        "judge_cache": extra.get("judge_cache"),
    }
    return Suite(
        name=SUITE_NAME,
        cases=cases,
        executor="replay",
        scorers=["complexeval"],
        strict_tiers=False,  # its own scorer is primary: `--tier all` does not add the gold-path tiers
        system_prompt="",  # upstream sends no system prompt
        description="ComplexFuncBench: multi-step constrained function calling on replayed Booking APIs",
        source=source,
        default_k=None,  # every sample's own function list is offered, as upstream does
        metadata={
            "complexeval": config,
            "load_problems": report.problems,
            "load_repairs": report.repairs,
            "samples": len(cases),
        },
    )


def _contract(function: dict[str, Any], names: NameMap) -> ToolContract:
    # ``function`` comes from ``offered_functions()``: schemas repaired at load time are offered.
    parameters = function.get("parameters") or {"type": "object", "properties": {}}
    return ToolContract(
        name=names.wire(function["name"]),
        description=str(function.get("description", "")),
        parameters=parameters,
        strict=False,
        read_only=True,
        metadata={"original_name": function["name"]},
    )


def _max_rounds(value: Any) -> int | None:
    if value is None:
        return None
    try:
        rounds = int(value)
    except (TypeError, ValueError):
        rounds = 0
    if rounds < 1 or str(value).strip() != str(rounds):
        raise ConfigError(f"complexfuncbench option max_rounds must be a positive integer, got {value!r}")
    return rounds


def sample_to_case(sample: CfbSample, settings: CfbSettings, *, max_rounds: int | None = None) -> Case:
    """One sample as a case: inline tools, gold steps grouped by turn, replay data for the executor.

    ``max_rounds`` overrides the round budget (faithful: 50, since upstream has no cap; improved:
    twice the gold steps plus five).
    """
    names = NameMap.build([f["name"] for f in sample.functions] + [c.name for s in sample.steps for c in s])
    expected = [
        ExpectedStep(id=f"s{k}_{j}", tool=names.wire(call.name), arguments=dict(call.arguments), turn=k)
        for k, step in enumerate(sample.steps)
        for j, call in enumerate(step)
    ]
    rounds = max_rounds or (
        FAITHFUL_ROUND_LIMIT if settings.mode == "faithful" else turn_cap(len(sample.steps))
    )
    return Case(
        id=sample.id,
        category=sample.domain,
        instruction=sample.query,
        tools=[_contract(f, names) for f in sample.offered_functions()],
        expected=expected,
        max_rounds=rounds,
        executor="replay",
        harness_guidance=False,
        template=sample.template,
        executor_config={
            "sample": sample.model_dump(mode="json"),
            "names": names.to_wire,
            "mode": settings.mode,
            "embedder": settings.embedder,
            "min_similarity": settings.min_similarity,
        },
        metadata={"domain": sample.domain, "gold_answer": sample.answer, "gold_steps": len(sample.steps)},
    )


def case_sample(case: Case) -> tuple[CfbSample, NameMap]:
    """The sample and name map stored on a case by :func:`sample_to_case`."""
    config = case.executor_config
    if "sample" not in config:
        raise UserError(f"case {case.id}: not a ComplexFuncBench case (no replay data in executor_config)")
    to_wire = dict(config.get("names") or {})
    return CfbSample.model_validate(config["sample"]), NameMap(to_wire, {w: n for n, w in to_wire.items()})


def case_settings(case: Case, override: dict[str, Any] | None = None) -> CfbSettings:
    """Settings stored on a case, optionally overridden (e.g. re-scoring in the other mode)."""
    config = {**case.executor_config, **(override or {})}
    return _settings(str(config.get("mode", "improved")), config)
