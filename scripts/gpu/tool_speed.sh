#!/usr/bin/env bash
# On a GPU machine: the launch path's GPU tests (launches with CuPy and torch
# arguments, streams, empty grids, autotune, cache), then the tool-speed benchmark (tilecc
# vs Triton: cold / warm-cache first calls, warm launch overhead with the bars' verdicts,
# a cProfile of the launch).  Run from the repository root with PYTHONPATH set so tilecc
# imports, and $OUT set.  ~3 min.
set -uo pipefail
OUT=${OUT:-gpu-results}
mkdir -p "$OUT"
export TILECC_CACHE_DIR=$(mktemp -d)
python3 -m pytest -q -p no:cacheprovider tests/test_launch_path.py 2>&1 | tail -3
python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu.py tests/test_gpu_cases.py \
    tests/test_autotune.py tests/test_cache.py 2>&1 | tee "$OUT/tool_speed_tests.log" | tail -15
timeout 240 python3 benchmarks/bench_tool_speed.py --profile 2>&1 | tee "$OUT/bench_tool_speed.txt"
rm -rf "$TILECC_CACHE_DIR"
