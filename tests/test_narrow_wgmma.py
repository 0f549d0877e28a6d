"""Products on Hopper's warpgroup MMA that ran on mma.sync before: 32 columns wide
(wgmma.m64n32), as head dims of 32 and `BV = 32` blocks of linear-attention libraries
tile them — B one 64-byte row of N (N-major B in a 64-byte swizzle atom,
`passes.dot.operand_place`) or 32 rows of K (K-major B) — and fp32 at tf32 precision
(wgmma.m64nNk8.tf32, B K-major only, as for fp8), whose tensor cores read the top 19 bits
of each fp32 operand (PTX: the low 13 bits truncated), as Triton's Hopper products do.
Checked in the source, on the interpreter against NumPy, compiled by NVRTC, and on the
GPU, exactly (small integers: every sum exact in fp32)."""

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
def narrow_product(a_ptr, b_ptr, c_ptr, M, K, BM: tl.constexpr, BN: tl.constexpr,
                   BK: tl.constexpr, B_COLUMNS: tl.constexpr):
    """c (M x BN, fp32) = a (M x K) @ b (K x BN); b stored by columns (K contiguous: a
    K-major B) where B_COLUMNS, else by rows (an N-major B)."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :],
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        if B_COLUMNS:
            b = tl.load(b_ptr + rk[:, None] + rn[None, :] * K, mask=rk[:, None] < K, other=0.0)
        else:
            b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :], mask=rk[:, None] < K,
                        other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc, mask=rm[:, None] < M)


# (M, K, BM, BK, warps, stages): ragged M and K, two warpgroups, no pipeline
CASES = [(100, 96, 64, 32, 4, 2), (200, 256, 128, 64, 8, 3), (64, 128, 64, 128, 4, 1)]
TYPES = ["fp16", "bf16", "fp8e4nv", "fp32"]


def _sig(dtype: str, BM: int, BK: int, columns: bool) -> str:
    return f"*{dtype}:16,*{dtype}:16,*fp32:16,i32,i32:16,{BM},32,{BK},{columns}"


def _operands(M: int, K: int, seed: int):
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, (M, K)).astype(np.float32)
    b = rng.integers(-3, 4, (K, 32)).astype(np.float32)
    return a, b


@pytest.mark.parametrize("columns", [False, True])
@pytest.mark.parametrize("dtype", TYPES)
def test_hopper_runs_32_columns_on_wgmma(dtype, columns) -> None:
    if dtype.startswith("fp8") and not columns:
        pytest.skip("fp8's wgmma reads B K-major only: an N-major B is transposed first")
    # (an N-major fp32 B is staged K-major too, by each thread from its own copies)
    M, K, BM, BK, warps, stages = CASES[1]  # (fp8's K of 32 bytes a K step takes BK 64)
    src = narrow_product.source(_sig(dtype, BM, BK, columns), arch="sm_90a", num_warps=warps,
                                num_stages=stages)
    header = src.split("#include")[0]
    shape = {"fp8e4nv": "m64n32k32", "fp32": "m64n32k8"}.get(dtype, "m64n32k16")
    assert f"wgmma.{shape}" in header and "mma.sync" not in header, header


@pytest.mark.parametrize("columns", [False, True])
def test_interpreter_narrow_product(columns) -> None:
    M, K, BM, BK, _, _ = CASES[0]
    a, b = _operands(M, K, seed=1)
    stored = np.ascontiguousarray(b.T) if columns else b
    c = np.full((M, 32), 7, np.float32)
    narrow_product.interpret[(tilecc.cdiv(M, BM),)](a.astype(np.float16),
                                                    stored.astype(np.float16), c, M, K, BM=BM,
                                                    BN=32, BK=BK, B_COLUMNS=columns)
    np.testing.assert_array_equal(c, a @ b)


@pytest.mark.parametrize("dtype", TYPES)
def test_narrow_products_compile_cleanly(dtype) -> None:
    require_cuda_compiler()
    for M, K, BM, BK, warps, stages in CASES:
        for columns in (False, True):
            assert_clean_compile(narrow_product, _sig(dtype, BM, BK, columns), "cuda", "sm_90a",
                                 num_warps=warps, num_stages=stages)


@pytest.mark.gpu
@pytest.mark.parametrize("columns", [False, True])
@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("M,K,BM,BK,warps,stages", CASES)
def test_gpu_narrow_product(M, K, BM, BK, warps, stages, dtype, columns) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    if dtype.startswith("fp8") and torch.cuda.get_device_capability() < (8, 9):
        pytest.skip("fp8e4nv needs sm_89 or later (as in Triton)")
    t = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp8e4nv": torch.float8_e4m3fn,
         "fp32": torch.float32}[dtype]
    a, b = _operands(M, K, seed=M + K)
    stored = np.ascontiguousarray(b.T) if columns else b
    c = torch.full((M, 32), 7.0, device="cuda")
    narrow_product[(tilecc.cdiv(M, BM),)](torch.from_numpy(a).cuda().to(t),
                                          torch.from_numpy(stored).cuda().to(t), c, M, K,
                                          BM=BM, BN=32, BK=BK, B_COLUMNS=columns,
                                          num_warps=warps, num_stages=stages)
    np.testing.assert_array_equal(c.cpu().numpy(), a @ b)


@pytest.mark.gpu
@pytest.mark.parametrize("columns", [False, True])
def test_gpu_tf32_operands_truncated_as_hopper_reads_them(columns) -> None:
    """1 + 3 * 2**-12 is 1 to a truncating tf32 and 1 + 2**-10 rounded to nearest (mma.sync's
    cvt.rna, the interpreter's): on Hopper each of K = 96 ones of A times ones of B sums to
    exactly 96, as Triton's wgmma products give."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("needs an sm_90 device")
    M, K, BM, BK = 64, 96, 64, 32
    a = np.full((M, K), 1 + 3 * 2.0 ** -12, np.float32)
    b = np.ones((K, 32), np.float32)
    c = torch.zeros((M, 32), device="cuda")
    narrow_product[(1,)](torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), c, M, K,
                         BM=BM, BN=32, BK=BK, B_COLUMNS=columns, num_warps=4, num_stages=2)
    np.testing.assert_array_equal(c.cpu().numpy(), np.full((M, 32), 96, np.float32))
