"""Let declared key spellings and aliases stand in for an expected key in every tier.

The original argument matcher compares keys in camelCase on both sides and looks a missing key up
under its directional aliases (``filename`` <-> ``filePath``, ``sequence`` -> ``dna`` ...) in all
three tiers. callbench's strict tiers compare keys exactly and apply ``alternative_keys`` only in
the completion tier. Where the contract declares such a twin key, the importer therefore writes
the choice into the case: ``{"filename": v}`` becomes
``{"$one_of": [{"filename": v}, {"filePath": v}]}``. Undeclared aliases are left out (a call using
one fails the schema check anyway), as are ``$default`` and optional keys, whose omission already
matches.
"""

from __future__ import annotations

from typing import Any

from callbench.benchmarks.codexomics.rules import KEY_ALIASES, ImportProblem, camel_key, normalize_key


def alias_case(
    case: dict[str, Any], contracts: dict[str, dict[str, Any]], problems: list[ImportProblem]
) -> None:
    """Rewrite every single-tool step's top-level keys that have declared twins (in place)."""
    for step in case["expected"]:
        if not isinstance(step["tool"], str) or "$one_of" in step["arguments"]:
            continue
        declared = list(contracts[step["tool"]]["parameters"].get("properties", {}))
        twins = {
            key: declared_twins(key, declared)
            for key in step["arguments"]
            if _is_plain_expectation(step["arguments"][key])
        }
        twins = {key: found for key, found in twins.items() if found}
        if not twins:
            continue
        step["arguments"] = _nest(step["arguments"], list(twins), twins)
        listed = ", ".join(f"{k} ~ {'/'.join(v)}" for k, v in twins.items())
        problems.append(
            ImportProblem(
                f"{case['id']} step {step['id']}",
                "info",
                f"declared key twins accepted in every tier: {listed}",
            )
        )


def declared_twins(key: str, declared: list[str]) -> list[str]:
    """Declared keys the original matcher would accept for ``key`` (other spellings, aliases)."""
    by_camel = {camel_key(k): k for k in declared}
    found = [k for k in declared if k != key and normalize_key(k) == normalize_key(key)]
    found += [
        by_camel[a] for a in KEY_ALIASES.get(camel_key(key), ()) if a in by_camel and by_camel[a] != key
    ]
    return list(dict.fromkeys(found))


def _is_plain_expectation(value: Any) -> bool:
    # $default and optional ("$one_of" with an omissible $default option) keys already match when absent.
    if not isinstance(value, dict):
        return True
    options = value.get("$one_of")
    omissible = isinstance(options, list) and any(isinstance(o, dict) and "$default" in o for o in options)
    return "$default" not in value and not omissible


def _nest(args: dict[str, Any], keys: list[str], twins: dict[str, list[str]]) -> dict[str, Any]:
    """One ``$one_of`` level per aliased key: the first option keeps the case's own spelling."""
    if not keys:
        return args
    key, rest = keys[0], keys[1:]
    value = args[key]
    siblings = {k: v for k, v in args.items() if k != key and k not in rest}
    inner = {k: args[k] for k in rest}
    options = [_nest({name: value, **inner}, rest, twins) for name in [key, *twins[key]]]
    return {**siblings, "$one_of": options}
