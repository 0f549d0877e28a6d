"""Stand-ins for tensors at a launch, as Triton has them (`triton.runtime.jit`):

    MockTensor(torch.float16)              a dtype (and shape) where a tensor would go:
                                           kernel.warmup() compiles for it, launches nothing
    reinterpret(t, tl.float8e4nv)          a tensor read as another element type of the
                                           same size (TensorWrapper), e.g. fp8 data that
                                           the framework holds as uint8

Both are recognised by what they offer (`data_ptr()` and `dtype`), as Triton recognises
pointer arguments (`tilecc.transpiler.specialize.array_info`).
"""

from __future__ import annotations

from typing import Any


class MockTensor:
    """A tensor that is not there: its dtype (torch's or the language's) and shape, with a
    16-byte aligned address of 0.  `kernel.warmup(MockTensor(torch.float32), ...)`, or a
    torch dtype in its place, compiles what a launch with such a tensor would."""

    @staticmethod
    def wrap_dtype(arg: Any) -> Any:
        """A torch dtype given as an argument stands for a tensor of it."""
        if type(arg).__name__ == "dtype" and type(arg).__module__ == "torch":
            return MockTensor(arg)
        return arg

    def __init__(self, dtype, shape=None):
        self.dtype = dtype
        self.shape = [1] if shape is None else shape

    def stride(self) -> tuple:
        strides = [1]
        for size in reversed(self.shape[1:]):
            strides.append(strides[-1] * size)
        return tuple(reversed(strides))

    @staticmethod
    def data_ptr() -> int:
        return 0  # as Triton: taken to be a multiple of 16

    @staticmethod
    def ptr_range() -> int:
        return 0


class TensorWrapper:
    """`base` read as elements of `dtype` (a language dtype of the same size): what
    `reinterpret` makes.  Launches pass `base`'s memory typed as `dtype`."""

    def __init__(self, base, dtype):
        self.dtype = dtype
        self.base = base
        self.data = getattr(base, "data", None)
        self.device = getattr(base, "device", None)
        self.shape = base.shape

    def data_ptr(self) -> int:
        return self.base.data_ptr()

    def stride(self, *args):
        return self.base.stride(*args)

    def __str__(self) -> str:
        return f"TensorWrapper[{self.dtype}]({self.base})"

    def element_size(self) -> int:
        return self.base.element_size()

    def cpu(self) -> TensorWrapper:
        return TensorWrapper(self.base.cpu(), self.dtype)

    def copy_(self, other: TensorWrapper) -> None:
        self.base.copy_(other.base)

    def clone(self) -> TensorWrapper:
        return TensorWrapper(self.base.clone(), self.dtype)

    def to(self, device) -> TensorWrapper:
        return TensorWrapper(self.base.to(device), self.dtype)

    def new_empty(self, sizes) -> TensorWrapper:
        return TensorWrapper(self.base.new_empty(sizes), self.dtype)


def reinterpret(tensor, dtype):
    """`tensor` read as `dtype`: a TensorWrapper (the tensor itself when `dtype` is the
    type a wrapper's base already has)."""
    if isinstance(tensor, TensorWrapper):
        return tensor.base if dtype == tensor.base.dtype else TensorWrapper(tensor.base, dtype)
    if hasattr(tensor, "data_ptr"):
        return TensorWrapper(tensor, dtype)
    raise TypeError(f"Cannot reinterpret a {type(tensor)}.")
