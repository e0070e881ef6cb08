"""scripts/verdict_snapshot.py: one sorted line per verdict, and a diff that names every change."""

from __future__ import annotations

import gzip
import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "verdict_snapshot.py"


@pytest.fixture(scope="module")
def snapshot_module():
    spec = importlib.util.spec_from_file_location("verdict_snapshot", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_snapshot_of_starter_is_sorted_and_complete(snapshot_module, tmp_path: Path) -> None:
    out = tmp_path / "snap.tsv"
    assert snapshot_module.main(["--only", "starter", "-o", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert lines == sorted(lines)
    # 16 cases x 6 agents x 3 tiers
    assert len(lines) == 16 * 6 * 3
    oracle = [line.split("\t") for line in lines if line.split("\t")[1] == "oracle"]
    assert all(parts[5] == "true" and parts[6] == "-" for parts in oracle)


def test_diff_names_each_changed_verdict(snapshot_module, tmp_path: Path, capsys) -> None:
    head = "starter\toracle\tstarter:c1\t1\ttask-completion-execution\t"
    old, new = tmp_path / "old.tsv", tmp_path / "new.tsv"
    old.write_text(head + "true\t-\t1.0000\n")
    new.write_text(head + "false\ttool_missing\t0.3500\n")
    assert snapshot_module.main(["diff", str(old), str(new)]) == 1
    text = capsys.readouterr().out
    assert (
        "starter · oracle: 1 changed verdict(s)" in text and "task-completion-execution: true->false" in text
    )
    assert snapshot_module.main(["diff", str(old), str(old)]) == 0
    # The files kept in design/verdicts are compressed: diff reads either form.
    packed = tmp_path / "old.tsv.gz"
    packed.write_bytes(gzip.compress(old.read_bytes()))
    assert snapshot_module.main(["diff", str(packed), str(old)]) == 0
    assert snapshot_module.main(["diff", str(packed), str(new)]) == 1


def test_diff_of_a_missing_file_is_one_line(snapshot_module, tmp_path: Path, capsys) -> None:
    assert snapshot_module.main(["diff", str(tmp_path / "nope.tsv"), str(tmp_path / "nope.tsv")]) == 2
    assert capsys.readouterr().err.strip() == f"verdict_snapshot diff: {tmp_path / 'nope.tsv'}: no such file"
