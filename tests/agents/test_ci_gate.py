"""The agent under test as a CI gate (issue 28, item 6): the pytest plugin's marker and fixture run a
suite against an agent from a recording of its model (no network) and check thresholds.

* The worked example, ``examples/agents/test_agents_gate.py``, passes offline: both example agents,
  starter, three trials per case, from the recordings committed under ``examples/agents/recordings/``;
  the model endpoint named in the environment is a closed port and no API key is set, so a request
  that left the machine (or reached any endpoint) would fail the run.
* A deliberately broken agent (it answers without calling a tool) fails the gate with a readable
  message naming every case, its tier and reason codes, which the JUnit XML report carries.
* A flaky agent (right on two trials of three) is not passed by luck: pass^3 fails it.
* A stale recording (the agent now asks its model something else) fails the gate with error records
  ``cassette_miss`` and says to record again, never as the agent's failure.

The gates run in one pytest subprocess (the plugin is loaded through its ``pytest11`` entry point, as
in a user's CI; each pytest start imports callbench's engine, seconds on a small machine): the worked
example, then the bad gates and a missing recording; each test reads its gates' outcome from the
run's JUnit XML report. ``python tests/agents/test_ci_gate.py record`` records the example's
recordings again, against the scripted OpenAI-compatible server
(``tests/helpers/scripted_responder.py``, the ``oracle`` player: each case's gold calls) on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "agents"
EXAMPLE = EXAMPLES / "test_agents_gate.py"
RECORDINGS = EXAMPLES / "recordings"
CLOSED_PORT = "http://127.0.0.1:9/v1"
"""Where the agents' model would be if anything asked it: nothing listens there."""
KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "CALLBENCH_KEYS_FILE")


def offline_environment(tmp_path: Path) -> dict[str, str]:
    """The environment of a gate run: no key, the model endpoint a closed port, no keys file."""
    env = {k: v for k, v in os.environ.items() if k not in KEY_VARIABLES and not k.startswith("PYTEST_")}
    env.update(
        OPENAI_BASE_URL=CLOSED_PORT,
        ANTHROPIC_BASE_URL=CLOSED_PORT,
        CALLBENCH_KEYS_FILE=str(tmp_path / "no-keys.toml"),
        OPENAI_AGENTS_DISABLE_TRACING="1",
        NO_PROXY="127.0.0.1,localhost",
    )
    return env


def run_pytest(target: Path | list[Path], tmp_path: Path, *args: str, env: dict[str, str] | None = None):
    """``pytest TARGET...`` in a subprocess with a JUnit XML report; (process, the report's root).
    It runs in the first target's folder."""
    targets = target if isinstance(target, list) else [target]
    report = tmp_path / "junit.xml"
    process = subprocess.run(
        [sys.executable, "-m", "pytest", *map(str, targets), f"--junitxml={report}"]
        + ["-p", "no:cacheprovider", "--basetemp", str(tmp_path / "base"), "-o", "junit_logging=no", *args],
        cwd=targets[0].parent,
        env=env if env is not None else offline_environment(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
    )
    root = ET.parse(report).getroot() if report.exists() else None
    return process, root


def failure_text(failure: ET.Element) -> str:
    """The gate's report as a JUnit reader shows it. pytest up to 9.1 writes it whole into the
    ``message`` attribute; 9.2 cuts a long message there (``[+17 more lines; full report in element
    text]``) and keeps it whole in the element's text (behind pytest's ``E`` markers when the
    report has a traceback; the gate's has none)."""
    message = failure.get("message", "")
    if "full report in element text]" not in message:
        return message
    lines = (failure.text or "").splitlines()
    if any(line.startswith("E ") for line in lines):
        lines = [re.sub(r"^E {7}", "", line, count=1) for line in lines if line.startswith("E ")]
    return "\n".join(lines)


def cases_of(root: ET.Element) -> dict[str, ET.Element]:
    return {case.get("name", ""): case for case in root.iter("testcase")}


def properties(case: ET.Element) -> dict[str, str]:
    return {p.get("name", ""): p.get("value", "") for p in case.iter("property")}


EXAMPLE_GATES = {"test_openai_mcp_agent", "test_agents_sdk_agent"}
BAD_GATE_TESTS = {"test_broken_agent", "test_flaky_agent", "test_stale_recording"}
MISSING_GATE_TEST = "test_gate"


@dataclass(frozen=True)
class GateRun:
    """The one pytest run of every gate here, and the gates' test cases of its JUnit report by name."""

    process: subprocess.CompletedProcess[str]
    cases: dict[str, ET.Element]
    folder: Path
    """Where the bad gates and the missing recording's gate were written."""


@pytest.fixture(scope="module")
def gates(tmp_path_factory: pytest.TempPathFactory) -> GateRun:
    tmp_path = tmp_path_factory.mktemp("gates")
    folder = tmp_path / "gate"
    folder.mkdir()
    (folder / "conftest.py").write_text(f"import sys\nsys.path.insert(0, {str(EXAMPLES)!r})\n")
    (folder / "bad_agents.py").write_text(textwrap.dedent(BAD_AGENTS))
    (folder / "test_bad_gates.py").write_text(BAD_GATES.format(replay=str(RECORDINGS / "openai_mcp")))
    (folder / "test_missing.py").write_text(MISSING_GATE)
    process, root = run_pytest([EXAMPLE, folder / "test_bad_gates.py", folder / "test_missing.py"], tmp_path)
    assert root is not None, process.stdout + process.stderr
    cases = cases_of(root)
    assert set(cases) == EXAMPLE_GATES | BAD_GATE_TESTS | {MISSING_GATE_TEST}, process.stdout
    return GateRun(process, cases, folder)


def test_the_example_agents_pass_their_gate_offline(gates: GateRun) -> None:
    # The run also holds the gates below, which fail: the example's pass is read case by case.
    cases = {name: gates.cases[name] for name in EXAMPLE_GATES}
    for name, case in cases.items():
        assert case.find("failure") is None and case.find("error") is None, (name, gates.process.stdout)
        assert case.find("skipped") is None, name
        found = properties(case)
        assert float(found["callbench_low"]) >= 0.75 and float(found["callbench_pass_hat_k"]) == 1.0
        assert found["callbench_failed_cases"] == ""
        run_dir = Path(found["callbench_run_dir"])
        records = [json.loads(line) for line in (run_dir / "records.jsonl").read_text().splitlines()]
        assert len(records) == 16 * 3 and all(r["status"] == "completed" for r in records)
        # every model request was answered from the recording, and counted as the agent's usage
        for record in records:
            model = record["trace"]["agent"]["details"]["model"]
            assert model["requests"] == model["answered"] == model["replayed"] >= 1
            assert all(r.get("agent_request") for r in record["trace"]["rounds"])
        summary = json.loads((run_dir / "summary.json").read_text())
        assert summary["usage"]["tokens"]["requests"] == sum(
            r["trace"]["agent"]["details"]["model"]["requests"] for r in records
        )
        assert summary["usage"]["tokens"]["input"] > 0
        header = json.loads((run_dir / "run.json").read_text())
        assert header["options"]["agent_model"]["mode"] == "replay"
        assert "callbench gate passed" in (run_dir / "gate.txt").read_text()


BAD_AGENTS = '''
import threading
from collections import Counter

from openai_mcp_agent import agent as example

_lock = threading.Lock()
_runs = Counter()


async def broken(instruction, mcp_url, model_url=None):
    """Answers at once, without calling a tool (or its model)."""
    return "I could not find that out."


async def flaky(instruction, mcp_url, model_url=None, case_id=None, system_prompt=None):
    """The example agent, except that every third run of a case answers without calling a tool."""
    with _lock:
        _runs[case_id] += 1
        n = _runs[case_id]
    if n % 3 == 0:
        return "I could not find that out."
    return await example(instruction, mcp_url, model_url=model_url, system_prompt=system_prompt)
'''

BAD_GATES = """
import pytest

GATE = dict(suite="starter", tier="task-completion-execution", trials=3, replay={replay!r},
            min_accuracy=0.5, min_pass_k=0.9, env={{"CALLBENCH_AGENT_MODEL": "scripted"}})


@pytest.mark.callbench(agent="py:bad_agents:broken", **GATE)
def test_broken_agent(callbench_gate):
    callbench_gate.check()


@pytest.mark.callbench(agent="py:bad_agents:flaky", **{{**GATE, "min_accuracy": 0.3}})
def test_flaky_agent(callbench_gate):
    callbench_gate.check()


STALE = {{**GATE, "env": {{"CALLBENCH_AGENT_MODEL": "newer"}}}}  # the agent now asks another model


@pytest.mark.callbench(agent="py:openai_mcp_agent:agent", **STALE)
def test_stale_recording(callbench_gate):
    callbench_gate.check()
"""


def test_broken_flaky_and_stale_fail_the_gate_with_a_readable_message(gates: GateRun) -> None:
    process, cases = gates.process, gates.cases
    assert process.returncode == 1, process.stdout + process.stderr  # tests failed; nothing else went wrong

    broken = cases["test_broken_agent"].find("failure")
    assert broken is not None
    text = failure_text(broken)
    assert "callbench gate FAILED: agent py:bad_agents:broken on suite starter" in text.splitlines()[0]
    assert "lower bound 0.00 is below min_accuracy 0.50" in text
    assert "pass^3 0.00" in text and "failed cases (16):" in text
    # every case named, with its tier and reason codes, one line each
    line = next(ln for ln in text.splitlines() if "starter:weather_paris " in ln)
    assert (
        line.strip()
        == "starter:weather_paris [task-completion-execution] failed 3/3: trials 1,2,3: no_structured_call"
    )
    assert "callbench gate FAILED" in process.stdout  # pytest's own summary shows it too

    flaky = cases["test_flaky_agent"].find("failure")
    assert flaky is not None
    text = failure_text(flaky)
    assert "lower bound" not in text  # right on two trials in three: an accuracy threshold passes it...
    assert "pass^3 0.00 (all 3 trials of a case pass) is below min_pass_k 0.90" in text  # ...not pass^3
    assert properties(cases["test_flaky_agent"])["callbench_accuracy"].startswith("0.66")

    stale = cases["test_stale_recording"].find("failure")
    assert stale is not None
    text = failure_text(stale)
    assert "no case was scored under tier 'task-completion-execution'" in text
    assert "48 error record(s) (cassette_miss ×48; max_errors 0)" in text
    assert "record it again" in text and "failed cases" not in text  # never scored as the agent's failure
    assert "pass^3" not in text


MISSING_GATE = (
    "import pytest\n\n"
    "@pytest.mark.callbench(suite='starter', agent='py:openai_mcp_agent:agent', replay='nowhere', "
    "min_accuracy=0.5)\n"
    "def test_gate(callbench_gate):\n    callbench_gate.check()\n"
)


def test_a_missing_recording_is_one_line(gates: GateRun) -> None:
    assert gates.process.returncode == 1
    failure = gates.cases[MISSING_GATE_TEST].find("failure")
    assert failure is not None
    message = failure_text(failure)
    assert (
        f"callbench gate could not run: --replay {gates.folder / 'nowhere'}: no such cassette folder"
        in message
    )


def test_the_plugin_is_light_when_pytest_starts() -> None:
    """Every pytest session of every project with callbench installed loads the plugin: it must not
    import callbench's engine, pydantic or aiohttp until a gate runs."""
    code = (
        "import sys, callbench.pytest_plugin\n"
        "heavy = ('callbench.api', 'callbench.harness', 'callbench.providers')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'aiohttp', 'numpy')"
        " or m.startswith(heavy)))"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "[]"
    entry = subprocess.run(
        [
            sys.executable,
            "-c",
            "from importlib.metadata import entry_points; "
            "print([e.value for e in entry_points(group='pytest11') if e.name == 'callbench'])",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert entry.stdout.strip() == "['callbench.pytest_plugin']"


# --- recording the example's recordings -------------------------------------------------------------


def record() -> int:
    """Record ``examples/agents/recordings/`` again against the scripted server (oracle player)."""
    sys.path[:0] = [str(ROOT / "tests" / "helpers"), str(ROOT / "tests" / "agents")]
    from agent_verdicts import agent_environment
    from protocol_server import ProtocolServer
    from scripted_responder import ScriptedResponder

    from callbench.suites.resolve import load_suite

    shutil.rmtree(RECORDINGS, ignore_errors=True)
    scratch = ROOT / ".callbench-gate-recording"
    shutil.rmtree(scratch, ignore_errors=True)
    settings, removed = agent_environment(scratch / "env")
    env = {k: v for k, v in os.environ.items() if k not in removed}
    env.update(settings)
    with ProtocolServer(ScriptedResponder(load_suite("starter"), "oracle")) as server:
        env["OPENAI_BASE_URL"] = server.url
        process, _root = run_pytest(EXAMPLE, scratch, "--callbench-record", env=env)
    print(process.stdout[-3000:], process.stderr[-3000:])
    shutil.rmtree(scratch, ignore_errors=True)
    return process.returncode


if __name__ == "__main__":
    if sys.argv[1:] != ["record"]:
        sys.exit("usage: python tests/agents/test_ci_gate.py record")
    sys.exit(record())
