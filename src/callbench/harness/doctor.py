"""``callbench doctor``: does an endpoint serve tool calls the way callbench reads them?

A conformance check of one model endpoint in at most :data:`MAX_REQUESTS` requests, before anything
is scored. Each check is a small function that asks the endpoint (or reads what earlier checks got)
and says ``passed``, ``failed`` or ``skipped``, with the evidence, beside what a failure would
corrupt in a benchmark run ("parallel calls decoded as one: BFCL's parallel categories would score
0"). A serving fault found here is the server's (or the preset's), not the model's: the point is to
tell them apart before a run scores one as the other.

The checks run in order and later ones read what earlier ones found: a check whose premise an
earlier check disproved (no call was decoded at all, the plain round trip is refused) is skipped
with a pointer to that check, so that one fault shows as one failure. An endpoint failure inside a
check (an HTTP error, a timeout, a cut stream) fails that check with the error as evidence; doctor
itself never stops on one, except when the very first request is refused as unauthorised or not
found (a wrong key, model name or URL), where every check would say the same: that is one line.

``run --preflight`` runs the same checks against the run's model before its first case and keeps
the table in ``run.json`` (``options.preflight``); see :func:`run_preflight`.
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from callbench.errors import (
    ConfigError,
    FatalProviderError,
    ProviderError,
    TransientProviderError,
)
from callbench.providers.base import Provider
from callbench.providers.limits import DEFAULT_REQUEST_TIMEOUT_S, EndpointLimits
from callbench.providers.model import Model, ModelOptions, RetryPolicy, make_provider
from callbench.providers.wire import ContextLengthError
from callbench.tools.schema import validate_arguments
from callbench.types.contract import ToolContract
from callbench.types.messages import GenerationSettings, Message, ModelTurn, ToolCall

if TYPE_CHECKING:
    from callbench.harness.config import RunConfig
    from callbench.types.records import RunHeader

Status = Literal["passed", "failed", "skipped"]
MAX_REQUESTS = 30
"""The most requests one doctor run may send (the checks need 9; the rest is headroom)."""
DEFAULT_CASE_LIMIT_S = 120.0
"""The case time limit the latency check measures against (the cases' default)."""
CONTEXT_PROBE_TOKENS = 2_200_000
"""Size of the over-long prompt of the context check: past every common context window (Gemini's
2M included), so a server that answers it must have cut it. Refused requests are not billed."""
PREFLIGHT_KEY = "preflight"
"""Where ``run.json`` keeps the preflight table: ``options.preflight``."""
EARLIER_KEY = "preflight_earlier"
"""``options.preflight_earlier``: the tables of earlier preflights of a resumed run, oldest first."""

SYSTEM = "You are a helpful assistant. When a tool can answer, call it; otherwise answer briefly."
ONE_CALL_PROMPT = "What is the weather in Paris right now? Use celsius."
PARALLEL_PROMPT = (
    "What is the weather in Paris and in Tokyo right now, in celsius? Call get_weather for both cities "
    "at once: two calls in this one answer."
)
NO_TOOL_PROMPT = "Say hello in one word."
STRICT_PROMPT = "Book a table at Chez Marie for four people, seated outside on the terrace. Call book_table."
WEATHER_RESULT = '{"city": "Paris", "temperature": 18, "unit": "celsius", "conditions": "sunny"}'

WEATHER = ToolContract(
    name="get_weather",
    description="Current weather for a city.",
    parameters={
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name, e.g. Paris"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city", "unit"],
    },
    read_only=True,
)
CLOCK = ToolContract(
    name="get_time",
    description="Current local time in an IANA time zone.",
    parameters={
        "type": "object",
        "properties": {"timezone": {"type": "string", "description": "e.g. Europe/Paris"}},
        "required": ["timezone"],
    },
    read_only=True,
)
BOOKING = ToolContract(
    name="book_table",
    description="Book a restaurant table.",
    parameters={
        "type": "object",
        "properties": {
            "restaurant": {"type": "string"},
            "party_size": {"type": "integer", "minimum": 1},
            "seating": {"type": "string", "enum": ["indoor", "outdoor", "bar"]},
        },
        "required": ["restaurant", "party_size", "seating"],
        "additionalProperties": False,
    },
)
OFFERED = [WEATHER, CLOCK]

LEAK_MARKERS = (
    "<|python_tag|>",
    "<tool_call>",
    "</tool_call>",
    "[TOOL_CALLS]",
    "<function=",
    "<start_of_turn>",
    "<end_of_turn>",
    "[INST]",
    "</s>",
    "<|",
)
"""Text that never belongs in an answer: chat-template special tokens and raw tool-call markup
(Hermes/Qwen, Mistral, Llama, Gemma, harmony ``<|channel|>``...). Longest first, so the evidence
names the most specific one."""
_LIMIT = re.compile(r"(\d[\d,_]*)\s*(?:tokens|token)", re.IGNORECASE)
_STATUS = re.compile(r"HTTP (\d{3})")
_STOP_AT_FIRST = {"401", "403", "404"}
"""Statuses of the first request that end doctor with one line: every check would say the same."""


# --- results ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckResult:
    """One row of the table."""

    id: str
    """Stable identifier (``parallel_calls``), the key in ``--json`` and ``run.json``."""
    name: str
    """What the table shows (``parallel calls``)."""
    status: Status
    evidence: str
    """What was sent and what came back, in words."""
    corrupts: str
    """What a failure of this check would corrupt in a benchmark run."""
    requests: int = 0
    """Requests this check sent."""

    def to_json(self) -> dict[str, Any]:
        """The row as a JSON object."""
        return {
            "id": self.id,
            "name": self.name,
            "status": self.status,
            "evidence": self.evidence,
            "corrupts": self.corrupts,
            "requests": self.requests,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CheckResult:
        """A row read back from ``to_json`` (unknown statuses read as ``skipped``)."""
        status = data.get("status")
        return cls(
            id=str(data.get("id", "")),
            name=str(data.get("name", data.get("id", ""))),
            status=status if status in ("passed", "failed", "skipped") else "skipped",
            evidence=str(data.get("evidence", "")),
            corrupts=str(data.get("corrupts", "")),
            requests=int(data.get("requests") or 0),
        )


@dataclass
class DoctorReport:
    """The table of one doctor run, with what it was run against."""

    model: str
    provider: dict[str, Any]
    at: str
    checks: list[CheckResult]
    requests: int
    max_requests: int = MAX_REQUESTS
    latency_ms_median: float | None = None
    context_limit_tokens: int | None = None

    @property
    def failed(self) -> list[CheckResult]:
        """The checks that failed."""
        return [c for c in self.checks if c.status == "failed"]

    @property
    def passed(self) -> bool:
        """No check failed (skipped ones do not count against the endpoint)."""
        return not self.failed

    def counts(self) -> dict[str, int]:
        """How many checks passed, failed and were skipped."""
        out = {"passed": 0, "failed": 0, "skipped": 0}
        for check in self.checks:
            out[check.status] += 1
        return out

    def verdict_line(self) -> str:
        """One line: ``13 checks: 11 passed, 1 failed (parallel calls), 1 skipped · 9 requests``."""
        n = self.counts()
        failed = f" ({', '.join(c.name for c in self.failed)})" if self.failed else ""
        return (
            f"{len(self.checks)} checks: {n['passed']} passed, {n['failed']} failed{failed}, "
            f"{n['skipped']} skipped · {self.requests} request(s)"
        )

    def to_json(self) -> dict[str, Any]:
        """The report as a JSON object (``--json``, ``run.json``'s ``options.preflight``)."""
        return {
            "model": self.model,
            "provider": self.provider,
            "at": self.at,
            "passed": self.passed,
            "counts": self.counts(),
            "requests": self.requests,
            "max_requests": self.max_requests,
            "latency_ms_median": self.latency_ms_median,
            "context_limit_tokens": self.context_limit_tokens,
            "checks": [c.to_json() for c in self.checks],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DoctorReport:
        """A report read back from :meth:`to_json` (a ``run.json`` entry)."""
        return cls(
            model=str(data.get("model", "")),
            provider=dict(data.get("provider") or {}),
            at=str(data.get("at", "")),
            checks=[CheckResult.from_json(c) for c in data.get("checks") or [] if isinstance(c, Mapping)],
            requests=int(data.get("requests") or 0),
            max_requests=int(data.get("max_requests") or MAX_REQUESTS),
            latency_ms_median=data.get("latency_ms_median"),
            context_limit_tokens=data.get("context_limit_tokens"),
        )


# --- the probe: requests and what came back ----------------------------------------------------


class BudgetSpent(Exception):
    """The doctor's request budget is spent; the check asking is skipped."""


@dataclass(frozen=True)
class DoctorOptions:
    """How doctor probes."""

    max_requests: int = MAX_REQUESTS
    context_probe_tokens: int = CONTEXT_PROBE_TOKENS
    """Size of the over-long prompt (0: the context check is skipped)."""
    case_limit_s: float = DEFAULT_CASE_LIMIT_S
    """The case time limit the latency check measures against."""
    request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S
    rpm: float | None = None
    max_connections: int | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.max_requests <= MAX_REQUESTS:
            raise ConfigError(
                f"doctor: max_requests must be from 1 to {MAX_REQUESTS}, got {self.max_requests}"
            )
        if self.context_probe_tokens < 0:
            raise ConfigError(
                f"--context-probe must be a number of tokens of at least 0, got {self.context_probe_tokens}"
            )
        if not self.case_limit_s > 0:
            raise ConfigError(f"--case-timeout must be a positive number of seconds, got {self.case_limit_s}")


@dataclass
class Answer:
    """One answer the endpoint gave, and the check that asked for it."""

    check: str
    turn: ModelTurn
    streamed: bool = False


@dataclass
class Probe:
    """The state of one doctor run: the model, the budget, the answers and the results so far."""

    model: Model
    settings: GenerationSettings
    options: DoctorOptions
    description: dict[str, Any]
    requests: int = 0
    answers: list[Answer] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    results: dict[str, CheckResult] = field(default_factory=dict)
    one_call: ModelTurn | None = None
    """The answer of the ``one call`` check (reused by later checks)."""
    context_limit: int | None = None

    @property
    def quirks(self) -> dict[str, Any]:
        """The provider's recorded quirks (empty when it records none)."""
        quirks = self.description.get("quirks")
        return quirks if isinstance(quirks, dict) else {}

    @property
    def prompt_mode(self) -> bool:
        """``prompt:`` models: calls are read from the text by callbench, no tool_choice is sent."""
        return self.description.get("tool_mode") == "prompt"

    def decoded(self) -> bool:
        """The ``one call`` check got at least one structured call."""
        return self.one_call is not None and bool(self.one_call.tool_calls)

    def status(self, check: str) -> Status | None:
        result = self.results.get(check)
        return None if result is None else result.status

    async def ask(
        self,
        check: str,
        messages: list[Message],
        tools: list[ToolContract],
        *,
        tool_choice: str = "auto",
        stream: bool = False,
        max_tokens: int | None = None,
        keep: bool = True,
    ) -> ModelTurn:
        """Send one request (counted against the budget) and keep the answer for the later checks.

        Raises:
            BudgetSpent: no request is left.
            ProviderError: the endpoint failed (the check fails with it as evidence).
        """
        if self.requests >= self.options.max_requests:
            raise BudgetSpent(f"the {self.options.max_requests}-request budget is spent")
        self.requests += 1
        update: dict[str, Any] = {"tool_choice": tool_choice, "stream": stream, "parallel_tool_calls": True}
        if max_tokens is not None:
            update["max_tokens"] = max_tokens
            update["thinking_budget"] = None  # a budget must stay below max tokens
        turn = await self.model.generate(messages, tools, self.settings.model_copy(update=update))
        if keep:
            self.answers.append(Answer(check, turn, streamed=stream))
            if turn.latency_ms is not None:
                self.latencies.append(turn.latency_ms)
        return turn


Outcome = tuple[Status, str]
CheckFn = Callable[[Probe], Awaitable[Outcome]]


@dataclass(frozen=True)
class Check:
    """A check: its id, its name in the table, what its failure corrupts, and the function."""

    id: str
    name: str
    corrupts: str
    run: CheckFn


# --- helpers for evidence --------------------------------------------------------------------


def _cut(text: str, width: int = 100) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _quoted(text: str, width: int = 80) -> str:
    return repr(_cut(text, width)) if text.strip() else "(empty)"


def shown_call(call: ToolCall, width: int = 90) -> str:
    """``get_weather({"city": "Paris", "unit": "celsius"})``, cut to ``width``."""
    raw = call.arguments_raw if call.arguments_raw else json.dumps(call.arguments or {})
    return _cut(f"{call.name}({raw})", width)


def _shown_calls(turn: ModelTurn) -> str:
    return ", ".join(shown_call(c, 60) for c in turn.tool_calls) or "no call"


def _conversation(prompt: str) -> list[Message]:
    return [Message.system(SYSTEM), Message.user(prompt)]


def _raw_call_in_text(text: str) -> str | None:
    """The markup or shape that makes ``text`` look like a call the server did not parse."""
    for marker in LEAK_MARKERS:
        if marker in text:
            return marker
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            value = json.loads(stripped)
        except json.JSONDecodeError:
            return None
        items = value if isinstance(value, list) else [value]
        names = {t.name for t in (*OFFERED, BOOKING)}
        if items and all(
            isinstance(i, dict) and (i.get("name") or i.get("function")) in names for i in items
        ):
            return "a bare JSON call object"
    return None


def _excerpt(text: str, marker: str) -> str:
    at = max(0, text.find(marker) - 20) if marker in text else 0
    return _quoted(text[at:], 70)


def _hint(error: str) -> str:
    """A pointer for the errors whose cause is known (the preset quirk that fixes them)."""
    lowered = error.lower()
    if "valid string" in lowered or ("null" in lowered and "content" in lowered):
        return (
            " — the server refuses content: null beside tool calls (llama-cpp-python does); callbench "
            'sends "" unless the preset\'s null_content quirk is on'
        )
    if "reasoning" in lowered:
        return (
            " — the server wants the turn's reasoning back (or refuses it): set the preset's "
            "reasoning_replay quirk (?reasoning_replay=reasoning_content|reasoning|none)"
        )
    return ""


_GAVE_UP = re.compile(r" \(gave up after \d+ attempt\(s\) in [\d.]+s\)")


def _error_text(exc: BaseException) -> str:
    # doctor never retries: the wrapper's "gave up after 1 attempt" says nothing here
    return f"{type(exc).__name__}: {_cut(_GAVE_UP.sub('', str(exc)), 240)}"


# --- the checks ------------------------------------------------------------------------------

NEEDS_CALL = "needs a decoded call, and 'one call' got none"


async def check_one_call(probe: Probe) -> Outcome:
    """A simple tool, a prompt that needs it: one structured call with arguments."""
    turn = await probe.ask("one_call", _conversation(ONE_CALL_PROMPT), OFFERED)
    probe.one_call = turn
    calls = [c for c in turn.tool_calls if c.name == WEATHER.name]
    if calls:
        extra = len(turn.tool_calls) - 1
        return "passed", shown_call(calls[0]) + (f" (and {extra} more)" if extra else "")
    if turn.tool_calls:  # the server decoded a structured call: which tool is the model's choice
        return "passed", (
            f"decoded {_shown_calls(turn)}; the prompt asked for get_weather (the model's choice of "
            "tool, not a serving fault)"
        )
    raw = _raw_call_in_text(turn.text)
    if raw is not None:
        return "failed", (
            f"no structured call; the text holds {raw!s}: {_excerpt(turn.text, raw)} — the server's "
            "tool-call parser failed (see 'no leaked tokens')"
        )
    return "failed", (
        f"no call; the answer's text: {_quoted(turn.text)} (a server that decodes no calls and a "
        "model that does not call look the same here)"
    )


async def check_parallel_calls(probe: Probe) -> Outcome:
    """Two independent calls asked for in one answer: decoded as two?"""
    if not probe.decoded():
        return "skipped", NEEDS_CALL
    turn = await probe.ask("parallel_calls", _conversation(PARALLEL_PROMPT), OFFERED)
    n = len(turn.tool_calls)
    if n >= 2:
        return "passed", f"{n} calls in one answer: {_shown_calls(turn)}"
    if n == 1:
        call = turn.tool_calls[0]
        merged = re.search(r"\}\s*,?\s*\{", call.arguments_raw or "")
        why = " (its arguments hold two JSON objects run together: two calls merged)" if merged else ""
        why = why or " (a model that makes one call at a time looks the same)"
        return "failed", f"asked for two calls in one answer, 1 decoded: {shown_call(call)}{why}"
    return "failed", (
        f"asked for two calls in one answer, none decoded; text: {_quoted(turn.text)} (the one-call "
        "check did decode a call, so the model or the server dropped both)"
    )


def _round_trip_call() -> ToolCall:
    arguments = {"city": "Paris", "unit": "celsius"}
    return ToolCall(
        id="call_doctor_1", name=WEATHER.name, arguments_raw=json.dumps(arguments), arguments=arguments
    )


async def check_tool_result_round_trip(probe: Probe) -> Outcome:
    """An assistant tool-call turn (no text, no reasoning) and its result, sent as callbench sends
    them in every case's second round: accepted and answered?"""
    call = _round_trip_call()
    messages = _conversation(ONE_CALL_PROMPT) + [
        Message.assistant(ModelTurn(tool_calls=[call])),
        Message.tool(call, WEATHER_RESULT),
    ]
    try:
        turn = await probe.ask("tool_result_round_trip", messages, OFFERED)
    except ProviderError as exc:
        return "failed", _error_text(exc) + _hint(str(exc))
    if turn.tool_calls:
        return "passed", f"accepted; answered with {_shown_calls(turn)}"
    return "passed", f"accepted; answered: {_quoted(turn.text)}"


async def check_reasoning_round_trip(probe: Probe) -> Outcome:
    """When the model reasons before its call, the next round (the turn with its reasoning, as
    callbench builds it, and the result) is accepted."""
    source = probe.one_call
    if source is None or not source.tool_calls:
        return "skipped", NEEDS_CALL
    if not (source.reasoning or source.reasoning_items):
        return "skipped", "the model returned no reasoning with its call (nothing to send back)"
    if any(c.parse_error for c in source.tool_calls):
        return "skipped", "the call's arguments are not JSON (see 'arguments JSON')"
    if probe.status("tool_result_round_trip") == "failed":
        return "skipped", "the round trip fails without reasoning too (see 'tool-result round trip')"
    messages = _conversation(ONE_CALL_PROMPT) + [Message.assistant(source)]
    messages += [Message.tool(c, WEATHER_RESULT) for c in source.tool_calls]
    kept = f"{len(source.reasoning or '')} characters of reasoning" + (
        f", {len(source.reasoning_items)} reasoning item(s)" if source.reasoning_items else ""
    )
    how = _replay_note(probe.quirks)
    try:
        turn = await probe.ask("reasoning_round_trip", messages, OFFERED)
    except ProviderError as exc:
        return "failed", f"the round after a call with {kept}: {_error_text(exc)}{how}{_hint(str(exc))}"
    return (
        "passed",
        f"the round after a call with {kept} was accepted{how}; answered: {_quoted(turn.text, 50)}",
    )


def _replay_note(quirks: Mapping[str, Any]) -> str:
    """How the preset sends reasoning back (``""`` when the provider does not say)."""
    if "reasoning_replay" not in quirks:
        return ""
    replay = quirks["reasoning_replay"]
    return (
        f"; sent back as {replay}"
        if replay and replay != "none"
        else "; not sent back (reasoning_replay none)"
    )


async def check_tool_choice_required(probe: Probe) -> Outcome:
    """``tool_choice: required`` with a prompt that needs no tool: a call all the same."""
    if probe.prompt_mode:
        return "skipped", "prompt mode: tool_choice is not sent (calls are read from the text)"
    if probe.quirks.get("tool_choice_required") is False:
        return "skipped", "this preset sends tool_choice auto in place of required (it refuses required)"
    if not probe.decoded():
        return "skipped", NEEDS_CALL
    turn = await probe.ask(
        "tool_choice_required", _conversation(NO_TOOL_PROMPT), OFFERED, tool_choice="required"
    )
    if turn.tool_calls:
        return "passed", f"'{NO_TOOL_PROMPT}' under required: {_shown_calls(turn)}"
    return "failed", f"'{NO_TOOL_PROMPT}' under required answered in text: {_quoted(turn.text)}"


async def check_tool_choice_none(probe: Probe) -> Outcome:
    """``tool_choice: none`` with a prompt that needs a tool: no call."""
    if probe.prompt_mode:
        return "skipped", "prompt mode: tool_choice is not sent (calls are read from the text)"
    if not probe.decoded():
        return "skipped", NEEDS_CALL + " (no call under none would prove nothing)"
    turn = await probe.ask("tool_choice_none", _conversation(ONE_CALL_PROMPT), OFFERED, tool_choice="none")
    if turn.tool_calls:
        return "failed", f"the weather prompt under none still called {_shown_calls(turn)}"
    return "passed", f"the weather prompt under none: no call; answered: {_quoted(turn.text, 60)}"


def _strict_sent(probe: Probe) -> bool | None:
    """Whether the provider sends strict schemas (``None``: it does not say)."""
    if "strict_tools" in probe.quirks:
        return bool(probe.quirks["strict_tools"])
    strict = probe.description.get("strict")
    return strict if isinstance(strict, bool) else None


async def check_strict_schema(probe: Probe) -> Outcome:
    """An enum, an integer and required keys the prompt tempts the model to break: with strict
    schemas sent, the server must return arguments that match."""
    if not probe.decoded():
        return "skipped", NEEDS_CALL
    sent = _strict_sent(probe)
    turn = await probe.ask("strict_schema", _conversation(STRICT_PROMPT), [BOOKING])
    calls = [c for c in turn.tool_calls if c.name == BOOKING.name]
    if not calls:
        return "skipped", f"no book_table call to judge: {_shown_calls(turn)}; text {_quoted(turn.text, 50)}"
    call = calls[0]
    if call.arguments is None:
        return "skipped", "the call's arguments are not JSON (see 'arguments JSON')"
    errors = validate_arguments(BOOKING.parameters, call.arguments)
    found = f"{shown_call(call, 80)} " + (
        "matches the schema" if not errors else "breaks it: " + "; ".join(errors[:3])
    )
    if sent is not True:
        said = "not sent to this endpoint (?strict=1 sends them)" if sent is False else "not known to be sent"
        return "skipped", f"strict schemas are {said}; {found}"
    if errors:
        return "failed", f"strict: true was sent, yet {found}"
    return "passed", f"strict: true sent; {found}"


JSON_SOURCES = ("one_call", "tool_choice_required", "strict_schema")
"""The answers whose calls the JSON check reads (single-call requests: a merged parallel call is the
parallel check's finding)."""


async def check_arguments_json(probe: Probe) -> Outcome:
    """Every structured call's arguments are a JSON object (no request of its own)."""
    calls = [c for a in probe.answers if a.check in JSON_SOURCES for c in a.turn.tool_calls]
    if not calls:
        return "skipped", "no structured call to judge"
    bad = [c for c in calls if c.parse_error]
    if bad:
        return (
            "failed",
            f"{len(bad)} of {len(calls)} call(s): {bad[0].parse_error}; "
            f"raw {_quoted(bad[0].arguments_raw, 60)}",
        )
    return "passed", f"{len(calls)} call(s), each with a JSON object of arguments"


def _same_calls(plain: ModelTurn, streamed: ModelTurn) -> bool:
    if [c.name for c in plain.tool_calls] != [c.name for c in streamed.tool_calls]:
        return False
    for a, b in zip(plain.tool_calls, streamed.tool_calls, strict=True):
        if a.arguments is not None or b.arguments is not None:
            if a.arguments != b.arguments:
                return False
        elif a.arguments_raw != b.arguments_raw:
            return False
    return True


async def check_streaming(probe: Probe) -> Outcome:
    """The 'one call' request streamed: the tool-call deltas add up to the same call."""
    plain = probe.one_call
    if plain is None or not plain.tool_calls:
        return "skipped", NEEDS_CALL
    try:
        turn = await probe.ask("streaming", _conversation(ONE_CALL_PROMPT), OFFERED, stream=True)
    except ConfigError as exc:
        return "skipped", f"streaming is not available here: {_cut(str(exc), 160)}"
    except ProviderError as exc:
        if re.search(r"not (?:supported|implemented)", str(exc), re.IGNORECASE):
            return "skipped", f"streaming is not available here: {_cut(str(exc), 160)}"
        return "failed", f"the streamed answer failed: {_error_text(exc)}"
    if turn.ttft_ms is None:
        return "skipped", (
            "no streamed answer came back (no time to first token): the provider does not stream, or "
            "the server answered stream: true with a plain body"
        )
    if _same_calls(plain, turn):
        return "passed", f"streamed {_shown_calls(turn)}; first output after {turn.ttft_ms:.0f} ms"
    return "failed", f"streamed: {_shown_calls(turn)}; not streamed: {_shown_calls(plain)}"


async def check_no_leaked_tokens(probe: Probe) -> Outcome:
    """No special token or raw tool-call markup in any answer's text (no request of its own)."""
    if not probe.answers:
        return "skipped", "no answer to read"
    found: list[str] = []
    for answer in probe.answers:
        turn = answer.turn
        text = turn.text or ""
        marker = _raw_call_in_text(text)
        if marker is None and turn.text_call_format:
            marker = f"a {turn.text_call_format} call"
        if marker is not None:
            found.append(f"{marker} in the answer to '{answer.check}': {_excerpt(text, marker)}")
    if found:
        return "failed", f"{len(found)} of {len(probe.answers)} answer(s): {found[0]}"
    return "passed", f"{len(probe.answers)} answer(s), none with special tokens or raw call text"


async def check_usage(probe: Probe) -> Outcome:
    """Every (not streamed) answer reports its token usage (no request of its own)."""
    plain = [a for a in probe.answers if not a.streamed]
    if not plain:
        return "skipped", "no answer to read"
    missing = [
        a
        for a in plain
        if a.turn.usage is None or not (a.turn.usage.input_tokens or a.turn.usage.output_tokens)
    ]
    if missing:
        return (
            "failed",
            f"{len(missing)} of {len(plain)} answer(s) report no token usage (first: '{missing[0].check}')",
        )
    usage = plain[0].turn.usage
    assert usage is not None
    streamed = [a for a in probe.answers if a.streamed]
    note = ""
    if streamed and any(a.turn.usage is None for a in streamed):
        note = "; the streamed answer reported none (token counts of --stream runs read 0)"
    return (
        "passed",
        f"{len(plain)} answer(s); e.g. {usage.input_tokens} input + {usage.output_tokens} output "
        f"tokens{note}",
    )


def long_prompt(tokens: int) -> str:
    """About ``tokens`` tokens of filler: single letters, one token each in common tokenizers."""
    letters = " a b c d e f g h i j k l m n o p q r s t u v w x y z"
    repeats, rest = divmod(tokens, 26)
    return letters * repeats + letters[: 2 * rest]


def reported_limit(message: str) -> int | None:
    """The context window an overflow error names: the smallest token count in it."""
    numbers = [int(m.replace(",", "").replace("_", "")) for m in _LIMIT.findall(message)]
    numbers = [n for n in numbers if n > 0]
    return min(numbers) if numbers else None


async def check_context_limit(probe: Probe) -> Outcome:
    """A prompt longer than any context window: refused as a context-length error (and the limit
    read from the message), not as another error, and not answered (a silently cut prompt)."""
    tokens = probe.options.context_probe_tokens
    if tokens <= 0:
        return "skipped", "not probed (--context-probe 0)"
    messages = [Message.system(SYSTEM), Message.user(long_prompt(tokens) + "\n\nReply with the word OK.")]
    size = f"a ~{tokens:,}-token prompt"
    try:
        try:
            turn = await probe.ask("context_limit", messages, [], max_tokens=16, keep=False)
        except TransientProviderError as exc:
            if not _connection_dropped(exc):
                raise
            # A keep-alive connection a server dropped after an earlier failure (a broken stream)
            # is reset on reuse before the server sees the request: ask once more on a new one.
            size += f" (asked twice: the first connection was reset: {_cut(str(exc), 80)})"
            turn = await probe.ask("context_limit", messages, [], max_tokens=16, keep=False)
    except ContextLengthError as exc:
        probe.context_limit = reported_limit(str(exc))
        limit = f" (limit {probe.context_limit:,} tokens)" if probe.context_limit else " (no limit named)"
        return "passed", f"{size} was refused as a context-length error{limit}"
    except ProviderError as exc:
        return "failed", f"{size} was refused, but not as a context-length error: {_error_text(exc)}"
    used = f"; {turn.usage.input_tokens:,} input tokens reported" if turn.usage else ""
    return "failed", (
        f"{size} was answered ({_quoted(turn.text, 30)}{used}): the server cuts long prompts silently "
        "(e.g. Ollama's num_ctx), or its window is larger than the probe"
    )


def _connection_dropped(exc: TransientProviderError) -> bool:
    """The request failed on the connection itself (reset, closed), not with an answer."""
    text = str(exc).lower()
    return any(word in text for word in ("reset by peer", "disconnected", "connection closed", "broken pipe"))


async def check_latency(probe: Probe) -> Outcome:
    """The median request time, against a quarter of the case time limit (no request of its own)."""
    if not probe.latencies:
        return "skipped", "no answered request to time"
    median = statistics.median(probe.latencies)
    limit = probe.options.case_limit_s
    slowest = max(probe.latencies)
    text = f"median {median:.0f} ms over {len(probe.latencies)} request(s), slowest {slowest:.0f} ms"
    if median / 1000.0 > limit / 4:
        return (
            "failed",
            f"{text}: a case of four rounds would pass the {limit:g} s case limit (raise --case-timeout)",
        )
    return "passed", text


CHECKS: tuple[Check, ...] = (
    Check(
        "one_call",
        "one call",
        "every native-mode case that needs a call: calls the server does not decode score as 'answered "
        "without calling'",
        check_one_call,
    ),
    Check(
        "parallel_calls",
        "parallel calls",
        "parallel calls decoded as one: BFCL's parallel categories would score 0, and multi-call cases "
        "lose every call after the first",
        check_parallel_calls,
    ),
    Check(
        "tool_result_round_trip",
        "tool-result round trip",
        "every case past its first call: the next request is refused, so the case becomes an error "
        "record, not a verdict",
        check_tool_result_round_trip,
    ),
    Check(
        "reasoning_round_trip",
        "reasoning round trip",
        "multi-round cases of a reasoning model: the next round is refused (error records), or the model "
        "goes on without its reasoning (measured off-distribution)",
        check_reasoning_round_trip,
    ),
    Check(
        "tool_choice_required",
        "tool_choice required",
        "--tool-choice required runs: forced calls are not forced, so their figures are unforced ones",
        check_tool_choice_required,
    ),
    Check(
        "tool_choice_none",
        "tool_choice none",
        "--tool-choice none runs: calls the request forbade are made and scored",
        check_tool_choice_none,
    ),
    Check(
        "strict_schema",
        "strict schema",
        "strict-schema runs: enum, type and required violations the server should prevent are scored "
        "against the model",
        check_strict_schema,
    ),
    Check(
        "arguments_json",
        "arguments JSON",
        "cases whose calls take arguments: JSON the server broke scores as the model's malformed arguments",
        check_arguments_json,
    ),
    Check(
        "streaming",
        "streamed calls",
        "--stream runs: calls lost or broken in streamed answers score as model failures",
        check_streaming,
    ),
    Check(
        "no_leaked_tokens",
        "no leaked tokens",
        "native-mode cases: calls left in the text score as 'answered without calling'; leaked special "
        "tokens spoil answer-text scoring",
        check_no_leaked_tokens,
    ),
    Check(
        "usage",
        "usage reported",
        "token counts, cost estimates and --tpm pacing read 0 (verdicts unaffected)",
        check_usage,
    ),
    Check(
        "context_limit",
        "context limit",
        "long cases: an overflow not reported as one becomes retried errors or a fatal stop (not "
        "context_overflow); a silently cut prompt scores as the model's failure",
        check_context_limit,
    ),
    Check(
        "latency",
        "latency",
        "slow answers run into the case time limit: cases stop as timeouts, not verdicts",
        check_latency,
    ),
)
"""Every check, in the order they run (later checks read what earlier ones found)."""


async def _run_check(check: Check, probe: Probe) -> CheckResult:
    """One check; an endpoint failure or a budget spent is its result, never doctor's end."""
    before = probe.requests
    try:
        status, evidence = await check.run(probe)
    except BudgetSpent as exc:
        status, evidence = "skipped", str(exc)
    except FatalProviderError as exc:
        code = _STATUS.search(str(exc))
        if check.id == CHECKS[0].id and code is not None and code.group(1) in _STOP_AT_FIRST:
            raise FatalProviderError(f"{exc}; doctor checked nothing") from None
        status, evidence = "failed", _error_text(exc) + _hint(str(exc))
    except ProviderError as exc:
        status, evidence = "failed", _error_text(exc) + _hint(str(exc))
    except Exception as exc:  # noqa: BLE001 - a bug in one check must not lose the table
        status, evidence = "failed", f"internal error in the check: {_error_text(exc)}"
    result = CheckResult(check.id, check.name, status, evidence, check.corrupts, probe.requests - before)
    probe.results[check.id] = result
    return result


def doctor_model(provider: Provider, settings: GenerationSettings, options: DoctorOptions) -> Model:
    """``provider`` wrapped for doctor: no cache (the live endpoint is what is checked), no retries
    (every request counts against the budget; a transient failure is evidence), the run's pacing."""
    model_options = ModelOptions(
        retry=RetryPolicy(max_retries=0),
        limits=EndpointLimits(max_connections=options.max_connections, rpm=options.rpm),
        request_timeout_s=options.request_timeout_s,
        use_cache=False,
    )
    return Model(provider, settings, model_options, cache=None)


async def run_doctor(
    provider: Provider,
    settings: GenerationSettings | None = None,
    options: DoctorOptions | None = None,
    *,
    label: str | None = None,
    checks: Sequence[Check] = CHECKS,
) -> DoctorReport:
    """Run every check against ``provider`` and return the table.

    Args:
        settings: The generation settings of the requests (temperature, max tokens, reasoning
            effort...); each check sets ``tool_choice``, ``stream`` and ``parallel_tool_calls``.
        label: The model string shown in the report (default: the provider's own description).

    Raises:
        ConfigError: ``provider`` has no endpoint (a built-in agent).
        FatalProviderError: the first request was refused as unauthorised or not found.
    """
    if not provider.needs_network:
        raise ConfigError(
            f"doctor checks a model endpoint; {label or provider.name!r} has none (a built-in agent or "
            "a local model): give a provider:model string, e.g. vllm:MODEL or openai:MODEL@URL"
        )
    options = options or DoctorOptions()
    settings = settings or GenerationSettings()
    description = provider.describe()
    probe = Probe(doctor_model(provider, settings, options), settings, options, description)
    results = [await _run_check(check, probe) for check in checks]
    latency = statistics.median(probe.latencies) if probe.latencies else None
    return DoctorReport(
        model=label or _label(description, provider),
        provider=description,
        at=datetime.now(UTC).isoformat(timespec="seconds"),
        checks=results,
        requests=probe.requests,
        max_requests=options.max_requests,
        latency_ms_median=round(latency, 1) if latency is not None else None,
        context_limit_tokens=probe.context_limit,
    )


def _label(description: Mapping[str, Any], provider: Provider) -> str:
    name, model = str(description.get("provider") or provider.name), str(description.get("model") or "")
    return f"{name}:{model}" if model else name


# --- run --preflight -----------------------------------------------------------------------------


def check_preflight_applies(config: RunConfig) -> None:
    """Before a run folder exists: ``--preflight`` needs a model endpoint to check.

    Raises:
        ConfigError: an agent under test (``--agent``), a built-in agent or a local model.
    """
    if config.agent is not None:
        raise ConfigError(
            "--preflight checks a model endpoint; an agent under test (--agent) sends its own requests: "
            "run callbench doctor on the model behind it"
        )
    model = config.model
    if isinstance(model, Provider):
        needs_network = model.needs_network
    else:
        try:
            needs_network = make_provider(model).needs_network
        except Exception:  # noqa: BLE001 - a bad model string is prepare_run's one line
            return
    if not needs_network:
        raise ConfigError(
            f"--preflight checks a model endpoint; --model {model if isinstance(model, str) else model.name} "
            "has none (a built-in agent or a local model): leave --preflight out"
        )


def preflight_options(config: RunConfig) -> DoctorOptions:
    """Doctor's options from a run's: its pacing, request timeout and (shortest) case limit."""
    limits = [v for v in (config.case_timeouts or {}).values()]
    return DoctorOptions(
        case_limit_s=min(limits) if limits else DEFAULT_CASE_LIMIT_S,
        request_timeout_s=config.request_timeout_s or config.settings.timeout_s,
        rpm=config.rpm,
        max_connections=config.max_connections,
    )


async def run_preflight(run_dir: Path, header: RunHeader, model: Model, config: RunConfig) -> DoctorReport:
    """Run doctor against the run's model and keep its table in ``run.json`` (``options.preflight``;
    a resumed run's earlier tables move to ``options.preflight_earlier``)."""
    from callbench.harness.runfolder import write_header

    report = await run_doctor(model.provider, config.settings, preflight_options(config), label=header.model)
    earlier = header.options.get(PREFLIGHT_KEY)
    if earlier:
        header.options[EARLIER_KEY] = [*header.options.get(EARLIER_KEY, []), earlier]
    header.options[PREFLIGHT_KEY] = report.to_json()
    write_header(run_dir, header)
    return report


def stored_preflight(options: Mapping[str, Any]) -> DoctorReport | None:
    """The preflight table kept in a run header's ``options`` (``None`` when the run had none)."""
    data = options.get(PREFLIGHT_KEY)
    return DoctorReport.from_json(data) if isinstance(data, Mapping) else None
