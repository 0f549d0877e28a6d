"""`triton.tools.tensor_descriptor` under the compatibility mode: the host-side
`TensorDescriptor` (a tensor with the block shape a kernel reads it in), so that libraries
that import it load.

tilecc does not take host-side descriptors as kernel arguments yet: a launch given one
raises a TypeError that says to pass the tensor with its shape and strides and make the
descriptor in the kernel (`tl.make_tensor_descriptor`), which tilecc supports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class TensorDescriptor:
    base: Any
    shape: list
    strides: list
    block_shape: list
    padding: str = "zero"

    def __post_init__(self) -> None:
        if len(self.shape) != len(self.strides) or len(self.shape) != len(self.block_shape):
            raise ValueError("TensorDescriptor: shape, strides and block_shape need one entry "
                             f"per dimension, got {self.shape}, {self.strides}, "
                             f"{self.block_shape}")
        if self.strides and self.strides[-1] != 1:
            raise ValueError("TensorDescriptor: the last dimension must be contiguous "
                             f"(stride 1), got strides {self.strides}")
        if self.padding not in ("zero", "nan"):
            raise ValueError(f"TensorDescriptor: padding is 'zero' or 'nan', got "
                             f"{self.padding!r}")

    @staticmethod
    def from_tensor(tensor: Any, block_shape: list, padding: str = "zero") -> TensorDescriptor:
        return TensorDescriptor(tensor, list(tensor.shape), list(tensor.stride()),
                                list(block_shape), padding)
