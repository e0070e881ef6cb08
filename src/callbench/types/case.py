"""The case format: one benchmark case, its expected steps and the argument DSL.

See ``docs/case-format.md`` for the user-facing description. Argument DSL values are kept as
plain JSON here and interpreted by :mod:`callbench.scoring.arguments`.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from callbench.types.contract import ToolContract
from callbench.types.conversation import UserSide
from callbench.types.hashing import sha256_of
from callbench.types.messages import Message
from callbench.types.review import Rubric

DSL_KEYS = ("$any", "$default", "$one_of", "$ref", "$pattern")
REF_PATTERN = re.compile(r"^(?P<step>[A-Za-z0-9_\-#]+)(?:\.(?P<path>.+))?$")


class ExpectedStep(BaseModel):
    """One expected call (or ``times`` identical calls) of one tool or of one of several alternatives."""

    model_config = ConfigDict(extra="forbid")

    id: str = ""
    """Step id used by ``$ref`` and ``order_free``; defaults to the tool name when unique, else ``stepN``."""
    tool: str | list[str]
    """The expected tool, or a list of alternative tools any one of which satisfies the step."""
    arguments: dict[str, Any] = Field(default_factory=dict)
    """Expected arguments in the argument DSL (literals, ``$any``, ``$default``, ``$one_of``, ``$ref``)."""
    times: int = Field(default=1, ge=1, le=1000)
    """How many calls the step expects (e.g. open five tabs)."""
    call_only: bool = False
    """Scored without execution: the harness does not execute the call and no tier requires it."""
    expect_error: bool = Field(default=False, exclude_if=lambda value: not value)
    """The call is expected to fail where it runs (a gold path's lookup that finds nothing, as in some
    τ²-bench tasks): the execution tiers then require it to be executed and to fail. Written only when
    set, so records and case hashes of steps that expect success are as they were before it existed."""
    turn: int | None = None
    """Optional grouping for built-in agents: steps with the same ``turn`` are emitted in one model turn."""

    @property
    def tools(self) -> list[str]:
        """The acceptable tool names of this step."""
        return [self.tool] if isinstance(self.tool, str) else list(self.tool)

    def execution_as_expected(self, execution: str) -> bool:
        """Whether a call paired with this step ran as the step expects: succeeded, or failed for a
        step that ``expect_error`` (a call-only step's call is normally not executed at all)."""
        if self.call_only:
            return execution in ("skipped", "ok")
        return execution == ("error" if self.expect_error else "ok")


class AnswerSpec(BaseModel):
    """An optional check of the model's final text."""

    model_config = ConfigDict(extra="forbid")

    contains: list[str] = Field(default_factory=list)
    """Every string must appear in the final text (case-insensitive)."""
    pattern: str | None = None
    """A regular expression that must be found in the final text."""


class Case(BaseModel):
    """One benchmark case. Records key on ``suite:id``."""

    model_config = ConfigDict(extra="forbid")

    id: str
    suite: str = ""
    """Suite name; filled in by the suite loader when absent."""
    category: str = "general"
    instruction: str | None = None
    """The user request. Either this or ``messages``."""
    messages: list[Message] | None = None
    """A full starting conversation (overrides ``instruction``)."""
    system: str | None = None
    """System prompt for this case (overrides the suite's)."""
    tools: list[str | ToolContract] = Field(default_factory=list)
    """Candidate tools: registry names and/or inline contracts. Empty = the whole suite registry."""
    expected: list[ExpectedStep] = Field(default_factory=list)
    """Expected calls, in order (see ``order_free``)."""
    order_free: list[list[str]] = Field(default_factory=list)
    """Groups of step ids that may occur in any order among themselves."""
    expected_answer: AnswerSpec | None = None
    timeout_s: float = Field(default=120.0, gt=0)
    max_rounds: int | None = Field(default=None, ge=1)
    """Overrides the harness mode's round budget when set."""
    max_calls: int | None = Field(default=None, ge=1)
    """Stop the episode once this many calls were made (call cap)."""
    executor: str | None = None
    """Executor name for this case (default: the suite's)."""
    executor_config: dict[str, Any] = Field(default_factory=dict)
    """Per-case data for the executor (initial state, replay data, generated task...)."""
    harness_guidance: bool = True
    """Append the production-parity continuation guidance to tool results."""
    template: str | None = None
    """Cases sharing a template are one cluster for cluster-bootstrap intervals."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    scoring: Literal["auto", "manual"] = "auto"
    """``manual``: reviewers score the case against its ``rubric``; its automatic verdicts are kept but
    marked not applicable (out of every automatic rate). ``expected`` then names the tools a good
    answer uses (played by the oracle) without deciding anything."""
    rubric: Rubric | None = None
    """Criteria and scales of a manual case (required with ``scoring: manual``, refused otherwise)."""
    user: UserSide | None = None
    """A conversation case: the user who speaks after every answer (scripted, or simulated by
    ``--user-model``); see ``docs/conversations.md``. The user may open the conversation itself (no
    ``instruction`` or ``messages`` then)."""
    phase: int = Field(default=0, ge=0, exclude_if=lambda value: not value)
    """Written only when set (records and case hashes of other cases are as before the field). Run
    order across cases: a case starts only after every case of an earlier phase that the run
    plays has finished (set-up cases first, e.g. BFCL memory's prerequisite conversations, whose end
    state later cases read). Cases of one phase run concurrently; 0 (the default) for almost all."""

    @model_validator(mode="after")
    def _check(self) -> Case:
        if self.instruction is None and not self.messages and self.user is None:
            raise ValueError("a case needs an 'instruction', 'messages' or a 'user'")
        if self.scoring == "manual" and self.rubric is None:
            raise ValueError("'scoring: manual' needs a 'rubric'")
        if self.scoring == "auto" and self.rubric is not None:
            raise ValueError("a 'rubric' needs 'scoring: manual' (automatic cases have none)")
        assign_step_ids(self.expected)
        ids = [s.id for s in self.expected]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"duplicate step id(s) {dup}")
        for group in self.order_free:
            unknown = [g for g in group if g not in ids]
            if unknown:
                raise ValueError(f"order_free names unknown step id(s) {unknown}")
        check_refs(self.expected)
        return self

    _refs_memo: tuple[int, bool] | None = PrivateAttr(default=None)
    _origin: str = PrivateAttr(default="")

    @property
    def origin(self) -> str:
        """Where the case was read (``file:line``), for load-time messages; empty when unknown.
        Not part of the case's data (never hashed or recorded)."""
        return self._origin

    def set_origin(self, where: str) -> None:
        """Record where the case was read (the loaders call this)."""
        self._origin = where

    @property
    def has_refs(self) -> bool:
        """True when an expected argument holds a ``$ref`` (scorers then bind references to pairs).
        Kept while ``expected`` is the same list (a copy with other steps computes its own)."""
        memo = self._refs_memo
        if memo is None or memo[0] != id(self.expected):
            found = any("$ref" in marker for step in self.expected for marker in iter_dsl(step.arguments))
            memo = self._refs_memo = (id(self.expected), found)
        return memo[1]

    @property
    def key(self) -> str:
        """The record key ``suite:id``."""
        return f"{self.suite}:{self.id}"

    def start_messages(self) -> list[Message]:
        """The conversation the model starts from (without the system prompt). A conversation whose
        user opens it starts with the agent's greeting; the user's first turn follows."""
        if self.messages:
            return [m.model_copy() for m in self.messages]
        if self.instruction is None and self.user is not None:
            greeting = self.user.greeting
            return [Message(role="assistant", content=greeting)] if greeting else []
        return [Message.user(self.instruction or "")]

    @property
    def user_opens(self) -> bool:
        """True for a conversation whose user speaks first: it starts with no message, with the
        agent's greeting, or with a history that ends with the agent's message."""
        if self.user is None:
            return False
        start = self.start_messages()
        return not start or start[-1].role == "assistant"

    def prompt_text(self) -> str:
        """The user-visible request text (used for retrieval and prompt hashing)."""
        if self.messages:
            return "\n".join(m.content for m in self.messages if m.role == "user")
        if self.instruction is None and self.user is not None:
            return self.user.instructions or next((t.say for t in self.user.script or []), "")
        return self.instruction or ""

    def prompt_sha256(self) -> str:
        return sha256_of(self.prompt_text())

    def inline_contracts(self) -> list[ToolContract]:
        return [t for t in self.tools if isinstance(t, ToolContract)]

    def tool_names(self) -> list[str]:
        return [t if isinstance(t, str) else t.name for t in self.tools]

    def expected_tools(self) -> list[list[str]]:
        """Per expected call instance (``times`` expanded), the acceptable tool names."""
        return [s.tools for s in self.expected for _ in range(s.times)]

    @property
    def manual(self) -> bool:
        """True for a case scored by reviewers against its rubric."""
        return self.scoring == "manual"

    def hash_payload(self) -> dict[str, Any]:
        # scoring/rubric are left out at their defaults so automatic cases hash as they did before
        # manual cases existed (suite hashes of earlier runs stay valid for --resume and compare).
        exclude = {"metadata"} | ({"scoring", "rubric"} if not self.manual else set())
        if self.user is None:  # cases without a user hash as they did before conversations existed
            exclude.add("user")
        return self.model_dump(mode="json", exclude=exclude)


def assign_step_ids(steps: list[ExpectedStep]) -> None:
    """Give id-less steps the tool name when unique within the case, else ``stepN`` (1-based)."""
    names = [s.tool if isinstance(s.tool, str) else None for s in steps]
    for index, step in enumerate(steps, start=1):
        if step.id:
            continue
        name = names[index - 1]
        step.id = name if name is not None and names.count(name) == 1 else f"step{index}"


def iter_dsl(value: Any):
    """Yield every DSL marker dict inside an expected-argument value (depth first)."""
    if isinstance(value, dict):
        if any(k in value for k in DSL_KEYS):
            yield value
        for sub in value.values():
            yield from iter_dsl(sub)
    elif isinstance(value, list):
        for sub in value:
            yield from iter_dsl(sub)


def check_refs(steps: list[ExpectedStep]) -> None:
    """Every ``$ref`` must name an earlier step."""
    seen: set[str] = set()
    for step in steps:
        for marker in iter_dsl(step.arguments):
            ref = marker.get("$ref")
            if ref is None:
                continue
            match = REF_PATTERN.match(str(ref))
            if not match or match.group("step") not in seen:
                raise ValueError(f"step {step.id!r}: $ref {ref!r} must be '<earlier step id>.<path>'")
        seen.add(step.id)
