"""Power planning: the planned number of cases × trials reaches the stated power in simulation, from
true variance parts and from pilot runs; the minimum detectable effect and the noise floor; `callbench
plan` from stated rates and from pilot run folders, and its bad input."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from synth import make_record, write_run

from callbench.errors import ConfigError
from callbench.power import (
    VarianceParts,
    cases_needed,
    from_pilot,
    from_rates,
    minimum_detectable_effect,
    noise_floor,
)
from callbench.stats import compare_runs

TIER = "native-function-contract"
SIMULATIONS = 1500
TOLERANCE = 0.045
"""Power within ±4.5 points of the plan: the binomial noise of 1,500 simulated studies (SD ≈ 1 point)
plus the normal approximation's own error at the sample sizes planned here."""


def population(size: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-case pass probabilities of two models that find the same cases hard (a shared difficulty
    on the logit scale) with B better by a case-varying margin."""
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(0.8, 1.2, size)
    margin = rng.normal(0.35, 0.5, size)
    a = 1 / (1 + np.exp(-difficulty))
    b = 1 / (1 + np.exp(-(difficulty + margin)))
    return a, b


def true_parts(a: np.ndarray, b: np.ndarray) -> VarianceParts:
    return VarianceParts(
        between=float(np.var(a - b)), within_one_trial=float(np.mean(a * (1 - a) + b * (1 - b)))
    )


def simulated_power(a: np.ndarray, b: np.ndarray, n: int, trials: int, seed: int) -> float:
    """Share of simulated studies (n cases drawn from the population, ``trials`` each) in which the
    paired two-sided test of the mean difference rejects at 0.05."""
    rng = np.random.default_rng(seed)
    rejected = 0
    for _ in range(SIMULATIONS):
        idx = rng.integers(0, len(a), n)
        sa = rng.binomial(trials, a[idx]) / trials
        sb = rng.binomial(trials, b[idx]) / trials
        d = sa - sb
        se = d.std(ddof=1) / np.sqrt(n)
        rejected += bool(se > 0 and abs(d.mean()) / se > 1.959964)
    return rejected / SIMULATIONS


@pytest.mark.parametrize("trials", [1, 3])
def test_the_planned_cases_reach_the_stated_power(trials: int) -> None:
    a, b = population(20_000, seed=1)
    delta = float(np.mean(a - b))
    n = cases_needed(delta, true_parts(a, b), trials, power=0.8)
    assert 50 < n < 2000
    assert abs(simulated_power(a, b, n, trials, seed=trials) - 0.8) < TOLERANCE


def test_a_plan_from_pilot_runs_reaches_the_power_too() -> None:
    """Two pilot runs (300 cases, 3 trials) estimate the variance parts; the plan made from them
    reaches the stated power on the population within the tolerance."""
    a, b = population(20_000, seed=2)
    rng = np.random.default_rng(5)
    idx = rng.integers(0, len(a), 300)
    pilot_a = {str(i): list(rng.random(3) < a[j]) for i, j in enumerate(idx)}
    pilot_b = {str(i): list(rng.random(3) < b[j]) for i, j in enumerate(idx)}
    parts, n_shared = from_pilot(pilot_a, pilot_b)
    truth = true_parts(a, b)
    assert n_shared == 300
    assert parts.within_one_trial == pytest.approx(truth.within_one_trial, rel=0.15)
    assert parts.between == pytest.approx(truth.between, abs=0.02)
    delta = float(np.mean(a - b))
    n = cases_needed(delta, parts, 2, power=0.9)
    assert abs(simulated_power(a, b, n, 2, seed=9) - 0.9) < TOLERANCE + 0.02  # the pilot's own error


def test_stated_rates_and_correlation() -> None:
    independent = from_rates(0.7, 0.75)
    correlated = from_rates(0.7, 0.75, 0.6)
    assert correlated.within_one_trial < independent.within_one_trial  # correlation helps a paired test
    assert cases_needed(0.05, independent, 1) == 1248  # (1.96 + 0.8416)² × 0.3975 / 0.05²
    with pytest.raises(ConfigError, match="rate B must be between 0 and 1"):
        from_rates(0.7, 1.2)
    with pytest.raises(ConfigError, match="impossible with rates"):
        from_rates(0.1, 0.9, 1.0)
    with pytest.raises(ConfigError, match="power must be between 0 and 1"):
        cases_needed(0.05, independent, 1, power=1.0)
    with pytest.raises(ConfigError, match="difference to detect"):
        cases_needed(0.0, independent, 1)


def test_the_minimum_detectable_effect_and_the_noise_floor() -> None:
    # The MDE is the difference the planned n detects: the two are inverses.
    parts = from_rates(0.6, 0.7)
    n = cases_needed(0.1, parts, 1)
    assert minimum_detectable_effect(parts.at_trials(1), n) == pytest.approx(0.1, rel=0.02)
    assert minimum_detectable_effect(0.2, 1) is None
    assert noise_floor(0.01, 100) == pytest.approx(1.959964 * 0.01, rel=1e-4)


def runs_with_trials(tmp_path: Path, skills: dict[str, float], n: int, trials: int) -> list[Path]:
    out = []
    for seed, (name, skill) in enumerate(skills.items()):
        rng = random.Random(seed)
        records = [
            make_record(i, rng=rng, skill=skill, trial=t, tiers=(TIER,))
            for i in range(n)
            for t in range(1, trials + 1)
        ]
        out.append(write_run(tmp_path / name, records, model=name))
    return out


def test_compare_prints_the_detectable_effect_and_the_noise_floor(tmp_path: Path) -> None:
    from callbench.report.tables import render_compare

    dirs = runs_with_trials(tmp_path, {"a": 0.8, "b": 0.6}, 60, 3)
    text = render_compare(dirs, "md")
    assert "Detectable (pts, 80% power)" in text and "Noise floor (pts)" in text
    row = next(
        line for line in text.split("## Paired comparisons")[1].splitlines() if line.startswith("| a (a) |")
    )
    assert "±" in row  # three trials each: the noise floor is known
    single = runs_with_trials(tmp_path / "one", {"a": 0.8, "b": 0.6}, 60, 1)
    from callbench.harness.runfolder import read_records
    from callbench.stats import record_view

    views = [[record_view(r) for r in read_records(d)] for d in single]
    out = compare_runs(views[0], views[1], TIER, resamples=200)
    assert out["noise_floor"] is None and out["noise_floor_note"] == "needs --trials 2 or more on both runs"
    assert out["mde"] is not None and 0 < out["mde"] < 1


def plan(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "callbench.cli.main", "plan", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_callbench_plan_from_pilot_runs_and_from_rates(tmp_path: Path) -> None:
    dirs = runs_with_trials(tmp_path, {"a": 0.8, "b": 0.65}, 40, 3)
    done = plan(str(dirs[0]), str(dirs[1]), "--delta", "0.05")
    assert done.returncode == 0, done.stderr
    assert "40 shared cases, up to 3 / 3 trials" in done.stdout and "noise floor: ±" in done.stdout
    assert "to detect a difference of 5.0 points with power 0.8" in done.stdout
    stated = plan("--rates", "0.70,0.75")
    assert stated.returncode == 0 and "1,248" in stated.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rates", "0.7"], "--rates: expected two numbers"),
        (["--rates", "0.7,abc"], "--rates: expected two numbers"),
        (["--rates", "0.7,1.5"], "rate B must be between 0 and 1"),
        (["--rates", "0.7,0.8", "--power", "1"], "power must be between 0 and 1"),
        (["--rates", "0.7,0.8", "--alpha", "0"], "alpha must be between 0 and 1"),
        ([], "give two pilot runs"),
        (["no-such-run", "other"], "no such run folder: no-such-run"),
    ],
)
def test_bad_plan_input_is_one_line(args: list[str], message: str) -> None:
    done = plan(*args)
    assert done.returncode == 2 and message in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_pilot_runs_without_shared_cases_are_one_line(tmp_path: Path) -> None:
    rng = random.Random(0)
    first = write_run(tmp_path / "x", [make_record(i, rng=rng, tiers=(TIER,)) for i in range(5)])
    second = write_run(
        tmp_path / "y", [make_record(i, rng=rng, tiers=(TIER,), suite="other") for i in range(5)]
    )
    done = plan(str(first), str(second))
    assert done.returncode == 2 and "share 0 case(s); planning needs at least 2" in done.stderr
