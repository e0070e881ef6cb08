"""``callbench import codexomics`` end to end on the tiny synthetic folder."""

from __future__ import annotations

import typer
from typer.testing import CliRunner

from callbench.benchmarks.codexomics.cli import register_commands as register
from callbench.suites.loader import load_suite_path


def make_app() -> typer.Typer:
    app = typer.Typer()

    @app.command()
    def version() -> None:  # a second command so typer keeps sub-command routing
        typer.echo("0")

    register(app)
    return app


def test_import_writes_a_runnable_suite_folder_and_prints_problems(mini_data, tmp_path):
    out = tmp_path / "out"
    result = CliRunner().invoke(
        make_app(),
        [
            "import",
            "codexomics",
            str(mini_data / "mini_simple.json"),
            str(mini_data / "mini_complex.json"),
            "--registry",
            str(mini_data / "tools_registry"),
            "-o",
            str(out),
            "--name",
            "mini",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "error   mini_simple:broken: missing 'expectedResult'; case skipped" in result.output
    assert "mini_simple: 3 of 4 cases imported" in result.output
    assert "mini_complex: 2 of 3 cases imported" in result.output
    assert "\ninfo    " not in result.output  # info findings only with --verbose
    suite = load_suite_path(out)
    assert suite.name == "mini" and len(suite.cases) == 5 and "open_new_tab" in suite.registry
    assert (out / "import-report.txt").read_text().count("\n") >= 3
    assert sorted(p.name for p in (out / "cases").iterdir()) == ["mini_complex.jsonl", "mini_simple.jsonl"]


def test_reimport_replaces_its_own_files(mini_data, tmp_path):
    out = tmp_path / "out"
    args = [
        "import",
        "codexomics",
        str(mini_data / "mini_simple.json"),
        "--registry",
        str(mini_data / "tools_registry"),
        "-o",
        str(out),
        "-v",
    ]
    (out / "tools").mkdir(parents=True)
    (out / "tools" / "stale_tool.json").write_text("{}")
    result = CliRunner().invoke(make_app(), args)
    assert result.exit_code == 0, result.output
    assert "\ninfo    " in result.output
    assert not (out / "tools" / "stale_tool.json").exists()
    assert len(load_suite_path(out).cases) == 3


def test_missing_inputs_are_one_line_user_errors(mini_data, tmp_path):
    from callbench.errors import UserError

    result = CliRunner().invoke(
        make_app(),
        [
            "import",
            "codexomics",
            str(tmp_path / "nope.json"),
            "--registry",
            str(mini_data / "tools_registry"),
        ],
    )
    assert isinstance(result.exception, UserError) and "not found" in str(result.exception)
    result = CliRunner().invoke(
        make_app(),
        ["import", "codexomics", str(mini_data / "mini_simple.json"), "--registry", str(tmp_path / "none")],
    )
    assert isinstance(result.exception, UserError) and "tools_registry folder not found" in str(
        result.exception
    )


def test_register_reuses_an_existing_import_group():
    other = typer.Typer()

    @other.command("other")
    def _other() -> None:
        typer.echo("x")

    app2 = typer.Typer()
    app2.add_typer(other, name="import")
    register(app2)
    assert [g.name for g in app2.registered_groups] == ["import"]
    assert {c.name for c in other.registered_commands} == {"other", "codexomics"}
