#!/usr/bin/env bash
# Random kernels on the GPU: RANDOM_KERNELS programs (default 2000) compiled, interpreted
# and launched, then RANDOM_KERNELS / 10 products of transposed operands (--transposed);
# the counts and failing programs go to $OUT/random_kernels.  Run from the repository root
# with PYTHONPATH (and OUT) set, as scripts/gpu_check.sh does.
set -uo pipefail
OUT=${OUT:-gpu-results}
mkdir -p "$OUT"
n=${RANDOM_KERNELS:-2000}
python3 scripts/gpu/random_kernels.py -n "$n" --out "$OUT" 2>&1 \
    | tee "$OUT/random_kernels.log" | tail -20
status=${PIPESTATUS[0]}
python3 scripts/gpu/random_kernels.py -n $((n / 10)) --start 5000 --transposed --out "$OUT" 2>&1 \
    | tee "$OUT/random_kernels_transposed.log" | tail -8
[ "$status" = 0 ] && exit "${PIPESTATUS[0]}"
exit "$status"
