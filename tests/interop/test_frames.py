"""Runs, records and verdicts as pandas and polars frames (`callbench.load_*`), and
`callbench export parquet`."""

from __future__ import annotations

import builtins

import pytest

import callbench
from callbench.cli.main import main
from callbench.errors import MissingExtraError
from callbench.harness.runfolder import read_run
from callbench.interop.frames import RECORD_COLUMNS, RUN_COLUMNS, VERDICT_COLUMNS, export_parquet

pd = pytest.importorskip("pandas")


def test_runs_frame(oracle_run, noisy_run):
    runs = callbench.load_runs([oracle_run, noisy_run])
    assert list(runs.columns[: len(RUN_COLUMNS)]) == list(RUN_COLUMNS)
    assert len(runs) == 2 and list(runs["model"]) == ["oracle", "noisy:3"]
    noisy = runs.iloc[1]
    summary = read_run(noisy_run).summary
    assert summary is not None
    for tier in ["native-function-contract", "state-match"]:
        stratum = next(s for s in summary.statistics.strata if s.tier == tier)
        assert noisy[f"{tier}.accuracy"] == pytest.approx(summary.tiers[tier].accuracy)
        assert noisy[f"{tier}.low"] == pytest.approx(stratum.accuracy.low)
        assert noisy[f"{tier}.high"] == pytest.approx(stratum.accuracy.high)
    assert bool(noisy["state-match.diagnostic"]) and not bool(noisy["native-function-contract.diagnostic"])
    assert pd.isna(runs.iloc[0]["state-match.n"])  # the oracle run had no state-match: no figure, not 0


def test_records_and_verdicts_frames(noisy_run):
    records = callbench.load_records(noisy_run)
    assert list(records.columns[: len(RECORD_COLUMNS)]) == list(RECORD_COLUMNS) and len(records) == 16
    verdicts = callbench.load_verdicts(noisy_run)
    assert list(verdicts.columns) == list(VERDICT_COLUMNS)
    assert len(verdicts) == 16 * 4  # three strict tiers and state-match per record
    run = read_run(noisy_run)
    for record in run.records:
        mine = verdicts[(verdicts.key == record.key) & (verdicts.trial == record.trial)]
        assert dict(zip(mine.scorer, mine.passed, strict=True)) == {
            k: v.passed for k, v in record.verdicts.items()
        }
    assert set(verdicts[verdicts.diagnostic].scorer) == {"state-match"}


def test_polars_frames_hold_the_same_rows(oracle_run, noisy_run):
    pl = pytest.importorskip("polars", reason="polars is in the test extra")
    runs = [oracle_run, noisy_run]
    for loader in (callbench.load_runs, callbench.load_records, callbench.load_verdicts):
        a, b = loader(runs), loader(runs, backend="polars")
        assert isinstance(b, pl.DataFrame)
        assert list(a.columns) == b.columns and len(a) == b.height
    verdicts = callbench.load_verdicts(noisy_run, backend="polars")
    assert verdicts.filter(pl.col("diagnostic"))["scorer"].unique().to_list() == ["state-match"]


def test_parquet_export(live_like_run, tmp_path, capsys):
    pytest.importorskip("pyarrow", reason="pyarrow is in the test extra")
    done = export_parquet(live_like_run, tmp_path / "pq")
    assert done.rows == {"runs": 1, "records": 16, "verdicts": 15 * 4}  # the error record has no verdicts
    records = pd.read_parquet(done.files["records"])
    assert list(records.columns[: len(RECORD_COLUMNS)]) == list(RECORD_COLUMNS)
    assert (records.status == "error").sum() == 1
    runs = pd.read_parquet(done.files["runs"])
    assert runs.iloc[0]["model"] == "openai:gpt-5-mini" and runs.iloc[0]["cost_usd"] > 0
    verdicts = pd.read_parquet(done.files["verdicts"])
    assert list(verdicts.columns) == list(VERDICT_COLUMNS)
    assert main(["export", "parquet", str(live_like_run), "-o", str(tmp_path / "cli")]) == 0
    assert "records.parquet  (16 row(s))" in capsys.readouterr().out


def test_a_missing_extra_is_one_line(noisy_run, tmp_path, monkeypatch, capsys):
    real = builtins.__import__

    def no_pyarrow(name, *args, **kwargs):
        if name == "pyarrow" or name.startswith("pyarrow."):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    with pytest.raises(MissingExtraError, match=r"pip install 'callbench\[parquet\]'"):
        export_parquet(noisy_run, tmp_path / "pq")
    assert main(["export", "parquet", str(noisy_run), "-o", str(tmp_path / "pq")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "callbench: error: export parquet needs the module 'pyarrow', which is not installed: "
        "pip install 'callbench[parquet]'"
    ]
    assert not (tmp_path / "pq").exists()
