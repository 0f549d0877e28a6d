"""`triton._C.libtriton.nvidia`: only `cublas.CublasLt` (see blas.py)."""

from types import SimpleNamespace

from .blas import BlasLt


class CublasLt(BlasLt):
    """cuBLASLt's matrix products, as Triton binds them."""


cublas = SimpleNamespace(CublasLt=CublasLt)
