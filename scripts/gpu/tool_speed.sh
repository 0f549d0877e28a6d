#!/usr/bin/env bash
# Issue 6 on a GPU machine: autotune GPU tests, then the tool-speed benchmark (tilecc vs
# Triton: cold / warm-cache first calls, warm launch overhead, a cProfile of the launch).
# Run from the repository root with PYTHONPATH set so tilecc imports, and $OUT set.  ~2 min.
set -uo pipefail
OUT=${OUT:-gpu-results}
mkdir -p "$OUT"
export TILECC_CACHE_DIR=$(mktemp -d)
python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_autotune.py tests/test_cache.py 2>&1 \
    | tee "$OUT/tool_speed_tests.log" | tail -15
timeout 240 python3 benchmarks/bench_tool_speed.py --profile 2>&1 | tee "$OUT/bench_tool_speed.txt"
rm -rf "$TILECC_CACHE_DIR"
