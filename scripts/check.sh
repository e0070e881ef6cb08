#!/usr/bin/env bash
# The static checks CI runs before the tests (scripts/test.sh calls this):
#   ruff (rules E, F, I, B, UP at the configured line length), mypy on the core packages and the
#   built-in benchmarks, import-linter's layer/independence/forbidden contracts (the benchmarks'
#   imports of the core go through callbench.plugin), and no import cycle between files.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "check: ruff"
python -m ruff check src tests bench scripts
echo "check: mypy (core packages and built-in benchmarks)"
python -m mypy
echo "check: import contracts"
# import-linter prints a banner; show only the verdict lines unless a contract is broken.
if contracts=$(lint-imports --no-cache 2>&1); then
  grep -E "KEPT|Contracts:" <<<"$contracts"
else
  echo "$contracts"
  exit 1
fi
echo "check: import cycles"
python scripts/import_cycles.py
