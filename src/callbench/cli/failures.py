"""``callbench show RUN --failures``: a run's failures grouped into fingerprints (class, tool, server,
signature), as a terminal table or md/csv/json (:mod:`callbench.report.fingerprints` groups them).

Imported by ``show`` only when ``--failures`` is given; every ``callbench --help`` imports this module
(it is in the CLI package), so the run-folder readers are imported in the function.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import typer
from rich.text import Text

from callbench.cli.common import console
from callbench.errors import ConfigError

DEFAULT_TOP = 20
"""Lines per section on the terminal and in Markdown unless ``--top`` says otherwise (csv and json:
every line)."""


def failure_sections(run_dir: Path, tier: str | None, top: int | None) -> tuple[str, list[dict[str, Any]]]:
    """The run's name and its sections as JSON (:func:`~callbench.report.fingerprints.section_payload`):
    the tiers' (only ``tier`` when given), then the error records' when there are any.

    Raises:
        ConfigError: ``tier`` is not a scorer of the run (the line names the ones it has).
    """
    from callbench.harness.runfolder import read_run
    from callbench.report.fingerprints import FailureTally, section_payload

    run = read_run(run_dir)
    tally = FailureTally.of(run.records, run.header)
    sections = tally.ordered_sections()
    tiers = list(dict.fromkeys(s.tier for s in sections if not s.is_errors))
    if tier is not None and tier not in tiers:
        have = ", ".join(tiers) or "none (no record was judged)"
        raise ConfigError(f"--tier {tier!r}: the run has no such scorer (it has {have})")
    chosen = [
        s
        for s in sections
        if (s.tier == tier if tier is not None else not s.is_errors) or (s.is_errors and s.failed)
    ]
    return run.path.name, [section_payload(s, top) for s in chosen]


def show_failures(run_dir: Path, fmt: str, tier: str | None, top: int | None) -> None:
    """Print the failure fingerprints of the run in ``run_dir`` in ``fmt`` (table, md, csv or json).

    Raises:
        ConfigError: an unknown format, a negative ``--top`` or a tier the run does not have.
    """
    from callbench.report import fingerprints

    if fmt not in ("table", "md", "csv", "json"):
        raise ConfigError(f"--format must be table, md, csv or json, not {fmt!r}")
    if top is not None and top < 0:
        raise ConfigError(f"--top must be 0 (every line) or more, not {top}")
    if top is None:
        top = DEFAULT_TOP if fmt in ("table", "md") else 0
    name, sections = failure_sections(run_dir, tier, top)
    if fmt == "json":
        typer.echo(fingerprints.render_json(name, sections))
        return
    if fmt == "csv":
        typer.echo(render_csv(name, sections), nl=False)
        return
    empty = fingerprints.no_failures_line(name, sections, tier)
    if empty is not None:  # one line, whatever the format
        typer.echo(empty)
        return
    if fmt == "md":
        typer.echo(render_markdown(name, sections))
        return
    print_failures(name, sections)


WIDE = 140
"""Terminal columns from which the lines are a table; narrower terminals get one block per line."""


def print_failures(name: str, sections: list[dict[str, Any]]) -> None:
    """The sections on the terminal (plain text, never console markup): a table per section on a wide
    terminal, else a block per line (count and share, class · tool @ server · codes, the signature,
    example cases), so that a signature is never folded into a narrow column."""
    from callbench.report import fingerprints

    for section in sections:
        title = fingerprints.section_title(section)
        if not section["lines"]:
            console.print(Text(f"{title}: no failures"))
            continue
        if console.width >= WIDE:
            _print_table(f"{name} · {title}", section["lines"])
        else:
            _print_blocks(f"{name} · {title}", section["lines"])
        if section["n_lines"] > len(section["lines"]):
            more = section["n_lines"] - len(section["lines"])
            console.print(Text(f"  … {more} more lines (--top 0 shows all)"))
    console.print(Text(fingerprints.RULES, style="dim"))


def _print_table(title: str, lines: list[dict[str, Any]]) -> None:
    from rich.table import Table

    from callbench.report import fingerprints

    table = Table(title=Text(title), pad_edge=False, title_justify="left")
    for column in fingerprints.TABLE_COLUMNS:
        numeric = column in ("Count", "Share")
        table.add_column(
            Text(column),
            justify="right" if numeric else "left",
            no_wrap=numeric or column == "Class",
            overflow="fold",
            ratio=3 if column == "Signature" else None,
        )
    for line in lines:
        table.add_row(*(Text(cell) for cell in fingerprints.line_cells(line)))
    console.print(table)


def _print_blocks(title: str, lines: list[dict[str, Any]]) -> None:
    from callbench.report import fingerprints

    console.print(Text(title, style="bold"))
    for line in lines:
        klass, codes, tool, server, signature, count, share, examples = fingerprints.line_cells(line)
        where = tool if server == "–" else f"{tool} @ {server}"
        console.print(Text(f"{count:>6} {share:>6}  {klass} · {where} · {codes}"))
        console.print(Text(f"{'':15}{signature}"))
        console.print(Text(f"{'':15}e.g. {examples}", style="dim"))


# --- md and csv (here, not in callbench.report.fingerprints: they use the report's table writers,
# which import the page builder, which imports the fingerprints) ------------------------------------


CSV_COLUMNS = (
    "run",
    "tier",
    "harness_mode",
    "class",
    "codes",
    "tool",
    "server",
    "signature",
    "count",
    "share",
    "examples",
)


def render_csv(run_name: str, sections: Sequence[dict[str, Any]]) -> str:
    """Every line of ``sections`` as one CSV table (codes as ``code=n`` pairs, examples space-separated)."""
    from callbench.report.table_export import safe_cell

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for section in sections:
        for line in section["lines"]:
            share = line["share"]
            writer.writerow(
                [
                    safe_cell(run_name),
                    safe_cell(section["tier"]),
                    safe_cell(section["harness_mode"]),
                    line["class"],
                    safe_cell(" ".join(f"{code}={n}" for code, n in line["codes"].items())),
                    safe_cell(line["tool"]),
                    safe_cell(line["server"]),
                    safe_cell(line["signature"]),
                    line["count"],
                    "" if share is None else round(share, 4),
                    safe_cell(" ".join(line["examples"])),
                ]
            )
    return buf.getvalue()


def render_markdown(run_name: str, sections: Sequence[dict[str, Any]]) -> str:
    """Each section with failures as a Markdown table under its title; one line for one without."""
    from callbench.report import fingerprints
    from callbench.report.tables import table_markdown
    from callbench.types.summary import Table

    parts = [f"### Failures · {run_name}\n"]
    for section in sections:
        if not section["lines"]:
            parts.append(f"{fingerprints.section_title(section)}: no failures.\n")
            continue
        notes = []
        if section["n_lines"] > len(section["lines"]):
            notes.append(f"… {section['n_lines'] - len(section['lines'])} more lines (--top 0 shows all)")
        table = Table(
            title=fingerprints.section_title(section),
            columns=list(fingerprints.TABLE_COLUMNS),
            rows=[fingerprints.line_cells(line) for line in section["lines"]],
            align=fingerprints.TABLE_ALIGN,
            notes=notes,
        )
        parts.append(table_markdown(table))
    parts.append(fingerprints.RULES + "\n")
    return "\n".join(parts)
