#!/usr/bin/env bash
# Random kernels on the GPU: RANDOM_KERNELS programs (default 2000) compiled, interpreted
# and launched, then RANDOM_KERNELS / 10 products of transposed operands (--transposed) and
# RANDOM_KERNELS / 2 programs of libraries' constructs (--wild, seeds from 100000) and
# RANDOM_KERNELS / 10 of block pointers moved in loops (block_ptr_loop, from 200000) and
# RANDOM_KERNELS / 10 K loops of tl.dot over blocks of pointers (dot_loop, from 300000) and
# RANDOM_KERNELS / 20 of them scaled by loads of the loop (scaled_dot_loop, from 310000) and
# RANDOM_KERNELS / 20 products of products (chained_dot, from 600000) and
# RANDOM_KERNELS / 20 loads read by two products, one through tl.trans (shared_operand,
# from 610000) and RANDOM_KERNELS / 20 loads met element by element by a loop's product
# (product_meets_load, from 620000) and RANDOM_KERNELS / 20 masked products cast into a
# product accumulating over the loop (masked_chain, from 630000) and RANDOM_KERNELS / 20
# batched blocks reshaped to and from a product's 2-D block (batched_block, from 640000);
# the counts and failing programs go to $OUT/random_kernels.  Run from the repository root
# with PYTHONPATH (and OUT) set, as scripts/gpu_check.sh does.
set -uo pipefail
OUT=${OUT:-gpu-results}
mkdir -p "$OUT"
n=${RANDOM_KERNELS:-2000}
status=0
run() {  # one campaign; the first failing one's exit status is the script's
    local log=$1; shift
    python3 scripts/gpu/random_kernels.py "$@" --out "$OUT" 2>&1 | tee "$OUT/$log" | tail -24
    local rc=${PIPESTATUS[0]}
    [ "$status" = 0 ] && status=$rc
}
run random_kernels.log -n "$n"
run random_kernels_transposed.log -n $((n / 10)) --start 5000 --transposed
run random_kernels_wild.log -n $((n / 2)) --start 100000 --wild
run random_kernels_block_ptr.log -n $((n / 10)) --start 200000 --features block_ptr_loop
run random_kernels_dot_loop.log -n $((n / 10)) --start 300000 --features dot_loop
run random_kernels_scaled_dot_loop.log -n $((n / 20)) --start 310000 --features scaled_dot_loop
run random_kernels_chained_dot.log -n $((n / 20)) --start 600000 --features chained_dot
run random_kernels_shared_operand.log -n $((n / 20)) --start 610000 --features shared_operand
run random_kernels_product_meets_load.log -n $((n / 20)) --start 620000 \
    --features product_meets_load
run random_kernels_masked_chain.log -n $((n / 20)) --start 630000 --features masked_chain
run random_kernels_batched_block.log -n $((n / 20)) --start 640000 --features batched_block
exit "$status"
