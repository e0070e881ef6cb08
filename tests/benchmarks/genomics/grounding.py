"""Check that a case's instruction really determines its expected arguments.

Every literal in the expected arguments must be stated in the instruction: strings verbatim
(case-insensitive; ``_`` may be written as a space), numbers as numerals or small number words,
booleans through a cue word of the right polarity for their key (show/hide, on/off, only, confirm...).
``$ref`` values come from earlier results, ``$any``/``$pattern`` accept any value, and ``$default``
must equal the schema default.
"""

from __future__ import annotations

import re
from typing import Any

from callbench.tools.registry import ToolRegistry
from callbench.types.case import Case

NUMBER_WORDS = {"zero": 0, "no": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "ten": 10}
SYMBOL_WORDS = {"-": ("minus", "reverse strand"), "+": ("plus", "forward strand")}
# Booleans: (cues for true, cues for false) per argument key; a value needs a cue of its own polarity.
VISIBILITY = (("show", " on", "display", "enable", "see"), ("hide", " off", "get rid", "disable"))
BOOLEAN_CUES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "visible": VISIBILITY,
    "auto_save": (("save",), ("don't save",)),
    "forced": (("without asking", "without confirm", "force"), ("ask me",)),
    "userOnly": (("just", "only", "myself"), ("all",)),
    "bothStrands": (("both strands",), ("strand only", "only the forward", "one strand")),
    "circular": (("circular",), ("linear",)),
    "commercialOnly": (("commercial",), ("any supplier",)),
    "confirm": (("confirm",), ("don't confirm",)),
    "includeScore": (("with scores", "scores filled"), ("no scores", "without scores")),
    "minimized": (("minimi",), ("restore",)),
    "expanded": (("expand",), ("collapse",)),
    "open": (("open",), ("close",)),
}
_NUM = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?|\d+(?:\.\d+)?")


def numbers_in(text: str) -> set[float]:
    """Numerals (commas as thousands separators allowed) and small number words."""
    plain = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    found = {float(m) for m in _NUM.findall(plain)}
    words = set(re.findall(r"[a-z]+", text.lower()))
    found |= {float(v) for w, v in NUMBER_WORDS.items() if w in words}
    return found


def ungrounded(case: Case, registry: ToolRegistry) -> list[str]:
    """Problems: expected literals the instruction does not supply (empty list = grounded)."""
    text = case.prompt_text()
    problems: list[str] = []
    for step in case.expected:
        schema = registry.get(step.tools[0]).parameters
        _check_object(step.arguments, schema, text, f"{step.id}", problems)
        if step.times > 1 and float(step.times) not in numbers_in(text):
            problems.append(f"{step.id}: times={step.times} not stated")
    return problems


def _check_object(
    expected: dict[str, Any], schema: dict[str, Any], text: str, path: str, problems: list[str]
) -> None:
    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    if "$one_of" in expected:
        options = []
        for alt in expected["$one_of"]:
            sub: list[str] = []
            _check_value(alt, schema, text, path, sub)
            options.append(sub)
        if all(options):
            problems.append(f"{path}: no $one_of alternative is grounded ({options[0][0]})")
    for key, value in expected.items():
        if key != "$one_of":
            _check_value(value, props.get(key, {}), text, f"{path}.{key}", problems)


def _check_value(value: Any, schema: dict[str, Any], text: str, path: str, problems: list[str]) -> None:
    if isinstance(value, dict):
        if "$ref" in value or "$any" in value or "$pattern" in value:
            return
        if "$default" in value:
            if schema.get("default") != value["$default"]:
                problems.append(
                    f"{path}: $default {value['$default']!r} is not the schema default "
                    f"{schema.get('default')!r}"
                )
            return
        _check_object(value, schema, text, path, problems)
    elif isinstance(value, list):
        item_schema = schema.get("items", {}) if isinstance(schema, dict) else {}
        for i, item in enumerate(value):
            _check_value(item, item_schema, text, f"{path}[{i}]", problems)
    elif isinstance(value, bool):
        key = path.rsplit(".", 1)[-1]
        true_cues, false_cues = BOOLEAN_CUES.get(key, ((), ()))
        if not any(cue in f" {text.lower()}" for cue in (true_cues if value else false_cues)):
            problems.append(f"{path}: boolean {value} has no cue word in the instruction")
    elif isinstance(value, (int, float)):
        if float(value) not in numbers_in(text):
            problems.append(f"{path}: number {value} is not stated")
    elif isinstance(value, str) and not _string_stated(value, text):
        problems.append(f"{path}: {value!r} is not stated")


def _string_stated(value: str, text: str) -> bool:
    lowered = text.lower()
    if value in SYMBOL_WORDS:
        return any(word in lowered for word in SYMBOL_WORDS[value])
    forms = {value.lower(), value.lower().replace("_", " ")}
    return any(form in lowered for form in forms)
