"""BFCL v4's agentic categories (memory, web search) exported as BFCL result files.

Three runs over all five agentic categories (the first ``LIMIT`` questions of each, the memory chains
before them; web search against the stand-in web, the vector backend with the stand-in encoder): the
oracle, ``noisy:3`` and a perturbing agent (``Perturbed``: the oracle's path with one seeded change per
entry, among answer-not-found, empty, undecodable and force-quit endings, a provider failure and
harmless changes). Each run is exported with ``callbench export bfcl`` under its own registered FC
model name, then:

* ``bfcl evaluate`` (bfcl-eval's own runner, in BFCL's reference venv) fails exactly the entries
  callbench's faithful verdicts fail, with the same error types, and passes the rest; an errored
  record is BFCL's ``agentic:inference_error``;
* ``callbench bfcl score-results`` on the same files gives every entry the same verdict again;
* the files sit where bfcl-eval's inference writes them (``agentic/``, ``agentic/memory/<backend>/``
  with the prerequisite conversations' file and the memory snapshots), each entry's steps as BFCL's FC
  handler stores them.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections import Counter
from itertools import count
from pathlib import Path
from typing import Any

import pytest
from conftest import unavailable
from memory_standin import StandInEncoder
from web_standin import KEY, StandInServer, route

import callbench
from callbench.benchmarks.bfcl import memory_backends
from callbench.benchmarks.bfcl.agentic import judge_result
from callbench.benchmarks.bfcl.data import AGENTIC, MEMORY, data_dir
from callbench.benchmarks.bfcl.export import result_line
from callbench.benchmarks.bfcl.memory_cases import is_prereq
from callbench.benchmarks.bfcl.options import BfclOptions
from callbench.benchmarks.bfcl.results import category_entries, score_results
from callbench.benchmarks.bfcl.web_search import KEY_VARIABLE
from callbench.cli.main import main
from callbench.errors import ProviderError
from callbench.providers.agents.oracle import OracleAgent
from callbench.providers.base import Provider
from callbench.types.messages import ModelTurn, ToolCall

LIMIT = 12
"""Questions per category: the memory ones all of the customer scenario (its 10 conversations first)."""
MODELS = {
    "oracle": "gpt-4o-2024-11-20-FC",
    "noisy:3": "gpt-4o-mini-2024-07-18-FC",
    "perturbed": "gpt-4.1-2025-04-14-FC",
}
"""Each run's label for BFCL: registered FC models with BFCL's default FC decoder."""
EDGE_MODEL = "gpt-4.1-mini-2025-04-14-FC"
"""The label of hand-written web search results, one odd shape each (``EDGE_RESULTS``)."""
ANSWER = "<answer>"
"""Stands for the entry's first possible answer in ``EDGE_RESULTS``."""
CALL = {"search_engine_query": '{"keywords": "x"}'}
EDGE_RESULTS: list[Any] = [
    "Error during inference: boom",
    [],
    [[], []],
    [[]],
    [""],
    ["a text turn"],  # BFCL iterates its characters
    [{"a": "b"}],  # a turn that is an object: its keys
    [[CALL]],
    [[CALL, ANSWER]],
    [[ANSWER, [CALL]]],  # a text step, then calls: the text is still the last message
    [[[{"search_engine_query": "not json"}]]],
    [[[{"search_engine_query": "[1]"}]]],
    [[[{"search_engine_query": "null"}]]],
    [[[{"search_engine_query": {"keywords": "x"}}]]],  # arguments as an object
    [[[{"search_engine_query": "{}"}]]],
    [[[{}]]],  # a step of no calls
    [[[[]]]],
    [[{"search_engine_query": f"'{ANSWER}'"}]],  # a step that is one call, not a list, and undecodable
    [[[ANSWER]]],
    [[[{"search_engine_query": "{}", "fetch_url_content": f"{ANSWER}"}]]],
    [[None]],
    [[0]],
    [[7]],
    [[True]],
    [[ANSWER, ""]],  # an empty last text
    [[ANSWER.upper()]],
]


def edge_results(truth: dict[str, Any]) -> dict[str, Any]:
    """``EDGE_RESULTS`` by web search entry id, the placeholder replaced by the entry's answer."""
    out = {}
    for number, result in enumerate(EDGE_RESULTS):
        entry_id = f"web_search_base_{number}"
        text = (
            json.dumps(result)
            .replace(ANSWER, truth[entry_id][0])
            .replace(ANSWER.upper(), truth[entry_id][0].upper())
        )
        out[entry_id] = json.loads(text)
    return out


WRONG = "{'answer': 'I do not know', 'context': 'nothing found'}"
CHANGES = (
    "none",
    "wrong_answer",  # agentic:answer_not_found
    "empty_answer",  # agentic:no_last_message
    "shouted",  # the answer upper-cased: still found
    "prose_first",  # a text before any call ends the entry
    "answer_in_broken_call",  # the answer, cut short, as the raw arguments of a call (not JSON)
    "broken_call",  # arguments that are not JSON
    "list_arguments",  # JSON arguments that are not an object
    "calls_forever",  # 21 steps: force-quit, no last message
    "doubled_calls",  # every step's calls twice
    "provider_failure",  # an error record (BFCL: "Error during inference")
)


class Perturbed(Provider):
    """The oracle's path with one change per entry, drawn from the entry id; prerequisite conversations
    are the oracle's (their memory is what the questions read)."""

    name = "perturbed"
    model = "perturbed"
    needs_network = False

    async def generate(self, messages: Any, tools: Any, settings: Any) -> ModelTurn:
        raise AssertionError("bound per case")

    def for_case(self, case: Any) -> Provider:
        inner = OracleAgent().for_case(case)
        if is_prereq(case.category):
            return inner
        digest = int(hashlib.sha256(case.id.encode()).hexdigest(), 16)
        return _Changed(inner, CHANGES[digest % len(CHANGES)])


class _Changed(Provider):
    name = "perturbed"
    model = "perturbed"
    needs_network = False

    def __init__(self, inner: Provider, change: str) -> None:
        self.inner, self.change = inner, change
        self.last: ToolCall | None = None
        self.ids = count()

    def _call(self, name: str, raw: str) -> ToolCall:
        return ToolCall(
            id=f"p{next(self.ids)}", name=name, arguments_raw=raw, parse_error="not a JSON object"
        )

    async def generate(self, messages: Any, tools: Any, settings: Any) -> ModelTurn:
        change = self.change
        if change == "provider_failure":
            raise ProviderError("simulated outage")
        if change == "prose_first" and self.last is None:
            return ModelTurn(text="Let me look that up first.", finish_reason="stop")
        turn = await self.inner.generate(messages, tools, settings)
        if turn.tool_calls:
            self.last = turn.tool_calls[-1]
            calls = list(turn.tool_calls)
            if change == "doubled_calls":
                calls += [call.model_copy(update={"id": f"p{next(self.ids)}"}) for call in calls]
            return ModelTurn(tool_calls=calls, finish_reason="tool_calls")
        name = self.last.name if self.last else tools[0].name
        if change == "calls_forever" and self.last is not None:
            repeat = self.last.model_copy(update={"id": f"p{next(self.ids)}"})
            return ModelTurn(tool_calls=[repeat], finish_reason="tool_calls")
        if change in ("answer_in_broken_call", "broken_call", "list_arguments"):
            raw = {
                "answer_in_broken_call": turn.text.rstrip("}"),
                "broken_call": '{"query": "unfinished',
            }.get(change, '["a", "list"]')
            return ModelTurn(tool_calls=[self._call(name, raw)], finish_reason="tool_calls")
        text = {"wrong_answer": WRONG, "empty_answer": "", "shouted": turn.text.upper()}.get(
            change, turn.text
        )
        return ModelTurn(text=text, finish_reason="stop")


@pytest.fixture(scope="module")
def runs(bfcl_folder: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The three runs (the stand-in web and encoder only while they play)."""
    from importlib.util import find_spec

    missing = [name for name in ("overrides", "rank_bm25", "faiss") if find_spec(name) is None]
    if missing:
        unavailable(f"BFCL memory needs {', '.join(missing)}: pip install 'callbench[bfcl-memory]'")
    root = tmp_path_factory.mktemp("agentic")
    encoder_folder = root / "embedding-model"
    encoder_folder.mkdir()
    patch = pytest.MonkeyPatch()
    server = StandInServer(bfcl_folder)
    out: dict[str, Any] = {}
    try:
        encoder = StandInEncoder()
        patch.setattr(memory_backends, "load_encoder", lambda path: encoder)
        route(patch, server)
        patch.setenv(KEY_VARIABLE, KEY)
        for label in MODELS:
            agent: Any = Perturbed() if label == "perturbed" else label
            out[label] = callbench.run(
                "bfcl:agentic",
                agent,
                out_dir=root / label.replace(":", "-"),
                progress="quiet",
                cache=False,
                concurrency=4,
                suite_options={"limit": LIMIT, "embedding_model": str(encoder_folder)},
            )
    finally:
        server.stop()
        patch.undo()
    return out


@pytest.fixture(scope="module")
def exported(runs: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every run exported under its model name into one BFCL project root."""
    root = tmp_path_factory.mktemp("bfcl-root")
    for label, result in runs.items():
        code = main(
            ["export", "bfcl", str(result.run_dir), "--out", str(root / "result"), "--model", MODELS[label]]
        )
        assert code == 0
    _, truth = category_entries("web_search_base", data_dir())
    lines = [json.dumps({"id": key, "result": result}) for key, result in edge_results(truth).items()]
    edge = root / "result" / EDGE_MODEL / "agentic" / "BFCL_v4_web_search_base_result.json"
    edge.parent.mkdir(parents=True)
    edge.write_text("\n".join(lines) + "\n")
    return root


def faithful(result: Any) -> dict[str, tuple[bool, str]]:
    """callbench's verdicts on the scored entries (questions), errored records as BFCL counts them."""
    out = {}
    for record in result.records:
        if is_prereq(record.category):
            continue
        if record.status == "error":
            out[record.case_id] = (False, "agentic:inference_error")
        else:
            details = record.verdicts["bfcl"].details["bfcl"]
            out[record.case_id] = (details["passed"], details["error_type"])
    return out


def test_the_three_runs_cover_every_outcome(runs: dict[str, Any]) -> None:
    oracle, noisy, perturbed = (faithful(runs[label]) for label in MODELS)
    assert len(oracle) == len(noisy) == len(perturbed) == 5 * LIMIT
    assert set(oracle.values()) == {(True, "")}
    assert set(noisy.values()) == {(False, "agentic:answer_not_found")}  # noisy ends on "Done."
    drawn = {CHANGES[int(hashlib.sha256(key.encode()).hexdigest(), 16) % len(CHANGES)] for key in perturbed}
    assert drawn == set(CHANGES)
    assert Counter(perturbed.values()) == {  # the figures docs/bfcl.md gives
        (True, ""): 22,
        (False, "agentic:answer_not_found"): 21,
        (False, "agentic:no_last_message"): 14,
        (False, "agentic:inference_error"): 3,
    }
    force_quit = [
        r for r in runs["perturbed"].records if (r.trace.final_state or {}).get("bfcl", {}).get("force_quit")
    ]
    assert force_quit and all(len(r.trace.rounds) == 21 for r in force_quit)


def test_bfcl_evaluate_gives_every_entry_the_faithful_verdict(
    runs: dict[str, Any], exported: Path, reference_python: Path
) -> None:
    env = {**os.environ, "BFCL_PROJECT_ROOT": str(exported), "OPENAI_API_KEY": "unused"}
    subprocess.run(
        [
            str(reference_python.parent / "bfcl"),
            "evaluate",
            "--model",
            ",".join([*MODELS.values(), EDGE_MODEL]),
            "--test-category",
            ",".join(AGENTIC),
            "--partial-eval",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    for label, model in MODELS.items():
        ours = faithful(runs[label])
        theirs: dict[str, tuple[bool, str]] = {}
        for category in AGENTIC:
            folder = "agentic" + (f"/memory/{category.removeprefix('memory_')}" if category in MEMORY else "")
            path = exported / "score" / model / folder / f"BFCL_v4_{category}_score.json"
            head, *failed = (json.loads(line) for line in path.read_text().splitlines())
            assert head["total_count"] == LIMIT, (label, category)
            bad = {line["id"]: line["error"]["error_type"] for line in failed}
            for entry_id in (key for key in ours if key.rsplit("_", 1)[0] == category):
                theirs[entry_id] = (entry_id not in bad, bad.get(entry_id, ""))
        assert theirs == ours, label
    _, truth = category_entries("web_search_base", data_dir())
    ours = {}
    for key, result in edge_results(truth).items():
        check = judge_result(result, truth[key])
        ours[key] = (check.valid, check.error_type)
    path = exported / "score" / EDGE_MODEL / "agentic" / "BFCL_v4_web_search_base_score.json"
    head, *failed = (json.loads(line) for line in path.read_text().splitlines())
    bad = {line["id"]: line["error"]["error_type"] for line in failed}
    assert {key: (key not in bad, bad.get(key, "")) for key in ours} == ours
    assert head["total_count"] == len(EDGE_RESULTS) and 0 < head["correct_count"] < len(EDGE_RESULTS) / 2


def test_score_results_reads_the_files_back_with_the_same_verdicts(
    runs: dict[str, Any], exported: Path, tmp_path: Path
) -> None:
    report = score_results(exported / "result")
    for label, model in MODELS.items():
        files = [item for item in report["files"] if item.model == model]
        assert sorted(item.category for item in files) == sorted(AGENTIC)  # prerequisite files skipped
        rescored = {entry.id: (entry.valid, entry.error_type) for item in files for entry in item.entries}
        assert rescored == faithful(runs[label]), label
    improved = score_results(exported / "result", options=BfclOptions(mode="improved"))
    assert all(not figures.get("faithful_vs_improved") for figures in improved["models"].values())
    out = tmp_path / "scores"
    assert main(["bfcl", "score-results", str(exported / "result"), "--score-dir", str(out)]) == 0
    model = MODELS["perturbed"]
    kv = out / model / "agentic" / "memory" / "kv" / "BFCL_v4_memory_kv_score.json"
    head, *failed = (json.loads(line) for line in kv.read_text().splitlines())
    assert (head["correct_count"], head["total_count"]) == (LIMIT - len(failed), LIMIT)
    records = [json.loads(line) for line in (out / model / "records.jsonl").read_text().splitlines()]
    assert len(records) == 5 * LIMIT and {r["category"] for r in records} == set(AGENTIC)


def test_files_sit_where_bfcl_writes_them_with_bfcls_steps(runs: dict[str, Any], exported: Path) -> None:
    model_dir = exported / "result" / MODELS["perturbed"]
    names = sorted(str(path.relative_to(model_dir)) for path in model_dir.rglob("*_result.json"))
    assert names == sorted(
        [f"agentic/BFCL_v4_{c}_result.json" for c in ("web_search_base", "web_search_no_snippet")]
        + [
            f"agentic/memory/{b}/BFCL_v4_memory_{b}{suffix}_result.json"
            for b in ("kv", "vector", "rec_sum")
            for suffix in ("", "_prereq")
        ]
    )
    records = {r.case_id: r for r in runs["perturbed"].records}
    answers: dict[str, Any] = {}
    for category in AGENTIC:
        answers.update(category_entries(category, data_dir())[1])
    for path in model_dir.rglob("*_result.json"):
        for line in map(json.loads, path.read_text().splitlines()):
            record = records[line["id"]]
            assert line == result_line(record, True)
            if record.status == "error":
                assert line["result"].startswith("Error during inference: ")
                continue
            steps = [step for turn in line["result"] for step in turn]
            assert len(steps) == len(record.trace.rounds)  # every round a step, in its turn
            if is_prereq(record.category):  # the oracle's conversation: every user turn played
                assert len(line["result"]) == record.trace.final_state["bfcl"]["turns_total"]
                continue
            assert len(line["result"]) == 1  # a question is one turn
            verdict = record.verdicts["bfcl"].details["bfcl"]
            check = judge_result(line["result"], list(answers[line["id"]]))
            assert (check.valid, check.error_type) == (verdict["passed"], verdict["error_type"])
    oracle = exported / "result" / MODELS["oracle"] / "agentic" / "BFCL_v4_web_search_base_result.json"
    for line in map(json.loads, oracle.read_text().splitlines()):
        *calls, answer = line["result"][0]  # the oracle's searches and fetches, then its answer
        assert isinstance(answer, str) and all(isinstance(step, list) and len(step) == 1 for step in calls)
        for step in calls:
            ((name, arguments),) = step[0].items()
            assert name in ("search_engine_query", "fetch_url_content")
            assert isinstance(json.loads(arguments), dict)  # arguments as JSON text, as the API sends them


def test_memory_snapshots_are_exported_as_bfcls_backends_keep_them(
    runs: dict[str, Any], exported: Path
) -> None:
    run_dir = runs["oracle"].run_dir
    for backend in ("kv", "vector", "rec_sum"):
        snapshots = (
            exported / "result" / MODELS["oracle"] / "agentic" / "memory" / backend / "memory_snapshot"
        )
        checkpoints = sorted(p.name for p in (snapshots / "prereq_checkpoints").iterdir())
        source = run_dir / "bfcl_memory" / "trial-1" / f"memory_{backend}"
        assert checkpoints == sorted(p.name for p in source.glob("*.json")) and len(checkpoints) == 10
        last = f"memory_{backend}_prereq_9-customer-9.json"
        assert (snapshots / "customer_final.json").read_bytes() == (source / last).read_bytes()
