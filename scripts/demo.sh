#!/usr/bin/env bash
# The main job: transpile the vector-add example, print its CUDA, and run it — on the GPU
# where there is one, else on the NumPy interpreter.  Sets up what is missing first: the
# demo's small set-up (tilecc, NVRTC, CuPy where there is a GPU; no ROCm, no test tools).
#   bash scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh demo
exec .venv/bin/python examples/vector_add.py
