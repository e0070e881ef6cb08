#!/usr/bin/env bash
# Install callbench with its test dependencies, run every test-environment setup step
# (.ci/setup.d/*.sh, in name order: Chromium for the browser test, torch for the hf provider, BFCL last
# because its data package is installed without its dependencies and any pip install after it would
# print pip's resolver complaints about them),
# then the static checks (scripts/check.sh: ruff, mypy, import contracts and cycles) and the whole test
# suite. Extra arguments go to pytest.
# The suite runs in parallel (pytest-xdist): one worker per core unless CALLBENCH_TEST_WORKERS says
# otherwise (0 runs it serially in this process). Whole files go to one worker (--dist loadfile), so a
# module's shared fixtures and caches are built once, as in a serial run; they are handed out in
# collection order (--no-loadscope-reorder), where the tests of the fresh-venv fixture come last
# (tests/cli/conftest.py) so that its background build is done when they start.
set -euo pipefail
cd "$(dirname "$0")/.."
# bfcl-eval (installed by a setup step without its dependencies) makes every later pip install list
# its missing requirements: expected, so filtered (pip's own status still decides, through pipefail).
python -m pip install -q -e '.[test]' 2>&1 | {
  grep -v -e "^WARNING: Location" -e "dependency resolver does not currently" -e "^bfcl-eval .* requires " || true
}
for step in .ci/setup.d/*.sh; do
  [ -e "$step" ] || continue
  started=$SECONDS
  bash "$step"
  echo "setup: $step ($((SECONDS - started)) s)"
done
bash scripts/check.sh
set +e
python -m pytest -p no:cacheprovider -n "${CALLBENCH_TEST_WORKERS:-auto}" --dist loadfile \
  --no-loadscope-reorder "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: failing" >&2
  exit 1
fi
exit "$status"
