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


# --- many kernels, one compiler run ---------------------------------------------------------
# A test per kernel keeps failures named one by one; compiling each alone costs a compiler
# start and a parse of the device header per kernel.  A parametrized test asks first
# whether all of its target's kernels compile cleanly together (once per process); only if
# they do not does each case compile alone, to say which fails.

def clean_log_problem(log: str, target: str) -> str | None:
    """What makes a compiler log unclean: a warning, a serialization by ptxas, a spill (CUDA:
    the report of ptxas -v must be there)."""
    import re

    if "warning" in log.lower():
        return f"compiler warnings:\n{log}"
    if "Performance Loss" in log:
        return f"ptxas serialized something:\n{log}"
    if target == "cuda":
        spills = re.findall(r"(\d+) bytes spill stores", log)
        if not spills:
            return f"no ptxas resource report in the log:\n{log}"
        if any(s != "0" for s in spills):
            return f"register spills:\n{log}"
    return None


_TOGETHER: dict[tuple, bool] = {}


def compile_cleanly_together(group: str, target: str, arch: str, cases) -> bool:
    """Whether the kernels of `cases` — (kernel, signature, options) for this target —
    compile cleanly in one compiler run per native architecture.  Asked once per process
    for each (group, target, arch), and answered once for all the suite's processes
    (`_shared_answer`)."""
    key = (group, target, arch)
    if key not in _TOGETHER:
        from tilecc.testing import batch

        by_arch: dict[str, list[str]] = {}
        try:
            for kernel, signature, options in cases():
                text = kernel.source(signature, target=target, arch=arch, **options)
                by_arch.setdefault(batch.native_arch(text, target, arch), []).append(text)
        except Exception:
            _TOGETHER[key] = False
            return False

        def compile_all() -> bool:
            try:
                return all(
                    clean_log_problem(batch.compile_batch(texts, target, native).log or "",
                                      target) is None
                    for native, texts in by_arch.items())
            except Exception:
                return False

        _TOGETHER[key] = _shared_answer(target, by_arch, compile_all)
    return _TOGETHER[key]


def _shared_answer(target: str, by_arch: dict[str, list[str]], compute) -> bool:
    """`compute()`, or the answer another process of the suite (a pytest-xdist worker)
    computed for the same sources, header and compiler: the first to ask computes under a
    lock in the disk cache's folder, the others read what it wrote."""
    import fcntl
    import hashlib

    from tilecc.runtime.native_compile import compiler_version
    from tilecc.transpiler.render import INCLUDE_DIR

    folder = os.environ.get("TILECC_CACHE_DIR")
    if not folder:
        return compute()
    digest = hashlib.sha256(repr((compiler_version(target), sorted(by_arch.items()))).encode())
    for name in sorted(os.listdir(INCLUDE_DIR)):  # the device headers the sources include
        with open(os.path.join(INCLUDE_DIR, name), "rb") as header:
            digest.update(header.read())
    path = os.path.join(folder, "joint-compiles", digest.hexdigest()[:32])
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(path):
            with open(path) as f:
                return f.read() == "clean"
        answer = compute()
        with open(path, "w") as f:
            f.write("clean" if answer else "not clean")
        return answer
