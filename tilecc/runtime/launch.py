"""Launching on the GPU: argument checks, specialization, compile-once caching, launch.

CUDA goes through CuPy (module load and launch on the array framework's current stream).
HIP goes through hip-python and shares everything up to the launch call itself; no AMD
GPU has run it yet (see docs/architecture.md).
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from tilecc.runtime.specialize import ArrayInfo
from tilecc.transpiler.target import get_target


class CudaKernel:
    """A compiled kernel loaded into the current CUDA context through CuPy."""

    def __init__(self, binary, name: str, threads: int, device_id: int):
        import cupy

        with cupy.cuda.Device(device_id):
            self.module = cupy.cuda.function.Module()
            self.module.load(binary.data)
            self.function = self.module.get_function(name)
            self.shared_bytes = binary.shared_bytes
            if self.shared_bytes > 48 * 1024:  # beyond the default, allowed per kernel
                cupy.cuda.driver.funcSetAttribute(
                    self.function.ptr,
                    cupy.cuda.driver.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    self.shared_bytes)
        self.block = (threads, 1, 1)
        self.device_id = device_id

    def __call__(self, grid: tuple[int, int, int], args: list, stream) -> None:
        self.function(grid, self.block, args, stream=stream, shared_mem=self.shared_bytes)


class HipKernel:
    """A compiled code object loaded and launched through hip-python."""

    def __init__(self, binary, name: str, threads: int, device_id: int):
        from hip import hip

        self.hip = hip
        _check(hip.hipSetDevice(device_id))
        self.module = _check(hip.hipModuleLoadData(binary.data))
        self.function = _check(hip.hipModuleGetFunction(self.module, name.encode()))
        self.threads = threads
        self.shared_bytes = binary.shared_bytes
        if self.shared_bytes > 48 * 1024:
            _check(hip.hipFuncSetAttribute(
                self.function, hip.hipFuncAttribute.hipFuncAttributeMaxDynamicSharedMemorySize,
                self.shared_bytes))
        self.device_id = device_id

    def __call__(self, grid, args: list, stream) -> None:
        extra = tuple(ctypes.c_void_p(int(a)) if isinstance(a, np.uint64) else
                      np.ctypeslib.as_ctypes_type(a.dtype)(a.item()) for a in args)
        _check(self.hip.hipModuleLaunchKernel(self.function, *grid, self.threads, 1, 1,
                                              sharedMemBytes=self.shared_bytes, stream=stream,
                                              kernelParams=None, extra=extra))


def _check(result):
    err, *rest = result if isinstance(result, tuple) else (result,)
    if int(err) != 0:
        raise RuntimeError(f"HIP error {err}")
    return rest[0] if len(rest) == 1 else tuple(rest)


_streams: dict[int, Any] = {}


def _stream(device_id: int):
    """torch's current stream on the device, as a CuPy stream (None: the default stream)."""
    import torch

    handle = torch._C._cuda_getCurrentRawStream(device_id)
    if handle == 0:
        return None
    stream = _streams.get(handle)
    if stream is None:
        import warnings

        import cupy

        with warnings.catch_warnings():  # ExternalStream is the direct way to wrap a handle
            warnings.simplefilter("ignore", DeprecationWarning)
            stream = _streams[handle] = cupy.cuda.ExternalStream(handle, device_id)
    return stream


def _device_arch(device_id: int, backend: str) -> str:
    if backend == "cuda":
        import cupy

        return "sm_" + cupy.cuda.Device(device_id).compute_capability
    from hip import hip

    props = hip.hipDeviceProp_t()
    _check(hip.hipGetDeviceProperties(props, device_id))
    return props.gcnArchName.decode().split(":")[0]


def launch(jit_fn, grid, args: tuple, kwargs: dict) -> None:
    """Launch on the GPU.  A warm launch costs one cheap key over the arguments (types,
    dtypes, the specialization bits) and a dict lookup; everything else is cached."""
    names = jit_fn._param_names
    values, options = _bind_fast(names, args, kwargs)
    if values is None:  # defaults, misspelt or repeated arguments: the careful path
        by_name, options = jit_fn.bind(args, dict(kwargs))
        values = [by_name[n] for n in names]
    num_warps = options.get("num_warps", 4)
    debug, num_stages = options.get("debug"), options.get("num_stages")
    fast = _fast_key(jit_fn._param_constexpr, values)
    fkey = (fast[0], num_warps, debug, num_stages) if fast is not None else None
    entry = jit_fn._launchers.get(fkey) if fast is not None else None
    if entry is None:
        entry, call_args = _slow_path(jit_fn, values, num_warps, debug, num_stages)
        if fast is not None:
            jit_fn._launchers[fkey] = entry
    else:
        call_args = fast[1]
    kernel, uses_torch = entry
    if callable(grid):
        grid = grid({**dict(zip(names, values)), **options, "num_warps": num_warps})
    g = normalize_grid(grid)
    if 0 in g:
        return  # an empty grid launches nothing
    kernel(g, call_args, _stream(kernel.device_id) if uses_torch else None)


_MISSING = object()


def _bind_fast(names: tuple[str, ...], args: tuple, kwargs: dict):
    """Positional arguments followed by keyword ones, in parameter order; (None, None)
    when anything is unusual."""
    if not kwargs:
        return (list(args), {}) if len(args) == len(names) else (None, None)
    values = list(args)
    used = 0
    for name in names[len(args):]:
        v = kwargs.get(name, _MISSING)
        if v is _MISSING:
            return None, None
        values.append(v)
        used += 1
    if used == len(kwargs):
        return values, {}
    options = {k: kwargs[k] for k in ("num_warps", "num_stages", "debug") if k in kwargs}
    if used + len(options) != len(kwargs):
        return None, None
    return values, options


def normalize_grid(g) -> tuple[int, int, int]:
    if type(g) is tuple and len(g) == 1 and type(g[0]) is int and g[0] >= 0:
        return (g[0], 1, 1)  # the common case, first
    if isinstance(g, int):
        return (g, 1, 1) if g >= 0 else _bad_grid(g)
    g = tuple(int(x) for x in g)
    if not 1 <= len(g) <= 3 or min(g) < 0:
        _bad_grid(g)
    return g + (1,) * (3 - len(g))


def _bad_grid(g):
    raise ValueError(f"grid must be 1 to 3 non-negative sizes, got {g}")


_INT32 = (-(1 << 31), (1 << 31) - 1)


def _fast_key(constexpr_flags, values):
    """(key, kernel arguments) from launch values, or None when some value is unusual
    (the slow path then specializes from scratch).  Mirrors JITFunction.specs_for."""
    key, passed = [], []
    for is_ce, v in zip(constexpr_flags, values):
        if is_ce:
            key.append(v)
            continue
        kind = _KINDS.get(type(v)) or _kind_of(type(v))
        if kind == "int":
            if v == 1:
                key.append(1)
                continue
            wide = not _INT32[0] <= v <= _INT32[1]
            key.append(("i64" if wide else "i32", v % 16 == 0))
            passed.append(np.int64(v) if wide else np.int32(v))
        elif kind == "torch":
            device = v.get_device()
            if device < 0:
                return None  # a host tensor: the slow path explains
            ptr = v.data_ptr()
            key.append((v.dtype, ptr % 16 == 0, device))
            passed.append(np.uint64(ptr))
        elif kind == "cupy":
            ptr = v.data.ptr
            key.append((v.dtype, ptr % 16 == 0, v.device.id))
            passed.append(np.uint64(ptr))
        elif kind == "float":
            key.append("fp32")
            passed.append(np.float32(v))
        elif kind == "bool":
            key.append("i1")
            passed.append(np.bool_(v))
        else:
            return None
    key = tuple(key)
    try:
        hash(key)
    except TypeError:  # an unhashable constexpr: specialize the slow way every time
        return None
    return key, passed


# argument type → how the warm path reads it; filled in as types are first seen
_KINDS: dict[type, str] = {int: "int", float: "float", bool: "bool"}


def _kind_of(t: type) -> str:
    module = t.__module__ or ""
    if module.startswith("torch"):
        import torch

        kind = "torch" if issubclass(t, torch.Tensor) else "other"
    elif module.startswith("cupy") and hasattr(t, "data") and hasattr(t, "device"):
        kind = "cupy"
    else:
        kind = "other"
    _KINDS[t] = kind
    return kind


def _slow_path(jit_fn, values: list, num_warps: int, debug, num_stages=None):
    """Specialize, check devices, compile and load: the first launch of a signature."""
    specs, passed, arrays, backend, device_id = _specialize(jit_fn, values)
    key = (tuple(specs), num_warps, debug, num_stages, backend, device_id)
    kernel = jit_fn._launchers.get(key)
    if kernel is None:
        kernel = _build(jit_fn, specs, num_warps, debug, backend, device_id, num_stages)
        jit_fn._launchers[key] = kernel
    uses_torch = backend == "cuda" and any(a.framework == "torch" for a in arrays)
    call_args = [np.uint64(a.ptr) if isinstance(a, ArrayInfo) else a for a in passed]
    return (kernel, uses_torch), call_args


def _specialize(jit_fn, values: list):
    specs, passed = jit_fn.specs_for(dict(zip(jit_fn._param_names, values)))
    names = [s.name for s in specs if not s.is_constexpr and not s.equals_one]
    arrays = []
    for name, a in zip(names, passed):
        if not isinstance(a, ArrayInfo):
            continue
        if a.device not in ("cuda", "rocm"):
            raise TypeError(f"argument `{name}` is a host ({a.framework}) array; a GPU launch "
                            "needs device arrays (CuPy, torch CUDA tensors, ...) — or run on "
                            "the interpreter with kernel.interpret[grid](...) or "
                            "TILECC_INTERPRET=1")
        arrays.append(a)
    devices = {a.device_id for a in arrays}
    if len(devices) > 1:
        raise ValueError(f"array arguments are on different devices: {sorted(devices)}")
    backend = "hip" if any(a.device == "rocm" for a in arrays) else "cuda"
    device_id = devices.pop() if devices else _current_device(backend)
    return specs, passed, arrays, backend, device_id


def precompile(jit_fn, args: tuple, kwargs: dict):
    """Compile (through the disk cache) what kernel[grid](*args, **kwargs) would launch,
    without loading or launching it: (Binary, kernel name).  Thread-safe; the autotuner
    compiles its candidates with it in parallel."""
    from tilecc.runtime.jit import compile_cached

    by_name, options = jit_fn.bind(args, dict(kwargs))
    specs, _, _, backend, device_id = _specialize(jit_fn, [by_name[n] for n in
                                                           jit_fn._param_names])
    return compile_cached(jit_fn, specs, get_target(backend), _device_arch(device_id, backend),
                          options.get("num_warps", 4), options.get("debug"),
                          options.get("num_stages"))


def _current_device(backend: str) -> int:
    if backend == "cuda":
        import cupy

        return cupy.cuda.runtime.getDevice()
    return 0


def _build(jit_fn, specs, num_warps, debug, backend, device_id, num_stages=None):
    from tilecc.runtime.jit import compile_cached

    target = get_target(backend)
    binary, name = compile_cached(jit_fn, specs, target, _device_arch(device_id, backend),
                                  num_warps, debug, num_stages)
    threads = num_warps * target.warp_size
    cls = CudaKernel if backend == "cuda" else HipKernel
    return cls(binary, name, threads, device_id)
