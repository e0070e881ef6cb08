"""Item 18: both BFCL result layouts, each model labelled by its own folder."""

from __future__ import annotations

import pytest
from results_helpers import dotted_entries, gold_rows, write_result

from callbench.benchmarks.bfcl.results import score_results
from callbench.errors import UserError

A, B = "gpt-4o-2024-11-20-FC", "gorilla-openfunctions-v2"
RESULT = "BFCL_v4_simple_python_result.json"


@pytest.fixture
def rows(bfcl_folder):
    entries = dotted_entries(bfcl_folder, "simple_python", 3)
    # A (underscoring) passes all three; B (dotted) gets the underscored form and passes none.
    return gold_rows(entries, underscored=True)


def test_flat_layout_keeps_every_model(tmp_path, bfcl_folder, rows):
    write_result(tmp_path / "result" / A / RESULT, rows)
    write_result(tmp_path / "result" / B / RESULT, rows)
    models = score_results(tmp_path / "result", data=bfcl_folder)["models"]
    assert set(models) == {A, B}
    assert models[A]["categories"]["simple_python"]["correct_count"] == 3
    assert models[B]["categories"]["simple_python"]["correct_count"] == 0


def test_grouped_and_flat_layouts_side_by_side(tmp_path, bfcl_folder, rows):
    write_result(tmp_path / "result" / A / "non_live" / RESULT, rows)
    write_result(tmp_path / "result" / B / RESULT, rows)
    assert set(score_results(tmp_path / "result", data=bfcl_folder)["models"]) == {A, B}


@pytest.mark.parametrize("grouped", [True, False])
def test_a_single_model_folder_is_labelled_by_its_name(tmp_path, bfcl_folder, rows, grouped):
    model_dir = tmp_path / "result" / A
    write_result(model_dir / ("non_live" if grouped else ".") / RESULT, rows)
    models = score_results(model_dir, data=bfcl_folder)["models"]
    assert list(models) == [A] and models[A]["categories"]["simple_python"]["correct_count"] == 3


def test_a_category_twice_for_one_model_is_refused(tmp_path, bfcl_folder, rows):
    write_result(tmp_path / "result" / A / RESULT, rows)
    write_result(tmp_path / "result" / A / "non_live" / RESULT, rows)
    with pytest.raises(UserError, match="simple_python.*twice"):
        score_results(tmp_path / "result", data=bfcl_folder)


def test_a_group_folder_is_labelled_by_its_model(tmp_path, bfcl_folder, rows):
    write_result(tmp_path / "result" / A / "non_live" / RESULT, rows)
    models = score_results(tmp_path / "result" / A / "non_live", data=bfcl_folder)["models"]
    assert list(models) == [A] and models[A]["categories"]["simple_python"]["correct_count"] == 3
