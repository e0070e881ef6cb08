#!/usr/bin/env python
"""Record the shipped cassettes of the ``mcp-memory`` suite again, and the verdicts beside them.

Runs the suite live (Node.js and ``@modelcontextprotocol/server-memory`` at the pinned version, found
as the suite finds it: ``CALLBENCH_NPM_PREFIX`` or ``~/.cache/callbench/npm``) with the ``oracle`` and
``noisy:1`` agents under ``--record``, each into a fresh folder
``src/callbench/benchmarks/mcp_memory/cassettes/<agent>/``; replays each recording with no server and
checks that it gives the live run's verdicts; then writes ``cassettes/verdicts.json``. Needed after a
change to the cases, the system prompt, the bundled listing or the pinned version (a replay of stale
cassettes stops with one line: recorded for another suite or registry hash)::

    python scripts/record_mcp_memory.py
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import callbench
from callbench.benchmarks.mcp_memory.suite import CASSETTES
from callbench.benchmarks.mcp_memory.verdicts import RECORDED_AGENTS, verdict_table, write_verdicts


def main() -> int:
    tables = {}
    with tempfile.TemporaryDirectory(prefix="callbench-record-mcp-memory-") as tmp:
        for agent, name in RECORDED_AGENTS.items():
            folder = CASSETTES / name
            shutil.rmtree(folder, ignore_errors=True)
            live = callbench.run(
                "mcp-memory",
                agent,
                "all",
                out_dir=Path(tmp) / f"{name}-live",
                record=folder,
                progress="quiet",
                cache=False,
            )
            if live.summary["n_error"]:
                print(
                    f"{agent}: {live.summary['n_error']} error records; verdicts.json not written",
                    file=sys.stderr,
                )
                return 1
            replayed = callbench.run(
                "mcp-memory",
                agent,
                "all",
                out_dir=Path(tmp) / f"{name}-replay",
                replay=folder,
                progress="quiet",
                cache=False,
            )
            table = verdict_table(live.records)
            if verdict_table(replayed.records) != table:
                print(
                    f"{agent}: the replay of {folder} gave other verdicts than the live run", file=sys.stderr
                )
                return 1
            tables[agent] = table
            files = len(list((folder / "cases").iterdir()))
            print(f"{agent}: {len(table)} cases, {files} tapes -> {folder}")
    write_verdicts(CASSETTES, tables)
    print(f"verdicts -> {CASSETTES / 'verdicts.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
