"""Agent-under-test runs (issue 14, item 6) in the HTML report, the progress log and ``--watch``.

The runs are real: the in-process ``oracle_starter`` agent (tests/helpers, on pytest's pythonpath)
calls the case's tools over MCP, and a ``cmd:`` agent crashes with exit status 3 after writing
hostile markup to stderr, which the page must show as literal text.
"""

from __future__ import annotations

import io
import math
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

import callbench
from callbench.report.html import write_report
from callbench.report.progress import PlainProgress
from callbench.report.watch import WatchObserver
from callbench.types.records import CaseRecord

ORACLE = "py:builtin_mcp_agent:oracle_starter"
OK_CASES = ["email_after_lookup", "create_and_delete", "weather_paris"]
STDERR_PAYLOAD = "<script>window.__pwned = 'stderr'</script><img src=x onerror=\"window.__pwned='img'\">"


def _crashing_agent(root: Path) -> str:
    script = root / "crash.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import sys
            print("loading tools", file=sys.stderr)
            print({STDERR_PAYLOAD!r}, file=sys.stderr)
            sys.exit(3)
            """
        )
    )
    return f"cmd:{sys.executable} {script}"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("agent-report")
    crash_spec = _crashing_agent(root)
    log, watch_buf = io.StringIO(), io.StringIO()
    watch = WatchObserver(Console(file=watch_buf, width=400, color_system=None, soft_wrap=True))
    ok = callbench.run(
        "starter", agent=ORACLE, case_ids=OK_CASES, out_dir=root / "ok", progress="quiet", concurrency=3
    )
    crash = callbench.run(
        "starter",
        agent=crash_spec,
        case_ids=["weather_paris"],
        out_dir=root / "crash",
        progress="quiet",
        observers=[PlainProgress(log), watch],
    )
    report = write_report([root / "ok", root / "crash"], root / "report.html")
    return {
        "report": report,
        "ok": {r.case_id: r for r in ok.records},
        "crash": crash.records[0],
        "crash_spec": crash_spec,
        "log": log.getvalue(),
        "watch": watch_buf.getvalue(),
    }


def test_records_are_what_the_page_is_checked_against(runs: dict[str, Any]) -> None:
    crash: CaseRecord = runs["crash"]
    assert crash.harness_mode == "agent-under-test"
    assert crash.trace.agent is not None and crash.trace.agent.outcome == "agent_crashed"
    assert crash.trace.agent.exit_code == 3 and STDERR_PAYLOAD in crash.trace.agent.stderr_tail
    multi = runs["ok"]["email_after_lookup"]
    assert [c.tool for c in multi.trace.calls] == ["get_contact", "send_email"]
    assert all(c.started_at is not None for c in multi.trace.calls)
    assert all(v.passed for v in multi.verdicts.values())


def test_progress_and_watch_name_the_agent_and_its_failure(runs: dict[str, Any]) -> None:
    lines = runs["log"].splitlines()
    spec = runs["crash_spec"].removeprefix("cmd:")
    assert lines[0].endswith(f"1 case runs · agent cmd:{spec} (cmd) · harness mode agent-under-test")
    case_line = next(line for line in lines if line.startswith("starter:weather_paris#1 "))
    assert "contract=FAIL" in case_line and "agent_crashed (exit 3)" in case_line
    assert "req/s" not in case_line  # the agent's own model requests are not seen
    watch = runs["watch"]
    assert "· agent cmd:" in watch and "round budget n/a" in watch
    assert "round 1  (reconstructed from call timing)" in watch
    assert "agent: agent_crashed (exit 3)  the agent exited with status 3" in watch
    assert f"    {STDERR_PAYLOAD}" in watch


def _open_case(page: Any, run_label: str, key: str) -> Any:
    page.fill("#f-search", key)
    # The search applies after a short debounce and re-renders the rows: click once it has.
    page.wait_for_function(
        "key => { const rows = [...document.querySelectorAll('[data-testid=case-row]')];"
        " return rows.length > 0 && rows.every((r) => r.dataset.key === key); }",
        arg=key,
    )
    row = page.locator(f"[data-testid=case-row][data-key='{key}']").filter(has_text=run_label)
    row.first.click()
    panel = page.locator("[data-testid=case-panel]").first
    panel.wait_for()  # drawn once its record is inflated: count() and all_inner_texts() do not wait
    return panel


def test_report_shows_agent_header_stderr_literally_and_the_call_timeline(
    runs: dict[str, Any], browser: Any
) -> None:
    page, console = browser
    page.goto(runs["report"].as_uri())
    spec = runs["crash_spec"]

    # Run header: agent spec and kind, harness mode, round budget n/a, for both runs.
    infos = page.locator("[data-testid=run-info]")
    assert infos.count() == 2
    crash_info = infos.filter(has_text=spec)
    assert crash_info.locator(".agent-spec code").inner_text() == spec
    assert crash_info.locator(".agent-kind code").inner_text() == "cmd"
    assert crash_info.locator(".mode code").inner_text() == "agent-under-test"
    assert crash_info.locator(".budget code").inner_text() == "n/a"
    assert infos.filter(has_text=ORACLE).locator(".agent-kind code").inner_text() == "py"
    cards = page.locator("[data-testid=card][data-mode='agent-under-test']")
    assert cards.count() == 6  # 2 runs × 3 tiers
    assert cards.locator(".agent-spec").filter(has_text=f"{ORACLE} (py)").count() == 3
    assert cards.locator(".budget").all_inner_texts() == ["n/a"] * 6

    # The crashed case: outcome, exit code, message, stderr tail as literal text.
    crash: CaseRecord = runs["crash"]
    assert crash.trace.agent is not None
    panel = _open_case(page, "(crash)", "starter:weather_paris")
    agent = panel.locator("[data-testid=agent-run]")
    assert agent.get_attribute("data-outcome") == "agent_crashed"
    assert agent.locator("[data-testid=agent-outcome]").inner_text() == "agent_crashed"
    assert agent.locator("[data-testid=agent-spec]").inner_text() == spec
    assert agent.locator("[data-testid=agent-exit]").inner_text().strip() == "· exit code 3"
    assert agent.locator("[data-testid=agent-message]").inner_text() == "the agent exited with status 3"
    stderr = agent.locator("[data-testid=agent-stderr]")
    assert stderr.inner_text() == crash.trace.agent.stderr_tail
    assert stderr.locator("script, img").count() == 0
    assert page.evaluate("window.__pwned") is None
    assert panel.locator("[data-testid=timeline-empty]").inner_text() == "no tool call arrived"
    assert panel.locator("[data-testid=reconstructed]").count() == len(crash.trace.rounds)

    # A case that called tools: one timeline row per call, offsets from the first call's arrival.
    record: CaseRecord = runs["ok"]["email_after_lookup"]
    panel = _open_case(page, "(ok)", "starter:email_after_lookup")
    assert panel.locator("[data-testid=agent-outcome]").inner_text() == "answer"
    rows = panel.locator("[data-testid=timeline-row]")
    calls = record.trace.calls
    assert rows.count() == len(calls) == 2
    first = min(c.started_at for c in calls if c.started_at is not None)
    for i, call in enumerate(calls):
        row = rows.nth(i)
        assert call.started_at is not None
        assert row.get_attribute("data-tool") == call.tool
        assert row.get_attribute("data-execution") == call.execution == "ok"
        offset = math.floor(1000 * (call.started_at - first) + 0.5)  # Math.round
        assert row.locator(".offset").inner_text() == f"+{offset} ms"
        assert row.locator(".duration").inner_text() == f"{call.duration_ms:.1f} ms"
    assert rows.nth(0).locator(".offset").inner_text() == "+0 ms"
    assert panel.locator("[data-testid=reconstructed]").count() == len(record.trace.rounds) >= 2
    assert panel.locator("h4", has_text="Rounds (reconstructed from call timing").count() == 1
    assert console.errors == []
