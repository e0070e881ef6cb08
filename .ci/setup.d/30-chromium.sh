#!/usr/bin/env bash
# Debian's chromium for the report's real-browser test (tests/report/test_browser.py).
# Playwright drives it through executable_path; Playwright never downloads a browser here.
set -euo pipefail
if ! command -v chromium >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
fi
if ! python -c "import playwright" >/dev/null 2>&1; then
  python -m pip install -q "playwright>=1.40,<2"
fi
