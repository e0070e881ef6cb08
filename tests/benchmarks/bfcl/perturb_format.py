"""Answers to format-sensitivity entries for the agreement test: the gold calls written in each
variant's return format, and systematic perturbations of them (wrong values, missing and extra
parameters, wrong names, extra or no calls, tags dropped or added, fences, another format, truncation,
format-specific literals such as arithmetic, unary plus, positional arguments, XML type names).

Rows: {"key": "<id>#<n>", "id": BFCL's format-sensitivity id, "result": text, "kind": perturbation,
"runner": whether this row is the one answer per id given to BFCL's format_sensitivity_runner}.
"""

from __future__ import annotations

import copy
import random
import re
from pathlib import Path
from typing import Any

from callbench.benchmarks.bfcl.format_calls import render_calls
from callbench.benchmarks.bfcl.format_prompts import TAG_CLOSE, TAG_OPEN, VARIANTS, Variant
from callbench.benchmarks.bfcl.format_sensitivity import case_id, source_entries
from callbench.benchmarks.bfcl.oracle import gold_calls

Calls = list[tuple[str, dict[str, Any]]]
OTHER_FORMAT = {
    "python": "json",
    "json": "python",
    "verbose_xml": "concise_xml",
    "concise_xml": "verbose_xml",
}


def _changed(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 7
    if isinstance(value, float):
        return value * 2 + 1
    if isinstance(value, str):
        return value + "_wrong"
    if isinstance(value, list):
        return [*reversed(value), "wrong"]
    return "wrong"


def _first_param(calls: Calls, kinds: tuple[type, ...] = (object,)) -> tuple[int, str] | None:
    """(call index, key) of the first argument of one of ``kinds`` (booleans only for ``object``)."""
    for index, (_, args) in enumerate(calls):
        for key, value in args.items():
            if isinstance(value, kinds) and (kinds == (object,) or not isinstance(value, bool)):
                return index, key
    return None


def _edit(calls: Calls, spot: tuple[int, str] | None, change) -> Calls | None:
    if spot is None:
        return None
    out = copy.deepcopy(calls)
    index, key = spot
    change(out[index][1], key)
    return out


def value_variants(calls: Calls) -> dict[str, Calls | None]:
    """Perturbed call lists (None where the perturbation does not apply)."""
    numbers = _first_param(calls, (int, float))
    out: dict[str, Calls | None] = {
        "wrong_value": _edit(
            calls, _first_param(calls), lambda args, key: args.__setitem__(key, _changed(args[key]))
        ),
        "missing_param": _edit(calls, _first_param(calls), lambda args, key: args.pop(key)),
        "extra_param": [(calls[0][0], {**calls[0][1], "unexpected_extra": "x"}), *calls[1:]]
        if calls
        else None,
        "wrong_name": [(calls[0][0] + "_x", calls[0][1]), *calls[1:]] if calls else None,
        "extra_call": [*calls, calls[0]] if calls else None,
        "int_float": _edit(calls, numbers, lambda args, key: args.__setitem__(key, float(args[key]))),
        "numeric_string": _edit(calls, numbers, lambda args, key: args.__setitem__(key, str(args[key]))),
        "reordered": list(reversed(calls)) if len(calls) > 1 else None,
    }
    return out


def _python_literal_tricks(calls: Calls, variant: Variant, text: str) -> dict[str, str]:
    """Python answers with arithmetic, a unary plus (BFCL negates it) and a positional argument."""
    out: dict[str, str] = {}
    spot = _first_param(calls, (int,))
    if spot is not None:
        index, key = spot
        value = calls[index][1][key]
        if not isinstance(value, bool):
            out["arithmetic"] = text.replace(f"{key}={value!r}", f"{key}={value - 1} + 1", 1)
            out["unary_plus"] = text.replace(f"{key}={value!r}", f"{key}=+{value}", 1)
    if calls and calls[0][1]:
        name = calls[0][0]
        first_key = next(iter(calls[0][1]))
        out["positional"] = text.replace(f"{name}({first_key}=", f"{name}(", 1)
    out["python_fence"] = f"```python\n{text}\n```"
    return out


def _xml_tricks(calls: Calls, text: str) -> dict[str, str]:
    """XML answers with a type name BFCL does not know, a capitalised boolean, JSON literals."""
    out: dict[str, str] = {}
    if 'type="float"' in text:
        out["xml_number_type"] = text.replace('type="float"', 'type="number"', 1)
    if 'type="integer"' in text:
        out["xml_int_as_string"] = text.replace('type="integer"', 'type="string"', 1)
    if 'type="boolean"' in text:
        out["xml_bool_case"] = re.sub(r"\btrue\b", "True", text, count=1)
    if "True" in text or "False" in text:
        out["xml_json_literals"] = text.replace("True", "true").replace("False", "false")
    out["xml_malformed"] = text.replace("</function>", "</functio>", 1)
    return out


def answers_for(calls: Calls, variant: Variant) -> dict[str, str]:
    """{perturbation kind: answer text} for one entry in one variant ("gold" first)."""
    gold = render_calls(calls, variant)
    out = {"gold": gold}
    for kind, changed in value_variants(calls).items():
        if changed is not None:
            out[kind] = render_calls(changed, variant)
    out["no_call"] = render_calls([], variant)
    out["free_text"] = "I cannot answer this with the given functions."
    if variant.tool_call_tag:
        out["tag_dropped"] = gold[len(TAG_OPEN) : -len(TAG_CLOSE)]
    else:
        out["tag_added"] = f"{TAG_OPEN}{gold}{TAG_CLOSE}"
    other = Variant(OTHER_FORMAT[variant.return_format], variant.tool_call_tag, variant.doc_format)
    out["other_format"] = render_calls(calls, other)
    out["truncated"] = gold[: max(1, len(gold) * 2 // 3)]
    out["prose_around"] = f"Sure, here you go:\n{gold}\nLet me know if you need more."
    if variant.return_format == "python":
        out.update(_python_literal_tricks(calls, variant, gold))
    elif variant.return_format == "json":
        out["json_unfenced"] = gold.replace("```json\n", "").replace("\n```", "")
        out["json_missing_key"] = gold.replace('"parameters"', '"arguments"', 1)
    else:
        out.update(_xml_tricks(calls, gold))
    return out


def build_outputs(
    folder: Path, stride: int = 5, seed: int = 7, always: tuple[str, ...] = ("simple_python_96",)
):
    """Rows for every ``stride``-th source entry (and the entries in ``always``), all 26 variants."""
    rng = random.Random(seed)
    rows = []
    for position, (category, entry, truth) in enumerate(source_entries(folder)):
        if position % stride and entry["id"] not in always:
            continue
        calls = gold_calls(entry, truth, category)
        for offset, variant in enumerate(VARIANTS):
            identifier = case_id(position * len(VARIANTS) + offset, variant, entry["id"])
            answers = list(answers_for(calls, variant).items())
            chosen = rng.randrange(len(answers))
            for number, (kind, text) in enumerate(answers):
                rows.append(
                    {
                        "key": f"{identifier}#{number}",
                        "id": identifier,
                        "result": text,
                        "kind": kind,
                        "runner": number == chosen,
                        "source": (category, entry["id"]),
                    }
                )
    return rows
