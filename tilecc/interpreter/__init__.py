"""The NumPy interpreter: `kernel.interpret[grid](...)`, or any launch with TILECC_INTERPRET=1.

Arguments are NumPy arrays (CPU torch tensors are viewed; GPU arrays are copied to the host
and back with all the memory they span, so views keep their strides).  The kernel is
specialized and passed through the same frontend and passes as for the GPU, then each
program of the grid runs in turn on the IR (a run of more than a few seconds shows its
progress on stderr: `interpreter/progress.py`).
"""

from __future__ import annotations

import copy
from typing import Any, Callable

import numpy as np

from tilecc.errors import CompilationError, LaunchError
from tilecc.interpreter.addresses import AddressSpace
from tilecc.interpreter.evaluate import SPACE, Pointer, Program
from tilecc.interpreter.progress import Progress
from tilecc.language import dtypes as D
from tilecc.transpiler import fp8
from tilecc.transpiler import specialize as SP
from tilecc.transpiler.grid import normalize_grid
from tilecc.transpiler.target import ALL_FP8

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


def _device_layout(x: Any) -> tuple[int, int, tuple, tuple, np.dtype] | None:
    """(device, address of the first element, shape, byte strides, NumPy dtype) of a CUDA
    tensor or CuPy array; None for anything else."""
    mod = type(x).__module__ or ""
    if mod.startswith("torch") and x.device.type != "cpu":
        import torch

        dtype = _torch_numpy_dtype(x.dtype)
        return (x.device.index or 0, x.data_ptr(), tuple(x.shape),
                tuple(s * x.element_size() for s in x.stride()), dtype)
    if mod.startswith("cupy"):
        return x.device.id, x.data.ptr, x.shape, x.strides, x.dtype
    return None


def _torch_numpy_dtype(torch_dtype) -> np.dtype:
    """The NumPy dtype of a torch dtype; bfloat16 (which torch cannot hand to NumPy) as
    ml_dtypes' bfloat16, the one the interpreter computes with."""
    return SP._torch_dtype(torch_dtype).to_numpy()


def _torch_host_view(x) -> np.ndarray:
    """A NumPy view (same memory) of a CPU torch tensor; bfloat16 and the float8 types
    through their bit patterns (as ml_dtypes' types), since `Tensor.numpy()` refuses them."""
    import torch

    x = x.detach()
    if x.dtype.is_floating_point and x.element_size() < 4 and x.dtype != torch.float16:
        bits = torch.int16 if x.element_size() == 2 else torch.uint8
        return x.view(bits).numpy().view(_torch_numpy_dtype(x.dtype))
    return x.numpy()


def _mirror_device_arrays(values: dict[str, Any]) -> list[Callable[[], None]]:
    """Replace device arrays in `values` by host arrays with the same strides, over copies
    of the memory they span; return the copies back.  Arguments whose spans overlap (one
    buffer passed twice, interleaved views) share one host copy, so that what the kernel
    writes through one is what the others read, and nothing is written back twice."""
    layouts = {n: _device_layout(v) for n, v in values.items()}
    layouts = {n: lay for n, lay in layouts.items() if lay is not None}
    if not layouts:
        return []
    spans = []  # [device, start, end, names]: merged where they overlap
    for name, (dev, ptr, shape, strides, dtype) in sorted(layouts.items(),
                                                          key=lambda kv: kv[1][:2]):
        end = ptr + _extent(shape, strides, dtype.itemsize) * dtype.itemsize
        if spans and spans[-1][0] == dev and ptr < spans[-1][2]:
            spans[-1][2] = max(spans[-1][2], end)
            spans[-1][3].append(name)
        else:
            spans.append([dev, ptr, end, [name]])
    import cupy

    backs = []
    for dev, start, end, names in spans:
        if end == start:  # empty arrays: nothing to read or write
            for n in names:
                values[n] = np.empty(layouts[n][2], layouts[n][4])
            continue
        with cupy.cuda.Device(dev):
            cupy.cuda.runtime.deviceSynchronize()  # the frameworks' queued work is done
            owners = [values[n] for n in names]
            memory = cupy.cuda.UnownedMemory(start, end - start, owners, dev)
            on_device = cupy.ndarray((end - start,), cupy.uint8,
                                     cupy.cuda.MemoryPointer(memory, 0))
            host = on_device.get()
        for n in names:
            _, ptr, shape, strides, dtype = layouts[n]
            values[n] = np.ndarray(shape, dtype, buffer=host, offset=ptr - start, strides=strides)
        backs.append(lambda d=dev, a=on_device, h=host: _copy_back(d, a, h))
    return backs


def _copy_back(device: int, on_device, host: np.ndarray) -> None:
    import cupy

    with cupy.cuda.Device(device):
        on_device.set(host)
        cupy.cuda.runtime.deviceSynchronize()  # before the caller's next work, on any stream


def _check_fp8_arguments(jit_fn, values: dict) -> None:
    """An array reinterpreted as an fp8 format the interpreter does not have (Triton's
    tl.float8e4b15, which NumPy cannot hold) is refused as a GPU compile refuses it, at the
    kernel's `def`, before its memory is read."""
    for v in values.values():
        d = v.dtype if _is_wrapper(v) else None
        if isinstance(d, D.dtype) and d.is_fp8() and d.short not in ALL_FP8:
            from tilecc.transpiler.frontend import parse_function

            pf = parse_function(jit_fn.fn)
            raise CompilationError(fp8.unsupported_message(d.short, ALL_FP8, "the interpreter"),
                                   pf.loc(pf.funcdef.name))


def _to_host(x: Any) -> Any:
    """A NumPy view of a host array argument (device arrays: _mirror_device_arrays)."""
    if isinstance(x, np.ndarray):
        return x
    if _is_wrapper(x):  # reinterpret(tensor, dtype): the base's memory read as `dtype`
        base = _to_host(x.base)
        if isinstance(base, np.ndarray):
            return base.view(x.dtype.to_numpy())
    mod = type(x).__module__ or ""
    if mod.startswith("torch") and x.device.type == "cpu":
        return _torch_host_view(x)
    if SP.array_info(x) is not None:
        raise LaunchError(f"the interpreter cannot read arrays of type {type(x).__name__}: "
                          "pass NumPy arrays (or CPU torch tensors)")
    return x


def _is_wrapper(x: Any) -> bool:
    """A TensorWrapper (`reinterpret`'s): a `base` array and a language `dtype`."""
    return hasattr(x, "base") and hasattr(getattr(x, "dtype", None), "to_numpy") and \
        type(x).__name__ == "TensorWrapper"


def _with_descriptor_parts(specs, values: dict[str, Any]) -> dict[str, Any]:
    """`values` and, by parameter name, what each descriptor argument is passed as (its
    base array, shape and strides: `specialize.descriptor_specs`)."""
    out = dict(values)
    for i, spec in enumerate(specs):
        if spec.descriptor is not None:
            name = spec.descriptor.param
            base, ints = SP.descriptor_arguments(name, values[name])
            parts = specs[i:i + 1 + 2 * spec.descriptor.ndim]
            out.update(zip((s.name for s in parts), [base, *ints]))
    return out


def run_interpreted(jit_fn, grid, args: tuple, kwargs: dict) -> None:
    values, options = jit_fn.bind(args, dict(kwargs))
    jit_fn.options(**options)  # checked as a launch on a GPU checks them
    descriptors = {n: v for n, v in values.items() if SP.is_host_descriptor(v)}
    for name, d in descriptors.items():  # their tensors are mirrored with the arrays
        values[name] = d.base
    _check_fp8_arguments(jit_fn, values)
    writebacks = _mirror_device_arrays(values)
    for name, v in list(values.items()):
        values[name] = _to_host(v)
    for name, d in descriptors.items():  # the same descriptor, over the host copy
        host = copy.copy(d)
        host.base = values[name]
        values[name] = host
    specs, _ = jit_fn.specs_for(values)
    kernel, _ = jit_fn.lower_to_interpret(specs, options.get("num_warps"),
                                          options.get("num_stages"),
                                          options.get("enable_fp_fusion"))
    fp8.check_supported(kernel, ALL_FP8, "the interpreter")
    grid = normalize_grid(grid({**values, **options}) if callable(grid) else grid)
    env: dict[int, object] = {}
    values = _with_descriptor_parts(specs, values)
    for p in kernel.params:
        if p.value is None:
            continue
        v = values[p.name]
        if p.value.dtype.is_ptr():
            env[p.value.id] = Pointer(_flat_memory(v), np.int64(0), p.name)
        else:
            env[p.value.id] = p.value.dtype.to_numpy().type(v)
    # where integers cast to pointers find their arrays (interpreter/addresses.py)
    env[SPACE] = AddressSpace([p.buffer for p in env.values() if isinstance(p, Pointer)])
    progress = Progress(jit_fn.fn.__name__, grid[0] * grid[1] * grid[2])
    done = 0
    try:
        with np.errstate(all="ignore"):
            for z in range(grid[2]):
                for y in range(grid[1]):
                    for x in range(grid[0]):
                        Program(kernel, (x, y, z), grid, env).run()
                        done += 1
                        progress.step(done)
    finally:
        progress.close()
    for back in writebacks:
        back()
