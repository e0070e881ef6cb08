"""``--tools mcp:...`` mistakes through the installed console script: one line, nothing runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fresh_cli import FreshCli, assert_clean_error

SERVERS = Path(__file__).parents[1] / "mcp" / "client_servers.py"


def cases_file(root: Path) -> Path:
    path = root / "echo-cases.yaml"
    rows = [{"id": "echo_twice", "instruction": "Say hi twice.", "expected": [{"tool": "echo"}]}]
    path.write_text(json.dumps({"name": "echo-mcp", "cases": rows}))
    return path


@pytest.mark.parametrize(
    ("mode", "says"),
    [("exits", "fatal: configuration file missing"), ("bad_schema", "strnig")],
)
def test_a_server_that_cannot_serve_is_one_line_from_the_cli(
    fresh_cli: FreshCli, tmp_path: Path, mode: str, says: str
) -> None:
    python = fresh_cli.script.parent / "python"
    spec = f"mcp:stdio:{python} {SERVERS} {mode}"
    done = fresh_cli.run(
        "run", "--suite", str(cases_file(tmp_path)), "--tools", spec, "-o", str(tmp_path / "r")
    )
    stderr = assert_clean_error(done, 2, says)
    assert len(stderr.strip().splitlines()) == 1, stderr
    assert not (tmp_path / "r").exists()


def test_tools_that_are_not_an_mcp_spec_are_refused(fresh_cli: FreshCli, tmp_path: Path) -> None:
    done = fresh_cli.run("run", "--suite", str(cases_file(tmp_path)), "--tools", "stdio:python server.py")
    assert_clean_error(done, 2, "--tools")
