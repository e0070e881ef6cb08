"""The ``mcp-memory`` suite: 25 cases over the 9 tools of the reference memory MCP server.

The contracts come from the server's own listing, bundled in ``tools.json`` (so loading the suite
starts no process and needs no Node.js; a test checks the bundle still equals the pinned server's
listing) and made strict by :func:`callbench.tools.mcp_source.contracts_from_tools`, exactly as
``--tools mcp:...`` does. The suite declares isolation ``case`` and the reset hook that seeds each
case's graph, as a ``suite.yaml`` would (``tool_source``).
"""

from __future__ import annotations

import json
from pathlib import Path

from callbench.benchmarks.mcp_memory.executor import MemoryMcpExecutor
from callbench.benchmarks.mcp_memory.server import SEED_RESET, SERVER_TEXT, SUITE
from callbench.mcp.client import McpTool
from callbench.mcp.isolation import ToolSourceDeclaration
from callbench.plugin import DEFAULT_TIERS, ConfigError, Suite, SuiteOptions, ToolRegistry, read_cases
from callbench.suites.loader import TOOL_SOURCE_DECLARATION
from callbench.tools.mcp_source import contracts_from_tools

HERE = Path(__file__).parent
CASSETTES = HERE / "cassettes"
"""The shipped recordings: ``oracle/`` and ``noisy-1/`` (cassette folders for ``--replay``) and
``verdicts.json`` (the verdicts those runs gave, live and replayed alike)."""
SCORERS = [*DEFAULT_TIERS, "state-match"]
"""The three strict tiers plus the diagnostic state check (it reads the server's graph)."""
SYSTEM_PROMPT = (
    "You are an assistant with a long-term memory: a knowledge graph of entities (each with a name, an "
    "entity type and a list of observations) and of directed relations between them, read and changed "
    "through the supplied tools. Entity names are matched exactly. Use only the supplied tools and call "
    "them instead of describing calls. Ground every argument in the user request or in earlier tool "
    "results. When the request is complete, reply with a short final answer."
)


def bundled_tools() -> list[McpTool]:
    """The server's tool listing as bundled with the suite."""
    raw = json.loads((HERE / "tools.json").read_text(encoding="utf-8"))
    return [
        McpTool(
            name=item["name"],
            description=item["description"],
            input_schema=item["inputSchema"],
            annotations=item.get("annotations", {}),
            title=item.get("title"),
            output_schema=item.get("outputSchema"),
        )
        for item in raw
    ]


def load_registry() -> tuple[ToolRegistry, list[str]]:
    """The strict contracts of the bundled listing, and the notes on what was made strict."""
    return contracts_from_tools(SERVER_TEXT, bundled_tools())


def load_suite(spec: str, options: SuiteOptions) -> Suite:
    """Catalog loader of ``mcp-memory`` (takes no options; needs nothing installed to load)."""
    if spec:
        raise ConfigError(f"suite '{SUITE}' takes no options (got {spec!r})")
    registry, notes = load_registry()
    suite = Suite(
        name=SUITE,
        cases=read_cases(HERE / "cases.yaml"),
        registry=registry,
        executor=MemoryMcpExecutor(),
        scorers=list(SCORERS),
        system_prompt=SYSTEM_PROMPT,
        description=(
            "Knowledge-graph tasks on the live reference memory server (npm), one seeded server per case."
        ),
        source=f"callbench:{SUITE}",
        metadata={"schema_notes": notes, "server": SERVER_TEXT},
    )
    suite.metadata[TOOL_SOURCE_DECLARATION] = ToolSourceDeclaration(isolation="case", reset=SEED_RESET)
    return suite
