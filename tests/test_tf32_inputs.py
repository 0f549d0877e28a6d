"""fp32 products at tf32 precision (Triton's default) read tf32's bits of each operand, the
rest dropped (truncated toward zero): the tensor cores do so with fp32 bits as they are,
mma.sync's as wgmma's, and Triton feeds both so (on an H200 its results equal the
truncation's at 2, 4 and 8 warps).  mma.sync was fed `cvt.rna` roundings before, unlike
Triton and unlike the wgmma path, and the interpreter rounded alike.  Checked on the
interpreter, in the source, compiled by NVRTC, and on the GPU, with operands whose rounding
and truncation differ."""

from __future__ import annotations

import numpy as np
import pytest

import tilecc
import tilecc.language as tl

try:
    from conftest_compilers import require_cuda_compiler
    from test_compile_kernels import assert_clean_compile
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import require_cuda_compiler
    from tests.test_compile_kernels import assert_clean_compile


@tilecc.jit
def product(a_ptr, b_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    m, n, k = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + m[:, None] * K + k[None, :])
    b = tl.load(b_ptr + k[:, None] * N + n[None, :])
    tl.store(out_ptr + m[:, None] * N + n[None, :], tl.dot(a, b))


M, N, K = 64, 64, 16
SIG = f"*fp32:16,*fp32:16,*fp32:16,{M},{N},{K}"
# beyond tf32's 10 mantissa bits: 0.75 or 0.625 of its ulp (rounded up, truncated down), or
# half (a tie: rounded away from zero); either sign
VALUES = np.array([1 + 3 * 2.0**-12, -(1 + 3 * 2.0**-12), 1 + 2.0**-11, 3 + 5 * 2.0**-12,
                   -(2 + 2.0**-10 + 2.0**-12), 0.5 + 3 * 2.0**-13], np.float32)


def _operands():
    """A holds VALUES; B is the identity's first K columns: A @ B is A as the tensor cores
    read it, exactly."""
    a = np.resize(VALUES, M * K).reshape(M, K)
    b = np.zeros((K, N), np.float32)
    b[np.arange(K), np.arange(K)] = 1.0
    return a, b


def _truncated(x: np.ndarray) -> np.ndarray:
    return (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


def test_operands_tell_truncation_from_rounding() -> None:
    rounded = ((VALUES.view(np.uint32) + np.uint32(0x1000)) & np.uint32(0xFFFFE000))
    assert (rounded.view(np.float32) != _truncated(VALUES)).all()


def test_interpreter_truncates_tf32_operands() -> None:
    a, b = _operands()
    out = np.zeros((M, N), np.float32)
    product.interpret[(1,)](a, b, out, M=M, N=N, K=K)
    np.testing.assert_array_equal(out[:, :K], _truncated(a))
    np.testing.assert_array_equal(out[:, K:], 0)


@pytest.mark.parametrize("warps", [2, 4, 8])
def test_operands_go_to_the_tensor_cores_as_they_are(warps) -> None:
    """mma.sync (2 and 8 warps here) and wgmma (4) alike: no conversion of the operands."""
    src = product.source(SIG, arch="sm_90a", num_warps=warps)
    unit = "wgmma" if warps == 4 else "mma.sync"
    assert f"(fp32): {unit}" in src.replace("\n//  ", "")
    body = src.split("#include")[-1]
    assert "tf32" in body and "cvt.rna" not in body and "to_tf32" not in body
    require_cuda_compiler()
    for arch in ("sm_90a", "sm_80"):
        assert_clean_compile(product, SIG, "cuda", arch, num_warps=warps)


@pytest.mark.gpu
@pytest.mark.parametrize("warps", [2, 4, 8])
def test_gpu_tf32_operands_truncated(warps) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    a, b = _operands()
    out = torch.zeros((M, N), device="cuda")
    product[(1,)](torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), out, M=M, N=N, K=K,
                  num_warps=warps)
    got = out.cpu().numpy()
    np.testing.assert_array_equal(got[:, :K], _truncated(a))
    np.testing.assert_array_equal(got[:, K:], 0)
