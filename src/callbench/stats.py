"""Statistics over case records: intervals, paired comparisons, repeated trials.

Every figure here is computed inside one *stratum*: a single scoring tier (scorer name) and a
single harness mode. Pooling across tiers or modes would mix incomparable pass rules, so the
functions that take records refuse it with :class:`~callbench.errors.PoolingError`.

Pure functions over plain numbers and record dicts (the lines of ``records.jsonl``); the random
generator is seeded so every interval is reproducible.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from callbench.errors import PoolingError

if TYPE_CHECKING:
    import numpy as np

DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 20240917
SMALL_CLUSTER_COUNT = 20
"""Below this many clusters the cluster bootstrap is widened (see :func:`accuracy_interval`)."""

Record = Mapping[str, Any]


@dataclass(frozen=True)
class Interval:
    """A point estimate with a two-sided confidence interval."""

    estimate: float
    low: float
    high: float
    method: str

    def as_dict(self) -> dict[str, Any]:
        return {"estimate": self.estimate, "low": self.low, "high": self.high, "method": self.method}


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> Interval:
    """Wilson score interval for a binomial proportion.

    Args:
        successes: Number of passes.
        n: Number of trials; ``0`` gives the uninformative interval ``[0, 1]``.
        confidence: Two-sided confidence level.
    """
    if n <= 0:
        return Interval(0.0, 0.0, 1.0, "wilson")
    if not 0 <= successes <= n:
        raise ValueError(f"successes={successes} outside 0..{n}")
    p = successes / n
    low, high = _wilson_at(p, n, confidence)
    # Clamp the rounding noise at the edges (k == 0 or k == n give exactly 0 or 1).
    return Interval(p, 0.0 if successes == 0 else low, 1.0 if successes == n else high, "wilson")


def bootstrap_interval(
    values: Sequence[float],
    clusters: Sequence[str] | None = None,
    *,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Interval:
    """Percentile bootstrap interval of the mean, optionally resampling whole clusters.

    With ``clusters`` (for example the template each case was generated from, or the case key
    when a case has several trials) whole clusters are drawn with replacement, so correlated
    values do not narrow the interval falsely.
    """
    import numpy as np  # on first use: summaries without a bootstrap never pay for the import

    vals = np.asarray(values, dtype=float)
    if vals.size == 0:
        return Interval(0.0, 0.0, 1.0, "bootstrap")
    labels = list(clusters) if clusters is not None else [str(i) for i in range(vals.size)]
    sums, counts = _cluster_totals(vals, labels)
    means = _resample_means(sums, counts, resamples, seed)
    low, high = _percentiles(means, confidence)
    method = "cluster-bootstrap" if clusters is not None and len(sums) < vals.size else "bootstrap"
    return Interval(float(vals.mean()), low, high, method)


def _cluster_totals(vals: np.ndarray, labels: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    if len(labels) != vals.size:
        raise ValueError("clusters must have one label per value")
    import numpy as np

    index: dict[str, int] = {}
    ids = np.fromiter((index.setdefault(label, len(index)) for label in labels), dtype=int, count=vals.size)
    sums = np.bincount(ids, weights=vals, minlength=len(index))
    counts = np.bincount(ids, minlength=len(index)).astype(float)
    return sums, counts


def _resample_means(sums: np.ndarray, counts: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    # Ratio estimator: resampled clusters' total passes over their total size. Done in chunks so
    # 10,000 clusters x 2,000 resamples never builds one huge index matrix.
    import numpy as np

    rng = np.random.default_rng(seed)
    k = sums.size
    out = np.empty(resamples)
    chunk = max(1, 2_000_000 // max(k, 1))
    for start in range(0, resamples, chunk):
        stop = min(resamples, start + chunk)
        draw = rng.integers(0, k, size=(stop - start, k))
        out[start:stop] = sums[draw].sum(axis=1) / counts[draw].sum(axis=1)
    return out


def _percentiles(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    import numpy as np

    alpha = (1 - confidence) / 2
    low, high = np.quantile(samples, [alpha, 1 - alpha])
    return float(low), float(high)


@dataclass(frozen=True)
class PairedComparison:
    """Model A minus model B on the cases both ran, with a bootstrap CI and McNemar's test."""

    n: int
    accuracy_a: float
    accuracy_b: float
    difference: Interval
    only_a: int
    """Cases A passed and B failed."""
    only_b: int
    """Cases B passed and A failed."""
    mcnemar_p: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "accuracy_a": self.accuracy_a,
            "accuracy_b": self.accuracy_b,
            "difference": self.difference.as_dict(),
            "only_a": self.only_a,
            "only_b": self.only_b,
            "mcnemar_p": self.mcnemar_p,
        }


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pair counts."""
    from scipy.stats import binomtest  # imported lazily: scipy.stats costs ~1 s at start-up

    n = only_a + only_b
    if n == 0:
        return 1.0
    return float(binomtest(only_a, n, 0.5, alternative="two-sided").pvalue)


def paired_comparison(
    a: Sequence[bool],
    b: Sequence[bool],
    clusters: Sequence[str] | None = None,
    *,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> PairedComparison:
    """Compare two aligned pass vectors (same cases, same order).

    The difference interval is a (cluster) bootstrap of the per-case differences; McNemar's
    exact test uses the discordant pairs.
    """
    if len(a) != len(b):
        raise ValueError("paired vectors must have the same length")
    import numpy as np

    va = np.asarray(a, dtype=float)
    vb = np.asarray(b, dtype=float)
    diff = bootstrap_interval(va - vb, clusters, confidence=confidence, resamples=resamples, seed=seed)
    only_a = int(np.sum((va == 1) & (vb == 0)))
    only_b = int(np.sum((va == 0) & (vb == 1)))
    n = len(a)
    return PairedComparison(
        n=n,
        accuracy_a=float(va.mean()) if n else 0.0,
        accuracy_b=float(vb.mean()) if n else 0.0,
        difference=Interval(diff.estimate, diff.low, diff.high, "paired-" + diff.method),
        only_a=only_a,
        only_b=only_b,
        mcnemar_p=mcnemar_exact(only_a, only_b),
    )


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k: chance that at least one of k trials drawn from n passes (c passed)."""
    _check_counts(n, c, k)
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k: chance that all of k trials drawn from n pass (c passed)."""
    _check_counts(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def _check_counts(n: int, c: int, k: int) -> None:
    if not (0 <= c <= n and 1 <= k <= n):
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n} c={c} k={k}")


def disagreement(n: int, c: int) -> float:
    """Chance that two different trials of one case disagree (0 when stable)."""
    if n < 2:
        return 0.0
    return 2 * c * (n - c) / (n * (n - 1))


def trial_statistics(outcomes: Mapping[str, Sequence[bool]]) -> dict[str, Any]:
    """pass@k, pass^k and flip rate over cases that have several trials.

    Args:
        outcomes: Case key -> pass flags of its trials.

    Returns:
        ``trials`` (the smallest trial count shared by all cases), ``pass_at_k`` and
        ``pass_hat_k`` for k = 1..trials averaged over cases, ``flip_rate`` (share of cases
        whose trials do not all agree), ``mean_disagreement`` and the ``flipping_cases`` keys.
    """
    multi = {key: list(v) for key, v in outcomes.items() if len(v) >= 2}
    counts = [(len(v), sum(v)) for v in multi.values()]
    flipping = sorted(key for key, v in multi.items() if 0 < sum(v) < len(v))
    return trial_figures(len(outcomes), counts, flipping)


def trial_figures(n_cases: int, counts: Sequence[tuple[int, int]], flipping: list[str]) -> dict[str, Any]:
    """:func:`trial_statistics` from compact numbers: ``counts`` holds (trials, passes) of each case
    with two trials or more, in first-seen order; ``flipping`` the sorted keys of those that flip.
    The streaming summary calls it without holding the records."""
    if not counts:
        return {"trials": 1, "cases": n_cases}
    kmax = min(n for n, _c in counts)
    return {
        "trials": kmax,
        "cases": len(counts),
        "pass_at_k": {str(k): _mean(pass_at_k(n, c, k) for n, c in counts) for k in range(1, kmax + 1)},
        "pass_hat_k": {str(k): _mean(pass_hat_k(n, c, k) for n, c in counts) for k in range(1, kmax + 1)},
        "flip_rate": len(flipping) / len(counts),
        "mean_disagreement": _mean(disagreement(n, c) for n, c in counts),
        "flipping_cases": flipping,
    }


def _mean(values: Iterable[float]) -> float:
    vals = list(values)
    return sum(vals) / len(vals) if vals else 0.0


def _z(confidence: float) -> float:
    from statistics import NormalDist  # stdlib: no scipy import for every summary

    return float(NormalDist().inv_cdf(1 - (1 - confidence) / 2))


# --- records -------------------------------------------------------------------------------


_VIEW_FIELDS = (
    "key",
    "suite",
    "case_id",
    "category",
    "trial",
    "status",
    "harness_mode",
    "template",
    "metadata",
    "retrieval_recall",
)


def record_view(record: Any) -> Record:
    """The fields statistics read, from a record dict or a ``CaseRecord`` (its trace is skipped)."""
    if isinstance(record, Mapping):
        return record
    view = {name: getattr(record, name, None) for name in _VIEW_FIELDS}
    view["verdicts"] = {
        tier: {"passed": v.passed, "partial": v.partial, "applicable": v.applicable}
        for tier, v in (getattr(record, "verdicts", None) or {}).items()
    }
    return view


def tiers_of(records: Iterable[Record]) -> list[str]:
    """Scoring tiers (scorer names) present in the records, in first-seen order."""
    seen: dict[str, None] = {}
    for rec in records:
        for name, verdict in (rec.get("verdicts") or {}).items():
            if verdict.get("applicable") is not False:  # a scorer that judged nothing has no figures
                seen.setdefault(name, None)
    return list(seen)


def harness_mode(record: Record) -> str:
    """The record's harness mode (``"default"`` when the record does not say)."""
    return str(record.get("harness_mode") or "default")


def template_of(record: Record) -> str | None:
    """Template a case was generated from, when the record names one."""
    meta = record.get("metadata") or {}
    value = record.get("template") or (meta.get("template") if isinstance(meta, Mapping) else None)
    return str(value) if value else None


def strata(records: Iterable[Record]) -> dict[tuple[str, str], list[Record]]:
    """Split records into (tier, harness mode) strata; a record appears once per tier it has.

    Error records (no verdicts) are attached to every tier of their harness mode so that each
    stratum counts its errors.
    """
    recs = list(records)
    tiers = tiers_of(recs)
    out: dict[tuple[str, str], list[Record]] = defaultdict(list)
    for rec in recs:
        verdicts = rec.get("verdicts") or {}
        for tier in tiers:
            if (tier in verdicts and verdicts[tier].get("applicable") is not False) or rec.get(
                "status"
            ) == "error":
                out[(tier, harness_mode(rec))].append(rec)
    return dict(out)


def ensure_one_stratum(records: Sequence[Record], tier: str) -> str:
    """Return the single harness mode of ``records``; raise PoolingError when they mix modes."""
    modes = sorted({harness_mode(r) for r in records})
    if len(modes) > 1:
        raise PoolingError(
            f"refusing to pool tier {tier!r} across harness modes {', '.join(modes)}; "
            "compute figures per harness mode"
        )
    missing = [
        r.get("key") for r in records if r.get("status") != "error" and tier not in (r.get("verdicts") or {})
    ]
    if missing:
        raise PoolingError(f"records {missing[:3]} have no verdict for tier {tier!r}; tiers are never mixed")
    return modes[0] if modes else "default"


def passed(record: Record, tier: str) -> bool:
    """Strict pass flag of a completed record under ``tier``."""
    return bool(((record.get("verdicts") or {}).get(tier) or {}).get("passed"))


def partial(record: Record, tier: str) -> float | None:
    """Diagnostic partial score of a record under ``tier`` (None when the scorer gave none)."""
    value = ((record.get("verdicts") or {}).get(tier) or {}).get("partial")
    return float(value) if isinstance(value, int | float) else None


def case_key(record: Record) -> str:
    """Stable case identity across trials and runs (``suite:id``)."""
    return str(record.get("key") or f"{record.get('suite')}:{record.get('case_id')}")


def accuracy_interval(records: Sequence[Record], tier: str, confidence: float = 0.95) -> Interval:
    """Strict accuracy of completed records with a 95% interval.

    Wilson when every case appears once and no two cases share a template; otherwise a cluster
    bootstrap over templates (or over cases, when only trials repeat them). With fewer than
    ``SMALL_CLUSTER_COUNT`` clusters the bootstrap interval is widened to contain the Wilson
    interval over clusters, and at 0% or 100% that Wilson interval is used alone.
    """
    done = [r for r in records if r.get("status") != "error"]
    flags = [passed(r, tier) for r in done]
    clusters = [template_of(r) or case_key(r) for r in done]
    n_clusters = len(set(clusters))
    if n_clusters == len(clusters) or all(flags) or not any(flags):
        return clustered_accuracy(sum(flags), len(flags), n_clusters, None, confidence)
    import numpy as np

    sums, counts = _cluster_totals(np.asarray(flags, dtype=float), clusters)
    return clustered_accuracy(sum(flags), len(flags), n_clusters, (sums, counts), confidence)


def clustered_accuracy(
    passes: int,
    n: int,
    n_clusters: int,
    totals: tuple[np.ndarray, np.ndarray] | None,
    confidence: float = 0.95,
) -> Interval:
    """:func:`accuracy_interval` from compact numbers: pass and record counts, the number of distinct
    clusters, and (needed only when clusters repeat and outcomes differ) the per-cluster pass sums
    and sizes in first-seen order."""
    if n_clusters == n:
        return wilson_interval(passes, n, confidence)
    if passes in (0, n):
        # A percentile bootstrap collapses to [0, 0] or [1, 1] here; Wilson over the number of
        # independent clusters gives an honest interval instead.
        iv = wilson_interval(passes and n_clusters, n_clusters, confidence)
        return Interval(iv.estimate, iv.low, iv.high, "wilson-clusters")
    assert totals is not None, "cluster totals are needed for a bootstrap"
    sums, counts = totals
    means = _resample_means(sums, counts, DEFAULT_RESAMPLES, DEFAULT_SEED)
    low, high = _percentiles(means, confidence)
    # the mean of 0/1 values: an exact integer sum over n, as numpy's mean computes it
    boot = Interval(passes / n, low, high, "cluster-bootstrap")
    if n_clusters >= SMALL_CLUSTER_COUNT:
        return boot
    # Percentile bootstraps are too narrow with few clusters; widen to a Wilson interval that
    # treats each cluster as one observation at the same point estimate.
    wide = _wilson_at(boot.estimate, n_clusters, confidence)
    return Interval(
        boot.estimate, min(boot.low, wide[0]), max(boot.high, wide[1]), "cluster-bootstrap+wilson"
    )


def _wilson_at(p: float, n: float, confidence: float) -> tuple[float, float]:
    """Wilson bounds for proportion ``p`` observed over ``n`` independent units."""
    z = _z(confidence)
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def stratum_statistics(records: Sequence[Record], tier: str) -> dict[str, Any]:
    """All figures for one (tier, harness mode) stratum; raises PoolingError on mixed input."""
    mode = ensure_one_stratum(records, tier)
    done = [r for r in records if r.get("status") != "error"]
    partials = [p for p in (partial(r, tier) for r in done) if p is not None]
    outcomes: dict[str, list[bool]] = defaultdict(list)
    for rec in done:
        outcomes[case_key(rec)].append(passed(rec, tier))
    return {
        "tier": tier,
        "harness_mode": mode,
        "n": len(done),
        "cases": len(outcomes),
        "passed": sum(passed(r, tier) for r in done),
        "errors": len(records) - len(done),
        "accuracy": accuracy_interval(records, tier).as_dict(),
        "partial_mean_diagnostic": _mean(partials) if partials else None,
        "by_category": _by_field(done, tier, "category"),
        "by_suite": _by_field(done, tier, "suite"),
        "trials": trial_statistics(outcomes),
        "retrieval_recall": _recall(done),
    }


def _by_field(done: Sequence[Record], tier: str, field: str) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[Record]] = defaultdict(list)
    for rec in done:
        groups[str(rec.get(field) or "-")].append(rec)
    return {
        name: {
            "n": len(rs),
            "passed": sum(passed(r, tier) for r in rs),
            "accuracy": accuracy_interval(rs, tier).as_dict(),
        }
        for name, rs in sorted(groups.items())
    }


def _recall(done: Sequence[Record]) -> float | None:
    values = [
        float(r["retrieval_recall"]) for r in done if isinstance(r.get("retrieval_recall"), int | float)
    ]
    return _mean(values) if values else None


def statistics_summary(records: Iterable[Any]) -> dict[str, Any]:
    """Statistics for ``summary.json``: one entry per (tier, harness mode), never pooled.

    Args:
        records: Record dicts (lines of ``records.jsonl``) or ``CaseRecord`` objects.

    Returns:
        ``{"strata": [stratum_statistics(...), ...], "confidence": 0.95}``, strata sorted by
        tier then harness mode.
    """
    groups = strata(record_view(r) for r in records)
    return {
        "confidence": 0.95,
        "strata": [stratum_statistics(recs, tier) for (tier, _mode), recs in sorted(groups.items())],
    }


ALPHA = 0.05
"""Significance level of every comparison (two-sided), matching the 95% intervals shown."""
MIN_BOOTSTRAP_N = 30
"""Below this many shared cases the paired bootstrap is not used to decide: its interval of a mean of
-1/0/+1 differences is coarse and can be degenerate (three cases A fails and B passes give the
interval −100 – −100), so the exact McNemar (sign) test on the discordant cases decides instead."""


def smallest_mcnemar_p(n: int) -> float:
    """The smallest two-sided p-value an exact McNemar test on ``n`` paired cases can reach (all
    ``n`` discordant, one way)."""
    return min(1.0, 2 * 0.5**n) if n > 0 else 1.0


def declared_test(n: int, only_a: int, only_b: int, mcnemar_p: float, difference: Interval) -> dict[str, Any]:
    """The one test that decides a paired comparison, and what it decides.

    * fewer shared cases than it takes any outcome to reach p < :data:`ALPHA` (five or fewer):
      ``rankable`` False, "too few shared cases to rank";
    * under :data:`MIN_BOOTSTRAP_N` shared cases: exact McNemar on the discordant cases,
      significant when p < ALPHA;
    * from :data:`MIN_BOOTSTRAP_N` on: the paired bootstrap, significant when its 95% interval of
      A − B excludes 0.

    Returns ``test`` (``mcnemar-exact`` or ``paired-bootstrap``), ``rankable``, ``significant``,
    ``better`` (``"a"``, ``"b"`` or ``None``) and ``decision`` (one line saying why)."""
    if smallest_mcnemar_p(n) >= ALPHA:
        return {
            "test": "mcnemar-exact",
            "rankable": False,
            "significant": False,
            "better": None,
            "decision": f"too few shared cases to rank (n={n}: no outcome reaches p < {ALPHA:g})",
        }
    if n < MIN_BOOTSTRAP_N:
        significant = mcnemar_p < ALPHA and only_a != only_b
        better = ("a" if only_a > only_b else "b") if significant else None
        why = f"exact McNemar p = {mcnemar_p:.3g} ({only_a} / {only_b} discordant)"
        test = "mcnemar-exact"
    else:
        significant = difference.low > 0 or difference.high < 0
        better = ("a" if difference.low > 0 else "b") if significant else None
        why = f"paired bootstrap 95% interval {100 * difference.low:.1f} – {100 * difference.high:.1f} pts"
        test = "paired-bootstrap"
    verdict = f"{better.upper()} better" if better else "no significant difference"
    return {
        "test": test,
        "rankable": True,
        "significant": significant,
        "better": better,
        "decision": f"{verdict}: {why}",
    }


def compare_runs(
    a: Sequence[Record], b: Sequence[Record], tier: str, *, resamples: int = DEFAULT_RESAMPLES
) -> dict[str, Any]:
    """Paired comparison of two runs on the cases both completed, within one tier and mode.

    Trials of a case are averaged into its pass rate first; McNemar then uses majority verdicts.

    Raises:
        PoolingError: when the runs use different harness modes or mix them.
    """
    mode_a, mode_b = ensure_one_stratum(a, tier), ensure_one_stratum(b, tier)
    if mode_a != mode_b:
        raise PoolingError(f"cannot compare harness mode {mode_a!r} with {mode_b!r} (tier {tier!r})")
    rate_a, rate_b = _case_rates(a, tier), _case_rates(b, tier)
    shared = sorted(set(rate_a) & set(rate_b))
    cmp = paired_comparison(
        [rate_a[k] >= 0.5 for k in shared], [rate_b[k] >= 0.5 for k in shared], resamples=resamples
    )
    diffs = [rate_a[k] - rate_b[k] for k in shared]
    templates = _templates(a)
    interval = bootstrap_interval(diffs, [templates.get(k, k) for k in shared], resamples=resamples)
    difference = Interval(interval.estimate, interval.low, interval.high, "paired-" + interval.method)
    result = cmp.as_dict()
    result.update(
        tier=tier,
        harness_mode=mode_a,
        accuracy_a=_mean(rate_a[k] for k in shared),
        accuracy_b=_mean(rate_b[k] for k in shared),
        difference=difference.as_dict(),
        disagreeing=[k for k in shared if (rate_a[k] >= 0.5) != (rate_b[k] >= 0.5)],
        # Cases a run has only error records for: out of the pairing, said so beside every comparison.
        errors_a=len(_lost_to_errors(a) - set(rate_a)),
        errors_b=len(_lost_to_errors(b) - set(rate_b)),
        **declared_test(cmp.n, cmp.only_a, cmp.only_b, cmp.mcnemar_p, difference),
        **sensitivity(case_outcomes(a, tier), case_outcomes(b, tier), shared),
    )
    return result


def sensitivity(
    outcomes_a: Mapping[str, Sequence[bool]], outcomes_b: Mapping[str, Sequence[bool]], shared: Sequence[str]
) -> dict[str, Any]:
    """What a paired comparison could have seen, printed beside its difference: ``mde``, the minimum
    detectable effect (the true difference its test finds 80% of the time at α = 0.05, from the
    observed spread of the per-case differences), and ``noise_floor``, the difference two runs of
    the same configuration show by chance (95%), from the cases' trials (``None`` without two trials
    per case on both sides, which ``noise_floor_note`` says)."""
    from callbench.power import minimum_detectable_effect, noise_floor

    n = len(shared)
    diffs = [_rate(outcomes_a[k]) - _rate(outcomes_b[k]) for k in shared]
    mean = sum(diffs) / n if n else 0.0
    variance = sum((d - mean) ** 2 for d in diffs) / (n - 1) if n > 1 else 0.0
    out: dict[str, Any] = {"mde": minimum_detectable_effect(variance, n), "noise_floor": None}
    if n and all(len(outcomes_a[k]) > 1 and len(outcomes_b[k]) > 1 for k in shared):
        noise = sum(_trial_noise(outcomes_a[k]) + _trial_noise(outcomes_b[k]) for k in shared) / n
        out["noise_floor"] = noise_floor(noise, n)
        out["noise_floor_note"] = "from the cases' trials"
    else:
        out["noise_floor_note"] = "needs --trials 2 or more on both runs"
    return out


def _rate(trials: Sequence[bool]) -> float:
    return sum(trials) / len(trials)


def _trial_noise(trials: Sequence[bool]) -> float:
    """The variance the trials put into a case's rate: p(1 − p) / (k − 1), unbiased over k trials."""
    k, rate = len(trials), _rate(trials)
    return rate * (1 - rate) / (k - 1)


def case_outcomes(records: Sequence[Record], tier: str) -> dict[str, list[bool]]:
    """Each case's pass/fail per completed trial of ``tier`` (error records left out)."""
    outcomes: dict[str, list[bool]] = defaultdict(list)
    for rec in records:
        if rec.get("status") != "error":
            outcomes[case_key(rec)].append(passed(rec, tier))
    return dict(outcomes)


def _lost_to_errors(records: Sequence[Record]) -> set[str]:
    return {case_key(rec) for rec in records if rec.get("status") == "error"}


def _case_rates(records: Sequence[Record], tier: str) -> dict[str, float]:
    return {k: _rate(v) for k, v in case_outcomes(records, tier).items()}


def _templates(records: Sequence[Record]) -> dict[str, str]:
    return {case_key(r): t for r in records if (t := template_of(r))}
