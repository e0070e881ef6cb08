#!/usr/bin/env bash
# Install callbench with its test dependencies, run every test-environment setup step
# (.ci/setup.d/*.sh: Chromium for the browser test, BFCL's checker venv, torch for the hf provider),
# then the static checks (scripts/check.sh: ruff, mypy, import contracts and cycles) and the whole test
# suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install -q -e '.[test]'
for step in .ci/setup.d/*.sh; do
  [ -e "$step" ] || continue
  echo "setup: $step"
  bash "$step"
done
bash scripts/check.sh
set +e
python -m pytest -p no:cacheprovider "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: failing" >&2
  exit 1
fi
exit "$status"
