"""Make each imported gold call valid against its contract, reporting every change.

A handful of upstream cases expect arguments their own contract rejects (a value outside an
``enum``, a sequence shorter than ``minLength``, ``{}`` for a tool whose schema needs one of
several keys). Upstream such a case can never pass a strict tier. The importer keeps the case and
reconciles instead, each change reported as a warning:

* a root ``anyOf``/``oneOf`` of ``required`` sets that the expected keys do not satisfy gets a
  ``$one_of`` over those key sets plus ``{}`` (always matches, so scoring is unchanged; built-in
  agents send the first set and stay schema-valid);
* a literal expected value that violates ``enum``, ``minLength``/``maxLength``,
  ``minimum``/``maximum`` or ``pattern`` widens that constraint in the contract.
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator

from callbench.benchmarks.codexomics.examples import example_for_schema
from callbench.benchmarks.codexomics.rules import ImportProblem
from callbench.types.dsl import realize

RELAXABLE = ("enum", "minLength", "maxLength", "minimum", "maximum", "pattern", "const")


def reconcile_case(
    case: dict[str, Any], contracts: dict[str, dict[str, Any]], problems: list[ImportProblem]
) -> None:
    """Reconcile every single-tool step of ``case`` with its contract (in place, both sides)."""
    for step in case["expected"]:
        if not isinstance(step["tool"], str):
            continue
        contract = contracts[step["tool"]]
        where = f"{case['id']} step {step['id']}"
        _cover_required_sets(step, contract["parameters"], where, problems)
        _relax_constraints(step, contract, where, problems)


def _cover_required_sets(
    step: dict[str, Any], schema: dict[str, Any], where: str, problems: list[ImportProblem]
) -> None:
    branches = schema.get("anyOf") or schema.get("oneOf")
    if not isinstance(branches, list):
        return
    sets: list[list[str]] = [
        b["required"] for b in branches if isinstance(b, dict) and isinstance(b.get("required"), list)
    ]
    args = step["arguments"]
    if not sets or len(sets) != len(branches) or _covered(args, sets):
        return
    if "$one_of" in args:
        problems.append(
            ImportProblem(where, "warning", "an alternative of the case misses the contract's root anyOf")
        )
        return
    props = schema.get("properties", {})
    # The trailing {} keeps argument matching as upstream (the case names no key); the key-set
    # options in front are what built-in agents send, so their calls are schema-valid.
    args["$one_of"] = [
        {key: {"$any": True, "example": example_for_schema(props.get(key, {}))} for key in keys}
        for keys in sets
    ] + [{}]
    listed = " | ".join("+".join(keys) for keys in sets)
    problems.append(
        ImportProblem(
            where,
            "warning",
            f"contract needs one of [{listed}], the case names none: "
            "added as a hint for built-in agents (not scored)",
        )
    )


def _covered(args: dict[str, Any], sets: list[list[str]]) -> bool:
    """Whether every way of satisfying ``args`` names all keys of some required set."""
    siblings = {k for k in args if k != "$one_of"}
    options = args.get("$one_of")
    key_sets = (
        [siblings | set(o) for o in options if isinstance(o, dict)]
        if isinstance(options, list)
        else [siblings]
    )
    return bool(key_sets) and all(any(set(s) <= keys for s in sets) for keys in key_sets)


def _relax_constraints(
    step: dict[str, Any], contract: dict[str, Any], where: str, problems: list[ImportProblem]
) -> None:
    schema = contract["parameters"]
    gold = realize(step["arguments"], lambda ref: (False, None), schema)
    for error in Draft202012Validator(schema).iter_errors(gold):
        path = list(error.absolute_path)
        if error.validator not in RELAXABLE or not path or not _is_literal(step["arguments"], path):
            continue
        _relax(error.schema, str(error.validator), error.instance)
        dotted = ".".join(str(p) for p in path)
        problems.append(
            ImportProblem(
                where,
                "warning",
                f"expected {dotted}={error.instance!r} violates the contract's {error.validator} "
                f"({error.validator_value!r}); {contract['name']} contract widened",
            )
        )
        contract["metadata"].setdefault("widened", []).append(f"{dotted}:{error.validator}")


def _is_literal(arguments: Any, path: list[Any]) -> bool:
    node = arguments
    for part in path:
        if isinstance(node, dict) and isinstance(part, str) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
        else:
            return False
    return not (isinstance(node, dict) and any(k.startswith("$") for k in node))


def _relax(subschema: dict[str, Any], keyword: str, value: Any) -> None:
    if keyword == "enum":
        subschema["enum"] = [*subschema["enum"], value]
    elif keyword == "const":
        subschema["enum"] = [subschema.pop("const"), value]
    elif keyword == "minLength":
        subschema["minLength"] = len(value)
    elif keyword == "maxLength":
        subschema["maxLength"] = len(value)
    elif keyword == "minimum":
        subschema["minimum"] = value
    elif keyword == "maximum":
        subschema["maximum"] = value
    elif keyword == "pattern":
        del subschema["pattern"]
