"""τ²'s judges, declared by the user: the audit judge, which decides the simulator checks the rules
cannot, and the natural-language assertion judge (``--option nl_judge=PROVIDER:MODEL``), which says
whether each of a task's natural-language assertions holds of the conversation.

The rules of :mod:`callbench.benchmarks.tau2.audit` decide what a trajectory shows literally (a stop
before the write, an identifier nobody gave, a value only the instructions held). Whether a simulated
user *contradicted its instructions* or *revealed what its instructions say it does not know* is a
question about meaning; with ``--option audit_judge=PROVIDER:MODEL`` a judge answers it for every
failed conversation of a simulated user that no rule charged to the user. Never otherwise: a
scripted user follows its script, and a passed conversation has nothing to excuse.

Every verdict is cached under a hash of the judge model, the prompt and the exact inputs (in memory,
and in ``audit_judge_cache=DIR/tau2-audit-judge.jsonl`` when given), so re-scoring asks nothing
twice and ``callbench score`` reuses verdicts offline. The judge model and prompt hash are recorded
with each verdict. A reply that is not the JSON asked for finds no fault and is recorded as
unparsable (the figures count such replies, so a broken judge shows); a judge outage makes the
record an error record, never the agent's failure.

The NL-assertion judge is asked about every finished conversation of a task that has assertions
(``evaluation_criteria.nl_assertions``), once per conversation, for all its assertions at once. Its
answers enter the reward only where the task's reward basis names ``NL_ASSERTION`` (as τ² does); they
are always recorded (``details.nl_assertions``) and set beside the deterministic reward as a judge
pair (``details.judge_pair``, which ``callbench audit-judge`` reads). A reply that does not give one
boolean per assertion is unparsable: for a task whose reward needs it, the record becomes an error
record (the reward cannot be computed), never the agent's failure; otherwise it is recorded as such.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from callbench.benchmarks.tau2.audit import SimulatorFault
from callbench.plugin import (
    Case,
    GenerationSettings,
    JudgeCache,
    Message,
    parse_json_object,
    sha256_of,
)

SYSTEM = """You audit the customer side of a customer-service conversation. The customer was played by
a language model that was given the instructions shown. Judge only the customer's messages, never
the agent's work, and decide two things:
1. contradicted_instructions: the customer said or did something its instructions rule out: asked for
   another outcome than the one it was told to seek, gave up or changed a goal the instructions fix,
   accepted what it was told to refuse, or stated facts that contradict its instructions.
2. revealed_unknown_information: the customer stated information that its instructions say it does
   not know or does not have.
Answer false when the conversation does not clearly show the fault.
Reply with one JSON object only:
{"contradicted_instructions": true or false, "revealed_unknown_information": true or false,
 "reason": "<one sentence naming the message>"}"""


CHECKS = ("contradicted_instructions", "revealed_unknown_information")
SETTINGS = GenerationSettings(temperature=0.0, max_tokens=400, tool_choice="none")
CACHE_FILE = "tau2-audit-judge.jsonl"


@dataclass(frozen=True)
class Finding:
    """One judged conversation: the faults found (possibly none), or an unparsable reply."""

    faults: tuple[SimulatorFault, ...]
    parsed: bool
    reason: str

    def as_dict(self, judge: AuditJudge) -> dict[str, Any]:
        return {
            "judge_model": judge.label,
            "prompt_hash": judge.prompt_hash,
            "parsed": self.parsed,
            "faults": [f.rule for f in self.faults],
            "reason": self.reason,
        }


def question(case: Case, trajectory: list[dict[str, Any]]) -> str:
    """The judge's input: the user's instructions, what it does not know, and the conversation's text."""
    user = case.user
    parts = [
        "Customer's instructions:\n" + ((user.instructions or "").strip() if user else ""),
        "What the instructions say the customer does not know:\n"
        + (((user.unknown_info or "").strip() or "(nothing stated)") if user else "(nothing stated)"),
        "Conversation:",
    ]
    for message in trajectory:
        text = (message.get("content") or "").strip()
        if not text or message["role"] not in ("user", "assistant"):
            continue
        parts.append(f"{'customer' if message['role'] == 'user' else 'agent'}: {text}")
    return "\n\n".join(parts[:3]) + "\n" + "\n".join(parts[3:])


def finding_of(reply: dict[str, Any] | None) -> Finding:
    """What a parsed reply says (``None``, or a reply without the two booleans: unparsable)."""
    if reply is None or not all(isinstance(reply.get(check), bool) for check in CHECKS):
        return Finding((), False, "the judge's reply is not the JSON object asked for")
    reason = str(reply.get("reason") or "").strip()
    faults = tuple(
        SimulatorFault(check, f"(audit judge) {reason or check.replace('_', ' ')}")
        for check in CHECKS
        if reply[check]
    )
    return Finding(faults, True, reason)


class JsonJudge:
    """A judge over any provider (anything with ``async generate(messages, tools, settings)``) that
    answers one JSON object per input, under a fixed system prompt; ``accepts`` says whether a parsed
    reply is the one asked for. Accepted replies are cached (an unparsable one is asked again later)."""

    def __init__(
        self,
        provider: Any,
        *,
        label: str,
        system: str,
        cache_file: str,
        accepts: Callable[[dict[str, Any]], bool],
        cache_folder: Path | None = None,
    ) -> None:
        self.provider = provider
        self.label = label
        self.system = system
        self.prompt_hash = sha256_of({"system": system})
        self.accepts = accepts
        self.cache = JudgeCache(cache_folder, cache_file)
        self._inflight: dict[str, asyncio.Task[dict[str, Any] | None]] = {}

    def key(self, text: str) -> str:
        return sha256_of({"judge": self.label, "prompt": self.prompt_hash, "input": text})

    def lookup(self, text: str) -> dict[str, Any] | None:
        """The cached reply for this input, without asking."""
        cached = self.cache.get(self.key(text))
        return cached if isinstance(cached, dict) else None

    async def ask(self, text: str) -> dict[str, Any] | None:
        """The reply for this input (``None``: not the JSON asked for): cached, or asked once
        (concurrent askers share the request). A provider outage raises (the scorer's record then
        becomes an error record)."""
        cached = self.lookup(text)
        if cached is not None:
            return cached
        key = self.key(text)
        task = self._inflight.get(key)
        if task is None:
            task = asyncio.ensure_future(self._request(key, text))
            self._inflight[key] = task
            task.add_done_callback(lambda _: self._inflight.pop(key, None))
        return await task

    async def _request(self, key: str, text: str) -> dict[str, Any] | None:
        turn = await self.provider.generate([Message.system(self.system), Message.user(text)], [], SETTINGS)
        reply = parse_json_object(turn.text)
        if reply is None or not self.accepts(reply):
            return None
        self.cache.put(key, reply)
        return reply


class AuditJudge(JsonJudge):
    """The audit judge (:data:`SYSTEM`), its replies read as :class:`Finding` s."""

    def __init__(self, provider: Any, *, label: str, cache_folder: Path | None = None) -> None:
        super().__init__(
            provider,
            label=label,
            system=SYSTEM,
            cache_file=CACHE_FILE,
            accepts=lambda reply: finding_of(reply).parsed,
            cache_folder=cache_folder,
        )

    def find(self, reply: dict[str, Any] | None) -> Finding:
        return finding_of(reply)


NL_SYSTEM = """You check a customer-service conversation against a list of assertions about what the
agent did or said. For each assertion, in order, decide whether the conversation shows it to be true.
Judge only what the conversation shows; an assertion the conversation does not clearly support is not
met. Reply with one JSON object only:
{"assertions": [{"met": true or false, "reason": "<one sentence>"}, ...]} with one entry per assertion."""

NL_CACHE_FILE = "tau2-nl-judge.jsonl"


def nl_question(trajectory: list[dict[str, Any]], assertions: list[str]) -> str:
    """The NL judge's input: the conversation's text and the numbered assertions."""
    lines = ["Conversation:"]
    for message in trajectory:
        text = (message.get("content") or "").strip()
        if text and message["role"] in ("user", "assistant"):
            lines.append(f"{'customer' if message['role'] == 'user' else 'agent'}: {text}")
    lines.append("\nAssertions:")
    lines += [f"{n}. {assertion}" for n, assertion in enumerate(assertions, 1)]
    return "\n".join(lines)


def nl_verdicts(reply: dict[str, Any] | None, count: int) -> list[bool] | None:
    """One boolean per assertion from a reply (``None``: not one ``met`` boolean per assertion)."""
    items = reply.get("assertions") if isinstance(reply, dict) else None
    if not isinstance(items, list) or len(items) != count:
        return None
    met = [item.get("met") if isinstance(item, dict) else None for item in items]
    return met if all(isinstance(m, bool) for m in met) else None  # type: ignore[return-value]


class NLJudge(JsonJudge):
    """The natural-language assertion judge (:data:`NL_SYSTEM`)."""

    def __init__(self, provider: Any, *, label: str, cache_folder: Path | None = None) -> None:
        super().__init__(
            provider,
            label=label,
            system=NL_SYSTEM,
            cache_file=NL_CACHE_FILE,
            accepts=lambda reply: isinstance(reply.get("assertions"), list),
            cache_folder=cache_folder,
        )


_SHARED: dict[tuple[str, str, str], JsonJudge] = {}


def shared_judge(spec: str, folder: str | None, kind: type[JsonJudge] = AuditJudge) -> Any:
    """The judge of ``kind`` (:class:`AuditJudge` or :class:`NLJudge`) for a ``provider:model`` string
    and cache folder, one per process."""
    key = (kind.__name__, spec, str(Path(folder).resolve()) if folder else "")
    judge = _SHARED.get(key)
    if judge is None:
        from callbench.providers.model import Model, make_provider  # lazy: the catalog imports scorers

        # The Model wrapper adds retries and rate limits, as for the agent's own model.
        cache = Path(folder) if folder else None
        judge = kind(Model(make_provider(spec)), label=spec, cache_folder=cache)  # type: ignore[call-arg]
        _SHARED[key] = judge
    return judge
