"""Issue 13, items 7, 11, 12 and 13 (watch), through the installed ``callbench`` console script:

* a model server that is not running: one line with the URL and the connection error, exit 2, no
  run folder;
* a server that dies mid-run: error records that say why (never scored), exit 1 when no case could
  be scored, the records kept;
* a key the server echoes in a normal reply: nowhere in the run folder, the cache or the output;
* escape sequences in model text: shown escaped by ``--watch``, each line naming its case.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fresh_cli import FreshCli, assert_clean_error

SERVER = Path(__file__).resolve().parents[1] / "helpers" / "protocol_server.py"
KEY = "sk-newcomer-0123456789-SECRET"
ESCAPES = "hi \x1b[31mRED\x1b[0m \x1b]8;;http://evil.example\x07click\x1b]8;;\x07 end"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def protocol_server(*options: str) -> Iterator[int]:
    """The protocol server as a process of its own (it prints its port first)."""
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "--max-seconds", "300", *options],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        yield int(process.stdout.readline())
    finally:
        process.kill()
        process.wait(10)


def no_runs_made(cwd: Path) -> bool:
    runs = cwd / "runs"
    return not runs.exists() or not any(runs.iterdir())


def test_unreachable_vllm_is_one_line_before_anything_runs(fresh_cli: FreshCli, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    done = fresh_cli.run(
        "run",
        "-s",
        "starter",
        "-m",
        "vllm:Qwen/Qwen2.5-7B",
        cwd=tmp_path,
        env={"VLLM_BASE_URL": url},
        timeout=60,
    )
    stderr = assert_clean_error(
        done, 2, [f"cannot reach the model server at {url}", "connection refused", "VLLM_BASE_URL"]
    )
    assert len(stderr.strip().splitlines()) == 1, stderr
    assert no_runs_made(tmp_path)


def test_unreachable_custom_url_and_prompt_mode(fresh_cli: FreshCli, tmp_path: Path) -> None:
    port = closed_port()
    for model, env in [
        (f"openai:m@http://127.0.0.1:{port}/v1", {}),
        ("prompt:ollama:llama3.1", {"OLLAMA_BASE_URL": f"http://127.0.0.1:{port}/v1"}),
    ]:
        done = fresh_cli.run("run", "-m", model, "--limit", "2", cwd=tmp_path, env=env, timeout=60)
        assert_clean_error(done, 2, [f"127.0.0.1:{port}/v1", "connection refused"])
    assert no_runs_made(tmp_path)


def test_server_dying_mid_run_says_why_and_keeps_the_records(fresh_cli: FreshCli, tmp_path: Path) -> None:
    out = tmp_path / "run"
    with protocol_server("--stop-after", "1") as port:
        url = f"http://127.0.0.1:{port}/v1"
        args = ("run", "-s", "starter", "-m", f"openai:m@{url}", "--limit", "3", "--out", str(out))
        done = fresh_cli.run(*args, "--max-retries", "1", "--no-cache", cwd=tmp_path, timeout=120)
    stderr = assert_clean_error(done, 1, ["all 3 case run(s) ended in infrastructure errors", "--resume"])
    assert [ln for ln in stderr.splitlines() if "error:" in ln][0].startswith("callbench: error: all 3")
    assert sum("callbench: error:" in ln for ln in stderr.splitlines()) == 1, stderr
    assert "EndpointDownError" in done.stdout and url in done.stdout  # the table says why
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert len(records) == 3 and {r["status"] for r in records} == {"error"}
    assert all(url in r["error"]["message"] for r in records)


def test_echoed_key_and_escapes_never_reach_files_or_terminal(fresh_cli: FreshCli, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env = {"OPENAI_API_KEY": KEY, "CALLBENCH_CACHE_DIR": str(cache)}
    with protocol_server("--echo-key", "--reply-text", ESCAPES) as port:
        model = f"openai:m@http://127.0.0.1:{port}/v1"
        args = ("run", "-s", "starter", "-m", model, "--limit", "2", "--watch", "-c", "2")
        first = fresh_cli.run(*args, "--out", str(tmp_path / "a"), cwd=tmp_path, env=env, timeout=120)
        again = fresh_cli.run(*args, "--out", str(tmp_path / "b"), cwd=tmp_path, env=env, timeout=120)
    for done in (first, again):
        output = done.stdout + done.stderr
        assert done.returncode == 0 and "Traceback" not in output, output
        assert KEY not in output and "you sent key ***" in output
        assert "\x1b" not in output and "\x07" not in output  # not a terminal: rich adds no styles either
        assert "\\x1b[31mRED\\x1b[0m" in output and "\\x1b]8;;http://evil.example\\x07" in output
        rounds = [ln for ln in output.splitlines() if "round 1" in ln]
        assert {ln.split(" │")[0] for ln in rounds} == {
            "starter:weather_paris#1",
            "starter:weather_tokyo_fahrenheit#1",
        }
    assert cache.is_dir() and any(cache.iterdir())
    leaked = [str(p) for p in tmp_path.rglob("*") if p.is_file() and KEY.encode() in p.read_bytes()]
    assert leaked == []
    records = (tmp_path / "a" / "records.jsonl").read_text()
    assert "you sent key ***" in records


def test_server_killed_mid_run_keeps_the_scored_cases(fresh_cli: FreshCli, tmp_path: Path) -> None:
    """The server process is killed (SIGKILL) once the first case is written: later cases are error
    records that say why, the scored ones stay, and --resume re-runs only the errors."""
    out = tmp_path / "run"
    records = out / "records.jsonl"
    with protocol_server("--latency", "0.2") as port:
        url = f"http://127.0.0.1:{port}/v1"
        args = ["run", "-s", "starter", "-m", f"openai:m@{url}", "--limit", "6", "-c", "1", "--out", str(out)]
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        run = subprocess.Popen(
            [str(fresh_cli.script), *args, "--max-retries", "1", "--no-cache"],
            cwd=tmp_path,
            env={**env, "COLUMNS": "200"},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 120
        while not (records.exists() and records.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
    # Leaving the block killed the server.
    stdout, stderr = run.communicate(timeout=120)
    output = stdout + stderr
    assert "Traceback" not in output, output
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    completed = [r for r in lines if r["status"] == "completed"]
    errors = [r for r in lines if r["status"] == "error"]
    assert len(lines) == 6 and completed and errors, output
    assert all(url in r["error"]["message"] for r in errors)
    assert run.returncode == 0  # some cases were scored: the run itself worked
    assert f"error records: {len(errors)} × EndpointDownError" in stdout
    with protocol_server("--port", str(port)):
        resumed = fresh_cli.run("run", "--resume", str(out), cwd=tmp_path, timeout=120)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    final = {
        (r["case_id"], r["trial"]): r["status"] for r in map(json.loads, records.read_text().splitlines())
    }
    assert set(final.values()) == {"completed"} and len(final) == 6
