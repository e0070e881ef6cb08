"""``--tools mcp:...``: a path suite whose tools are a live MCP server's listing, called through it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import callbench
from callbench.errors import ConfigError

SERVERS = Path(__file__).with_name("client_servers.py")
TIERS = ("native-function-contract", "real-tool-execution", "task-completion-execution")


def server(mode: str) -> str:
    return f"mcp:stdio:{sys.executable} {SERVERS} {mode}"


def cases_file(root: Path) -> Path:
    path = root / "echo-cases.yaml"
    rows = [
        {
            "id": "echo_twice",
            "instruction": "Say hi twice.",
            "expected": [{"tool": "echo", "arguments": {"message": "hi", "times": 2}}],
        },
        {
            "id": "plot_origin",
            "instruction": "Plot the origin.",
            "expected": [{"tool": "plot", "arguments": {"point": {"x": 0, "y": 0}}}],
        },
        {
            "id": "refused",
            "instruction": "Ask for a refusal.",
            "expected": [{"tool": "fail", "arguments": {"reason": "test"}}],
        },
    ]
    path.write_text(json.dumps({"name": "echo-mcp", "cases": rows}))
    return path


def test_a_path_suite_runs_on_a_live_servers_tools(tmp_path: Path) -> None:
    result = callbench.run(
        str(cases_file(tmp_path)), "oracle", tools=server("loose"), out_dir=tmp_path / "run", progress="quiet"
    )
    records = {r.case_id: r for r in result.records}
    assert all(records["echo_twice"].verdicts[t].passed for t in TIERS)
    assert records["echo_twice"].trace.calls[0].result == "hi hi"
    assert all(records["plot_origin"].verdicts[t].passed for t in TIERS)
    refused = records["refused"]  # the server's isError reply: a failed execution, the model's problem
    assert refused.status == "completed" and refused.trace.calls[0].execution == "error"
    assert not refused.verdicts["real-tool-execution"].passed
    header = json.loads((tmp_path / "run" / "run.json").read_text())
    source = header["options"]["tool_source"]
    assert source["spec"] == server("loose") and any("echo" in note for note in source["notes"])


def test_tools_refuses_catalog_suites_and_cases_calling_tools_the_server_lacks(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="applies to suites given as a path"):
        callbench.run("starter", "oracle", tools=server("loose"), out_dir=tmp_path / "a")
    bad = tmp_path / "bad.yaml"
    bad.write_text(json.dumps({"cases": [{"id": "x", "instruction": "x", "expected": [{"tool": "ehco"}]}]}))
    with pytest.raises(Exception, match="ehco"):
        callbench.run(str(bad), "oracle", tools=server("loose"), out_dir=tmp_path / "b")
