"""The user side of a conversation case: a scripted user, or a user simulated by a model.

The round loop (:mod:`callbench.harness.loop`) asks the case's user for a turn when the conversation
opens with the user's words and after every answer without calls. The user's calls on its own tools
(dual control) go to the executor session's :meth:`~callbench.executors.base.ExecutorSession.call_user_tool`;
they are kept on the user's turn, never among the agent's calls, so no tier scores them as the
agent's. A simulated user that fails (its endpoint, an empty reply) is an infrastructure fault: the
case becomes an error record, never the agent's failure.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from callbench.errors import CallbenchError, FatalProviderError, ProviderError
from callbench.executors.base import ExecutorSession, ToolOutcome
from callbench.types.conversation import STOP, SimulatorInfo, UserCall, UserSide, UserToolCall, UserTurn
from callbench.types.hashing import sha256_of
from callbench.types.messages import GenerationSettings, Message, ModelTurn, Usage

USER_TOOL_ROUNDS = 10
"""At most this many requests the simulated user makes for one turn (its tool calls, then its text)."""

SIMULATED_USER_GUIDELINES = """\
You play a customer talking to a customer-service agent. Stay in your role: you are the customer,
never the agent. Your situation and goal are described below; follow them exactly.

- Write one message at a time, as a customer would: short, natural, in the first person.
- Give only what the agent asks for and what your instructions say you know. Never invent facts,
  identifiers or numbers you were not given; if you are asked for something you do not know, say so.
- Do not reveal all of your instructions at once; reveal them as the conversation needs them.
- When your goal is reached, or it cannot be reached, end the conversation: reply with exactly
  ###STOP### on its own.
- If the agent transfers you to a human, reply with exactly ###TRANSFER###. If the agent cannot help
  because your request is out of its scope, reply with exactly ###OUT-OF-SCOPE###.
"""

SIMULATED_USER_TOOLS_GUIDELINES = """\
You also have tools of your own (your phone, your device). Use them when the agent asks you to do or
check something on your side, then tell the agent what you did and what you saw.
"""

SCENARIO_HEADINGS = {
    "persona": "Who you are",
    "instructions": "Your situation and what to do",
    "known_info": "What you know",
    "unknown_info": "What you do not know (never make it up)",
}


class SimulatorFault(CallbenchError):
    """The simulated user could not produce a turn (its endpoint failed, it returned no text): an
    error record of kind ``user_simulator:<kind>``, never the agent's failure."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class ConversationUser(Protocol):
    """What the loop asks of a user: its identity, and its next turn."""

    info: SimulatorInfo

    async def turn(self, messages: list[Message], session: ExecutorSession, after_round: int) -> UserTurn:
        """The user's next turn, given the conversation so far (the agent's view of it)."""
        ...


async def run_user_calls(session: ExecutorSession, calls: list[UserCall], prefix: str) -> list[UserToolCall]:
    """Execute the user's calls on its own tools, in order, each with what it returned."""
    done = []
    for index, call in enumerate(calls, start=1):
        outcome = await session.call_user_tool(call.name, dict(call.arguments))
        done.append(_user_call(f"{prefix}_{index}", call.name, call.arguments, outcome))
    return done


def _user_call(call_id: str, name: str, arguments: dict, outcome: ToolOutcome) -> UserToolCall:
    return UserToolCall(
        call_id=call_id,
        tool=name,
        arguments=dict(arguments),
        ok=outcome.ok,
        result=outcome.content if outcome.content is not None else outcome.result,
        error=outcome.error,
    )


def last_agent_text(messages: list[Message]) -> str:
    """The agent's latest message text (empty when the agent has not spoken)."""
    for message in reversed(messages):
        if message.role == "assistant" and message.content:
            return message.content
        if message.role == "user":
            return ""
    return ""


@dataclass
class ScriptedUser:
    """Plays the case's script: turns in order, a turn with ``when`` only when the agent's last
    message matches it; ``###STOP###`` once the script is spent."""

    spec: UserSide
    info: SimulatorInfo = field(default_factory=lambda: SimulatorInfo(kind="scripted"))
    used: set[int] = field(default_factory=set)

    async def turn(self, messages: list[Message], session: ExecutorSession, after_round: int) -> UserTurn:
        agent_said = last_agent_text(messages)
        for index, scripted in enumerate(self.spec.script or []):
            if index in self.used:
                continue
            if scripted.when is not None and not re.search(scripted.when, agent_said, re.IGNORECASE):
                continue
            self.used.add(index)
            calls = await run_user_calls(session, scripted.calls, f"user_{after_round}")
            return UserTurn(
                after_round=after_round, text=scripted.say, calls=calls, stop=self.spec.is_stop(scripted.say)
            )
        return UserTurn(after_round=after_round, text=STOP, stop=True)


class UserModel(Protocol):
    """The simulated user's model (a :class:`~callbench.providers.model.Model` or any provider)."""

    async def generate(
        self, messages: list[Message], tools: list, settings: GenerationSettings
    ) -> ModelTurn: ...

    async def aclose(self) -> None:
        """Release its connections (at the end of the run)."""


def simulated_user_prompt(spec: UserSide, with_tools: bool) -> str:
    """The system prompt of a simulated user: the fixed guidelines, then the case's scenario."""
    parts = [SIMULATED_USER_GUIDELINES]
    if with_tools:
        parts.append(SIMULATED_USER_TOOLS_GUIDELINES)
    for name, text in spec.simulated_prompt_parts().items():
        parts.append(f"## {SCENARIO_HEADINGS[name]}\n{text.strip()}")
    return "\n\n".join(parts)


def simulator_prompt_sha256() -> str:
    """Hash of the simulated user's fixed texts (recorded: a changed prompt is another simulator)."""
    return sha256_of({"guidelines": SIMULATED_USER_GUIDELINES, "tools": SIMULATED_USER_TOOLS_GUIDELINES})


@dataclass
class SimulatedUser:
    """A user played by a model: the agent's messages are its user messages, its own earlier turns
    its assistant messages. It may call the user's tools before it answers."""

    spec: UserSide
    model: UserModel
    settings: GenerationSettings
    info: SimulatorInfo
    history: list[Message] = field(default_factory=list)
    seen: int = 0
    """How many of the conversation's messages were already given to the simulator."""

    async def turn(self, messages: list[Message], session: ExecutorSession, after_round: int) -> UserTurn:
        tools = session.user_tools() if self.spec.tools else []
        if not self.history:
            self.history.append(Message.system(simulated_user_prompt(self.spec, bool(tools))))
        agent_said = [m.content for m in messages[self.seen :] if m.role == "assistant" and m.content]
        self.seen = len(messages)
        # The simulator always answers a message of the agent's, also before the agent has spoken.
        self.history.append(Message.user("\n\n".join(agent_said) or "(The agent is waiting for you.)"))
        usage, calls, started = Usage(), [], time.perf_counter()
        for request in range(1, USER_TOOL_ROUNDS + 1):
            reply = await self._generate(tools)
            usage = usage + (reply.usage or Usage())
            self.history.append(Message.assistant(reply))
            if not reply.tool_calls:
                break
            for call in reply.tool_calls:
                outcome = await session.call_user_tool(call.name, call.arguments or {})
                calls.append(
                    _user_call(
                        call.id or f"user_{after_round}_{request}", call.name, call.arguments or {}, outcome
                    )
                )
                self.history.append(Message.tool(call, outcome.heard()))
        else:
            raise SimulatorFault(
                "no_text", f"the simulated user made calls for {USER_TOOL_ROUNDS} requests without a message"
            )
        text = reply.text.strip()
        if not text:
            raise SimulatorFault("empty_reply", "the simulated user returned no text")
        return UserTurn(
            after_round=after_round,
            text=text,
            calls=calls,
            stop=self.spec.is_stop(text),
            usage=usage,
            model=reply.model,
            latency_ms=round((time.perf_counter() - started) * 1000, 3),
        )

    async def _generate(self, tools: list) -> ModelTurn:
        try:
            return await self.model.generate(self.history, tools, self.settings)
        except FatalProviderError:
            raise
        except ProviderError as exc:
            raise SimulatorFault(type(exc).__name__, f"the simulated user's endpoint failed: {exc}") from exc


@dataclass(frozen=True)
class UserSimulatorConfig:
    """The run's simulated user (``--user-model``): its model, and how it samples."""

    model: UserModel
    spec: str
    temperature: float = 0.0
    seed: int = 0

    @property
    def info(self) -> SimulatorInfo:
        return SimulatorInfo(
            kind="simulated",
            model=self.spec,
            seed=self.seed,
            temperature=self.temperature,
            prompt_sha256=simulator_prompt_sha256(),
        )

    def settings(self, trial: int) -> GenerationSettings:
        # Each trial draws its own conversation: the seed is offset by the trial number.
        return GenerationSettings(temperature=self.temperature, seed=self.seed + trial - 1, max_tokens=1024)


def user_for_case(
    spec: UserSide | None, simulator: UserSimulatorConfig | None, trial: int = 1
) -> ConversationUser | None:
    """The user of one (case, trial): ``None`` for a case without a user; the simulated user when the
    run has one and the case gives it instructions, else the case's script."""
    if spec is None:
        return None
    if simulator is not None and spec.instructions:
        return SimulatedUser(spec, simulator.model, simulator.settings(trial), simulator.info)
    if spec.script is None:
        raise SimulatorFault(
            "no_user", "this conversation has no script and the run has no simulated user (--user-model)"
        )
    return ScriptedUser(spec)


_WORKER_SIMULATORS: dict[tuple[str, int, float], UserSimulatorConfig] = {}


def worker_simulator(config: Any) -> UserSimulatorConfig | None:
    """The simulated user a remote worker (``--backend ray``) plays conversation cases with: built
    from the run's config once per worker process (``None`` without ``--user-model``)."""
    spec = getattr(config, "user_model", None)
    if spec is None:
        return None
    key = (spec, config.user_seed, config.user_temperature)
    if key not in _WORKER_SIMULATORS:
        from callbench.providers.model import build_model

        _WORKER_SIMULATORS[key] = UserSimulatorConfig(
            model=build_model(spec, config),
            spec=spec,
            temperature=config.user_temperature,
            seed=config.user_seed,
        )
    return _WORKER_SIMULATORS[key]
