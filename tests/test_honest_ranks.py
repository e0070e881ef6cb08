"""Honest ranks at every n: one declared test decides each paired comparison, and `compare` never
calls a difference significant that its own test does not support (n = 1, 3, 10, 30, 1,000)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from synth import make_record, write_run

from callbench import stats
from callbench.report.tables import render_compare

TIER = "native-function-contract"


def pair(outcomes_a: list[bool], outcomes_b: list[bool], *, errors_a: int = 0) -> tuple[list, list]:
    """Two runs' records on the same cases with the given pass/fail outcomes (A may also lose
    ``errors_a`` further cases to error records that B completed)."""
    rng = random.Random(0)
    a, b = [], []
    for i, (pa, pb) in enumerate(zip(outcomes_a, outcomes_b, strict=True)):
        a.append(make_record(i, rng=rng, skill=1.0 if pa else 0.0, tiers=(TIER,)))
        b.append(make_record(i, rng=rng, skill=1.0 if pb else 0.0, tiers=(TIER,)))
    n = len(outcomes_a)
    for i in range(n, n + errors_a):
        a.append(make_record(i, rng=rng, error_rate=1.0, tiers=(TIER,)))
        b.append(make_record(i, rng=rng, skill=1.0, tiers=(TIER,)))
    return a, b


def test_one_and_three_shared_cases_are_too_few_to_rank() -> None:
    """The reported defect: three cases A passes and B fails gave a degenerate bootstrap interval
    (−100 – −100) and a rank, while McNemar said p = 0.25."""
    for n in (1, 3, 5):
        out = stats.compare_runs(*pair([True] * n, [False] * n), TIER, resamples=200)
        assert out["n"] == n and out["rankable"] is False and out["significant"] is False
        assert out["decision"].startswith("too few shared cases to rank")
        assert out["mcnemar_p"] >= 0.05  # the test could not have said otherwise


def test_ten_cases_are_decided_by_the_exact_mcnemar_test() -> None:
    sweep = stats.compare_runs(*pair([True] * 10, [False] * 10), TIER, resamples=200)
    assert sweep["test"] == "mcnemar-exact" and sweep["significant"] and sweep["better"] == "a"
    assert sweep["mcnemar_p"] < 0.05 and "p = 0.00195" in sweep["decision"]
    # 6 of 10 discordant one way, 1 the other: p = 0.125 — not significant, whatever the bootstrap says.
    a = [True] * 6 + [False] + [True] * 3
    b = [False] * 6 + [True] + [True] * 3
    close = stats.compare_runs(*pair(a, b), TIER, resamples=200)
    assert close["mcnemar_p"] == pytest.approx(0.125)
    assert close["test"] == "mcnemar-exact" and not close["significant"] and close["better"] is None
    assert close["decision"].startswith("no significant difference")


def test_thirty_and_a_thousand_cases_are_decided_by_the_paired_bootstrap() -> None:
    rng = random.Random(7)
    for n, gap in ((30, 0.6), (1000, 0.1)):
        a = [rng.random() < 0.7 + gap / 2 for _ in range(n)]
        b = [rng.random() < 0.7 - gap / 2 for _ in range(n)]
        out = stats.compare_runs(*pair(a, b), TIER, resamples=500)
        assert out["test"] == "paired-bootstrap" and out["rankable"]
        assert out["significant"] == (out["difference"]["low"] > 0 or out["difference"]["high"] < 0)
        assert out["significant"] and out["better"] == "a", (n, out["decision"])
    same = [rng.random() < 0.5 for _ in range(1000)]
    tie = stats.compare_runs(*pair(same, same), TIER, resamples=500)
    assert not tie["significant"] and tie["better"] is None


def test_cases_lost_to_error_records_are_counted_and_left_out_of_the_pair() -> None:
    out = stats.compare_runs(*pair([True] * 10, [True] * 10, errors_a=4), TIER, resamples=200)
    assert out["n"] == 10 and out["errors_a"] == 4 and out["errors_b"] == 0


def runs(tmp_path: Path, outcomes: dict[str, list[bool]]) -> list[Path]:
    out = []
    rng = random.Random(1)
    for name, passes in outcomes.items():
        records: list[dict[str, Any]] = [
            make_record(i, rng=rng, skill=1.0 if ok else 0.0, tiers=(TIER,)) for i, ok in enumerate(passes)
        ]
        out.append(write_run(tmp_path / name, records, model=name))
    return out


def test_compare_on_three_shared_cases_ranks_nobody_and_says_why(tmp_path: Path) -> None:
    dirs = runs(tmp_path, {"oracle": [True] * 3, "refuse": [False] * 3, "half": [True, False, False]})
    text = render_compare(dirs, "md")
    board = text.split("## Paired comparisons")[0]
    assert "too few shared cases to rank" in board
    assert "| 1 |" not in board and "| =1 |" not in board
    assert text.count("too few shared cases to rank (n=3") == 3  # every pair says so


def test_compare_at_thirty_cases_ranks_by_the_declared_test(tmp_path: Path) -> None:
    dirs = runs(tmp_path, {"strong": [True] * 30, "weak": [i % 3 == 0 for i in range(30)]})
    text = render_compare(dirs, "md")
    board, pairs = text.split("## Paired comparisons")
    strong = next(line for line in board.splitlines() if "| strong |" in line)
    assert strong.startswith("| 1 |")
    assert "A better: paired bootstrap 95% interval" in pairs
    csv = render_compare(dirs, "csv")
    assert "paired-bootstrap" in csv and ",True," in csv
