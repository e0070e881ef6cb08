"""Inter-rater agreement coefficients against published worked examples.

Sources (each test names the one it uses):

* Wikipedia, "Cohen's kappa", worked example: 50 proposals, readers A and B, yes/no; 20 yes/yes,
  5 yes/no, 10 no/yes, 15 no/no; p_o = 0.70, p_e = 0.50, κ = 0.40.
* SAS/STAT User's Guide, PROC FREQ, "Agreement Study" (getting-started example): skin condition
  of 88 patients rated terrible/poor/marginal/clear by two dermatologists; simple kappa 0.3449,
  ASE 0.0724, 95% confidence limits 0.2030 and 0.4868.
* A SAS PROC FREQ printout for the 3×3 table [[0,4,1],[0,8,0],[0,1,5]] (19 subjects), quoted as
  a reference in statsmodels' own test suite: simple kappa 0.4842 (ASE 0.1380, 95% CL 0.2137 to
  0.7547); weighted kappa with scores 0,1,2 (Cicchetti-Allison) 0.4701 (ASE 0.1457, CL 0.1845 to
  0.7558).
* Weighted kappa by hand: κw = 1 − Σ w·o / Σ w·e, computed in this file in plain Python
  (independently of statsmodels) on the SAS skin-condition table, linear and quadratic weights.
* Fleiss (1971) as reproduced in Wikipedia, "Fleiss' kappa", worked example: 10 subjects,
  14 raters, 5 categories; P̄ = 0.378, P̄e = 0.213, κ = 0.210.
* Krippendorff, K. (2011), "Computing Krippendorff's Alpha-Reliability" (Annenberg School for
  Communication, Departmental Papers 43): 4 observers × 12 units with missing data,
  α = 0.743 nominal, 0.815 ordinal, 0.849 interval, 0.797 ratio; and the binary two-observer,
  ten-unit example, α = 0.095.
"""

from __future__ import annotations

import json
import math

import pytest

from callbench.errors import ConfigError
from callbench.review.agreement import (
    MIN_ITEMS,
    AgreementInputError,
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    raw_agreement,
)


def expand(table: list[list[int]], labels: list[str] | None = None) -> tuple[list, list]:
    """Two raters' label lists from a contingency table (rows: rater A, columns: rater B)."""
    names = labels or list(range(len(table)))
    a: list = []
    b: list = []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            a += [names[i]] * count
            b += [names[j]] * count
    return a, b


WIKI_2X2 = [[20, 5], [10, 15]]
SKIN = [[10, 4, 1, 0], [5, 10, 12, 2], [2, 4, 12, 5], [0, 2, 6, 13]]
SKIN_SCALE = ["terrible", "poor", "marginal", "clear"]
SAS_3X3 = [[0, 4, 1], [0, 8, 0], [0, 1, 5]]
FLEISS_1971 = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]
N = None
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
    [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
]


def fleiss_items(counts: list[list[int]]) -> list[list[int]]:
    """Per-item rating lists (one entry per rater) from a subjects × categories count table."""
    return [[cat for cat, k in enumerate(row) for _ in range(k)] for row in counts]


# --- Cohen's kappa -------------------------------------------------------------------------------


def test_cohen_wikipedia_two_by_two() -> None:
    """Wikipedia "Cohen's kappa" worked example: p_o 0.70, p_e 0.50, κ 0.40."""
    a, b = expand(WIKI_2X2, ["yes", "no"])
    res = cohen_kappa(a, b)
    assert res.kappa == pytest.approx(0.40, abs=1e-9)
    assert res.observed_agreement == pytest.approx(0.70)
    assert res.expected_agreement == pytest.approx(0.50)
    assert res.n == 50 and res.method == "asymptotic"
    assert res.low is not None and res.high is not None and res.low < 0.40 < res.high


def test_cohen_sas_skin_condition_standard_error() -> None:
    """SAS PROC FREQ "Agreement Study": simple κ 0.3449, ASE 0.0724, 95% CL 0.2030–0.4868."""
    a, b = expand(SKIN, SKIN_SCALE)
    res = cohen_kappa(a, b, categories=SKIN_SCALE)
    assert res.n == 88
    assert res.kappa == pytest.approx(0.3449, abs=5e-5)
    assert res.std_error == pytest.approx(0.0724, abs=5e-5)
    assert res.low == pytest.approx(0.2030, abs=5e-5)
    assert res.high == pytest.approx(0.4868, abs=5e-5)


def test_cohen_sas_printout_simple_and_weighted() -> None:
    """SAS printout for [[0,4,1],[0,8,0],[0,1,5]]: κ 0.4842 (ASE 0.1380), κw 0.4701 (ASE 0.1457)."""
    a, b = expand(SAS_3X3)
    simple = cohen_kappa(a, b, categories=[0, 1, 2])
    assert (simple.kappa, simple.std_error) == (
        pytest.approx(0.4842, abs=5e-5),
        pytest.approx(0.1380, abs=5e-5),
    )
    assert (simple.low, simple.high) == (pytest.approx(0.2137, abs=5e-5), pytest.approx(0.7547, abs=5e-5))
    weighted = cohen_kappa(a, b, categories=[0, 1, 2], weights="linear")
    assert weighted.kappa == pytest.approx(0.4701, abs=5e-5)
    assert weighted.std_error == pytest.approx(0.1457, abs=5e-5)
    assert (weighted.low, weighted.high) == (pytest.approx(0.1845, abs=5e-5), pytest.approx(0.7558, abs=5e-5))
    assert weighted.label == "Cohen's κw (linear)"


def hand_weighted_kappa(table: list[list[int]], power: int) -> float:
    """κw = 1 − Σ w·o / Σ w·e with w = (|i−j|/(k−1))^power, in plain Python (Cohen 1968)."""
    k = len(table)
    total = sum(map(sum, table))
    rows = [sum(r) / total for r in table]
    cols = [sum(table[i][j] for i in range(k)) / total for j in range(k)]
    w = [[(abs(i - j) / (k - 1)) ** power for j in range(k)] for i in range(k)]
    observed = sum(w[i][j] * table[i][j] / total for i in range(k) for j in range(k))
    expected = sum(w[i][j] * rows[i] * cols[j] for i in range(k) for j in range(k))
    return 1 - observed / expected


@pytest.mark.parametrize(("weights", "power", "value"), [("linear", 1, 0.5082), ("quadratic", 2, 0.6607)])
def test_weighted_kappa_matches_hand_formula_in_scale_order(weights: str, power: int, value: float) -> None:
    """Weighted κ on the SAS skin table equals the hand formula, with the scale order as given."""
    a, b = expand(SKIN, SKIN_SCALE)
    res = cohen_kappa(a, b, categories=SKIN_SCALE, weights=weights)  # type: ignore[arg-type]
    assert res.kappa == pytest.approx(hand_weighted_kappa(SKIN, power), abs=1e-12)
    assert res.kappa == pytest.approx(value, abs=5e-5)
    # The weighting puts more weight on near misses than the simple kappa (0.3449) does.
    assert res.kappa is not None and res.kappa > 0.3449
    # Another order is another scale (alphabetical order would merely reverse this one, which
    # weighted kappa cannot tell apart): the order given must be the one used.
    swapped = ["poor", "terrible", "marginal", "clear"]
    other = cohen_kappa(a, b, categories=swapped, weights=weights)  # type: ignore[arg-type]
    assert other.kappa != pytest.approx(res.kappa, abs=1e-3)


def test_weighted_kappa_needs_an_order() -> None:
    with pytest.raises(AgreementInputError, match="categories"):
        cohen_kappa(["a", 1, "a"], ["a", 1, 1], weights="linear")
    with pytest.raises(AgreementInputError, match="weights"):
        cohen_kappa([1, 2], [1, 2], weights="cubic")  # type: ignore[arg-type]


# --- raw agreement -------------------------------------------------------------------------------


def test_raw_agreement_wilson() -> None:
    """35 of 50 equal labels (Wikipedia example): 0.70 with the Wilson interval."""
    a, b = expand(WIKI_2X2, ["yes", "no"])
    res = raw_agreement(a, b)
    assert res.estimate == pytest.approx(0.70)
    z = 1.959963984540054
    centre = (0.7 + z * z / 100) / (1 + z * z / 50)
    half = z * math.sqrt(0.7 * 0.3 / 50 + z * z / (4 * 50 * 50)) / (1 + z * z / 50)
    assert (res.low, res.high) == (pytest.approx(centre - half), pytest.approx(centre + half))
    assert res.method == "wilson"


# --- Fleiss' kappa -------------------------------------------------------------------------------


def test_fleiss_1971_wikipedia_example() -> None:
    """Fleiss (1971) / Wikipedia: 10 subjects × 14 raters × 5 categories, κ 0.210."""
    res = fleiss_kappa(fleiss_items(FLEISS_1971))
    assert res.kappa == pytest.approx(0.210, abs=5e-4)
    assert res.observed_agreement == pytest.approx(0.378, abs=5e-4)
    assert res.expected_agreement == pytest.approx(0.213, abs=5e-4)
    assert (res.n, res.raters) == (10, 14)
    assert res.low is not None and res.high is not None and res.low < res.kappa < res.high  # type: ignore[operator]
    assert "bootstrap over items" in res.method and "seed" in res.method


def test_fleiss_needs_equal_ratings_per_item() -> None:
    with pytest.raises(AgreementInputError, match="krippendorff_alpha"):
        fleiss_kappa([["a", "b", "a"], ["a", "b"]])
    # An item with a missing rating is left out, not an error.
    res = fleiss_kappa([["a", "a", "b"], ["b", "b", "b"], ["a", None, "a"], ["a", "b", "b"]], resamples=200)
    assert (res.n, res.dropped) == (3, 1)


# --- Krippendorff's alpha ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("level", "value"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)]
)
def test_krippendorff_2011_missing_data(level: str, value: float) -> None:
    """Krippendorff (2011): 4 observers × 12 units with missing values; unit 12 is unpairable."""
    res = krippendorff_alpha(KRIPPENDORFF_2011, level=level, resamples=300)  # type: ignore[arg-type]
    assert res.alpha == pytest.approx(value, abs=5e-4)
    assert (res.n, res.dropped, res.raters) == (11, 1, 4)


def test_krippendorff_2011_binary_two_observers() -> None:
    """Krippendorff (2011), binary data, two observers, ten units: α = 0.095."""
    res = krippendorff_alpha([[0, 1, 0, 0, 0, 0, 0, 0, 1, 0], [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]], resamples=300)
    assert res.alpha == pytest.approx(0.095, abs=5e-4)


def test_krippendorff_labels_and_ordinal_scale_order() -> None:
    """String labels work; for ordinal alpha the order of ``categories`` is the scale."""
    names = {1: "low", 2: "mid", 3: "high", 4: "top", 5: "max"}
    rows = [[names[v] if v is not None else None for v in row] for row in KRIPPENDORFF_2011]
    nominal = krippendorff_alpha(rows, resamples=100)
    assert nominal.alpha == pytest.approx(0.743, abs=5e-4)
    ordinal = krippendorff_alpha(rows, level="ordinal", categories=list(names.values()), resamples=100)
    assert ordinal.alpha == pytest.approx(0.815, abs=5e-4)
    with pytest.raises(AgreementInputError, match="numeric"):
        krippendorff_alpha(rows, level="interval")


# --- intervals -----------------------------------------------------------------------------------


def test_intervals_contain_estimate_and_shrink_with_more_items() -> None:
    a, b = expand(WIKI_2X2)
    a4, b4 = expand([[4 * c for c in row] for row in WIKI_2X2])
    for interval in ("asymptotic", "bootstrap"):
        small = cohen_kappa(a, b, interval=interval, resamples=500)  # type: ignore[arg-type]
        large = cohen_kappa(a4, b4, interval=interval, resamples=500)  # type: ignore[arg-type]
        assert small.kappa == pytest.approx(large.kappa)
        for res in (small, large):
            assert res.low is not None and res.high is not None and res.low <= res.kappa <= res.high  # type: ignore[operator]
        assert large.high - large.low < 0.7 * (small.high - small.low)  # type: ignore[operator]
    few = fleiss_kappa(fleiss_items(FLEISS_1971), resamples=500)
    many = fleiss_kappa(fleiss_items(FLEISS_1971 * 4), resamples=500)
    assert many.kappa == pytest.approx(few.kappa)
    assert many.high - many.low < 0.7 * (few.high - few.low)  # type: ignore[operator]
    wider = cohen_kappa(a, b, confidence=0.99)
    assert wider.high - wider.low > small.high - small.low  # type: ignore[operator]


def test_bootstrap_is_reproducible_with_fixed_seed() -> None:
    first = krippendorff_alpha(KRIPPENDORFF_2011, resamples=300)
    again = krippendorff_alpha(KRIPPENDORFF_2011, resamples=300)
    other = krippendorff_alpha(KRIPPENDORFF_2011, resamples=300, seed=7)
    assert (first.low, first.high) == (again.low, again.high)
    assert (first.low, first.high) != (other.low, other.high)
    assert first.low <= first.alpha <= first.high  # type: ignore[operator]


# --- degenerate input ----------------------------------------------------------------------------


def test_constant_raters_on_same_category() -> None:
    """Expected agreement 1: kappa is 0/0 and reported undefined, raw agreement is 1.0."""
    res = cohen_kappa(["pass"] * 6, ["pass"] * 6)
    assert res.estimate is None and not res.defined
    assert (res.observed_agreement, res.expected_agreement) == (1.0, 1.0)
    assert res.reason is not None and "expected agreement is 1" in res.reason
    assert res.describe().startswith("Cohen's κ undefined (n=6): both raters put all 6 items")
    assert raw_agreement(["pass"] * 6, ["pass"] * 6).estimate == 1.0
    fleiss = fleiss_kappa([["x", "x", "x"]] * 4)
    assert fleiss.estimate is None and "expected agreement is 1" in (fleiss.reason or "")
    alpha = krippendorff_alpha([["x"] * 4, ["x"] * 4])
    assert alpha.estimate is None and "expected disagreement is 0" in (alpha.reason or "")


def test_one_constant_rater_is_defined() -> None:
    """Only one rater constant: expected agreement < 1, so kappa exists (here 0)."""
    res = cohen_kappa(["pass"] * 4, ["pass", "fail", "pass", "fail"])
    assert res.kappa == pytest.approx(0.0)


def test_too_few_shared_items_is_undefined() -> None:
    res = cohen_kappa(["a", None, "b"], [None, "a", "b"])
    assert res.estimate is None and res.n == 1 and res.dropped == 2
    assert res.reason == f"only 1 shared item; need at least {MIN_ITEMS}"
    alpha = krippendorff_alpha([[1, None, 2], [1, 2, None]])
    assert alpha.estimate is None and alpha.n == 1
    assert raw_agreement([None], [None]).estimate is None


def test_malformed_input_raises_config_error() -> None:
    with pytest.raises(ConfigError, match=r"differ in length \(3 and 2\)"):
        cohen_kappa(["a", "b", "a"], ["a", "b"])
    with pytest.raises(AgreementInputError, match="'maybe'"):
        cohen_kappa(["yes", "maybe"], ["yes", "no"], categories=["yes", "no"])
    with pytest.raises(AgreementInputError, match="row lengths"):
        krippendorff_alpha([[1, 2, 3], [1, 2]])
    with pytest.raises(AgreementInputError, match="level"):
        krippendorff_alpha([[1, 2], [1, 2]], level="fuzzy")  # type: ignore[arg-type]
    with pytest.raises(AgreementInputError, match="confidence"):
        raw_agreement(["a"], ["a"], confidence=95)


def test_perfect_agreement_falls_back_to_bootstrap() -> None:
    """κ = 1 has asymptotic variance 0: the interval comes from the bootstrap and says so."""
    res = cohen_kappa([1, 2, 3, 1, 2, 3], [1, 2, 3, 1, 2, 3], resamples=200)
    assert res.kappa == pytest.approx(1.0)
    assert res.method.startswith("bootstrap (asymptotic variance unavailable) over items")
    assert (res.low, res.high) == (1.0, 1.0)


def test_describe_and_json() -> None:
    a, b = expand(WIKI_2X2, ["yes", "no"])
    assert cohen_kappa(a, b).describe() == "Cohen's κ 0.40 [0.15, 0.65] (n=50, asymptotic)"
    assert cohen_kappa(a, b).format() == cohen_kappa(a, b).describe()
    for res in (cohen_kappa(["x"] * 3, ["x"] * 3), krippendorff_alpha(KRIPPENDORFF_2011, resamples=50)):
        json.dumps(res.as_dict(), allow_nan=False)  # never a NaN in the output
