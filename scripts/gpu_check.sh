#!/usr/bin/env bash
# On a GPU machine: the GPU test suite, compute-sanitizer and the benchmarks, in one go.
# Results go to $OUT (default ./gpu-results).  Wheels missing there (libcst) may be put in
# .whl/ beforehand; they are installed into a private target directory.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-results}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
if ls .whl/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD
else
    export PYTHONPATH=$PWD
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/device.txt"
step=${1:-all}
if [ "$step" = all ] || [ "$step" = tests ]; then
    for ex in examples/*.py; do python3 "$ex" | tail -1; done 2>&1 | tee "$OUT/examples.txt"
    python3 -m pytest -m gpu -q -p no:cacheprovider ${PYTEST_ARGS:-} tests 2>&1 | tee "$OUT/gpu_tests.log" | tail -25
fi
if [ "$step" = all ] || [ "$step" = sanitize ]; then
    compute-sanitizer --tool memcheck --error-exitcode 9 python3 scripts/sanitize_kernels.py \
        > "$OUT/sanitizer.log" 2>&1; echo "compute-sanitizer exit: $?" | tee -a "$OUT/sanitizer.log"
    tail -5 "$OUT/sanitizer.log"
    # shared-memory hazards: the barriers the renderer leaves out must not be needed
    compute-sanitizer --tool racecheck --error-exitcode 9 python3 scripts/sanitize_kernels.py \
        > "$OUT/racecheck.log" 2>&1; echo "racecheck exit: $?" | tee -a "$OUT/racecheck.log"
    tail -3 "$OUT/racecheck.log"
fi
if [ "$step" = all ] || [ "$step" = bench ]; then
    python3 benchmarks/bench_elementwise.py ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench_elementwise.txt"
    python3 benchmarks/bench_norms.py 2>&1 | tee "$OUT/bench_norms.txt"
fi
# Further steps, one script each (run from the repository root, with PYTHONPATH and OUT set):
#   bash scripts/gpu_check.sh NAME   runs scripts/gpu/NAME.sh;  "all" runs every one of them.
for extra in scripts/gpu/*.sh; do
    [ -e "$extra" ] || continue
    name=$(basename "$extra" .sh)
    if [ "$step" = all ] || [ "$step" = "$name" ]; then
        echo "== $name"; bash "$extra" 2>&1 | tee "$OUT/$name.txt" | tail -40
    fi
done
