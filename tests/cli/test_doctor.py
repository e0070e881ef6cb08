"""``callbench doctor MODEL`` and ``run --preflight`` through the installed console script (issue 25,
item 5): a healthy endpoint exits 0 with the table, a faulty one exits 1 naming the failed check, bad
input is one line (exit 2), and ``run --preflight`` keeps the table in ``run.json``, prints it, and
``show`` and the report carry it."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from doctor_server import DoctorServer
from fresh_cli import FreshCli, assert_clean_error

from callbench.harness.doctor import CHECKS

FAST = ("--context-probe", "20000")
"""The server's window is 8,192 tokens: a 20,000-token probe is past it and quick to send."""


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_healthy_endpoint_exits_0_with_every_check_in_the_table(fresh_cli: FreshCli) -> None:
    with DoctorServer() as server:
        done = fresh_cli.run("doctor", server.model(query="strict=1"), *FAST)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr and not done.stderr.strip()
    for check in CHECKS:
        assert check.name in done.stdout
    assert f"{len(CHECKS)} checks: {len(CHECKS)} passed, 0 failed" in done.stdout
    assert "failed" not in done.stdout.replace("0 failed", "")


def test_a_faulty_endpoint_exits_1_naming_the_check_and_what_it_corrupts(fresh_cli: FreshCli) -> None:
    with DoctorServer("parallel_as_one") as server:
        done = fresh_cli.run("doctor", server.model(query="strict=1"), *FAST)
        as_json = fresh_cli.run("doctor", server.model(query="strict=1"), *FAST, "--json")
    stderr = assert_clean_error(done, 1, "1 check(s) failed (parallel calls)")
    assert len(stderr.strip().splitlines()) == 1
    assert "parallel calls decoded as one" in done.stdout and "BFCL" in done.stdout
    assert as_json.returncode == 1
    report = json.loads(as_json.stdout)  # stdout is the JSON alone; the verdict line is on stderr
    assert report["passed"] is False and report["requests"] <= report["max_requests"] == 30
    status = {c["id"]: c["status"] for c in report["checks"]}
    assert status["parallel_calls"] == "failed" and list(status) == [c.id for c in CHECKS]
    assert sum(s == "failed" for s in status.values()) == 1


def test_a_misconfigured_server_gives_one_line_per_fault_found(fresh_cli: FreshCli) -> None:
    with DoctorServer("raw_text_calls", "no_usage") as server:
        done = fresh_cli.run("doctor", server.model(), *FAST)
    assert_clean_error(done, 1, "(one call, no leaked tokens, usage reported)")
    assert "<tool_call>" in done.stdout  # the evidence: what the server left in the text


def test_bad_input_is_one_line_and_exit_2(fresh_cli: FreshCli) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    cases = [
        (("doctor", "opnai:m@http://127.0.0.1:1/v1"), ["unknown provider 'opnai'", "openai"]),
        (("doctor", "gpt-4o"), "write PROVIDER:MODEL"),
        (("doctor", f"openai:m@{url}"), ["cannot reach the model server", url]),
        (("doctor", "baseline"), "doctor checks a model endpoint"),
        (("doctor", f"openai:m@{url}", "--max-tokens", "0"), "--max-tokens must be"),
        (("doctor", f"openai:m@{url}", "--context-probe", "-1"), "--context-probe must be"),
        (("doctor", f"openai:m@{url}", "--reasoning-effort", "lots"), "--reasoning-effort must be one of"),
    ]
    for argv, says in cases:
        stderr = assert_clean_error(fresh_cli.run(*argv), 2, says)
        assert len(stderr.strip().splitlines()) == 1, (argv, stderr)


def test_a_mistyped_model_name_is_one_line_not_a_table_of_404s(fresh_cli: FreshCli) -> None:
    with DoctorServer(known_models={"doctor-test"}) as server:
        done = fresh_cli.run("doctor", server.model("doctr-test"), *FAST)
        sent = len(server.requests)
    assert_clean_error(done, 2, ["HTTP 404", "doctr-test", "doctor checked nothing"])
    assert sent == 1 and "│" not in done.stdout


def test_run_preflight_keeps_the_table_in_run_json_and_show_and_report_carry_it(
    fresh_cli: FreshCli, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    with DoctorServer("tool_choice_none_ignored") as server:
        model = server.model()
        done = fresh_cli.run(
            "run", "--suite", "starter", "--case", "weather_paris", "--model", model,
            "--no-cache", "--preflight", "--out", str(out), "--progress", "plain",
        )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "preflight · " in done.stdout and "tool_choice none" in done.stdout
    stored = json.loads((out / "run.json").read_text())["options"]["preflight"]
    assert stored["model"] == model and [c["id"] for c in stored["checks"]] == [c.id for c in CHECKS]
    failed = [c["id"] for c in stored["checks"] if c["status"] == "failed"]
    assert failed == ["tool_choice_none"]
    assert (out / "records.jsonl").read_text().count("\n") == 1  # the run went on and scored its case

    shown = fresh_cli.run("show", str(out))
    assert shown.returncode == 0, shown.stderr
    assert (
        "preflight (callbench doctor" in shown.stdout and "preflight failed: tool_choice none" in shown.stdout
    )
    as_json = fresh_cli.run("show", str(out), "--format", "json")
    assert json.loads(as_json.stdout)["preflight"]["checks"][5]["status"] == "failed"

    page = tmp_path / "report.html"
    assert fresh_cli.run("report", str(out), "-o", str(page)).returncode == 0
    html = page.read_text()
    assert "preflightPanel" in html and "tool_choice_none" in html


def test_run_preflight_on_a_built_in_agent_is_one_line_and_no_folder(
    fresh_cli: FreshCli, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    done = fresh_cli.run("run", "--suite", "starter", "--model", "oracle", "--preflight", "--out", str(out))
    assert_clean_error(done, 2, "--preflight checks a model endpoint")
    assert not out.exists()
