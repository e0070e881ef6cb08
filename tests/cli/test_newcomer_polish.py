"""Issue 13, items 1, 6 and 13: what a newcomer types first, through the console script of a fresh install.

Each test runs the installed ``callbench`` the way a hurried user would and checks the exit code, the one
line that says what to fix, that no traceback is printed and that nothing already computed is lost.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fresh_cli import FreshCli, assert_clean_error
from protocol_server import Fault, ProtocolServer
from synth import make_records, write_run

from callbench.types.version import __version__

CONTRACT = "native-function-contract"
EXECUTION = "real-tool-execution"


def _no_traceback(done: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr


def _oracle_run(fresh_cli: FreshCli, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return fresh_cli.run("run", "-s", "starter", "-m", "oracle", "--limit", "3", "--out", str(out), *extra)


# -- item 1: usage ---------------------------------------------------------------------------------


def test_no_arguments_shows_the_help_without_a_traceback(fresh_cli: FreshCli) -> None:
    done = fresh_cli.run()
    _no_traceback(done)
    assert done.returncode in (0, 2)  # typer's no_args_is_help exits 2 under click 8.2+
    assert "Usage: callbench" in done.stdout + done.stderr and "run" in done.stdout


def test_version(fresh_cli: FreshCli) -> None:
    done = fresh_cli.run("--version")
    _no_traceback(done)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"callbench {__version__}"


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["run"],
        ["score"],
        ["show"],
        ["suites"],
        ["compare"],
        ["cache"],
        ["cache", "stats"],
        ["data", "fetch"],
    ]
    + [["generate", "dag"], ["import", "codexomics"], ["export", "bfcl"], ["bfcl", "score-results"]],
)
def test_dash_h_is_help_on_every_command(fresh_cli: FreshCli, argv: list[str]) -> None:
    short, long = fresh_cli.run(*argv, "-h"), fresh_cli.run(*argv, "--help")
    _no_traceback(short)
    assert short.returncode == 0, short.stdout + short.stderr
    assert short.stdout == long.stdout and "Usage: callbench" in short.stdout


def test_score_without_a_run_folder(fresh_cli: FreshCli) -> None:
    stderr = assert_clean_error(fresh_cli.run("score"), 2, "RUN_DIR")
    assert "Usage: callbench score" in stderr


def test_limit_that_is_not_a_number(fresh_cli: FreshCli, tmp_path: Path) -> None:
    done = fresh_cli.run("run", "--limit", "abc", "--out", str(tmp_path / "r"))
    assert_clean_error(done, 2, "Invalid value for '--limit'")
    assert not (tmp_path / "r").exists()


def test_every_import_of_the_package_is_a_declared_dependency(fresh_cli: FreshCli) -> None:
    """Import every module of the installed package (benchmarks included) in the fresh venv; only the
    optional extras may be missing, and those are imported lazily inside functions. The pytest plugin
    is loaded by pytest alone (its ``pytest11`` entry point), so pytest is there whenever it is."""
    python = fresh_cli.script.parent / "python"
    code = (
        "import importlib, pkgutil, callbench\n"
        "bad = []\n"
        "for m in pkgutil.walk_packages(callbench.__path__, 'callbench.'):\n"
        "    if m.name == 'callbench.pytest_plugin': continue\n"
        "    try: importlib.import_module(m.name)\n"
        "    except ImportError as e: bad.append(f'{m.name}: {e}')\n"
        "print('\\n'.join(bad))\n"
    )
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


# -- item 6: --progress quiet ----------------------------------------------------------------------


def test_quiet_prints_no_progress_but_the_final_table(fresh_cli: FreshCli, tmp_path: Path) -> None:
    out = tmp_path / "quiet"
    done = _oracle_run(fresh_cli, out, "--progress", "quiet")
    _no_traceback(done)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # no progress lines
    assert re.search(rf"{CONTRACT}\s+│\s+3 │\s+3 │\s+100\.0%", done.stdout), done.stdout
    assert f"run folder: {out}" in done.stdout
    plain = _oracle_run(fresh_cli, tmp_path / "plain", "--progress", "plain")
    assert "done [3/3]" in plain.stderr  # the other modes do print progress


# -- item 13 ---------------------------------------------------------------------------------------


def test_show_of_a_missing_folder_says_so(fresh_cli: FreshCli, tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent"
    for argv in (
        ["show", str(missing)],
        ["show", str(missing), "-f", "md"],
        ["compare", str(missing)],
        ["score", str(missing)],
    ):
        stderr = assert_clean_error(fresh_cli.run(*argv), 2, f"no such run folder: {missing}")
        assert "callbench score" not in stderr and len(stderr.strip().splitlines()) == 1


def test_suites_never_cut_a_description_mid_word(fresh_cli: FreshCli) -> None:
    python = fresh_cli.script.parent / "python"
    code = (
        "import json\nfrom callbench.catalog import catalog\n"
        "from callbench.suites.resolve import load_suite\n"
        "out = {}\nfor n in catalog().suites.names():\n"
        "    try: out[n] = load_suite(n).description\n    except Exception: pass\nprint(json.dumps(out))"
    )
    descriptions = json.loads(subprocess.check_output([str(python), "-c", code], text=True, timeout=300))
    done = fresh_cli.run("suites", env={"COLUMNS": "400"})
    _no_traceback(done)
    assert done.returncode == 0
    long = {n: d for n, d in descriptions.items() if len(d) > 70}
    assert long, "no suite has a long description: the test checks nothing"
    for name, description in long.items():
        row = next(ln for ln in done.stdout.splitlines() if re.match(rf"│ {re.escape(name)}\s", ln))
        note = row.rsplit("│", 2)[-2].strip()
        assert note.endswith("…"), row
        kept = note[:-1].rstrip()
        assert description.startswith(kept) and description[len(kept)] == " ", (note, description)


def test_dash_o_is_the_output_folder_of_run(fresh_cli: FreshCli, tmp_path: Path) -> None:
    out = tmp_path / "by-dash-o"
    done = fresh_cli.run("run", "-s", "starter", "-m", "oracle", "--limit", "1", "-o", str(out))
    _no_traceback(done)
    assert done.returncode == 0, done.stderr
    assert (out / "records.jsonl").is_file()


@pytest.mark.parametrize(
    "argv",
    [["run"], ["report"], ["compare"], ["generate", "dag"], ["import", "codexomics"], ["data", "fetch"]]
    + [["export", "bfcl"]],
)
def test_dash_o_means_the_output_in_every_command(fresh_cli: FreshCli, argv: list[str]) -> None:
    done = fresh_cli.run(*argv, "-h", env={"COLUMNS": "250"})
    assert done.returncode == 0, done.stderr
    line = next(ln for ln in done.stdout.splitlines() if re.search(r"\s-o\s", ln))
    assert re.search(r"--out(put)?\s", line), line


def test_old_dash_o_key_value_is_refused_with_the_new_spelling(fresh_cli: FreshCli, tmp_path: Path) -> None:
    done = fresh_cli.run("run", "-s", "starter", "-m", "oracle", "-o", "limit=2", cwd=tmp_path)
    stderr = assert_clean_error(done, 2, ["-o", "--option limit=2"])
    assert "Usage: callbench run" in stderr
    assert list(tmp_path.iterdir()) == []  # no run folder named 'limit=2', no runs/
    # a folder with '=' in its name is still possible as a path
    done = fresh_cli.run("run", "-s", "starter", "-m", "oracle", "--limit", "1", "-o", "./k=v", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "k=v" / "records.jsonl").is_file()


def test_score_with_one_tier_shows_that_tier_only(fresh_cli: FreshCli, tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert _oracle_run(fresh_cli, run, "--progress", "quiet").returncode == 0
    before = (run / "records.jsonl").read_text()
    done = fresh_cli.run("score", str(run), "--tier", EXECUTION)
    _no_traceback(done)
    assert done.returncode == 0, done.stderr
    rows = [ln for ln in done.stdout.splitlines() if ln.startswith("│")]
    assert any(EXECUTION in ln for ln in rows) and not any(CONTRACT in ln for ln in rows), done.stdout
    # the stored verdicts of the other tiers are kept
    assert (
        json.loads(before.splitlines()[0])["verdicts"].keys()
        <= json.loads((run / "records.jsonl").read_text().splitlines()[0])["verdicts"].keys()
    )


def test_summary_counts_answered_requests_attempts_and_retries(fresh_cli: FreshCli, tmp_path: Path) -> None:
    with ProtocolServer() as server:
        server.inject(Fault("503", retry_after=0.05), Fault("429", retry_after=0.05))
        done = fresh_cli.run(
            "run",
            "-s",
            "starter",
            "--case",
            "weather_paris",
            "-m",
            f"openai:scripted@{server.url}",
            "--no-cache",
            "--progress",
            "quiet",
            "--out",
            str(tmp_path / "r"),
            env={"OPENAI_API_KEY": "sk-test"},
        )
        http_requests = len(server.requests)
    _no_traceback(done)
    assert done.returncode == 0, done.stderr
    found = re.search(
        r"(\d+) answered requests \((\d+) from cache\), (\d+) HTTP attempts, (\d+) retr", done.stdout
    )
    assert found, done.stdout
    answered, cached, attempts, retries = map(int, found.groups())
    assert cached == 0 and retries == 2 and attempts == answered + retries
    assert attempts <= http_requests  # every attempt reached the server (a pre-run check may add one)


def _rounding_run(folder: Path) -> Path:
    """A run whose contract accuracy is 9/44 = 20.4545...% (rounding 0.2045 first gave 20.4%)."""
    records = make_records(44, seed=3, suite="demo")
    for i, record in enumerate(records):
        for verdict in record["verdicts"].values():
            verdict["passed"] = i < 9
    run = write_run(folder, records)
    summary = json.loads((run / "summary.json").read_text())
    summary["tiers"] = {tier: {"n": 44, "passed": 9, "accuracy": 9 / 44} for tier in records[0]["verdicts"]}
    summary["n_completed"] = 44
    (run / "summary.json").write_text(json.dumps(summary))
    return run


def test_one_rounding_rule_in_show_md_and_compare(fresh_cli: FreshCli, tmp_path: Path) -> None:
    a = _rounding_run(tmp_path / "a")
    b = write_run(tmp_path / "b", make_records(44, seed=3, suite="demo"))
    table = fresh_cli.run("show", str(a))
    md = fresh_cli.run("show", str(a), "--format", "md")
    compare = fresh_cli.run("compare", str(a), str(b))
    for done in (table, md, compare):
        _no_traceback(done)
        assert done.returncode == 0, done.stderr
        assert "20.5%" in done.stdout and "20.4%" not in done.stdout, done.stdout
    pair = next(ln for ln in compare.stdout.splitlines() if ln.startswith("| scripted (a) | scripted (b) |"))
    diff = pair.split("|")[6].strip()
    assert re.fullmatch(r"[−-]?\d+\.\d", diff), pair  # points with one decimal, not 75.000


def test_data_fetch_without_network_is_one_line(tmp_path: Path) -> None:
    """``huggingface_hub`` is an optional extra, absent from the fresh venv: this runs the system
    install (which has it), pointed at a closed port on the loopback."""
    pytest.importorskip("huggingface_hub")
    env = {**os.environ, "HF_ENDPOINT": "http://127.0.0.1:9", "HF_HUB_DISABLE_TELEMETRY": "1"}
    env.pop("HF_HUB_OFFLINE", None)
    done = subprocess.run(
        [sys.executable, "-m", "callbench.cli.main", "data", "fetch", "complexfuncbench", "-o", "data"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, "HF_HUB_ETAG_TIMEOUT": "2", "HF_HUB_DOWNLOAD_TIMEOUT": "2"},
        cwd=tmp_path,
    )
    stderr = assert_clean_error(done, 2, ["complexfuncbench", "127.0.0.1:9", "--data"])
    assert len(stderr.strip().splitlines()) == 1, stderr


def test_run_help_explains_the_generation_options(fresh_cli: FreshCli) -> None:
    done = fresh_cli.run("run", "--help", env={"COLUMNS": "250"})
    assert done.returncode == 0
    for option in ("--temperature", "--max-tokens", "--reasoning-effort", "--thinking-budget"):
        line = next(ln for ln in done.stdout.splitlines() if option in ln)
        text = line.split(option, 1)[1]
        assert re.search(r"[a-z]{4,}\s+[a-z]{3,}", text), line  # some words, not only the type
