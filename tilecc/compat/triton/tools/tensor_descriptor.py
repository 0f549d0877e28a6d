"""`triton.tools.tensor_descriptor` under the compatibility mode: tilecc's host-side
`TensorDescriptor` (`tilecc/runtime/tensor_descriptor.py`)."""

from tilecc.runtime.tensor_descriptor import TensorDescriptor  # noqa: F401
