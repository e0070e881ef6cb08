"""Tool contracts from a live MCP server's tool listing.

callbench's registry holds strict contracts: every object schema that lists ``properties`` forbids
other keys. Real servers often list looser schemas (no ``additionalProperties``, optional properties,
``$defs``, ``title``s, nullable ``anyOf``). :func:`contracts_from_tools` keeps each schema's meaning,
makes it strict where it can (``additionalProperties: false`` on objects that say nothing), and
returns one note per tool that was not strict as listed, saying what was done. A schema that is not
a valid JSON Schema (or whose root is not an object) is a one-line :class:`McpServerError` naming the
server and the tool: the run cannot offer that tool faithfully, so it does not start.

The executor that forwards calls to the server is in :mod:`callbench.executors.mcp` (the layer
above), with :func:`callbench.executors.mcp.load_mcp_tools`, the one call the run command makes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from callbench.errors import ContractError
from callbench.mcp.client import McpConnection, McpServerError, McpServerSpec, McpTool
from callbench.tools.manifest import mcp_manifest
from callbench.tools.registry import ToolRegistry
from callbench.tools.schema import check_result_schema, check_schema
from callbench.types.contract import NAME_PATTERN, ToolContract, strictify
from callbench.types.manifest import ToolSourceManifest

_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains")
_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")


@dataclass
class McpListing:
    """What a server offers, as callbench contracts."""

    spec: McpServerSpec
    registry: ToolRegistry
    notes: list[str] = field(default_factory=list)
    """One line per tool whose schema was not strict as listed: what was done about it."""
    manifest: ToolSourceManifest | None = None
    """What answered and what it listed, as ``run.json`` records it."""


async def fetch_listing(spec: McpServerSpec | str, **connection_options: Any) -> McpListing:
    """Connect to the server, list its tools and turn them into contracts (then disconnect)."""
    server = spec if isinstance(spec, McpServerSpec) else McpServerSpec.parse(spec)
    async with McpConnection(server, **connection_options) as connection:
        identity = connection.server_info()
        tools = await connection.list_tools()
    registry, notes = contracts_from_tools(server.text, tools)
    manifest = mcp_manifest(server, identity, tools)
    return McpListing(spec=server, registry=registry, notes=notes, manifest=manifest)


async def fetch_manifest(spec: McpServerSpec | str, **connection_options: Any) -> ToolSourceManifest:
    """Connect to the server and return its manifest entry only (for a suite that brings its own
    contracts but calls a live server, e.g. ``mcp-git``); no contract is made of the listing."""
    server = spec if isinstance(spec, McpServerSpec) else McpServerSpec.parse(spec)
    async with McpConnection(server, **connection_options) as connection:
        identity = connection.server_info()
        tools = await connection.list_tools()
    return mcp_manifest(server, identity, tools)


def contracts_from_tools(server: str, tools: Iterable[McpTool]) -> tuple[ToolRegistry, list[str]]:
    """A registry of strict contracts for ``tools`` and the notes on schemas that were not strict."""
    registry = ToolRegistry(source=f"mcp:{server}")
    notes: list[str] = []
    for tool in tools:
        contract, actions = contract_from_tool(server, tool)
        try:
            registry.add(contract, origin=f"MCP server {server!r}")
        except ContractError as exc:
            raise McpServerError(str(exc)) from None
        if actions:
            notes.append(f"MCP server {server!r}: tool {tool.name!r} is not strict: {'; '.join(actions)}")
    if not len(registry):
        raise McpServerError(f"MCP server {server!r}: lists no tools")
    return registry, notes


def contract_from_tool(server: str, tool: McpTool) -> tuple[ToolContract, list[str]]:
    """One tool's contract and the actions taken to make its schema strict."""
    where = f"MCP server {server!r}: tool {tool.name!r}"
    if not NAME_PATTERN.match(tool.name):
        raise McpServerError(f"{where}: the name does not match {NAME_PATTERN.pattern}")
    schema = tool.input_schema
    if not isinstance(schema, dict):
        raise McpServerError(f"{where}: invalid input schema: not a JSON object")
    problem = check_schema(schema)
    if problem:
        raise McpServerError(f"{where}: invalid input schema: {problem}")
    actions = strictness_actions(schema)
    result_schema, result_action = declared_result_schema(tool.output_schema)
    if result_action:
        actions.append(result_action)
    annotations = dict(tool.annotations)
    contract = ToolContract(
        name=tool.name,
        description=tool.description or (tool.title or ""),
        category="mcp",
        parameters=strictify(schema),
        read_only=bool(annotations.get("readOnlyHint", False)),
        result_schema=result_schema,
        metadata={"source": f"mcp:{server}", "mcp_annotations": annotations, "mcp_title": tool.title},
    )
    return contract, actions


def declared_result_schema(output_schema: Any) -> tuple[dict[str, Any] | None, str | None]:
    """The tool's ``outputSchema`` as its contract's result schema, and a note when it cannot be.

    Declared, it is what a case's ``$ref`` into this tool's result is checked against when the suite
    loads (``lookup_sku.sku`` where the schema has no ``sku`` stops the run before it starts). An
    output schema that is not a valid JSON Schema is dropped with a note rather than refusing the
    tool: the tool can still be offered faithfully, only that load-time check is lost. (The SDK
    checks every ``structuredContent`` against the declared schema; a reply that breaks it is the
    server's fault and becomes an error record, never the model's failed call.)"""
    if output_schema is None:
        return None, None
    if not isinstance(output_schema, dict):
        return None, "ignored its outputSchema (not a JSON object)"
    problem = check_result_schema(output_schema)
    if problem:
        return None, f"ignored its outputSchema ({problem})"
    return output_schema, None


def strictness_actions(schema: dict[str, Any]) -> list[str]:
    """What makes ``schema`` not strict, each with what callbench does about it (empty: strict)."""
    found: dict[str, list[str]] = {}

    def note(kind: str, where: str) -> None:
        found.setdefault(kind, [])
        if where not in found[kind]:
            found[kind].append(where)

    def walk(node: Any, where: str) -> None:
        if not isinstance(node, dict):
            return
        if node.get("type") == "object" or "properties" in node:
            props = node.get("properties") or {}
            if "additionalProperties" not in node:
                note("added additionalProperties: false", where)
            elif node["additionalProperties"] is not False and props:
                note("kept the additional properties the server allows", where)
            required = set(node.get("required") or ())
            optional = [name for name in props if name not in required]
            if optional:
                note("kept optional properties optional", ", ".join(f"{where}{n}" for n in optional))
        if "title" in node:
            note("kept 'title' (documentation only)", where)
        if "default" in node:
            note("kept 'default' (documentation only: callbench does not fill defaults in)", where)
        if node.get("anyOf") and any(isinstance(b, dict) and b.get("type") == "null" for b in node["anyOf"]):
            note("kept nullable values (anyOf with null)", where)
        if "$ref" in node:
            note("kept $ref (resolved by the validator)", where)
        for key in _SUBSCHEMA_MAPS:
            if isinstance(node.get(key), dict):
                for name, sub in node[key].items():
                    walk(sub, f"{where}{name}." if key == "properties" else f"{where}{key}.{name}.")
        for key in _SUBSCHEMA_ONE:
            if isinstance(node.get(key), dict):
                walk(node[key], f"{where}{key}.")
        for key in _SUBSCHEMA_LISTS:
            if isinstance(node.get(key), list):
                for index, sub in enumerate(node[key]):
                    walk(sub, f"{where}{key}[{index}].")

    walk(schema, "")
    return [f"{kind} ({_places(places)})" for kind, places in found.items()]


def _places(places: list[str]) -> str:
    cleaned = [p.rstrip(".") or "root" for p in places]
    shown = ", ".join(cleaned[:6])
    return shown + (f" and {len(cleaned) - 6} more" if len(cleaned) > 6 else "")
