"""``callbench audit-judge RUN [--format md|csv|json] [--top N]``: how far a run's judges agree with
its deterministic verdicts (:mod:`callbench.review.judge_audit` computes the figures,
:mod:`callbench.review.judge_sources` finds the pairs).

Per audit (a source, its judge and the strict verdict it is compared with): the flags first, then n,
Cohen's κ with its 95% interval, observed agreement, the confusion table, the judge's bias and the
disagreeing cases. Exit status: 0 when at least one audit was shown (flags do not change it); 1 when
the run is readable but holds no judge verdict (one line on stderr naming every source looked for:
nothing to audit is a finding about the run, not a mistake in the command, as ``grep`` exits 1 when
nothing matched); 2 for bad input (no such folder, not a run folder, an unknown format).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from callbench.review.judge_audit import JudgeAudit, RunAudit

FORMATS = ("md", "csv", "json")
DEFAULT_TOP = 20
"""Case keys listed per kind of disagreement in Markdown (csv and json: all)."""


def register(app: typer.Typer) -> None:
    """Add the ``audit-judge`` command to ``app``."""
    app.command("audit-judge")(audit_judge_cmd)


def audit_judge_cmd(
    run_dir: Annotated[Path, typer.Argument(help="A run folder (holding records.jsonl).")],
    fmt: Annotated[
        str, typer.Option("--format", "-f", help="md (default), csv (one row per audit) or json.")
    ] = "md",
    top: Annotated[
        int, typer.Option("--top", help="Case keys listed per disagreement kind in md (0: all).")
    ] = DEFAULT_TOP,
) -> None:
    """Audit a run's judges against its deterministic verdicts (ComplexEval's response judge vs
    call-level success, a scorer's details.judge_pair, human reviews vs each tier): flags first, then
    n, Cohen's κ [95% CI], observed agreement, the confusion table, the judge's bias and the
    disagreeing cases. Exit 1 when the run holds no judge verdict."""
    from callbench.cli.common import require_run_folder
    from callbench.errors import UserError
    from callbench.review.judge_audit import audit_run

    if fmt not in FORMATS:
        raise UserError(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    if top < 0:
        raise UserError(f"--top must be 0 (every case) or more, not {top}")
    require_run_folder(run_dir)
    if not (run_dir / "records.jsonl").is_file():
        raise UserError(f"{run_dir}: not a run folder (no records.jsonl)")
    result = audit_run(run_dir, label=run_dir.name)
    if not result.audits:
        typer.echo(f"callbench: {result.nothing_line()}", err=True)
        raise typer.Exit(1)
    if fmt == "json":
        typer.echo(json.dumps(result.as_dict(), indent=2, ensure_ascii=False))
    elif fmt == "csv":
        typer.echo(render_csv(result), nl=False)
    else:
        typer.echo(render_markdown(result, top))


# --- Markdown ------------------------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"


def _num(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def case_text(key: str, trial: int) -> str:
    """``key`` for trial 1, ``key (trial N)`` otherwise."""
    return key if trial == 1 else f"{key} (trial {trial})"


def kappa_text(audit: JudgeAudit) -> str:
    """``0.70 [0.56, 0.84] (asymptotic)``, or ``undefined: <reason>``."""
    k = audit.kappa
    if k is None or k.estimate is None or k.low is None or k.high is None:
        return f"undefined: {k.reason if k is not None else 'no verdicts'}"
    return f"{k.estimate:.2f} [{k.low:.2f}, {k.high:.2f}] ({k.method})"


def bias_text(audit: JudgeAudit) -> str:
    b = audit.bias()
    return (
        f"judge pass where the strict verdict fails: {b['judge_pass_strict_fail']} "
        f"({_pct(b['judge_pass_strict_fail_share'])} of cases; {_pct(b['judge_pass_of_strict_fails'])} of "
        f"{audit.strict_fails} strict fails) · judge fail where the strict verdict passes: "
        f"{b['judge_fail_strict_pass']} ({_pct(b['judge_fail_strict_pass_share'])} of cases; "
        f"{_pct(b['judge_fail_of_strict_passes'])} of {audit.strict_passes} strict passes) · "
        f"McNemar exact p = {_num(b['mcnemar_p'], 3)}"
    )


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{why} {n}" for why, n in counts.items())


def _cases(label: str, cases: list[tuple[str, int]], top: int) -> str:
    shown = cases if top == 0 else cases[:top]
    text = ", ".join(f"`{_md(case_text(k, t))}`" for k, t in shown)
    more = len(cases) - len(shown)
    if more:
        text += f", … {more} more (--top 0 lists all)"
    return f"- {label} ({len(cases)}): {text or 'none'}"


def audit_markdown(audit: JudgeAudit, top: int = DEFAULT_TOP) -> str:
    """One audit: flags, figures, confusion table, bias, disagreeing cases."""
    lines = [f"## {_md(audit.title)}", ""]
    if audit.flags:
        lines += ["**Flags:**", *(f"- ⚠ {f.code}: {_md(f.message)}" for f in audit.flags)]
    else:
        lines.append("**Flags:** none")
    not_judged = f"{audit.n_not_judged} ({_counts(audit.not_judged)})" if audit.not_judged else "0"
    unparsed = (
        f"{audit.n_unparsed} ({_pct(audit.unparsed_share)}; {_counts(audit.unparsed)})"
        if audit.unparsed
        else "0"
    )
    lines += [
        "",
        "| figure | value |",
        "|---|---|",
        f"| n (cases with both verdicts) | {audit.n} |",
        f"| Cohen's κ [95% CI] | {_md(kappa_text(audit))} |",
        f"| observed agreement | {_pct(audit.observed_agreement)} |",
        f"| judge pass rate | {_pct(audit.judge_pass_rate)} |",
        f"| strict pass rate | {_pct(audit.strict_pass_rate)} |",
        f"| judge replies not parsed (left out) | {_md(unparsed)} |",
        f"| cases not judged (left out) | {_md(not_judged)} |",
        "",
        "| judge \\ strict | strict pass | strict fail |",
        "|---|---:|---:|",
        f"| judge pass | {audit.both_pass} | {audit.judge_pass_strict_fail} |",
        f"| judge fail | {audit.judge_fail_strict_pass} | {audit.both_fail} |",
        "",
        f"Bias: {bias_text(audit)}",
        "",
        "Disagreeing cases:",
        _cases("judge pass, strict fail", audit.judge_only_cases, top),
        _cases("judge fail, strict pass", audit.strict_only_cases, top),
    ]
    if audit.unparsed_cases:
        lines.append(_cases("judge reply not parsed", audit.unparsed_cases, top))
    return "\n".join(lines) + "\n"


def render_markdown(result: RunAudit, top: int = DEFAULT_TOP) -> str:
    """The run's audits as Markdown, under one line per source looked at."""
    head = [f"# Judge audit: {_md(result.run)}", "", "Sources:"]
    head += [f"- {_md(s.text())}" for s in result.sources]
    return "\n".join([*head, "", *(audit_markdown(a, top) for a in result.audits)]).rstrip() + "\n"


# --- CSV -----------------------------------------------------------------------------------------

CSV_COLUMNS = (
    "run",
    "source",
    "judge",
    "strict",
    "flags",
    "n",
    "kappa",
    "kappa_low",
    "kappa_high",
    "kappa_method",
    "kappa_undefined_reason",
    "observed_agreement",
    "judge_pass_rate",
    "strict_pass_rate",
    "judge_pass_strict_pass",
    "judge_pass_strict_fail",
    "judge_fail_strict_pass",
    "judge_fail_strict_fail",
    "judge_pass_of_strict_fails",
    "judge_fail_of_strict_passes",
    "mcnemar_p",
    "n_unparsed",
    "unparsed_share",
    "n_not_judged",
    "judge_pass_strict_fail_cases",
    "judge_fail_strict_pass_cases",
    "unparsed_cases",
)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _keys(cases: list[tuple[str, int]]) -> str:
    return " ".join(f"{k}#{t}" for k, t in cases)


def audit_row(run: str, audit: JudgeAudit) -> list[str]:
    """One audit as a CSV row (:data:`CSV_COLUMNS`); case lists are ``key#trial`` separated by spaces."""
    k = audit.kappa
    b = audit.bias()
    values: list[Any] = [
        run,
        audit.source,
        audit.judge,
        audit.strict,
        "; ".join(f"{f.code}: {f.message}" for f in audit.flags),
        audit.n,
        k.estimate if k else None,
        k.low if k else None,
        k.high if k else None,
        k.method if k else None,
        k.reason if k else None,
        audit.observed_agreement,
        audit.judge_pass_rate,
        audit.strict_pass_rate,
        audit.both_pass,
        audit.judge_pass_strict_fail,
        audit.judge_fail_strict_pass,
        audit.both_fail,
        b["judge_pass_of_strict_fails"],
        b["judge_fail_of_strict_passes"],
        audit.mcnemar_p,
        audit.n_unparsed,
        audit.unparsed_share,
        audit.n_not_judged,
        _keys(audit.judge_only_cases),
        _keys(audit.strict_only_cases),
        _keys(audit.unparsed_cases),
    ]
    return [_cell(v) for v in values]


def render_csv(result: RunAudit) -> str:
    """One row per audit; cells a spreadsheet would run as formulas are made inert."""
    from callbench.report.table_export import safe_cell

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for audit in result.audits:
        writer.writerow([safe_cell(c) for c in audit_row(result.run, audit)])
    return buf.getvalue()
