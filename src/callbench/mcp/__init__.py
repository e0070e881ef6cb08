"""The Model Context Protocol, through the official ``mcp`` SDK.

* :mod:`callbench.mcp.serve` serves one case's offered tools as an MCP server (streamable HTTP on
  127.0.0.1, one path per case session; or stdio), so an agent under test calls them like any tools;
* :mod:`callbench.mcp.client` connects to a live MCP server (stdio command or HTTP URL) to list and
  call its tools, for registries and executors backed by a real server.

This package sits just above :mod:`callbench.types`: it knows tool contracts, nothing of suites,
executors or the harness (those hand it callables).
"""
