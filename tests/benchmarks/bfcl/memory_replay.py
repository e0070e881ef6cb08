"""A callbench run of BFCL memory replayed through bfcl-eval's own inference-side code, in BFCL's order.

For every entry the run played, in the order BFCL's generation runs them (``load_dataset_entry``,
``clean_up_memory_prereq_entries``, ``populate_initial_settings_for_memory_test_cases``, sorted by
``sort_key``: every prerequisite conversation first, chain by chain, then the questions), bfcl-eval's
``execute_multi_turn_func_call`` makes the entry's backend instance (loading its snapshot from
bfcl-eval's own result folder, as its inference loop does), executes the calls the run recorded, step by
step, and flushes a prerequisite conversation's memory at its end. Compared with the run: the memory in
the entry's prompt, every call's answer, every snapshot flushed.

Used by ``test_memory.py`` and ``bench/bfcl_memory.py``. bfcl-eval caches instances by model name and
entry id in its module: each replay uses a fresh model name.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

SNAPSHOTS = "bfcl_memory"


def call_text(name: str, arguments: dict[str, Any]) -> str:
    """A call as BFCL's FC decoding writes it for execution."""
    return f"{name}({','.join(f'{key}={value!r}' for key, value in arguments.items())})"


def replay(
    records: dict[str, Any],
    run_dir: Path,
    categories: tuple[str, ...],
    work: Path,
    before_entry: Callable[[str], None] = lambda category: None,
    trial: int = 1,
) -> tuple[int, list[str]]:
    """(entries replayed, mismatches) for the records (by case id) of ``categories``."""
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import execute_multi_turn_func_call
    from bfcl_eval.utils import (
        clean_up_memory_prereq_entries,
        is_memory_prereq,
        load_dataset_entry,
        populate_initial_settings_for_memory_test_cases,
        sort_key,
    )

    model = f"reference_{uuid.uuid4().hex}"
    replayed, mismatches = 0, []
    for category in categories:
        entries = load_dataset_entry(category, include_language_specific_hint=False)
        entries = [entry for entry in entries if entry["id"] in records]
        entries = clean_up_memory_prereq_entries(entries)
        entries = populate_initial_settings_for_memory_test_cases(entries, work / "result" / model)
        for entry in sorted(entries, key=sort_key):
            before_entry(category)
            trace = records[entry["id"]].trace
            config, classes = entry["initial_config"], entry["involved_classes"]
            _, instances = execute_multi_turn_func_call([], config, classes, model, entry["id"])
            (instance,) = instances.values()
            prompt_memory = trace.final_state["bfcl_memory"]["memory_in_prompt"]
            if instance._dump_core_memory_to_context() != prompt_memory:
                mismatches.append(f"{entry['id']}: memory in the prompt")
            for number in range(1, len(trace.rounds) + 1):
                calls = [call for call in trace.calls if call.round == number and call.arguments is not None]
                if not calls:
                    continue
                texts = [call_text(call.tool, call.arguments) for call in calls]
                results, _ = execute_multi_turn_func_call(texts, config, classes, model, entry["id"])
                if results != [call.result for call in calls]:
                    mismatches.append(f"{entry['id']}: answers of round {number}")
            if is_memory_prereq(entry["id"]):
                instance._flush_memory_to_local_file()
                theirs = (instance.snapshot_folder / f"{entry['id']}.json").read_text()
                ours = run_dir / SNAPSHOTS / f"trial-{trial}" / category / f"{entry['id']}.json"
                if not ours.is_file() or ours.read_text() != theirs:
                    mismatches.append(f"{entry['id']}: snapshot")
            replayed += 1
    return replayed, mismatches
