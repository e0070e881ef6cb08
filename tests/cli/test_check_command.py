"""``callbench check SUITE`` (issue 27, item 5): every built-in pack passes its self-test, and each
trap a suite author can fall into fails it with a line that says which case and why."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from callbench.cli.main import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "suites"))
from test_own_python_tools import TOOLS_PY, make_suite  # noqa: E402

INVARIANTS = ("loads", "oracle", "refuse", "noisy", "retrieval")


def lines(capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    out = capsys.readouterr().out
    return {line.split()[1]: line for line in out.splitlines() if line.startswith(("PASS", "FAIL"))}


# mcp-git and mcp-memory pass theirs in their own modules (test_the_pack_passes_its_self_test in
# tests/benchmarks/mcp_git and mcp_memory), whose tests of the oracle, refuse and noisy:1 then judge
# the check's kept runs instead of playing the same live runs again (tests/helpers/pack_self_test.py).
@pytest.mark.parametrize("suite", ["starter", "genomics"])
def test_every_built_in_pack_passes_its_self_test(suite: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", suite]) == 0
    found = lines(capsys)
    assert list(found) == list(INVARIANTS) and all(line.startswith("PASS") for line in found.values()), found


def test_a_contract_only_suite_whose_ref_cannot_resolve_fails_the_oracle_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = make_suite(tmp_path, header="name: shop\n")  # no bindings: synthetic results, no 'sku'
    assert main(["check", str(suite)]) == 1
    found = lines(capsys)
    assert found["oracle"].startswith("FAIL") and "(buy)" in found["oracle"]
    assert "did not resolve to an earlier result" in found["oracle"]


def test_a_suite_that_does_not_load_fails_the_loads_line_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = make_suite(tmp_path, tools_py=TOOLS_PY.replace("def order(", "def ordr("))
    assert main(["check", str(suite)]) == 1
    found = lines(capsys)
    assert list(found) == ["loads"] and "no function for the tool(s) 'order'" in found["loads"]


def test_a_suite_whose_expected_tool_is_never_offered_fails_the_retrieval_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "wide"
    (folder / "tools").mkdir(parents=True)
    for i in range(30):  # more tools than the default k of 24, none of them matching the instruction
        contract = {"name": f"tool_{i:02d}", "description": f"Do thing {i}", "parameters": {"type": "object"}}
        (folder / "tools" / f"tool_{i:02d}.json").write_text(json.dumps(contract))
    case = {"id": "needle", "instruction": "Please help.", "expected": [{"tool": "tool_29", "arguments": {}}]}
    (folder / "cases.jsonl").write_text(json.dumps(case) + "\n")
    assert main(["check", str(folder)]) == 1
    found = lines(capsys)
    assert found["retrieval"].startswith("FAIL") and "needle" in found["retrieval"]
