"""Verdict parity with BFCL's own checker, entry by entry (~16k single-turn, 600 multi-turn outputs).

BFCL's checker runs in its own virtual environment (created by .ci/background.d/20-bfcl-venv.sh) through
a subprocess; callbench's faithful mode runs here.  Every output must get the same verdict and
the same ``error_type``.  A crash inside BFCL's checker must meet a ``checker_crash:`` verdict.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import perturb_multi
import pytest
from bfcl_model import MODEL
from perturb import build_outputs

from callbench.benchmarks.bfcl.data import MULTI_TURN, SINGLE_TURN, index
from callbench.benchmarks.bfcl.entry import judge_entry
from callbench.benchmarks.bfcl.multi_turn_checks import judge_multi_result
from callbench.benchmarks.bfcl.options import BfclOptions

KNOWN_DEFECTS: dict[str, str] = {}  # output key -> reason; documented in docs/bfcl.md


def _normalise(valid: bool, error_type: str) -> tuple[bool, str]:
    if error_type.startswith(("crash:", "checker_crash:")):
        return valid, "crash"
    return valid, error_type


def reference_verdicts(
    python: Path, rows: list[dict], folder: Path, models: Path | None = None
) -> dict[str, dict]:
    """BFCL's verdicts for ``rows``, computed in the BFCL venv (and its model registry written to
    ``models``, when given: the same process, one import of bfcl-eval)."""
    source, target = folder / "in.jsonl", folder / "out.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    env = {**os.environ, "BFCL_PROJECT_ROOT": str(folder / "bfcl-root")}
    extra = [str(models)] if models else []
    subprocess.run(
        [
            str(python),
            str(Path(__file__).parent / "bfcl_reference.py"),
            MODEL,
            str(source),
            str(target),
            *extra,
        ],
        check=True,
        env=env,
        capture_output=True,
        text=True,
    )
    return {item["key"]: item for item in map(json.loads, target.read_text().splitlines())}


@pytest.fixture(scope="module")
def reference(tmp_path_factory, bfcl_folder, reference_python):
    """Single-turn rows, multi-turn rows, BFCL's verdicts for all of them and BFCL's model registry.

    One subprocess: its cost is importing bfcl-eval (~6 s of CPU); checking the ~16k rows takes
    ~0.5 s, so the rows are not sliced further."""
    single = build_outputs(bfcl_folder, stride=3)  # bench/bfcl_checker.py --agreement runs all of them
    multi = perturb_multi.build_outputs(bfcl_folder, limit=15)
    folder = tmp_path_factory.mktemp("bfcl")
    theirs = reference_verdicts(reference_python, single + multi, folder, models=folder / "models.json")
    return single, multi, theirs, json.loads((folder / "models.json").read_text())


@pytest.fixture(scope="module")
def outputs(reference):
    """Single-turn rows, multi-turn rows and BFCL's verdicts for all of them."""
    return reference[:3]


def test_faithful_mode_agrees_with_bfcl(outputs, bfcl_folder):
    rows, _, theirs = outputs
    assert len(rows) >= 2000
    entries, answers = index(SINGLE_TURN, bfcl_folder)
    options = BfclOptions(underscore_to_dot=True)
    mismatches = []
    for row in rows:
        ours = judge_entry(
            row["category"], entries[row["id"]]["function"], row["result"], answers.get(row["id"]), options
        )
        ref = theirs[row["key"]]
        same = _normalise(ours.valid, ours.error_type) == _normalise(ref["valid"], ref["error_type"])
        if not same and row["key"] not in KNOWN_DEFECTS:
            mismatches.append((row["key"], ref["error_type"], ours.error_type))
    assert not mismatches, f"{len(mismatches)} disagreements, first: {mismatches[:5]}"
    kinds = Counter(theirs[row["key"]]["valid"] for row in rows)
    assert kinds[True] > 1000 and kinds[False] > 1000  # both verdicts well represented
    print(f"agreement: {len(rows)} outputs, {kinds[True]} pass / {kinds[False]} fail", file=sys.stderr)


def test_multi_turn_checker_agrees_with_bfcl(outputs, bfcl_folder):
    _, rows, theirs = outputs
    entries, answers = index(MULTI_TURN, bfcl_folder)
    mismatches = []
    for row in rows:
        ours = judge_multi_result(entries[row["id"]], row["result"], answers[row["id"]]).check
        ref = theirs[row["key"]]
        if (ours.valid, ours.error_type) != (ref["valid"], ref["error_type"]):
            mismatches.append((row["key"], ref["error_type"], ours.error_type))
    assert not mismatches, f"{len(mismatches)} disagreements, first: {mismatches[:5]}"
    assert len({theirs[row["key"]]["error_type"] for row in rows}) >= 5  # every failure kind is exercised


def test_model_registry_matches_bfcl(reference):
    """The name convention and FC flag callbench reads from bfcl-eval's source.

    They equal BFCL's own config objects (read in the reference subprocess).
    """
    from callbench.benchmarks.bfcl.models import registered_models

    theirs = reference[3]
    ours = {name: [info.is_fc_model, info.underscore_to_dot] for name, info in registered_models().items()}
    assert ours == theirs and len(ours) > 100
    assert {flags[1] for flags in theirs.values()} == {True, False}  # both conventions occur
