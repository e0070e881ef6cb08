"""``--watch``: model text is shown, never obeyed by the terminal (issue 13, item 12), and every line
names its case, since concurrent cases interleave their rounds (item 13)."""

from __future__ import annotations

import io
from types import SimpleNamespace

from rich.console import Console
from synth import make_records

from callbench.report.watch import WatchObserver, error_summary, printable
from callbench.secrets import register_secret
from callbench.types.records import CaseRecord
from callbench.types.trace import RoundInfo, TraceCall

HEADER = SimpleNamespace(run_id="r1", model="scripted", harness_mode="production-parity")
ESCAPES = "\x1b[31mred\x1b[0m \x1b]8;;http://evil.example\x07click\x1b]8;;\x07 \r\x9b2J \u202egnp.exe"


def watch_console() -> tuple[WatchObserver, io.StringIO]:
    buf = io.StringIO()
    # A terminal console: rich writes its own styles, so raw model escapes would pass through too.
    console = Console(file=buf, width=200, force_terminal=True, color_system=None, soft_wrap=True)
    return WatchObserver(console), buf


def test_printable_escapes_controls_but_keeps_layout() -> None:
    assert printable("line 1\n\tline 2") == "line 1\n\tline 2"
    shown = printable(ESCAPES)
    assert not any(ch in shown for ch in "\x1b\x07\r\x9b\u202e")
    assert "\\x1b[31mred" in shown and "\\x1b]8;;http://evil.example\\x07" in shown
    assert "\\x0d" in shown and "\\x9b2J" in shown and "\\u202egnp.exe" in shown


def test_model_escapes_reach_the_terminal_escaped() -> None:
    watch, buf = watch_console()
    case = SimpleNamespace(suite="demo", id="c1", instruction="hi")
    watch.on_run_start(HEADER, 1)
    watch.on_case_start(case, 1, ["search"])
    call = TraceCall(
        index=0,
        call_id="a",
        round=1,
        tool="search\x1b[2J",
        arguments={"q": "\x9b31m"},
        arguments_raw='{"q": "x"}',
        schema_valid=True,
        execution="error",
        error="tool said \x1b[5mblink",
    )
    watch.on_round(case, RoundInfo(index=1, started_at=0.0, text=ESCAPES), [call])
    text = buf.getvalue()
    assert "\x07" not in text and "\x9b" not in text and "\u202e" not in text and "\r" not in text
    assert "\x1b]8" not in text and "\x1b[31m" not in text and "\x1b[2J" not in text and "\x1b[5m" not in text
    assert "\\x1b[31mred" in text and "search\\x1b[2J" in text and "\\x9b31m" in text
    assert "tool said \\x1b[5mblink" in text


def test_keys_are_blanked_in_watch_output() -> None:
    register_secret("sk-watch-0123456789")
    watch, buf = watch_console()
    case = SimpleNamespace(suite="demo", id="c1", instruction="hi")
    watch.on_case_start(case, 1, [])
    watch.on_round(case, RoundInfo(index=1, started_at=0.0, text="key sk-watch-0123456789"), [])
    assert "sk-watch-0123456789" not in buf.getvalue() and "key ***" in buf.getvalue()


def test_interleaved_cases_name_their_case_on_every_line() -> None:
    watch, buf = watch_console()
    first = SimpleNamespace(suite="demo", id="case-00000", instruction="first")
    second = SimpleNamespace(suite="demo", id="case-00001", instruction="second\nmulti-line")
    watch.on_run_start(HEADER, 2)
    watch.on_case_start(first, 1, ["a"])
    watch.on_case_start(second, 1, ["b"])
    watch.on_round(second, RoundInfo(index=1, started_at=0.0, text="two\nlines"), [])
    watch.on_round(first, RoundInfo(index=1, started_at=0.0, text="one"), [])
    records = make_records(2, seed=3)
    for record in records:
        watch.on_case_end(CaseRecord.model_validate(record))
    lines = [ln for ln in buf.getvalue().splitlines() if ln.strip()]
    body = [ln for ln in lines if not ln.startswith(("watching", "─")) and "─" * 3 not in ln]
    assert body, lines
    for line in body:
        assert line.startswith(("demo:case-00000#1 │", "demo:case-00001#1 │")), line
    assert "demo:case-00001#1 │ lines" in buf.getvalue()  # continuation lines too
    assert "demo:case-00001#1 │ multi-line" in buf.getvalue()
    starts = [ln for ln in lines if "start" in ln and "─" in ln]
    assert any("demo:case-00000#1" in ln for ln in starts) and any("demo:case-00001#1" in ln for ln in starts)


def test_error_summary_names_type_count_and_first_message() -> None:
    records = [
        CaseRecord.model_validate(
            r | {"status": "error", "verdicts": {}, "error": {"type": "EndpointDownError", "message": m}}
        )
        for r, m in zip(
            make_records(3, seed=1),
            ["server at http://x gone\n(refused)", "second", "third"],
            strict=True,
        )
    ]
    ok = CaseRecord.model_validate(make_records(1, seed=2)[0])
    assert error_summary([ok, *records]) == ["3 × EndpointDownError: server at http://x gone (refused)"]
