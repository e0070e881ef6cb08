"""The audit judge: an LLM, declared by the user, that decides the simulator checks the rules cannot.

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
"""

from __future__ import annotations

import asyncio
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

PROMPT_HASH = sha256_of({"audit": SYSTEM})
"""Recorded with every judged finding; changing the prompt changes it (and misses the cache)."""

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
            "prompt_hash": PROMPT_HASH,
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


class AuditJudge:
    """The audit judge over any provider (anything with ``async generate(messages, tools, settings)``)."""

    def __init__(self, provider: Any, *, label: str, cache_folder: Path | None = None) -> None:
        self.provider = provider
        self.label = label
        self.cache = JudgeCache(cache_folder, CACHE_FILE)
        self._inflight: dict[str, asyncio.Task[Finding]] = {}

    def key(self, text: str) -> str:
        return sha256_of({"judge": self.label, "prompt": PROMPT_HASH, "input": text})

    def lookup(self, text: str) -> Finding | None:
        """A cached finding for this input, without asking."""
        cached = self.cache.get(self.key(text))
        return None if cached is None else finding_of(cached)

    async def ask(self, text: str) -> Finding:
        """The finding for this input: cached, or asked once (concurrent askers share the request). A
        provider outage raises (the scorer's record then becomes an error record)."""
        key = self.key(text)
        cached = self.lookup(text)
        if cached is not None:
            return cached
        task = self._inflight.get(key)
        if task is None:
            task = asyncio.ensure_future(self._request(key, text))
            self._inflight[key] = task
            task.add_done_callback(lambda _: self._inflight.pop(key, None))
        return await task

    async def _request(self, key: str, text: str) -> Finding:
        turn = await self.provider.generate([Message.system(SYSTEM), Message.user(text)], [], SETTINGS)
        reply = parse_json_object(turn.text)
        finding = finding_of(reply)
        if finding.parsed:  # an unparsable reply is not cached: a later scoring asks again
            self.cache.put(key, reply)
        return finding


_SHARED: dict[tuple[str, str], AuditJudge] = {}


def shared_judge(spec: str, folder: str | None) -> AuditJudge:
    """The audit judge for a ``provider:model`` string and cache folder, one per process."""
    key = (spec, str(Path(folder).resolve()) if folder else "")
    judge = _SHARED.get(key)
    if judge is None:
        from callbench.providers.model import Model, make_provider  # lazy: the catalog imports scorers

        # The Model wrapper adds retries and rate limits, as for the agent's own model.
        judge = AuditJudge(
            Model(make_provider(spec)), label=spec, cache_folder=Path(folder) if folder else None
        )
        _SHARED[key] = judge
    return judge
