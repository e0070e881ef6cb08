"""BFCL's format-sensitivity category: 200 single-turn entries, each asked in 26 prompt formats.

Cases are generated from the data as BFCL generates them: the entries named in
``BFCL_v4_format_sensitivity.json`` (in each category's data order, categories in the file's order)
times the 26 variants of :mod:`callbench.benchmarks.bfcl.format_prompts`, numbered in that order
(``format_sensitivity_<n>:<variant>:<entry id>``, BFCL's ids). Each case is one model round in
prompt mode: the variant's system prompt describes the functions and the return format, no tool
is offered natively, and the model writes its calls as text.

Judging (:func:`judge_text`): the answer is decoded in the variant's return format
(:mod:`callbench.benchmarks.bfcl.format_calls`) and the calls are checked by the AST checker of the
entry's own category (simple, multiple, parallel...), as Python, which is what bfcl-eval 2026.3.23
does. Improved mode adds the single-turn improved switches and answer corrections. The category is
outside BFCL's overall score; its point is the spread of accuracy across the variants
(:func:`format_figures`).
"""

from __future__ import annotations

import json
import math
import statistics
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from callbench.benchmarks.bfcl.calls import literal_rules
from callbench.benchmarks.bfcl.data import VERSION_PREFIX, load_answers, load_questions
from callbench.benchmarks.bfcl.entry import is_call_list, judge_calls
from callbench.benchmarks.bfcl.fixes import fix_answer
from callbench.benchmarks.bfcl.format_calls import TextDecodeError, decode_text, render_calls
from callbench.benchmarks.bfcl.format_prompts import VARIANTS, Variant, parse_variant, system_prompt
from callbench.benchmarks.bfcl.options import BfclOptions, Check
from callbench.benchmarks.bfcl.oracle import gold_calls
from callbench.benchmarks.bfcl.verdicts import to_verdict
from callbench.plugin import (
    DEFAULT_SEED,
    Case,
    Message,
    Table,
    UserError,
    accuracy_interval,
)

if TYPE_CHECKING:
    from callbench.plugin import Trace, Verdict

CATEGORY = "format_sensitivity"
SPREAD_RESAMPLES = 2000


def id_file(folder: Path) -> Path:
    """The file naming the entries of the category (per source category)."""
    return folder / f"{VERSION_PREFIX}_{CATEGORY}.json"


def source_ids(folder: Path) -> dict[str, list[str]]:
    """{source category: entry ids} as listed in the id file (empty lists dropped, as BFCL does)."""
    path = id_file(folder)
    if not path.is_file():
        raise UserError(
            f"bfcl: missing data file {path}; install bfcl-eval (pip install --no-deps bfcl-eval)"
        )
    try:
        listed = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: invalid JSON ({exc.msg})") from exc
    return {category: list(ids) for category, ids in listed.items() if ids}


def source_entries(folder: Path) -> list[tuple[str, dict[str, Any], Any]]:
    """(source category, question entry, possible answer) of every entry, in BFCL's order."""
    out = []
    for category, ids in source_ids(folder).items():
        wanted = set(ids)
        answers = load_answers(category, folder)
        for entry in load_questions(category, folder):
            if entry["id"] in wanted:
                out.append((category, entry, answers.get(entry["id"])))
    return out


def case_id(number: int, variant: Variant, entry_id: str) -> str:
    """BFCL's id of one variant of one entry."""
    return f"{CATEGORY}_{number}:{variant.name}:{entry_id}"


def split_id(identifier: str) -> tuple[Variant, str]:
    """(variant, source entry id) of a format-sensitivity id."""
    parts = identifier.split(":")
    if len(parts) != 3 or not parts[0].startswith(CATEGORY):
        raise UserError(
            f"bfcl: {identifier!r} is not a format-sensitivity id (format_sensitivity_<n>:<variant>:<id>)"
        )
    return parse_variant(parts[1]), parts[2]


def format_cases(folder: Path, scoring: BfclOptions, limit: int | None = None) -> list[Case]:
    """The category's cases; ``limit``: the first N source entries (each with all 26 variants).
    Ids keep BFCL's numbering of the whole set."""
    cases = []
    for position, (category, entry, truth) in enumerate(source_entries(folder)):
        if limit is not None and position >= limit:
            break
        for offset, variant in enumerate(VARIANTS):
            number = position * len(VARIANTS) + offset
            cases.append(variant_case(number, variant, entry, truth, category, scoring))
    return cases


def variant_case(
    number: int, variant: Variant, entry: dict[str, Any], truth: Any, category: str, scoring: BfclOptions
) -> Case:
    """One entry asked in one variant: the variant's system prompt (before the entry's own system
    message, as BFCL merges them), the user turn, and no tools: the model answers in text.

    The case has no expected steps (no tool is offered to call); the gold answer is the text of the
    gold calls in the variant's return format (``metadata["oracle_text"]``, the one text round the
    built-in ``oracle`` plays), following the answer as the scorer will judge it (corrected in
    improved mode)."""
    docs = entry["function"]
    gold = fix_answer(entry["id"], docs, truth, scoring)[0] if truth else []
    gold_text = render_calls(gold_calls(entry, gold, category, literal_rules(scoring)), variant)
    turn = list(entry["question"][0])
    system = system_prompt(variant, docs)
    if turn and turn[0]["role"] == "system":
        system += "\n\n" + (turn[0].get("content") or "")
        turn = turn[1:]
    return Case(
        id=case_id(number, variant, entry["id"]),
        category=CATEGORY,
        system=system,
        messages=[Message(role=item["role"], content=item.get("content") or "") for item in turn],
        tools=[],
        max_rounds=1,
        harness_guidance=False,
        template=entry["id"],  # the 26 variants of an entry are one cluster for intervals
        metadata={
            "oracle_turns": 1,
            "oracle_text": gold_text,
            "bfcl": {
                "category": CATEGORY,
                "variant": variant.name,
                "source_id": entry["id"],
                "source_category": category,
                "functions": docs,
                "ground_truth": truth,
            },
        },
    )


# ---------------------------------------------------------------------------------------------
# judging


def judge_text(
    source_category: str,
    functions: list[dict[str, Any]],
    text: Any,
    ground_truth: list[dict[str, Any]] | None,
    variant: Variant,
    options: BfclOptions,
    *,
    entry_id: str | None = None,
    applied: list[str] | None = None,
) -> Check:
    """BFCL's verdict of one prompt-mode answer ``text`` to an entry asked in ``variant``."""
    if options.improved and ground_truth:
        ground_truth, fixes = fix_answer(entry_id, functions, ground_truth, options)
        if applied is not None:
            applied.extend(fixes)
    try:
        decoded = decode_text(text, variant, whole_json=options.on("json_whole_answer"))
    except TextDecodeError as exc:
        return Check.fail("ast_decoder:decoder_failed", f"Invalid syntax. Failed to decode AST. {exc}")
    if not is_call_list(decoded):
        return Check.fail(
            "ast_decoder:decoder_wrong_output_format", "Did not output in the specified format."
        )
    try:
        return judge_calls(source_category, functions, decoded, ground_truth or [], options)
    except Exception as exc:  # noqa: BLE001 - decoded text can hold any value; BFCL's checker crashes then
        return Check.fail("checker_crash:" + type(exc).__name__, f"BFCL's checker cannot judge this: {exc!r}")


def answer_of(trace: Trace, variant: Variant) -> tuple[Any, bool]:
    """(the answer text of the case's round, whether it was written from structured calls).

    The text as received comes first (prompt-mode providers keep it in ``raw_text`` beside the calls
    they read from it); a round with structured calls and no text as received (a model that called
    natively, e.g. with ``--recover-text-calls``) is written in the variant's return format, marked
    on the verdict; otherwise the round's text."""
    if not trace.rounds:
        return trace.final_text, False
    first = trace.rounds[0]
    if first.raw_text is not None:
        return first.raw_text, False
    calls = [call for call in trace.calls if call.round == first.index]
    if not calls:
        return first.text, False
    pairs = []
    for call in calls:
        arguments = call.arguments
        if arguments is None:
            return "\n".join(c.arguments_raw for c in calls), True  # unreadable arguments stay unreadable
        pairs.append((call.tool, arguments))
    return render_calls(pairs, variant), True


def score_format_case(case: Case, trace: Trace, options: BfclOptions, scorer: str = "bfcl") -> Verdict:
    """The ``bfcl`` verdict of a format-sensitivity case."""
    meta = case.metadata["bfcl"]
    variant = parse_variant(meta["variant"])
    text, rendered = answer_of(trace, variant)
    fixes: list[str] = []
    args = (meta["source_category"], meta["functions"], text, meta.get("ground_truth"), variant)
    chosen = judge_text(*args, options, entry_id=meta["source_id"], applied=fixes)
    details: dict[str, Any] = {
        "category": CATEGORY,
        "variant": variant.name,
        "source_id": meta["source_id"],
        "source_category": meta["source_category"],
        "passed": chosen.valid,
        "error_type": chosen.error_type,
        "written_from_calls": rendered,
        **options.describe(),
    }
    if options.improved:
        faithful = judge_text(*args, BfclOptions(underscore_to_dot=options.underscore_to_dot))
        details["answer_fixes"] = fixes
        details["faithful_passed"] = faithful.valid
        details["faithful_error_type"] = faithful.error_type
    return to_verdict(scorer, chosen, details)


# ---------------------------------------------------------------------------------------------
# figures: accuracy per variant, the spread across variants


def format_figures(rows: Iterable[tuple[str, str, bool]]) -> dict[str, Any] | None:
    """Per-variant accuracy with 95% intervals and the spread across variants, from
    (variant name, source entry id, passed) rows; None without rows.

    The spread is BFCL's: the largest minus the smallest variant accuracy (``max_delta``) and the
    sample standard deviation of the variant accuracies (``std``), as fractions. Their intervals
    resample source entries (each with all its variants), so they reflect the sampling of the 200
    entries; with fewer than two variants there is no spread."""
    table: dict[str, dict[str, bool]] = defaultdict(dict)
    for variant, entry_id, passed in rows:
        table[variant][entry_id] = passed
    if not table:
        return None
    order = {variant.name: index for index, variant in enumerate(VARIANTS)}
    names = sorted(table, key=lambda name: (order.get(name, len(order)), name))
    per: dict[str, dict[str, Any]] = {}
    for name in names:
        flags = table[name]
        records = [
            {"key": entry_id, "status": "completed", "verdicts": {"bfcl": {"passed": passed}}}
            for entry_id, passed in flags.items()
        ]
        interval = accuracy_interval(records, "bfcl")
        per[name] = {
            "accuracy": interval.estimate,
            "correct_count": sum(flags.values()),
            "total_count": len(flags),
            "interval": interval.as_dict(),
        }
    accuracies = [per[name]["accuracy"] for name in names]
    out: dict[str, Any] = {"variants": per, "n_variants": len(names), "missing_variants": []}
    out["missing_variants"] = [variant.name for variant in VARIANTS if variant.name not in per]
    if len(names) > 1:
        out["max_delta"] = max(accuracies) - min(accuracies)
        out["std"] = statistics.stdev(accuracies)
        out["variance"] = statistics.variance(accuracies)
        out["best"], out["worst"] = (
            names[accuracies.index(max(accuracies))],
            names[accuracies.index(min(accuracies))],
        )
        out.update(_spread_intervals(table, names))
    return out


def _spread_intervals(table: dict[str, dict[str, bool]], names: list[str]) -> dict[str, Any]:
    """Percentile intervals of max_delta and std, resampling source entries with all their variants
    (entries missing from a variant count as absent there)."""
    import numpy as np  # on first use, as the core's bootstrap does

    entries = sorted({entry for name in names for entry in table[name]})
    if len(entries) < 2:
        return {}
    passes = np.array([[table[name].get(entry, False) for name in names] for entry in entries], dtype=float)
    present = np.array([[entry in table[name] for name in names] for entry in entries], dtype=float)
    rng = np.random.default_rng(DEFAULT_SEED)
    draws = rng.integers(0, len(entries), size=(SPREAD_RESAMPLES, len(entries)))
    counts = present[draws].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = passes[draws].sum(axis=1) / counts
    accuracy = accuracy[~np.isnan(accuracy).any(axis=1)]
    if accuracy.size == 0:
        return {}
    deltas = accuracy.max(axis=1) - accuracy.min(axis=1)
    spreads = accuracy.std(axis=1, ddof=1)
    return {
        "max_delta_interval": _percentile_interval(deltas),
        "std_interval": _percentile_interval(spreads),
    }


def _percentile_interval(values: Any) -> dict[str, Any]:
    import numpy as np

    low, high = np.percentile(values, [2.5, 97.5])
    return {"low": float(low), "high": float(high), "method": "entry-bootstrap"}


def _percent(value: float | None) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value * 100:.1f}%"


def format_table(figures: dict[str, Any], mode: str) -> Table:
    """The display table of :func:`format_figures`: one row per variant, the spread in the notes."""
    rows = []
    for name, item in figures["variants"].items():
        try:
            label = parse_variant(name).short
        except UserError:
            label = name
        interval = item["interval"]
        rows.append(
            [
                label,
                f"{item['correct_count']}/{item['total_count']}",
                _percent(item["accuracy"]),
                f"[{_percent(interval['low'])}, {_percent(interval['high'])}]",
            ]
        )
    notes = [f"checker: {mode}; variant = return format[+<TOOLCALL> tag]/function-doc format"]
    if "max_delta" in figures:
        delta, std = figures["max_delta"], figures["std"]
        text = f"spread across {figures['n_variants']} variants: max - min {_percent(delta)}"
        if "max_delta_interval" in figures:
            low, high = figures["max_delta_interval"]["low"], figures["max_delta_interval"]["high"]
            text += f" [{_percent(low)}, {_percent(high)}]"
        text += f", SD {_percent(std)}"
        if "std_interval" in figures:
            text += (
                f" [{_percent(figures['std_interval']['low'])}, {_percent(figures['std_interval']['high'])}]"
            )
        notes.append(text + " (intervals: 95%, resampling entries)")
        notes.append(
            f"best {parse_variant(figures['best']).short}, worst {parse_variant(figures['worst']).short}"
        )
    if figures.get("missing_variants"):
        notes.append(
            f"incomplete: {len(figures['missing_variants'])} of {len(VARIANTS)} variants not in the run"
        )
    return Table(
        title="bfcl format sensitivity: accuracy per prompt format",
        columns=["variant", "correct", "accuracy", "95% interval"],
        rows=rows,
        align=["left", "right", "right", "right"],
        notes=notes,
    )
