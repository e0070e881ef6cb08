"""BFCL v4 memory (``bfcl:memory``): prerequisite conversations, then questions, on bfcl-eval's three
memory backends.

* the oracle passes every question it plays, at concurrency 1 and 4 alike (same verdicts, byte-equal
  snapshots in the run folder), each prerequisite conversation starting from its predecessor's snapshot
  and each question from its chain's last; the facts it stored are what the questions read back;
* replayed through bfcl-eval's own inference-side code in BFCL's order (its loader, its ordering, its
  instance cache, its snapshot files), every entry starts from the memory callbench gave it, every call
  answers the same and every prerequisite conversation flushes the same snapshot;
* BFCL's own ``add_memory_instruction_system_prompt`` (in its venv) places the memory prompt as callbench
  does;
* faithful verdicts are BFCL's ``agentic_checker`` on perturbed final answers;
* bad input: a question without its prerequisites is an error record, a missing embedding model or
  extra one line; the real loading code reads a tiny model the test builds;
* BFCL's loop: more than 20 steps force-quit a conversation (which still flushes), a round that does
  not decode ends the turn.

The vector backend runs with a deterministic stand-in encoder (``memory_standin.py``) except in the test
of the real loading code.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import unavailable
from memory_replay import replay
from memory_standin import StandInEncoder, build_tiny_model

import callbench
from callbench.benchmarks.bfcl import memory_backends
from callbench.benchmarks.bfcl.agentic import answer_found
from callbench.benchmarks.bfcl.memory_backends import (
    MemoryWorld,
    memory_instruction,
    memory_module,
    with_memory_instruction,
)
from callbench.benchmarks.bfcl.memory_backends import load_encoder as real_load_encoder
from callbench.benchmarks.bfcl.memory_cases import (
    answer_text,
    fact_key,
    is_prereq,
    load_memory,
    oracle_answer,
)
from callbench.benchmarks.bfcl.memory_executor import FOLDER, LOG
from callbench.benchmarks.bfcl.scorer import BfclScorer
from callbench.benchmarks.bfcl.suite import load_suite
from callbench.errors import ConfigError, MissingExtraError, UserError
from callbench.plugin import Message, SuiteOptions
from callbench.providers.base import Provider
from callbench.types.messages import ModelTurn, ToolCall
from callbench.types.trace import RoundInfo, Trace, TraceCall

CATEGORIES = ("memory_kv", "memory_vector", "memory_rec_sum")
LIMIT = 31
"""The first 31 questions: all of the customer scenario and the first of healthcare (two chains)."""


@pytest.fixture(scope="module", autouse=True)
def memory_extra() -> None:
    """The backends' modules (the ``bfcl-memory`` extra's light part, in the test extra)."""
    from importlib.util import find_spec

    missing = [name for name in ("overrides", "rank_bm25", "faiss") if find_spec(name) is None]
    if missing:
        unavailable(f"BFCL memory needs {', '.join(missing)}: pip install 'callbench[bfcl-memory]'")


@pytest.fixture(scope="module")
def encoder_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder named as the embedding model (the stand-in is loaded in its place)."""
    return tmp_path_factory.mktemp("embedding-model")


@pytest.fixture(scope="module")
def standin() -> Any:
    patch = pytest.MonkeyPatch()
    encoder = StandInEncoder()
    patch.setattr(memory_backends, "load_encoder", lambda path: encoder)
    yield encoder
    patch.undo()


def run(spec: str, out: Path, model: Any = "oracle", concurrency: int = 4, **options: Any) -> Any:
    return callbench.run(
        spec, model, out_dir=out, progress="quiet", cache=False, concurrency=concurrency, **options
    )


@pytest.fixture(scope="module")
def oracle_runs(
    bfcl_folder: Path, standin: Any, encoder_folder: Path, tmp_path_factory: pytest.TempPathFactory
):
    root = tmp_path_factory.mktemp("memory")
    options = {"limit": LIMIT, "embedding_model": str(encoder_folder)}
    return {c: run("bfcl:memory", root / f"c{c}", concurrency=c, suite_options=options) for c in (1, 4)}


def verdicts(result: Any) -> dict[str, Any]:
    return {
        r.case_id: (r.status, r.verdicts["bfcl"].passed, r.verdicts["bfcl"].applicable)
        for r in result.records
    }


# --- the oracle, at concurrency 1 and 4 -----------------------------------------------------------


def test_the_oracle_passes_every_question_at_any_concurrency(oracle_runs: dict[int, Any]) -> None:
    one, four = (verdicts(oracle_runs[c]) for c in (1, 4))
    assert one == four
    questions = {key: value for key, value in four.items() if "_prereq_" not in key}
    prereqs = {key: value for key, value in four.items() if "_prereq_" in key}
    assert len(questions) == 3 * LIMIT and len(prereqs) == 3 * 15
    assert set(questions.values()) == {("completed", True, True)}
    assert set(prereqs.values()) == {("completed", False, False)}  # recorded, not scored
    aggregate = oracle_runs[4].summary["scorer_aggregates"]["bfcl"]["categories"]
    assert {name: row["correct_count"] for name, row in aggregate.items()} == dict.fromkeys(CATEGORIES, LIMIT)


def test_snapshots_live_in_the_run_folder_and_do_not_depend_on_concurrency(
    oracle_runs: dict[int, Any],
) -> None:
    folders = [oracle_runs[c].run_dir / FOLDER / "trial-1" for c in (1, 4)]
    files = [sorted(p.relative_to(f) for p in f.rglob("*.json")) for f in folders]
    assert files[0] == files[1] and len(files[0]) == 3 * 15  # one snapshot per conversation
    for name in files[0]:
        assert (folders[0] / name).read_bytes() == (folders[1] / name).read_bytes(), name


def test_each_entry_starts_from_its_predecessor_and_questions_read_what_was_stored(
    oracle_runs: dict[int, Any], bfcl_folder: Path
) -> None:
    result = oracle_runs[4]
    records = {r.case_id: r for r in result.records}
    for category in CATEGORIES:
        data = load_memory(category, bfcl_folder)
        log = [json.loads(line) for line in (result.run_dir / FOLDER / "trial-1" / category / LOG).open()]
        for scenario in ("customer", "healthcare"):
            chain = [entry["id"] for entry in data.chains[scenario]]
            started = [event["id"] for event in log if event["event"] == "started" and event["id"] in chain]
            assert started == chain  # played in chain order
            for position, entry_id in enumerate(chain):
                memory = records[entry_id].trace.final_state["bfcl_memory"]
                assert memory["start_from"] == (chain[position - 1] if position else None)
                assert memory["flushed"] is not None
        for question in data.questions[:LIMIT]:
            record = records[question["id"]]
            memory = record.trace.final_state["bfcl_memory"]
            assert memory["start_from"] == data.chains[question["scenario"]][-1]["id"]
            assert (
                "answer_<question number>" in memory["memory_in_prompt"]
            )  # the index note, from core memory
            (call,) = record.trace.calls
            answer = oracle_answer(data.answers[question["id"]])
            assert answer in call.result and fact_key(question) in str(call.arguments) + call.result


# --- BFCL's own flow, replayed --------------------------------------------------------------------


def test_bfcls_own_flow_gives_every_entry_the_same_memory(
    oracle_runs: dict[int, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """bfcl-eval's loader, ordering, instance cache and snapshot files (as its inference loop uses them),
    fed the calls callbench recorded: the same memory in every prompt, the same answer to every call, the
    same snapshot after every conversation (memory_replay.py)."""
    monkeypatch.setenv("BFCL_PROJECT_ROOT", str(tmp_path / "root"))
    result = oracle_runs[4]

    def bind(category: str) -> None:  # bfcl-eval's vector module, with the stand-in as its encoder
        if category == "memory_vector":
            memory_module("vector", StandInEncoder())

    records = {r.case_id: r for r in result.records}
    replayed, mismatches = replay(records, result.run_dir, CATEGORIES, tmp_path, bind)
    assert mismatches == []
    assert replayed == 3 * (LIMIT + 15)


def test_bfcls_prompt_function_places_the_memory_prompt_as_callbench(
    bfcl_folder: Path, standin: Any, encoder_folder: Path, reference_python: Path, tmp_path: Path
) -> None:
    suite = load_suite(
        "bfcl:memory", SuiteOptions(data=bfcl_folder, extra={"embedding_model": str(encoder_folder)})
    )
    picked = [c for c in suite.cases if c.id.endswith(("_0-customer-0", "_130-notetaker-0", "_1-customer-1"))]
    assert len(picked) == 15  # five entries (two conversations, three questions) per backend
    rows, ours = [], {}
    for case in picked:
        category = case.category.removesuffix("_prereq")
        backend = category.removeprefix("memory_")
        scenario = case.executor_config["scenario"]
        dump = f"memory of {case.id}: {{'k': 'v'}}"
        turns = [[m.model_dump(include={"role", "content"}) for m in case.messages]]
        turns += [list(turn) for turn in case.executor_config.get("later_turns", [])]
        rows.append(
            {"key": case.id, "category": category, "scenario": scenario, "question": turns, "dump": dump}
        )
        opened = with_memory_instruction(
            case.messages, memory_instruction(backend, scenario, dump), Message.system
        )
        ours[case.id] = [m.model_dump(include={"role", "content"}) for m in opened]
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    script = Path(__file__).parent / "memory_reference.py"
    env = {"BFCL_PROJECT_ROOT": str(tmp_path / "root"), "PATH": "/usr/bin:/bin"}
    subprocess.run([str(reference_python), str(script), str(source), str(target)], check=True, env=env)
    theirs = {row["key"]: row["first_turn"] for row in map(json.loads, target.read_text().splitlines())}
    assert theirs == ours


# --- the checker ----------------------------------------------------------------------------------


def trace_of(message: str | None, undecodable: bool = False) -> Trace:
    """A question's trace: one retrieval step, then ``message`` (``None``: no text step; ``undecodable``:
    the last step is a call whose arguments are not JSON, holding ``message`` as its raw text)."""
    rounds = [RoundInfo(index=1, started_at=0.0, call_ids=["c1"])]
    calls = [
        TraceCall(index=0, call_id="c1", round=1, tool="memory_retrieve", arguments={}, arguments_raw="{}")
    ]
    if undecodable:
        rounds.append(RoundInfo(index=2, started_at=0.0, call_ids=["c2"]))
        calls.append(
            TraceCall(index=1, call_id="c2", round=2, tool="memory_retrieve", arguments_raw=message or "")
        )
    elif message is not None:
        rounds.append(RoundInfo(index=2, started_at=0.0, text=message))
    return Trace(rounds=rounds, calls=calls, final_text=message or "")


def perturbed(answer: str, other: str) -> list[str]:
    words = answer.split()
    return [
        answer_text(answer),
        answer,
        answer.upper(),
        answer.lower(),
        ", ".join(words),
        "-".join(words),
        " ".join(words) + ".",
        answer.replace(" ", ""),
        "x" + answer,
        answer + "s",
        f"({answer})",
        f"My answer: {answer}!",
        answer.replace("'", '"'),
        answer_text(other),
        "{'answer': 'I do not know', 'context': 'I do not know'}",
        "",
    ]


def test_faithful_verdicts_are_bfcls_agentic_checker_on_perturbed_answers(bfcl_folder: Path) -> None:
    from bfcl_eval.eval_checker.agentic_eval.agentic_checker import agentic_checker

    suite = load_suite("bfcl:memory_rec_sum", SuiteOptions(data=bfcl_folder))
    scorer = BfclScorer(suite)
    questions = [case for case in suite.cases if not is_prereq(case.category)]
    assert len(questions) == 155
    compared = passes = 0
    for number, case in enumerate(questions):
        truth = case.metadata["bfcl"]["ground_truth"]
        other = questions[(number + 7) % len(questions)].metadata["bfcl"]["ground_truth"][0]
        for answer in truth:
            for message in perturbed(answer, other):
                for undecodable in (False, True):
                    verdict = scorer.score(case, trace_of(message, undecodable))
                    if undecodable:  # BFCL's checker reads the step's first call, {name: arguments}, as text
                        expected = agentic_checker([{"memory_retrieve": message}], truth)
                    elif not message:  # BFCL's runner: no last message, before the checker runs
                        expected = {"valid": False, "error_type": "agentic:no_last_message"}
                    else:
                        expected = agentic_checker(message, truth)
                    mine = (verdict.passed, verdict.details["bfcl"]["error_type"] or None)
                    assert mine == (expected["valid"], expected.get("error_type")), (
                        case.id,
                        message,
                        undecodable,
                    )
                    compared += 1
                    passes += bool(expected["valid"])
    assert compared == 6624 and 0.2 < passes / compared < 0.8
    missing = scorer.score(questions[0], trace_of(None))
    assert not missing.passed and missing.reasons[0].code == "agentic:no_last_message"


def test_every_answer_key_admits_the_oracles_answer_and_its_facts_fit_the_memory(bfcl_folder: Path) -> None:
    data = load_memory("memory_kv", bfcl_folder)
    for question in data.questions:
        truth = data.answers[question["id"]]["ground_truth"]
        assert answer_found(answer_text(oracle_answer(data.answers[question["id"]])), truth), question["id"]
    per_scenario = {s: sum(q["scenario"] == s for q in data.questions) for s in data.chains}
    assert max(per_scenario.values()) <= 50  # kv's and vector's archival memories hold 50 entries


# --- bad input ------------------------------------------------------------------------------------


def test_an_entry_run_without_its_prerequisites_is_an_error_record(bfcl_folder: Path, tmp_path: Path) -> None:
    picked = ["memory_kv_prereq_3-customer-3", "memory_kv_3-customer-3"]
    result = run("bfcl:memory_kv", tmp_path / "alone", case_ids=picked)
    records = {r.case_id: r for r in result.records}
    assert {r.status for r in records.values()} == {"error"}
    assert {r.error.type for r in records.values()} == {"case_setup"}
    conversation, question = (records[name].error.message for name in picked)
    assert "memory_kv_prereq_2-customer-2" in conversation and "prereq_4" not in conversation
    assert "memory_kv_prereq_9-customer-9" in question and "--case" in question


def test_the_vector_backend_needs_a_local_embedding_model(
    bfcl_folder: Path, tmp_path: Path, monkeypatch
) -> None:
    with pytest.raises(ConfigError, match=r"--option embedding_model=PATH"):
        load_suite("bfcl:memory_vector", SuiteOptions(data=bfcl_folder))
    with pytest.raises(ConfigError, match="is not a folder"):
        load_suite(
            "bfcl:memory", SuiteOptions(data=bfcl_folder, extra={"embedding_model": str(tmp_path / "none")})
        )
    with pytest.raises(UserError, match="cannot load the embedding model"):
        real_load_encoder.__wrapped__(str(tmp_path))  # a folder, but no model in it
    load_suite("bfcl:memory_kv,memory_rec_sum", SuiteOptions(data=bfcl_folder))  # they need none
    monkeypatch.setitem(sys.modules, "faiss", None)  # as if faiss-cpu were not installed
    with pytest.raises(MissingExtraError, match=r"'faiss'.*callbench\[bfcl-memory\]"):
        load_suite(
            "bfcl:memory_vector", SuiteOptions(data=bfcl_folder, extra={"embedding_model": str(tmp_path)})
        )


def test_the_real_loading_code_reads_a_tiny_local_model(tmp_path: Path) -> None:
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        unavailable("sentence-transformers missing (.ci/setup.d/55-bfcl-memory.sh installs it)")
    folder = build_tiny_model(tmp_path)
    encoder = real_load_encoder.__wrapped__(str(folder))
    first = MemoryWorld(
        "memory_vector", "memory_vector_prereq_0-customer-0", "customer", tmp_path / "a", None, encoder
    )
    assert first.call("archival_memory_add", {"text": "answer_0: Michael"}) == '{"id": 0}'
    assert first.call("archival_memory_add", {"text": "answer_1: 35"}) == '{"id": 1}'
    found = json.loads(first.call("archival_memory_retrieve", {"query": "answer_0", "top_k": 2}))["result"]
    assert {hit["text"] for hit in found} == {"answer_0: Michael", "answer_1: 35"}
    snapshot = first.flush()
    again = MemoryWorld(
        "memory_vector", "memory_vector_0-customer-0", "customer", tmp_path / "b", snapshot, encoder
    )
    assert (
        json.loads(again.call("archival_memory_retrieve", {"query": "answer_0", "top_k": 2}))["result"]
        == found
    )


# --- BFCL's loop ----------------------------------------------------------------------------------


class Scripted(Provider):
    """Per case, its rounds in order (a list of calls, or a text), then ``Noted.``; keeps the first
    messages it was sent."""

    name = "scripted"
    model = "scripted"
    needs_network = False

    def __init__(self, plans: dict[str, list[Any]], seen: dict[str, list[Message]] | None = None) -> None:
        self.plans, self.seen, self.plan, self.case_id = plans, seen if seen is not None else {}, [], ""

    def for_case(self, case: Any) -> Provider:
        bound = Scripted(self.plans, self.seen)
        bound.plan, bound.case_id = self.plans.get(case.id, []), case.id
        return bound

    async def generate(self, messages: Any, tools: Any, settings: Any) -> ModelTurn:
        self.seen.setdefault(self.case_id, list(messages))
        done = sum(1 for message in messages if message.role == "assistant")
        step = self.plan[done] if done < len(self.plan) else "Noted."
        if isinstance(step, str):
            return ModelTurn(text=step, model="scripted", finish_reason="stop")
        calls = []
        for index, (name, arguments) in enumerate(step):
            if isinstance(arguments, str):  # arguments that are not JSON
                calls.append(
                    ToolCall(
                        id=f"c{done}-{index}", name=name, arguments_raw=arguments, parse_error="not JSON"
                    )
                )
            else:
                raw = json.dumps(arguments)
                calls.append(
                    ToolCall(id=f"c{done}-{index}", name=name, arguments_raw=raw, arguments=arguments)
                )
        return ModelTurn(tool_calls=calls, model="scripted", finish_reason="tool_calls")


def test_more_than_twenty_steps_force_quit_a_conversation_which_still_flushes(tmp_path: Path) -> None:
    first = "memory_rec_sum_prereq_32-notetaker-0"
    plan = [[("memory_append", {"text": f"note {n}. "})] for n in range(30)]
    seen: dict[str, list[Message]] = {}
    result = run("bfcl:memory_rec_sum", tmp_path / "steps", Scripted({first: plan}, seen), case_ids=[first])
    (record,) = result.records
    assert len(record.trace.calls) == 21 and record.trace.final_state["bfcl"]["force_quit"] is True
    snapshot = json.loads(
        (result.run_dir / FOLDER / "trial-1" / "memory_rec_sum" / f"{first}.json").read_text()
    )
    assert snapshot["memory"] == "".join(f"note {n}. " for n in range(21))
    system = seen[first][0]
    assert system.role == "system" and system.content.endswith(
        "There is no content in the memory at this point.\n"
    )
    assert record.verdicts["bfcl"].applicable is False


def test_a_round_that_does_not_decode_ends_the_turn_and_questions_see_the_memory(tmp_path: Path) -> None:
    chain = [f"memory_rec_sum_prereq_{n}-notetaker-{n - 32}" for n in range(32, 37)]
    question = "memory_rec_sum_130-notetaker-0"
    plans: dict[str, list[Any]] = {
        chain[0]: [
            [("memory_append", {"text": "Daycare is due Friday."})],
            [("memory_append", '{"text": "x')],
        ],
        question: [[("memory_retrieve", {})], "{'answer': 'Friday', 'context': 'noted'}"],
    }
    seen: dict[str, list[Message]] = {}
    result = run(
        "bfcl:memory_rec_sum",
        tmp_path / "turns",
        Scripted(plans, seen),
        concurrency=3,
        case_ids=[*chain, question],
    )
    records = {r.case_id: r for r in result.records}
    first = records[chain[0]]
    # the undecodable round ended the first user turn: the next round answers the second one
    assert first.trace.final_state["bfcl"]["round_turns"][:3] == [0, 0, 1]
    assert first.trace.final_state["bfcl"]["ended_undecodable"] is True
    opening = seen[question][0].content
    assert opening.count("Daycare is due Friday.") == 1  # the memory, in the question's system prompt
    assert opening.endswith(
        load_suite("bfcl:memory_rec_sum").cases[-1].messages[0].content
    )  # then BFCL's format
    assert records[question].verdicts["bfcl"].details["bfcl"]["memory_from"] == chain[-1]
