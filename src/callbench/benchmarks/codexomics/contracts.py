"""CodeXomics YAML tool contracts -> callbench ``ToolContract`` mappings.

Loading is tolerant: a file that is not strict YAML is repaired when the only fault is the
upstream ``\\'`` inside a single-quoted scalar (reported as a warning); any other broken file is
reported and skipped, never raised.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from callbench.benchmarks.codexomics.rules import (
    COMPLETION_KEY_ALTERNATIVES,
    EQUIVALENT_TOOLS,
    FOLLOW_UPS,
    KEY_ALIASES,
    ImportProblem,
    camel_key,
    is_read_only,
    snake_key,
)
from callbench.benchmarks.codexomics.schema import sanitize_parameters
from callbench.types.contract import NAME_PATTERN

CATEGORY_FILE = "tool_categories.yaml"
# libyaml's loader is ~20x faster on the ~200 contracts; same safe semantics.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _safe_load(text: str) -> Any:
    return yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader


@dataclass
class RawTool:
    """One parsed YAML contract and where it came from (registry-relative POSIX path)."""

    path: str
    data: dict[str, Any]


def load_registry_dir(root: Path, problems: list[ImportProblem]) -> dict[str, RawTool]:
    """Parse every ``*.yaml``/``*.yml`` contract under ``root`` (sorted; first definition wins)."""
    tools: dict[str, RawTool] = {}
    files = sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
    for path in files:
        rel = path.relative_to(root).as_posix()
        if path.name == CATEGORY_FILE:
            continue
        data = _parse_yaml(path, rel, problems)
        if data is None:
            continue
        name = data.get("name")
        if not isinstance(name, str) or not NAME_PATTERN.match(name):
            problems.append(ImportProblem(rel, "error", f"missing or invalid tool name {name!r}; skipped"))
            continue
        if name in tools:
            problems.append(
                ImportProblem(rel, "warning", f"duplicate tool {name!r}; {tools[name].path} kept")
            )
            continue
        tools[name] = RawTool(rel, data)
    return tools


def _parse_yaml(path: Path, rel: str, problems: list[ImportProblem]) -> dict[str, Any] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(ImportProblem(rel, "error", f"cannot read: {exc}; skipped"))
        return None
    try:
        data = _safe_load(text)
    except yaml.YAMLError as exc:
        data = _repair_quotes(text)
        if data is None:
            first = str(exc).splitlines()[0]
            problems.append(ImportProblem(rel, "error", f"not valid YAML ({first}); skipped"))
            return None
        problems.append(
            ImportProblem(
                rel, "warning", "not strict YAML (\\' inside a single-quoted scalar); read as '' (repaired)"
            )
        )
    if not isinstance(data, dict):
        problems.append(ImportProblem(rel, "error", "not a mapping; skipped"))
        return None
    return data


def _repair_quotes(text: str) -> dict[str, Any] | None:
    # Upstream writes 5\' inside '...'; YAML spells an embedded single quote as ''.
    if "\\'" not in text:
        return None
    try:
        data = _safe_load(text.replace("\\'", "''"))
    except yaml.YAMLError:
        return None
    return data if isinstance(data, dict) else None


def contract_mapping(raw: RawTool, problems: list[ImportProblem]) -> dict[str, Any]:
    """Build the callbench contract mapping (sanitised schema, no annotations yet)."""
    data = raw.data
    notes: list[str] = []
    if "parameters" not in data:
        notes.append("no parameters block; empty object schema used")
    parameters = sanitize_parameters(data.get("parameters", {}), notes)
    for note in notes:
        severity = "info" if "hoisted" in note else "warning"
        problems.append(ImportProblem(raw.path, severity, note))  # type: ignore[arg-type]
    raw_description = data.get("description")
    description = raw_description if isinstance(raw_description, str) else ""
    category = data.get("category") if isinstance(data.get("category"), str) else raw.path.split("/")[0]
    raw_keywords = data.get("keywords")
    keywords = (
        [str(k) for k in raw_keywords if isinstance(k, (str, int, float))]
        if isinstance(raw_keywords, list)
        else []
    )
    metadata = {
        "source": "codexomics",
        "source_file": raw.path,
        "version": data.get("version"),
        "priority": data.get("priority", 5),
        "subcategory": data.get("subcategory"),
        "aliases": _aliases(data),
    }
    return {
        "name": data["name"],
        "description": description.strip()[:1024],
        "category": category,
        "keywords": keywords,
        "parameters": parameters,
        # YAML may hold dates and other non-JSON scalars; metadata is written as JSON.
        "metadata": json.loads(
            json.dumps({k: v for k, v in metadata.items() if v not in (None, [], {})}, default=str)
        ),
    }


def _aliases(data: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for key in ("aliases", "legacy_aliases"):
        values = data.get(key)
        if isinstance(values, list):
            out.extend(str(v) for v in values if isinstance(v, str))
    return out


def annotate(contracts: dict[str, dict[str, Any]]) -> None:
    """Add ``read_only``, ``equivalent_to``, ``follow_up_of`` and ``alternative_keys`` in place."""
    for name, contract in contracts.items():
        contract["read_only"] = is_read_only(name)
        others = sorted(
            other
            for a, b in EQUIVALENT_TOOLS
            for this, other in ((a, b), (b, a))
            if this == name and other in contracts
        )
        contract["equivalent_to"] = [_equivalence(contract, other, contracts[other]) for other in others]
        contract["follow_up_of"] = [
            f for f in FOLLOW_UPS.get(name, ()) if (f if isinstance(f, str) else f["tool"]) in contracts
        ]
        contract["alternative_keys"] = alternative_keys(name, contract["parameters"])


def _equivalence(contract: dict[str, Any], name: str, other: dict[str, Any]) -> str | dict[str, Any]:
    """The equivalent tool, with the key mapping upstream's aliases imply (``sequence`` -> ``dna`` for
    translate_sequence/translate_dna): upstream accepts an aliased key, so the equivalent's natural
    call must not fail for its own parameter names."""
    mine = set(contract.get("parameters", {}).get("properties") or {})
    theirs = set(other.get("parameters", {}).get("properties") or {})
    keys = {}
    for key in sorted(mine - theirs):
        alias = next(
            (a for a in KEY_ALIASES.get(camel_key(key), ()) for a in _spellings(a) if a in theirs), None
        )
        if alias is not None:
            keys[key] = alias
    return {"tool": name, "keys": keys} if keys else name


def alternative_keys(tool: str, parameters: dict[str, Any]) -> dict[str, list[list[str]]]:
    """The original matcher's key equivalences for each declared key.

    Upstream compares keys in camelCase on both sides and accepts directional aliases whether or
    not the schema declares them (an undeclared one still fails the schema check). Each declared
    key therefore lists its other spelling, its aliases in both spellings, and the tool's
    completion-mode alternatives.
    """
    props = list((parameters.get("properties") or {}).keys())
    out: dict[str, list[list[str]]] = {}
    for prop in props:
        alts: list[list[str]] = [[k] for k in _spellings(camel_key(prop)) if k != prop]
        for alias in KEY_ALIASES.get(camel_key(prop), ()):
            alts += [[k] for k in _spellings(alias) if [k] not in alts and k != prop]
        for alt_set in COMPLETION_KEY_ALTERNATIVES.get(tool, {}).get(camel_key(prop), ()):
            for variant in ([camel_key(k) for k in alt_set], [snake_key(k) for k in alt_set]):
                if variant not in alts and variant != [prop]:
                    alts.append(variant)
        if alts:
            out[prop] = alts
    return out


def _spellings(camel: str) -> list[str]:
    return list(dict.fromkeys([camel, snake_key(camel)]))
