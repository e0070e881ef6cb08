"""Human review types: the rubric of a manual case and one reviewer's judgement of one verdict.

A *manual* case (``scoring: manual``) is run like any other but decided by people against its
:class:`Rubric`; its automatic verdicts are kept, marked not applicable. Reviews of any case are
:class:`ReviewEntry` lines of ``reviews/<reviewer>.jsonl`` in the run folder (see
``docs/review.md`` and :mod:`callbench.review.store`).
"""

from __future__ import annotations

import math
import re
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

RUBRIC_SCORER = "rubric"
"""The scorer name reviews of a manual case use (its automatic tiers do not decide it)."""

CONSENSUS_REVIEWER = "consensus"
"""The reviewer name under which agreed verdicts of disagreeing reviewers are recorded."""

REVIEWER_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
"""Reviewer names become file names (``reviews/<name>.jsonl``): letters, digits, ``_ . -``, no
leading dot, at most 64 characters, so that no name can leave the ``reviews`` folder."""

CRITERION_PATTERN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")

Decision = Literal["agree", "overturn_pass", "overturn_fail", "unsure", "scored"]
"""A reviewer's decision on one verdict.

* ``agree``: the automatic verdict stands.
* ``overturn_pass`` / ``overturn_fail``: the case should have passed / failed under this scorer.
* ``unsure``: looked at, no decision (never counted as reviewed).
* ``scored``: a manual case scored against its rubric (scorer ``rubric`` only; ``scores`` required).
"""
DECISIONS: tuple[Decision, ...] = get_args(Decision)

ReviewReason = Literal[
    "scorer_too_strict",
    "scorer_too_lenient",
    "gold_wrong",
    "ambiguous_instruction",
    "equivalent_call",
    "harness_fault",
    "other",
]
"""The closed list of reason codes of a review (required for an overturn, optional otherwise).

* ``scorer_too_strict``: the scorer's rule failed an acceptable call (e.g. a harmless extra call).
* ``scorer_too_lenient``: the scorer passed a call that does not do what was asked.
* ``gold_wrong``: the case's expected steps or arguments are wrong.
* ``ambiguous_instruction``: the instruction allows the model's reading as well as the gold one.
* ``equivalent_call``: another tool or argument form does the same job as the expected one.
* ``harness_fault``: the harness, an executor or a tool implementation misbehaved.
* ``other``: anything else (say what in the note).
"""
REVIEW_REASONS: tuple[ReviewReason, ...] = get_args(ReviewReason)

Level = str | int
"""A rubric score: a label of an ordinal scale, or an integer of a ``min``..``max`` scale."""


class Scale(BaseModel):
    """An ordinal scale: ordered labels (worst first), or the integers ``min``..``max``."""

    model_config = ConfigDict(extra="forbid")

    levels: list[str] | None = None
    """Ordered labels, worst first (e.g. ``[wrong, partly_right, right]``)."""
    min: int | None = None
    max: int | None = None

    @model_validator(mode="after")
    def _check(self) -> Scale:
        if self.levels is not None:
            if self.min is not None or self.max is not None:
                raise ValueError("a scale has either 'levels' or 'min'/'max', not both")
            if len(self.levels) < 2 or len(set(self.levels)) != len(self.levels) or not all(self.levels):
                raise ValueError("scale 'levels' needs at least two distinct non-empty labels")
        elif self.min is None or self.max is None:
            raise ValueError("a scale needs 'levels' or both 'min' and 'max'")
        elif not self.min < self.max <= self.min + 100:
            raise ValueError(f"scale min {self.min} and max {self.max}: need min < max <= min + 100")
        return self

    def values(self) -> list[Level]:
        """Every level, worst first."""
        if self.levels is not None:
            return list(self.levels)
        assert self.min is not None and self.max is not None
        return list(range(self.min, self.max + 1))

    def rank(self, value: object) -> int:
        """The 0-based position of ``value`` on the scale (worst is 0).

        Raises:
            ValueError: when ``value`` is not a level of this scale (one line naming the levels).
        """
        # bool is an int subclass: True must not be read as level 1
        valid = not isinstance(value, bool) and isinstance(value, str if self.levels is not None else int)
        values = self.values()
        if not valid or value not in values:
            shown = ", ".join(map(str, values)) if self.levels is not None else f"{self.min}..{self.max}"
            raise ValueError(f"{value!r} is not a level of the scale ({shown})")
        return values.index(value)

    def midpoint_rank(self) -> int:
        """The default pass threshold: the middle level (the upper middle of an even count)."""
        return math.ceil((len(self.values()) - 1) / 2)


class Criterion(BaseModel):
    """One thing reviewers judge in a manual case's answer."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=CRITERION_PATTERN.pattern)
    description: str = Field(min_length=1)
    scale: Scale


class Rubric(BaseModel):
    """How a manual case is scored: 1-10 criteria, each on an ordinal scale, and an optional pass rule.

    ``pass_rule`` maps criterion ids to the lowest level that still passes; criteria it does not
    name are not part of the pass decision. Without a pass rule the case passes when every criterion
    reaches at least its scale's middle level (``[poor, fair, good]`` → ``fair``; ``0..4`` → ``2``).
    """

    model_config = ConfigDict(extra="forbid")

    criteria: list[Criterion] = Field(min_length=1, max_length=10)
    pass_rule: dict[str, Level] | None = None

    @model_validator(mode="after")
    def _check(self) -> Rubric:
        ids = [c.id for c in self.criteria]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"duplicate rubric criterion id(s) {dup}")
        if self.pass_rule is not None:
            if not self.pass_rule:
                raise ValueError("rubric pass_rule names no criterion (leave it out for the default rule)")
            for cid, level in self.pass_rule.items():
                criterion = self.criterion(cid)
                if criterion is None:
                    raise ValueError(f"rubric pass_rule names unknown criterion {cid!r}")
                try:
                    criterion.scale.rank(level)
                except ValueError as exc:
                    raise ValueError(f"rubric pass_rule for {cid!r}: {exc}") from None
        return self

    def criterion(self, cid: str) -> Criterion | None:
        """The criterion with id ``cid``, if any."""
        return next((c for c in self.criteria if c.id == cid), None)

    def check_scores(self, scores: dict[str, Level]) -> None:
        """Every criterion scored once with a level of its scale, and nothing else.

        Raises:
            ValueError: naming the first missing, unknown or invalid criterion.
        """
        unknown = sorted(set(scores) - {c.id for c in self.criteria})
        if unknown:
            raise ValueError(f"unknown rubric criterion id(s) {unknown}")
        for criterion in self.criteria:
            if criterion.id not in scores:
                raise ValueError(f"rubric criterion {criterion.id!r} is not scored")
            try:
                criterion.scale.rank(scores[criterion.id])
            except ValueError as exc:
                raise ValueError(f"rubric criterion {criterion.id!r}: {exc}") from None

    def passes(self, scores: dict[str, Level]) -> bool:
        """Whether complete, valid ``scores`` pass (see the class docstring for the rule)."""
        self.check_scores(scores)
        if self.pass_rule is not None:
            thresholds = {cid: self._rank(cid, level) for cid, level in self.pass_rule.items()}
        else:
            thresholds = {c.id: c.scale.midpoint_rank() for c in self.criteria}
        return all(self._rank(cid, scores[cid]) >= low for cid, low in thresholds.items())

    def _rank(self, cid: str, level: Level) -> int:
        criterion = self.criterion(cid)
        assert criterion is not None
        return criterion.scale.rank(level)


class ReviewEntry(BaseModel):
    """One line of ``reviews/<reviewer>.jsonl``: a reviewer's decision on one verdict of one record.

    ``record_hash`` is :func:`callbench.review.store.record_hash` of the record line reviewed: when
    the case is re-run or re-scored the line changes and the entry becomes *stale*.
    """

    model_config = ConfigDict(extra="forbid")

    version: int = 1
    reviewer: str = Field(pattern=REVIEWER_PATTERN.pattern)
    key: str = Field(min_length=1)
    """The record key ``suite:id``."""
    trial: int = Field(ge=1)
    record_hash: str = Field(pattern=r"^[0-9a-f]{64}$")
    scorer: str = Field(min_length=1)
    """A scorer (tier) name of the record's verdicts, or ``rubric`` for a manual case."""
    decision: Decision
    reason: ReviewReason | None = None
    note: str = Field(default="", max_length=4000)
    scores: dict[str, Level] = Field(default_factory=dict)
    """``{criterion_id: level}`` of a manual case (decision ``scored``)."""
    at: str = Field(min_length=1)
    """When the review was recorded (UTC, ISO 8601)."""

    @model_validator(mode="after")
    def _check(self) -> ReviewEntry:
        rubric = self.scorer == RUBRIC_SCORER
        if rubric and self.decision not in ("scored", "unsure"):
            raise ValueError(f"a rubric review's decision is 'scored' or 'unsure', not {self.decision!r}")
        if not rubric and self.decision == "scored":
            raise ValueError("decision 'scored' is only for scorer 'rubric' (manual cases)")
        if self.decision == "scored" and not self.scores:
            raise ValueError("decision 'scored' needs rubric scores")
        if self.scores and self.decision != "scored":
            raise ValueError("rubric scores go with decision 'scored' only")
        if self.decision.startswith("overturn") and self.reason is None:
            raise ValueError(f"decision {self.decision!r} needs a reason code")
        return self

    @property
    def slot(self) -> tuple[str, str, int, str]:
        """``(reviewer, key, trial, scorer)``: a later entry in the same slot replaces an earlier one."""
        return (self.reviewer, self.key, self.trial, self.scorer)


class ReviewedAccuracy(BaseModel):
    """A scorer's automatic accuracy beside its reviewed accuracy over one run's current records.

    Reviewed accuracy replaces an automatic verdict by the reviewers' decision where a non-stale one
    exists: a consensus entry, else the decision every reviewer who decided agrees on. Disputed
    verdicts (reviewers disagree, no consensus) keep their automatic verdict and are counted apart.
    For ``rubric`` (manual cases) there is no automatic verdict: accuracy is over reviewed records only.
    """

    scorer: str
    n: int = 0
    """Records judged: applicable verdicts of automatic cases, or completed manual records (``rubric``)."""
    automatic_passed: int | None = None
    automatic_accuracy: float | None = None
    reviewed_passed: int = 0
    reviewed_accuracy: float | None = None
    n_reviewed: int = 0
    """Verdicts with a (non-stale, decided, undisputed or consensus) review."""
    n_agreed: int = 0
    n_overturned: int = 0
    overturned_to_pass: int = 0
    overturned_to_fail: int = 0
    n_disputed: int = 0
    n_unsure: int = 0
    """Verdicts whose only current reviews are ``unsure``."""
    n_stale: int = 0
    """Latest entries of this scorer made against an older record line (not counted)."""
    n_awaiting: int = 0
    """Records with no usable review yet."""
    overturns_by_reason: dict[str, int] = Field(default_factory=dict)
