"""The built-in oracle agent through ``callbench run`` on BFCL single-turn and multi-turn suites."""

import callbench


def test_oracle_passes_multi_turn_entries_end_to_end(bfcl_folder, tmp_path):
    # limit=5 is the suite's own option: five entries of each multi-turn category
    result = callbench.run(
        "bfcl:multi_turn",
        "oracle",
        out_dir=tmp_path / "run",
        progress="quiet",
        data=bfcl_folder,
        suite_options={"limit": "5"},
    )
    by_category = result.summary["tiers"]["bfcl"]["by_category"]
    assert set(by_category) == {
        "multi_turn_base",
        "multi_turn_miss_func",
        "multi_turn_miss_param",
        "multi_turn_long_context",
    }
    assert all(figures["accuracy"] == 1.0 for figures in by_category.values())


def test_oracle_passes_single_turn_simple_python(bfcl_folder, tmp_path):
    result = callbench.run(
        "bfcl:simple_python", "oracle", out_dir=tmp_path / "run", progress="quiet", limit=50, data=bfcl_folder
    )
    assert result.summary["tiers"]["bfcl"]["accuracy"] == 1.0
