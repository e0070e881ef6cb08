"""Inter-rater agreement coefficients with confidence intervals (pure functions, no I/O).

The coefficients come from well-kept libraries; this module is the glue that turns label lists into
their inputs, picks an interval method, and says plainly when a coefficient is undefined:

* :func:`cohen_kappa`: two raters, unweighted or weighted (linear / quadratic) for ordinal scales.
  Coefficient and asymptotic variance from ``statsmodels.stats.inter_rater.cohens_kappa`` (the
  Fleiss-Cohen-Everitt large-sample variance for simple kappa, the SAS PROC FREQ variance for
  weighted kappa); a bootstrap over items is available and is used when the asymptotic variance is
  not (NaN, negative or zero).
* :func:`fleiss_kappa`: more than two raters, the same number of ratings per item
  (``statsmodels.stats.inter_rater.fleiss_kappa``); bootstrap interval over items.
* :func:`krippendorff_alpha`: any number of raters, missing ratings allowed, nominal / ordinal /
  interval / ratio levels (the ``krippendorff`` package); bootstrap interval over items.
* :func:`raw_agreement`: share of items with equal labels, Wilson interval
  (:func:`callbench.stats.wilson_interval`).

Degenerate input (documented in ``docs/review.md``):

* Malformed input (different lengths, a label outside ``categories``, an unknown weighting or
  level, items with different numbers of ratings for Fleiss' kappa) raises
  :class:`AgreementInputError`, a :class:`~callbench.errors.ConfigError`.
* Input that is well formed but cannot support the coefficient returns a result whose
  ``estimate`` is ``None`` and whose ``reason`` says why: fewer than :data:`MIN_ITEMS` shared
  items, or every rating in one category (expected agreement 1, so kappa is 0/0). A NaN is never
  returned: the CLI prints ``undefined`` with the reason instead, and one sparse scorer does not
  stop the others from being reported.

Every bootstrap uses a fixed seed (:data:`callbench.stats.DEFAULT_SEED`), so intervals are
reproducible; resamples on which the coefficient is undefined are skipped and counted in
``method``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Any, Literal

from callbench.errors import ConfigError
from callbench.stats import DEFAULT_RESAMPLES, DEFAULT_SEED, wilson_interval

if TYPE_CHECKING:
    import numpy as np

Label = Hashable
"""A rating: any hashable value. ``None`` (or a float NaN) means "not rated"."""

Weights = Literal["linear", "quadratic"]
Level = Literal["nominal", "ordinal", "interval", "ratio"]

MIN_ITEMS = 2
"""Fewer shared (pairable) items than this make a chance-corrected coefficient undefined."""

_EPS = 1e-12


class AgreementInputError(ConfigError):
    """Malformed agreement input: the message names the argument, item or label at fault."""


@dataclass(frozen=True)
class AgreementResult:
    """One agreement coefficient with its confidence interval.

    ``estimate``, ``low`` and ``high`` are ``None`` when the coefficient is undefined; ``reason``
    then says why. ``observed_agreement`` / ``expected_agreement`` are the chance-correction
    terms of the kappas (for weighted kappa: one minus the weighted observed / expected
    disagreement; for Fleiss' kappa: P̄ and P̄e); ``None`` for Krippendorff's alpha and when
    undefined.
    """

    statistic: str
    """Short name: ``cohen_kappa``, ``fleiss_kappa``, ``krippendorff_alpha``, ``raw_agreement``."""
    label: str
    """Name for people, e.g. ``Cohen's κ`` or ``Cohen's κw (quadratic)``."""
    estimate: float | None
    low: float | None
    high: float | None
    method: str
    """How the interval was computed (``asymptotic``, ``bootstrap ...``, ``wilson``, ``undefined``)."""
    n: int
    """Items the coefficient was computed on (shared / pairable items)."""
    confidence: float
    observed_agreement: float | None = None
    expected_agreement: float | None = None
    raters: int = 2
    reason: str | None = None
    """Why the coefficient is undefined (``None`` when it is defined)."""
    dropped: int = 0
    """Items left out because a rater did not rate them (or, for alpha, fewer than two did)."""
    std_error: float | None = None
    """Asymptotic standard error, when the interval is asymptotic."""

    @property
    def defined(self) -> bool:
        """Whether the coefficient has a value."""
        return self.estimate is not None

    @property
    def kappa(self) -> float | None:
        """The estimate, under the name used for kappa statistics."""
        return self.estimate

    @property
    def alpha(self) -> float | None:
        """The estimate, under the name used for Krippendorff's alpha."""
        return self.estimate

    def describe(self, digits: int = 2) -> str:
        """One printed line, e.g. ``Cohen's κ 0.62 [0.41, 0.83] (n=40, asymptotic)``."""
        if self.estimate is None or self.low is None or self.high is None:
            return f"{self.label} undefined (n={self.n}): {self.reason}"
        f = f"{{:.{digits}f}}"
        return (
            f"{self.label} {f.format(self.estimate)} [{f.format(self.low)}, {f.format(self.high)}] "
            f"(n={self.n}, {self.method})"
        )

    format = describe

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields (``None`` stays ``null``; there is never a NaN)."""
        return {
            "statistic": self.statistic,
            "label": self.label,
            "estimate": self.estimate,
            "low": self.low,
            "high": self.high,
            "method": self.method,
            "n": self.n,
            "confidence": self.confidence,
            "observed_agreement": self.observed_agreement,
            "expected_agreement": self.expected_agreement,
            "raters": self.raters,
            "reason": self.reason,
            "dropped": self.dropped,
            "std_error": self.std_error,
        }


# --- input handling ----------------------------------------------------------------------------


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise AgreementInputError(f"confidence must be between 0 and 1, got {confidence}")


def _pairs(a: Sequence[Label], b: Sequence[Label]) -> tuple[list[Label], list[Label], int]:
    """Aligned ratings of items both raters rated, and the count of items left out."""
    if len(a) != len(b):
        raise AgreementInputError(
            f"the two raters' label lists differ in length ({len(a)} and {len(b)}); "
            "give one label per item for each rater, None for an item not rated"
        )
    kept = [(x, y) for x, y in zip(a, b, strict=True) if not _missing(x) and not _missing(y)]
    return [x for x, _ in kept], [y for _, y in kept], len(a) - len(kept)


def _category_index(
    labels: Sequence[Label], categories: Sequence[Label] | None, *, ordered: bool
) -> dict[Label, int]:
    """Map each category to its column; ``categories`` fixes the order (for ordinal scales)."""
    if categories is not None:
        cats = list(categories)
        if len(set(cats)) != len(cats):
            raise AgreementInputError(f"categories contain duplicates: {cats}")
        index = {c: i for i, c in enumerate(cats)}
        for pos, label in enumerate(labels):
            if label not in index:
                raise AgreementInputError(
                    f"label {label!r} (rating {pos + 1}) is not one of the categories {cats}"
                )
        return index
    seen = list(dict.fromkeys(labels))
    try:
        cats = sorted(seen)  # type: ignore[type-var]  # labels of mixed types fail here
    except TypeError:
        if ordered:
            raise AgreementInputError(
                f"labels {seen[:5]} cannot be ordered; pass categories=[...] in scale order"
            ) from None
        cats = seen
    return {c: i for i, c in enumerate(cats)}


def _inter_rater() -> Any:
    """statsmodels' inter-rater module, imported on first use (it pulls in scipy.stats)."""
    from statsmodels.stats import inter_rater

    return inter_rater


def _z(confidence: float) -> float:
    return NormalDist().inv_cdf(1 - (1 - confidence) / 2)


def _clamp(value: float, low: float = -1.0, high: float = 1.0) -> float:
    return min(high, max(low, value))


def _undefined(
    statistic: str, label: str, n: int, confidence: float, reason: str, **extra: Any
) -> AgreementResult:
    return AgreementResult(
        statistic=statistic,
        label=label,
        estimate=None,
        low=None,
        high=None,
        method="undefined",
        n=n,
        confidence=confidence,
        reason=reason,
        **extra,
    )


def _too_few(n: int) -> str:
    return f"only {n} shared item{'s' if n != 1 else ''}; need at least {MIN_ITEMS}"


def _percentile_bootstrap(
    n: int,
    statistic: Callable[[np.ndarray], float | None],
    *,
    confidence: float,
    resamples: int,
    seed: int,
) -> tuple[float, float, str]:
    """Percentile interval of ``statistic`` over items drawn with replacement.

    ``statistic`` gets an index array and returns ``None`` when the coefficient is undefined on
    that resample (e.g. every drawn item in one category); such resamples are skipped.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    values: list[float] = []
    for _ in range(resamples):
        value = statistic(rng.integers(0, n, size=n))
        if value is not None and math.isfinite(value):
            values.append(value)
    skipped = resamples - len(values)
    method = f"bootstrap over items, {resamples} resamples, seed {seed}"
    if skipped:
        method += f", {skipped} undefined resamples skipped"
    if not values:
        return math.nan, math.nan, method
    tail = (1 - confidence) / 2
    low, high = np.quantile(np.asarray(values), [tail, 1 - tail])
    return float(low), float(high), method


def _bounds(estimate: float, low: float, high: float, floor: float = -1.0) -> tuple[float, float]:
    """Final interval: the widest possible one when no resample was defined, clamped to the
    coefficient's range, and widened to contain the estimate (a percentile interval of a skewed
    bootstrap distribution can miss it on small samples)."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return floor if math.isfinite(floor) else -1.0, 1.0
    return _clamp(min(low, estimate), floor, 1.0), _clamp(max(high, estimate), floor, 1.0)


# --- Cohen's kappa -----------------------------------------------------------------------------


def _kappa_label(weights: Weights | None) -> str:
    return "Cohen's κ" if weights is None else f"Cohen's κw ({weights})"


def _weight_matrix(k: int, weights: Weights | None) -> np.ndarray:
    """Disagreement weights over category positions 0..k-1 (equally spaced ordinal scores)."""
    import numpy as np

    pos = np.arange(k, dtype=float)
    diff = np.abs(pos[:, None] - pos[None, :])
    if weights is None:
        return (diff > 0).astype(float)
    span = max(k - 1, 1)
    return diff / span if weights == "linear" else (diff / span) ** 2


def _agreement_terms(table: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """Observed and chance-expected (weighted) agreement of a contingency table."""
    import numpy as np

    p = table / table.sum()
    expected = np.outer(p.sum(axis=1), p.sum(axis=0))
    return 1.0 - float((w * p).sum()), 1.0 - float((w * expected).sum())


def _cohen_on_table(table: np.ndarray, weights: Weights | None) -> float | None:
    if _agreement_terms(table, _weight_matrix(table.shape[0], weights))[1] >= 1 - _EPS:
        return None
    return float(_inter_rater().cohens_kappa(table, wt=weights, return_results=False))


def _table(xs: Sequence[int], ys: Sequence[int], k: int) -> np.ndarray:
    import numpy as np

    table = np.zeros((k, k))
    np.add.at(table, (np.asarray(xs, dtype=int), np.asarray(ys, dtype=int)), 1.0)
    return table


def cohen_kappa(
    a: Sequence[Label],
    b: Sequence[Label],
    *,
    categories: Sequence[Label] | None = None,
    weights: Weights | None = None,
    confidence: float = 0.95,
    interval: Literal["asymptotic", "bootstrap"] = "asymptotic",
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> AgreementResult:
    """Cohen's kappa between two raters, optionally weighted for an ordinal scale.

    Args:
        a: Rater A's label per item; ``None`` for an item A did not rate.
        b: Rater B's labels, aligned with ``a``. Items either rater left out are dropped.
        categories: The scale. For weighted kappa its order is the scale order and the
            categories are equally spaced (scores 0..k-1); unused categories still count in the
            distances. Default: the labels seen, sorted.
        weights: ``None`` (nominal), ``"linear"`` (Cicchetti-Allison, |i-j|/(k-1)) or
            ``"quadratic"`` (Fleiss-Cohen, ((i-j)/(k-1))²).
        confidence: Two-sided confidence level of the interval.
        interval: ``"asymptotic"`` (kappa ± z·SE with statsmodels' large-sample variance) or
            ``"bootstrap"`` (percentile bootstrap over items). The asymptotic interval falls back
            to the bootstrap when its variance is NaN, negative or zero.
        resamples: Bootstrap resamples.
        seed: Bootstrap seed (fixed, so the interval is reproducible).

    Returns:
        An :class:`AgreementResult`; undefined (``estimate is None``) with fewer than
        :data:`MIN_ITEMS` shared items or when both raters put every item in the same category.

    Raises:
        AgreementInputError: lists of different lengths, a label outside ``categories``,
            unordered labels for weighted kappa, an unknown weighting or interval method.
    """
    if weights not in (None, "linear", "quadratic"):
        raise AgreementInputError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    if interval not in ("asymptotic", "bootstrap"):
        raise AgreementInputError(f"interval must be 'asymptotic' or 'bootstrap', got {interval!r}")
    _check_confidence(confidence)
    xs, ys, dropped = _pairs(a, b)
    index = _category_index([*xs, *ys], categories, ordered=weights is not None)
    label, n = _kappa_label(weights), len(xs)
    if n < MIN_ITEMS:
        return _undefined("cohen_kappa", label, n, confidence, _too_few(n), dropped=dropped)
    ix, iy = [index[x] for x in xs], [index[y] for y in ys]
    table = _table(ix, iy, max(len(index), 1))
    observed, expected = _agreement_terms(table, _weight_matrix(table.shape[0], weights))
    if expected >= 1 - _EPS:
        return _undefined(
            "cohen_kappa",
            label,
            n,
            confidence,
            f"both raters put all {n} items in category {xs[0]!r}: expected agreement is 1, "
            "so kappa is 0/0 (raw agreement is 1.00)",
            observed_agreement=observed,
            expected_agreement=expected,
            dropped=dropped,
        )
    kappa, std_error = _asymptotic(table, weights)
    if interval == "asymptotic" and std_error is not None:
        half = _z(confidence) * std_error
        low, high, method = kappa - half, kappa + half, "asymptotic"
    else:
        std_error = None  # the interval below does not use it; reporting it would mislead

        def resampled(draw: np.ndarray) -> float | None:
            return _cohen_on_table(_table([ix[i] for i in draw], [iy[i] for i in draw], len(table)), weights)

        low, high, method = _percentile_bootstrap(
            n, resampled, confidence=confidence, resamples=resamples, seed=seed
        )
        if interval == "asymptotic":
            method = method.replace("bootstrap", "bootstrap (asymptotic variance unavailable)", 1)
    low, high = _bounds(kappa, low, high)
    return AgreementResult(
        statistic="cohen_kappa",
        label=label,
        estimate=kappa,
        low=low,
        high=high,
        method=method,
        n=n,
        confidence=confidence,
        observed_agreement=observed,
        expected_agreement=expected,
        dropped=dropped,
        std_error=std_error,
    )


def _asymptotic(table: np.ndarray, weights: Weights | None) -> tuple[float, float | None]:
    """Kappa and its large-sample standard error (``None`` when the variance is unusable)."""
    with warnings.catch_warnings():
        # A perfect or near-degenerate table gives a zero or slightly negative variance; the
        # square root then warns and yields NaN, which is handled below by the bootstrap.
        warnings.simplefilter("ignore", RuntimeWarning)
        res = _inter_rater().cohens_kappa(table, wt=weights)
    var = float(res.var_kappa)
    return float(res.kappa), (math.sqrt(var) if math.isfinite(var) and var > 0 else None)


# --- raw agreement -------------------------------------------------------------------------------


def raw_agreement(a: Sequence[Label], b: Sequence[Label], *, confidence: float = 0.95) -> AgreementResult:
    """Share of shared items on which the two raters gave the same label, with a Wilson interval.

    Items either rater left out (``None``) are dropped. Undefined with no shared item.

    Raises:
        AgreementInputError: lists of different lengths.
    """
    _check_confidence(confidence)
    xs, ys, dropped = _pairs(a, b)
    n = len(xs)
    if n == 0:
        return _undefined("raw_agreement", "raw agreement", 0, confidence, "no shared items", dropped=dropped)
    same = sum(x == y for x, y in zip(xs, ys, strict=True))
    iv = wilson_interval(same, n, confidence)
    return AgreementResult(
        statistic="raw_agreement",
        label="raw agreement",
        estimate=iv.estimate,
        low=iv.low,
        high=iv.high,
        method="wilson",
        n=n,
        confidence=confidence,
        observed_agreement=iv.estimate,
        dropped=dropped,
    )


# --- Fleiss' kappa -------------------------------------------------------------------------------


def _fleiss_terms(counts: np.ndarray) -> tuple[float, float]:
    """Fleiss' mean observed agreement P̄ and chance agreement P̄e of an items × categories table."""
    m = counts.sum(axis=1)[0]
    per_item = ((counts * counts).sum(axis=1) - m) / (m * (m - 1))
    shares = counts.sum(axis=0) / counts.sum()
    return float(per_item.mean()), float((shares * shares).sum())


def _fleiss_on_counts(counts: np.ndarray) -> float | None:
    if _fleiss_terms(counts)[1] >= 1 - _EPS:
        return None
    return float(_inter_rater().fleiss_kappa(counts, method="fleiss"))


def fleiss_kappa(
    ratings_by_item: Sequence[Sequence[Label]],
    *,
    categories: Sequence[Label] | None = None,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> AgreementResult:
    """Fleiss' kappa for several raters (nominal categories, raters need not be the same people).

    Args:
        ratings_by_item: For each item, the labels its raters gave (one entry per rater).
            Every item needs the same number of ratings (at least 2); an item with a ``None``
            rating is left out (counted in ``dropped``): use :func:`krippendorff_alpha` to use
            incomplete items.
        categories: The category set (default: the labels seen).
        confidence: Two-sided confidence level.
        resamples: Bootstrap resamples over items (percentile interval).
        seed: Bootstrap seed.

    Raises:
        AgreementInputError: complete items with different numbers of ratings, fewer than two
            ratings per item, or a label outside ``categories``.
    """
    import numpy as np

    _check_confidence(confidence)
    complete = [list(item) for item in ratings_by_item if not any(_missing(r) for r in item)]
    dropped = len(ratings_by_item) - len(complete)
    sizes = sorted({len(item) for item in complete})
    if len(sizes) > 1:
        raise AgreementInputError(
            f"Fleiss' kappa needs the same number of ratings per item; got {sizes} "
            "(use krippendorff_alpha for unequal numbers)"
        )
    m = sizes[0] if sizes else 0
    if complete and m < 2:
        raise AgreementInputError(f"Fleiss' kappa needs at least 2 ratings per item, got {m}")
    label, n = "Fleiss' κ", len(complete)
    index = _category_index([r for item in complete for r in item], categories, ordered=False)
    if n < MIN_ITEMS:
        return _undefined("fleiss_kappa", label, n, confidence, _too_few(n), raters=m, dropped=dropped)
    counts = np.zeros((n, max(len(index), 1)))
    for row, item in enumerate(complete):
        for rating in item:
            counts[row, index[rating]] += 1
    observed, expected = _fleiss_terms(counts)
    if expected >= 1 - _EPS:
        return _undefined(
            "fleiss_kappa",
            label,
            n,
            confidence,
            f"every rating is {complete[0][0]!r}: expected agreement is 1, so kappa is 0/0",
            observed_agreement=observed,
            expected_agreement=expected,
            raters=m,
            dropped=dropped,
        )
    kappa = _fleiss_on_counts(counts)
    assert kappa is not None  # expected agreement < 1 was checked above
    low, high, method = _percentile_bootstrap(
        n, lambda draw: _fleiss_on_counts(counts[draw]), confidence=confidence, resamples=resamples, seed=seed
    )
    low, high = _bounds(kappa, low, high)
    return AgreementResult(
        statistic="fleiss_kappa",
        label=label,
        estimate=kappa,
        low=low,
        high=high,
        method=method,
        n=n,
        confidence=confidence,
        observed_agreement=observed,
        expected_agreement=expected,
        raters=m,
        dropped=dropped,
    )


# --- Krippendorff's alpha ------------------------------------------------------------------------


def _alpha_domain(
    values: Sequence[Label], categories: Sequence[Label] | None, level: Level
) -> tuple[dict[Label, int], list[float]]:
    """Column of each value in the value-counts matrix, and the numeric domain krippendorff sees.

    Nominal and ordinal scales use positions 0..k-1 (ordinal: in ``categories`` order, or sorted);
    interval and ratio scales use the values themselves, which must be numbers.
    """
    index = _category_index(values, categories, ordered=level != "nominal")
    if level in ("nominal", "ordinal"):
        return index, [float(i) for i in range(len(index))]
    domain: list[float] = []
    for value in index:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise AgreementInputError(f"{level} alpha needs numeric ratings, got {value!r}")
        domain.append(float(value))
    return index, domain


def _alpha_terms(counts: np.ndarray, domain: np.ndarray, level: Level) -> float | None:
    """Alpha of a units × values count matrix; ``None`` when expected disagreement is 0."""
    import krippendorff

    pairable = counts[counts.sum(axis=1) >= 2]
    if pairable.shape[0] == 0 or (pairable.sum(axis=0) > 0).sum() < 2:
        return None  # a single value among pairable ratings: expected disagreement 0
    return float(krippendorff.alpha(value_counts=pairable, value_domain=domain, level_of_measurement=level))


def krippendorff_alpha(
    ratings: Sequence[Sequence[Label]],
    *,
    level: Level = "nominal",
    categories: Sequence[Label] | None = None,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> AgreementResult:
    """Krippendorff's alpha for any number of raters with missing ratings.

    Args:
        ratings: One row per rater, one column per item (rater × item), ``None`` (or NaN) for a
            rating not given. Items with fewer than two ratings are not pairable and are left
            out (counted in ``dropped``).
        level: ``"nominal"``, ``"ordinal"`` (order of ``categories``, or sorted labels),
            ``"interval"`` or ``"ratio"`` (numeric ratings).
        categories: Category set / scale order for nominal and ordinal levels.
        confidence: Two-sided confidence level.
        resamples: Bootstrap resamples over items (percentile interval; Krippendorff's own
            bootstrap over pairable values is not used).
        seed: Bootstrap seed.

    Raises:
        AgreementInputError: rows of different lengths, an unknown level, a label outside
            ``categories``, or non-numeric ratings at interval / ratio level.
    """
    import numpy as np

    if level not in ("nominal", "ordinal", "interval", "ratio"):
        raise AgreementInputError(f"level must be 'nominal', 'ordinal', 'interval' or 'ratio', got {level!r}")
    _check_confidence(confidence)
    rows = [list(row) for row in ratings]
    lengths = sorted({len(row) for row in rows})
    if len(lengths) > 1:
        raise AgreementInputError(
            f"every rater's row needs one entry per item (None when not rated); row lengths {lengths}"
        )
    label = "Krippendorff's α" + ("" if level == "nominal" else f" ({level})")
    items = lengths[0] if lengths else 0
    given = [v for row in rows for v in row if not _missing(v)]
    index, domain = _alpha_domain(given, categories, level)
    counts = np.zeros((items, max(len(index), 1)))
    for row in rows:
        for item, value in enumerate(row):
            if not _missing(value):
                counts[item, index[value]] += 1
    pairable = counts[counts.sum(axis=1) >= 2]
    n, dropped = pairable.shape[0], items - pairable.shape[0]
    if n < MIN_ITEMS:
        return _undefined(
            "krippendorff_alpha",
            label,
            n,
            confidence,
            f"only {n} item{'s' if n != 1 else ''} rated by two or more raters; need at least {MIN_ITEMS}",
            raters=len(rows),
            dropped=dropped,
        )
    dom = np.asarray(domain)
    alpha = _alpha_terms(pairable, dom, level)
    if alpha is None:
        return _undefined(
            "krippendorff_alpha",
            label,
            n,
            confidence,
            "all ratings of items rated twice or more are one value: expected disagreement is 0, "
            "so alpha is 0/0",
            raters=len(rows),
            dropped=dropped,
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        low, high, method = _percentile_bootstrap(
            n,
            lambda draw: _alpha_terms(pairable[draw], dom, level),
            confidence=confidence,
            resamples=resamples,
            seed=seed,
        )
    # Alpha has no fixed lower bound (systematic disagreement can push it below -1).
    low, high = _bounds(alpha, low, high, floor=-math.inf)
    return AgreementResult(
        statistic="krippendorff_alpha",
        label=label,
        estimate=alpha,
        low=low,
        high=high,
        method=method,
        n=n,
        confidence=confidence,
        raters=len(rows),
        dropped=dropped,
    )
