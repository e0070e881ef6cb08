"""Load-time checks of a suite's cases against the argument DSL and the tools' schemas.

A case whose expectation no call could ever meet (a misspelt marker such as ``{$anyy: true}``, an
argument key the tool's strict schema forbids such as ``citty``) would otherwise load silently and
fail every model, the ``oracle`` included. Every suite is checked when it is built
(:class:`~callbench.suites.suite.Suite` calls :func:`check_suite`), so path suites, built-in packs
and suites built in code get the same rule; the first problem stops loading with one line naming
the file (and line, for path suites), the case, the step and the key.

What is checked, per expected step and for every tool the step accepts (``tool: [a, b]`` means a
call of either must be able to meet the expectation, so a key must suit each):

* markers: a ``$``-key is one of ``$any``, ``$default``, ``$one_of``, ``$ref``, ``$pattern`` unless
  the schema declares a property of that name; one marker per object, with only ``example`` beside
  ``$any``/``$pattern`` and any literal keys beside ``$one_of`` (they constrain the same object);
  ``$one_of`` holds a non-empty list, ``$pattern`` a valid regular expression;
* keys: at every object level (top-level arguments, nested objects, array items, ``$one_of``
  alternatives, ``$default`` values) a key must be one the tool's effective schema (strictified
  when the contract is strict) accepts: a declared property, a ``patternProperties`` match, or any
  key where the schema allows additional properties. Schema ``$ref``s to ``#/$defs/...`` are
  followed and ``anyOf``/``oneOf``/``allOf`` branches pooled;
* contracts: ``alternative_keys`` and ``equivalent_to`` key maps name declared parameters, and an
  equivalent tool named in a key map exists in the suite's registry.

``$ref`` values are not descended into (they name an earlier step's result, checked by the case
model), but one naming a call-only step is refused: that call is never executed, so the reference
could never resolve. Call-only steps are checked like any other: the call is still made and
schema-checked.
"""

from __future__ import annotations

import re
from typing import Any

from callbench.errors import SuiteError
from callbench.tools.registry import ToolRegistry
from callbench.types.case import DSL_KEYS, REF_PATTERN, Case, iter_dsl
from callbench.types.contract import ToolContract
from callbench.types.dsl import path_tokens
from callbench.types.names import did_you_mean

_COMPANIONS = {"$any": {"example"}, "$pattern": {"example"}, "$default": set(), "$ref": set()}
_ANY = object()
"""A schema position that accepts any key (no schema, or additional properties allowed)."""


Context = tuple[str, Any, dict[str, Any]]
"""One tool a step accepts, seen at one position: (tool name, schema there, root schema)."""


def check_suite(source: str, cases: list[Case], registry: ToolRegistry) -> None:
    """Raise ``SuiteError`` at the first case or contract that cannot be met (see the module doc)."""
    checked: set[int] = set()
    for case in cases:
        where = f"{case.origin or source}: case {case.id!r}"
        inline = {t.name: t for t in case.inline_contracts()}
        problem = _ref_problem(case, inline, registry)
        if problem:
            raise SuiteError(f"{where}: {problem}")
        for step in case.expected:
            contracts = [c for c in (inline.get(n) or registry.find(n) for n in step.tools) if c is not None]
            if not contracts:
                continue  # unknown tools are reported by the loaders with their own wording
            for contract in contracts:
                if id(contract) not in checked:
                    checked.add(id(contract))
                    _check_contract(contract, inline, registry, source)
            problem = _value_problem(step.arguments, [_context(c) for c in contracts], "")
            if problem:
                raise SuiteError(f"{where}: step {step.id!r}: {problem}")


def _ref_problem(case: Case, inline: dict[str, ToolContract], registry: ToolRegistry) -> str | None:
    """The first ``$ref`` of ``case`` that can never resolve: one naming a call-only step (that call is
    never executed), or a path that none of the named step's tools' declared result schemas has (a
    typo such as ``lookup_sku.skuu``; a tool without a result schema accepts any path)."""
    steps = {step.id: step for step in case.expected}
    for step in case.expected:
        for marker in iter_dsl(step.arguments):
            match = REF_PATTERN.match(str(marker.get("$ref", "")))
            target = steps.get(match.group("step")) if match else None
            if match is None or target is None:
                continue
            if target.call_only:
                return (
                    f"step {step.id!r}: $ref {marker['$ref']!r} names call-only step "
                    f"{target.id!r}, whose call is never executed, so it can never resolve"
                )
            if match.group("path") and not _some_result_has(
                target.tools, match.group("path"), inline, registry
            ):
                return (
                    f"step {step.id!r}: $ref {marker['$ref']!r}: the result schema of "
                    f"{' / '.join(target.tools)} has no {match.group('path')!r}, so the "
                    "reference can never resolve"
                )
    return None


def _some_result_has(
    tools: list[str], path: str, inline: dict[str, ToolContract], registry: ToolRegistry
) -> bool:
    tokens = path_tokens(path)
    for name in tools:
        contract = inline.get(name) or registry.find(name)
        schema = contract.result_schema if contract is not None else None
        if schema is None or _schema_has_path(schema, tokens):
            return True
    return False


def _schema_has_path(schema: Any, tokens: list[str], root: Any = None) -> bool:
    """Whether a value valid under ``schema`` may have the path ``tokens`` (a shape the schema does not
    pin down: yes). ``root`` resolves local ``$ref``s."""
    root = schema if root is None else root
    for position, token in enumerate(tokens):
        schema = _resolve(schema, root)
        if not isinstance(schema, dict):
            return True
        branches = [*(schema.get("anyOf") or []), *(schema.get("oneOf") or []), *(schema.get("allOf") or [])]
        if branches:
            return any(_schema_has_path(branch, tokens[position:], root) for branch in branches)
        if token.startswith("[") or token.isdigit():
            if "items" not in schema:
                return schema.get("type") in (None, "array")
            schema = schema["items"]
            continue
        properties = schema.get("properties")
        if isinstance(properties, dict) and token in properties:
            schema = properties[token]
            continue
        # an undeclared key: only where the schema forbids other keys or the value is no object
        return schema.get("additionalProperties") is not False and schema.get("type") in (None, "object")
    return True


def _context(contract: ToolContract) -> Context:
    schema = contract.provider_schema()
    return contract.name, schema, schema


def _value_problem(value: Any, contexts: list[Context], path: str) -> str | None:
    """The first problem of an expected value seen by every tool of the step (None: fine)."""
    if isinstance(value, list):
        for index, item in enumerate(value):
            items = [(tool, _item_schema(schema, index, root), root) for tool, schema, root in contexts]
            problem = _value_problem(item, items, f"{path}[{index}]")
            if problem:
                return problem
        return None
    if not isinstance(value, dict):
        return None
    keys = [(ctx, _object_keys(ctx[1], ctx[2])) for ctx in contexts]
    declared = {k for _ctx, (props, _open, _pat) in keys for k in props}
    dollar = [k for k in value if isinstance(k, str) and k.startswith("$") and k not in declared]
    unknown = [k for k in dollar if k not in DSL_KEYS]
    if unknown:
        return (
            f"argument {_at(path)}: unknown DSL marker {unknown[0]!r}"
            f"{did_you_mean(unknown[0], DSL_KEYS)} (markers: {', '.join(DSL_KEYS)})"
        )
    markers = [k for k in dollar if k != "$one_of"]
    if markers:
        return _marker_problem(value, markers, contexts, path)
    if "$one_of" in value:
        problem = _one_of_problem(value["$one_of"], contexts, path)
        if problem:
            return problem
    for key, sub in value.items():
        if key == "$one_of":
            continue
        sub_path = f"{path}.{key}" if path else str(key)
        inner: list[Context] = []
        for (tool, _schema, root), (props, open_keys, patterns) in keys:
            if key not in props and open_keys is not _ANY and not any(p.search(str(key)) for p in patterns):
                what = "a parameter of" if not path else "allowed by the schema of"
                return f"argument key {sub_path!r} is not {what} {tool}{did_you_mean(str(key), props)}"
            inner.append((tool, props.get(key, open_keys if isinstance(open_keys, dict) else None), root))
        problem = _value_problem(sub, inner, sub_path)
        if problem:
            return problem
    return None


def _one_of_problem(options: Any, contexts: list[Context], path: str) -> str | None:
    """Each alternative must suit at least one of the step's tools (a misspelt key would make it
    dead), and each tool must be able to meet at least one alternative."""
    if not isinstance(options, list) or not options:
        return f"argument {_at(path)}: $one_of must hold a non-empty list of alternatives"
    met: set[str] = set()
    for index, option in enumerate(options, start=1):
        first: str | None = None
        for ctx in contexts:
            problem = _value_problem(option, [ctx], path)
            if problem is None:
                met.add(ctx[0])
            first = first or problem
        if first is not None and not any(_value_problem(option, [c], path) is None for c in contexts):
            return f"{first} (in $one_of alternative {index})"
    unmet = [tool for tool, _schema, _root in contexts if tool not in met]
    if unmet:
        return f"argument {_at(path)}: no $one_of alternative suits {unmet[0]}"
    return None


def _marker_problem(
    value: dict[str, Any], markers: list[str], contexts: list[Context], path: str
) -> str | None:
    if len(markers) > 1 or "$one_of" in value:
        both = sorted({*markers, *(["$one_of"] if "$one_of" in value else [])})
        return f"argument {_at(path)}: one marker per value, got {' and '.join(both)}"
    marker = markers[0]
    extra = sorted(set(value) - {marker} - _COMPANIONS[marker])
    if extra:
        allowed = " (only 'example' may sit beside it)" if _COMPANIONS[marker] else ""
        return f"argument {_at(path)}: {marker} takes no other key, got {extra[0]!r}{allowed}"
    if marker == "$pattern":
        try:
            re.compile(str(value["$pattern"]))
        except re.error as exc:
            return f"argument {_at(path)}: $pattern {value['$pattern']!r} is not a regular expression: {exc}"
    if marker == "$default":
        return _value_problem(value["$default"], contexts, path)
    return None


def _at(path: str) -> str:
    return repr(path) if path else "object"


def _resolve(schema: Any, root: dict[str, Any], depth: int = 0) -> Any:
    """Follow a local JSON Schema ``$ref`` (``#/$defs/X``); anything else as is."""
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and depth < 32:
        target: Any = root
        for part in schema["$ref"].removeprefix("#").strip("/").split("/"):
            if not part:
                continue
            key = part.replace("~1", "/").replace("~0", "~")
            target = target.get(key) if isinstance(target, dict) else None
        if target is None:
            return None
        schema, depth = target, depth + 1
    return schema


def _branches(schema: Any, root: dict[str, Any]) -> list[dict[str, Any]]:
    """The schema and its ``anyOf``/``oneOf``/``allOf`` branches (resolved), flattened."""
    schema = _resolve(schema, root)
    if not isinstance(schema, dict):
        return []
    out = [schema]
    for key in ("anyOf", "oneOf", "allOf"):
        for branch in schema.get(key) or []:
            out.extend(_branches(branch, root))
    return out


def _object_keys(schema: Any, root: dict[str, Any]) -> tuple[dict[str, Any], Any, list[re.Pattern[str]]]:
    """(declared properties, what unlisted keys get: ``_ANY``/a schema/None, property patterns)."""
    branches = _branches(schema, root)
    if not branches:
        return {}, _ANY, []
    props: dict[str, Any] = {}
    patterns: list[re.Pattern[str]] = []
    open_keys: Any = None
    readable = False
    for branch in branches:
        for key, sub in (branch.get("properties") or {}).items():
            props.setdefault(key, sub)
        for pattern in branch.get("patternProperties") or {}:
            try:
                patterns.append(re.compile(pattern))
            except re.error:
                continue
        extra = branch.get("additionalProperties")
        object_like = "properties" in branch or branch.get("type") == "object"
        readable = readable or object_like or extra is not None or "patternProperties" in branch
        if extra is True or (extra is None and object_like):  # JSON Schema's default: open
            open_keys = _ANY
        elif isinstance(extra, dict) and open_keys is not _ANY:
            open_keys = extra
        # A branch with neither (``{required: [...]}`` under anyOf) only constrains: no effect here.
    if not readable:
        open_keys = _ANY  # not an object schema whose keys can be read
    return props, open_keys, patterns


def _item_schema(schema: Any, index: int, root: dict[str, Any]) -> Any:
    for branch in _branches(schema, root):
        prefix = branch.get("prefixItems")
        if isinstance(prefix, list) and index < len(prefix):
            return prefix[index]
        if "items" in branch:
            return branch["items"]
    return None


def _check_contract(
    contract: ToolContract, inline: dict[str, ToolContract], registry: ToolRegistry, source: str
) -> None:
    """``alternative_keys`` and ``equivalent_to`` key maps must name parameters that exist."""
    params = set(contract.parameters.get("properties") or {})
    where = f"{contract.metadata.get('source') or source}: tool {contract.name!r}"
    for key in contract.alternative_keys:
        # The alternatives themselves may be undeclared spellings (the CodeXomics import lists the
        # original matcher's aliases; a call using one fails the schema check): only the key they
        # stand in for must be a parameter.
        if params and key not in params:
            raise SuiteError(
                f"{where}: alternative_keys lists {key!r}, which is not a parameter"
                f"{did_you_mean(key, params)}"
            )
    for eq in contract.equivalences():
        if not eq.keys:
            continue
        other = inline.get(eq.tool) or registry.find(eq.tool)
        if other is None:
            raise SuiteError(
                f"{where}: equivalent_to maps keys to {eq.tool!r}, which is not in the registry"
                f"{did_you_mean(eq.tool, registry.names())}"
            )
        theirs = set(other.parameters.get("properties") or {})
        for mine, their in eq.keys.items():
            if params and mine not in params:
                raise SuiteError(
                    f"{where}: equivalent_to {eq.tool!r} maps {mine!r}, which is not a parameter"
                )
            if theirs and their not in theirs:
                raise SuiteError(
                    f"{where}: equivalent_to {eq.tool!r} maps {mine!r} to {their!r}, "
                    f"which is not a parameter of {eq.tool}"
                )
