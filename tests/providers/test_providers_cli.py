"""``callbench run`` / ``--resume`` / ``cache`` from the command line against the protocol server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gold_responder import GoldResponder
from protocol_server import Api, Fault, ProtocolServer

from callbench.cli.main import main


def _summary(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "summary.json").read_text())


def test_cli_run_error_record_then_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CALLBENCH_CACHE_DIR", str(tmp_path / "cache"))
    gold = GoldResponder()
    broken = gold.suite.cases[1]
    failing = {"on": True}

    def rule(api: Api, body: dict[str, Any]) -> Fault | None:
        return Fault("503", retry_after=0) if failing["on"] and gold.case_of(api, body) is broken else None

    out = tmp_path / "run"
    with ProtocolServer(responder=gold) as server:
        server.fault_rule = rule
        args = [
            "run",
            "-s",
            "starter",
            "-m",
            f"openai:gold@{server.url}",
            "--out",
            str(out),
            "--progress",
            "quiet",
            "--request-timeout",
            "5",
        ]
        assert main(args) == 0
        first = _summary(out)
        assert first["n_error"] == 1 and first["errors_by_type"] == {"TransientProviderError": 1}
        failing["on"] = False
        sent = len(server.requests)
        assert main(["run", "--resume", str(out), "--progress", "quiet"]) == 0
        assert {gold.case_of("openai", b).id for _, b, _ in server.requests[sent:]} == {broken.id}
        assert _summary(out)["n_error"] == 0
        # Same run again into a new folder: everything comes from the cache.
        sent = len(server.requests)
        assert main([*args[:5], "--out", str(tmp_path / "again"), "--progress", "quiet"]) == 0
        assert len(server.requests) == sent
    assert main(["cache", "stats"]) == 0
    assert "entries" in capsys.readouterr().out


def test_cli_fatal_error_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with ProtocolServer() as server:
        server.fault_rule = lambda api, body: Fault("404")
        code = main(
            [
                "run",
                "-s",
                "starter",
                "-m",
                f"openai:nope@{server.url}",
                "--out",
                str(tmp_path / "r"),
                "--progress",
                "quiet",
                "--no-cache",
            ]
        )
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0
    assert "check the model name 'nope'" in err
