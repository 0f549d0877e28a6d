#!/usr/bin/env bash
# tl.dot on the GPU: its tests, the matmul example, and the GEMM benchmark against Triton
# and cuBLAS (BENCH_ARGS=--quick for the first two configurations only).
set -uo pipefail
python3 -m pytest -m gpu -q -p no:cacheprovider ${PYTEST_ARGS:-} tests/test_dot.py 2>&1 | tail -15
python3 examples/matmul.py | tail -1
python3 benchmarks/bench_matmul.py ${BENCH_ARGS:-}
