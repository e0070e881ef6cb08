"""Improved mode: corrections of known defects in BFCL's possible answers, one switch each.

Faithful mode judges against the answers as shipped.  Improved mode applies the corrections
below before judging; each one only acts where its defect is present, is recorded on the
verdict (``answer_fixes``) and can be turned off on its own (see :class:`BfclOptions`).
The entries each correction touches in bfcl-eval 2026.3.23 are listed in docs/bfcl.md and
pinned by ``tests/benchmarks/bfcl/test_answer_fixes.py``.

* ``renamed_answer_params``: the answer names a parameter the doc lacks while the doc requires
  one the answer lacks (exactly one of each) - the answer's values move to the doc's name.
* ``undocumented_answer_params``: other answer parameters the doc does not define are dropped
  (a model cannot pass them: BFCL rejects any parameter outside the doc).
* ``empty_answer_lists``: an array parameter with an empty acceptable-value list (no value can
  match) accepts the empty array, which is what such answers mean.
* ``required_answer_values``: ``""`` ("may be omitted") is removed from the acceptable values of
  a parameter the doc requires, so a required string cannot be satisfied by ``""``; where that
  leaves no value, the value the entry's question states is used (:data:`QUESTION_VALUES`).
"""

from __future__ import annotations

from typing import Any

from callbench.benchmarks.bfcl.options import BfclOptions

QUESTION_VALUES: dict[str, dict[str, dict[str, list[Any]]]] = {
    # "...a one-way Economy class flight ticket from LA to New York...": the answer accepts only "".
    # The doc takes "the IATA airport code or the name of the city".
    "live_multiple_507-149-4": {
        "Flights_4_SearchOnewayFlight": {"origin_airport": ["LA", "LAX", "Los Angeles"]}
    },
}
"""Values stated by an entry's question for a required parameter whose answer has none."""

_ARRAY_TYPES = ("array", "tuple", "Array", "ArrayList")


def fix_answer(
    entry_id: str | None,
    functions: list[dict[str, Any]],
    ground_truth: list[dict[str, Any]],
    options: BfclOptions,
) -> tuple[list[dict[str, Any]], list[str]]:
    """The possible answer with the enabled corrections applied, and the names of those that acted."""
    if not options.improved or not ground_truth:
        return ground_truth, []
    docs = {doc.get("name"): doc for doc in functions}
    applied: list[str] = []
    fixed = []
    for call in ground_truth:
        name, params = next(iter(call.items()))
        doc = docs.get(name)
        if doc is None or not isinstance(params, dict):
            fixed.append(call)  # BFCL cannot judge this either (reported as a checker crash)
            continue
        fixed.append(
            {name: _fix_params(entry_id, name, doc.get("parameters") or {}, params, options, applied)}
        )
    return fixed, list(dict.fromkeys(applied))


def _fix_params(
    entry_id: str | None,
    name: str,
    spec: dict[str, Any],
    params: dict[str, list[Any]],
    options: BfclOptions,
    applied: list[str],
) -> dict[str, list[Any]]:
    properties = spec.get("properties") or {}
    required = [param for param in spec.get("required") or [] if param in properties]
    out = dict(params)
    if options.renamed_answer_params:
        strangers = [param for param in out if param not in properties]
        lacking = [param for param in required if param not in out]
        if len(strangers) == 1 and len(lacking) == 1:
            out[lacking[0]] = out.pop(strangers[0])
            applied.append("renamed_answer_params")
    if options.undocumented_answer_params:
        kept = {param: values for param, values in out.items() if param in properties}
        if len(kept) != len(out):
            out = kept
            applied.append("undocumented_answer_params")
    if options.empty_answer_lists:
        for param, values in out.items():
            if values == [] and properties.get(param, {}).get("type") in _ARRAY_TYPES:
                out[param] = [[]]
                applied.append("empty_answer_lists")
    if options.required_answer_values:
        for param in required:
            values = out.get(param) or []
            if "" not in values:
                continue
            real = [value for value in values if value != ""] or _stated(entry_id, name, param)
            if real:
                out[param] = real
                applied.append("required_answer_values")
    return out


def _stated(entry_id: str | None, name: str, param: str) -> list[Any]:
    return list(QUESTION_VALUES.get(entry_id or "", {}).get(name, {}).get(param, []))
