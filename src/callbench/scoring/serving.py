"""Serving faults and limits read from a trace, told apart from the model's own failures.

A trace can show that what went wrong was the serving stack, or a limit of the run, rather than
the model's tool calling:

* ``serving_parse_suspected``: an answer without structured calls whose text holds a call in a
  known serialisation (``RoundInfo.text_call_format``, native mode): the server's tool-call parser
  probably failed. Calls taken from the text with ``--recover-text-calls`` are scored as calls and
  are no longer suspects.
* ``format_error``: prompt mode or a local checkpoint read call-like text it could not parse (the
  model's format failure; the text as received is on the round's ``raw_text``).
* ``output_truncated``: a round ended at the output token limit (``finish_reason`` ``length``, or
  a provider's equivalent).
* ``context_overflow``: the endpoint refused a request because the conversation exceeds the model's
  context window (``stop_reason`` ``context_overflow``).

These reasons are only ever added to a verdict that fails for its own reasons (a pass stays a pass,
with a warning); ``serving_parse_suspected`` takes the place of ``no_structured_call``, which it
explains. Summaries count them apart and give accuracy without the truncated and overflowed cases
beside the plain figure (:func:`serving_limited`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from callbench.types.trace import Trace
from callbench.types.verdict import Reason, Verdict

TRUNCATED_FINISH = frozenset({"length", "max_tokens", "max_output_tokens"})
"""``finish_reason`` values meaning "stopped at the output token limit" (OpenAI-compatible servers,
Anthropic, the Responses API's incomplete reason)."""
FORMAT_ERROR_FINISH = "format_error"
CONTEXT_OVERFLOW = "context_overflow"


@dataclass
class ServingFacts:
    """What one trace shows of serving faults and run limits (rounds are 1-based)."""

    text_calls: list[tuple[int, str]] = field(default_factory=list)
    """(round, serialisation) of answers whose text holds a call the server did not return as one."""
    recovered_calls: int = 0
    """Calls read from answer texts and scored as calls (``--recover-text-calls``)."""
    format_errors: list[int] = field(default_factory=list)
    truncated: list[int] = field(default_factory=list)
    context_overflow: int | None = None
    """The round the endpoint refused for its context window, if any."""

    @property
    def limited(self) -> bool:
        """The case met a limit of the run (output cut, or context full), not only the model's own choices."""
        return bool(self.truncated) or self.context_overflow is not None


def serving_facts(trace: Trace) -> ServingFacts:
    """Read :class:`ServingFacts` from a trace (slimmed records keep everything this reads)."""
    facts = ServingFacts()
    for info in trace.rounds:
        facts.recovered_calls += info.recovered_calls or 0
        if info.text_call_format and not info.recovered_calls:
            facts.text_calls.append((info.index, info.text_call_format))
        if info.finish_reason == FORMAT_ERROR_FINISH:
            facts.format_errors.append(info.index)
        elif info.finish_reason in TRUNCATED_FINISH:
            facts.truncated.append(info.index)
    if trace.stop_reason == CONTEXT_OVERFLOW:
        facts.context_overflow = trace.rounds[-1].index if trace.rounds else 1
    return facts


def serving_limited(trace: Trace) -> bool:
    """True when the case's output was cut at the token limit or its conversation overflowed the
    context window: such cases are left out of the "accuracy without serving limits" figure."""
    return serving_facts(trace).limited


def _rounds(indices: list[int]) -> str:
    label = "round" if len(indices) == 1 else "rounds"
    return f"{label} {', '.join(str(i) for i in indices)}"


def _text_call_message(facts: ServingFacts, any_call: bool) -> str:
    formats = ", ".join(sorted({fmt for _, fmt in facts.text_calls}))
    where = _rounds([r for r, _ in facts.text_calls])
    head = "no structured tool call, but the answer text" if not any_call else "the answer text"
    return (
        f"{head} of {where} holds a tool call in the {formats} serialisation that the server did not "
        "return as a call: its tool-call parser probably failed (--recover-text-calls scores such calls)"
    )


def apply_serving_reasons(
    reasons: list[Reason], trace: Trace, any_call: bool
) -> tuple[list[Reason], list[str]]:
    """The verdict's reasons with the serving reasons added, and warnings for a verdict that passed.

    Args:
        reasons: The reasons a scorer found (empty: the verdict passes, and stays passed).
        trace: The case's trace.
        any_call: Whether the trace holds any structured call.
    """
    facts = serving_facts(trace)
    messages: list[tuple[str, str]] = []
    if facts.context_overflow is not None:
        messages.append(
            (
                CONTEXT_OVERFLOW,
                f"round {facts.context_overflow} was refused: the conversation no longer fits the model's "
                "context window",
            )
        )
    if facts.truncated:
        cut = f"{_rounds(facts.truncated)} stopped at the output token limit: the answer was cut"
        messages.append(("output_truncated", cut))
    if facts.format_errors:
        where = _rounds(facts.format_errors)
        messages.append(("format_error", f"the text of {where} looks like a tool call but could not be read"))
    if facts.text_calls:
        messages.append(("serving_parse_suspected", _text_call_message(facts, any_call)))
    if not messages:
        return reasons, []
    if not reasons:  # never turn a pass into a failure: say it, do not score it
        return reasons, [f"{code}: {text}" for code, text in messages]
    # A run limit explains everything after it: first. A parse problem goes where the missing call is.
    front = [Reason(code=c, message=t) for c, t in messages if c in (CONTEXT_OVERFLOW, "output_truncated")]
    out = front + list(reasons)
    for code, text in messages:
        reason = Reason(code=code, message=text)
        place = next((i for i, r in enumerate(out) if r.code == "no_structured_call"), None)
        if code == "serving_parse_suspected" and place is not None:
            out[place] = reason  # the suspected parser failure explains the missing call
        elif code in ("serving_parse_suspected", "format_error"):
            out.insert(len(front) if place is None else place + 1, reason)
    return out, []


def with_serving_reasons(verdict: Verdict, trace: Trace) -> Verdict:
    """``verdict`` with the serving reasons of ``trace`` (for scorers outside the strict tiers,
    e.g. state-match): a refused or cut conversation is named, not left to read as a model failure."""
    if not verdict.applicable:
        return verdict
    reasons, warnings = apply_serving_reasons(list(verdict.reasons), trace, bool(trace.calls))
    if reasons == verdict.reasons and not warnings:
        return verdict
    return verdict.model_copy(update={"reasons": reasons, "warnings": [*verdict.warnings, *warnings]})
