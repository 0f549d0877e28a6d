"""NVRTC through ctypes on libnvrtc: the calls `native_compile.compile_cuda` makes.

CuPy's binding (`cupy.cuda.nvrtc`) imports CuPy as a whole to find the library, 100–400 ms
that a process's first compile would wait for; the library's file is already known here
(the disk cache stamps NVRTC's identity from it, `nvrtc_location.py`).  The interface is that
subset of CuPy's binding, so `native_compile` uses either: CuPy's where no library
file is found.
"""

from __future__ import annotations

import ctypes
import os
from functools import lru_cache

from tilecc.runtime.nvrtc_location import nvrtc_files


class NVRTCError(RuntimeError):
    def __init__(self, call: str, status: int, message: str):
        super().__init__(f"{call} failed: {message} ({status})")
        self.status = status


def _builtins_beside(library: str) -> str | None:
    """The versioned builtins library (libnvrtc-builtins.so.13.0) in libnvrtc's folder."""
    folder = os.path.dirname(library)
    try:
        names = os.listdir(folder)
    except OSError:
        return None
    versioned = [n for n in names if n.startswith("libnvrtc-builtins.so.")]
    return os.path.join(folder, max(versioned, key=len)) if versioned else None


@lru_cache(maxsize=None)
def _lib() -> ctypes.CDLL:
    names = [p for p in nvrtc_files() if os.path.basename(p).startswith("libnvrtc.so")]
    if not names:
        raise OSError("no libnvrtc.so found (pip install nvidia-cuda-nvrtc)")
    library = max(names, key=len)  # libnvrtc.so.13 over a bare libnvrtc.so link
    builtins = _builtins_beside(library)
    if builtins:
        # Some versions (13.0) dlopen their builtins by bare name, which a library loaded by
        # path does not find beside it: load it first, globally, as CUDA's own loaders do.
        ctypes.CDLL(builtins, mode=ctypes.RTLD_GLOBAL)
    lib = ctypes.CDLL(library)
    vp, cp, sz = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t
    lib.nvrtcGetErrorString.restype = cp
    lib.nvrtcCreateProgram.argtypes = [ctypes.POINTER(vp), cp, cp, ctypes.c_int,
                                       ctypes.POINTER(cp), ctypes.POINTER(cp)]
    lib.nvrtcCompileProgram.argtypes = [vp, ctypes.c_int, ctypes.POINTER(cp)]
    lib.nvrtcGetProgramLogSize.argtypes = [vp, ctypes.POINTER(sz)]
    lib.nvrtcGetProgramLog.argtypes = [vp, ctypes.c_char_p]
    lib.nvrtcGetCUBINSize.argtypes = [vp, ctypes.POINTER(sz)]
    lib.nvrtcGetCUBIN.argtypes = [vp, ctypes.c_char_p]
    lib.nvrtcDestroyProgram.argtypes = [ctypes.POINTER(vp)]
    lib.nvrtcVersion.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)]
    return lib


def _check(call: str, status: int) -> None:
    if status:
        raise NVRTCError(call, status, _lib().nvrtcGetErrorString(status).decode())


def getVersion() -> tuple[int, int]:  # noqa: N802  (CuPy's names)
    major, minor = ctypes.c_int(), ctypes.c_int()
    _check("nvrtcVersion", _lib().nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)))
    return major.value, minor.value


def createProgram(source: str, name: str, headers=(), include_names=()) -> int:  # noqa: N802
    if headers or include_names:
        raise NotImplementedError("headers are passed as include folders")
    prog = ctypes.c_void_p()
    _check("nvrtcCreateProgram", _lib().nvrtcCreateProgram(
        ctypes.byref(prog), source.encode(), name.encode(), 0, None, None))
    return prog.value


def compileProgram(prog: int, options) -> None:  # noqa: N802
    opts = (ctypes.c_char_p * len(options))(*(o.encode() for o in options))
    _check("nvrtcCompileProgram", _lib().nvrtcCompileProgram(prog, len(options), opts))


def _sized(prog: int, size_call: str, call: str) -> bytes:
    lib, size = _lib(), ctypes.c_size_t()
    _check(size_call, getattr(lib, size_call)(prog, ctypes.byref(size)))
    buf = ctypes.create_string_buffer(size.value)
    _check(call, getattr(lib, call)(prog, buf))
    return buf.raw


def getProgramLog(prog: int) -> str:  # noqa: N802
    return _sized(prog, "nvrtcGetProgramLogSize", "nvrtcGetProgramLog").decode(
        errors="replace")


def getCUBIN(prog: int) -> bytes:  # noqa: N802
    return _sized(prog, "nvrtcGetCUBINSize", "nvrtcGetCUBIN")


def destroyProgram(prog: int) -> None:  # noqa: N802
    handle = ctypes.c_void_p(prog)
    _check("nvrtcDestroyProgram", _lib().nvrtcDestroyProgram(ctypes.byref(handle)))


def getSupportedArchs() -> list[int]:  # noqa: N802
    """The sm_XX numbers this NVRTC compiles for (75, 80, 86, ...)."""
    lib, n = _lib(), ctypes.c_int()
    _check("nvrtcGetNumSupportedArchs", lib.nvrtcGetNumSupportedArchs(ctypes.byref(n)))
    archs = (ctypes.c_int * n.value)()
    _check("nvrtcGetSupportedArchs", lib.nvrtcGetSupportedArchs(archs))
    return list(archs)
