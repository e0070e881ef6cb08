"""The mcp-git suite on a live mcp-server-git: agents, the bundled listing, the per-case repository."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import pytest
from pack_self_test import INVARIANTS, SelfTest, self_test

import callbench
from callbench.benchmarks.mcp_git.executor import GitMcpExecutor, GitMcpSession
from callbench.benchmarks.mcp_git.repo import build_template, git, git_state, make_repository
from callbench.benchmarks.mcp_git.suite import bundled_tools, load_registry
from callbench.mcp.client import McpConnection

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="the mcp-git suite needs the git program")

TIERS = ("native-function-contract", "real-tool-execution", "task-completion-execution")
INITIAL_STATE = {
    "branch": "main",
    "head_subject": "Fix typo in README",
    "commit_count": 3,
    "branches": ["feature/login", "hotfix", "main"],
    "staged": ["A CHANGELOG.md"],
    "unstaged": ["M src/app.py"],
    "untracked": ["notes.txt"],
}


def run(model: str, tmp_path: Path):
    return callbench.run(
        "mcp-git", model, "all", out_dir=tmp_path / model.replace(":", "_"), progress="quiet"
    )


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> SelfTest:
    """``callbench check mcp-git``, its runs kept: the oracle, refuse and noisy:1 runs judged below are
    the self-test's own (the suite's scorers are its four tiers, as with "all"), not three more live
    runs of ~26 server-backed cases each (tests/helpers/pack_self_test.py)."""
    return self_test("mcp-git", tmp_path_factory.mktemp("check-mcp-git"))


def test_the_pack_passes_its_self_test(checked: SelfTest) -> None:
    """``callbench check mcp-git`` (the built-in packs' self-test, tests/cli/test_check_command.py)."""
    assert checked.code == 0, checked.lines
    found = checked.lines
    assert list(found) == list(INVARIANTS) and all(line.startswith("PASS") for line in found.values()), found


def test_oracle_scores_100_percent_in_every_tier_and_the_state_check(checked: SelfTest):
    result = checked.runs["oracle"]
    assert result.summary["n_completed"] == 26
    assert result.summary["n_error"] == 0
    for tier in (*TIERS, "state-match"):
        assert result.summary["tiers"][tier]["accuracy"] == 1.0, tier
    changing = [r for r in result.records if r.verdicts["state-match"].metrics["gold_changes_state"]]
    assert len(changing) == 12  # every state-changing case really changes the repository


def test_refuse_scores_zero(checked: SelfTest):
    result = checked.runs["refuse"]
    for tier in TIERS:
        assert result.summary["tiers"][tier]["passed"] == 0, tier
    assert all("no_structured_call" in r.verdicts[t].codes for r in result.records for t in TIERS)


@pytest.mark.parametrize("model", ["baseline", "noisy:1"])
def test_other_builtin_agents_run_without_errors(tmp_path, model, checked: SelfTest):
    result = checked.runs[model] if model in checked.runs else run(model, tmp_path)
    assert result.summary["n_completed"] == 26
    assert result.summary["n_error"] == 0
    assert result.summary["tiers"]["task-completion-execution"]["accuracy"] < 1.0


def test_bundled_listing_equals_the_installed_servers():
    async def live():
        async with McpConnection(f"stdio:{sys.executable} -m mcp_server_git") as connection:
            return await connection.list_tools()

    tools = asyncio.run(live())
    bundled = {t.name: (t.description, t.input_schema, t.annotations) for t in bundled_tools()}
    assert {t.name: (t.description, t.input_schema, t.annotations) for t in tools} == bundled


def test_registry_is_strict_and_every_loose_schema_has_a_note():
    registry, notes = load_registry()
    assert len(registry) == 12
    assert all(c.parameters["additionalProperties"] is False for c in registry)
    assert len(notes) == 12
    assert {c.name for c in registry if c.read_only} == {
        "git_status",
        "git_diff_unstaged",
        "git_diff_staged",
        "git_diff",
        "git_log",
        "git_show",
        "git_branch",
    }


def test_the_known_repository_is_the_same_on_every_build(tmp_path):
    build_template(tmp_path / "a")
    build_template(tmp_path / "b")
    assert git(tmp_path / "a", "rev-parse", "HEAD") == git(tmp_path / "b", "rev-parse", "HEAD")
    assert git_state(tmp_path / "a") == INITIAL_STATE
    copy = make_repository(tmp_path / "case" / "repo")
    assert git_state(copy) == INITIAL_STATE


def test_the_session_maps_the_logical_path_and_refuses_others(tmp_path):
    executor = GitMcpExecutor()
    session = executor.start(None, tmp_path / "work", None)  # type: ignore[arg-type]
    assert isinstance(session, GitMcpSession)
    real = session.repository

    async def play():
        try:
            outside = await session.call("git_status", {"repo_path": "/work/main"})
            escape = await session.call("git_status", {"repo_path": "/repo/../etc"})
            status = await session.call("git_status", {"repo_path": "/repo"})
            branch = await session.call("git_create_branch", {"repo_path": "/repo/", "branch_name": "x"})
            return outside, escape, status, branch
        finally:
            await executor.aclose()

    outside, escape, status, branch = asyncio.run(play())
    assert outside.ok is False and outside.error == (
        "Repository path '/work/main' is not available: the repository is /repo"
    )
    assert escape.ok is False
    assert status.ok and "Changes to be committed" in status.result
    assert branch.ok and branch.result == "Created branch 'x' from 'main'"
    assert session.snapshot()["branches"] == ["feature/login", "hotfix", "main", "x"]
    assert session.map_text(f"fatal: not a repo {real}/sub") == "fatal: not a repo /repo/sub"


def test_a_missing_server_package_is_one_line_before_any_case(monkeypatch):
    from callbench.benchmarks.mcp_git import suite as suite_module
    from callbench.errors import ConfigError
    from callbench.suites.suite import SuiteOptions

    real = suite_module.importlib.util.find_spec
    monkeypatch.setattr(
        suite_module.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "mcp_server_git" else real(name, *a),
    )
    with pytest.raises(ConfigError, match=r"^suite 'mcp-git' needs the package 'mcp-server-git'"):
        suite_module.load_suite("", SuiteOptions())
