#!/usr/bin/env bash
# Set up what tilecc's commands need on a fresh Debian machine.
#   bash scripts/setup.sh          everything the tests need (scripts/test.sh, .ci/run): ROCm's
#                                  hipcc and hiprtc from Debian (HIP compiles), a .venv with
#                                  tilecc and its cuda, hip and dev extras
#   bash scripts/setup.sh demo     what the demo needs (scripts/demo.sh): a .venv with tilecc
#                                  and NVRTC ('.[nvrtc]'), CuPy too ('.[cuda]') where there is
#                                  an NVIDIA GPU; no ROCm, no test tools
# Idempotent: apt and pip run only when something is missing or pyproject.toml changed; a
# full set-up serves the demo as well.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-full}
case "$mode" in full|demo) ;; *) echo "usage: bash scripts/setup.sh [full|demo]" >&2; exit 2;; esac

log() { printf '[setup] %s\n' "$*" >&2; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"
    elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"
    else log "need root (or sudo) to run: $*"; return 1
    fi
}

# --- system packages: ROCm hiprtc (inside libamdhip64 on ROCm 5.2), comgr, device libs —
# for the tests that compile HIP; the demo needs none of them
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'; }
venv_ok() { [ -x .venv/bin/python ] && .venv/bin/python -m pip --version >/dev/null 2>&1; }
missing=()
if [ "$mode" = full ]; then
    for pkg in hipcc libamdhip64-dev rocm-device-libs; do
        have_pkg "$pkg" || missing+=("$pkg")
    done
fi
venv_ok || have_pkg python3-venv || missing+=(python3-venv)
if [ ${#missing[@]} -gt 0 ]; then
    log "apt-get install ${missing[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- virtualenv + editable install (skipped when up to date)
if ! venv_ok; then
    log "creating .venv"
    rm -rf .venv
    python3 -m venv .venv
fi
if [ "$mode" = full ]; then
    extras=dev,cuda,hip
    probe='import pytest, xdist, hypothesis, cupy, hip; import importlib.metadata as m; m.version("nvidia-cuda-nvrtc")'
elif nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    extras=cuda  # CuPy runs the demo on the GPU
    probe='import libcst, jinja2, numpy, ml_dtypes, cupy; import importlib.metadata as m; m.version("nvidia-cuda-nvrtc")'
else
    extras=nvrtc
    probe='import libcst, jinja2, numpy, ml_dtypes; import importlib.metadata as m; m.version("nvidia-cuda-nvrtc")'
fi
stamp=.venv/.tilecc-install-stamp
base="$(sha256sum pyproject.toml | cut -d' ' -f1) $(.venv/bin/python -V 2>&1)"
have="$(cat "$stamp" 2>/dev/null || true)"
if { [ "$have" != "$base $extras" ] && [ "$have" != "$base dev,cuda,hip" ]; } ||
    ! .venv/bin/python -c "$probe" 2>/dev/null; then
    # uv (from PyPI, into the .venv) downloads and installs in parallel: a fresh set-up in a
    # third of pip's time and CPU; pip itself where uv cannot be had
    if .venv/bin/python -m pip install -q --disable-pip-version-check uv 2>/dev/null; then
        log "uv pip install -e '.[$extras]'"
        .venv/bin/python -m uv pip install -q --python .venv/bin/python -e ".[$extras]" ||
            { log "uv failed; pip install -e '.[$extras]'"
              .venv/bin/python -m pip install -q --disable-pip-version-check -e ".[$extras]"; }
    else
        log "pip install -e '.[$extras]'"
        .venv/bin/python -m pip install -q --disable-pip-version-check -e ".[$extras]"
    fi
    printf '%s' "$base $extras" >"$stamp"
fi
# The tests also compile with the oldest NVRTC tilecc supports (CUDA 13.0, what GPU machines
# may have): NVRTC's releases accept different C++ (tests/test_oldest_nvrtc.py)
if [ "$mode" = full ] && [ ! -e .venv/oldest-nvrtc/nvidia/cu13/lib/libnvrtc.so.13 ]; then
    log "NVRTC 13.0 into .venv/oldest-nvrtc"
    .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps \
        --target .venv/oldest-nvrtc "nvidia-cuda-nvrtc==13.0.*" ||
        log "NVRTC 13.0 could not be installed: tests/test_oldest_nvrtc.py will say so"
fi
