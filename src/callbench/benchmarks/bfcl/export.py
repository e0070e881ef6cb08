"""Export a callbench run of the ``bfcl`` suite as BFCL FC-format result files.

Layout: ``<out>/<model>/<group>/BFCL_v4_<category>_result.json`` (group: non_live, live,
multi_turn, agentic, format_sensitivity; memory categories in ``agentic/memory/<backend>``, as
bfcl-eval's ``get_directory_structure_by_category`` places them), one JSON line per entry: ``id``,
``result``, ``input_token_count``, ``output_token_count``, ``latency``.  Single-turn ``result``:
``[{name: "<JSON arguments>"}]`` (or the text when the model made no call); multi-turn, memory
(questions and prerequisite conversations) and web search: turn -> step -> that step's response (the
calls ``[{name: "<JSON arguments>"}]``, or the text), as BFCL's FC inference loop stores it; an agentic
question is one turn.  Memory prerequisite conversations go to ``BFCL_v4_memory_<backend>_prereq_result.json``
beside the questions (``bfcl evaluate`` skips them, as it does its own), and their snapshots to
``memory_snapshot/`` there as bfcl-eval's backends write them (``prereq_checkpoints/<id>.json`` and each
scenario's ``<scenario>_final.json``: the last snapshot of the chain).
Format sensitivity (group ``format_sensitivity``): the answer text, as a prompt-mode model's result
holds it (``bfcl evaluate`` scores it only under a prompt-mode model name).
Errored records become ``"Error during inference: ..."`` as BFCL writes them.  ``bfcl evaluate``
needs a registered model name; the default is an FC model whose config sets ``underscore_to_dot``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from callbench.benchmarks.bfcl.data import (
    MEMORY,
    MULTI_TURN,
    PREREQ_SUFFIX,
    VERSION_PREFIX,
    WEB_SEARCH,
    result_folder,
)
from callbench.benchmarks.bfcl.format_sensitivity import CATEGORY as FORMAT_SENSITIVITY
from callbench.benchmarks.bfcl.format_sensitivity import answer_of, split_id
from callbench.benchmarks.bfcl.scorer import raw_arguments
from callbench.harness.runfolder import latest_records, read_records
from callbench.plugin import CaseRecord, UserError

DEFAULT_MODEL = "gpt-4o-2024-11-20-FC"
SNAPSHOT_FOLDER = "memory_snapshot"
"""Where bfcl-eval's memory backends keep their snapshots, inside the category's result folder."""


def group_of(category: str) -> str:
    """BFCL's result sub-folder for a category (``agentic/memory/kv`` for ``memory_kv`` and its
    prerequisite conversations)."""
    folder = result_folder(category)
    if folder is None:
        raise UserError(f"bfcl export: unsupported category {category!r}")
    return folder


def is_memory(category: str) -> bool:
    """A memory category or its prerequisite conversations."""
    return category.removesuffix(PREREQ_SUFFIX) in MEMORY


def _name(name: str, underscore_to_dot: bool) -> str:
    return name.replace(".", "_") if underscore_to_dot else name


def single_turn_result(record: CaseRecord, underscore_to_dot: bool) -> Any:
    """FC result of a single-turn record (calls of the first round, else its text)."""
    calls = [call for call in record.trace.calls if call.round == 1]
    if not calls:
        return record.trace.rounds[0].text if record.trace.rounds else record.trace.final_text
    return [{_name(call.tool, underscore_to_dot): raw_arguments(call)} for call in calls]


def multi_turn_result(record: CaseRecord, underscore_to_dot: bool) -> list[list[Any]]:
    """FC result of a multi-turn or memory record: turn -> step -> calls or text (every round is a step
    of the turn the executor's ``round_turns`` puts it in; a round that does not decode is stored as
    its calls' raw text, as BFCL stores the step it could not decode)."""
    round_turns = ((record.trace.final_state or {}).get("bfcl") or {}).get("round_turns", [])
    turns: list[list[Any]] = [[] for _ in range((max(round_turns) + 1) if round_turns else 0)]
    for info in record.trace.rounds:
        if info.index - 1 >= len(round_turns):
            continue
        turns[round_turns[info.index - 1]].append(_step(record, info.index, info.text, underscore_to_dot))
    return turns


def web_search_result(record: CaseRecord, underscore_to_dot: bool) -> list[list[Any]]:
    """FC result of a web search record: its one turn, every round a step (calls or text)."""
    return [[_step(record, info.index, info.text, underscore_to_dot) for info in record.trace.rounds]]


def _step(record: CaseRecord, index: int, text: str, underscore_to_dot: bool) -> Any:
    """One round as BFCL's FC handler stores a step: its calls ``[{name: "<JSON>"}]``, else its text."""
    calls = [call for call in record.trace.calls if call.round == index]
    if not calls:
        return text
    return [{_name(call.tool, underscore_to_dot): raw_arguments(call)} for call in calls]


def result_line(record: CaseRecord, underscore_to_dot: bool) -> dict[str, Any]:
    """One BFCL result line for a record."""
    if record.status == "error":
        result: Any = f"Error during inference: {record.error.message if record.error else 'unknown'}"
    elif record.category in MULTI_TURN or is_memory(record.category):
        result = multi_turn_result(record, underscore_to_dot)
    elif record.category in WEB_SEARCH:
        result = web_search_result(record, underscore_to_dot)
    elif record.category == FORMAT_SENSITIVITY:  # prompt mode: the answer text
        result = answer_of(record.trace, split_id(record.case_id)[0])[0]
    else:
        result = single_turn_result(record, underscore_to_dot)
    usage = record.trace.usage
    latency = sum((info.latency_ms or 0.0) for info in record.trace.rounds) / 1000
    return {
        "id": record.case_id,
        "result": result,
        "input_token_count": usage.input_tokens,
        "output_token_count": usage.output_tokens,
        "latency": latency,
    }


def export_run(
    run_dir: Path, out: Path, model: str = DEFAULT_MODEL, underscore_to_dot: bool = True
) -> list[Path]:
    """Write BFCL result files for every ``bfcl`` record of the run; returns the files written."""
    records = [r for r in latest_records(read_records(run_dir)) if r.suite == "bfcl" and r.trial == 1]
    if not records:
        raise UserError(f"{run_dir}: no records of the bfcl suite to export")
    by_category: dict[str, list[CaseRecord]] = {}
    for record in records:
        by_category.setdefault(record.category, []).append(record)
    written = []
    folder_name = model.replace("/", "_")
    for category, items in sorted(by_category.items()):
        target = out / folder_name / group_of(category) / f"{VERSION_PREFIX}_{category}_result.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        items.sort(key=lambda r: _id_key(r.case_id))
        lines = [json.dumps(result_line(r, underscore_to_dot), ensure_ascii=False) for r in items]
        target.write_text("\n".join(lines) + "\n", encoding="utf-8")
        written.append(target)
        if category.endswith(PREREQ_SUFFIX) and is_memory(category):
            copy_snapshots(run_dir, items, target.parent / SNAPSHOT_FOLDER)
    return written


def copy_snapshots(run_dir: Path, records: list[CaseRecord], folder: Path) -> list[Path]:
    """A memory category's snapshots where bfcl-eval's backends keep them: each prerequisite
    conversation's in ``prereq_checkpoints/<id>.json`` and, per scenario, the last one of the chain (in
    chain order, the one a question starts from) as ``<scenario>_final.json``."""
    from callbench.benchmarks.bfcl.memory_executor import SETTINGS_KEY, SnapshotStore

    written: list[Path] = []
    last: dict[str, tuple[int, Path]] = {}
    for record in records:
        memory = (record.trace.final_state or {}).get(SETTINGS_KEY) or {}
        store = SnapshotStore(run_dir, record.trial, record.category.removesuffix(PREREQ_SUFFIX))
        source = store.path(record.case_id)
        if record.status == "error" or not source.is_file():
            continue  # a conversation that failed wrote nothing, in BFCL too
        target = folder / "prereq_checkpoints" / source.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        written.append(target)
        scenario, position = memory.get("scenario"), memory.get("position")
        if isinstance(scenario, str) and isinstance(position, int):
            if scenario not in last or position > last[scenario][0]:
                last[scenario] = (position, source)
    for scenario, (_, source) in sorted(last.items()):
        target = folder / f"{scenario}_final.json"
        shutil.copyfile(source, target)
        written.append(target)
    return written


def _id_key(entry_id: str) -> tuple:
    if ":" in entry_id:  # format_sensitivity_<n>:<variant>:<id>
        return (int(entry_id.split(":")[0].rsplit("_", 1)[1]),)
    tail = entry_id.rsplit("_", 1)[-1]
    return tuple(int(part) if part.isdigit() else part for part in tail.split("-"))
