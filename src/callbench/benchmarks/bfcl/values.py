"""BFCL's value rules: string normalisation and list / dict / list-of-dict matching.

Behaviour reproduced from bfcl-eval 2026.3.23 (see docs/bfcl.md):
strings compare after removing spaces and ``, . / - _ * ^``, lower-casing and turning ``'``
into ``"``; lists keep their order and normalise only their *top-level* string items; dicts
reject unknown keys and require keys whose acceptable list lacks ``""``.
"""

from __future__ import annotations

import re
from typing import Any

from callbench.benchmarks.bfcl.options import Check

_STRIP = re.compile(r"[ \,\.\/\-\_\*\^]")


def normalise(text: str) -> str:
    """BFCL's string standardisation."""
    return _STRIP.sub("", text).lower().replace("'", '"')


def _norm_if_str(value: Any) -> Any:
    return normalise(value) if type(value) is str else value


def check_string(param: str, value: str, accepted: list[Any]) -> Check:
    """A string parameter must equal one acceptable string after normalisation."""
    wanted = [normalise(item) for item in accepted if type(item) is str]
    if normalise(value) in wanted:
        return Check.ok()
    return Check.fail(
        "value_error:string",
        f"Invalid value for parameter {param!r}: {value!r}. Expected one of {accepted}. Case insensitive.",
    )


def check_list(param: str, value: list[Any], accepted: list[Any]) -> Check:
    """A list must equal one acceptable list element by element, in order.

    Each acceptable entry is iterated as BFCL does, so an optional marker ``""`` behaves as
    an empty list and therefore accepts ``[]``.
    """
    mine = [_norm_if_str(item) for item in value]
    wanted = [[_norm_if_str(item) for item in candidate] for candidate in accepted]
    if mine in wanted:
        return Check.ok()
    return Check.fail(
        "value_error:list/tuple",
        f"Invalid value for parameter {param!r}: {value!r}. Expected one of {accepted}.",
    )


def check_dict(param: str, value: dict[str, Any], accepted: list[Any]) -> Check:
    """A dict must fit one acceptable dict: known keys, acceptable values, required keys present."""
    result = Check(False, "dict_checker:unclear")
    for candidate in accepted:
        if candidate == "":
            continue
        result = _dict_against(value, candidate)
        if result.valid:
            return result
    return result


def _dict_against(value: dict[str, Any], candidate: dict[str, Any]) -> Check:
    result = Check(False, "dict_checker:unclear")
    fits = True
    for key, item in value.items():
        if key not in candidate:
            result = Check.fail("value_error:dict_key", f"Unexpected dict key parameter: '{key}'.")
            fits = False
            break
        options = [_norm_if_str(option) for option in candidate[key]]
        if _norm_if_str(item) not in options:
            result = Check.fail(
                "value_error:dict_value",
                f"Invalid value for parameter {key!r}: {item!r}. Expected one of {options}.",
            )
            fits = False
            break
    # BFCL runs the missing-key scan even after a failure above; a missing key then
    # overrides the reported error type.
    for key, options in candidate.items():
        if key not in value and "" not in options:
            result.valid = False
            result.errors.append(f"Missing dict key parameter: '{key}'.")
            result.error_type = "value_error:dict_key"
            fits = False
            break
    return Check.ok() if fits else result


def check_list_of_dicts(param: str, value: list[Any], accepted: list[Any]) -> Check:
    """A list of dicts must match one acceptable list dict by dict, in order."""
    result = Check(False, "list_dict_checker:unclear")
    for candidate in accepted:
        if len(value) != len(candidate):
            result = Check.fail("value_error:list_dict_count", "Wrong number of dictionaries in the list.")
            continue
        fits = True
        for index, item in enumerate(value):
            result = check_dict(param, item, [candidate[index]])
            if not result.valid:
                fits = False
                break
        if fits:
            return Check.ok()
    return result
