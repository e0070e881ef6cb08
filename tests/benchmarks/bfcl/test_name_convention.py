"""Item 17: the function-name convention is decided per model (BFCL's model config), never per file."""

from __future__ import annotations

import json

import pytest
from results_helpers import dotted_entries, gold_rows, write_result

from callbench.benchmarks.bfcl.results import score_results
from callbench.cli.main import main
from callbench.errors import UserError

UNDERSCORING = "gpt-4o-2024-11-20-FC"  # BFCL config: underscore_to_dot=True
DOTTED = "gorilla-openfunctions-v2"  # BFCL config: underscore_to_dot=False
RESULT = "BFCL_v4_simple_python_result.json"


def _score(root, folder, **kwargs):
    return score_results(root, data=folder, **kwargs)["models"]


def test_underscoring_model_is_held_to_underscores_even_when_no_call_uses_them(tmp_path, bfcl_folder):
    # A careless export of an OpenAI-style FC model that kept the dots: BFCL rejects every call
    # (it expects `math_factorial`), so callbench must too, though nothing in the file is underscored.
    entries = dotted_entries(bfcl_folder, "simple_python", 4)
    write_result(
        tmp_path / "result" / UNDERSCORING / "non_live" / RESULT, gold_rows(entries, underscored=False)
    )
    figures = _score(tmp_path / "result", bfcl_folder)[UNDERSCORING]
    assert figures["categories"]["simple_python"]["correct_count"] == 0
    assert figures["name_convention"] == {"underscore_to_dot": True, "source": "bfcl-eval model config"}


def test_one_underscored_call_does_not_flip_a_dotted_model(tmp_path, bfcl_folder):
    # A model that keeps dots emits one underscored name: only that entry fails; the dotted ones pass.
    entries = dotted_entries(bfcl_folder, "simple_python", 4)
    rows = gold_rows(entries[:3], underscored=False) + gold_rows(entries[3:], underscored=True)
    write_result(tmp_path / "result" / DOTTED / "non_live" / RESULT, rows)
    models = _score(tmp_path / "result", bfcl_folder)
    figures = models[DOTTED]["categories"]["simple_python"]
    assert (figures["correct_count"], figures["total_count"]) == (3, 4)
    assert models[DOTTED]["name_convention"]["underscore_to_dot"] is False


def test_unknown_model_needs_an_explicit_convention(tmp_path, bfcl_folder, capsys):
    entries = dotted_entries(bfcl_folder, "simple_python", 2)
    write_result(
        tmp_path / "result" / "my-local-model" / "non_live" / RESULT, gold_rows(entries, underscored=True)
    )
    with pytest.raises(UserError, match="--name-convention"):
        _score(tmp_path / "result", bfcl_folder)
    code = main(["bfcl", "score-results", str(tmp_path / "result"), "--data", str(bfcl_folder)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "--name-convention underscored" in err
    underscored = _score(tmp_path / "result", bfcl_folder, name_convention="underscored")["my-local-model"]
    assert underscored["categories"]["simple_python"]["correct_count"] == 2
    assert underscored["name_convention"] == {"underscore_to_dot": True, "source": "--name-convention"}
    dotted = _score(tmp_path / "result", bfcl_folder, name_convention="dotted")["my-local-model"]
    assert dotted["categories"]["simple_python"]["correct_count"] == 0


def test_explicit_convention_never_overrides_a_registered_model(tmp_path, bfcl_folder):
    entries = dotted_entries(bfcl_folder, "simple_python", 2)
    write_result(
        tmp_path / "result" / UNDERSCORING / "non_live" / RESULT, gold_rows(entries, underscored=True)
    )
    figures = _score(tmp_path / "result", bfcl_folder, name_convention="dotted")[UNDERSCORING]
    assert figures["categories"]["simple_python"]["correct_count"] == 2
    assert figures["name_convention"]["source"] == "bfcl-eval model config"


def test_unknown_model_without_ast_files_needs_no_convention(tmp_path, bfcl_folder):
    # Relevance categories never compare names, so the convention cannot change a verdict.
    row = {"id": "irrelevance_0", "result": "I cannot help with that."}
    write_result(
        tmp_path / "result" / "my-local-model" / "non_live" / "BFCL_v4_irrelevance_result.json", [row]
    )
    figures = _score(tmp_path / "result", bfcl_folder)["my-local-model"]
    assert figures["categories"]["irrelevance"]["correct_count"] == 1


def test_bad_convention_value_is_one_line(tmp_path, bfcl_folder):
    entries = dotted_entries(bfcl_folder, "simple_python", 1)
    write_result(tmp_path / "result" / "m" / RESULT, gold_rows(entries, underscored=True))
    with pytest.raises(UserError, match="dotted or underscored"):
        _score(tmp_path / "result", bfcl_folder, name_convention="snake")


def test_export_follows_the_model_config(tmp_path, bfcl_folder):
    run = tmp_path / "run"
    assert (
        main(
            [
                "run",
                "--suite",
                "bfcl:parallel",
                "--model",
                "oracle",
                "--option",
                "limit=3",
                "--data",
                str(bfcl_folder),
                "--out",
                str(run),
                "--progress",
                "quiet",
            ]
        )
        == 0
    )

    def names(model, *extra):
        out = tmp_path / "export" / model
        assert main(["export", "bfcl", str(run), "--out", str(out), "--model", model, *extra]) == 0
        text = next(out.rglob("*_result.json")).read_text()
        return {name for line in text.splitlines() for call in json.loads(line)["result"] for name in call}

    assert all("." not in name for name in names(UNDERSCORING))
    assert any("." in name for name in names(DOTTED))
    assert main(["export", "bfcl", str(run), "--out", str(tmp_path / "x"), "--model", "my-local-model"]) == 2
    assert any("." in name for name in names("my-local-model", "--name-convention", "dotted"))
    # A registered model's convention is fixed by its config: a conflicting flag is refused.
    assert (
        main(
            [
                "export",
                "bfcl",
                str(run),
                "--out",
                str(tmp_path / "y"),
                "--model",
                UNDERSCORING,
                "--name-convention",
                "dotted",
            ]
        )
        == 2
    )


def test_underscore_option_never_changes_a_run_verdict(tmp_path, bfcl_folder):
    # In a callbench run, providers map wire-safe names back to the docs' names, so the trace holds
    # `spotify.play`; with -o underscore_to_dot=true the scorer writes it as such a model's result would.
    import callbench

    for flag in ("true", "false"):
        result = callbench.run(
            "bfcl:parallel",
            "oracle",
            out_dir=tmp_path / flag,
            progress="quiet",
            data=bfcl_folder,
            suite_options={"limit": "5", "underscore_to_dot": flag},
        )
        assert result.summary["tiers"]["bfcl"]["accuracy"] == 1.0, flag


def test_prompt_mode_model_is_refused_in_one_line(tmp_path, bfcl_folder):
    # BFCL's prompt-mode results hold raw text only the model's own handler decodes: scoring them as FC
    # calls would fail every entry, so the command says why instead.
    row = {"id": "simple_python_0", "result": "[calculate_triangle_area(base=10, height=5)]"}
    write_result(tmp_path / "result" / "DeepSeek-V3.2-Exp" / "non_live" / RESULT, [row])
    with pytest.raises(UserError, match="prompt mode"):
        _score(tmp_path / "result", bfcl_folder)


def test_malformed_result_line_names_file_and_line(tmp_path, bfcl_folder):
    path = tmp_path / "result" / UNDERSCORING / RESULT
    path.parent.mkdir(parents=True)
    path.write_text('{"id": "simple_python_0", "result": []}\n{"id": "nope", "result": []}\n')
    with pytest.raises(UserError, match=r"BFCL_v4_simple_python_result.json:2: unknown entry id 'nope'"):
        _score(tmp_path / "result", bfcl_folder)
