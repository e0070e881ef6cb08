"""The report's tables for papers: ``callbench report RUN_DIR... --format md|csv``.

The tables are the ones the page shows (:func:`callbench.report.overview.overview_tables`,
:func:`callbench.report.breakdowns.breakdown_tables` and
:func:`callbench.report.fingerprints.failure_tables`), so the figures in a paper and on the page
come from one computation.

* ``md``: every table as GitHub-flavoured Markdown (title in bold, notes below), in page order.
* ``csv``: one CSV block per table, each headed by a ``# <title>`` line and separated by a blank
  line; or, with :func:`write_csv_folder`, one ``<title>.csv`` file per table.

CSV cells that a spreadsheet would run as a formula (starting with ``=``, ``+``, ``-``, ``@``, tab or
carriage return) get a leading ``'``: run labels and category names come from folder names, model
names and suites, which are not trusted. Plain numbers (``-1.5``) are left as they are.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from pathlib import Path

from callbench.errors import ConfigError
from callbench.harness.runfolder import RunFolder
from callbench.report.breakdowns import breakdown_tables
from callbench.report.fingerprints import failure_tables
from callbench.report.overview import overview_tables
from callbench.report.payload import load_runs, run_statistics
from callbench.report.tables import table_markdown
from callbench.types.summary import Table

FORMATS = ("html", "md", "csv")
"""Values of ``callbench report --format``."""

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?%?")


def check_format(fmt: str) -> str:
    """``fmt`` when it is a known report format.

    Raises:
        ConfigError: any other value (one line naming the choices).
    """
    if fmt not in FORMATS:
        raise ConfigError(f"--format: unknown format {fmt!r} (choose {', '.join(FORMATS)})")
    return fmt


def report_tables(runs: Sequence[RunFolder]) -> list[Table]:
    """The overview tables, then the breakdown tables, then the failures by tool, of ``runs``."""
    stats = [run_statistics(r) for r in runs]
    return [*overview_tables(runs, stats), *breakdown_tables(runs, stats), *failure_tables(runs)]


def safe_cell(text: str) -> str:
    """``text`` made inert for spreadsheets: a leading ``'`` when it would start a formula."""
    if text.startswith(_FORMULA_START) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


def table_csv(table: Table) -> str:
    """One table as CSV (RFC 4180 quoting, CRLF-free ``\\n`` lines): the header, then the rows."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([safe_cell(c) for c in table.columns])
    for row in table.rows:
        writer.writerow([safe_cell(c) for c in row])
    return buf.getvalue()


def tables_markdown(tables: Sequence[Table], runs: Sequence[RunFolder]) -> str:
    """Every table as Markdown, under a line naming the runs."""
    head = "Runs: " + ", ".join(r.label for r in runs) + "\n"
    return "\n".join([head, *(table_markdown(t) for t in tables)])


def tables_csv(tables: Sequence[Table]) -> str:
    """Every table as a CSV block headed by ``# <title>``; blocks separated by a blank line."""
    return "\n".join(f"# {safe_cell(t.title).replace(chr(10), ' ')}\n{table_csv(t)}" for t in tables)


def file_stem(title: str, taken: set[str]) -> str:
    """A file name for a table title: lower-case letters, digits and ``-``; unique within ``taken``."""
    stem = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60] or "table"
    name, n = stem, 2
    while name in taken:
        name, n = f"{stem}-{n}", n + 1
    taken.add(name)
    return name


def write_csv_folder(tables: Sequence[Table], folder: Path) -> list[Path]:
    """One ``<title>.csv`` per table in ``folder`` (created); returns the files written."""
    folder.mkdir(parents=True, exist_ok=True)
    taken: set[str] = set()
    written = []
    for table in tables:
        path = folder / f"{file_stem(table.title, taken)}.csv"
        path.write_text(table_csv(table), encoding="utf-8")
        written.append(path)
    return written


def render_tables(run_dirs: Sequence[str | Path], fmt: str) -> str:
    """The report's tables of ``run_dirs`` as ``md`` or ``csv`` text.

    Raises:
        ConfigError: ``fmt`` is neither ``md`` nor ``csv``.
    """
    if fmt not in ("md", "csv"):
        raise ConfigError(f"--format: {fmt!r} is not a table format (choose md or csv)")
    runs = load_runs(run_dirs)
    tables = report_tables(runs)
    return tables_markdown(tables, runs) if fmt == "md" else tables_csv(tables)
