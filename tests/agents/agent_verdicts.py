"""The verdict-equality comparison between callbench's own loop and an example agent.

Shared by ``tests/agents/test_example_agents_verdicts.py`` (a covering slice of genomics, every
starter case) and ``bench/example_agents_verdicts.py`` (every case of both suites). See the test
module's docstring for what is compared and why the Agents SDK's pre-empted calls are an exception.

Both runs play the same script: a local OpenAI-compatible server (``ProtocolServer``) whose
responder plays :data:`PLAYER` from the conversation it is sent. Needs ``tests/helpers`` on
``sys.path`` (pytest's ``pythonpath`` does it; the bench script inserts it).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from protocol_server import ProtocolServer
from scripted_responder import ScriptedResponder

import callbench
from callbench.harness.engine import score_case
from callbench.harness.modes import CONTINUATION_GUIDANCE
from callbench.harness.prepare import build_scorers
from callbench.suites.suite import Suite
from callbench.types.records import CaseRecord
from callbench.types.trace import Trace

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "agents"
AGENTS = {"openai_mcp": "openai_mcp_agent", "agents_sdk": "agents_sdk_agent"}
SUITES = {"starter": 16, "genomics": 220}
PLAYER = "noisy:2"
TIERS = ("native-function-contract", "real-tool-execution", "task-completion-execution")
CONCURRENCY = 16
MODEL = "scripted"
LOOPBACK_ONLY_CA = """\
-----BEGIN CERTIFICATE-----
MIIBqDCCAU2gAwIBAgIUHxFz2HlrXu/TOVetH7tNEOgoF6swCgYIKoZIzj0EAwIw
KDEmMCQGA1UEAwwdY2FsbGJlbmNoIHRlc3QsIGxvb3BiYWNrIG9ubHkwIBcNMjYx
MjAxMjIzMTMyWhgPMjEyNjExMDcyMjMxMzJaMCgxJjAkBgNVBAMMHWNhbGxiZW5j
aCB0ZXN0LCBsb29wYmFjayBvbmx5MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE
s/AmwI+TkYzzXlkVCgzllwEIiVbH/5Q5qoyEcF9yMtnmcyJEl+HkNdrORkmzqmV4
1a0rKvnX/Fa4C9q1D4hrwqNTMFEwHQYDVR0OBBYEFLAUxEN1/yMjI6GSG2NFBPt/
b5kPMB8GA1UdIwQYMBaAFLAUxEN1/yMjI6GSG2NFBPt/b5kPMA8GA1UdEwEB/wQF
MAMBAf8wCgYIKoZIzj0EAwIDSQAwRgIhALv9F8Bt/iOeSMOJRDeSWfnQGvSy3Pjp
oHJk15oxOXCWAiEA4bIu8oU6PKO/hIIGZOojNQ1EFEE40nm6w/A8WMwXs/4=
-----END CERTIFICATE-----
"""
"""A throwaway self-signed certificate (no key kept) used as the whole trust store: every HTTP
client the agents create (two per case: model and MCP) loads the trust store, ~60 ms of CPU with
the system bundle, about a third of the agent runs' time. Every connection here is plain HTTP on
127.0.0.1, so no certificate is ever checked."""

UNKNOWN_TOOL, NOT_AN_OBJECT, MISSING_REQUIRED = "unknown_tool", "not_an_object", "missing_required"
"""The kinds of call the Agents SDK answers itself, without calling MCP."""


class Played:
    """One run's records by case key and the script its responder played."""

    def __init__(self, result: Any, responder: ScriptedResponder) -> None:
        self.records: dict[str, CaseRecord] = {r.key: r for r in result.records}
        self.script = dict(responder.memo)
        self.labels = dict(responder.labels)
        self.offered = dict(responder.offered)
        self.told = dict(responder.told)

    def calls(self, key: str) -> list[tuple[str, Any]]:
        """The calls callbench received for a case (over MCP, or in its own loop), in order."""
        return [(c.tool, c.arguments) for c in self.records[key].trace.calls]

    def script_of(self, key: str) -> list[tuple[str, str, str]]:
        """The scripted calls of a case, in order: (call id, name, raw arguments)."""
        rounds = sorted((r, t) for (k, r), t in self.script.items() if k == key)
        return [(i, n, a) for _, t in rounds for i, (n, a) in zip(t.ids or [], t.calls, strict=True)]

    def script_for(self, keys: Iterable[str]) -> dict[tuple[str, int], Any]:
        """The part of the script that played the cases ``keys``."""
        wanted = set(keys)
        return {k: v for k, v in self.script.items() if k[0] in wanted}


def verdicts(record: CaseRecord) -> dict[str, tuple[bool, list[str]]]:
    """Per strict tier: (passed, reason codes)."""
    return {t: (record.verdicts[t].passed, list(record.verdicts[t].codes)) for t in TIERS}


def run_own_loop(suite: Suite, out: Path) -> Played:
    """callbench's own loop driving a scripted server as the model ``openai:scripted@URL``."""
    responder = ScriptedResponder(suite, PLAYER)
    with ProtocolServer(responder) as server:
        result = callbench.run(
            suite.name,
            f"openai:{MODEL}@{server.url}",
            "all",
            out_dir=out,
            cache=False,  # a cached reply would skip the server, and with it the script
            concurrency=CONCURRENCY,
            progress="quiet",
        )
    return Played(result, responder)


def agent_environment(folder: Path) -> tuple[dict[str, str], list[str]]:
    """The example agents' settings: (variables to set, variables to remove). Writes the
    loopback-only trust store into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ca.pem").write_text(LOOPBACK_ONLY_CA)
    settings = {
        "SSL_CERT_FILE": str(folder / "ca.pem"),  # httpx reads it (trust_env)
        "CALLBENCH_AGENT_MODEL": MODEL,
        "OPENAI_API_KEY": "sk-test-local",
        "OPENAI_AGENTS_DISABLE_TRACING": "1",
        "NO_PROXY": "127.0.0.1,localhost",
    }
    return settings, ["CALLBENCH_SYSTEM_PROMPT"]


def run_agent(suite: Suite, agent: str, out: Path, environ: Any, **options: Any) -> Played:
    """Run ``agent`` on ``suite`` with its model pointed at a fresh scripted server.

    ``environ`` sets ``OPENAI_BASE_URL``: a ``pytest.MonkeyPatch`` (``setenv``) or ``os.environ``."""
    responder = ScriptedResponder(suite, PLAYER)
    with ProtocolServer(responder) as server:
        if hasattr(environ, "setenv"):
            environ.setenv("OPENAI_BASE_URL", server.url)
        else:
            environ["OPENAI_BASE_URL"] = server.url
        result = callbench.run(suite.name, agent=agent, tier="all", out_dir=out, progress="quiet", **options)
    return Played(result, responder)


@contextmanager
def process_environment(folder: Path) -> Iterator[None]:
    """:func:`agent_environment` applied to ``os.environ`` (restored afterwards), with
    ``examples/agents`` importable: for scripts, where no ``MonkeyPatch`` exists."""
    import sys

    settings, removed = agent_environment(folder)
    saved = dict(os.environ)
    sys.path.insert(0, str(EXAMPLES))
    os.environ.update(settings)
    for name in removed:
        os.environ.pop(name, None)
    try:
        yield
    finally:
        sys.path.remove(str(EXAMPLES))
        os.environ.clear()
        os.environ.update(saved)


def preemptions(played: Played, key: str, listed: Mapping[str, Any] | None = None) -> dict[str, str]:
    """The scripted calls of a case the Agents SDK answers itself, by call id, with their kind: an
    unlisted tool, arguments that are not a JSON object, or a required parameter (of the schema
    the SDK listed) missing. ``listed``: the tools offered (default: those ``played`` recorded)."""
    offer = played.offered[key] if listed is None else listed
    out: dict[str, str] = {}
    for call_id, name, raw in played.script_of(key):
        arguments = json.loads(raw)
        schema = offer.get(name)
        if schema is None:
            out[call_id] = UNKNOWN_TOOL
        elif not isinstance(arguments, dict):
            out[call_id] = NOT_AN_OBJECT
        elif any(r not in arguments for r in (schema or {}).get("required", [])):
            out[call_id] = MISSING_REQUIRED
    return out


def preempted_by_sdk(theirs: Played, key: str) -> set[str]:
    """Ids of the scripted calls the Agents SDK answers itself (see :func:`preemptions`)."""
    return set(preemptions(theirs, key))


def without(trace: Trace, dropped: set[str]) -> Trace:
    """The trace as if the calls ``dropped`` had never been made."""
    kept = [c for c in trace.calls if c.call_id not in dropped]
    calls = [c.model_copy(update={"index": i}) for i, c in enumerate(kept)]
    rounds = [
        r.model_copy(update={"call_ids": [i for i in r.call_ids if i not in dropped]}) for r in trace.rounds
    ]
    return trace.model_copy(update={"calls": calls, "rounds": rounds})


def expected_verdicts(suite: Suite, own: CaseRecord, dropped: set[str]) -> dict[str, tuple[bool, list[str]]]:
    """callbench's scoring of the own loop's trace minus ``dropped`` (the own verdicts if none)."""
    if not dropped:
        return verdicts(own)
    case = next(c for c in suite.cases if c.key == own.key)
    scored, error = asyncio.run(score_case(build_scorers(suite, TIERS), case, without(own.trace, dropped)))
    assert error is None, error
    return {t: (scored[t].passed, list(scored[t].codes)) for t in TIERS}


def unguided(text: str) -> str:
    """A tool result as the own loop told it, without the continuation guidance its
    production-parity mode appends to a round's last result (an agent under test gets none)."""
    return text.removesuffix("\n" + CONTINUATION_GUIDANCE)


def mismatches(suite: Suite, own: Played, theirs: Played, keys: list[str], sdk: bool) -> list[Any]:
    """Every way the agent's run differs from the own loop's (beyond the SDK's pre-emptions)."""
    out: list[Any] = []
    for key in keys:
        dropped = preempted_by_sdk(theirs, key) if sdk else set()
        own_calls = [c for c in own.records[key].trace.calls if c.call_id not in dropped]
        if theirs.calls(key) != [(c.tool, c.arguments) for c in own_calls]:
            out.append((key, "calls", own.calls(key), theirs.calls(key)))
        told = {i: t for i, t in theirs.told.get(key, {}).items() if i not in dropped}
        if told != {i: unguided(t) for i, t in own.told.get(key, {}).items() if i not in dropped}:
            out.append((key, "tool results told to the model"))
        if theirs.records[key].trace.final_text != own.records[key].trace.final_text:
            out.append((key, "final text"))
        mine, yours = expected_verdicts(suite, own.records[key], dropped), verdicts(theirs.records[key])
        out += [(key, t, mine[t], yours[t]) for t in TIERS if mine[t] != yours[t]]
    return out


def script_outside_the_offer(played: Played) -> list[tuple[str, str]]:
    """Scripted calls of a tool outside the case's offer, or with arguments that are not a JSON
    object (the script must have none: of the calls the Agents SDK answers itself, only those
    missing a required parameter occur)."""
    out = []
    for (case_key, _round), turn in played.script.items():
        for name, raw in turn.calls:
            if name not in played.offered[case_key] or not isinstance(json.loads(raw), dict):
                out.append((case_key, f"{name}({raw})"))
    return out


# ---- the covering slice ---------------------------------------------------------------------
def features(suite: Suite, own: Played, key: str) -> set[tuple[str, ...]]:
    """What one case of the own loop's run exercises, for the comparison: the player's mistake
    label, the case's group, each tier's outcome and reason codes, the kind of every call the
    Agents SDK would pre-empt, and whether that pre-emption changes the verdict."""
    record = own.records[key]
    group = record.case_id.split("/")[0]
    found: set[tuple[str, ...]] = {("label", own.labels.get(key, "")), ("group", group)}
    for tier, (passed, codes) in verdicts(record).items():
        found.add(("passed" if passed else "failed", tier))
        found.update(("code", tier, code) for code in codes)
    dropped = preemptions(own, key)
    found.update(("preempted", kind) for kind in dropped.values())
    if dropped:
        differs = expected_verdicts(suite, record, set(dropped)) != verdicts(record)
        found.add(("preemption changes the verdict", str(differs)))
    return found


def covering_slice(suite: Suite, own: Played, stride: int) -> tuple[list[str], set[tuple[str, ...]]]:
    """A deterministic slice of the own loop's cases that exercises every feature the whole run
    does (:func:`features`): in key order, each case that adds a feature not yet covered, plus every
    ``stride``-th case for breadth. Returns (keys, the whole run's features)."""
    keys = sorted(own.records)
    per_case = {key: features(suite, own, key) for key in keys}
    chosen, covered = set(keys[::stride]), set()
    for key in keys[::stride]:
        covered |= per_case[key]
    for key in keys:
        if per_case[key] - covered:
            chosen.add(key)
            covered |= per_case[key]
    everything = set().union(*per_case.values())
    return sorted(chosen), everything
