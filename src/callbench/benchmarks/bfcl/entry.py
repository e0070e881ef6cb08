"""Entry-level BFCL judging: decoding FC results, category dispatch, parallel matching.

``judge_entry`` is the single entry point used by the scorer, the results importer, the
agreement test and the benchmark.  It takes what BFCL stores in an FC-mode result file
(``[{tool_name: "<JSON arguments>"}, ...]``, or free text when the model made no call).
"""

from __future__ import annotations

import json
from typing import Any

from callbench.benchmarks.bfcl.calls import check_call
from callbench.benchmarks.bfcl.fixes import fix_answer
from callbench.benchmarks.bfcl.literals import UnsupportedLiteralType
from callbench.benchmarks.bfcl.options import BfclOptions, Check, Language

RELEVANCE_CATEGORIES = ("irrelevance", "live_irrelevance", "live_relevance")


class DecodeError(Exception):
    """The stored result is not a list of ``{name: "<JSON>"}`` calls."""


def language_of(category: str) -> Language:
    """Source language BFCL assumes for a category."""
    if "javascript" in category:
        return "javascript"
    if "java" in category:
        return "java"
    return "python"


def is_relevance(category: str) -> bool:
    """Whether the category is judged only by the presence or absence of a call."""
    return "relevance" in category or "irrelevance" in category


def decode_fc(result: Any) -> list[Any]:
    """Decode an FC result the way BFCL's FC handlers do (names kept, arguments JSON-parsed)."""
    decoded = []
    try:
        for item in result:
            name = next(iter(item.keys()))
            decoded.append({name: json.loads(item[name])})
    except Exception as exc:  # BFCL reports any decoding failure the same way
        raise DecodeError(f"{type(exc).__name__}: {exc}") from exc
    return decoded


def is_call_list(decoded: Any) -> bool:
    """BFCL's format test: a list of one-key dicts whose value is a dict."""
    if type(decoded) is not list:
        return False
    return all(
        type(item) is dict and len(item) == 1 and type(next(iter(item.values()))) is dict for item in decoded
    )


def has_calls(decoded: Any) -> bool:
    """BFCL's relevance notion of "the output contains a function call"."""
    if not is_call_list(decoded) or len(decoded) == 0:
        return False
    return not (len(decoded) == 1 and len(decoded[0]) == 0)


def judge_entry(
    category: str,
    functions: list[dict[str, Any]],
    result: Any,
    ground_truth: list[dict[str, Any]] | None,
    options: BfclOptions,
    *,
    entry_id: str | None = None,
    applied: list[str] | None = None,
) -> Check:
    """Judge one stored BFCL result for a single-turn entry.

    Args:
        category: BFCL category name (e.g. ``simple_python``, ``live_parallel``).
        functions: The entry's function docs, as shipped (no language hints added).
        result: The FC-format result (list of ``{name: json_string}``) or free text.
        ground_truth: The possible answer's ``ground_truth`` (None for relevance categories).
        options: Faithful or improved settings.
        entry_id: The entry's id (improved mode: answer corrections stated per entry).
        applied: Improved mode: receives the names of the answer corrections that acted.

    Returns:
        The verdict with BFCL's ``error_type`` when it fails.
    """
    if is_relevance(category):
        return _judge_relevance(category, result)
    if options.improved and ground_truth:
        ground_truth, fixes = fix_answer(entry_id, functions, ground_truth, options)
        if applied is not None:
            applied.extend(fixes)
    try:
        decoded = decode_fc(result)
    except DecodeError as exc:
        return Check.fail("ast_decoder:decoder_failed", f"Invalid syntax. Failed to decode AST. {exc}")
    if not is_call_list(decoded):
        return Check.fail(
            "ast_decoder:decoder_wrong_output_format", "Did not output in the specified format."
        )
    try:
        return judge_calls(category, functions, decoded, ground_truth or [], options)
    except (UnsupportedLiteralType, KeyError, TypeError, AttributeError, IndexError) as exc:
        # BFCL itself crashes here; we score it as a failure and say why.
        return Check.fail("checker_crash:" + type(exc).__name__, f"BFCL's checker cannot judge this: {exc!r}")


def _judge_relevance(category: str, result: Any) -> Check:
    try:
        called = has_calls(decode_fc(result))
    except DecodeError:
        called = False
    if "irrelevance" in category:
        if called:
            return Check.fail(
                "irrelevance_error:decoder_success",
                "Valid syntax. Successfully decode AST when it should not.",
            )
        return Check.ok()
    if not called:
        return Check.fail(
            "relevance_error:decoder_failed", "Invalid syntax. Failed to decode AST when it should have."
        )
    return Check.ok()


def judge_calls(
    category: str,
    functions: list[dict[str, Any]],
    calls: list[dict[str, Any]],
    ground_truth: list[dict[str, Any]],
    options: BfclOptions,
) -> Check:
    """Dispatch decoded calls to BFCL's simple / multiple / parallel rules by category name."""
    language = language_of(category)
    if "parallel" in category:
        if len(calls) != len(ground_truth):
            return Check.fail("parallel_function_checker_no_order:wrong_count", "Wrong number of functions.")
        if options.improved and options.assignment_matching:
            return _parallel_assignment(functions, calls, ground_truth, language, options)
        return _parallel_greedy(functions, calls, ground_truth, language, options)
    if "multiple" in category:
        if len(calls) != len(ground_truth):
            return Check.fail("multiple_function_checker:wrong_count", "Wrong number of functions.")
        doc = find_doc(functions, next(iter(ground_truth[0])))
        return check_call(doc, calls[0], ground_truth[0], language, options)
    if len(calls) != 1:
        return Check.fail("simple_function_checker:wrong_count", "Wrong number of functions.")
    return check_call(functions[0], calls[0], ground_truth[0], language, options)


def find_doc(functions: list[dict[str, Any]], name: str) -> dict[str, Any]:
    """The doc of function ``name`` (BFCL crashes when the answer names an unknown function)."""
    for doc in functions:
        if doc["name"] == name:
            return doc
    raise KeyError(f"function {name!r} of the possible answer is not among the entry's functions")


def _parallel_greedy(functions, calls, ground_truth, language, options) -> Check:
    """BFCL's rule: each expected call takes the first still-unused model call that fits it."""
    used: set[int] = set()
    for position, answer in enumerate(ground_truth):
        doc = find_doc(functions, next(iter(answer)))
        found = False
        for index, call in enumerate(calls):
            if index in used:
                continue
            if check_call(doc, call, answer, language, options).valid:
                used.add(index)
                found = True
                break
        if not found:
            free = [index for index in range(len(calls)) if index not in used]
            return Check.fail(
                "parallel_function_checker_no_order:cannot_find_match",
                f"Could not find a matching function among index {free} of model output "
                f"for index {position} of possible answers.",
            )
    return Check.ok()


def _parallel_assignment(functions, calls, ground_truth, language, options) -> Check:
    """Improved rule: pass iff some one-to-one assignment of calls to expected calls fits."""
    fits: list[list[int]] = []
    for answer in ground_truth:
        doc = find_doc(functions, next(iter(answer)))
        fits.append(
            [
                index
                for index, call in enumerate(calls)
                if check_call(doc, call, answer, language, options).valid
            ]
        )
    owner: dict[int, int] = {}
    for position in range(len(ground_truth)):
        if not _augment(position, fits, owner, set()):
            return Check.fail(
                "parallel_function_checker_no_order:cannot_find_match",
                f"No assignment of model calls covers expected call {position}.",
            )
    return Check.ok()


def _augment(position: int, fits: list[list[int]], owner: dict[int, int], seen: set[int]) -> bool:
    """Kuhn's augmenting-path step for bipartite matching."""
    for index in fits[position]:
        if index in seen:
            continue
        seen.add(index)
        if index not in owner or _augment(owner[index], fits, owner, seen):
            owner[index] = position
            return True
    return False
