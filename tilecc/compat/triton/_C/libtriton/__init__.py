"""`triton._C.libtriton`: `nvidia.cublas.CublasLt` and `amd.hipblas.HipblasLt`, Triton's
bindings of cuBLASLt and hipBLASLt, which its tutorials use as the library baseline."""

from . import amd, nvidia

__all__ = ["amd", "nvidia"]
