#!/usr/bin/env bash
# The main job: transpile the vector-add example, print its CUDA, and run it — on the GPU
# where there is one, else on the NumPy interpreter.  Sets up what is missing first.
#   bash scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python examples/vector_add.py
