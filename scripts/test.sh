#!/usr/bin/env bash
# The whole test suite, after setting up whatever is missing (scripts/setup.sh).
#   bash scripts/test.sh                         everything, in parallel (one worker per core)
#   bash scripts/test.sh tests/test_blocks.py    one file (any pytest arguments pass through)
#   TILECC_TEST_WORKERS=0 bash scripts/test.sh   serially, in one process
# Each failure is named as it happens; the slowest tests are listed at the end.  The
# longest tests start first (RUN_FIRST in tests/conftest.py) and the workers take tests one
# at a time (--maxschedchunk 1), so that no long test is left running alone at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Compiled modules are kept (__pycache__, ignored by git) even where the environment says
# not to write them: both workers and the suite's hundreds of subprocesses then import
# tilecc, the tests and their dependencies compiled once, not each time from source.
unset PYTHONDONTWRITEBYTECODE
exec .venv/bin/python -m pytest -n "${TILECC_TEST_WORKERS:-auto}" --maxschedchunk 1 -q -rfE \
    --durations=15 --durations-min=2 "$@"
