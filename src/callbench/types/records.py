"""Run records: the header of ``run.json`` (RunHeader) and the lines of ``records.jsonl`` (CaseRecord)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field

from callbench.types.conversation import SimulatorInfo
from callbench.types.manifest import ToolSourceManifest
from callbench.types.review import Rubric
from callbench.types.trace import Trace
from callbench.types.verdict import Verdict

SCHEMA_VERSION = 1


class SuiteInfo(BaseModel):
    """What identifies a suite in a run."""

    name: str
    spec: str
    """The suite spec as given (``starter``, ``dag:n_core=5``, a path...)."""
    hash: str
    registry_hash: str
    prompt_template_hash: str
    n_cases: int
    source: str = ""
    data: str | None = None
    data_versions: dict[str, str] = Field(default_factory=dict)
    """Versions of external data the suite was built from (e.g. ``{"bfcl-eval": "2026.3.23"}``)."""
    notes: list[str] = Field(default_factory=list)
    """Load-time findings that change how verdicts read (see :mod:`callbench.scoring.lint`)."""
    version: str | None = None
    """The suite's own version (``Suite.version``)."""
    executor: str | None = None
    """What ran the suite's tools: ``contract`` (synthetic results, no tool ran), ``python``,
    ``python-bindings`` (the suite's own Python tools), ``mcp``..., or the run's ``--executor``."""
    plugin: str | None = None
    """The distribution whose plugin registered the suite (``callbench`` for the built-ins; none for a
    suite loaded from a path)."""
    plugin_version: str | None = None
    """That distribution's version."""


class ResumeEvent(BaseModel):
    """One ``--resume`` of a run, appended to ``run.json``'s ``resumes``: the header itself keeps
    how the run started (``created_at``, ``options``)."""

    at: str
    """When the resume started (UTC, ISO 8601)."""
    callbench_version: str
    python_version: str = ""
    previous_records: int = 0
    """Records already in ``records.jsonl`` when it resumed (error records among them are re-run)."""
    overrides: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Recorded options this resume ran with other values: ``{field: {"recorded": ..., "given": ...}}``
    (only options that cannot change verdicts: engine limits, retries, cache, case selection, data path)."""
    tool_sources: list[ToolSourceManifest] | None = Field(
        default=None, exclude_if=lambda value: value is None
    )
    """The tool sources this resume ran against, when they differ from the header's ``tool_sources``."""


class RunHeader(BaseModel):
    """``run.json``: everything needed to reproduce, resume and re-score the run."""

    schema_version: int = SCHEMA_VERSION
    run_id: str
    created_at: str
    callbench_version: str
    python_version: str
    model: str
    """The model string as given (``provider:model[@url]``)."""
    provider: dict[str, Any] = Field(default_factory=dict)
    settings: dict[str, Any] = Field(default_factory=dict)
    """Generation settings (temperature 0, no streaming, no fallback...)."""
    harness_mode: str
    harness_assistance: dict[str, Any] = Field(default_factory=dict)
    suites: list[SuiteInfo] = Field(default_factory=list)
    scorers: dict[str, list[str]] = Field(default_factory=dict)
    """Suite name -> scorer names."""
    diagnostic_scorers: list[str] = Field(default_factory=list)
    """Scorers whose figures are diagnostic in this run (never a pass criterion), e.g. ``state-match``."""
    executor: str | None = None
    """Executor override (``None``: each suite's default)."""
    retrieval_k: int | str | None = None
    """``--k`` as given: a number, ``"all"``, or ``None`` (each suite's default, in ``suite_k``)."""
    suite_k: dict[str, int | None] = Field(default_factory=dict)
    """The k each suite actually used (``None``: every candidate tool)."""
    trials: int = 1
    options: dict[str, Any] = Field(default_factory=dict)
    """Engine options (concurrency, limits, cache...) the run started with."""
    resumes: list[ResumeEvent] = Field(default_factory=list)
    """Each ``--resume`` of the run, in order (absent from run folders written before resumes were kept)."""
    tool_sources: list[ToolSourceManifest] = Field(default_factory=list)
    """The manifest of what was measured: one entry per tool source (:mod:`callbench.types.manifest`);
    empty in run folders written before manifests were kept."""
    simulator: SimulatorInfo | None = Field(default=None, exclude_if=lambda value: value is None)
    """``--user-model``: the simulated user of the run's conversation cases (model, seed, temperature,
    prompt hash). Absent when no conversation case has a simulated user."""


TOOL_BUG = "tool_bug"
"""Error-record type prefix (``tool_bug:KeyError``) of a tool implementation that raised something other
than ``ToolError``: a harness fault, flagged for a person, never the model's failure."""


class ErrorInfo(BaseModel):
    """Why a case could not be completed (infrastructure, not model behaviour)."""

    type: str
    message: str
    traceback: str | None = None
    """The traceback of a harness fault (a tool implementation's bug), for the person fixing it."""


class CaseRecord(BaseModel):
    """One execution package: a line of ``records.jsonl``."""

    schema_version: int = SCHEMA_VERSION
    key: str
    """``suite:id``."""
    suite: str
    case_id: str
    category: str
    trial: int = 1
    status: Literal["completed", "error"] = "completed"
    error: ErrorInfo | None = None
    instruction: str = ""
    prompt_sha256: str = ""
    offered_tools: list[str] = Field(default_factory=list)
    expected_tools: list[list[str]] = Field(default_factory=list)
    expected: list[dict[str, Any]] = Field(default_factory=list)
    """The case's expected steps as run (argument DSL included), for reports and audits."""
    retrieval_recall: float | None = None
    harness_mode: str
    harness_assistance: dict[str, Any] = Field(default_factory=dict)
    trace: Trace = Field(default_factory=Trace)
    verdicts: dict[str, Verdict] = Field(default_factory=dict)
    template: str | None = None
    started_at: float = 0.0
    duration_ms: float = 0.0
    metadata: dict[str, Any] = Field(default_factory=dict)
    # Records of automatic cases are written without these two fields (their lines, and the record
    # hashes reviews carry, stay as they were before manual cases existed); readers default them.
    scoring: Literal["auto", "manual"] = Field(default="auto", exclude_if=lambda value: value == "auto")
    """``manual``: a case scored by reviewers against ``rubric``; its verdicts are all not applicable."""
    rubric: Rubric | None = Field(default=None, exclude_if=lambda value: value is None)
    """The rubric of a manual case, as run (for the review page and the review store)."""
    simulator: SimulatorInfo | None = Field(default=None, exclude_if=lambda value: value is None)
    """Conversation cases: who played the user (scripted, or the simulated user's model, seed,
    temperature and prompt hash). Absent for other cases."""

    @property
    def record_id(self) -> tuple[str, int]:
        return (self.key, self.trial)


def pass_counts(records: Iterable[CaseRecord]) -> dict[str, tuple[int, int]]:
    """Per scorer, how many of its applicable verdicts in ``records`` passed, and how many there are
    (what an import prints after re-scoring)."""
    counts: dict[str, tuple[int, int]] = {}
    for record in records:
        for name, verdict in record.verdicts.items():
            if verdict.applicable:
                passed, total = counts.get(name, (0, 0))
                counts[name] = (passed + verdict.passed, total + 1)
    return counts
