#!/usr/bin/env bash
# BFCL's reference checker in a venv of its own (run in the background while pip installs
# callbench): bfcl-eval with only the dependencies its checker import chain needs (no torch,
# sentence-transformers or faiss), used by tests/benchmarks/bfcl/test_agreement.py and
# bench/bfcl_checker.py through a subprocess. Cached under ~/.cache, keyed by version.
set -euo pipefail
source "$(dirname "$0")/../bfcl-version.sh"
PY="${PYTHON:-python}"
VENV="${CALLBENCH_BFCL_VENV:-$HOME/.cache/callbench-bfcl-venv-$BFCL_VERSION}"
if [ -f "$VENV/.callbench-ready" ]; then
  exit 0
fi
# The venv deliberately lacks torch/faiss/sentence-transformers, so pip's resolver notes are expected.
quiet() {
  "$@" 2>&1 | { grep -v -e "^WARNING: Location" -e "dependency resolver does not currently" \
    -e "^bfcl-eval .* requires " || true; }
}
rm -rf "$VENV"
"$PY" -m venv "$VENV"
quiet "$VENV/bin/pip" install -q --no-deps "bfcl-eval==$BFCL_VERSION"
# The checker imports every model handler, hence the provider SDKs; torch-based memory
# backends are never imported by single-turn or multi-turn evaluation.
quiet "$VENV/bin/pip" install -q \
  requests tqdm "numpy==1.26.4" pandas pydantic python-dotenv "tree_sitter==0.21.3" \
  "tree-sitter-java==0.21.0" "tree-sitter-javascript==0.21.4" openai "mistralai==1.7.0" anthropic \
  "cohere==5.18.0" typer tabulate "google-genai>=1.52.0" "mpmath==1.3.0" tenacity writer-sdk \
  overrides boto3 beautifulsoup4 html2text "rank_bm25==0.2.2" google-search-results "networkx==3.3" \
  "filelock==3.20.0" huggingface_hub "datamodel-code-generator==0.25.7" qwen-agent soundfile
ROOT_DIR="$(mktemp -d)"
OPENAI_API_KEY=unused BFCL_PROJECT_ROOT="$ROOT_DIR" \
  "$VENV/bin/python" -c "import bfcl_eval.eval_checker.eval_runner" >/dev/null
rm -rf "$ROOT_DIR"
touch "$VENV/.callbench-ready"
