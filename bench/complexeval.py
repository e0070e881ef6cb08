"""Benchmark: ComplexEval scoring speed on synthetic traces (no judge, default embedder).

Builds N traces of 5 calls each over the fixture's 5-call samples with a mix of behaviours (gold
path, wrong value, wrong function, extra call, early stop, parallel step split over turns) and
scores them with the ``complexeval`` scorer on one core. Prints traces/s (median of repeats),
the engine-only rate, and peak memory. Target: >= 2,000 traces/s.

    python bench/complexeval.py [--traces 10000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import time
import tracemalloc
from typing import Any

from callbench.benchmarks.complexfuncbench.definitions import CfbSettings
from callbench.benchmarks.complexfuncbench.embedders import CharNgramEmbedder
from callbench.benchmarks.complexfuncbench.engine import Episode
from callbench.benchmarks.complexfuncbench.outcome import finish
from callbench.benchmarks.complexfuncbench.scorer import ComplexEvalScorer, trace_turns
from callbench.benchmarks.complexfuncbench.suite import case_sample, load_suite
from callbench.types.trace import Trace, trace_from_calls

FIVE_CALL_SAMPLES = ("Hotels-0", "Hotels-1", "Flights-0")
BEHAVIOURS = ("gold", "gold", "wrong_value", "wrong_function", "extra_call", "early_stop", "split_parallel")


def _turns(case: Any, behaviour: str, rng: random.Random) -> list[list[tuple[str, dict[str, Any]]]]:
    names = case.executor_config["names"]
    sample, _ = case_sample(case)
    turns = [[(names.get(c.name, c.name), dict(c.arguments)) for c in step] for step in sample.steps]
    flat = [(t, j) for t, turn in enumerate(turns) for j in range(len(turn))]
    t, j = rng.choice(flat)
    name, args = turns[t][j]
    if behaviour == "wrong_value":
        key = rng.choice(sorted(args))
        turns[t][j] = (name, {**args, key: f"{args[key]}x"})
    elif behaviour == "wrong_function":
        other = rng.choice([n for n in names.values() if n != name] or [name])
        turns[t][j] = (other, args)
    elif behaviour == "extra_call":
        turns[-1] = turns[-1][:-1] + [turns[-1][-1], turns[-1][-1]]
        turns[0] = turns[0][1:] or turns[0]
    elif behaviour == "early_stop":
        turns = turns[:-1] + [[turns[-2][0]]] if len(turns) > 1 else turns
    elif behaviour == "split_parallel":
        turns = [[call] for turn in turns for call in turn]
    calls = [c for turn in turns for c in turn][:5]
    # Re-split the first five calls into turns of the same shape.
    out, k = [], 0
    for turn in turns:
        if k >= len(calls):
            break
        out.append(calls[k : k + len(turn)])
        k += len(turn)
    return out


def build(n: int, seed: int = 7) -> list[tuple[Any, Trace]]:
    suite = load_suite("complexfuncbench:fixture")
    cases = [c for c in suite.cases if c.id in FIVE_CALL_SAMPLES]
    rng = random.Random(seed)
    items = []
    for i in range(n):
        case = cases[i % len(cases)]
        turns = _turns(case, rng.choice(BEHAVIOURS), rng)
        calls = [
            {"tool": name, "arguments": args, "round": r}
            for r, turn in enumerate(turns, start=1)
            for name, args in turn
        ]
        items.append((case, trace_from_calls(calls, final_text="Done.")))
    return items


def time_scorer(items: list[tuple[Any, Trace]]) -> tuple[float, int]:
    scorer = ComplexEvalScorer(load_suite("complexfuncbench:fixture"))
    start = time.perf_counter()
    passed = sum(scorer.score(case, trace).passed for case, trace in items)
    return time.perf_counter() - start, passed


def time_engine(items: list[tuple[Any, Trace]]) -> float:
    settings, embedder = CfbSettings(), CharNgramEmbedder()
    parsed = {c.id: case_sample(c) for c, _ in items[:10]}
    start = time.perf_counter()
    for case, trace in items:
        sample, names = parsed[case.id]
        episode = Episode(sample, settings, embedder)
        for turn in trace_turns(trace, names):
            episode.play_turn(turn)
        finish(episode, trace.stop_reason)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    items = build(args.traces)
    calls = sum(len(t.calls) for _, t in items)
    scorer_times, engine_times = [], []
    for _ in range(args.repeats):
        elapsed, passed = time_scorer(items)
        scorer_times.append(elapsed)
        engine_times.append(time_engine(items))
    tracemalloc.start()
    time_scorer(items[:1000])
    _, peak_scoring = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    scorer_rate = args.traces / statistics.median(scorer_times)
    engine_rate = args.traces / statistics.median(engine_times)
    print(
        f"traces: {args.traces} ({calls / args.traces:.2f} calls each), passed: {passed}, "
        f"repeats: {args.repeats}"
    )
    print(f"complexeval scorer (case+trace -> verdict): {scorer_rate:,.0f} traces/s (median)")
    print(f"episode engine only (mapping + golden path): {engine_rate:,.0f} traces/s (median)")
    print(
        f"target >= 2,000 traces/s: {'met' if scorer_rate >= 2000 else 'NOT met'} "
        f"(scorer/target ratio {scorer_rate / 2000:.2f})"
    )
    print(
        f"peak Python heap while scoring 1,000 traces: {peak_scoring / 2**20:.1f} MiB; "
        f"process peak RSS (incl. the {args.traces} traces held in memory): {rss_mib:.0f} MiB"
    )


if __name__ == "__main__":
    main()
