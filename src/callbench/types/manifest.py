"""The manifest of what a run measured: one entry per tool source, in ``run.json``'s ``tool_sources``.

A tool source is a live MCP server (``--tools mcp:...``, or a suite whose executor is an MCP server,
such as ``mcp-git``) or a suite's own tool registry. Its entry names the server as its ``initialize``
answer did (name, version, protocol version), the package it was started from where that is known
(never guessed: ``None`` reads "unknown"), and one SHA-256 per tool plus one for the whole listing,
all of canonical JSON (:func:`callbench.types.hashing.sha256_of`), so they are the same in every
process and on every machine. A registry's hashes are the ones it already had
(:meth:`ToolContract.hash_payload`, ``ToolRegistry.hash``); an MCP tool's hash covers the tool as
the server listed it (see :func:`mcp_tool_payload`).

:func:`diff_manifests` compares two runs' manifests suite by suite: ``callbench compare`` warns
with it, ``callbench manifest diff`` prints it, and a resumed run whose manifest changed says so.
The command a server was started with is kept but not compared (a path differs between machines
without the server differing).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

from callbench.types.hashing import sha256_of

SHORT_HASH = 12
"""Hex digits shown of a hash (the report and ``show`` show the rest on demand)."""


class ToolSourceManifest(BaseModel):
    """One tool source of a run: what answered, which package it came from, and what it listed."""

    kind: Literal["mcp", "suite"]
    """``mcp``: a live MCP server; ``suite``: the suite's own tool registry (no server)."""
    source: str
    """The server spec (``stdio:COMMAND ARGS`` or an URL), or the suite's source (``callbench:starter``,
    a path)."""
    suites: list[str] = Field(default_factory=list)
    """The suites of the run whose tools came from this source."""
    server_name: str | None = None
    """``serverInfo.name`` from ``initialize`` (MCP only)."""
    server_version: str | None = None
    """``serverInfo.version`` from ``initialize`` (``None``: the server did not say)."""
    protocol_version: str | None = None
    """The negotiated MCP protocol version."""
    package: str | None = None
    """The package the server was started from (a Python distribution, an npm package) or the
    distribution that registered the suite; ``None``: unknown."""
    package_version: str | None = None
    """That package's version (``None``: unknown, e.g. ``npx -y pkg`` without a version)."""
    package_via: str | None = None
    """How the package was found: ``console script``, ``python -m``, ``npx``, ``uvx``, ``pipx``,
    ``plugin``."""
    tools: dict[str, str] = Field(default_factory=dict)
    """Tool name -> SHA-256 of its schema (in listed order)."""
    listing_hash: str = ""
    """SHA-256 of the whole listing (MCP: ``tools/list`` in the server's order; a suite: its registry
    hash)."""

    def server_label(self) -> str:
        """``name@version`` of the server (``unknown`` parts named), or the suite's source."""
        if self.kind != "mcp":
            return f"suite {self.source}"
        return f"{self.server_name or 'unknown'}@{self.server_version or 'unknown'}"

    def package_label(self) -> str:
        """``pkg==version (via)``, ``pkg (version unknown)`` or ``unknown``."""
        if not self.package:
            return "unknown"
        version = f"=={self.package_version}" if self.package_version else " (version unknown)"
        via = f" ({self.package_via})" if self.package_via else ""
        return f"{self.package}{version}{via}"

    def one_line(self) -> str:
        """What ``callbench show`` and the report print for the source."""
        parts = [self.server_label()]
        if self.kind == "mcp":
            parts.append(f"protocol {self.protocol_version or 'unknown'}")
        parts.append(f"package {self.package_label()}")
        parts.append(f"{len(self.tools)} tools")
        parts.append(f"listing {self.listing_hash[:SHORT_HASH]}")
        return ", ".join(parts)


def mcp_tool_payload(
    name: str,
    description: str,
    input_schema: Any,
    *,
    title: str | None = None,
    output_schema: Any = None,
    annotations: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The part of a listed MCP tool its hash covers, keyed as ``tools/list`` keys it."""
    return {
        "name": name,
        "title": title,
        "description": description,
        "inputSchema": input_schema,
        "outputSchema": output_schema,
        "annotations": dict(annotations or {}),
    }


def tool_hashes(payloads: Sequence[Mapping[str, Any]]) -> tuple[dict[str, str], str]:
    """Per tool (by its ``name``, in the given order) the SHA-256 of its payload, and the SHA-256 of
    the whole list in that order."""
    return {str(p["name"]): sha256_of(dict(p)) for p in payloads}, sha256_of([dict(p) for p in payloads])


# --- differences -------------------------------------------------------------------------------

_COMPARED = (
    ("kind", "kind"),
    ("server_name", "server name"),
    ("server_version", "server version"),
    ("protocol_version", "protocol"),
    ("package", "package"),
    ("package_version", "package version"),
)


@dataclass
class SourceDiff:
    """How one suite's tool source differs between run A and run B."""

    suite: str
    fields: list[tuple[str, str | None, str | None]] = field(default_factory=list)
    """(what, in A, in B) for each identity field that differs (``None``: unknown)."""
    added: list[str] = field(default_factory=list)
    """Tools B lists that A did not."""
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    """Tools both list whose schemas differ."""
    reordered: bool = False
    """The same tools, listed in another order (the listing hashes differ, no tool does)."""
    listing: tuple[str, str] = ("", "")

    def items(self) -> list[str]:
        """Each difference as a short phrase."""
        out = [f"{what} {_shown(a)} -> {_shown(b)}" for what, a, b in self.fields]
        if self.changed:
            out.append("tools changed: " + ", ".join(self.changed))
        if self.added:
            out.append("tools added: " + ", ".join(self.added))
        if self.removed:
            out.append("tools removed: " + ", ".join(self.removed))
        if self.reordered:
            out.append("the same tools in another order")
        return out

    def summary(self) -> str:
        """``suite 'x': server version 1.0 -> 2.0; tools changed: echo`` (one line)."""
        return f"suite {self.suite!r}: " + "; ".join(self.items())


@dataclass
class ManifestDiff:
    """Two runs' manifests compared suite by suite (suites in only one run listed apart)."""

    sources: list[SourceDiff] = field(default_factory=list)
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)

    @property
    def differs(self) -> bool:
        return bool(self.sources or self.only_a or self.only_b)

    def lines(self, label_a: str = "A", label_b: str = "B") -> list[str]:
        """The difference, one suite per block (what ``callbench manifest diff`` prints)."""
        out: list[str] = []
        for source in self.sources:
            out.append(f"suite {source.suite!r}:")
            out += [f"  {item}" for item in source.items()]
            a, b = source.listing
            out.append(f"  listing {a[:SHORT_HASH] or 'none'} -> {b[:SHORT_HASH] or 'none'}")
        if self.only_a:
            out.append(f"only in {label_a}: suites " + ", ".join(self.only_a))
        if self.only_b:
            out.append(f"only in {label_b}: suites " + ", ".join(self.only_b))
        return out


def by_suite(manifests: Sequence[ToolSourceManifest]) -> dict[str, ToolSourceManifest]:
    """Each suite's tool source."""
    return {suite: m for m in manifests for suite in m.suites}


def diff_sources(suite: str, a: ToolSourceManifest, b: ToolSourceManifest) -> SourceDiff | None:
    """How ``b`` differs from ``a`` (``None``: not at all)."""
    diff = SourceDiff(suite=suite, listing=(a.listing_hash, b.listing_hash))
    for key, what in _COMPARED:
        left, right = getattr(a, key), getattr(b, key)
        if left != right:
            diff.fields.append((what, left, right))
    diff.added = [name for name in b.tools if name not in a.tools]
    diff.removed = [name for name in a.tools if name not in b.tools]
    diff.changed = [name for name in a.tools if name in b.tools and a.tools[name] != b.tools[name]]
    if a.listing_hash != b.listing_hash and not (diff.added or diff.removed or diff.changed):
        diff.reordered = list(a.tools) != list(b.tools)
        if not diff.reordered:  # same tools, same order, other listing hash: another hashing of it
            diff.fields.append(("listing hash", a.listing_hash[:SHORT_HASH], b.listing_hash[:SHORT_HASH]))
    return diff if diff.items() else None


def diff_manifests(a: Sequence[ToolSourceManifest], b: Sequence[ToolSourceManifest]) -> ManifestDiff:
    """Run B's tool sources against run A's, suite by suite."""
    left, right = by_suite(a), by_suite(b)
    out = ManifestDiff(only_a=[s for s in left if s not in right], only_b=[s for s in right if s not in left])
    for suite, source in left.items():
        if suite in right:
            found = diff_sources(suite, source, right[suite])
            if found is not None:
                out.sources.append(found)
    return out


def _shown(value: str | None) -> str:
    return "unknown" if value is None or value == "" else value


class ToolSourcesChanged(UserWarning):
    """A resumed run's tool sources differ from those it started with."""

    one_line = True
    """The CLI prints it as one ``callbench: warning:`` line."""
