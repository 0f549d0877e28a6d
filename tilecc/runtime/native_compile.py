"""Compile CUDA or HIP source text to a native GPU binary, with no GPU present.

Consumes: one translation unit of CUDA C++ (for NVRTC) or HIP C++ (for hiprtc) as a
``str``, a target architecture (``sm_90``, ``gfx90a``, ...) and extra compiler options.
Produces: a :class:`Binary` holding the cubin (CUDA) or AMDGPU code object ELF (HIP)
and the compiler's full log, or raises :class:`NativeCompileError` carrying that log.

* CUDA goes through NVRTC (libnvrtc from the ``nvidia-cuda-nvrtc`` wheel), called through
  ctypes (``tilecc.runtime.nvrtc``) or, where tilecc does not find the library file,
  CuPy's bindings (``cupy.cuda.nvrtc``). The log includes ptxas' ``-v`` resource report.
* HIP goes through hip-python's ``hip.hiprtc``. hip-python dlopens the library named
  by the module global ``hip.chiprtc.DLL`` (default ``libhiprtc.so``); ROCm <= 5.2 has
  no libhiprtc (hiprtc lives in ``libamdhip64.so``), and newer distributions may ship
  only a versioned ``libhiprtc.so.N``. :func:`_hiprtc_library` finds the first
  library exporting ``hiprtcCompileProgram`` (``$TILECC_HIPRTC_LIBRARY`` first) and
  points ``hip.chiprtc.DLL`` at it before hip-python's first (lazy) dlopen.
* hiprtc 5.2 aborts the whole process (``munmap_chunk(): invalid pointer``) on an
  unknown target ID such as ``gfx942`` or ``gfx90a:foo+``, so HIP targets are first
  validated with comgr's ``amd_comgr_get_isa_metadata``.
* hiprtc 5.2 reports diagnostics against ``/tmp/comgr-XXXX/input/CompileSource``;
  that path is rewritten to ``filename`` so the log is stable and readable.

cupy and hip-python are imported lazily, so importing this module needs neither.
"""

from __future__ import annotations

import ctypes
import os
import re
import threading
from functools import lru_cache
from typing import Any, Optional, Sequence

from tilecc.errors import install_hint
from tilecc.runtime.binary import Binary

__all__ = [
    "Binary",
    "NativeCompileError",
    "CompilerUnavailable",
    "compile_cuda",
    "compile_hip",
    "cuda_compiler_available",
    "hip_compiler_available",
    "compiler_version",
]


class NativeCompileError(Exception):
    """Compilation failed (or the compiler is unusable); ``log`` has the full text."""

    def __init__(self, target: str, arch: str, log: str, source: str) -> None:
        super().__init__(f"{target} compilation for {arch} failed:\n{log}")
        self.target = target
        self.arch = arch
        self.log = log
        self.source = source


class CompilerUnavailable(NativeCompileError):
    """The compiler itself is missing or does not load (nothing was compiled); the message
    says which extra installs it."""

    EXTRA = {"cuda": ("NVRTC", install_hint("nvrtc")),
             "hip": ("hiprtc", "install ROCm's hiprtc library, and " + install_hint("hip"))}

    def __init__(self, target: str, arch: str, reason: str, source: str) -> None:
        name, install = self.EXTRA[target]
        self.hint = (f"{name}, which compiles {target.upper()} source, is not installed or "
                     f"does not load ({reason}): {install}")
        super().__init__(target, arch, self.hint, source)


# --------------------------------------------------------------------------- CUDA

_SM_ARCH = re.compile(r"sm_\d+[a-z]?")


@lru_cache(maxsize=None)
def _nvrtc() -> Any:
    """NVRTC's binding: tilecc's ctypes one where the library file is found (no CuPy import
    on the way to a first compile), else CuPy's (which also finds the library its own way).
    Lazy: importing this module needs neither."""
    from tilecc.runtime import nvrtc

    try:
        nvrtc.getVersion()
        return nvrtc
    except (OSError, AttributeError) as e:  # no library file, or one without NVRTC's calls
        try:
            from cupy.cuda import nvrtc as cupy_nvrtc
        except ImportError:
            raise OSError(f"{e}; CuPy, the other way to NVRTC, is not installed") from None
        return cupy_nvrtc


def _clean(log: str) -> str:
    return log.replace("\x00", "")


def compile_cuda(
    source: str,
    *,
    arch: str = "sm_90",
    options: Sequence[str] = (),
    filename: str = "kernel.cu",
) -> Binary:
    """Compile CUDA C++ ``source`` to a cubin for exactly ``arch`` (``sm_XX``)."""
    if not _SM_ARCH.fullmatch(arch):
        raise NativeCompileError(
            "cuda", arch, f"a cubin needs a real architecture sm_XX, got {arch!r}", source
        )
    try:
        nvrtc = _nvrtc()
    except Exception as e:  # libnvrtc missing, or CuPy's without its library
        raise CompilerUnavailable("cuda", arch, str(e), source) from None
    opts = [f"--gpu-architecture={arch}", "--std=c++17", "--ptxas-options=-v", *options]
    prog = nvrtc.createProgram(source, filename, [], [])
    try:
        try:
            nvrtc.compileProgram(prog, opts)
        except nvrtc.NVRTCError as e:
            log = _clean(nvrtc.getProgramLog(prog)) or str(e)
            missing = re.search(r"failed to open (libnvrtc-builtins\S*?)\.?$", log, re.M)
            if missing:  # NVRTC's own file, not the source: an install problem
                raise CompilerUnavailable("cuda", arch, f"NVRTC cannot open {missing[1]}",
                                          source) from None
            raise NativeCompileError("cuda", arch, log, source) from None
        log = _clean(nvrtc.getProgramLog(prog))
        return Binary("cuda", arch, bytes(nvrtc.getCUBIN(prog)), log)
    finally:
        nvrtc.destroyProgram(prog)


def cuda_compiler_available() -> bool:
    try:
        _nvrtc().getVersion()
    except Exception:
        return False
    return True


# ---------------------------------------------------------------------------- HIP

_HIPRTC_CANDIDATES = (
    "libhiprtc.so",
    "libhiprtc.so.7",
    "libhiprtc.so.6",
    "libhiprtc.so.5",
    "libamdhip64.so",  # ROCm <= 5.2: hiprtc is part of the HIP runtime
    "libamdhip64.so.5",
)
_COMGR_CANDIDATES = ("libamd_comgr.so.3", "libamd_comgr.so.2", "libamd_comgr.so")
_HIP_LOCK = threading.Lock()  # hiprtc/comgr 5.2 make no thread-safety promises
_COMGR_TMP = re.compile(r"\S*comgr-[0-9A-Za-z]+/input/CompileSource")
_TARGET_ID = re.compile(r"gfx[0-9a-f]+(:(sramecc|xnack)[+-])*")


def _load(names: Sequence[str], symbol: str) -> Optional[str]:
    for name in names:
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        if hasattr(lib, symbol):
            return name
    return None


@lru_cache(maxsize=None)
def _hiprtc_library() -> Optional[str]:
    """Name/path of a loadable library exporting the hiprtc API, or None."""
    explicit = os.environ.get("TILECC_HIPRTC_LIBRARY")
    names: list[str] = [explicit] if explicit else []
    rocm = os.environ.get("ROCM_PATH", "/opt/rocm")
    names += list(_HIPRTC_CANDIDATES)
    names += [os.path.join(rocm, "lib", n) for n in _HIPRTC_CANDIDATES]
    return _load(names, "hiprtcCompileProgram")


@lru_cache(maxsize=None)
def _comgr() -> Optional[ctypes.CDLL]:
    name = _load(_COMGR_CANDIDATES, "amd_comgr_get_isa_metadata")
    return ctypes.CDLL(name) if name else None


def _hip_target_problem(arch: str) -> Optional[str]:
    """Why hiprtc must not see ``arch`` (it may abort the process), or None if fine."""
    if not _TARGET_ID.fullmatch(arch):
        return f"invalid AMDGPU target ID {arch!r} (expected e.g. 'gfx90a' or 'gfx90a:xnack-')"
    comgr = _comgr()
    if comgr is None:
        return None  # cannot check; the regex above is the only guard
    handle = ctypes.c_uint64()
    status = comgr.amd_comgr_get_isa_metadata(
        f"amdgcn-amd-amdhsa--{arch}".encode(), ctypes.byref(handle)
    )
    if status != 0:
        return f"target {arch!r} is not supported by this comgr/hiprtc"
    comgr.amd_comgr_destroy_metadata(handle)
    return None


def _hiprtc() -> Any:
    lib = _hiprtc_library()
    if lib is None:
        raise OSError("no library exporting hiprtcCompileProgram was found")
    import hip.chiprtc as chiprtc  # lazy: hip-python
    from hip import hiprtc

    if chiprtc.DLL == b"libhiprtc.so":  # hip-python's default; leave user overrides alone
        chiprtc.DLL = lib.encode()
    return hiprtc


def _hip_fail(arch: str, log: str, source: str) -> NativeCompileError:
    return NativeCompileError("hip", arch, log, source)


def compile_hip(
    source: str,
    *,
    arch: str = "gfx90a",
    options: Sequence[str] = (),
    filename: str = "kernel.hip",
) -> Binary:
    """Compile HIP C++ ``source`` to an AMDGPU code object for target ID ``arch``.

    hiprtc pre-includes the HIP runtime device API (threadIdx, expf, __shfl_xor,
    atomicAdd, __half, ...): the source should include no HIP header.
    """
    problem = _hip_target_problem(arch)
    if problem:
        raise _hip_fail(arch, problem, source)
    try:
        hiprtc = _hiprtc()
    except ImportError:
        raise CompilerUnavailable("hip", arch, "hip-python is not installed", source) from None
    except Exception as e:  # no hiprtc library
        raise CompilerUnavailable("hip", arch, str(e), source) from None
    ok = hiprtc.hiprtcResult.HIPRTC_SUCCESS
    opts = [o.encode() for o in (f"--offload-arch={arch}", "-O3", "-std=c++17", *options)]
    with _HIP_LOCK:
        err, prog = hiprtc.hiprtcCreateProgram(
            source.encode(), filename.encode(), 0, [], []
        )
        if err != ok:
            raise _hip_fail(arch, f"hiprtcCreateProgram: {err!r}", source)
        try:
            (status,) = hiprtc.hiprtcCompileProgram(prog, len(opts), opts)
            _, size = hiprtc.hiprtcGetProgramLogSize(prog)
            buf = bytearray(size)
            if size:
                hiprtc.hiprtcGetProgramLog(prog, buf)
            log = _COMGR_TMP.sub(filename, _clean(buf.decode(errors="replace")))
            if status != ok:
                raise _hip_fail(arch, log or f"hiprtcCompileProgram: {status!r}", source)
            err, size = hiprtc.hiprtcGetCodeSize(prog)
            if err != ok or not size:
                raise _hip_fail(arch, log or f"hiprtcGetCodeSize: {err!r}", source)
            code = bytearray(size)
            hiprtc.hiprtcGetCode(prog, code)
        finally:
            # hip-python wants hiprtcProgram* here; passing prog itself segfaults.
            hiprtc.hiprtcDestroyProgram(prog.createRef())
    return Binary("hip", arch, bytes(code), log)


def hip_compiler_available() -> bool:
    try:
        _hiprtc()
    except Exception:
        return False
    return _comgr() is not None


def compile_for(target: str, source: str, *, arch: str, options: Sequence[str] = (),
                filename: str | None = None) -> Binary:
    """`source` compiled by the native compiler of `target` (a target row's name)."""
    compiler = {"cuda": compile_cuda, "hip": compile_hip}[target]
    named = {"filename": filename} if filename is not None else {}
    return compiler(source, arch=arch, options=options, **named)


# ------------------------------------------------------------------------ version


def compiler_version(target: str) -> str:
    """A string naming the compiler build, for cache keys: e.g. ``nvrtc 13.5`` or
    ``hiprtc libamdhip64.so.5.2.21153 comgr 2.4``. Raises RuntimeError if absent."""
    version = {"cuda": _nvrtc_version, "hip": _hiprtc_version}.get(target)
    if version is None:
        raise ValueError(f"unknown target {target!r} (expected 'cuda' or 'hip')")
    return version()


def _nvrtc_version() -> str:
    try:
        major, minor = _nvrtc().getVersion()
    except Exception as e:
        raise RuntimeError(f"NVRTC unavailable: {e}") from e
    return f"nvrtc {major}.{minor}"


def _hiprtc_version() -> str:
    lib, comgr = _hiprtc_library(), _comgr()
    if lib is None or comgr is None:
        raise RuntimeError("hiprtc unavailable")
    # hiprtcVersion() is useless on ROCm 5.2 (reports 9.0); name the real file.
    path = _dl_path(lib, "hiprtcCompileProgram")
    major, minor = ctypes.c_size_t(), ctypes.c_size_t()
    comgr.amd_comgr_get_version(ctypes.byref(major), ctypes.byref(minor))
    return f"hiprtc {os.path.basename(path)} comgr {major.value}.{minor.value}"


class _DlInfo(ctypes.Structure):
    _fields_ = [
        ("dli_fname", ctypes.c_char_p),
        ("dli_fbase", ctypes.c_void_p),
        ("dli_sname", ctypes.c_char_p),
        ("dli_saddr", ctypes.c_void_p),
    ]


def _dl_path(lib: str, symbol: str) -> str:
    """Real file behind library ``lib`` (resolving sonames and symlinks)."""
    try:
        addr = ctypes.cast(getattr(ctypes.CDLL(lib), symbol), ctypes.c_void_p)
        info = _DlInfo()
        if ctypes.CDLL(None).dladdr(addr, ctypes.byref(info)) and info.dli_fname:
            return os.path.realpath(info.dli_fname.decode())
    except (OSError, AttributeError):
        pass
    return lib
