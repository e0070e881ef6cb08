#!/usr/bin/env bash
# Playwright for the report's and review page's real-browser tests; it drives Debian's chromium
# (installed in the background by .ci/background.d/10-debian.sh) through executable_path and never
# downloads a browser here.
set -euo pipefail
if ! python -c "import playwright" >/dev/null 2>&1; then
  python -m pip install -q "playwright>=1.40,<2"
fi
