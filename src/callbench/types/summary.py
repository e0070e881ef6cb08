"""``summary.json``: the typed, versioned summary of a run.

Everything in it is data: strict accuracy per tier, the statistics strata, usage, quality-control
flags, error counts and each scorer's own aggregate (whose display tables are :class:`Table`
values, rendered by the CLI and the reports). The file has its own schema version, apart from
the records': schema 1 files (written before tables became data) are migrated on read by
:func:`migrate_summary`.

Dumps keep only the fields that were set (``exclude_unset``), so a summary read from disk is
written back with the keys it had, and optional figures (e.g. ``price_model``) appear only when
they were computed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SUMMARY_SCHEMA_VERSION = 2
"""1: scorer aggregates carried preformatted text tables (``table``); 2: tables are data (``tables``)."""

Align = Literal["left", "right"]


class Table(BaseModel):
    """A table for display, as data: one title, column names, rows of cell texts, notes below.

    Cells are the texts to show (the scorer chooses their precision); the numbers behind them stay
    in the aggregate beside the table. A table with no columns is only its notes (a schema-1 text
    table that could not be parsed back into cells).
    """

    title: str = ""
    columns: list[str] = Field(default_factory=list)
    rows: list[list[str]] = Field(default_factory=list)
    align: list[Align] = Field(default_factory=list)
    """Per column; missing entries are ``left``."""
    notes: list[str] = Field(default_factory=list)
    """Lines shown under the table (rules, warnings, effects)."""

    def alignment(self, column: int) -> Align:
        """The alignment of column ``column`` (``left`` unless declared)."""
        return self.align[column] if column < len(self.align) else "left"


class Figures(BaseModel):
    """Strict accuracy of one group of completed records under one tier."""

    n: int = 0
    passed: int = 0
    accuracy: float | None = None
    mean_partial_diagnostic: float | None = None


class TierFigures(Figures):
    """A tier's figures over the run, with its breakdowns."""

    n_not_applicable: int = 0
    n_error_excluded: int = 0
    diagnostic: bool = False
    """A diagnostic scorer of this run (``run.json``'s ``diagnostic_scorers``): shown, never a pass rule."""
    n_serving_limited: int = 0
    """Scored cases whose output was cut at the token limit or whose conversation overflowed the
    context window (set only when there are any)."""
    accuracy_without_serving_limits: float | None = None
    """Strict accuracy with those cases left out, shown beside ``accuracy`` (set with the count)."""
    by_suite: dict[str, Figures] = Field(default_factory=dict)
    by_category: dict[str, Figures] = Field(default_factory=dict)


class ServingFaults(BaseModel):
    """Completed cases where the serving stack or a limit of the run, not only the model, shows
    (``summary.json`` → ``serving``; present only when one of the counts is not zero)."""

    text_call_answers: int = 0
    """Answers without structured calls whose text holds a call in a known serialisation: calls the
    server's tool-call parser probably failed to return (native mode, not recovered)."""
    text_call_cases: int = 0
    text_call_formats: dict[str, int] = Field(default_factory=dict)
    """Those answers per serialisation (``hermes``, ``mistral``, ``llama``, ``harmony``, ``json``...)."""
    recovered_calls: int = 0
    """Calls read from answer texts and scored as calls (``--recover-text-calls``)."""
    recovered_cases: int = 0
    format_error_cases: int = 0
    """Prompt mode / local checkpoints: cases with call-like text that could not be read."""
    output_truncated: int = 0
    """Cases with a round that stopped at the output token limit."""
    context_overflow: int = 0
    """Cases the endpoint refused because the conversation exceeds the model's context window."""

    def any(self) -> bool:
        """Whether any count is not zero."""
        return any(
            (self.text_call_answers, self.recovered_calls, self.format_error_cases)
            + (self.output_truncated, self.context_overflow)
        )


class QCFlag(BaseModel):
    """An anomaly worth a manual look (``scorer`` is empty for flags about the case itself)."""

    key: str
    trial: str
    scorer: str = ""
    flag: str


class IntervalFigures(BaseModel):
    """A point estimate with its two-sided interval and the method that produced it."""

    estimate: float
    low: float
    high: float
    method: str


class GroupStatistics(BaseModel):
    """Accuracy with its interval for one category or suite of a stratum."""

    n: int
    passed: int
    accuracy: IntervalFigures


class TrialStatistics(BaseModel):
    """Repeated-trial figures of a stratum (only ``trials`` and ``cases`` when each case ran once)."""

    trials: int = 1
    cases: int = 0
    pass_at_k: dict[str, float] = Field(default_factory=dict)
    pass_hat_k: dict[str, float] = Field(default_factory=dict)
    flip_rate: float | None = None
    mean_disagreement: float | None = None
    flipping_cases: list[str] = Field(default_factory=list)


class Stratum(BaseModel):
    """All figures of one (tier, harness mode) stratum; strata are never pooled."""

    tier: str
    harness_mode: str
    n: int
    cases: int = 0
    passed: int
    errors: int = 0
    accuracy: IntervalFigures
    partial_mean_diagnostic: float | None = None
    by_category: dict[str, GroupStatistics] = Field(default_factory=dict)
    by_suite: dict[str, GroupStatistics] = Field(default_factory=dict)
    trials: TrialStatistics = Field(default_factory=TrialStatistics)
    retrieval_recall: float | None = None


class Statistics(BaseModel):
    """Intervals, trials and breakdowns per stratum (``summary.json`` → ``statistics``)."""

    confidence: float = 0.95
    strata: list[Stratum] = Field(default_factory=list)


class TokenCounts(BaseModel):
    """Tokens and requests of a run (cached rounds counted apart, as ``cache_hits``)."""

    input: int = 0
    output: int = 0
    reasoning: int = 0
    cached_input: int = 0
    requests: int = 0
    cache_hits: int = 0


class SideTokens(BaseModel):
    """One side of a run's conversations (the agent, or the simulated user): its tokens in all of them,
    and the mean per conversation."""

    input: int = 0
    output: int = 0
    input_per_conversation: float = 0.0
    output_per_conversation: float = 0.0


class ConversationUsage(BaseModel):
    """Tokens per conversation, the agent's and the simulated user's apart (``usage.conversations``,
    set only for runs with conversation cases). The user's tokens are never in the agent's, nor in
    the run's ``tokens``."""

    n: int = 0
    """Conversation records counted (error records too: their requests were paid for)."""
    users: list[str] = Field(default_factory=list)
    """Who played the user (:attr:`~callbench.types.conversation.SimulatorInfo.label`): ``scripted``
    (no model, no tokens) or the simulated user's model, temperature, seed and prompt hash."""
    agent: SideTokens = Field(default_factory=SideTokens)
    """The agent's live requests (cached rounds left out, as in the run's ``tokens``)."""
    user: SideTokens = Field(default_factory=SideTokens)
    """The simulated user's requests, as its turns recorded them (``trace.user_turns[].usage``)."""


class PassCost(BaseModel):
    """What a tier's passed cases cost (``usage.cost_per_pass[tier]``)."""

    passed: int = 0
    """Completed records the tier judged that passed."""
    cost_usd: float | None = None
    """The run's whole cost (failed cases, error records and replaced records included) / ``passed``;
    ``None`` when none passed."""


class RunUsage(BaseModel):
    """Tokens, latency of live requests and of cases, and the estimated cost of a run.

    Optional figures are set only when computed (summaries of other runs keep their keys)."""

    tokens: TokenCounts = Field(default_factory=TokenCounts)
    tokens_per_case_mean: float | None = None
    latency_ms_p50: float | None = None
    """Per live request (cached rounds left out)."""
    latency_ms_p95: float | None = None
    n_latency: int = 0
    case_latency_ms_p50: float | None = None
    """Per case: the record's duration (cases answered from the cache alone left out)."""
    case_latency_ms_p95: float | None = None
    n_case_latency: int = 0
    cost_usd: float | None = None
    price_model: str | None = None
    """The price-table entry the cost was estimated with (set only when it was)."""
    price_table: str | None = None
    """Which table priced the run: ``built-in price table (as of YYYY-MM-DD)`` or the user's file."""
    price: dict[str, float] | None = None
    """The entry's prices, USD per million tokens (``input``, ``output``, ``cached_input``, ``reasoning``)."""
    cost_missing: str | None = None
    """Why there is no cost (no entry for the model, no model named), set only then."""
    cost_per_case_mean: float | None = None
    """``cost_usd`` / records (error records included)."""
    cost_per_pass: dict[str, PassCost] | None = None
    """Per strict tier: ``cost_usd`` / the tier's passed cases."""
    superseded: TokenCounts | None = None
    """Tokens of records a resumed run replaced (paid for: in ``cost_usd``, not in ``tokens``)."""
    conversations: ConversationUsage | None = None
    """Tokens per conversation, agent and simulated user apart (set only for runs with conversations)."""


@dataclass(frozen=True)
class Aggregate:
    """What :meth:`Scorer.aggregate <callbench.scoring.base.Scorer.aggregate>` returns: a scorer's
    run-level figures and the tables that display them.

    The run summary stores it as ``summary.json``'s ``scorer_aggregates[<scorer>]`` (a
    :class:`ScorerAggregate`: the figures' keys beside ``tables``), which the CLI and the reports
    read back: they render ``tables`` and leave the figures to readers of the file.
    """

    figures: Mapping[str, Any] = field(default_factory=dict)
    """The scorer's own JSON-ready values by name (numbers, counts, per-category maps, notes)."""
    tables: Sequence[Table] | None = None
    """How the CLI and the reports show the figures; ``None`` (no display) leaves ``tables`` out of
    ``summary.json``, while ``[]`` writes an empty list."""

    def __post_init__(self) -> None:
        if "tables" in self.figures:
            raise ValueError("an aggregate's display tables go in Aggregate.tables, not in its figures")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Aggregate:
        """An aggregate from one mapping that may hold its ``tables`` beside the figures (the shape
        ``summary.json`` stores; :class:`Table` values or their dicts)."""
        figures = {key: value for key, value in data.items() if key != "tables"}
        if "tables" not in data:
            return cls(figures)
        return cls(figures, [Table.model_validate(t) for t in data["tables"]])


class ScorerAggregate(BaseModel):
    """A scorer's run-level figures as ``summary.json`` stores them: its own fields (kept as they
    are) and display tables."""

    model_config = ConfigDict(extra="allow")

    tables: list[Table] = Field(default_factory=list)

    @property
    def figures(self) -> dict[str, Any]:
        """The scorer's own fields (everything but the tables)."""
        return dict(self.model_extra or {})

    @classmethod
    def of(cls, aggregate: Aggregate | Mapping[str, Any]) -> ScorerAggregate:
        """The stored form of what a scorer's ``aggregate`` returned. A plain mapping (figures with an
        optional ``tables`` key, what scorers returned before :class:`Aggregate`) is still read."""
        if isinstance(aggregate, Mapping):
            aggregate = Aggregate.from_dict(aggregate)
        data = dict(aggregate.figures)
        if aggregate.tables is not None:
            data["tables"] = list(aggregate.tables)
        return cls.model_validate(data)


class Summary(BaseModel):
    """The content of ``summary.json``."""

    schema_version: int = SUMMARY_SCHEMA_VERSION
    run_id: str = ""
    model: str = ""
    harness_mode: str | None = None
    harness_assistance: dict[str, Any] = Field(default_factory=dict)
    n_records: int = 0
    n_completed: int = 0
    n_error: int = 0
    errors_by_type: dict[str, int] = Field(default_factory=dict)
    """Error records (infrastructure failures, excluded from every rate) per error type."""
    tiers: dict[str, TierFigures] = Field(default_factory=dict)
    n_manual: int = 0
    """Completed records of manual cases (``scoring: manual``): awaiting review against their rubric,
    out of every automatic rate (their verdicts are not applicable)."""
    retrieval_recall: float | None = None
    qc_flags: list[QCFlag] = Field(default_factory=list)
    scorer_aggregates: dict[str, ScorerAggregate] = Field(default_factory=dict)
    statistics: Statistics | None = None
    usage: RunUsage | None = None
    requests: dict[str, int] | None = None
    """The model wrapper's counters (cache hits, transient errors...), when it kept any."""
    serving: ServingFaults | None = None
    """Serving faults and run limits counted apart (set only when there are any)."""

    @classmethod
    def from_json_dict(cls, raw: Mapping[str, Any]) -> Summary:
        """Validate a ``summary.json`` object of any known schema version (migrated first).

        Raises:
            ValueError: for a summary written by a newer schema; pydantic's ``ValidationError``
                (a ``ValueError``) for a malformed one.
        """
        return cls.model_validate(migrate_summary(raw))

    def to_json_dict(self) -> dict[str, Any]:
        """The JSON object written to ``summary.json`` (set fields only; the version always first)."""
        data = self.model_dump(mode="json", exclude_unset=True, fallback=str)
        return {"schema_version": self.schema_version} | data


def migrate_summary(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A ``summary.json`` object brought to :data:`SUMMARY_SCHEMA_VERSION` (a new dict).

    Schema 1 (and files without a version) kept a scorer's display table as preformatted text in
    its aggregate's ``table``; it becomes a :class:`Table` whose notes are the text's lines, which
    prints as before (``callbench score`` rebuilds structured tables from the records).

    Raises:
        ValueError: for a version newer than this callbench knows.
    """
    data = dict(raw)
    version = data.get("schema_version", 1)
    if not isinstance(version, int) or version > SUMMARY_SCHEMA_VERSION:
        raise ValueError(
            f"schema_version {version!r} is newer than this callbench reads "
            f"({SUMMARY_SCHEMA_VERSION}); upgrade callbench"
        )
    if version < 2:
        data["scorer_aggregates"] = {
            name: _text_table_to_data(agg) for name, agg in (data.get("scorer_aggregates") or {}).items()
        }
    data["schema_version"] = SUMMARY_SCHEMA_VERSION
    return data


def _text_table_to_data(aggregate: Any) -> Any:
    if not isinstance(aggregate, Mapping) or not isinstance(aggregate.get("table"), str):
        return aggregate
    out = {k: v for k, v in aggregate.items() if k != "table"}
    out.setdefault("tables", [{"notes": aggregate["table"].splitlines()}])
    return out
