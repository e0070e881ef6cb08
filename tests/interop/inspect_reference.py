"""inspect_ai's own log reader and writer, for the interop tests: the reference they check against.

Usage (in the venv built by .ci/background.d/45-inspect-venv.sh; CALLBENCH_INSPECT_VENV overrides its
place)::

    <inspect venv>/bin/python inspect_reference.py read LOG [LOG ...]
    <inspect venv>/bin/python inspect_reference.py write < LOGS.json

It runs there, not in callbench's environment: inspect_ai is about 300 MB with its dependencies and
callbench does not need it (``callbench export inspect`` writes the zip itself, ``callbench import
inspect`` reads it itself), so the tests reach inspect_ai through a subprocess, the way the BFCL and τ²
tests reach their reference code. Several logs go through one process (the import of inspect_ai alone
takes seconds).

``read`` reads each LOG with ``inspect_ai.log.read_eval_log(LOG)`` (its defaults, as a user's script
would) and ``read_eval_log_sample_summaries(LOG)``, and prints one JSON object per LOG, in order::

    {"path": LOG, "log": EvalLog.model_dump(mode="json"), "summaries": [EvalSampleSummary dump]}

The dump is the whole log (header fields, ``eval`` spec, ``results`` with every scorer and its metrics,
``samples`` with their messages, scores, model usage and errors, ``reductions``), plus the one derived
value the tests read that a dump leaves out: ``text`` on every message of a sample's ``input``,
``messages`` and output choices (inspect's ``ChatMessage.text``, the text parts joined).

``write`` reads ``{"logs": [{"path": PATH, "log": {...}}, ...]}`` on stdin: each ``log`` is an
``EvalLog`` as JSON (``status``, ``eval``, ``samples``, ``results``: messages with ``role``, tool
calls, scores, model usage), validated into inspect_ai's own classes (``EvalLog``, ``EvalSpec``,
``EvalSample``, ``ChatMessageSystem``/``User``/``Assistant``, ``ToolCall``, ``Score``, ``ModelUsage``:
what constructing them does) and written with ``write_eval_log(log, PATH)``, in the format PATH's
suffix names (``.eval``: the zip, zstd-compressed as inspect_ai writes it; ``.json``: inspect's JSON
log). One ``{"path": PATH}`` line per log is printed.

Any failure is a traceback on stderr and a non-zero exit.
"""

from __future__ import annotations

import json
import sys
from typing import Any

USAGE = "usage: inspect_reference.py read LOG [LOG ...] | inspect_reference.py write < LOGS.json"


def _with_text(messages: Any, dumped: list[dict[str, Any]]) -> None:
    for message, out in zip(messages, dumped, strict=True):
        out["text"] = message.text


def read(path: str) -> dict[str, Any]:
    from inspect_ai.log import read_eval_log, read_eval_log_sample_summaries

    log = read_eval_log(path)
    data: dict[str, Any] = log.model_dump(mode="json")
    for sample, out in zip(log.samples or [], data.get("samples") or [], strict=True):
        _with_text(sample.messages, out["messages"])
        if not isinstance(sample.input, str):
            _with_text(sample.input, out["input"])
        for choice, choice_out in zip(sample.output.choices, out["output"]["choices"], strict=True):
            _with_text([choice.message], [choice_out["message"]])
    summaries = [summary.model_dump(mode="json") for summary in read_eval_log_sample_summaries(path)]
    return {"path": path, "log": data, "summaries": summaries}


def write(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from inspect_ai.log import EvalLog, write_eval_log

    written = []
    for entry in entries:
        log = EvalLog.model_validate(entry["log"])
        write_eval_log(log, entry["path"])
        written.append({"path": entry["path"]})
    return written


def main(argv: list[str]) -> int:
    if argv[:1] == ["read"] and len(argv) > 1:
        lines = [read(path) for path in argv[1:]]
    elif argv == ["write"]:
        lines = write(json.load(sys.stdin)["logs"])
    else:
        print(USAGE, file=sys.stderr)
        return 2
    for line in lines:
        print(json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
