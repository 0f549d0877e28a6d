#!/usr/bin/env bash
# The whole test suite, after setting up whatever is missing (scripts/setup.sh).
#   bash scripts/test.sh                         everything, in parallel (one worker per core)
#   bash scripts/test.sh tests/test_blocks.py    one file (any pytest arguments pass through)
#   TILECC_TEST_WORKERS=0 bash scripts/test.sh   serially, in one process
# Each failure is named as it happens; the slowest tests are listed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m pytest -n "${TILECC_TEST_WORKERS:-auto}" -q -rfE \
    --durations=15 --durations-min=2 "$@"
