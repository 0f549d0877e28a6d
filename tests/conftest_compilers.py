"""Gate tests on the native GPU compilers (NVRTC, hiprtc).

Without a compiler the test is skipped, unless ``TILECC_REQUIRE_COMPILERS=1`` (set by
``.ci/run``), in which case it fails: CI must never pass by silently skipping them.
"""

from __future__ import annotations

import os

import pytest


def compilers_required() -> bool:
    return os.environ.get("TILECC_REQUIRE_COMPILERS") == "1"


def _missing(what: str) -> None:
    msg = f"{what} is unavailable"
    if compilers_required():
        pytest.fail(f"{msg} but TILECC_REQUIRE_COMPILERS=1", pytrace=False)
    pytest.skip(msg)


def require_cuda_compiler() -> None:
    """Skip (or fail, in CI) the calling test unless NVRTC can compile."""
    try:
        from tilecc.runtime.native_compile import cuda_compiler_available
    except ImportError as e:  # pragma: no cover - tilecc itself broken
        pytest.fail(f"cannot import tilecc.runtime.native_compile: {e}")
    if not cuda_compiler_available():
        _missing("NVRTC (cupy-cuda13x + nvidia-cuda-nvrtc)")


def require_hip_compiler() -> None:
    """Skip (or fail, in CI) the calling test unless hiprtc can compile."""
    try:
        from tilecc.runtime.native_compile import hip_compiler_available
    except ImportError as e:  # pragma: no cover
        pytest.fail(f"cannot import tilecc.runtime.native_compile: {e}")
    if not hip_compiler_available():
        _missing("hiprtc (hip-python + libamdhip64/libhiprtc + comgr)")
