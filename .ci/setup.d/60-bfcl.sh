#!/usr/bin/env bash
# bfcl-eval's data files and multi-turn backends in the main environment, WITHOUT its dependencies
# (its full install pins numpy 1.26.4 and pulls torch; never downgrade us). Idempotent and quiet.
# Its reference-checker venv is built in the background (.ci/background.d/20-bfcl-venv.sh).
set -euo pipefail
source "$(dirname "$0")/../bfcl-version.sh"
PY="${PYTHON:-python}"
if ! "$PY" -m pip show -q bfcl-eval >/dev/null 2>&1; then
  "$PY" -m pip install -q --no-deps "bfcl-eval==$BFCL_VERSION" 2>&1 | {
    grep -v -e "^WARNING: Location" -e "dependency resolver does not currently" -e "^bfcl-eval .* requires " || true
  }
fi
