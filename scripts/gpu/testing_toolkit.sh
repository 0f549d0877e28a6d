#!/usr/bin/env bash
# tilecc.testing on the GPU: the toolkit's own tests and the worked examples in
# examples/testing, with CuPy and torch arrays.  Run from the repository root with
# PYTHONPATH (and OUT) set, as scripts/gpu_check.sh does:  bash scripts/gpu_check.sh testing_toolkit
# --require-gpu turns "no GPU" into an error instead of silent skips; -p loads the plugin
# where tilecc is not pip-installed (the entry point has the same name: it loads once).
set -uo pipefail
OUT=${OUT:-gpu-results}
mkdir -p "$OUT"
python3 -c "import cupy, torch; print('cupy', cupy.__version__, 'torch', torch.__version__, \
'devices', cupy.cuda.runtime.getDeviceCount())"
# 1. the GPU tests (marked gpu), then everything with both backends (TILECC_TEST_BACKENDS)
python3 -m pytest -q -p no:cacheprovider -p tilecc.testing.pytest_plugin --require-gpu \
    --hypothesis-profile=tilecc-ci -rs -m gpu tests/test_testing_toolkit.py examples/testing \
    2>&1 | tee "$OUT/testing_toolkit_gpu.log" | tail -30
status=${PIPESTATUS[0]}
TILECC_TEST_BACKENDS=interpreter,gpu python3 -m pytest -q -p no:cacheprovider \
    -p tilecc.testing.pytest_plugin --require-gpu --hypothesis-profile=tilecc-ci -rs \
    tests/test_testing_toolkit.py examples/testing \
    2>&1 | tee "$OUT/testing_toolkit_all.log" | tail -30
status2=${PIPESTATUS[0]}
echo "testing_toolkit: gpu tests exit $status, all tests on interpreter+gpu exit $status2"
[ "$status" -eq 0 ] && [ "$status2" -eq 0 ]
