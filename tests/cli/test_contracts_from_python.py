"""``callbench contracts from-python`` (issue 27, item 3): strict contracts from type hints and
docstrings, a note for every parameter it could not type, and contracts a suite's bindings then run."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
import yaml

import callbench
from callbench.cli.main import main
from callbench.tools.registry import ToolRegistry

TOOLS = '''
from typing import Annotated, Literal

from pydantic import Field


class Store:
    def __init__(self):
        self.moves = []

    def snapshot(self):
        return {"moves": list(self.moves)}


def make_state(case, workdir):
    return Store()


def get_weather(state, city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> dict:
    """Current weather for a city.

    Args:
        city: City name, e.g. Paris.
        unit: Temperature unit.
    """
    return {"city": city, "unit": unit, "temperature": 21}


def move_stock(state, from_: str, to: str, quantity: Annotated[int, Field(ge=1, le=100)] = 1) -> dict:
    """Move stock between warehouses.

    Args:
        from_: Warehouse the stock leaves.
        to: Warehouse it goes to.
        quantity: How many units
            (between 1 and 100).
    """
    state.moves.append([from_, to, quantity])
    return {"moved": quantity}


def tag(state, label, note: str | None = None):
    """Tag something."""
    return {"label": label}


def _private_helper():
    return None
'''


@pytest.fixture
def written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, str]:
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "tools.py").write_text(textwrap.dedent(TOOLS))
    assert main(["contracts", "from-python", str(folder / "tools.py"), "--out", str(folder / "tools")]) == 0
    return folder, capsys.readouterr().out


def test_contracts_carry_enums_bounds_keyword_names_and_docstrings(written: tuple[Path, str]) -> None:
    folder, out = written
    assert "wrote 3 contract(s)" in out and "get_weather, move_stock, tag" in out
    assert "note: tag: parameter 'label' has no type hint; any JSON value is accepted" in out
    weather = yaml.safe_load((folder / "tools" / "get_weather.yaml").read_text())
    assert weather["description"] == "Current weather for a city."
    params = weather["parameters"]
    assert params["required"] == ["city"] and params["additionalProperties"] is False
    assert params["properties"]["unit"] == {
        "default": "celsius",
        "enum": ["celsius", "fahrenheit"],
        "type": "string",
        "description": "Temperature unit.",
    }
    move = yaml.safe_load((folder / "tools" / "move_stock.yaml").read_text())["parameters"]
    assert list(move["properties"]) == ["from", "to", "quantity"]  # from_ is the keyword in the contract
    assert move["properties"]["quantity"]["minimum"] == 1 and move["properties"]["quantity"]["maximum"] == 100
    assert move["properties"]["quantity"]["description"] == "How many units (between 1 and 100)."
    assert set(ToolRegistry.from_dir(folder / "tools").names()) == {"get_weather", "move_stock", "tag"}


def test_the_written_contracts_and_the_same_file_run_as_a_suite(
    written: tuple[Path, str], tmp_path: Path
) -> None:
    folder, _out = written
    (folder / "suite.yaml").write_text(
        "name: stock\nbindings: tools.py\nstate: tools.py:make_state\n"
        "scorers: [native-function-contract, real-tool-execution, task-completion-execution, state-match]\n"
    )
    case = {
        "id": "move",
        "instruction": "Move 5 units from Oslo to Rome.",
        "expected": [{"tool": "move_stock", "arguments": {"from": "Oslo", "to": "Rome", "quantity": 5}}],
    }
    (folder / "cases.jsonl").write_text(json.dumps(case) + "\n")
    result = callbench.run(str(folder), "oracle", out_dir=tmp_path / "run", progress="quiet")
    assert all(figures["accuracy"] == 1.0 for figures in result.summary["tiers"].values()), result.summary[
        "tiers"
    ]
    assert result.records[0].trace.final_state == {"moves": [["Oslo", "Rome", 5]]}


def test_existing_contracts_are_kept_without_force(
    written: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    folder, _out = written
    code = main(["contracts", "from-python", str(folder / "tools.py"), "--out", str(folder / "tools")])
    err = capsys.readouterr().err
    assert code == 2 and "contracts exist for get_weather, move_stock, tag; pass --force" in err
