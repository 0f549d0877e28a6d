#!/usr/bin/env bash
# Random kernels on the GPU: RANDOM_KERNELS programs (default 2000) compiled, interpreted
# and launched; the counts and failing programs go to $OUT/random_kernels.  Run from the
# repository root with PYTHONPATH (and OUT) set, as scripts/gpu_check.sh does.
set -uo pipefail
OUT=${OUT:-gpu-results}
mkdir -p "$OUT"
python3 scripts/gpu/random_kernels.py -n "${RANDOM_KERNELS:-2000}" --out "$OUT" 2>&1 \
    | tee "$OUT/random_kernels.log" | tail -20
exit "${PIPESTATUS[0]}"
