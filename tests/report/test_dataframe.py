import pytest
from synth import make_records, write_run

from callbench.report.dataframe import load_records

pd = pytest.importorskip("pandas")


def test_load_records_flat_columns(tmp_path):
    a = write_run(tmp_path / "a", make_records(20, trials=2, error_rate=0.1))
    b = write_run(tmp_path / "b", make_records(5))
    df = load_records([a, b])
    assert len(df) == 45
    assert set(df["run"]) == {"a", "b"}
    assert {"native-function-contract.passed", "real-tool-execution.partial", "key", "trial"} <= set(
        df.columns
    )
    single = load_records(a)
    recs = make_records(20, trials=2, error_rate=0.1)
    done = single[single["status"] == "completed"]
    expected = [
        r["verdicts"]["native-function-contract"]["passed"] for r in recs if r["status"] == "completed"
    ]
    assert list(done["native-function-contract.passed"]) == expected
    assert set(single.loc[single["status"] == "error", "error_type"]) == {"TransientProviderError"}
    assert single.groupby("key")["trial"].nunique().max() == 2


def test_public_load_records(tmp_path):
    import callbench

    run = write_run(tmp_path / "a", make_records(4))
    assert list(callbench.load_records(run)["key"]) == [f"demo:case-{i:05d}" for i in range(4)]
