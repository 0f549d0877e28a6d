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
        self.block = (threads, 1, 1)
        self.device_id = device_id

    def __call__(self, grid: tuple[int, int, int], args: list, stream) -> None:
        self.function(grid, self.block, args, stream=stream)


class HipKernel:
    """A compiled code object loaded and launched through hip-python."""

    def __init__(self, binary, name: str, threads: int, device_id: int):
        from hip import hip

        self.hip = hip
        _check(hip.hipSetDevice(device_id))
        self.module = _check(hip.hipModuleLoadData(binary.data))
        self.function = _check(hip.hipModuleGetFunction(self.module, name.encode()))
        self.threads = threads

    def __call__(self, grid, args: list, stream) -> None:
        extra = tuple(ctypes.c_void_p(int(a)) if isinstance(a, np.uint64) else
                      np.ctypeslib.as_ctypes_type(a.dtype)(a.item()) for a in args)
        _check(self.hip.hipModuleLaunchKernel(self.function, *grid, self.threads, 1, 1,
                                              sharedMemBytes=0, stream=stream,
                                              kernelParams=None, extra=extra))


def _check(result):
    err, *rest = result if isinstance(result, tuple) else (result,)
    if int(err) != 0:
        raise RuntimeError(f"HIP error {err}")
    return rest[0] if len(rest) == 1 else tuple(rest)


_streams: dict[int, Any] = {}


def _stream(arrays: list[ArrayInfo], device_id: int):
    """The current stream of the arrays' framework (torch's, else CuPy's)."""
    if any(a.framework == "torch" for a in arrays):
        import torch

        handle = torch.cuda.current_stream(device_id).cuda_stream
        if handle == 0:
            return None
        if handle not in _streams:
            import cupy

            _streams[handle] = cupy.cuda.ExternalStream(handle, device_id)
        return _streams[handle]
    return None  # CuPy launches on its current stream when given None


def _device_arch(device_id: int, backend: str) -> str:
    if backend == "cuda":
        import cupy

        return "sm_" + cupy.cuda.Device(device_id).compute_capability
    from hip import hip

    props = hip.hipDeviceProp_t()
    _check(hip.hipGetDeviceProperties(props, device_id))
    return props.gcnArchName.decode().split(":")[0]


def resolve_grid(grid, meta: dict) -> tuple[int, int, int]:
    g = grid(meta) if callable(grid) else grid
    g = tuple(int(x) for x in (g if isinstance(g, (tuple, list)) else (g,)))
    if not 1 <= len(g) <= 3 or min(g) < 0:
        raise ValueError(f"grid must be 1 to 3 non-negative sizes, got {g}")
    return g + (1,) * (3 - len(g))


def launch(jit_fn, grid, args: tuple, kwargs: dict) -> None:
    values, options = jit_fn.bind(args, dict(kwargs))
    num_warps = options.get("num_warps", 4)
    specs, passed = jit_fn.specs_for(values)
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
    debug = options.get("debug")
    key = (tuple(specs), num_warps, debug, backend, device_id)
    kernel = jit_fn._launchers.get(key)
    if kernel is None:
        kernel = _build(jit_fn, specs, num_warps, debug, backend, device_id)
        jit_fn._launchers[key] = kernel
    g = resolve_grid(grid, {**values, **options, "num_warps": num_warps})
    if 0 in g:
        return  # an empty grid launches nothing
    call_args = [np.uint64(a.ptr) if isinstance(a, ArrayInfo) else a for a in passed]
    kernel(g, call_args, _stream(arrays, device_id) if backend == "cuda" else None)


def _current_device(backend: str) -> int:
    if backend == "cuda":
        import cupy

        return cupy.cuda.runtime.getDevice()
    return 0


def _build(jit_fn, specs, num_warps, debug, backend, device_id):
    from tilecc.runtime.jit import compile_source

    target = get_target(backend)
    arch = _device_arch(device_id, backend)
    built = jit_fn.build(specs, target, num_warps, debug=debug, line_directives=True)
    binary = compile_source(built, target, arch)
    threads = num_warps * target.warp_size
    cls = CudaKernel if backend == "cuda" else HipKernel
    return cls(binary, built.kernel.name, threads, device_id)
