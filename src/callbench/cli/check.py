"""``callbench check SUITE``: the self-test a suite author runs first.

One verdict line per invariant, exit 1 when any fails:

* **loads**: the suite builds (its contracts' schemas, its bindings and their signatures, the DSL of
  every expected step are checked when it loads);
* **oracle**: the built-in ``oracle`` (which plays every case's gold path) passes every applicable
  tier of every case, with no error record: a case it fails is a case no model could pass;
* **refuse**: the ``refuse`` agent (never calls) passes exactly the cases that expect no call;
* **noisy**: ``noisy:1`` (the gold path with one mistake) scores below the oracle, so the tiers can
  tell a wrong call from a right one;
* **retrieval**: every case's expected tools are among those offered at the suite's ``k``.

The runs go to a temporary folder (``--keep DIR`` keeps them).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, NamedTuple

import typer

from callbench.errors import CallbenchError

MODELS = ("oracle", "refuse", "noisy:1")


class Runs(NamedTuple):
    """The records and the summary of each model's run."""

    records: dict[str, list[Any]]
    summaries: dict[str, dict[str, Any]]


class Finding(NamedTuple):
    """One invariant's verdict."""

    name: str
    ok: bool
    detail: str


def register(app: typer.Typer) -> None:
    app.command("check", help="Self-test a suite: oracle 100%, refuse, noisy below oracle, retrieval.")(check)


def check(
    suite: Annotated[str, typer.Argument(help="A suite: a catalog name, a folder, a case file or file.py.")],
    keep: Annotated[Path | None, typer.Option("--keep", help="Keep the runs in this folder.")] = None,
) -> None:
    findings = check_suite(suite, keep)
    for finding in findings:
        mark = "PASS" if finding.ok else "FAIL"
        typer.echo(f"{mark}  {finding.name:<10} {finding.detail}")
    if not all(f.ok for f in findings):
        raise typer.Exit(1)


def check_suite(spec: str, keep: Path | None = None) -> list[Finding]:
    """Every invariant of the module docstring, in order; after a suite that does not load, only
    that finding."""
    from callbench.suites.resolve import load_suite

    try:
        loaded = load_suite(spec)
    except CallbenchError as exc:
        return [Finding("loads", False, str(exc))]
    findings = [Finding("loads", True, f"{len(loaded.cases)} cases, {len(loaded.registry)} tools")]
    with tempfile.TemporaryDirectory(prefix="callbench-check-") as scratch:
        root = keep or Path(scratch)
        runs = {model: _run(spec, model, root / model.replace(":", "-")) for model in MODELS}
        # records are read from the run folders: judge them before the scratch folder goes
        records = {model: list(result.records) for model, result in runs.items()}
    if not records["oracle"]:
        return [*findings, Finding("oracle", False, "the suite selected no case")]
    for invariant in (_oracle, _refuse, _noisy, _retrieval):
        findings.append(invariant(Runs(records, {m: r.summary for m, r in runs.items()})))
    return findings


def _run(spec: str, model: str, out: Path) -> Any:
    import callbench

    return callbench.run(spec, model, out_dir=out, progress="quiet", cache=False)


def _applicable(record: Any) -> dict[str, Any]:
    return {name: v for name, v in record.verdicts.items() if v.applicable}


def _failing(records: list[Any], keep: Callable[[Any], bool]) -> list[str]:
    return [r.case_id for r in records if keep(r)]


def _oracle(runs: Runs) -> Finding:
    records = runs.records["oracle"]
    errors = _failing(records, lambda r: r.status == "error")
    failed = _failing(
        records, lambda r: r.status == "completed" and not all(v.passed for v in _applicable(r).values())
    )
    if errors or failed:
        first = next((r for r in records if r.case_id == (failed or errors)[0]), None)
        why = ""
        if first is not None and first.error is not None:
            why = f"; {first.case_id}: {first.error.type}: {first.error.message[:160]}"
        elif first is not None:
            reason = next((v.rationale for v in _applicable(first).values() if not v.passed), "")
            why = f"; {first.case_id}: {reason[:160]}"
        listed = ", ".join((failed + errors)[:5])
        return Finding(
            "oracle",
            False,
            f"{len(failed)} case(s) fail and {len(errors)} error on the gold path ({listed}){why}",
        )
    return Finding("oracle", True, f"{len(records)} cases pass every applicable tier")


def _refuse(runs: Runs) -> Finding:
    # the strict tiers only: a diagnostic one (state-match) rightly passes a read-only case left alone
    diagnostic = {t for t, f in runs.summaries["refuse"]["tiers"].items() if f.get("diagnostic")}
    wrong = _failing(
        runs.records["refuse"],
        lambda r: (
            r.status == "error"
            or any(v.passed != (not r.expected) for t, v in _applicable(r).items() if t not in diagnostic)
        ),
    )
    if wrong:
        listed = ", ".join(wrong[:5])
        return Finding(
            "refuse", False, f"{len(wrong)} case(s) where never calling is judged wrongly: {listed}"
        )
    return Finding(
        "refuse", True, "never calling passes exactly the cases that expect no call (strict tiers)"
    )


def _noisy(runs: Runs) -> Finding:
    oracle, noisy = runs.summaries["oracle"]["tiers"], runs.summaries["noisy:1"]["tiers"]
    tiers = [t for t in oracle if not oracle[t].get("diagnostic") and oracle[t].get("accuracy") is not None]
    below = [t for t in tiers if (noisy.get(t, {}).get("accuracy") or 0.0) < oracle[t]["accuracy"]]
    if not tiers or len(below) < len(tiers):
        same = sorted(set(tiers) - set(below))
        return Finding(
            "noisy", False, f"noisy:1 scores as high as the oracle in {', '.join(same) or 'every tier'}"
        )
    figures = ", ".join(f"{t} {noisy[t]['accuracy']:.1%}" for t in tiers)
    return Finding("noisy", True, f"noisy:1 below the oracle in every tier ({figures})")


def _retrieval(runs: Runs) -> Finding:
    missed = _failing(
        runs.records["oracle"], lambda r: r.retrieval_recall is not None and r.retrieval_recall < 1.0
    )
    if missed:
        return Finding(
            "retrieval",
            False,
            f"{len(missed)} case(s) lack an expected tool among those offered at the suite's k: "
            + ", ".join(missed[:5]),
        )
    return Finding("retrieval", True, "every expected tool is offered at the suite's k")
