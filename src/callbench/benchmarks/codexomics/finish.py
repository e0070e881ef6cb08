"""Final touches on imported cases once every contract is known.

* Suite keys a contract lacks are added to that contract (typed from the values the suite
  expects) so that gold calls are schema-valid; each addition is reported.
* Keys a contract requires but a case does not name become "optional, any value" (a ``$one_of``
  of ``$any`` with an example and an omissible ``$default``): argument matching stays as upstream
  (the key is not checked), while the ``oracle`` sends the example and stays schema-valid.
* ``toggle_track`` track names accept the spellings the original treats as equal.
* Every ``$any``/``$pattern`` gets an ``example`` for built-in agents.
"""

from __future__ import annotations

from typing import Any

from callbench.benchmarks.codexomics.cases import CaseContext
from callbench.benchmarks.codexomics.examples import example_for_schema, fill_examples
from callbench.benchmarks.codexomics.rules import (
    TRACK_NAME_ALIASES,
    ImportProblem,
    normalize_key,
    track_canonical,
)
from callbench.benchmarks.codexomics.schema import infer_schema

ADDED_NOTE = (
    "Key expected by the CodeXomics suites but absent from the upstream contract (added by the importer)."
)


def add_missing_keys(
    contracts: dict[str, dict[str, Any]], ctx: CaseContext, problems: list[ImportProblem]
) -> None:
    """Declare suite keys that contracts lack, as optional properties typed from the expected values."""
    for tool, keys in sorted(ctx.missing_keys.items()):
        contract = contracts[tool]
        props = contract["parameters"].setdefault("properties", {})
        for key, values in sorted(keys.items()):
            if key in props:
                continue
            props[key] = {**infer_schema(values), "description": ADDED_NOTE}
            users = ", ".join(ctx.missing_users.get(tool, {}).get(key, []))
            problems.append(
                ImportProblem(
                    contract["metadata"].get("source_file", tool),
                    "warning",
                    f"parameter {key!r} missing from the contract (used by {users}); added as optional",
                )
            )
            contract["metadata"].setdefault("added_keys", []).append(key)


def finish_case(
    case: dict[str, Any], contracts: dict[str, dict[str, Any]], problems: list[ImportProblem]
) -> None:
    """Apply required-key completion, track-name spellings and examples to every step in place."""
    for step in case["expected"]:
        tools = [step["tool"]] if isinstance(step["tool"], str) else step["tool"]
        schema = contracts[tools[0]]["parameters"]
        where = f"{case['id']} step {step['id']}"
        if len(tools) == 1:
            _require_keys(step, schema, where, problems)
        if tools == ["toggle_track"]:
            step["arguments"] = _track_spellings(step["arguments"], schema)
        step["arguments"] = _fill(step["arguments"], tools, contracts)


def _require_keys(
    step: dict[str, Any], schema: dict[str, Any], where: str, problems: list[ImportProblem]
) -> None:
    args = step["arguments"]
    if "$one_of" in args:
        return  # alternatives name their own keys; adding one to all would over-constrain
    props = schema.get("properties", {})
    for key in schema.get("required", []) or []:
        if key in args:
            continue
        twin = next((k for k in args if normalize_key(k) == normalize_key(key)), None)
        if twin is not None:
            # Upstream compares keys case- and underscore-insensitively, so trackName is the
            # required track_name; use the spelling the schema requires.
            args[key] = args.pop(twin)
            problems.append(ImportProblem(where, "info", f"key {twin!r} renamed to the required {key!r}"))
            continue
        args[key] = optional_any(_example_for_required(key, props.get(key, {})))
        problems.append(
            ImportProblem(
                where,
                "info",
                f"contract requires {key!r}, the case does not name it: optional any value "
                "(example for built-in agents)",
            )
        )


def optional_any(example: Any) -> dict[str, Any]:
    """ "Any value, or absent": upstream's argument matcher ignores keys the case does not name
    (the schema check still demands required ones); the ``$any`` option carries the example the
    oracle sends."""
    return {"$one_of": [{"$any": True, "example": example}, {"$default": None}]}


def _example_for_required(key: str, schema: dict[str, Any]) -> Any:
    # The original harness runs with chromosome U00096 active; use it where a chromosome is due.
    if key.lower() == "chromosome" and schema.get("type", "string") == "string" and "enum" not in schema:
        return "U00096"
    return example_for_schema(schema)


def _track_spellings(args: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    out = dict(args)
    for key in ("track_name", "trackName"):
        value = out.get(key)
        if not isinstance(value, str):
            continue
        canonical = track_canonical(value)
        enum = schema.get("properties", {}).get(key, {}).get("enum") or []
        spellings = [value] + [e for e in enum if isinstance(e, str) and track_canonical(e) == canonical]
        spellings += [s for s in TRACK_NAME_ALIASES.get(canonical, ()) if not enum]
        unique = list(dict.fromkeys(spellings))
        if len(unique) > 1:
            out[key] = {"$one_of": unique}
    return out


def _fill(args: dict[str, Any], tools: list[str], contracts: dict[str, dict[str, Any]]) -> dict[str, Any]:
    if len(tools) == 1 or "$one_of" not in args:
        return fill_examples(args, contracts[tools[0]]["parameters"])
    # Alternative tools: each $one_of option is checked against the tool whose schema declares it.
    options = []
    for option in args["$one_of"]:
        owner = next(
            (
                t
                for t in tools
                if isinstance(option, dict)
                and set(option) <= set(contracts[t]["parameters"].get("properties", {}))
            ),
            tools[0],
        )
        options.append(fill_examples(option, contracts[owner]["parameters"]))
    rest = {k: v for k, v in args.items() if k != "$one_of"}
    return {**fill_examples(rest, contracts[tools[0]]["parameters"]), "$one_of": options}
