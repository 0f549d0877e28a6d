"""Where kernels run in a check: GPU detection, and array buffers with guard zones that
are copied, views and all, to CuPy or torch and back.

A `Buffer` holds one array argument's memory as a flat host array: a 64-byte guard, the
array's own span (gaps of a strided view included) starting at the same address modulo 16
as the caller's array — so the kernel is specialized the same way (16-byte alignment) —
and a 64-byte guard after it.  After a run, everything outside the array's elements must
be unchanged: that is how a check notices a kernel writing into the gaps of a strided view
or past either end of an array on the GPU (the interpreter reports those itself).
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["gpu_available", "gpu_frameworks", "Buffer", "to_device", "from_device"]

GUARD_BYTES = 64


@functools.lru_cache(maxsize=None)
def gpu_available() -> bool:
    """True when tilecc can launch on a CUDA GPU here: CuPy is installed and sees a device
    (tilecc's CUDA launcher goes through CuPy, whichever framework owns the arrays)."""
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


@functools.lru_cache(maxsize=None)
def gpu_frameworks() -> tuple[str, ...]:
    """The array frameworks usable on the GPU here, in order of preference."""
    if not gpu_available():
        return ()
    found = ["cupy"]
    try:
        import torch

        if torch.cuda.is_available():
            found.append("torch")
    except Exception:
        pass
    return tuple(found)


def supports(framework: str, dtype) -> bool:
    """CuPy has no bfloat16 (nor any ml_dtypes type) arrays; torch has bfloat16."""
    dt = np.dtype(dtype)
    if framework == "cupy":
        return dt.isbuiltin != 2
    return dt.isbuiltin != 2 or dt.name == "bfloat16"


def _aligned_empty(n: int, dtype: np.dtype) -> np.ndarray:
    """A flat array of n elements whose first element is 64-byte aligned."""
    raw = np.empty(n * dtype.itemsize + 64, np.uint8)
    skip = (-raw.ctypes.data) % 64
    return raw[skip: skip + n * dtype.itemsize].view(dtype)


def _extent(shape, strides_el) -> int:
    if any(n == 0 for n in shape):
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(shape, strides_el))


class Buffer:
    """One array argument, re-homed in a guarded flat buffer (see the module docstring)."""

    def __init__(self, array: np.ndarray):
        a = np.asarray(array)
        if any(s < 0 for s in a.strides) or any(s % a.itemsize for s in a.strides):
            raise ValueError("kernel array arguments need non-negative strides that are whole "
                             f"elements; got strides {a.strides} for itemsize {a.itemsize}")
        self.dtype = a.dtype
        self.shape = a.shape
        self.strides = tuple(s // a.itemsize for s in a.strides)  # in elements
        guard = max(1, GUARD_BYTES // a.itemsize)
        lead = (a.ctypes.data % 16) // a.itemsize
        self.start = guard + lead
        extent = _extent(a.shape, self.strides)
        self.flat = _aligned_empty(self.start + extent + guard, a.dtype)
        self.flat.view(np.uint8)[:] = 0xA5  # guards and unknown gaps: a recognizable pattern
        if extent:
            span = np.lib.stride_tricks.as_strided(a, (extent,), (a.itemsize,))
            self.flat[self.start: self.start + extent] = span
        self.initial = self.flat.copy()

    def view(self, flat: np.ndarray | None = None) -> np.ndarray:
        """The array itself, as a view into `flat` (default: this buffer's host memory)."""
        flat = self.flat if flat is None else flat
        return np.lib.stride_tricks.as_strided(
            flat[self.start:], self.shape, tuple(s * flat.itemsize for s in self.strides))

    def element_mask(self) -> np.ndarray:
        """True at the positions of `flat` that are elements of the array."""
        mask = np.zeros(self.flat.shape, bool)
        if self.view().size:
            self.view(mask)[...] = True
        return mask

    def changed_outside(self, flat: np.ndarray, elements_may_change: bool) -> list[int]:
        """Positions (relative to the array's first element) that changed and should not
        have: outside the array's elements — or anywhere, for an input."""
        now = flat.view(np.uint8).reshape(flat.size, -1)
        before = self.initial.view(np.uint8).reshape(flat.size, -1)
        changed = (now != before).any(axis=1)
        if elements_may_change:
            changed &= ~self.element_mask()
        return [int(i) - self.start for i in np.flatnonzero(changed)[:8]]


# --- CuPy and torch ---------------------------------------------------------------------------

_INT_OF_SIZE = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}


def _torch_dtype(dt: np.dtype):
    import torch

    name = {"bool": "bool"}.get(dt.name, dt.name)
    return getattr(torch, name)


def to_device(buf: Buffer, framework: str):
    """(device flat buffer, device view of the array) on the current GPU."""
    dt = buf.dtype
    if framework == "cupy":
        import cupy

        flat = cupy.asarray(buf.flat)
        view = cupy.ndarray(buf.shape, dt, memptr=flat.data + buf.start * dt.itemsize,
                            strides=tuple(s * dt.itemsize for s in buf.strides))
        return flat, view
    if framework == "torch":
        import torch

        if dt.kind == "b":
            flat = torch.from_numpy(buf.flat.copy()).cuda()
        else:
            bits = torch.from_numpy(buf.flat.view(_INT_OF_SIZE[dt.itemsize]).copy()).cuda()
            flat = bits.view(_torch_dtype(dt))
        view = torch.as_strided(flat, buf.shape, buf.strides, buf.start)
        return flat, view
    raise ValueError(f"unknown GPU framework {framework!r} (use 'cupy' or 'torch')")


def from_device(flat, dtype: np.dtype, framework: str) -> np.ndarray:
    """A device flat buffer back on the host, as `dtype`."""
    dtype = np.dtype(dtype)
    if framework == "cupy":
        import cupy

        return cupy.asnumpy(flat)
    import torch

    if dtype.kind == "b":
        return flat.cpu().numpy()
    ints = flat.view(getattr(torch, np.dtype(_INT_OF_SIZE[dtype.itemsize]).name))
    return ints.cpu().numpy().view(dtype)


def synchronize(framework: str) -> None:
    if framework == "cupy":
        import cupy

        cupy.cuda.Device().synchronize()
    else:
        import torch

        torch.cuda.synchronize()
