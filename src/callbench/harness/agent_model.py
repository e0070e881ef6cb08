"""The agent's model in an agent-under-test run: the proxy set up, each case's requests turned into its
rounds and usage, and whose fault a failed request is.

``--agent`` with ``--agent-model-proxy URL``, ``--record DIR`` or ``--replay DIR`` turns the proxy on
(:mod:`callbench.providers.model_proxy`): each case's agent gets a base URL of its own, its requests
are forwarded (and recorded into ``DIR/model/``) or answered from ``DIR/model/``. Here:

* :func:`open_agent_model` checks the options and opens the recording before anything runs (a missing
  or corrupt one is one line); the suites' tools are taped into the same folder as in any run
  (:mod:`callbench.harness.cassettes`), or left out when they have nothing to tape
  (:func:`bind_tools`);
* :func:`apply_exchanges` makes the case's rounds the agent's model requests (``agent_request: true``,
  with tokens, latency, model and finish reason as answered), each holding the calls that followed
  it, and sums the tokens into ``trace.usage``: the summary's usage figures and cost read them as they
  read a model run's;
* :func:`model_fault` says when the case is an error record rather than a score: a request the
  recording lacks under ``--replay-miss strict`` (``cassette_miss``, always), or an upstream fault
  (unreachable, timed out, HTTP 5xx or 429, a refused key) after which the agent ended without an
  answer (``AgentModelUnavailable``). An agent that answered despite its model's failures is scored
  on what it did: it recovered, or chose to answer.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from callbench.errors import ConfigError, ToolServerFault, UserError
from callbench.harness.config import RunConfig
from callbench.harness.runfolder import read_header, write_header
from callbench.providers.agent_under_test import AgentRunner, PythonAgent
from callbench.providers.model_proxy import (
    DEFAULT_UPSTREAMS,
    KEY_VARIABLES,
    PLACEHOLDER_KEY,
    AgentModelProxy,
    AgentModelUnavailable,
    CaseModelRoute,
    ModelExchange,
    own_keys,
)
from callbench.providers.model_tape import FOLDER, MissPolicy, ModelTapes
from callbench.secrets import blank_url_credentials, register_url_credentials
from callbench.suites.suite import Suite
from callbench.types.messages import Usage
from callbench.types.records import RunHeader
from callbench.types.trace import RoundInfo, Trace, TraceCall

if TYPE_CHECKING:
    from callbench.harness.cassettes import RunCassette

OPTION_KEY = "agent_model"
"""``run.json``: ``options.agent_model``."""
UPSTREAM_VARIABLES = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}
"""Where the upstream endpoint is read from when ``--agent-model-proxy`` does not name it."""


@dataclass
class AgentModelSetup:
    """The proxy of one run: where it forwards, and the recording it writes or reads."""

    upstreams: dict[str, str]
    tapes: ModelTapes | None
    flag: str
    hash_at_start: str | None = None

    @property
    def mode(self) -> str:
        return self.tapes.mode if self.tapes is not None else "live"

    def describe(self) -> dict[str, Any]:
        """What ``run.json`` keeps (``options.agent_model``); URLs with their credentials blanked."""
        out: dict[str, Any] = {"mode": self.mode}
        if self.tapes is not None:
            out["folder"] = str(self.tapes.folder.resolve())
        if self.tapes is not None and self.tapes.mode == "replay":
            out["miss"] = self.tapes.miss
            out["hash"] = self.hash_at_start
        if self.tapes is None or self.tapes.mode == "record" or self.tapes.miss == "live":
            out["upstreams"] = {api: blank_url_credentials(url) for api, url in self.upstreams.items()}
        return out

    def note(self, header: RunHeader, run_dir: Path | None = None) -> None:
        """Put the proxy in ``header.options``; a resumed replay whose recording changed is refused."""
        before = header.options.get(OPTION_KEY)
        if run_dir is not None and isinstance(before, dict) and before.get("mode") == self.mode:
            known = before.get("hash_at_end") or before.get("hash")
            if self.mode == "replay" and known and known != self.hash_at_start:
                assert self.tapes is not None
                raise UserError(
                    f"{run_dir}: cannot resume: the recording of the agent's model {self.tapes.folder} "
                    f"changed since the run (hash {str(known)[:12]}…, now {str(self.hash_at_start)[:12]}…); "
                    "start a new run"
                )
            return
        header.options[OPTION_KEY] = self.describe()

    def check_agent(self, agent: AgentRunner) -> None:
        """A ``py:`` agent shares callbench's process, where one ``OPENAI_BASE_URL`` cannot name each
        case's route: it must take the route as a parameter (one line before the run otherwise)."""
        if isinstance(agent, PythonAgent) and not (agent.takes("model_url") or agent.takes("anthropic_url")):
            raise ConfigError(
                f"--agent {agent.spec!r} with {self.flag}: the function must take model_url= (its "
                "case's OpenAI-compatible base URL; anthropic_url= for Anthropic's) and give it to its "
                "model client: a py: agent runs in callbench's process, where OPENAI_BASE_URL cannot "
                "differ per case"
            )

    def finish(self, run_dir: Path) -> None:
        """When the run ends: the index absorbs the journal, and ``run.json`` gets the recording's hash
        (``hash`` for a recording, ``hash_at_end`` when a replay's live misses added to it)."""
        tapes = self.tapes
        if tapes is None or not (tapes.mode == "record" or tapes.added):
            return
        tapes.write_index()
        header = read_header(run_dir)
        entry = dict(header.options.get(OPTION_KEY) or self.describe())
        entry["hash" if tapes.mode == "record" else "hash_at_end"] = tapes.hash
        header.options[OPTION_KEY] = entry
        write_header(run_dir, header)


def open_agent_model(config: RunConfig) -> AgentModelSetup | None:
    """The agent's model proxy of the run (``None``: off), its recording opened; one line for an
    unusable folder. (``--record``/``--replay`` themselves were checked when the tool cassette of the
    same folder was opened, :func:`callbench.harness.cassettes.open_run_cassette`.)"""
    taped = config.record is not None or config.replay is not None
    if not taped and not config.agent_model_proxy:
        return None
    if config.backend != "local":
        raise ConfigError("the agent's model proxy runs in this process: not with --backend ray")
    tapes: ModelTapes | None = None
    flag = "--agent-model-proxy"
    if config.record is not None:
        tapes, flag = ModelTapes.for_record(Path(config.record)), f"--record {config.record}"
    elif config.replay is not None:
        miss: MissPolicy = "live" if config.replay_miss == "live" else "strict"  # model-visible: strict
        tapes, flag = ModelTapes.for_replay(Path(config.replay), miss), f"--replay {config.replay}"
    setup = AgentModelSetup(upstreams(config.agent_model_proxy), tapes, flag)
    setup.hash_at_start = tapes.hash if tapes is not None else None
    return setup


def bind_tools(
    cassette: RunCassette, suites: list[Suite], executor: Any, setup: AgentModelSetup | None
) -> RunCassette | None:
    """Tape the suites' tool traffic as any run does; when the agent's model is what is recorded and
    the suites have nothing of their own to tape (synthetic tools, ``--executor``), the tool cassette
    is left out (``None``) instead of refusing the run, its folder still made a cassette (an empty
    index) so that the recording replays."""
    if setup is None or setup.tapes is None:
        cassette.bind(suites, executor)
        return cassette
    try:
        cassette.bind(suites, executor)
    except ConfigError:
        if cassette.mode == "record":
            cassette.cassette.write_index()
        return None
    return cassette


def upstreams(given: Mapping[str, str]) -> dict[str, str]:
    """Where each API's requests go: ``--agent-model-proxy``, else ``OPENAI_BASE_URL`` /
    ``ANTHROPIC_BASE_URL`` in callbench's environment, else the vendors' endpoints."""
    out = {}
    for api, default in DEFAULT_UPSTREAMS.items():
        url = given.get(api) or os.environ.get(UPSTREAM_VARIABLES[api]) or default
        register_url_credentials(url)
        out[api] = url.rstrip("/")
    return out


@asynccontextmanager
async def model_proxy(setup: AgentModelSetup | None) -> AsyncIterator[AgentModelProxy | None]:
    """The run's proxy, serving while the cases run (``None`` when it is off)."""
    if setup is None:
        yield None
        return
    keys = own_keys()  # before the placeholders below
    # An agent's SDK that insists on a key starts (a py: agent shares this process's environment; a
    # cmd: agent inherits it): the proxy puts callbench's key, if any, in the placeholder's place.
    added = [name for name in KEY_VARIABLES.values() if not os.environ.get(name)]
    for name in added:
        os.environ[name] = PLACEHOLDER_KEY
    try:
        async with AgentModelProxy(setup.upstreams, setup.tapes, keys=keys) as proxy:
            yield proxy
    finally:
        for name in added:
            if os.environ.get(name) == PLACEHOLDER_KEY:
                del os.environ[name]


def open_route(
    proxy: AgentModelProxy, case_key: str, trial: int, placeholders: Mapping[str, str]
) -> CaseModelRoute:
    """The case's route, with its per-case texts (``{workdir}``...) named for matching and tapes."""
    route = proxy.open(case_key, trial)
    pairs = [(text, name) for name, text in placeholders.items() if text]
    for text, name in list(pairs):
        real = os.path.realpath(text) if text.startswith("/") else text
        if real != text:
            pairs.append((real, name))
    route.name_placeholders(pairs)
    return route


# --- the record --------------------------------------------------------------------------------


def apply_exchanges(trace: Trace, route: CaseModelRoute, limits: Mapping[str, int]) -> bool:
    """Make the case's rounds its agent's answered model requests, with the calls that followed each,
    and ``trace.usage`` their tokens; ``False`` (rounds left to the caller) when none was answered.
    The proxy's account of the case goes in ``trace.agent.details["model"]`` either way."""
    answered = note_model_details(trace, route)
    if not answered:
        return False
    trace.adopt_rounds(request_rounds(answered, trace.calls), limits["reply"])
    return True


def note_model_details(trace: Trace, route: CaseModelRoute) -> list[ModelExchange]:
    """Put the proxy's account of the case in ``trace.agent.details["model"]`` (requests, answered and
    replayed ones, upstream faults, misses, the tape); return the answered requests, in order."""
    answered = [x for x in route.exchanges if x.answered]
    details: dict[str, Any] = {"requests": len(route.exchanges), "answered": len(answered)}
    if any(x.replayed for x in route.exchanges):
        details["replayed"] = sum(x.replayed for x in route.exchanges)
    if route.upstream_faults:
        details["upstream_faults"] = [x.describe() for x in route.upstream_faults]
    if route.misses:
        details["misses"] = [x.describe() for x in route.misses]
    if route.tape_hash:
        details["tape"] = route.tape_hash
    if trace.agent is not None:
        trace.agent.details["model"] = details
    return answered


def request_rounds(exchanges: list[ModelExchange], calls: list[TraceCall]) -> list[RoundInfo]:
    """One round per answered model request (``agent_request``: tokens, latency, model, finish reason,
    its text whole), each holding the calls that arrived after it and before the next one; calls made
    before the first request go in a reconstructed round ahead of them. The caller numbers the rounds,
    sets each call's round and caps the texts."""
    rounds: list[RoundInfo] = []
    for exchange in exchanges:
        facts = exchange.facts
        info = RoundInfo(index=len(rounds) + 1, started_at=exchange.started_at, agent_request=True)
        info.latency_ms = exchange.latency_ms
        info.model = facts.model
        info.finish_reason = facts.finish_reason
        if exchange.status is not None and exchange.status >= 400:
            info.finish_reason = f"http_{exchange.status}"
        if facts.has_usage:
            info.usage = Usage(
                input_tokens=facts.input_tokens,
                output_tokens=facts.output_tokens,
                reasoning_tokens=facts.reasoning_tokens,
                cached_tokens=facts.cached_tokens,
            )
        if exchange.stream:
            info.ttft_ms = exchange.ttft_ms
        info.text = facts.text
        rounds.append(info)
    starts = [x.started_at for x in exchanges]
    lead: RoundInfo | None = None
    for call in calls:  # a call follows the last request the agent sent before it
        started = call.started_at or 0.0
        after = [i for i, start in enumerate(starts) if start <= started]
        if after:
            target = rounds[after[-1]]
        else:  # a call before the agent's first answered request
            if lead is None:
                lead = RoundInfo(index=0, started_at=started, reconstructed=True)
            target = lead
        target.call_ids.append(call.call_id)
    if lead is not None:
        rounds.insert(0, lead)
    return rounds


def model_fault(trace: Trace, route: CaseModelRoute) -> Exception | None:
    """What makes the case an error record rather than a score (``None``: it is scored)."""
    if route.misses:
        first = route.misses[0]
        return ToolServerFault(
            "cassette_miss",
            f"{route.case_key}: the agent's model request {first.seq + 1} is not in the recording "
            f"({first.message}); the model was not asked (--replay-miss strict; record the case again "
            f"with --record, or --replay-miss live)",
        )
    faults = route.upstream_faults
    outcome = trace.agent.outcome if trace.agent is not None else "answer"
    if faults and outcome != "answer":
        first = faults[0]
        times = "once" if len(faults) == 1 else f"{len(faults)} times"
        return AgentModelUnavailable(
            f"the agent's model endpoint failed {times} (request {first.seq + 1}: {first.message}) and the "
            f"agent then ended with {outcome}: the endpoint's failure, not the agent's"
        )
    return None


__all__ = [
    "FOLDER",
    "OPTION_KEY",
    "AgentModelSetup",
    "apply_exchanges",
    "bind_tools",
    "model_fault",
    "model_proxy",
    "open_agent_model",
    "open_route",
]
