"""``callbench data fetch``: argument handling only (no network)."""

import socket
import sys
import types

import pytest
import typer
from typer.testing import CliRunner

from callbench.benchmarks.complexfuncbench.cli import DATASETS, fetch
from callbench.benchmarks.complexfuncbench.cli import register_commands as register
from callbench.errors import UserError


@pytest.fixture
def fake_hub(monkeypatch, tmp_path):
    # fetch connects to the hub's host once before downloading: a listening socket on the loopback
    # stands in for it (HF_ENDPOINT moves the hub, as it does for the hub client).
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{listener.getsockname()[1]}")
    calls = []

    def hf_hub_download(**kwargs):
        calls.append(kwargs)
        return str(tmp_path / "out" / kwargs["filename"])

    monkeypatch.setitem(
        sys.modules, "huggingface_hub", types.SimpleNamespace(hf_hub_download=hf_hub_download)
    )
    yield calls
    listener.close()


def test_fetch_asks_the_hub_client_for_the_data_set_file(fake_hub, tmp_path):
    path = fetch("complexfuncbench", tmp_path / "out", revision="v1")
    assert path.name == "ComplexFuncBench.jsonl"
    assert fake_hub == [
        {
            "repo_id": "zai-org/ComplexFuncBench",
            "filename": "ComplexFuncBench.jsonl",
            "repo_type": "dataset",
            "revision": "v1",
            "local_dir": str(tmp_path / "out"),
        }
    ]


def test_unknown_data_set_and_missing_extra(monkeypatch, tmp_path):
    with pytest.raises(UserError, match="did you mean 'complexfuncbench'"):
        fetch("complexfuncbnch", tmp_path)
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)
    with pytest.raises(UserError, match=r"callbench\[hub\]"):
        fetch("complexfuncbench", tmp_path)


def test_cli_command_parses_its_arguments(fake_hub, tmp_path):
    app = typer.Typer()
    app.command("noop")(lambda: None)  # a second command so the group keeps its name
    register(app)
    result = CliRunner().invoke(app, ["data", "fetch", "complexfuncbench", "--out", str(tmp_path / "d")])
    assert result.exit_code == 0, result.output
    assert fake_hub[0]["revision"] is None and fake_hub[0]["local_dir"] == str(tmp_path / "d")
    assert "callbench run --suite complexfuncbench --data" in result.output
    assert set(DATASETS) == {"complexfuncbench"}
