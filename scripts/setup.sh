#!/usr/bin/env bash
# Set up everything tilecc's commands need on a fresh Debian machine: ROCm's hiprtc from
# Debian (for HIP compiles), a .venv with tilecc and its cuda, hip and dev extras.
#   bash scripts/setup.sh
# Idempotent: apt and pip run only when something is missing or pyproject.toml changed.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[setup] %s\n' "$*" >&2; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"
    elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"
    else log "need root (or sudo) to run: $*"; return 1
    fi
}

# --- system packages: ROCm hiprtc (inside libamdhip64 on ROCm 5.2), comgr, device libs
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'; }
venv_ok() { [ -x .venv/bin/python ] && .venv/bin/python -m pip --version >/dev/null 2>&1; }
missing=()
for pkg in hipcc libamdhip64-dev rocm-device-libs; do
    have_pkg "$pkg" || missing+=("$pkg")
done
venv_ok || have_pkg python3-venv || missing+=(python3-venv)
if [ ${#missing[@]} -gt 0 ]; then
    log "apt-get install ${missing[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- virtualenv + editable install with all extras (skipped when up to date)
if ! venv_ok; then
    log "creating .venv"
    rm -rf .venv
    python3 -m venv .venv
fi
stamp=.venv/.tilecc-install-stamp
want="$(sha256sum pyproject.toml | cut -d' ' -f1) $(.venv/bin/python -V 2>&1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ] ||
    ! .venv/bin/python -c 'import pytest, hypothesis, cupy, hip' 2>/dev/null; then
    log "pip install -e '.[dev,cuda,hip]'"
    .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev,cuda,hip]'
    printf '%s' "$want" >"$stamp"
fi
