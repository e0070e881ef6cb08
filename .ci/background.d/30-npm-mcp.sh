#!/usr/bin/env bash
# npm packages the tests drive: the reference memory MCP server, a stateful tool source for the
# isolation tests (tests/mcp/test_isolation.py), bench/mcp_overhead.py and the mcp-memory suite
# (tests/benchmarks/mcp_memory; its pin, callbench.benchmarks.mcp_memory.server.VERSION, must be the
# version below). Installed once under the
# test cache (CALLBENCH_NPM_PREFIX, default ~/.cache/callbench-test-npm); Node and npm come from
# Debian when the image lacks them (waiting for the dpkg lock 10-debian.sh may hold).
set -euo pipefail
prefix="${CALLBENCH_NPM_PREFIX:-$HOME/.cache/callbench-test-npm}"
package="@modelcontextprotocol/server-memory"
version="2026.8.31"
installed="$prefix/node_modules/$package/package.json"
if [ -f "$installed" ] && grep -q "\"version\": \"$version\"" "$installed"; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
mkdir -p "$prefix"
npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "$package@$version" >/dev/null
