"""Per-case isolation of live MCP tool servers (issue 28, item 1).

A stateful server must give the same verdicts at any concurrency and in any case order: with the
reference memory server (npm, ``@modelcontextprotocol/server-memory``, installed by
``.ci/background.d/30-npm-mcp.sh``) and ``mcp-server-git`` (PyPI) as ``--tools`` sources, the verdicts
of small suites of stateful cases are the same at ``--concurrency 1`` and ``16`` and under two
``--shuffle`` seeds, and differ with the order under ``--tools-isolation shared`` (the leak this
fixes). ``{workdir}`` names each server's fresh folder; no server outlives its case or its run (a
time-out and Ctrl-C included); bad declarations are one line.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

import callbench
from callbench.errors import ConfigError, SuiteError
from callbench.mcp.client import McpServerError, McpServerSpec
from callbench.mcp.isolation import (
    ResetHook,
    ServerFolder,
    ToolSourceDeclaration,
    default_isolation,
    materialize,
)

ROOT = Path(__file__).resolve().parents[2]
CLAIMS = Path(__file__).with_name("claims_server.py")
NPM_SETUP = ROOT / ".ci" / "background.d" / "30-npm-mcp.sh"
NPM_PREFIX = Path(os.environ.get("CALLBENCH_NPM_PREFIX") or Path.home() / ".cache" / "callbench-test-npm")
MEMORY_SCRIPT = NPM_PREFIX / "node_modules" / "@modelcontextprotocol" / "server-memory" / "dist" / "index.js"
TIERS = ("native-function-contract", "real-tool-execution", "task-completion-execution")
GIT_IDENTITY = "GIT_AUTHOR_NAME=Ada GIT_AUTHOR_EMAIL=ada@example.com GIT_COMMITTER_NAME=Ada"
GIT_IDENTITY += " GIT_COMMITTER_EMAIL=ada@example.com GIT_CONFIG_GLOBAL=/dev/null"


# --- helpers -------------------------------------------------------------------------------------


def servers_of(pid: int) -> list[int]:
    """Live processes started in a server folder of process ``pid`` (their HOME names it)."""
    marker = f"callbench-{pid}-mcp".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:  # gone meanwhile, or a zombie
            continue
    return found


def folders_of(pid: int) -> list[Path]:
    return sorted(Path(tempfile.gettempdir()).glob(f"callbench-{pid}-mcp*"))


def write_suite(path: Path, name: str, rows: list[dict[str, Any]], **header: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"name": name, **header, "cases": rows}, sort_keys=False))
    return path


def write_folder(root: Path, name: str, rows: list[dict[str, Any]], **header: Any) -> Path:
    """A suite folder: ``suite.yaml`` (its name and ``header``) and ``cases.yaml``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "suite.yaml").write_text(yaml.safe_dump({"name": name, **header}, sort_keys=False))
    (root / "cases.yaml").write_text(yaml.safe_dump(rows, sort_keys=False))
    return root


def verdicts(result: callbench.RunResult) -> dict[str, Any]:
    """Per case: the error type of an error record, else the pass of every strict tier."""
    out: dict[str, Any] = {}
    for record in result.records:
        if record.status == "error":
            assert record.error is not None
            out[record.case_id] = record.error.type
        else:
            out[record.case_id] = tuple(record.verdicts[t].passed for t in TIERS)
    return out


def run(suite: Path, tools: str, out: Path, **options: Any) -> callbench.RunResult:
    result = callbench.run(str(suite), "oracle", tools=tools, out_dir=out, progress="quiet", **options)
    assert servers_of(os.getpid()) == [], "a tool server outlived its run"
    assert folders_of(os.getpid()) == [], "a tool server's folder outlived its run"
    return result


def shuffled_ids(ids: list[str], seed: int) -> list[str]:
    """The order ``--shuffle seed`` runs one suite's cases in (one trial each)."""
    order = list(ids)
    random.Random(seed).shuffle(order)
    return order


def seeds_with_orders(ids: list[str], first: str, then: str) -> tuple[int, int]:
    """Two seeds: one that runs ``first`` before ``then``, one the other way round."""
    before = next(
        s for s in range(100) if shuffled_ids(ids, s).index(first) < shuffled_ids(ids, s).index(then)
    )
    after = next(
        s for s in range(100) if shuffled_ids(ids, s).index(first) > shuffled_ids(ids, s).index(then)
    )
    return before, after


def claims(*extra: str) -> str:
    return f"mcp:stdio:{sys.executable} {CLAIMS} " + " ".join(extra)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- the reference memory server (npm) -----------------------------------------------------------

MEMORY_ROWS = [
    {
        "id": "zed_known",
        "instruction": "Remember Zed, then note that he likes tea.",
        "expected": [
            {
                "tool": "create_entities",
                "arguments": {
                    "entities": [{"name": "Zed", "entityType": "person", "observations": ["arrived"]}]
                },
            },
            {
                "tool": "add_observations",
                "arguments": {"observations": [{"entityName": "Zed", "contents": ["likes tea"]}]},
            },
        ],
    },
    {
        # In a clean graph Zed is unknown: the server answers isError, the call fails (every time).
        "id": "zed_unknown",
        "instruction": "Note that Zed likes coffee.",
        "expected": [
            {
                "tool": "add_observations",
                "arguments": {"observations": [{"entityName": "Zed", "contents": ["likes coffee"]}]},
            }
        ],
    },
    {
        "id": "ada_known",
        "instruction": "Remember Ada, then note that she writes poems.",
        "expected": [
            {
                "tool": "create_entities",
                "arguments": {
                    "entities": [{"name": "Ada", "entityType": "person", "observations": ["arrived"]}]
                },
            },
            {
                "tool": "add_observations",
                "arguments": {"observations": [{"entityName": "Ada", "contents": ["writes poems"]}]},
            },
        ],
    },
    {
        "id": "ada_unknown",
        "instruction": "Note that Ada likes maths.",
        "expected": [
            {
                "tool": "add_observations",
                "arguments": {"observations": [{"entityName": "Ada", "contents": ["likes maths"]}]},
            }
        ],
    },
    {"id": "graph", "instruction": "Show the graph.", "expected": [{"tool": "read_graph"}]},
]
MEMORY_CLEAN = {
    "zed_known": (True, True, True),
    "zed_unknown": (True, False, False),
    "ada_known": (True, True, True),
    "ada_unknown": (True, False, False),
    "graph": (True, True, True),
}
"""The verdicts of the memory probes, each case on a clean graph."""


@pytest.fixture(scope="module")
def memory_server() -> Path:
    """The reference memory server's script, installed by the CI step when it is not there yet."""
    assert shutil.which("node"), "node is needed for the reference memory server (Node 20 or later)"
    if not MEMORY_SCRIPT.is_file():
        subprocess.run(["bash", str(NPM_SETUP)], check=True, timeout=600)
    assert MEMORY_SCRIPT.is_file(), f"{NPM_SETUP} did not install {MEMORY_SCRIPT}"
    return MEMORY_SCRIPT


def memory(script: Path, state: str = "{workdir}/memory.jsonl") -> str:
    """The memory server as a tool source; its graph file is ``state`` (MEMORY_FILE_PATH)."""
    return f"mcp:stdio:MEMORY_FILE_PATH={state} node {script}"


def test_the_memory_server_gives_the_same_verdicts_at_any_concurrency_and_in_any_order(
    tmp_path: Path, memory_server: Path
) -> None:
    suite = write_suite(tmp_path / "memory.yaml", "memory-probes", MEMORY_ROWS)
    ids = [row["id"] for row in MEMORY_ROWS]
    seed_a, seed_b = seeds_with_orders(ids, "zed_known", "zed_unknown")
    # One case at a time in one order, sixteen at once in the other (as for mcp-server-git below):
    # two runs cover both concurrencies and both orders of the two cases that would leak.
    outcomes = {
        "c1, seed a": run(suite, memory(memory_server), tmp_path / "c1", concurrency=1, shuffle=seed_a),
        "c16, seed b": run(suite, memory(memory_server), tmp_path / "c16", concurrency=16, shuffle=seed_b),
    }
    for label, result in outcomes.items():
        assert verdicts(result) == MEMORY_CLEAN, label
    # The default came from the listing: six of its nine tools do not say readOnlyHint: true.
    header = json.loads((tmp_path / "c1" / "run.json").read_text())
    [entry] = header["options"]["tool_isolation"]
    assert (entry["isolation"], entry["by"], entry["suites"]) == ("case", "default", ["memory-probes"])
    assert "6 of 9 tools do not say readOnlyHint: true" in entry["why"]
    shown = subprocess.run(
        [sys.executable, "-m", "callbench.cli.main", "show", str(tmp_path / "c1")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "isolation case of" in shown and "verdicts may depend on order" not in shown


def test_a_shared_memory_server_leaks_between_cases_and_runs_and_says_so(
    tmp_path: Path, memory_server: Path
) -> None:
    suite = write_suite(tmp_path / "memory.yaml", "memory-probes", MEMORY_ROWS)
    ids = [row["id"] for row in MEMORY_ROWS]
    seed_a, seed_b = seeds_with_orders(ids, "zed_known", "zed_unknown")
    state = tmp_path / "graphs"
    state.mkdir()
    first = run(
        suite,
        memory(memory_server, f"{state}/a.jsonl"),
        tmp_path / "a",
        concurrency=1,
        shuffle=seed_a,
        tools_isolation="shared",
    )
    second = run(
        suite,
        memory(memory_server, f"{state}/b.jsonl"),
        tmp_path / "b",
        concurrency=1,
        shuffle=seed_b,
        tools_isolation="shared",
    )
    # Zed created by an earlier case: the "unknown" Zed is known, and that case passes -- or not.
    assert verdicts(first)["zed_unknown"] == (True, True, True)
    assert verdicts(second)["zed_unknown"] == (True, False, False)
    # The report and show say that these verdicts may depend on the order of the cases.
    shown = subprocess.run(
        [sys.executable, "-m", "callbench.cli.main", "show", str(tmp_path / "a")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "isolation shared of" in " ".join(shown.split()) and "verdicts may depend on order" in " ".join(
        shown.split()
    )
    report = tmp_path / "report.md"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "callbench.cli.main",
            "report",
            str(tmp_path / "a"),
            "--format",
            "md",
            "-o",
            str(report),
        ],
        capture_output=True,
        check=True,
    )
    assert "verdicts may depend on order" in report.read_text()
    # From one run into the next: a shared graph file keeps Zed; a run-isolated server starts clean.
    shared = memory(memory_server, f"{state}/runs.jsonl")
    run(suite, shared, tmp_path / "r1", case_ids=["zed_known"], tools_isolation="shared")
    assert verdicts(
        run(suite, shared, tmp_path / "r2", case_ids=["zed_unknown"], tools_isolation="shared")
    ) == {"zed_unknown": (True, True, True)}
    fresh = memory(memory_server)
    with pytest.warns(
        UserWarning, match="runs with isolation run: one server for the whole run, though 6 of 9"
    ):
        run(suite, fresh, tmp_path / "r3", case_ids=["zed_known"], tools_isolation="run")
    with pytest.warns(UserWarning, match="isolation run"):
        second_run = run(suite, fresh, tmp_path / "r4", case_ids=["zed_unknown"], tools_isolation="run")
    assert verdicts(second_run) == {"zed_unknown": (True, False, False)}


# --- mcp-server-git (PyPI) -----------------------------------------------------------------------

GIT_ROWS = [
    {
        "id": "branch_a",
        "instruction": "Create the branch feature.",
        "expected": [
            {"tool": "git_create_branch", "arguments": {"repo_path": "repo", "branch_name": "feature"}}
        ],
    },
    {
        "id": "branch_b",
        "instruction": "Create the branch feature.",
        "expected": [
            {"tool": "git_create_branch", "arguments": {"repo_path": "repo", "branch_name": "feature"}}
        ],
    },
    {
        "id": "commit_a",
        "instruction": "Commit notes.txt.",
        "expected": [
            {"tool": "git_add", "arguments": {"repo_path": "repo", "files": ["notes.txt"]}},
            {"tool": "git_commit", "arguments": {"repo_path": "repo", "message": "Add notes"}},
        ],
    },
    {
        "id": "commit_b",
        "instruction": "Commit notes.txt.",
        "expected": [
            {"tool": "git_add", "arguments": {"repo_path": "repo", "files": ["notes.txt"]}},
            {"tool": "git_commit", "arguments": {"repo_path": "repo", "message": "Commit the notes"}},
        ],
    },
]


def seed_repository(root: Path) -> Path:
    """A repository with one commit and an untracked ``notes.txt``."""
    repo = root / "repo"
    env = {**os.environ, **dict(pair.split("=", 1) for pair in GIT_IDENTITY.split())}
    subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
    (repo / "README.md").write_text("seed\n")
    subprocess.run(["git", "-C", str(repo), "add", "README.md"], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", "Seed"], check=True, env=env)
    (repo / "notes.txt").write_text("notes\n")
    return repo


def git_server(seed: Path, folder: str = "{workdir}") -> str:
    """mcp-server-git confined to a copy of ``seed`` made in ``folder`` when the server starts."""
    server = f"{sys.executable} -m mcp_server_git --repository {folder}/repo"
    start = f"cp -R {seed} {folder}/repo && cd {folder} && exec {server}"
    return f"mcp:stdio:{GIT_IDENTITY} sh -c '{start}'"


def test_mcp_server_git_gives_the_same_verdicts_at_any_concurrency_and_in_any_order(tmp_path: Path) -> None:
    seed = seed_repository(tmp_path / "seed")
    suite = write_suite(tmp_path / "git.yaml", "git-probes", GIT_ROWS)
    ids = [row["id"] for row in GIT_ROWS]
    seed_a, seed_b = seeds_with_orders(ids, "branch_a", "branch_b")
    clean = dict.fromkeys(ids, (True, True, True))
    # One case at a time in one order, sixteen at once in the other (a server start is ~1 s of CPU).
    assert verdicts(run(suite, git_server(seed), tmp_path / "c1", concurrency=1, shuffle=seed_a)) == clean
    assert verdicts(run(suite, git_server(seed), tmp_path / "c16", concurrency=16, shuffle=seed_b)) == clean
    # One repository for every case: the second branch and the second commit of the notes fail.
    shared_folder = tmp_path / "shared"
    shared_folder.mkdir()
    leaked = verdicts(
        run(
            suite,
            git_server(seed, str(shared_folder)),
            tmp_path / "shared-run",
            concurrency=1,
            tools_isolation="shared",
        )
    )
    assert leaked == {**clean, "branch_b": (True, False, False), "commit_b": (True, False, False)}


# --- {workdir}, the fresh folder, the warm pool --------------------------------------------------


def test_workdir_is_replaced_in_words_environment_and_folder_and_home_is_fresh() -> None:
    spec = McpServerSpec.parse("mcp:stdio:STATE={workdir}/s.json CACHE=/keep server --data {workdir}/db")
    assert spec.command == ("server", "--data", "{workdir}/db")
    assert dict(spec.env) == {"STATE": "{workdir}/s.json", "CACHE": "/keep"}
    folder = ServerFolder.create()
    try:
        ready = materialize(spec, folder)
        env = dict(ready.env)
        assert ready.command == ("server", "--data", f"{folder.work}/db")
        assert (env["STATE"], env["CACHE"]) == (f"{folder.work}/s.json", "/keep")
        assert ready.cwd == str(folder.work) and ready.text == spec.text
        assert (env["HOME"], env["TMPDIR"]) == (str(folder.home), str(folder.tmp))
        assert folder.root.name.startswith(f"callbench-{os.getpid()}-mcp")
    finally:
        folder.remove()
    assert not folder.root.exists()


def test_every_case_gets_a_fresh_server_in_a_fresh_folder_and_no_more_are_started(tmp_path: Path) -> None:
    rows = [
        {
            "id": f"claim_{n}",
            "instruction": "Claim x.",
            "expected": [{"tool": "claim", "arguments": {"name": "x"}}, {"tool": "where"}],
        }
        for n in range(6)
    ]
    suite = write_suite(tmp_path / "claims.yaml", "claims", rows)
    starts = tmp_path / "starts.log"
    tools = f"mcp:stdio:CLAIMS_STARTS={starts} {sys.executable} {CLAIMS} {{workdir}}/claims.json"
    result = run(suite, tools, tmp_path / "run", concurrency=4)
    assert verdicts(result) == {row["id"]: (True, True, True) for row in rows}  # each claimed "x" afresh
    places = [record.trace.calls[1].result for record in result.records]  # where() of each case's server
    assert len({p["cwd"] for p in places}) == 6  # a folder per case
    for place in places:
        root = Path(place["cwd"]).parent
        assert root.name.startswith(f"callbench-{os.getpid()}-mcp") and Path(place["cwd"]).name == "work"
        assert (place["home"], place["tmpdir"]) == (str(root / "home"), str(root / "tmp"))
    # One server for the listing, one per case: the warm pool starts none for no case.
    assert len(starts.read_text().splitlines()) == 1 + len(rows)


# --- no server outlives its case -----------------------------------------------------------------


def test_a_case_that_runs_out_of_time_takes_its_server_down(tmp_path: Path) -> None:
    rows = [
        {"id": "hangs", "instruction": "Wait.", "timeout_s": 2, "expected": [{"tool": "hang"}]},
        {
            "id": "claims",
            "instruction": "Claim x.",
            "expected": [{"tool": "claim", "arguments": {"name": "x"}}],
        },
    ]
    suite = write_suite(tmp_path / "claims.yaml", "claims", rows)
    result = run(suite, claims("{workdir}/claims.json"), tmp_path / "run", concurrency=2)
    assert verdicts(result) == {"hangs": "tool_server_timeout", "claims": (True, True, True)}


def test_ctrl_c_leaves_no_server_and_no_folder(tmp_path: Path) -> None:
    rows = [
        {"id": f"hang_{n}", "instruction": "Wait.", "timeout_s": 120, "expected": [{"tool": "hang"}]}
        for n in range(4)
    ]
    suite = write_suite(tmp_path / "claims.yaml", "claims", rows)
    command = [sys.executable, "-m", "callbench.cli.main", "run", "--suite", str(suite), "--model", "oracle"]
    command += ["--tools", claims("{workdir}/claims.json"), "--concurrency", "2", "-o", str(tmp_path / "run")]
    live = subprocess.Popen(
        [*command, "--progress", "quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    while len(servers_of(live.pid)) < 2:  # two cases in flight, each on its own server
        assert time.monotonic() < deadline and live.poll() is None, live.stderr.read() if live.stderr else ""
        time.sleep(0.1)
    live.send_signal(signal.SIGINT)
    _, err = live.communicate(timeout=60)
    assert live.returncode == 130, err
    assert servers_of(live.pid) == [] and folders_of(live.pid) == []


# --- HTTP servers: a reset hook, one case at a time ----------------------------------------------


@pytest.fixture
def http_claims(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The claims server over streamable HTTP (its state in a file of its own): (URL, state file)."""
    port, state = free_port(), tmp_path / "http-claims.json"
    server = subprocess.Popen(
        [sys.executable, str(CLAIMS), str(state), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < deadline and server.poll() is None
            time.sleep(0.1)
        yield f"mcp:http://127.0.0.1:{port}/mcp", state
    finally:
        server.terminate()
        server.wait(timeout=10)


CLAIM_TWICE = [
    {
        "id": f"claim_{n}",
        "instruction": "Claim x.",
        "expected": [{"tool": "claim", "arguments": {"name": "x"}}],
    }
    for n in range(3)
]


def test_an_http_server_is_reset_before_each_case_by_the_suites_hook(
    tmp_path: Path, http_claims: tuple[str, Path]
) -> None:
    url, state = http_claims
    clean = {row["id"]: (True, True, True) for row in CLAIM_TWICE}
    by_tool = write_folder(tmp_path / "tool", "claims", CLAIM_TWICE, tool_source={"reset": {"tool": "reset"}})
    with pytest.warns(UserWarning, match="serves one case at a time"):
        result = run(by_tool, url, tmp_path / "tool-run", concurrency=3)
    assert verdicts(result) == clean
    header = json.loads((tmp_path / "tool-run" / "run.json").read_text())
    [entry] = header["options"]["tool_isolation"]
    assert (entry["isolation"], entry["by"], entry["reset"]) == (
        "case",
        "default",
        {"tool": "reset", "arguments": {}},
    )
    by_command = write_folder(
        tmp_path / "command",
        "claims",
        CLAIM_TWICE,
        tool_source={"isolation": "case", "reset": {"command": f"rm -f {state}"}},
    )
    assert verdicts(run(by_command, url, tmp_path / "command-run", concurrency=1)) == clean
    # Shared: the first case's claim stays, the others fail.
    state.unlink(missing_ok=True)
    leaked = verdicts(run(by_tool, url, tmp_path / "shared-run", concurrency=1, tools_isolation="shared"))
    assert sorted(leaked.values()) == [(True, False, False), (True, False, False), (True, True, True)]


# --- bad declarations: one line each -------------------------------------------------------------


def test_bad_declarations_are_one_line_naming_the_field(
    tmp_path: Path, http_claims: tuple[str, Path]
) -> None:
    url, _ = http_claims
    plain = write_folder(tmp_path / "plain", "claims", CLAIM_TWICE[:1])
    with pytest.raises(
        ConfigError, match=r"tools_isolation \(--tools-isolation\) must be case, run or shared"
    ):
        callbench.run(str(plain), "oracle", tools=claims("x.json"), tools_isolation="sometimes")
    for declared, message in (
        (
            {"isolation": "sometimes"},
            r"suite.yaml: tool_source.isolation must be case, run or shared, got 'sometimes'",
        ),
        (
            {"reset": {"tool": "reset", "command": "true"}},
            r"tool_source.reset needs exactly one of tool and command",
        ),
        ({"isolate": "case"}, r"tool_source: unknown key 'isolate' \(keys: isolation, reset\)"),
    ):
        bad = write_folder(tmp_path / str(len(message)), "claims", CLAIM_TWICE[:1], tool_source=declared)
        with pytest.raises(SuiteError, match=message):
            callbench.run(str(bad), "oracle", tools=claims("x.json"), out_dir=tmp_path / "never")
    # An HTTP server cannot be started per case: without a reset hook, case is refused.
    with pytest.raises(
        McpServerError, match="isolation case needs a fresh server per case.*declare a reset hook"
    ):
        callbench.run(str(plain), "oracle", tools=url, out_dir=tmp_path / "never")
    # shared starts no fresh folder, so {workdir} names nothing.
    with pytest.raises(McpServerError, match=r"isolation shared .* \{workdir\} names nothing"):
        callbench.run(
            str(plain),
            "oracle",
            tools=claims("{workdir}/c.json"),
            tools_isolation="shared",
            out_dir=tmp_path / "never",
        )
    with pytest.raises(ConfigError, match="--tools-isolation case: applies to live MCP tool servers"):
        callbench.run("starter", "oracle", tools_isolation="case", out_dir=tmp_path / "never")
    assert not (tmp_path / "never").exists()


def test_declarations_parse_and_the_default_follows_read_only_hints() -> None:
    assert default_isolation([("read", True), ("list", True)])[0] == "run"
    assert default_isolation([("read", True), ("write", False)]) == (
        "case",
        "1 of 2 tools do not say readOnlyHint: true (write)",
    )
    declaration = ToolSourceDeclaration.parse(
        {"isolation": "RUN", "reset": "clear"}, "suite.yaml: tool_source"
    )
    assert declaration == ToolSourceDeclaration("run", ResetHook(tool="clear"))
    with pytest.raises(ConfigError, match="tool_source.reset.arguments must be a mapping"):
        ToolSourceDeclaration.parse({"reset": {"tool": "clear", "arguments": [1]}}, "suite.yaml: tool_source")
