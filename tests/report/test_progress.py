import io
from types import SimpleNamespace

from rich.console import Console
from synth import make_records

from callbench.report.live_state import LiveStateWriter
from callbench.report.progress import PlainProgress, ProgressConfig, RichProgress, RunTally, make_observers
from callbench.report.watch import WatchObserver
from callbench.types.records import CaseRecord
from callbench.types.trace import RoundInfo, TraceCall

CASE = SimpleNamespace(suite="demo", id="case-00001", instruction="Find [bold]gene[/bold] 1")
HEADER = SimpleNamespace(run_id="r1", model="scripted", harness_mode="production-parity")


def _drive(observer, records):
    observer.on_run_start(HEADER, len(records))
    for rec in records:
        observer.on_case_start(CASE, rec["trial"], ["search_genes"]) if hasattr(
            observer, "on_case_start"
        ) else None
        observer.on_round(CASE, RoundInfo(index=1, started_at=0.0), [])
        observer.on_case_end(CaseRecord.model_validate(rec))
    observer.on_run_end({})


def test_tally_pass_rate_per_tier_and_errors():
    tally = RunTally(total=4)
    recs = make_records(4, error_rate=0.0, seed=5)
    recs[3] = recs[3] | {"status": "error", "verdicts": {}, "error": {"type": "X", "message": "m"}}
    for rec in recs:
        tally.add_record(CaseRecord.model_validate(rec))
    passes = sum(r["verdicts"]["native-function-contract"]["passed"] for r in recs[:3])
    assert tally.errors == 1 and tally.scored["native-function-contract"] == 3
    assert f"contract {100 * passes / 3:.1f}%" in tally.pass_rates()
    assert "[4/4]" in tally.line() and "ETA 0s" in tally.line()


def test_plain_progress_logs_one_line_per_case():
    out = io.StringIO()
    recs = make_records(3, seed=2)
    _drive(PlainProgress(out), recs)
    lines = out.getvalue().splitlines()
    assert lines[0] == "run r1: 3 case runs"
    assert lines[1].startswith("demo:case-00000#1 contract=") and "[1/3]" in lines[1]
    assert lines[-1].startswith("done [3/3]") and "req/s" in lines[-1]


def test_rich_progress_renders_figures():
    buf = io.StringIO()
    observer = RichProgress(Console(file=buf, force_terminal=True, width=160))
    _drive(observer, make_records(5, seed=4))
    text = buf.getvalue()
    assert "5/5" in text and "errors 0" in text and "contract" in text


def test_make_observers_modes(tmp_path):
    stream = io.StringIO()  # not a TTY: rich falls back to plain lines
    assert isinstance(make_observers(ProgressConfig(progress="rich", stream=stream))[0], PlainProgress)
    assert make_observers(ProgressConfig(progress="quiet", stream=stream)) == []
    watch = make_observers({"progress": "quiet", "watch": True, "stream": stream, "run_dir": tmp_path})
    assert isinstance(watch[0], WatchObserver) and isinstance(watch[1], LiveStateWriter)
    import pytest

    from callbench.errors import ConfigError

    with pytest.raises(ConfigError):
        make_observers(ProgressConfig(progress="loud", stream=stream))  # type: ignore[arg-type]


def test_watch_prints_rounds_calls_and_verdicts_without_markup():
    buf = io.StringIO()
    watch = WatchObserver(Console(file=buf, width=200, highlight=False, color_system=None))
    watch.on_run_start(HEADER, 1)
    watch.on_case_start(CASE, 1, ["search_genes", "blast"])
    good = TraceCall(
        index=0,
        call_id="a",
        round=1,
        tool="search_genes",
        arguments={"name": "[red]x"},
        arguments_raw='{"name": "[red]x"}',
        schema_valid=True,
        execution="ok",
        result={"hits": 2},
    )
    bad = TraceCall(
        index=1,
        call_id="b",
        round=1,
        tool="blast",
        arguments_raw="{oops",
        parse_error="Expecting value",
        schema_valid=False,
        schema_errors=["$: not an object"],
        execution="rejected",
    )
    watch.on_round(CASE, RoundInfo(index=1, started_at=0.0, latency_ms=812.0), [good, bad])
    watch.on_round(CASE, RoundInfo(index=2, started_at=1.0, text="All done [b]"), [])
    rec = make_records(1, skill=0.0, seed=1)[0]
    watch.on_case_end(CaseRecord.model_validate(rec))
    text = buf.getvalue()
    assert "offered tools: search_genes, blast" in text
    assert "Find [bold]gene[/bold] 1" in text  # model/case text printed literally
    assert (
        'search_genes {"name": "[red]x"}' in text and "schema: valid" in text and 'result {"hits": 2}' in text
    )
    assert "arguments unparsable (Expecting value): {oops" in text and "execution: rejected" in text
    assert "round 2" in text and "no tool call" in text and "All done [b]" in text
    assert "native-function-contract: FAIL" in text
    code = rec["verdicts"]["native-function-contract"]["reasons"][0]["code"]
    assert f"    {code}: argument name differs" in text


def test_make_observers_from_run_config(tmp_path):
    from callbench.harness.config import RunConfig

    stream = io.StringIO()
    observers = make_observers({"progress": "auto", "watch": False, "runs_root": tmp_path, "stream": stream})
    assert isinstance(observers[0], PlainProgress)
    writer = observers[1]
    writer.on_run_start(SimpleNamespace(run_id="20261130-x"), 1)
    assert (tmp_path / "20261130-x" / "live.json").is_file()
    config = RunConfig(progress="plain", out_dir=tmp_path / "out")
    kinds = [type(o).__name__ for o in make_observers(config)]
    assert kinds == ["PlainProgress", "LiveStateWriter"]
