"""Benchmark: callbench's BFCL checker vs BFCL's own, on the same 3,641 single-turn outputs.

Prints (medians over --repeat runs):
* in-process throughput of both checkers (entries per CPU second, imports and data loading excluded);
* end-to-end CLI wall and CPU (user+sys) time: ``bfcl evaluate --test-category single_turn`` vs
  ``callbench bfcl score-results`` on the same result files (CPU time is the figure to trust
  on a loaded machine);
* with --agreement: verdict parity over the full ~47k perturbation set (tests/benchmarks/bfcl/perturb.py).

Outputs are oracle answers (first acceptable value per parameter, FC format), so most pass.
BFCL runs in the venv made by .ci/background.d/20-bfcl-venv.sh (CALLBENCH_BFCL_VENV overrides its place).

Usage: python bench/bfcl_checker.py [--repeat 3] [--agreement]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests" / "benchmarks" / "bfcl"))

from callbench.benchmarks.bfcl.data import SINGLE_TURN, data_dir, index, load_answers, load_questions  # noqa: E402 - after the path set-up
from callbench.benchmarks.bfcl.entry import judge_entry  # noqa: E402 - after the path set-up
from callbench.benchmarks.bfcl.export import group_of  # noqa: E402 - after the path set-up
from callbench.benchmarks.bfcl.options import BfclOptions  # noqa: E402 - after the path set-up
from callbench.benchmarks.bfcl.oracle import fc_result, gold_calls  # noqa: E402 - after the path set-up

MODEL = "gpt-4o-2024-11-20-FC"
VENV = Path(os.environ.get("CALLBENCH_BFCL_VENV", Path.home() / ".cache" / "callbench-bfcl-venv-2026.3.23"))


def oracle_rows(folder: Path) -> list[dict]:
    """One oracle output per single-turn entry (3,641)."""
    rows = []
    for category in SINGLE_TURN:
        answers = load_answers(category, folder)
        for entry in load_questions(category, folder):
            if category.endswith("irrelevance"):
                result = "None of the functions can be used."
            elif category == "live_relevance":
                result = fc_result([(entry["function"][0]["name"], {})], True)
            else:
                result = fc_result(gold_calls(entry, answers[entry["id"]], category), True)
            rows.append({"key": entry["id"], "id": entry["id"], "category": category, "result": result})
    return rows


def ours_in_process(rows: list[dict], folder: Path) -> float:
    entries, answers = index(SINGLE_TURN, folder)
    docs = {key: entry["function"] for key, entry in entries.items()}
    options = BfclOptions(underscore_to_dot=True)
    started = time.process_time()
    for row in rows:
        judge_entry(row["category"], docs[row["id"]], row["result"], answers.get(row["id"]), options)
    return time.process_time() - started


def bfcl_in_process(rows: list[dict], work: Path) -> float:
    source, target = work / "rows.jsonl", work / "verdicts.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    env = {**os.environ, "BFCL_PROJECT_ROOT": str(work / "ref-root")}
    done = subprocess.run(
        [
            str(VENV / "bin" / "python"),
            str(ROOT / "tests" / "benchmarks" / "bfcl" / "bfcl_reference.py"),
            MODEL,
            str(source),
            str(target),
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout.strip().splitlines()[-1])


def write_results(rows: list[dict], project: Path) -> Path:
    result_root = project / "result"
    by_category: dict[str, list[dict]] = {}
    for row in rows:
        by_category.setdefault(row["category"], []).append({"id": row["id"], "result": row["result"]})
    for category, items in by_category.items():
        path = result_root / MODEL / group_of(category) / f"BFCL_v4_{category}_result.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(item) + "\n" for item in items))
    return result_root


def timed(command: list[str], env: dict) -> tuple[float, float]:
    """(wall seconds, CPU seconds user+sys) of one run of ``command``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def median_times(command: list[str], env: dict, repeat: int) -> tuple[float, float]:
    runs = [timed(command, env) for _ in range(repeat)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def agreement(folder: Path, work: Path) -> tuple[int, int]:
    from perturb import build_outputs

    rows = build_outputs(folder)
    source, target = work / "all.jsonl", work / "all-verdicts.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    env = {**os.environ, "BFCL_PROJECT_ROOT": str(work / "ref-root")}
    subprocess.run(
        [
            str(VENV / "bin" / "python"),
            str(ROOT / "tests" / "benchmarks" / "bfcl" / "bfcl_reference.py"),
            MODEL,
            str(source),
            str(target),
        ],
        env=env,
        capture_output=True,
        check=True,
    )
    theirs = {item["key"]: item for item in map(json.loads, target.read_text().splitlines())}
    entries, answers = index(SINGLE_TURN, folder)
    docs = {key: entry["function"] for key, entry in entries.items()}
    options = BfclOptions(underscore_to_dot=True)
    same = 0
    for row in rows:
        ours = judge_entry(row["category"], docs[row["id"]], row["result"], answers.get(row["id"]), options)
        ref = theirs[row["key"]]
        same += (ours.valid, ours.error_type) == (ref["valid"], ref["error_type"])
    return same, len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--agreement", action="store_true")
    args = parser.parse_args()
    if not (VENV / "bin" / "python").is_file():
        sys.exit(f"BFCL venv missing at {VENV}; run .ci/background.d/20-bfcl-venv.sh")
    folder = data_dir()
    rows = oracle_rows(folder)
    with tempfile.TemporaryDirectory(prefix="bfcl-bench-") as tmp:
        work = Path(tmp)
        ours = statistics.median(ours_in_process(rows, folder) for _ in range(args.repeat))
        theirs = statistics.median(bfcl_in_process(rows, work) for _ in range(args.repeat))
        print(f"entries: {len(rows)} single-turn outputs (oracle, FC format)")
        print(f"in-process  callbench {len(rows) / ours:10.0f} entries/s ({ours:.3f} s)")
        print(f"in-process  bfcl-eval {len(rows) / theirs:10.0f} entries/s ({theirs:.3f} s)")
        print(f"in-process  ratio callbench/bfcl throughput: {theirs / ours:.2f}x")
        result_root = write_results(rows, work)
        env = {
            **os.environ,
            "BFCL_PROJECT_ROOT": str(work),
            "OPENAI_API_KEY": "unused",
            "PYTHONPATH": str(ROOT / "src"),
        }
        bfcl_cmd = [
            str(VENV / "bin" / "bfcl"),
            "evaluate",
            "--model",
            MODEL,
            "--test-category",
            "single_turn",
        ]
        ours_cmd = [sys.executable, "-m", "callbench.cli.main", "bfcl", "score-results", str(result_root)]
        bfcl_wall, bfcl_cpu = median_times(bfcl_cmd, env, args.repeat)
        ours_wall, ours_cpu = median_times(ours_cmd, env, args.repeat)
        print(
            f"end-to-end  bfcl evaluate --test-category single_turn: {bfcl_wall:6.2f} s wall, "
            f"{bfcl_cpu:6.2f} s CPU"
        )
        print(
            f"end-to-end  callbench bfcl score-results:       {ours_wall:6.2f} s wall, {ours_cpu:6.2f} s CPU"
        )
        print(
            f"end-to-end  ratio callbench/bfcl: {ours_wall / bfcl_wall:.2f} wall, "
            f"{ours_cpu / bfcl_cpu:.2f} CPU (target <= 0.20)"
        )
        if args.agreement:
            same, total = agreement(folder, work)
            print(f"agreement   {same}/{total} identical verdicts (valid + error_type)")


if __name__ == "__main__":
    main()
