"""`triton._C.libtriton.amd`: only `hipblas.HipblasLt` (see blas.py)."""

from types import SimpleNamespace

from .blas import BlasLt


class HipblasLt(BlasLt):
    """hipBLASLt's matrix products, as Triton binds them."""


hipblas = SimpleNamespace(HipblasLt=HipblasLt)
