#!/usr/bin/env bash
# Debian packages the tests drive (run in the background while pip installs callbench):
# chromium (+ a font) for the report and review browser tests, git for the mcp-git suite.
set -euo pipefail
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium fonts-dejavu-core)
command -v git >/dev/null 2>&1 || missing+=(git)
if [ "${#missing[@]}" -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
