import json
import re

from synth import make_records, write_run

from callbench.harness.runfolder import read_run
from callbench.report.html import script_json, write_report
from callbench.report.payload import attach_expected, build_payload, unpack_rows


def test_script_json_cannot_close_the_script_element():
    value = {"t": "</script><script>alert(1)</script><!-- & \u2028"}
    text = script_json(value)
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == value


def test_report_is_self_contained_and_embeds_payload(tmp_path):
    hostile = "</script><img src=x onerror=alert(1)>"
    run = write_run(tmp_path / "r", make_records(10, payload=hostile))
    out = write_report([run], tmp_path / "report.html")
    page = out.read_text()
    # No external resources: nothing fetched over the network.
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert page.count("<script") == 2 and hostile not in page
    data = re.search(r'<script type="application/json" id="cb-data">(.*?)</script>', page, re.DOTALL).group(1)
    payload = json.loads(data)
    assert unpack_rows(payload, 0)[0]["trace"]["final_text"] == hostile


def test_multi_run_payload_has_leaderboard_and_comparisons(tmp_path):
    a = write_run(tmp_path / "a", make_records(40, skill=0.9, seed=1), model="m1")
    b = write_run(tmp_path / "b", make_records(40, skill=0.2, seed=2), model="m2")
    payload = build_payload([read_run(a), read_run(b)])
    assert [row["rank"] for row in payload["leaderboard"]] == [1, 2, 1, 2]
    assert len(payload["comparisons"]) == 2
    cmp = payload["comparisons"][0]
    assert cmp["a"].startswith("m1") and cmp["difference"]["estimate"] > 0 and cmp["mcnemar_p"] < 0.05
    keys_a = [r.key for r in read_run(a).records]
    disagreeing = {keys_a[i] for i, _j, _winner in cmp["disagreeing_rows"]}
    assert len(disagreeing) == cmp["only_a"] + cmp["only_b"]  # one case per row, named by A's row


def test_attach_expected_reads_the_runs_suite(tmp_path):
    import callbench

    result = callbench.run("starter", "noisy", limit=2, out_dir=tmp_path / "run", progress="quiet")
    run = read_run(result.run_dir)
    assert all(r.expected[0]["tool"] for r in run.records)  # records carry their expected steps
    for record in run.records:  # as in runs written before records carried them
        record.expected = []
    assert attach_expected(run) == []
    assert all(r.expected and r.expected[0]["tool"] for r in run.records)
    stale = read_run(result.run_dir)
    for record in stale.records:
        record.expected = []
    assert stale.header is not None
    stale.header.suites[0].hash = "0" * 64
    assert "hash differs" in attach_expected(stale)[0]
    assert all(r.expected == [] for r in stale.records)


def test_record_payload_keeps_the_written_shape(tmp_path):
    """Page data is made from the typed record but keeps only the keys the line had, so a record
    written without ``expected`` still lets the page fall back to ``metadata.expected``."""
    from callbench.report.payload import record_payload

    run = write_run(tmp_path / "r", make_records(2))
    record = read_run(run).records[0]
    payload = record_payload(record)
    assert "expected" not in payload and payload["metadata"]["expected"][0]["tool"]
    assert payload["trace"]["rounds"][0]["call_ids"] == record.trace.rounds[0].call_ids
    record.expected = [{"tool": "x"}]
    assert record_payload(record)["expected"] == [{"tool": "x"}]


def test_runs_in_different_harness_modes_are_not_compared(tmp_path):
    a = write_run(tmp_path / "a", make_records(10, harness_mode="oracle-assisted"))
    b = write_run(tmp_path / "b", make_records(10, harness_mode="production-parity"))
    payload = build_payload([read_run(a), read_run(b)])
    assert payload["comparisons"] == []
    assert "share no tier and harness mode" in payload["notes"][0]
    modes = {(row["harness_mode"], row["rank"]) for row in payload["leaderboard"]}
    assert modes == {("oracle-assisted", 1), ("production-parity", 1)}  # ranked apart
