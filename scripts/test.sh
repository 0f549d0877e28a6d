#!/usr/bin/env bash
# The whole test suite, after setting up whatever is missing (scripts/setup.sh).
#   bash scripts/test.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m pytest -q "$@"
