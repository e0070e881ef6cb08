"""BFCL v4's memory entries as callbench cases (``bfcl:memory``: ``memory_kv``, ``memory_vector``,
``memory_rec_sum``).

BFCL arranges every memory category the same way (``bfcl_eval.utils.process_memory_test_case``): for
each scenario (student, customer, finance, healthcare, notetaker), the scenario's *prerequisite
conversations* (``memory_prereq_conversation/memory_<scenario>.json``, in file order) form a chain, each
depending on all before it; the scenario's *questions* (``BFCL_v4_memory.json``) depend on the whole
chain. Ids are renamed for the category (``memory_prereq_0-customer-0`` → ``memory_kv_prereq_0-customer-0``,
``memory_0-customer-0`` → ``memory_kv_0-customer-0``) and every entry uses the category's one backend.
A prerequisite conversation starts from the memory its predecessor left (the first from an empty
memory) and leaves its own at the end; every question starts from the memory the chain left.

Here each entry is a case run by the ``bfcl-memory`` executor, and the dependencies are run phases
(:attr:`callbench.plugin.Case.phase`): the k-th conversation of a chain is in phase k, a question in
phase ``len(chain)``, so the engine plays a chain in its order and a question after its chain, at any
concurrency; the order is also in each case (``executor_config.chain``, ``position``). Prerequisite
conversations are cases of the category ``<category>_prereq``: recorded like any case, not scored
(BFCL scores only the questions).

The built-in oracle plays each case from its metadata (``oracle_calls``, ``oracle_text``): in the
prerequisite conversations it stores, one call per step, every fact its scenario's questions ask for
(the first possible answer, spread over the chain's conversations and their turns), plus an index note
in core memory; in a question it retrieves the fact and answers with it in BFCL's answer format.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from callbench.benchmarks.bfcl.agentic import answer_found
from callbench.benchmarks.bfcl.data import MEMORY, VERSION_PREFIX, read_jsonl
from callbench.benchmarks.bfcl.memory_backends import (
    DOC_FILES,
    backend_of,
    check_modules,
    check_modules_of_encoder,
    prompt_constants,
)
from callbench.benchmarks.bfcl.multi_turn_cases import MULTI_TURN_TIMEOUT_S, STEP_LIMIT
from callbench.benchmarks.bfcl.schema import contract_from_doc
from callbench.plugin import Case, ConfigError, Message, UserError

__all__ = ["MEMORY", "memory_cases", "memory_settings"]
SCENARIOS = ("student", "customer", "finance", "healthcare", "notetaker")
"""BFCL's memory scenarios, in its order (``MEMORY_SCENARIO_NAME``)."""
EXECUTOR = "bfcl-memory"
PREREQ_SUFFIX = "_prereq"
PREREQ_FOLDER = "memory_prereq_conversation"
SOURCE = "memory"
"""The data files' name and their entries' id prefix (``memory_<n>-<scenario>-<k>``)."""
ORACLE_NOTE = "Noted."
INDEX_KEY = "memory_index"
INDEX_NOTE = (
    "Facts the user shared are kept in archival memory, one per entry, named answer_<question number>."
)


def is_prereq(category: str) -> bool:
    """Whether ``category`` is the prerequisite-conversation part of a memory category."""
    return category.endswith(PREREQ_SUFFIX)


@dataclass
class MemoryData:
    """One memory category's entries as BFCL arranges them."""

    category: str
    chains: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Scenario -> prerequisite conversations in chain order (ids renamed)."""
    questions: list[dict[str, Any]] = field(default_factory=list)
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Question id -> possible answer entry (``ground_truth``, ``source``)."""


def load_memory(category: str, folder: Path) -> MemoryData:
    """The category's prerequisite chains, questions and possible answers from BFCL's data folder."""
    backend_of(category)
    rename = lambda entry_id: entry_id.replace(SOURCE, category, 1)  # noqa: E731 - BFCL's renaming
    data = MemoryData(category)
    for scenario in SCENARIOS:
        path = folder / PREREQ_FOLDER / f"memory_{scenario}.json"
        data.chains[scenario] = [{**entry, "id": rename(entry["id"])} for entry in read_jsonl(path)]
    for entry in read_jsonl(folder / f"{VERSION_PREFIX}_{SOURCE}.json"):
        if entry.get("scenario") not in data.chains:
            raise UserError(
                f"bfcl: memory entry {entry.get('id')!r} names an unknown scenario {entry.get('scenario')!r}"
            )
        data.questions.append({**entry, "id": rename(entry["id"])})
    for row in read_jsonl(folder / "possible_answer" / f"{VERSION_PREFIX}_{SOURCE}.json"):
        data.answers[rename(row["id"])] = row
    return data


def memory_docs(category: str, folder: Path) -> list[dict[str, Any]]:
    """BFCL's function docs of the category's backend."""
    path = folder / "multi_turn_func_doc" / DOC_FILES[backend_of(category)]
    if not path.is_file():
        raise UserError(f"bfcl: missing {path}; install BFCL's data with `pip install --no-deps bfcl-eval`")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def memory_cases(category: str, folder: Path, limit: int | None = None) -> list[Case]:
    """The category's cases: each chain's conversations (phases 0..n-1), then the questions (phase n).
    ``limit``: the first N questions, with the chains of their scenarios."""
    data = load_memory(category, folder)
    questions = data.questions[:limit] if limit else data.questions
    tools = [contract_from_doc(doc, category) for doc in memory_docs(category, folder)]
    by_scenario: dict[str, list[dict[str, Any]]] = {}
    for question in data.questions:  # the oracle stores the facts of every question of a scenario
        by_scenario.setdefault(question["scenario"], []).append(question)
    cases: list[Case] = []
    for scenario in SCENARIOS:
        if any(q["scenario"] == scenario for q in questions):
            facts = [(q, oracle_answer(data.answers.get(q["id"], {}))) for q in by_scenario[scenario]]
            cases.extend(prereq_cases(category, scenario, data.chains[scenario], facts, tools))
    agentic_prompt = prompt_constants()["ADDITIONAL_SYSTEM_PROMPT_FOR_AGENTIC_RESPONSE_FORMAT"]
    for question in questions:
        chain = data.chains[question["scenario"]]
        truth = list(data.answers.get(question["id"], {}).get("ground_truth") or [])
        cases.append(
            question_case(
                category,
                question,
                chain,
                truth,
                tools,
                agentic_prompt,
                len(by_scenario[question["scenario"]]),
            )
        )
    return cases


def prereq_cases(
    category: str,
    scenario: str,
    chain: list[dict[str, Any]],
    facts: list[tuple[dict[str, Any], str]],
    tools: list[Any],
) -> list[Case]:
    """The chain's conversations as cases, in order (conversation k in phase k)."""
    ids = [entry["id"] for entry in chain]
    backend = backend_of(category)
    plans: list[list[list[dict[str, Any]]]] = [[[] for _ in entry["question"]] for entry in chain]
    plans[0][0].append(index_call(backend))
    for number, (question, answer) in enumerate(facts):  # spread over conversations, then their turns
        conversation = plans[number % len(chain)]
        conversation[(number // len(chain)) % len(conversation)].append(store_call(backend, question, answer))
    cases = []
    for position, entry in enumerate(chain):
        turns = entry["question"]
        cases.append(
            Case(
                id=entry["id"],
                category=category + PREREQ_SUFFIX,
                messages=[Message(role=m["role"], content=m.get("content") or "") for m in turns[0]],
                tools=list(tools),
                executor=EXECUTOR,
                harness_guidance=False,
                max_rounds=(STEP_LIMIT + 2) * len(turns),
                timeout_s=MULTI_TURN_TIMEOUT_S,
                phase=position,
                executor_config={
                    "kind": "prereq",
                    "scenario": scenario,
                    "chain": ids,
                    "position": position,
                    "later_turns": turns[1:],
                },
                metadata={
                    "bfcl": {
                        "category": category + PREREQ_SUFFIX,
                        "scenario": scenario,
                        "chain_position": position,
                        "topic": entry.get("topic"),
                    },
                    "oracle_calls": plans[position],
                    "oracle_text": ORACLE_NOTE,
                },
            )
        )
    return cases


def question_case(
    category: str,
    question: dict[str, Any],
    chain: list[dict[str, Any]],
    truth: list[str],
    tools: list[Any],
    agentic_prompt: str,
    facts: int,
) -> Case:
    """One question: BFCL's answer-format system message and the question, after its whole chain."""
    turn = question["question"][0]
    messages = [Message.system(agentic_prompt)]
    messages += [Message(role=m["role"], content=m.get("content") or "") for m in turn]
    answer = oracle_answer({"ground_truth": truth})
    return Case(
        id=question["id"],
        category=category,
        messages=messages,
        tools=list(tools),
        executor=EXECUTOR,
        harness_guidance=False,
        max_rounds=STEP_LIMIT + 2,
        timeout_s=MULTI_TURN_TIMEOUT_S,
        phase=len(chain),
        executor_config={
            "kind": "question",
            "scenario": question["scenario"],
            "chain": [e["id"] for e in chain],
        },
        metadata={
            "bfcl": {"category": category, "scenario": question["scenario"], "ground_truth": truth},
            "oracle_calls": [[retrieve_call(backend_of(category), question, facts)]],
            "oracle_text": answer_text(answer),
        },
    )


def fact_key(question: dict[str, Any]) -> str:
    """The oracle's name of a question's fact: ``answer_<n>`` for ``memory_kv_<n>-customer-<k>``."""
    return "answer_" + question["id"].rsplit("_", 1)[1].split("-", 1)[0]


def index_call(backend: str) -> dict[str, Any]:
    """The oracle's note in core memory (what later conversations and questions see in their prompt)."""
    if backend == "kv":
        return {"tool": "core_memory_add", "arguments": {"key": INDEX_KEY, "value": INDEX_NOTE}}
    if backend == "vector":
        return {"tool": "core_memory_add", "arguments": {"text": INDEX_NOTE}}
    return {"tool": "memory_append", "arguments": {"text": INDEX_NOTE + "\n"}}


def store_call(backend: str, question: dict[str, Any], answer: str) -> dict[str, Any]:
    """The oracle's call storing one question's fact."""
    key = fact_key(question)
    if backend == "kv":
        return {"tool": "archival_memory_add", "arguments": {"key": key, "value": answer}}
    if backend == "vector":
        return {"tool": "archival_memory_add", "arguments": {"text": f"{key}: {answer}"}}
    return {"tool": "memory_append", "arguments": {"text": f"{key}: {answer}\n"}}


def retrieve_call(backend: str, question: dict[str, Any], facts: int) -> dict[str, Any]:
    """The oracle's call reading a question's fact back (vector: every stored fact, best match first)."""
    key = fact_key(question)
    if backend == "kv":
        return {"tool": "archival_memory_retrieve", "arguments": {"key": key}}
    if backend == "vector":
        return {"tool": "archival_memory_retrieve", "arguments": {"query": key, "top_k": max(facts, 1)}}
    return {"tool": "memory_retrieve", "arguments": {}}


def oracle_answer(answer_entry: dict[str, Any]) -> str:
    """The possible answer the oracle gives: the first one BFCL's check finds in the oracle's answer
    text (``$49.99`` is not found there, as BFCL searches between word boundaries and nothing joins
    the ``$`` to a word: ``memory_22``'s other answer, ``49.99``, is)."""
    truth = [str(a) for a in answer_entry.get("ground_truth") or []]
    for answer in truth:
        if answer_found(answer_text(answer), truth):
            return answer
    return truth[0] if truth else ""


def answer_text(answer: str) -> str:
    """An answer in the format BFCL's agentic system message asks for."""
    return "{'answer': '" + answer + "', 'context': 'Recalled from my memory of our earlier conversations.'}"


def memory_settings(categories: tuple[str, ...] | list[str], extra: dict[str, Any]) -> dict[str, Any]:
    """The memory options of a suite (``embedding_model``), checked when the suite loads: a vector
    category needs a local model folder; every memory category needs its backend's modules (one line
    each). ``{}`` when the suite has no memory category."""
    chosen = [category for category in categories if category in MEMORY]
    if not chosen:
        return {}
    for category in chosen:
        check_modules(backend_of(category), category)
    if "memory_vector" not in chosen:
        return {}
    path = str(extra.get("embedding_model") or "").strip()
    if not path:
        raise ConfigError(
            "bfcl memory_vector needs its embedding model from a local folder: --option "
            "embedding_model=PATH (a sentence-transformers model; BFCL uses all-MiniLM-L6-v2)"
        )
    if not Path(path).expanduser().is_dir():
        raise ConfigError(f"bfcl memory_vector: embedding_model={path!r} is not a folder")
    check_modules_of_encoder()
    return {"embedding_model": path}
