#!/usr/bin/env bash
# git for the mcp-git suite (tests/benchmarks/mcp_git): the reference git MCP server drives it.
set -euo pipefail
if ! command -v git >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends git >/dev/null
fi
