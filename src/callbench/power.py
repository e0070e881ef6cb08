"""Power planning for paired comparisons of two models on the same cases: how many cases × trials
detect a given difference, the smallest difference a finished comparison could have detected, and
the run-to-run noise floor.

The model of one case: each model passes a trial of case i with its own probability (a_i, b_i); a
case's score is its pass rate over k trials. The paired difference of two runs' accuracies is the
mean over n cases of d_i = score_a,i − score_b,i, whose variance has two parts:

* **between cases**: Var(a_i − b_i), how much the true per-case difference varies (smaller when
  the two models find the same cases hard: positively correlated outcomes);
* **within cases**: (a_i(1 − a_i) + b_i(1 − b_i)) / k on average, the trial-to-trial noise, which
  more trials shrink.

With V_k = between + within_1 / k, a two-sided test at level α has power 1 − β against a true
difference δ when n ≥ (z_{1−α/2} + z_{1−β})² V_k / δ² (the normal approximation of the paired
test of the mean difference; the tests check it by simulation). The parts come from stated rates and
a correlation, or from pilot runs (method of moments over their shared cases and trials).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist

from callbench.errors import ConfigError

DEFAULT_POWER = 0.8
DEFAULT_ALPHA = 0.05


@dataclass(frozen=True)
class VarianceParts:
    """The two parts of the variance of one case's paired difference (see the module docstring)."""

    between: float
    """Var(a_i − b_i) over cases: the true per-case differences' spread."""
    within_one_trial: float
    """Mean of a_i(1 − a_i) + b_i(1 − b_i): one trial's noise, both models."""

    def at_trials(self, trials: int) -> float:
        """The variance of one case's difference when each model runs ``trials`` trials of it."""
        return self.between + self.within_one_trial / trials


def _z(p: float) -> float:
    return NormalDist().inv_cdf(p)


def check_level(name: str, value: float, *, low: float = 0.0, high: float = 1.0) -> float:
    """A rate, power or level strictly inside (low, high), else one clear line naming it."""
    if not isinstance(value, (int, float)) or math.isnan(value) or not low < value < high:
        raise ConfigError(f"{name} must be between {low:g} and {high:g} (exclusive), got {value!r}")
    return float(value)


def from_rates(rate_a: float, rate_b: float, correlation: float = 0.0) -> VarianceParts:
    """The variance parts when every case has the same pass rates (``rate_a``, ``rate_b``) and the
    two models' outcomes on a case correlate by ``correlation`` (0: independent; 1: as correlated as
    the rates allow). Trials of a case are then as independent as cases, so all the variance is
    per trial: between = 0, and the correlation lowers the within part."""
    a = check_level("rate A", rate_a)
    b = check_level("rate B", rate_b)
    if not -1.0 <= correlation <= 1.0:
        raise ConfigError(f"correlation must be between -1 and 1, got {correlation!r}")
    covariance = correlation * math.sqrt(a * (1 - a) * b * (1 - b))
    both = a * b + covariance
    if not (max(0.0, a + b - 1) - 1e-12 <= both <= min(a, b) + 1e-12):
        raise ConfigError(
            f"correlation {correlation:g} is impossible with rates {a:g} and {b:g} "
            "(the chance that both pass would leave [0, 1])"
        )
    only_a, only_b = a - both, b - both
    return VarianceParts(between=0.0, within_one_trial=only_a + only_b - (only_a - only_b) ** 2)


def from_pilot(
    outcomes_a: Mapping[str, Sequence[bool]], outcomes_b: Mapping[str, Sequence[bool]]
) -> tuple[VarianceParts, int]:
    """The variance parts estimated from two pilot runs' per-case trial outcomes, on the cases both
    have (method of moments: the observed variance of the per-case difference of rates, less the
    part its trials explain), and how many shared cases there were.

    Raises:
        ConfigError: when the runs share fewer than two cases.
    """
    shared = sorted(set(outcomes_a) & set(outcomes_b))
    if len(shared) < 2:
        raise ConfigError(f"the pilot runs share {len(shared)} case(s); planning needs at least 2")
    diffs, within = [], []
    for key in shared:
        ra, wa = _rate_and_noise(outcomes_a[key])
        rb, wb = _rate_and_noise(outcomes_b[key])
        diffs.append(ra - rb)
        within.append((wa, wb, len(outcomes_a[key]), len(outcomes_b[key])))
    mean = sum(diffs) / len(diffs)
    observed = sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1)
    explained = sum(wa / ka + wb / kb for wa, wb, ka, kb in within) / len(within)
    one_trial = sum(wa + wb for wa, wb, _, _ in within) / len(within)
    if all(ka == 1 and kb == 1 for _, _, ka, kb in within):
        # One trial each: trial noise cannot be told apart from case differences. All of it is
        # counted per trial, the cautious choice: more trials then look as useful as they can be.
        return VarianceParts(between=0.0, within_one_trial=observed), len(shared)
    return VarianceParts(between=max(0.0, observed - explained), within_one_trial=one_trial), len(shared)


def _rate_and_noise(trials: Sequence[bool]) -> tuple[float, float]:
    """A case's pass rate over its trials and the unbiased estimate of one trial's variance
    (0 from a single trial, which cannot show it)."""
    k = len(trials)
    rate = sum(trials) / k
    return rate, (rate * (1 - rate) * k / (k - 1) if k > 1 else 0.0)


def cases_needed(
    delta: float,
    parts: VarianceParts,
    trials: int,
    *,
    alpha: float = DEFAULT_ALPHA,
    power: float = DEFAULT_POWER,
) -> int:
    """Cases (each run ``trials`` times by both models) for a two-sided paired test at ``alpha`` to
    detect a true difference ``delta`` with probability ``power``."""
    if not 0 < abs(delta) < 1:
        raise ConfigError(f"the difference to detect must be between 0 and 1 (exclusive), got {delta!r}")
    check_level("alpha", alpha)
    check_level("power", power)
    z = _z(1 - alpha / 2) + _z(power)
    return max(2, math.ceil(z * z * parts.at_trials(trials) / (delta * delta)))


def minimum_detectable_effect(
    variance: float, n: int, *, alpha: float = DEFAULT_ALPHA, power: float = DEFAULT_POWER
) -> float | None:
    """The smallest true difference a paired test on ``n`` cases, whose per-case differences vary by
    ``variance``, detects with probability ``power`` (``None`` below two cases)."""
    if n < 2:
        return None
    return (_z(1 - alpha / 2) + _z(power)) * math.sqrt(variance / n)


def noise_floor(trial_noise: float, n: int, *, confidence: float = 0.95) -> float | None:
    """The run-to-run difference expected by chance: half the width of the interval within which two
    runs of the same configuration on the same ``n`` cases differ, given the mean per-case variance
    of the difference that trials alone cause (``trial_noise``); ``None`` when it cannot be told."""
    if n < 1:
        return None
    return _z(1 - (1 - confidence) / 2) * math.sqrt(trial_noise / n)
