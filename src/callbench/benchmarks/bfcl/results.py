"""Score existing BFCL result files with callbench's BFCL checker (no model, no API key).

Layouts (both accepted by ``bfcl evaluate``): ``<result-dir>/<model>/<group>/BFCL_v4_<category>_result.json``
and the flat ``<result-dir>/<model>/BFCL_v4_<category>_result.json``.  ``folder`` may be the
result dir (every sub-folder is a model, as ``bfcl evaluate`` reads it) or one model's folder
(it holds result files or BFCL group folders), or one group folder of a model; either way each
model is labelled by its own folder name and a category may appear only once per model.

Function names: BFCL decides per model whether ``.`` in a function name must arrive as ``_``
(the model config's ``underscore_to_dot``).  callbench does the same: a model registered in
the installed ``bfcl-eval`` uses its config, any other model needs ``--name-convention``
(see :mod:`callbench.benchmarks.bfcl.models`).  Nothing is inferred from the calls in a file.

Agentic categories (memory, web search) are judged by BFCL's agentic check of the last step that is
not a call (:func:`callbench.benchmarks.bfcl.agentic.judge_result`); memory prerequisite files
(``BFCL_v4_memory_<backend>_prereq_result.json``) are skipped, as ``bfcl evaluate`` skips them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from callbench.benchmarks.bfcl.agentic import judge_result
from callbench.benchmarks.bfcl.aggregate import summarise
from callbench.benchmarks.bfcl.data import (
    AGENTIC,
    MEMORY,
    MULTI_TURN,
    SINGLE_TURN,
    VERSION_PREFIX,
    WEB_SEARCH,
    data_dir,
    load_answers,
    load_questions,
    read_jsonl,
)
from callbench.benchmarks.bfcl.entry import is_relevance, judge_entry
from callbench.benchmarks.bfcl.models import Convention, convention_for, model_for_folder
from callbench.benchmarks.bfcl.multi_turn_checks import judge_multi_result
from callbench.benchmarks.bfcl.options import BfclOptions, Check
from callbench.plugin import UserError

_SUFFIX = "_result.json"
GROUP_FOLDERS = ("non_live", "live", "multi_turn", "agentic", "format_sensitivity")
"""Sub-folders BFCL writes inside a model's result folder."""
INFERENCE_ERROR = "Error during inference"


@dataclass
class EntryVerdict:
    """callbench's verdict on one stored BFCL result line."""

    id: str
    valid: bool
    error_type: str
    errors: list[Any]
    result: Any
    answer: Any
    faithful_valid: bool | None = None
    faithful_error_type: str | None = None
    fixes: list[str] = field(default_factory=list)
    """Improved mode: answer-key fixes applied to this entry."""
    turns: list[bool | None] | None = None
    """Multi-turn: per-turn flags (None for turns without ground truth)."""
    usage: dict[str, Any] = field(default_factory=dict)

    @property
    def inference_error(self) -> bool:
        """BFCL stored an inference failure as the result (BFCL counts it as a failure)."""
        return isinstance(self.result, str) and self.result.startswith(INFERENCE_ERROR)


@dataclass
class FileScore:
    """Verdicts of one result file."""

    path: Path
    model: str
    category: str
    convention: Convention
    entries: list[EntryVerdict] = field(default_factory=list)
    text_results: int = 0
    """AST entries whose result is plain text (a prompt-mode file, or no call made)."""

    @property
    def total(self) -> int:
        return len(self.entries)

    @property
    def correct(self) -> int:
        return sum(entry.valid for entry in self.entries)

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 0.0

    @property
    def failures(self) -> list[EntryVerdict]:
        return [entry for entry in self.entries if not entry.valid]

    @property
    def differences(self) -> list[dict[str, Any]]:
        """Improved mode: entries whose faithful verdict differs."""
        return [
            {"id": e.id, "faithful": e.faithful_error_type or "pass", "improved": e.error_type or "pass"}
            for e in self.entries
            if e.faithful_valid is not None and e.faithful_valid != e.valid
        ]


def category_of_file(path: Path) -> str | None:
    """``simple_python`` for ``BFCL_v4_simple_python_result.json``; None for other names."""
    name = path.name
    prefix = f"{VERSION_PREFIX}_"
    if not (name.startswith(prefix) and name.endswith(_SUFFIX)):
        return None
    return name[len(prefix) : -len(_SUFFIX)]


def is_model_folder(folder: Path) -> bool:
    """A model's own folder holds result files or BFCL group folders directly."""
    if any(category_of_file(path) for path in folder.glob(f"{VERSION_PREFIX}_*{_SUFFIX}")):
        return True
    return any((folder / group).is_dir() for group in GROUP_FOLDERS)


def find_models(folder: Path) -> dict[str, dict[str, Path]]:
    """{model: {category: result file}} for every supported category under ``folder``.

    Raises:
        UserError: no such folder, no result files, or one category twice for a model.
    """
    if not folder.is_dir():
        raise UserError(f"{folder}: not a folder of BFCL result files")
    if folder.name in GROUP_FOLDERS and is_model_folder(folder.parent):
        candidates = [(folder.parent.name, folder)]  # one group folder of a model: label it by the model
    elif is_model_folder(folder):
        candidates = [(folder.name, folder)]
    else:
        candidates = [(child.name, child) for child in sorted(folder.iterdir()) if child.is_dir()]
    models: dict[str, dict[str, Path]] = {}
    for model, model_dir in candidates:
        files: dict[str, Path] = {}
        for path in sorted(model_dir.rglob(f"{VERSION_PREFIX}_*{_SUFFIX}")):
            category = category_of_file(path)
            if category not in SINGLE_TURN + MULTI_TURN + AGENTIC:
                continue  # memory prerequisite conversations too: not scored, as in BFCL
            if category in files:
                raise UserError(
                    f"{model_dir}: category {category} appears twice for model {model!r} "
                    f"({files[category]} and {path}); keep one"
                )
            files[category] = path
        if files:
            models[model] = files
    if not models:
        raise UserError(f"{folder}: no {VERSION_PREFIX}_<category>{_SUFFIX} files of supported categories")
    return models


def needs_names(category: str) -> bool:
    """Whether verdicts of a category depend on the function-name convention (AST categories)."""
    return category in SINGLE_TURN and not is_relevance(category)


def model_convention(model: str, categories: list[str], explicit: str | None) -> Convention:
    """The convention a model is judged under (only demanded when an AST category is present)."""
    info = model_for_folder(model)
    if info is not None and not info.is_fc_model:
        raise UserError(
            f"model {model!r} runs in prompt mode in bfcl-eval: its results are raw text that only its "
            "own BFCL handler decodes; callbench scores FC-format results only"
        )
    if any(needs_names(category) for category in categories):
        return convention_for(model, explicit)
    if info is not None:
        return convention_for(model, None)
    return Convention(False, "not needed (no AST category)")


def judge_line(
    row: dict[str, Any], entry: dict[str, Any], category: str, answer: Any, options: BfclOptions
) -> EntryVerdict:
    """Judge one result line against its question entry."""
    usage: dict[str, Any] = {
        key: row[key] for key in ("input_token_count", "output_token_count", "latency") if key in row
    }
    result = row["result"]
    if category in AGENTIC:  # the same check in both modes
        check = judge_result(result, list(answer or []))
        verdict = EntryVerdict(
            entry["id"], check.valid, check.error_type, check.errors, result, answer, usage=usage
        )
        if options.improved:
            verdict.faithful_valid, verdict.faithful_error_type = check.valid, check.error_type
        return verdict
    if category in MULTI_TURN:
        outcome = judge_multi_result(entry, result, answer)
        return EntryVerdict(
            entry["id"],
            outcome.check.valid,
            outcome.check.error_type,
            outcome.check.errors,
            result,
            answer,
            turns=outcome.turns,
            usage=usage,
        )
    fixes: list[str] = []
    check = judge_entry(
        category, entry["function"], result, answer, options, entry_id=entry["id"], applied=fixes
    )
    verdict = EntryVerdict(
        entry["id"], check.valid, check.error_type, check.errors, result, answer, fixes=fixes, usage=usage
    )
    if options.improved:
        faithful: Check = judge_entry(
            category,
            entry["function"],
            result,
            answer,
            BfclOptions(underscore_to_dot=options.underscore_to_dot),
        )
        verdict.faithful_valid, verdict.faithful_error_type = faithful.valid, faithful.error_type
    return verdict


def score_file(
    path: Path, category: str, model: str, folder: Path, options: BfclOptions, convention: Convention
) -> FileScore:
    """Judge every entry of one result file under the model's name convention."""
    rows = read_jsonl(path)
    questions, answers = category_entries(category, folder)
    options = replace(options, underscore_to_dot=bool(convention.underscore_to_dot))
    score = FileScore(path, model, category, convention)
    for number, row in enumerate(rows, 1):
        entry = questions.get(str(row.get("id"))) if isinstance(row, dict) else None
        if entry is None or "result" not in row:
            found = row.get("id") if isinstance(row, dict) else row
            raise UserError(f"{path}:{number}: unknown entry id {found!r} or no 'result'")
        score.entries.append(judge_line(row, entry, category, answers.get(entry["id"]), options))
        score.text_results += category in SINGLE_TURN and isinstance(row["result"], str)
    return score


def category_entries(category: str, folder: Path) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """(question entries by id, possible answers by id) of one category, ids as BFCL names them
    (memory and web search entries renamed for their category, as bfcl-eval renames them)."""
    if category in MEMORY:
        from callbench.benchmarks.bfcl.memory_cases import load_memory

        data = load_memory(category, folder)
        questions = {entry["id"]: entry for entry in data.questions}
        return questions, {key: row.get("ground_truth") for key, row in data.answers.items()}
    if category in WEB_SEARCH:
        from callbench.benchmarks.bfcl.web_search_cases import load_answers as web_answers
        from callbench.benchmarks.bfcl.web_search_cases import load_entries

        questions = {entry["id"]: entry for entry in load_entries(category, folder)}
        return questions, {key: row.get("ground_truth") for key, row in web_answers(category, folder).items()}
    return {entry["id"]: entry for entry in load_questions(category, folder)}, load_answers(category, folder)


def score_results(
    folder: Path,
    data: Path | None = None,
    options: BfclOptions | None = None,
    name_convention: str | None = None,
) -> dict[str, Any]:
    """Score every model's result files under ``folder``.

    Args:
        folder: A BFCL result dir or one model's result folder (see module docs).
        data: BFCL data folder (default: the installed ``bfcl-eval``).
        options: Faithful (default) or improved settings; ``underscore_to_dot`` is set per model.
        name_convention: ``dotted`` or ``underscored`` for models not registered in ``bfcl-eval``.

    Returns:
        ``{settings, models: {model: {categories, summary, name_convention}}, files: [FileScore]}``.
    """
    options = options or BfclOptions()
    source = data_dir(data)
    found = find_models(folder)
    conventions = {
        model: model_convention(model, list(files), name_convention) for model, files in found.items()
    }
    models: dict[str, dict[str, Any]] = {}
    files_out: list[FileScore] = []
    for model, files in found.items():
        figures: dict[str, Any] = {"categories": {}, "name_convention": conventions[model].describe()}
        for category, path in files.items():
            result = score_file(path, category, model, source, options, conventions[model])
            files_out.append(result)
            figures["categories"][category] = {
                "accuracy": result.accuracy,
                "correct_count": result.correct,
                "total_count": result.total,
            }
            if options.improved:
                figures.setdefault("faithful_vs_improved", []).extend(result.differences)
        figures["summary"] = summarise(figures["categories"])
        models[model] = figures
    settings = {
        key: value for key, value in options.describe().items() if key != "underscore_to_dot"
    }  # per model
    return {"settings": settings, "models": models, "files": files_out}
