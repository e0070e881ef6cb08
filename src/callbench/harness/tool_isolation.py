"""Which isolation each live MCP tool source of a run gets (:mod:`callbench.mcp.isolation`).

The first of these that says anything decides, per suite: ``--tools-isolation`` (the run's option),
the suite's ``tool_source.isolation`` (``suite.yaml``), the suite's executor (``mcp-git``'s cases each
work on a repository of their own, so it says ``run``), and last the tool listing: ``case`` unless
every tool says ``readOnlyHint: true``. The choice is handed to the executor
(:meth:`~callbench.executors.mcp.McpExecutor.isolate`, which refuses what the server cannot do with
one line) and recorded in ``run.json`` (``options.tool_isolation``: source, suites, isolation, what
decided it and why).
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from callbench.errors import ConfigError
from callbench.harness.config import RunConfig
from callbench.suites.loader import TOOL_SOURCE_DECLARATION
from callbench.suites.suite import Suite

if TYPE_CHECKING:  # imported when a run has a live MCP tool source, as is the MCP client
    from callbench.mcp.isolation import IsolationChoice, ToolSourceDeclaration

CHOICE_KEY = "tool_isolation"
"""Where a suite's :class:`IsolationChoice` is kept in ``Suite.metadata`` (and the ``run.json``
options key of the records)."""


def apply_isolation(config: RunConfig, suites: list[Suite]) -> list[Suite]:
    """Decide and set the isolation of every suite's live MCP tool server; returns ``suites``.

    ``--tools-isolation`` in a run without a live MCP tool source is one line, as is an isolation the
    server cannot honour (``case`` for an HTTP server without a reset hook)."""
    mcp = sys.modules.get("callbench.executors.mcp")  # an McpExecutor exists only once it is imported
    found = False
    for suite in suites:
        executor = config.executor if config.executor is not None else suite.executor
        if mcp is None or not isinstance(executor, mcp.McpExecutor):
            continue
        from callbench.mcp.isolation import ToolSourceDeclaration

        found = True
        declared = suite.metadata.get(TOOL_SOURCE_DECLARATION)
        declaration = declared if isinstance(declared, ToolSourceDeclaration) else ToolSourceDeclaration()
        choice = _choose(config, declaration, executor, suite)
        executor.isolate(choice)
        suite.metadata[CHOICE_KEY] = choice.to_json(executor.spec.text, [suite.name])
        _warn(choice, executor, suite, config)
    if config.tools_isolation is not None and not found:
        raise ConfigError(
            f"--tools-isolation {config.tools_isolation}: applies to live MCP tool servers (--tools mcp:..., "
            "or a suite whose tools run on one, such as mcp-git); this run has none"
        )
    return suites


def _choose(
    config: RunConfig, declaration: ToolSourceDeclaration, executor: Any, suite: Suite
) -> IsolationChoice:
    from callbench.mcp.isolation import IsolationChoice, default_isolation, parse_isolation

    reset = declaration.reset
    if config.tools_isolation is not None:
        isolation = parse_isolation(config.tools_isolation, "--tools-isolation")
        return IsolationChoice(isolation, "option", "--tools-isolation", reset)
    if declaration.isolation is not None:
        return IsolationChoice(declaration.isolation, "suite", "the suite's tool_source.isolation", reset)
    if executor.declared_isolation is not None:
        why = executor.declared_isolation_why or f"declared by the {executor.name!r} executor"
        return IsolationChoice(executor.declared_isolation, "executor", why, reset)
    registry = suite.registry
    listed, why = default_isolation((name, registry.get(name).read_only) for name in registry.names())
    return IsolationChoice(listed, "default", why, reset)


def _warn(choice: IsolationChoice, executor: Any, suite: Suite, config: RunConfig) -> None:
    from callbench.mcp.isolation import IsolationWarning, default_isolation

    where = f"MCP server {executor.spec.text!r} (suite {suite.name!r})"
    if choice.isolation == "run" and choice.by in ("option", "suite"):
        registry = suite.registry
        isolation, why = default_isolation((name, registry.get(name).read_only) for name in registry.names())
        if isolation == "case":
            warnings.warn(
                IsolationWarning(
                    f"{where} runs with isolation run: one server for the whole run, though {why}; what one "
                    "case changes, the cases after it see"
                ),
                stacklevel=3,
            )
    if choice.isolation == "case" and executor.spec.kind == "http" and config.concurrency > 1:
        warnings.warn(
            IsolationWarning(
                f"{where}: with isolation case an HTTP server serves one case at a time (its reset hook "
                f"makes it clean for that case only), so --concurrency {config.concurrency} only adds waiting"
            ),
            stacklevel=3,
        )


def isolation_records(suites: list[Suite]) -> list[dict[str, Any]]:
    """``run.json``'s ``options.tool_isolation``: one entry per tool source and choice, with its suites."""
    entries: dict[tuple[Any, ...], dict[str, Any]] = {}
    for suite in suites:
        entry = suite.metadata.get(CHOICE_KEY)
        if not isinstance(entry, dict):
            continue
        key = (entry["source"], entry["isolation"], entry["by"], entry["why"])
        if key in entries:
            entries[key]["suites"] += entry["suites"]
        else:
            entries[key] = {**entry, "suites": list(entry["suites"])}
    return list(entries.values())


ORDER_NOTE = "verdicts may depend on order"
"""What ``show`` and the report say of a ``shared`` tool source: what one case (or run) left on the
server, the next one saw."""


def isolation_entries(options: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``tool_isolation`` entries of a run's ``run.json`` options (none before it was recorded)."""
    entries = options.get(CHOICE_KEY)
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []


def isolation_line(entry: Mapping[str, Any]) -> str:
    """One tool source's isolation, as ``show`` and the report print it."""
    suites = ", ".join(str(s) for s in entry.get("suites") or ()) or "–"
    line = f"isolation {entry.get('isolation')} of {entry.get('source')} ({suites}; {entry.get('why')})"
    if entry.get("isolation") == "shared":
        line += f": {ORDER_NOTE} (one server for every case, as its command says)"
    return line
