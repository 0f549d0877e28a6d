"""The vendor BLAS products of Triton's C++ extension, through PyTorch: `torch.matmul` (and
`torch._scaled_mm` for fp8) call cuBLASLt / hipBLASLt themselves, so the baseline a
tutorial compares with is the same library.  Triton's semantics: B is given N x K (its
rows are the columns of the product) and C (or D) is written in place."""

from __future__ import annotations


class BlasLt:
    """Triton's `CublasLt(workspace)` / `HipblasLt(workspace)`: `matmul(A, B, C)` writes
    C = A @ B.T; `gemm(A, B, C, D, alpha, beta)` writes D = alpha * A @ B.T + beta * C.
    The workspace is kept (the library that PyTorch calls manages its own)."""

    def __init__(self, workspace) -> None:
        self.workspace = workspace

    def matmul(self, a, b, c) -> None:
        c.copy_(_product(a, b, c.dtype))

    def gemm(self, a, b, c, d, alpha: float, beta: float) -> None:
        product = _product(a, b, d.dtype).float() * alpha
        d.copy_((product + beta * c.float()).to(d.dtype))


def _product(a, b, out_dtype):
    import torch

    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(f"A ({tuple(a.shape)}) and B ({tuple(b.shape)}) must be M x K and "
                         "N x K")
    if a.dtype.itemsize == 1 and a.dtype.is_floating_point:  # fp8: the scaled product
        one = torch.ones((), device=a.device, dtype=torch.float32)
        return torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=out_dtype)
    return torch.matmul(a, b.t()).to(out_dtype)
