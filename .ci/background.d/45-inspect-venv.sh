#!/usr/bin/env bash
# inspect_ai in a venv of its own (run in the background while pip installs callbench): inspect_ai with
# its own dependencies (which include what `inspect view` serves with: fastapi, uvicorn) and nothing
# else, used by tests/interop/ through tests/interop/inspect_reference.py (inspect_ai's read_eval_log
# and write_eval_log) and `inspect view`, each in a subprocess. callbench itself does not need
# inspect_ai (its `inspect` extra is for users), so the ~300 MB stay out of the main test environment.
# Cached under ~/.cache, keyed by version.
set -euo pipefail
source "$(dirname "$0")/../inspect-version.sh"
PY="${PYTHON:-python}"
VENV="${CALLBENCH_INSPECT_VENV:-$HOME/.cache/callbench-inspect-venv-$INSPECT_VERSION}"
if [ -f "$VENV/.callbench-ready" ]; then
  exit 0
fi
rm -rf "$VENV"
"$PY" -m venv "$VENV"
# --no-compile: the import check below compiles what the tests import (the log API and the viewer's
# server), not the whole of inspect_ai and its dependencies.
"$VENV/bin/pip" install -q --no-compile "inspect_ai==$INSPECT_VERSION" 2>&1 | {
  grep -v -e "^WARNING: Location" || true
}
# The import check, which also writes the bytecode of what the tests import (hence
# PYTHONDONTWRITEBYTECODE unset): the log reader and writer, the classes the import tests build logs
# with, and `inspect view`'s command and server.
if ! check=$(env -u PYTHONDONTWRITEBYTECODE "$VENV/bin/python" -c \
  "import inspect_ai.log, inspect_ai.model, inspect_ai.scorer, inspect_ai.tool, inspect_ai._cli.main, inspect_ai._view.fastapi_server" 2>&1); then
  echo "inspect reference venv: the import check failed:" >&2
  tail -20 <<<"$check" >&2
  exit 1
fi
touch "$VENV/.callbench-ready"
