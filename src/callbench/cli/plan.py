"""``callbench plan``: how many cases × trials a comparison of two models needs (power planning)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from callbench.errors import UserError

TRIALS = (1, 2, 3, 5, 10)


def register(app: typer.Typer) -> None:
    """Add the ``plan`` command to ``app``."""
    app.command("plan")(plan_cmd)


def plan_cmd(
    runs: Annotated[
        list[Path] | None,
        typer.Argument(help="Two pilot runs (run folders) of the models to compare; or give --rates."),
    ] = None,
    rates: Annotated[
        str | None, typer.Option("--rates", help="Stated pass rates of A and B, e.g. 0.70,0.75 (no pilot).")
    ] = None,
    correlation: Annotated[
        float,
        typer.Option("--correlation", help="With --rates: how the two models' outcomes on a case correlate."),
    ] = 0.0,
    delta: Annotated[
        float | None,
        typer.Option(
            "--delta",
            help="The difference to detect (0.02 = 2 points; default: B − A of --rates, else 0.05).",
        ),
    ] = None,
    power: Annotated[float, typer.Option("--power", help="Chance of detecting it.")] = 0.8,
    alpha: Annotated[float, typer.Option("--alpha", help="Two-sided significance level.")] = 0.05,
    tier: Annotated[
        str | None,
        typer.Option("--tier", help="With pilot runs: the scorer (default: the first strict tier)."),
    ] = None,
) -> None:
    """Plan a comparison: the cases × trials needed to detect a difference between two models at a
    given power and alpha, from two pilot runs (their per-case variance over trials and the
    correlation of their outcomes) or from stated rates. With pilot runs, also the smallest
    difference the pilot itself could detect and its noise floor (docs/statistics.md)."""
    from callbench.power import cases_needed, check_level, from_pilot, from_rates

    check_level("power", power)
    check_level("alpha", alpha)
    lines: list[str] = []
    if rates is not None:
        if runs:
            raise UserError("give two pilot runs or --rates, not both")
        rate_a, rate_b = _two_rates(rates)
        parts = from_rates(rate_a, rate_b, correlation)
        delta = rate_b - rate_a if delta is None else delta
        lines.append(f"stated rates: A {rate_a:g}, B {rate_b:g}, correlation {correlation:g}")
        lines.append(
            "  (every case alike, so a trial counts as much as a case; pilot runs measure how cases differ)"
        )
    elif runs is not None and len(runs) == 2:
        outcomes_a, outcomes_b, used = _pilot_outcomes(runs, tier)
        parts, n = from_pilot(outcomes_a, outcomes_b)
        delta = 0.05 if delta is None else delta
        lines += _pilot_lines(outcomes_a, outcomes_b, used, n, runs, alpha=alpha, power=power)
    else:
        raise UserError("give two pilot runs (callbench plan RUN_A RUN_B) or --rates A,B")
    lines.append(
        f"to detect a difference of {100 * abs(delta):.1f} points with power {power:g} at alpha {alpha:g} "
        "(two-sided, paired on the same cases):"
    )
    lines.append(f"  {'trials per case':>15}  {'cases':>8}  {'runs of a case per model':>24}")
    for trials in TRIALS:
        n = cases_needed(delta, parts, trials, alpha=alpha, power=power)
        lines.append(f"  {trials:>15}  {n:>8,}  {n * trials:>24,}")
    if parts.between > 0:
        lines.append(
            f"  (the cases' own differences, variance {parts.between:.4f}, are not reduced by trials: "
            "past a few trials, more cases help more than more trials)"
        )
    typer.echo("\n".join(lines))


def _two_rates(text: str) -> tuple[float, float]:
    parts = [p.strip() for p in text.split(",")]
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise UserError(f"--rates: expected two numbers such as 0.70,0.75, got {text!r}") from None
    if len(values) != 2:
        raise UserError(f"--rates: expected two numbers such as 0.70,0.75, got {text!r}")
    return values[0], values[1]


def _pilot_outcomes(
    runs: list[Path], tier: str | None
) -> tuple[dict[str, list[bool]], dict[str, list[bool]], str]:
    """Each pilot run's per-case trial outcomes in one tier, refusing to pool harness modes."""
    from callbench.cli.common import require_run_folder
    from callbench.errors import PoolingError
    from callbench.harness.runfolder import latest_records, read_records
    from callbench.stats import case_outcomes, ensure_one_stratum, record_view, tiers_of
    from callbench.types.verdict import TIERS

    views = []
    for run in runs:
        require_run_folder(run)
        views.append([record_view(r) for r in latest_records(read_records(run))])
    present = [t for t in tiers_of(views[0]) if t in tiers_of(views[1])]
    if not present:
        raise UserError(f"{runs[0]} and {runs[1]} share no scorer to plan with")
    used = tier or next((t for t in TIERS if t in present), present[0])
    if used not in present:
        raise UserError(f"--tier {used!r}: not a scorer of both runs (they share: {', '.join(present)})")
    try:
        modes = {ensure_one_stratum(v, used) for v in views}
    except PoolingError as exc:
        raise UserError(str(exc)) from None
    if len(modes) > 1:
        raise UserError(
            f"the pilot runs use different harness modes ({' and '.join(sorted(modes))}): never pooled"
        )
    return case_outcomes(views[0], used), case_outcomes(views[1], used), used


def _pilot_lines(
    outcomes_a: dict[str, list[bool]],
    outcomes_b: dict[str, list[bool]],
    tier: str,
    n: int,
    runs: list[Path],
    *,
    alpha: float,
    power: float,
) -> list[str]:
    """What the pilot itself shows: its accuracies, the smallest difference it could detect, and its
    noise floor."""
    from callbench.power import minimum_detectable_effect
    from callbench.stats import sensitivity

    shared = sorted(set(outcomes_a) & set(outcomes_b))
    rates_a = [sum(outcomes_a[k]) / len(outcomes_a[k]) for k in shared]
    rates_b = [sum(outcomes_b[k]) / len(outcomes_b[k]) for k in shared]
    diffs = [x - y for x, y in zip(rates_a, rates_b, strict=True)]
    mean = sum(diffs) / n
    mde = minimum_detectable_effect(
        sum((d - mean) ** 2 for d in diffs) / (n - 1), n, alpha=alpha, power=power
    )
    seen: dict[str, Any] = sensitivity(outcomes_a, outcomes_b, shared)
    floor = seen["noise_floor"]
    trials = max(len(outcomes_a[k]) for k in shared), max(len(outcomes_b[k]) for k in shared)
    return [
        f"pilot: {runs[0]} (A) vs {runs[1]} (B), tier {tier}, {n} shared cases, "
        f"up to {trials[0]} / {trials[1]} trials",
        f"  accuracy A {100 * sum(rates_a) / n:.1f}%, B {100 * sum(rates_b) / n:.1f}%; "
        f"the smallest difference this pilot detects with power {power:g}: {100 * (mde or 0):.1f} points",
        "  noise floor: "
        + (
            f"±{100 * floor:.1f} points ({seen['noise_floor_note']})"
            if floor is not None
            else seen["noise_floor_note"]
        ),
    ]
