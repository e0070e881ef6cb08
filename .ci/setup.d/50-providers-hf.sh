#!/usr/bin/env bash
# torch (CPU) + transformers for the hf: provider tests (tests/providers/test_hf_local.py),
# which build a tiny random checkpoint locally. Idempotent and quiet.
set -euo pipefail
if ! python -c "import torch, transformers" >/dev/null 2>&1; then
  # torch 2.13.0 is the CPU build: a looser range can resolve to a multi-gigabyte CUDA build.
  python -m pip install -q "torch==2.13.0" "transformers>=4.45,<6"
fi
