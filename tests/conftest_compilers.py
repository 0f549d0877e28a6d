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

def clean_log_problem(log: str, target: str, spills_ok: bool = False) -> str | None:
    """What makes a compiler log unclean: a warning, a serialization by ptxas, a spill (CUDA:
    the report of ptxas -v must be there; unless `spills_ok`)."""
    import re

    if "warning" in log.lower():
        return f"compiler warnings:\n{log}"
    if "Performance Loss" in log:
        return f"ptxas serialized something:\n{log}"
    if target == "cuda" and not spills_ok:
        spills = re.findall(r"(\d+) bytes spill stores", log)
        if not spills:
            return f"no ptxas resource report in the log:\n{log}"
        if any(s != "0" for s in spills):
            return f"register spills:\n{log}"
    return None


_TOGETHER: dict[tuple, bool] = {}


def compile_cleanly_together(group: str, target: str, arch: str, cases,
                             spills_ok: bool = False) -> bool:
    """Whether the kernels of `cases` — (kernel, signature, options) for this target —
    compile cleanly (`clean_log_problem`) in one compiler run per native architecture.  Asked once per process
    for each (group, target, arch), and answered once for all the suite's processes
    (`_shared_answer`): only the process that computes the answer transpiles the kernels."""
    key = (group, target, arch, spills_ok)
    if key not in _TOGETHER:
        try:
            listed = [(kernel, signature, options) for kernel, signature, options in cases()]
            described = [(kernel.src, signature, sorted(options.items()))
                         for kernel, signature, options in listed]
        except Exception:
            _TOGETHER[key] = False
            return False

        def compile_all() -> bool:
            from tilecc.testing import batch

            by_arch: dict[str, list[str]] = {}
            try:
                for kernel, signature, options in listed:
                    text = kernel.source(signature, target=target, arch=arch, **options)
                    by_arch.setdefault(batch.native_arch(text, target, arch), []).append(text)
                return all(
                    clean_log_problem(batch.compile_batch(texts, target, native).log or "",
                                      target, spills_ok) is None
                    for native, texts in by_arch.items())
            except Exception:
                return False

        _TOGETHER[key] = _shared_answer(target, (key, described), compile_all)
    return _TOGETHER[key]


_TREES = ("tilecc", "tests", "examples")  # what the kernels, their helpers and the C come from
_tree_digest: list[bytes] = []


def _trees_digest() -> bytes:
    """A digest of every file the kernels' sources can depend on (computed once)."""
    import hashlib

    if not _tree_digest:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        h = hashlib.sha256()
        for tree in _TREES:
            for folder, dirs, files in sorted(os.walk(os.path.join(root, tree))):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                for name in sorted(files):
                    if name.endswith((".py", ".j2", ".h", ".cuh", ".hpp")):
                        h.update(name.encode())
                        with open(os.path.join(folder, name), "rb") as f:
                            h.update(f.read())
        _tree_digest.append(h.digest())
    return _tree_digest[0]


def _shared_answer(target: str, described, compute) -> bool:
    """`compute()`, or the answer another process of the suite (a pytest-xdist worker)
    computed for the same kernels (their Python source, signatures and options), the same
    tilecc, tests and examples, and the same compiler: the first to ask computes under a
    lock in the disk cache's folder, the others read what it wrote."""
    import fcntl
    import hashlib

    from tilecc.runtime.native_compile import compiler_version

    folder = os.environ.get("TILECC_CACHE_DIR")
    if not folder:
        return compute()
    digest = hashlib.sha256(repr((compiler_version(target), described)).encode())
    digest.update(_trees_digest())
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


def assert_compiles_together(target: str, arch: str, cases, spills_ok: bool = True) -> None:
    """The kernels of `cases` — (kernel, signature, options) — compile for `arch` without
    warnings (nor spills unless `spills_ok`): in one compiler run per native architecture,
    and only where that fails each alone, to name the one that fails."""
    from tilecc.testing import batch

    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    by_arch: dict[str, list[str]] = {}
    for kernel, signature, options in cases:
        text = kernel.source(signature, target=target, arch=arch, **options)
        by_arch.setdefault(batch.native_arch(text, target, arch), []).append(text)
    try:
        if all(clean_log_problem(batch.compile_batch(texts, target, native).log or "",
                                 target, spills_ok) is None
               for native, texts in by_arch.items()):
            return
    except Exception:  # noqa: BLE001 - named below, kernel by kernel
        pass
    for kernel, signature, options in cases:
        binary = kernel.compile(signature, target=target, arch=arch, **options)
        problem = clean_log_problem(binary.log or "", target, spills_ok)
        assert binary.data and problem is None, f"{kernel.__name__} [{signature}]: {problem}"
