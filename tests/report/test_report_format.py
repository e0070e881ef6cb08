"""``callbench report --format md|csv``: the report's tables for papers, figures equal summary.json's.

The command runs through the installed ``callbench`` console script of this environment (the
``fresh_cli`` fixture of tests/cli is not reachable from here; ``assert_clean_error`` is).
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fresh_cli import assert_clean_error
from synth import make_records, write_run

MODEL_B = "=HYPERLINK(evil)"


def _callbench(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("callbench")
    exe = str(script) if script.exists() else shutil.which("callbench")
    assert exe, "the callbench console script is not installed"
    return subprocess.run([exe, *argv], cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("paper")
    a = write_run(root / "a", make_records(60, seed=3, skill=0.8), model="m-a")
    b = write_run(root / "b", make_records(60, seed=9, skill=0.4), model=MODEL_B)
    return root, [a, b]


def _expected(run_dirs):
    """(run label, tier) -> accuracy % and (run label, tier, category) -> accuracy %, from summary.json."""
    board, cats = {}, {}
    for run in run_dirs:
        model = json.loads((run / "run.json").read_text())["model"]
        label = f"{model} ({run.name})"
        for s in json.loads((run / "summary.json").read_text())["statistics"]["strata"]:
            board[(label, s["tier"])] = (f"{100 * s['accuracy']['estimate']:.1f}", s["n"])
            for name, g in s["by_category"].items():
                cats[(label, s["tier"], name)] = f"{100 * g['accuracy']['estimate']:.1f}"
    return board, cats


def _md_tables(text: str) -> dict[str, list[dict[str, str]]]:
    """Markdown tables by their bold title, as dicts of column -> cell."""
    tables, title, lines = {}, None, text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("**") and line.endswith("**"):
            title = line.strip("*")
        elif line.startswith("| ") and title:
            head = [c.strip() for c in line.strip("|").split(" | ")]
            rows = []
            i += 2  # the rule line
            while i < len(lines) and lines[i].startswith("| "):
                rows.append(
                    dict(zip(head, [c.strip() for c in lines[i].strip("|").split(" | ")], strict=True))
                )
                i += 1
            tables[title] = rows
            continue
        i += 1
    return tables


def _csv_blocks(text: str) -> dict[str, list[dict[str, str]]]:
    blocks = {}
    for block in text.strip("\n").split("\n\n"):
        title, body = block.split("\n", 1)
        assert title.startswith("# ")
        blocks[title[2:]] = list(csv.DictReader(io.StringIO(body)))
    return blocks


def _label(cell: str) -> str:
    return cell[1:] if cell.startswith("'=") else cell


def _category_figures(tables) -> dict[tuple[str, str, str], str]:
    """(run label, tier, category) -> accuracy cell from the "Accuracy by category" table(s): one
    table per tier with a column per run ("<label> accuracy (%)"), or one long table with Run, Tier
    and Category columns."""
    out = {}
    for title, rows in tables.items():
        if not title.startswith("Accuracy by category"):
            continue
        for row in rows:
            row = {_label(k): v for k, v in row.items()}
            if "Run" in row and "Tier" in row:
                out[(_label(row["Run"]), row["Tier"], row["Category"])] = row["Strict accuracy (%)"]
                continue
            tier = title.split(" · ")[1].split(" ")[0]
            for column, value in row.items():
                if column.endswith(" accuracy (%)"):
                    out[(column.removesuffix(" accuracy (%)"), tier, row["Category"])] = value
    return out


def _check(tables, run_dirs):
    board, cats = _expected(run_dirs)
    leaderboard = tables["Leaderboard"]
    got = {(_label(r["Run"]), r["Tier"]): (r["Strict accuracy (%)"], int(r["n"])) for r in leaderboard}
    assert got == board
    assert _category_figures(tables) == cats


def test_markdown_tables_equal_the_summary(runs):
    root, run_dirs = runs
    done = _callbench("report", *map(str, run_dirs), "--format", "md", cwd=root)
    assert done.returncode == 0, done.stderr
    assert not (root / "report.html").exists()  # md goes to stdout, no page written
    tables = _md_tables(done.stdout)
    _check(tables, run_dirs)
    assert "| 1 | m-a (a) |" in done.stdout  # m-a is ahead (significantly in at least one tier)


def test_csv_blocks_and_folder_equal_the_summary(runs, tmp_path):
    root, run_dirs = runs
    out = tmp_path / "tables.csv"
    done = _callbench("report", *map(str, run_dirs), "-f", "csv", "-o", str(out), cwd=root)
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    blocks = _csv_blocks(text)
    _check(blocks, run_dirs)
    # The model name is not trusted: a spreadsheet must not run it as a formula.
    assert f"'{MODEL_B} (b)" in text and f",{MODEL_B}" not in text
    folder = tmp_path / "tables"
    done = _callbench("report", *map(str, run_dirs), "--format", "csv", "-o", f"{folder}/", cwd=root)
    assert done.returncode == 0, done.stderr
    # One file per table, named after its title, holding the block of the single CSV.
    files = {p.stem: p.read_text() for p in folder.iterdir()}
    assert len(files) == len(blocks) and "leaderboard" in files
    single = {b.split("\n", 1)[0][2:]: b.split("\n", 1)[1] + "\n" for b in text.strip("\n").split("\n\n")}
    assert files["leaderboard"] == single["Leaderboard"]


def test_unknown_format_is_one_clean_line(runs):
    root, run_dirs = runs
    done = _callbench("report", str(run_dirs[0]), "--format", "xlsx", cwd=root)
    assert_clean_error(done, 2, "--format: unknown format 'xlsx' (choose html, md, csv)")
    assert len(done.stderr.strip().splitlines()) == 1
