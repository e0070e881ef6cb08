"""The generation controls' bad values through the console script: one line, exit 2, no run folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from fresh_cli import FreshCli, assert_clean_error


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--case-timeout", "soon"], "--case-timeout expects SECONDS or SUITE=SECONDS, got 'soon'"),
        (["--parallel-tool-calls", "maybe"], "--parallel-tool-calls must be on or off (got 'maybe')"),
        (["--thinking-budget", "64", "--max-tokens", "64"], "--thinking-budget must be below --max-tokens"),
    ],
)
def test_bad_controls_are_one_line_before_anything_runs(
    fresh_cli: FreshCli, tmp_path: Path, argv: list[str], says: str
) -> None:
    out = tmp_path / "never"
    done = fresh_cli.run("run", "-s", "starter", "-m", "oracle", "-o", str(out), *argv)
    assert_clean_error(done, 2, says)
    assert not out.exists()
