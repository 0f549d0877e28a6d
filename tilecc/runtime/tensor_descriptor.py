"""The host-side tensor descriptor: a tensor with the block shape a kernel reads and writes
it in, passed to a kernel as one argument (Triton's `triton.tools.tensor_descriptor.
TensorDescriptor`; under the compatibility mode that import gives this class).

    desc = TensorDescriptor.from_tensor(a, block_shape=[128, 64])
    kernel[grid](desc, ...)          # in the kernel: desc.load([m, k]), desc.store(...)

A launch passes it as its base pointer, shape (i32) and strides (i64): the kernel is
specialized on its element type, block shape and padding.  Triton's checks are made when it
is created (rank 1 to 5, block dims powers of 2, a contiguous last dim, the padding) and at
launch (a 16-byte aligned base, strides but the last that are multiples of 16 bytes).
Triton's own class is accepted at launch too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tilecc.transpiler.specialize import check_block_shape, descriptor_problem


@dataclass
class TensorDescriptor:
    base: Any
    shape: list
    strides: list
    block_shape: list
    padding: str = "zero"

    def __post_init__(self) -> None:
        problem = descriptor_problem(self.shape, self.strides, self.block_shape, self.padding)
        if problem:
            raise ValueError(f"TensorDescriptor: {problem}")
        check_block_shape(self.block_shape)
        floating = getattr(getattr(self.base, "dtype", None), "is_floating_point", None)
        if self.padding == "nan" and floating is False:  # torch's dtypes say it
            raise ValueError("TensorDescriptor: padding 'nan' needs a floating-point tensor, "
                             f"got {self.base.dtype}")

    @staticmethod
    def from_tensor(tensor: Any, block_shape: list, padding: str = "zero") -> TensorDescriptor:
        """The descriptor of a whole tensor (torch: `stride()`; NumPy, CuPy: byte strides
        divided by the element size)."""
        strides = tensor.stride() if callable(getattr(tensor, "stride", None)) else \
            [s // tensor.itemsize for s in tensor.strides]
        return TensorDescriptor(tensor, list(tensor.shape), list(strides), list(block_shape),
                                padding)
