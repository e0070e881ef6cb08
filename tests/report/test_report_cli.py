import typer
from synth import make_records, write_run
from typer.testing import CliRunner

from callbench.cli import compare, report, view


def _app():
    app = typer.Typer()
    for module in (report, compare, view):
        module.register(app)
    return app


def test_report_command_writes_html(tmp_path):
    a = write_run(tmp_path / "a", make_records(10))
    b = write_run(tmp_path / "b", make_records(10, seed=4))
    out = tmp_path / "r.html"
    result = CliRunner().invoke(_app(), ["report", str(a), str(b), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "2 run(s)" in result.output and out.read_text().startswith("<!DOCTYPE html>")


def test_compare_command_prints_markdown_and_csv(tmp_path):
    a = write_run(tmp_path / "a", make_records(10), model="m-a")
    b = write_run(tmp_path / "b", make_records(10, seed=4), model="m-b")
    md = CliRunner().invoke(_app(), ["compare", str(a), str(b)])
    assert md.exit_code == 0 and md.output.startswith("## Leaderboard")
    out = tmp_path / "board.csv"
    csv = CliRunner().invoke(
        _app(), ["compare", str(a), str(b), "--format", "csv", "--no-pairs", "-o", str(out)]
    )
    assert csv.exit_code == 0 and out.read_text().startswith("rank,tied,run,model,tier")
