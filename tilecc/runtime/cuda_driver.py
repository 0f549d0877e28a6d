"""The few CUDA driver calls a launch needs, through ctypes on libcuda.

Loading a module, finding its kernel, reading and raising its shared memory (and the
device's limit on it) and asking which device the current context belongs to need no more
than libcuda itself: importing CuPy for them costs 50–500 ms, which a process whose kernels
are all in the disk cache must not pay on its first call.  Launches go through CuPy's
compiled binding when CuPy is loaded anyway (it is the faster caller), through ctypes
otherwise.
"""

from __future__ import annotations

import ctypes
import sys
from functools import lru_cache


class CUDADriverError(RuntimeError):
    """A driver call failed; `status` is its CUresult."""

    def __init__(self, call: str, status: int):
        super().__init__(f"{call} failed: CUDA driver error {status}")
        self.status = status


@lru_cache(maxsize=None)
def _lib() -> ctypes.CDLL:
    lib = ctypes.CDLL("libcuda.so.1")
    vp, u = ctypes.c_void_p, ctypes.c_uint
    lib.cuLaunchKernel.argtypes = [vp, u, u, u, u, u, u, u, vp, vp, vp]
    lib.cuLaunchCooperativeKernel.argtypes = [vp, u, u, u, u, u, u, u, vp, vp]
    lib.cuModuleLoadData.argtypes = [ctypes.POINTER(vp), ctypes.c_char_p]
    lib.cuModuleGetFunction.argtypes = [ctypes.POINTER(vp), vp, ctypes.c_char_p]
    lib.cuFuncSetAttribute.argtypes = [vp, ctypes.c_int, ctypes.c_int]
    lib.cuFuncGetAttribute.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_int, vp]
    lib.cuDeviceGet.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    lib.cuDeviceGetAttribute.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_int,
                                         ctypes.c_int]
    lib.cuCtxGetDevice.argtypes = [ctypes.POINTER(ctypes.c_int)]
    lib.cuInit.argtypes = [ctypes.c_uint]
    lib.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
    lib.cuMemsetD32_v2.argtypes = [ctypes.c_uint64, ctypes.c_uint, ctypes.c_size_t]
    return lib


def _check(call: str, status: int) -> None:
    if status:
        raise CUDADriverError(call, status)


def ctxGetDevice() -> int:  # noqa: N802  (the driver API's names, as CuPy spells them)
    dev = ctypes.c_int()
    _check("cuCtxGetDevice", _lib().cuCtxGetDevice(ctypes.byref(dev)))
    return dev.value


def moduleLoadData(image: bytes) -> int:  # noqa: N802
    module = ctypes.c_void_p()
    _check("cuModuleLoadData", _lib().cuModuleLoadData(ctypes.byref(module), image))
    return module.value


def moduleGetFunction(module: int, name: str) -> int:  # noqa: N802
    fn = ctypes.c_void_p()
    _check("cuModuleGetFunction",
           _lib().cuModuleGetFunction(ctypes.byref(fn), module, name.encode()))
    return fn.value


def funcSetAttribute(fn: int, attribute: int, value: int) -> None:  # noqa: N802
    _check("cuFuncSetAttribute", _lib().cuFuncSetAttribute(fn, attribute, value))


def funcGetAttribute(attribute: int, fn: int) -> int:  # noqa: N802
    value = ctypes.c_int()
    _check("cuFuncGetAttribute", _lib().cuFuncGetAttribute(ctypes.byref(value), attribute, fn))
    return value.value


def init() -> None:
    """cuInit(0): needed once per process before device queries where nothing (torch, CuPy,
    a launch) has initialized the driver yet; a no-op after the first call."""
    _check("cuInit", _lib().cuInit(0))


def deviceGetAttribute(attribute: int, ordinal: int) -> int:  # noqa: N802
    device, value = ctypes.c_int(), ctypes.c_int()
    _check("cuDeviceGet", _lib().cuDeviceGet(ctypes.byref(device), ordinal))
    _check("cuDeviceGetAttribute",
           _lib().cuDeviceGetAttribute(ctypes.byref(value), attribute, device))
    return value.value


def launchKernel(fn, gx, gy, gz, bx, by, bz, shared, stream, params, extra) -> None:  # noqa: N802
    status = _lib().cuLaunchKernel(fn, gx, gy, gz, bx, by, bz, shared, stream or None,
                                   params, extra or None)
    if status:
        raise CUDADriverError("cuLaunchKernel", status)


_COOPERATIVE_LAUNCH_TOO_LARGE = 720


def launchCooperativeKernel(fn, gx, gy, gz, bx, by, bz, shared, stream, params,  # noqa: N802
                            extra=None) -> None:
    """cuLaunchCooperativeKernel with cuLaunchKernel's arguments (it takes no `extra`):
    every program of the grid resident at once, or an error."""
    status = _lib().cuLaunchCooperativeKernel(fn, gx, gy, gz, bx, by, bz, shared,
                                              stream or None, params)
    if status == _COOPERATIVE_LAUNCH_TOO_LARGE:
        raise CUDADriverError(f"cuLaunchCooperativeKernel of grid ({gx}, {gy}, {gz}), more "
                              "programs than the GPU holds resident at once,", status)
    if status:
        raise CUDADriverError("cuLaunchCooperativeKernel", status)


def tensorMapEncodeTiled(data_type: int, address: int, dims, strides, box, swizzle: int,  # noqa: N802
                         fill_nan: bool) -> tuple[int, ...]:
    """cuTensorMapEncodeTiled: the 128 bytes of a CUtensorMap (as 16 u64) for a tensor of
    `dims` elements (innermost first), `strides` bytes between the outer dims' elements
    (one fewer), read `box` elements at a time into shared memory swizzled by the
    CUtensorMapSwizzle `swizzle`; no interleave, 128-byte L2 promotion, and outside the
    tensor zeros (NaN with `fill_nan`)."""
    lib = _lib()
    rank = len(dims)
    u64, u32 = ctypes.c_uint64, ctypes.c_uint32
    out = (u64 * 16)()
    status = lib.cuTensorMapEncodeTiled(
        out, ctypes.c_int(data_type), u32(rank), ctypes.c_void_p(address),
        (u64 * rank)(*dims), (u64 * max(rank - 1, 1))(*strides), (u32 * rank)(*box),
        (u32 * rank)(*[1] * rank), ctypes.c_int(0), ctypes.c_int(swizzle), ctypes.c_int(2),
        ctypes.c_int(1 if fill_nan else 0))
    _check("cuTensorMapEncodeTiled", status)
    return tuple(out)


def memAllocFilled(nbytes: int, word: int) -> int:  # noqa: N802
    """cuMemAlloc of `nbytes` in the current context, each 32-bit word `word` by the time
    this returns (kept for the process: the tensor maps of empty tensors point there)."""
    lib = _lib()
    ptr = ctypes.c_uint64()
    _check("cuMemAlloc", lib.cuMemAlloc_v2(ctypes.byref(ptr), nbytes))
    _check("cuMemsetD32", lib.cuMemsetD32_v2(ptr.value, word, nbytes // 4))
    _check("cuCtxSynchronize", lib.cuCtxSynchronize())
    return ptr.value


def launcher():
    """cuLaunchKernel through CuPy's compiled binding when CuPy is already loaded, else
    through ctypes: the same 11 integer arguments either way."""
    cupy_driver = sys.modules.get("cupy_backends.cuda.api.driver")
    return cupy_driver.launchKernel if cupy_driver is not None else launchKernel
