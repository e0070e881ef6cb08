"""BFCL's own placement of the memory system prompt (runs inside the BFCL venv).

Usage: python memory_reference.py INPUT.jsonl OUTPUT.jsonl
INPUT lines: {"key", "category", "scenario", "question": [[message, ...], ...], "dump"}: an entry's turns
as its data holds them (a question with BFCL's answer-format system message already in front, as
``process_agentic_test_case`` puts it) and the text its memory backend dumps for the prompt.
OUTPUT lines: {"key", "first_turn": [message, ...]}: the first turn after
``add_memory_instruction_system_prompt``, as BFCL's inference loop sends it.
"""

import json
import os
import sys
import tempfile

os.environ.setdefault("BFCL_PROJECT_ROOT", tempfile.mkdtemp(prefix="bfcl-root-"))

from bfcl_eval.model_handler.utils import add_memory_instruction_system_prompt


class Dumped:
    """A memory backend as the prompt function sees it: only its dump."""

    def __init__(self, text):
        self.text = text

    def _dump_core_memory_to_context(self):
        return self.text


def main(source, target):
    with open(source) as handle:
        rows = [json.loads(line) for line in handle]
    out = []
    for row in rows:
        turns = add_memory_instruction_system_prompt(
            row["question"], row["category"], row["scenario"], Dumped(row["dump"])
        )
        out.append({"key": row["key"], "first_turn": turns[0]})
    with open(target, "w") as handle:
        handle.writelines(json.dumps(item) + "\n" for item in out)


if __name__ == "__main__":
    main(*sys.argv[1:3])
