"""The NumPy interpreter: `kernel.interpret[grid](...)`, or any launch with TILECC_INTERPRET=1.

Arguments are NumPy arrays (CPU torch tensors and GPU arrays are copied to the host and
back, with the memory between a strided view's elements).  The kernel is specialized and passed through the same frontend and passes as
for the GPU, then each program of the grid runs in turn on the IR.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tilecc.interpreter.evaluate import Pointer, Program
from tilecc.runtime import specialize as SP

__all__ = ["run_interpreted"]


def _extent(shape, strides, itemsize: int) -> int:
    """Elements from an array's first element to its last (inclusive), counted in its
    element size: what a kernel given its pointer and strides may reach."""
    if any(s < 0 for s in strides) or any(s % itemsize for s in strides):
        raise TypeError("the interpreter needs arrays with positive, element-aligned strides")
    if not all(shape):
        return 0
    return 1 + sum((n - 1) * s // itemsize for n, s in zip(shape, strides))


def _flat_memory(arr: np.ndarray) -> np.ndarray:
    """The memory an array spans, as a flat writable view starting at its first element."""
    if arr.flags.c_contiguous or arr.flags.f_contiguous:
        return arr.reshape(-1, order="A")
    extent = _extent(arr.shape, arr.strides, arr.itemsize)
    return np.lib.stride_tricks.as_strided(arr, shape=(extent,), strides=(arr.itemsize,))


def _to_host(x: Any) -> tuple[Any, Callable[[], None] | None]:
    """A NumPy view of an array argument, and how to write results back (if copied).
    A device array is copied with all the memory it spans, so that a strided view keeps
    its strides on the host (the kernel computes addresses with them) and what the
    kernel writes between its elements, as it would on the GPU, is written back too."""
    if isinstance(x, np.ndarray):
        return x, None
    mod = type(x).__module__ or ""
    if mod.startswith("torch"):
        if x.device.type == "cpu":
            return x.detach().numpy(), None
        import torch

        size = x.element_size()
        strides = tuple(s * size for s in x.stride())
        span = x.detach().as_strided((_extent(x.shape, strides, size),), (1,))
        flat = span.cpu().numpy()
        return (np.lib.stride_tricks.as_strided(flat, x.shape, strides),
                lambda: span.copy_(torch.from_numpy(flat)))
    if mod.startswith("cupy"):
        import cupy

        span = cupy.ndarray((_extent(x.shape, x.strides, x.itemsize),), x.dtype, x.data,
                            strides=(x.itemsize,))
        flat = span.get()
        return np.lib.stride_tricks.as_strided(flat, x.shape, x.strides), lambda: span.set(flat)
    info = SP.array_info(x)
    if info is not None:
        raise TypeError(f"the interpreter cannot read arrays of type {type(x).__name__}; "
                        "pass NumPy arrays")
    return x, None


def run_interpreted(jit_fn, grid, args: tuple, kwargs: dict) -> None:
    values, options = jit_fn.bind(args, dict(kwargs))
    writebacks = []
    for name, v in list(values.items()):
        host, back = _to_host(v)
        values[name] = host
        if back is not None:
            writebacks.append(back)
    specs, _ = jit_fn.specs_for(values)
    kernel, _ = jit_fn.lower(specs, "cuda", options.get("num_warps", 4), debug=True,
                             num_stages=options.get("num_stages"))
    from tilecc.runtime.launch import normalize_grid

    grid = normalize_grid(grid({**values, **options}) if callable(grid) else grid)
    env: dict[int, object] = {}
    for p in kernel.params:
        if p.value is None:
            continue
        v = values[p.name]
        if p.value.dtype.is_ptr():
            env[p.value.id] = Pointer(_flat_memory(v), np.int64(0), p.name)
        else:
            env[p.value.id] = p.value.dtype.to_numpy().type(v)
    with np.errstate(all="ignore"):
        for z in range(grid[2]):
            for y in range(grid[1]):
                for x in range(grid[0]):
                    Program(kernel, (x, y, z), grid, env).run()
    for back in writebacks:
        back()
