"""Issue 13, items 4, 8, 9 and 10: settings, resume, run folders and torn records, through the console
script of a fresh install.

Each test runs the installed ``callbench`` the way a hurried user would and checks the exit code, the
one line that says what to fix, that no traceback is printed and that nothing already computed is lost.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
from fresh_cli import FreshCli, assert_clean_error

REPO = Path(__file__).resolve().parents[2]

CONTRACT = "native-function-contract"


def _no_traceback(done: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr


def _ok(done: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    _no_traceback(done)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def _one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("callbench: error: "), stderr
    return lines[0]


def _oracle_run(fresh_cli: FreshCli, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return fresh_cli.run(
        "run",
        "-s",
        "starter",
        "-m",
        "oracle",
        "--limit",
        "3",
        "--out",
        str(out),
        "--progress",
        "quiet",
        *extra,
    )


def _keys(run_dir: Path) -> list[str]:
    lines = (run_dir / "records.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["key"] for line in lines if line.strip()]


# -- item 4: every setting is checked, and the message names the option -------------------------------

BAD_SETTINGS = [
    (["--concurrency", "0"], "--concurrency must be an integer of at least 1 (got 0)"),
    (["--concurrency", "-5"], "--concurrency must be an integer of at least 1 (got -5)"),
    (["--delay", "-1"], "--delay must be a number of at least 0 (got -1)"),
    (["--rpm", "0"], "--rpm must be a positive number (got 0)"),
    (["--tpm", "-100"], "--tpm must be a positive number (got -100)"),
    (["--max-connections", "0"], "--max-connections must be an integer of at least 1 (got 0)"),
    (["--max-retries", "-1"], "--max-retries must be an integer of at least 0 (got -1)"),
    (["--max-retry-time", "-3"], "--max-retry-time must be a number of at least 0 (got -3)"),
    (["--request-timeout", "0"], "--request-timeout must be a positive number (got 0)"),
    (["--trials", "0"], "--trials must be an integer of at least 1 (got 0)"),
    (["--limit", "-1"], "--limit must be an integer of at least 0 (got -1)"),
    (["--k", "0"], "--k must be a positive integer or 'all' (got '0')"),
    (["--temperature", "-1"], "--temperature must be a number from 0 to 2 (got -1)"),
    (["--temperature", "2.5"], "--temperature must be a number from 0 to 2 (got 2.5)"),
    (["--max-tokens", "0"], "--max-tokens must be an integer of at least 1 (got 0)"),
    (["--seed", "-1"], "--seed must be an integer from 0 to 2**63-1 (got -1)"),
    (["--thinking-budget", "0"], "--thinking-budget must be an integer of at least 1 (got 0)"),
    (["--reasoning-effort", "max"], "--reasoning-effort must be one of none, minimal, low, medium, high"),
    (["--progress", "loud"], "--progress must be one of auto, rich, plain, quiet (got 'loud')"),
    (
        ["--mode", "turbo"],
        "--mode must be one of production-parity, oracle-assisted, agent-under-test (got 'turbo')",
    ),
]


@pytest.mark.parametrize(("argv", "says"), BAD_SETTINGS, ids=[" ".join(a) for a, _ in BAD_SETTINGS])
def test_a_bad_setting_is_one_line_naming_the_option(
    fresh_cli: FreshCli, tmp_path: Path, argv: list[str], says: str
) -> None:
    out = tmp_path / "run"
    stderr = assert_clean_error(_oracle_run(fresh_cli, out, *argv), 2, says)
    _one_error_line(stderr)
    assert not out.exists()  # refused before anything ran or was written


def test_good_settings_run_and_are_recorded_as_given(fresh_cli: FreshCli, tmp_path: Path) -> None:
    out = tmp_path / "run"
    _ok(_oracle_run(fresh_cli, out, "--concurrency", "2", "--temperature", "0.5", "--seed", "3"))
    header = json.loads((out / "run.json").read_text())
    assert header["options"]["concurrency"] == 2
    assert (header["settings"]["temperature"], header["settings"]["seed"]) == (0.5, 3)


# -- item 8: --resume keeps how the run was made -----------------------------------------------------

RECORDED = ["--rpm", "600", "--tpm", "90000", "--max-connections", "3", "--concurrency", "2"]
RECORDED += ["--no-cache", "--max-retries", "2", "--request-timeout", "30"]


@pytest.fixture
def killed_run(fresh_cli: FreshCli, tmp_path: Path) -> Path:
    """A 3-case oracle run with non-default engine settings, cut back to its first record."""
    out = tmp_path / "run"
    _ok(_oracle_run(fresh_cli, out, *RECORDED))
    lines = (out / "records.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (out / "records.jsonl").write_text(lines[0], encoding="utf-8")  # as if killed after one case
    return out


def test_resume_keeps_the_recorded_settings_and_provenance(fresh_cli: FreshCli, killed_run: Path) -> None:
    before = json.loads((killed_run / "run.json").read_text())
    _ok(fresh_cli.run("run", "--resume", str(killed_run), "--progress", "quiet"))
    after = json.loads((killed_run / "run.json").read_text())
    assert after["created_at"] == before["created_at"] and after["options"] == before["options"]
    assert after["options"]["rpm"] == 600 and after["options"]["cache"] is False
    assert len(after["resumes"]) == 1
    event = after["resumes"][0]
    assert event["previous_records"] == 1 and event["overrides"] == {}  # the recorded settings ran
    assert sorted(_keys(killed_run)) == sorted(set(_keys(killed_run))) and len(_keys(killed_run)) == 3


def test_resume_records_an_engine_limit_given_again(fresh_cli: FreshCli, killed_run: Path) -> None:
    # --rpm equal to the recorded value is no change; --concurrency 1 is an override, recorded.
    argv = ["run", "--resume", str(killed_run), "--progress", "quiet", "--rpm", "600", "--concurrency", "1"]
    _ok(fresh_cli.run(*argv, "-m", "oracle", "-s", "starter"))
    event = json.loads((killed_run / "run.json").read_text())["resumes"][0]
    assert event["overrides"] == {"concurrency": {"recorded": 2, "given": 1}}
    assert len(_keys(killed_run)) == 3


CONFLICTS = [
    (["-m", "refuse"], "--model was 'oracle' when the run started, given 'refuse'"),
    (["-s", "genomics"], "--suite (suites) was 'starter' when the run started, given 'genomics'"),
    (["--tier", "all"], "--tier (tiers) was [] when the run started, given 'all'"),
    (["--mode", "oracle-assisted"], "--mode (harness_mode) was 'production-parity' when the run started"),
    (["--k", "all"], "--k was None when the run started, given 'all'"),
    (["--temperature", "0.7"], "--temperature was 0.0 when the run started, given 0.7"),
    (["--max-tokens", "99"], "--max-tokens was 4096 when the run started, given 99"),
    (["--option", "x=1"], "--option (suite_options) was {} when the run started, given {'x': '1'}"),
]


@pytest.mark.parametrize(("argv", "says"), CONFLICTS, ids=[a[0] for a, _ in CONFLICTS])
def test_resume_refuses_a_setting_that_changes_verdicts(
    fresh_cli: FreshCli, killed_run: Path, argv: list[str], says: str
) -> None:
    files = {name: (killed_run / name).read_bytes() for name in ("run.json", "records.jsonl")}
    done = fresh_cli.run("run", "--resume", str(killed_run), "--progress", "quiet", *argv)
    line = _one_error_line(assert_clean_error(done, 2, [f"{killed_run}: cannot resume: ", says]))
    assert "start a new run" in line
    assert {name: (killed_run / name).read_bytes() for name in files} == files  # nothing touched


def test_resume_and_out_naming_different_folders_is_refused(fresh_cli: FreshCli, killed_run: Path) -> None:
    done = fresh_cli.run("run", "--resume", str(killed_run), "--out", str(killed_run.parent / "other"))
    _one_error_line(assert_clean_error(done, 2, "name different run folders"))


# -- item 9: run folders never collide ---------------------------------------------------------------


def test_runs_started_in_the_same_second_get_their_own_folders(fresh_cli: FreshCli, tmp_path: Path) -> None:
    argv = [
        str(fresh_cli.script),
        "run",
        "-s",
        "starter",
        "-m",
        "oracle",
        "--limit",
        "1",
        "--progress",
        "quiet",
    ]
    procs = [
        subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in "abc"
    ]
    outputs = [proc.communicate(timeout=180) for proc in procs]
    for proc, (stdout, stderr) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, stderr.decode()
        assert b"Traceback" not in stdout + stderr
    folders = sorted((tmp_path / "runs").iterdir())
    assert len(folders) == 3 and all((f / "summary.json").is_file() for f in folders)
    assert all(re.fullmatch(r"\d{8}-\d{6}-oracle-starter(-\d+)?", f.name) for f in folders), folders


def _readme_api_example() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Python API", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_readme_python_api_example_runs_twice(fresh_cli: FreshCli, tmp_path: Path) -> None:
    python = fresh_cli.script.parent / "python"
    code = _readme_api_example()
    for _ in range(2):
        done = subprocess.run(
            [str(python), "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=180
        )
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        assert done.stdout.strip() == "1.0"
    assert len(list((tmp_path / "runs").iterdir())) == 2


# -- item 10: torn records and the work folders of killed runs ---------------------------------------


def _tear(run_dir: Path) -> bytes:
    """Cut the last record in half, as a kill mid-write does; returns the torn bytes."""
    path = run_dir / "records.jsonl"
    data = path.read_bytes()
    start = data.rstrip(b"\n").rfind(b"\n") + 1
    torn = data[start : start + (len(data) - start) // 2]
    path.write_bytes(data[:start] + torn)
    return torn


def test_score_sets_a_torn_line_aside_and_says_so(fresh_cli: FreshCli, tmp_path: Path) -> None:
    out = tmp_path / "run"
    _ok(_oracle_run(fresh_cli, out))
    torn = _tear(out)
    done = _ok(fresh_cli.run("score", str(out)))
    warning = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(warning) == 1 and warning[0].startswith("callbench: warning: "), done.stderr
    assert (
        f"{out / 'records.jsonl'}:3: re-scoring set aside a torn last line ({len(torn)} bytes" in warning[0]
    )
    assert str(out / "records.torn.jsonl") in warning[0] and "--resume" in warning[0]
    assert (out / "records.torn.jsonl").read_bytes() == torn + b"\n"  # the original bytes, kept
    assert len(_keys(out)) == 2
    # resuming re-runs the torn case; the side file stays
    _ok(fresh_cli.run("run", "--resume", str(out), "--progress", "quiet"))
    assert len(_keys(out)) == 3 and (out / "records.torn.jsonl").read_bytes() == torn + b"\n"


@pytest.mark.parametrize(
    "argv",
    [
        ["show", "{run}", "--format", "md"],
        ["compare", "{run}", "{run}"],
        ["report", "{run}", "--output", "{html}"],
    ],
    ids=["show", "compare", "report"],
)
def test_readers_say_which_torn_line_they_skipped(
    fresh_cli: FreshCli, tmp_path: Path, argv: list[str]
) -> None:
    out = tmp_path / "run"
    _ok(_oracle_run(fresh_cli, out))
    _tear(out)
    before = (out / "records.jsonl").read_bytes()
    args = [a.format(run=out, html=tmp_path / "r.html") for a in argv]
    done = fresh_cli.run(*args)
    _no_traceback(done)
    assert done.returncode == 0, done.stderr
    assert f"callbench: warning: {out / 'records.jsonl'}:3: skipped a torn last line" in done.stderr
    assert (out / "records.jsonl").read_bytes() == before  # readers never change the file


def test_resume_of_a_torn_run_keeps_the_torn_bytes(fresh_cli: FreshCli, tmp_path: Path) -> None:
    out = tmp_path / "run"
    _ok(_oracle_run(fresh_cli, out))
    torn = _tear(out)
    done = _ok(fresh_cli.run("run", "--resume", str(out), "--progress", "quiet"))
    assert f"{out / 'records.jsonl'}:3: resuming set aside a torn last line" in done.stderr
    assert done.stderr.count("torn last line") == 1
    assert (out / "records.torn.jsonl").read_bytes() == torn + b"\n"
    assert len(_keys(out)) == 3


SLOW_RUN = """
import asyncio, sys
from callbench.cli.main import main
from callbench.providers.agents import oracle
original = oracle.PlanPlayer.generate
async def slow(self, *a, **k):
    await asyncio.sleep(0.5)
    return await original(self, *a, **k)
oracle.PlanPlayer.generate = slow
sys.exit(main(sys.argv[1:]))
"""


def test_kill_minus_9_leaves_work_folders_that_the_next_run_removes(
    fresh_cli: FreshCli, tmp_path: Path
) -> None:
    """A genomics run killed mid-case leaves ``callbench-<pid>-<n>`` folders (its exports); resuming
    removes those of dead processes and keeps a live process's."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["TMPDIR"] = str(tmp)
    out = tmp_path / "run"
    python = fresh_cli.script.parent / "python"
    argv = ["run", "-s", "genomics-complex", "-m", "oracle", "--out", str(out), "--progress", "quiet"]
    proc = subprocess.Popen([str(python), "-c", SLOW_RUN, *argv, "--concurrency", "4"], env=env, cwd=tmp_path)
    deadline = time.time() + 120
    while time.time() < deadline and not list(tmp.glob(f"callbench-{proc.pid}-*")):
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    left = list(tmp.glob(f"callbench-{proc.pid}-*"))
    assert left, "the killed run left no work folder (the test needs one)"
    alive = tmp / f"callbench-{os.getpid()}-1"  # a live process's folder: kept
    alive.mkdir()
    _ok(
        fresh_cli.run(
            "run", "--resume", str(out), "--progress", "quiet", env={"TMPDIR": str(tmp)}, timeout=300
        )
    )
    assert not list(tmp.glob(f"callbench-{proc.pid}-*"))
    assert alive.is_dir()
    assert not [p for p in tmp.glob("callbench-*-*") if p != alive]  # the resumed run cleaned up after itself
