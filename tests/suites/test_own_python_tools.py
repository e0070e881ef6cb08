"""A path suite that runs the user's own Python tools (issue 27, item 1), and ``--suite file.py``.

``suite.yaml`` names ``bindings: tools.py`` and ``state: tools.py:make_state``; the oracle passes every
tier, ``state-match`` included, with the user's functions really running (a ``$ref`` to a result they
returned, a parameter named ``from``). Every way of getting it wrong is one line naming the file and
the tool, before any case runs.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

import callbench
from callbench.cli.main import main

TOOLS_PY = """
class Shop:
    def __init__(self):
        self.orders = []
        self.transfers = []

    def snapshot(self):
        return {"orders": list(self.orders), "transfers": list(self.transfers)}


def make_state(case, workdir):
    return Shop()


def lookup_sku(state, name):
    return {"sku": "SKU-" + str(sum(map(ord, name)) % 1000), "name": name}


def order(state, sku, quantity=1):
    state.orders.append([sku, quantity])
    return {"order_id": "O-" + sku, "quantity": quantity}


def transfer(state, **arguments):  # "from" is a Python keyword: it arrives in **arguments
    state.transfers.append([arguments["from"], arguments["to"]])
    return {"ok": True}


def helper_not_a_tool():
    return None
"""

CONTRACTS = {
    "lookup_sku": {"name": "lookup_sku", "description": "Find a SKU", "parameters": {
        "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}},
    "order": {"name": "order", "description": "Order a SKU", "parameters": {
        "type": "object", "properties": {"sku": {"type": "string"}, "quantity": {"type": "integer"}},
        "required": ["sku", "quantity"]}},
    "transfer": {"name": "transfer", "description": "Move stock", "parameters": {
        "type": "object", "properties": {"from": {"type": "string"}, "to": {"type": "string"}},
        "required": ["from", "to"]}},
}  # fmt: skip

CASES = [
    {"id": "find", "instruction": "Find the SKU of the red mug.",
     "expected": [{"tool": "lookup_sku", "arguments": {"name": "red mug"}}]},
    {"id": "buy", "instruction": "Order two red mugs.",
     "expected": [{"tool": "lookup_sku", "arguments": {"name": "red mug"}},
                  {"tool": "order", "arguments": {"sku": {"$ref": "lookup_sku.sku"}, "quantity": 2}}]},
    {"id": "move", "instruction": "Move stock from Oslo to Rome.",
     "expected": [{"tool": "transfer", "arguments": {"from": "Oslo", "to": "Rome"}}]},
]  # fmt: skip


def make_suite(root: Path, header: str = "", tools_py: str = TOOLS_PY, contracts: dict | None = None) -> Path:
    folder = root / "shop"
    (folder / "tools").mkdir(parents=True)
    for name, contract in (contracts or CONTRACTS).items():
        (folder / "tools" / f"{name}.json").write_text(json.dumps(contract))
    (folder / "tools.py").write_text(tools_py)
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES))
    (folder / "suite.yaml").write_text(
        header
        or "name: shop\nbindings: tools.py\nstate: tools.py:make_state\n"
        "scorers: [native-function-contract, real-tool-execution, task-completion-execution, state-match]\n"
    )
    return folder


def test_the_users_functions_run_and_the_oracle_passes_every_tier(tmp_path: Path) -> None:
    result = callbench.run(str(make_suite(tmp_path)), "oracle", out_dir=tmp_path / "run", progress="quiet")
    tiers = result.summary["tiers"]
    assert set(tiers) >= {"real-tool-execution", "task-completion-execution", "state-match"}
    assert all(figures["accuracy"] == 1.0 and figures["n"] == 3 for figures in tiers.values()), tiers
    records = {r.case_id: r for r in result.records}
    buy = records["buy"]
    assert buy.trace.calls[0].result == {
        "sku": "SKU-" + str(sum(map(ord, "red mug")) % 1000),
        "name": "red mug",
    }
    assert buy.trace.final_state == {"orders": [[buy.trace.calls[0].result["sku"], 2]], "transfers": []}
    assert records["move"].trace.final_state == {"orders": [], "transfers": [["Oslo", "Rome"]]}
    header = json.loads((tmp_path / "run" / "run.json").read_text())
    assert header["suites"][0]["executor"] == "python-bindings"


def test_a_wrong_answer_is_scored_against_the_real_result(tmp_path: Path) -> None:
    """noisy:1 drops or alters arguments: the real functions' state shows it (state-match fails)."""
    result = callbench.run(str(make_suite(tmp_path)), "noisy:1", out_dir=tmp_path / "run", progress="quiet")
    assert result.summary["n_error"] == 0
    assert result.summary["tiers"]["state-match"]["accuracy"] < 1.0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"tools_py": "import no_such_module_here\n"}, "tools.py failed to import: ModuleNotFoundError"),
        ({"tools_py": TOOLS_PY.replace("def order(", "def ordr(")}, "no function for the tool(s) 'order'"),
        (
            {"tools_py": TOOLS_PY.replace("def order(state, sku, quantity=1)", "def order(state, sku)")},
            "cannot take the parameters of tool 'order' (sku, quantity) as fn(state, **arguments)",
        ),
        (
            {"header": "name: shop\nbindings: tools.py:TOOLS\n"},
            "bindings: tools.py has no 'TOOLS'",
        ),
        (
            {"header": "name: shop\nbindings: tools.py\nstate: tools.py:make_stat\n"},
            "state: tools.py has no 'make_stat'",
        ),
        ({"header": "name: shop\nbindings: missing.py\n"}, "bindings: file"),
    ],
)
def test_each_binding_mistake_is_one_line_before_any_case_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: dict[str, str], message: str
) -> None:
    suite = make_suite(tmp_path, **change)
    out = tmp_path / "run"
    code = main(["run", "--suite", str(suite), "--model", "oracle", "--progress", "quiet", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and message in err, err
    assert err.count("\n") == 1 and "Traceback" not in err and str(suite / "suite.yaml") in err
    assert not (out / "records.jsonl").exists()


SUITE_PY = """
from pathlib import Path

from callbench.suites.loader import load_suite_path

HERE = Path(__file__).parent


def load_suite(options):
    suite = load_suite_path(HERE / "shop")  # the folder above, with its own tools, built in Python
    suite.name = "from-python"
    return suite


def not_a_suite():
    return {"name": "nope"}
"""


def test_a_suite_defined_in_python_loads_by_file_and_function(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_suite(tmp_path)
    (tmp_path / "my_suite.py").write_text(textwrap.dedent(SUITE_PY))
    result = callbench.run(str(tmp_path / "my_suite.py"), "oracle", out_dir=tmp_path / "a", progress="quiet")
    assert result.summary["tiers"]["task-completion-execution"]["accuracy"] == 1.0
    assert json.loads((tmp_path / "a" / "run.json").read_text())["suites"][0]["name"] == "from-python"
    for spec, message in (
        ("my_suite.py:not_a_suite", "is not a suite loader: it returned a dict, not a callbench Suite"),
        ("my_suite.py:load_suit", "no function 'load_suit'"),
        ("missing.py", "suite file not found"),
    ):
        code = main(["run", "--suite", str(tmp_path / spec), "--model", "oracle", "--progress", "quiet",
                     "--out", str(tmp_path / "b")])  # fmt: skip
        err = capsys.readouterr().err
        assert code == 2 and message in err and err.count("\n") == 1, err


def test_a_contract_only_suite_says_its_execution_tiers_saw_no_real_tool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 27, item 2: without bindings the contract executor answers with synthetic results; the
    run table marks the execution tiers and names the executor, where it used to read 100% silently."""
    synthetic = make_suite(tmp_path, header="name: shop\n")
    assert main(["run", "--suite", str(synthetic), "--model", "oracle", "--out", str(tmp_path / "a")]) == 0
    shown = capsys.readouterr().out
    assert "real-tool-execution ‡" in shown and "task-completion-execution ‡" in shown
    assert "synthetic results: no tool ran in shop" in " ".join(shown.split())
    assert "tools: suite shop: contract" in shown
    real = make_suite(tmp_path / "real")
    assert main(["run", "--suite", str(real), "--model", "oracle", "--out", str(tmp_path / "b")]) == 0
    shown = capsys.readouterr().out
    assert "‡" not in shown and "tools: suite shop: python-bindings (the suite's own Python tools)" in shown
