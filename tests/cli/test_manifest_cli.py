"""``callbench manifest diff``'s bad input: one line and exit 2 (issue 28, item 3)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from callbench.cli.main import main
from callbench.harness.runfolder import read_header, write_header
from callbench.types.manifest import ToolSourceManifest

OLD_RUN = Path(__file__).parents[1] / "harness" / "fixtures" / "run_schema1"
"""A run folder written before manifests were kept."""


def _with_manifest(tmp_path: Path, name: str, version: str) -> Path:
    run_dir = Path(shutil.copytree(OLD_RUN, tmp_path / name))
    header = read_header(run_dir)
    suites = [s.name for s in header.suites]
    header.tool_sources = [
        ToolSourceManifest(
            kind="mcp",
            source="stdio:srv",
            suites=suites,
            server_name="srv",
            server_version=version,
            tools={"a": "1"},
            listing_hash="f" * 64,
        )
    ]
    write_header(run_dir, header)
    return run_dir


def _error_line(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and not captured.out, captured
    return lines[0]


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = _with_manifest(tmp_path, "good", "1.0")
    assert main(["manifest", "diff", str(tmp_path / "missing"), str(good)]) == 2
    assert _error_line(capsys) == f"callbench: error: no such run folder: {tmp_path / 'missing'}"
    (tmp_path / "empty").mkdir()
    assert main(["manifest", "diff", str(good), str(tmp_path / "empty")]) == 2
    assert _error_line(capsys) == f"callbench: error: {tmp_path / 'empty'}: not a run folder (no run.json)"
    assert main(["manifest", "diff", str(OLD_RUN), str(good)]) == 2
    line = _error_line(capsys)
    assert line.startswith(f"callbench: error: {OLD_RUN}: run.json records no manifest")


def test_equal_is_exit_0_and_different_is_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one, same, other = (_with_manifest(tmp_path, n, v) for n, v in (("a", "1.0"), ("b", "1.0"), ("c", "2.0")))
    assert main(["manifest", "diff", str(one), str(same)]) == 0
    assert capsys.readouterr().out == f"same manifest: 1 tool source(s), 1 tools ({one} and {same})\n"
    assert main(["manifest", "diff", str(one), str(other)]) == 1
    assert "  server version 1.0 -> 2.0" in capsys.readouterr().out.splitlines()


def test_compare_says_when_a_run_has_no_manifest_and_others_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = _with_manifest(tmp_path, "good", "1.0")
    assert main(["compare", str(OLD_RUN), str(good)]) == 0
    err = capsys.readouterr().err
    assert f"callbench: warning: {OLD_RUN}: no manifest in run.json" in err
    assert main(["compare", str(OLD_RUN), str(OLD_RUN)]) == 0  # none has one: nothing to say about it
    assert "manifest" not in capsys.readouterr().err
