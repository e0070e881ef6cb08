"""The CLI end to end, one-line user errors, and a third-party plugin registered by entry point."""

import json
import subprocess
import sys
import textwrap

from plugin_site import install_plugin

from callbench.cli.main import main


def test_cli_run_show_score_suites(tmp_path, capsys):
    out = tmp_path / "run"
    assert (
        main(
            [
                "run",
                "--suite",
                "starter",
                "--model",
                "oracle",
                "--tier",
                "all",
                "--out",
                str(out),
                "--progress",
                "quiet",
            ]
        )
        == 0
    )
    summary = json.loads((out / "summary.json").read_text())
    assert summary["tiers"]["task-completion-execution"]["accuracy"] == 1.0
    header = json.loads((out / "run.json").read_text())
    for key in ("registry_hash", "hash", "prompt_template_hash"):
        assert len(header["suites"][0][key]) == 64
    assert header["settings"]["temperature"] == 0 and header["settings"]["stream"] is False
    assert main(["show", str(out)]) == 0
    assert main(["score", str(out), "--tier", "task-completion-execution"]) == 0
    assert main(["suites"]) == 0
    assert "starter" in capsys.readouterr().out


def test_cli_user_errors_are_one_line_without_traceback(tmp_path, capsys):
    assert main(["run", "--suite", "startr", "--progress", "quiet", "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert "did you mean 'starter'" in err and "Traceback" not in err and err.count("\n") == 1
    assert main(["run", "--model", "nosuch:model", "--progress", "quiet", "--out", str(tmp_path / "y")]) == 2
    assert main(["show", str(tmp_path / "missing")]) == 2


def test_plugin_package_registers_a_suite_through_the_entry_point(tmp_path):
    pkg = tmp_path / "plugin"
    (pkg / "cbplugin_demo").mkdir(parents=True)
    (pkg / "pyproject.toml").write_text(
        textwrap.dedent("""
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "cbplugin-demo"
        version = "0.0.1"
        [project.entry-points.callbench]
        demo = "cbplugin_demo:register"
        [tool.setuptools]
        packages = ["cbplugin_demo"]
    """)
    )
    # The backslash-newline in this string joins the `tool = ...` line back into one line.
    (pkg / "cbplugin_demo" / "__init__.py").write_text(
        textwrap.dedent("""
        from callbench.suites.suite import Suite
        from callbench.types.case import Case
        from callbench.types.contract import ToolContract
        from callbench.tools.registry import ToolRegistry

        def load(spec, options):
            tool = ToolContract(name="ping", \
parameters={"type": "object", "properties": {"n": {"type": "integer"}}})
            case = Case(id="p1", instruction="ping 3", expected=[{"tool": "ping", "arguments": {"n": 3}}])
            return Suite(name="demo", cases=[case], registry=ToolRegistry([tool]), executor="contract")

        def register(catalog):
            catalog.suites.register("demo", load)
    """)
    )
    target = tmp_path / "site"
    install_plugin(pkg, target)
    script = (
        "import sys, json; sys.path.insert(0, sys.argv[1]); import callbench; "
        "r = callbench.run('demo', 'oracle', 'all', out_dir=sys.argv[2], progress='quiet'); "
        "print(json.dumps(r.summary['tiers']['native-function-contract']['accuracy']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(target), str(tmp_path / "run")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip().endswith("1.0")


def test_cli_resume_uses_the_recorded_configuration(tmp_path):
    out = tmp_path / "run"
    assert (
        main(
            [
                "run",
                "--model",
                "oracle",
                "--tier",
                "all",
                "--limit",
                "3",
                "--out",
                str(out),
                "--progress",
                "quiet",
            ]
        )
        == 0
    )
    lines = (out / "records.jsonl").read_text().splitlines()
    (out / "records.jsonl").write_text("\n".join(lines[:1]) + "\n")  # as if killed after one case
    assert main(["run", "--resume", str(out), "--progress", "quiet"]) == 0
    keys = [json.loads(line)["key"] for line in (out / "records.jsonl").read_text().splitlines()]
    assert len(keys) == 3 and len(set(keys)) == 3
