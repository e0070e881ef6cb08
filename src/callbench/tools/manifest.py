"""Manifest entries (:class:`~callbench.types.manifest.ToolSourceManifest`) of the two kinds of tool
source: a live MCP server (what ``initialize`` and ``tools/list`` said, the package its command
starts) and a suite's own registry (the hashes the registry already has)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from callbench.mcp.client import McpServerSpec, McpTool
from callbench.mcp.provenance import command_package
from callbench.tools.registry import ToolRegistry
from callbench.types.hashing import sha256_of
from callbench.types.manifest import ToolSourceManifest, mcp_tool_payload, tool_hashes


def mcp_manifest(
    spec: McpServerSpec,
    server: tuple[str | None, str | None, str | None],
    tools: Sequence[McpTool],
    suites: Iterable[str] = (),
) -> ToolSourceManifest:
    """The entry of the MCP server ``spec``: ``server`` is ``(name, version, protocol)`` from its
    handshake, ``tools`` its listing in the order it listed them."""
    name, version, protocol = server
    payloads = [
        mcp_tool_payload(
            t.name,
            t.description,
            t.input_schema,
            title=t.title,
            output_schema=t.output_schema,
            annotations=t.annotations,
        )
        for t in tools
    ]
    hashes, listing = tool_hashes(payloads)
    package = command_package(spec.command, dict(spec.env)) if spec.kind == "stdio" else None
    return ToolSourceManifest(
        kind="mcp",
        source=spec.text,
        suites=list(suites),
        server_name=name,
        server_version=version,
        protocol_version=protocol,
        package=package.name if package else None,
        package_version=package.version if package else None,
        package_via=package.via if package else None,
        tools=hashes,
        listing_hash=listing,
    )


def registry_manifest(
    suite: str,
    source: str,
    registry: ToolRegistry,
    *,
    package: str | None = None,
    package_version: str | None = None,
) -> ToolSourceManifest:
    """The entry of the suite ``suite``'s own registry (its ``suites`` left for the caller to fill): per
    tool the hash of its contract's ``hash_payload`` (the payload the registry hash is made of), and the
    registry hash itself as the listing's."""
    return ToolSourceManifest(
        kind="suite",
        source=source or suite,
        package=package,
        package_version=package_version if package else None,
        package_via="plugin" if package else None,
        tools={name: sha256_of(registry.get(name).hash_payload()) for name in sorted(registry.names())},
        listing_hash=registry.hash,
    )
