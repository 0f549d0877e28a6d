#!/usr/bin/env bash
# On a GPU machine: configure, build and run the C++ example (examples/cpp) that uses the
# headers `tilecc export` writes; it prints one line per check and PASS or FAIL.
# Run from the repository root with PYTHONPATH set so that `python3 -m tilecc` works, and
# OUT set (the exported headers and the logs are copied there).  Needs nvcc and cmake.
set -euo pipefail
OUT=${OUT:-gpu-results}
mkdir -p "$OUT"
ARCH=${CUDA_ARCH:-$( (nvidia-smi --query-gpu=compute_cap --format=csv,noheader || true) 2>/dev/null | head -1 | tr -d .)}
PY=${TILECC_PYTHON:-$(command -v python3)}
BUILD=$(mktemp -d /tmp/tilecc-export-example.XXXXXX)
trap 'rm -rf "$BUILD"' EXIT
echo "== configure (CMAKE_CUDA_ARCHITECTURES=${ARCH:-90})"
cmake -S examples/cpp -B "$BUILD" -DCMAKE_CUDA_ARCHITECTURES="${ARCH:-90}" \
      -DTILECC_PYTHON="$PY" > "$OUT/export_example_configure.log" 2>&1 \
  || { tail -30 "$OUT/export_example_configure.log"; exit 1; }
echo "== build"
cmake --build "$BUILD" -j 8 2>&1 | tee "$OUT/export_example_build.log" | grep -E "tilecc export|wrote|error|warning|Built" || true
[ -x "$BUILD/tilecc_example" ] || { tail -30 "$OUT/export_example_build.log"; exit 1; }
cp "$BUILD"/tilecc/*.cuh "$OUT"/
echo "== run"
"$BUILD/tilecc_example"
