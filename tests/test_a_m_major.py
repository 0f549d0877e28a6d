"""A products' A operand laid out along M (a block of A^T loaded from a row-major A^T, as
chunk-parallel kernels load K^T): on Hopper, staged M-major for wgmma's 16-bit
instructions, which read it transposed from shared memory (`passes.dot.a_m_major`; the
tile laid out as an N-major B's), copied 16 bytes at a time along M by the pipeline.
Before, each element went to a K-major tile on its own and the load stayed out of the
pipeline.  Checked in the source, compiled by NVRTC, on the interpreter against NumPy,
and on the GPU against NumPy."""

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
def at_b_kernel(at_ptr, b_ptr, c_ptr, M, N, K, SCALE: tl.constexpr, BM: tl.constexpr,
                BN: tl.constexpr, BK: tl.constexpr):
    # C = A B with A given as A^T (K x M, row-major): its block is read along M; SCALE
    # computes the operand from the load (then staged by the threads, not copied)
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kk = k * BK + rk
        a = tl.load(at_ptr + kk[None, :] * M + rm[:, None],
                    mask=(kk[None, :] < K) & (rm[:, None] < M), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * N + rn[None, :],
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        if SCALE:
            a = (a * 2).to(b.dtype)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def _sig(dt: str, bm: int, bn: int, bk: int, scale: int = 0) -> str:
    return f"*{dt}:16,*{dt}:16,*fp32:16,i32:16,i32:16,i32:16,{scale},{bm},{bn},{bk}"


# (BM, BN, BK, warps): one warpgroup and two, one 64-row atom of M per instruction and two
SHAPES = [(64, 64, 64, 4), (128, 64, 32, 4), (128, 128, 64, 8), (256, 64, 32, 8)]


@pytest.mark.parametrize("bm,bn,bk,warps", SHAPES)
@pytest.mark.parametrize("dt", ["fp16", "bf16"])
def test_a_along_m_is_staged_m_major_and_copied(dt, bm, bn, bk, warps) -> None:
    src = at_b_kernel.source(_sig(dt, bm, bn, bk), arch="sm_90a", num_warps=warps,
                             num_stages=3)
    notes = " ".join(src.split("#include")[0].replace("//", " ").split())
    # (B, a box of a strided tensor, by TMA; A, which TMA cannot place M-major, by cp.async)
    assert "a, b of tl.dot copied into shared memory with TMA and cp.async" in notes
    assert "_ss<1, 1>(" in src  # B N-major, A M-major
    # each instruction's 64 rows of M are one atom of K rows of 128 bytes
    assert f" / 64 * {bk * 128}, {bk * 128}, 1024, 1)" in src
    require_cuda_compiler()
    assert_clean_compile(at_b_kernel, _sig(dt, bm, bn, bk), "cuda", "sm_90a",
                         num_warps=warps, num_stages=3)


def test_a_computed_along_m_is_staged_by_the_threads() -> None:
    """`(a * 2)` of the load: the threads store it to the M-major tile, 16 bytes a store
    along M (read ahead by the pipeline); and sm_80 keeps A K-major (mma.sync)."""
    src = at_b_kernel.source(_sig("fp16", 128, 64, 32, scale=1), arch="sm_90a", num_warps=4,
                             num_stages=3)
    assert "_ss<1, 1>(" in src
    assert "a (read back for the product's operands)" in \
        " ".join(src.split("#include")[0].replace("//", " ").split())
    old = at_b_kernel.source(_sig("fp16", 128, 64, 32), arch="sm_80", num_warps=4,
                             num_stages=3)
    assert "wgmma" not in old
    require_cuda_compiler()
    assert_clean_compile(at_b_kernel, _sig("fp16", 128, 64, 32, scale=1), "cuda", "sm_90a",
                         num_warps=4, num_stages=3)


def _operands(m: int, n: int, k: int, dt, rng):
    at = rng.integers(-3, 4, (k, m)).astype(dt)
    b = rng.integers(-3, 4, (k, n)).astype(dt)
    return at, b


@pytest.mark.parametrize("scale", [0, 1])
def test_interpreter_matches_numpy(scale) -> None:
    rng = np.random.default_rng(0)
    m, n, k = 80, 48, 70
    at, b = _operands(m, n, k, np.float16, rng)
    c = np.zeros((m, n), np.float32)
    at_b_kernel.interpret[(tilecc.cdiv(m, 64), tilecc.cdiv(n, 64))](
        at, b, c, m, n, k, SCALE=scale, BM=64, BN=64, BK=32)
    np.testing.assert_array_equal(c, (at.T.astype(np.float64) * (1 + scale)) @ b)


@pytest.mark.gpu
@pytest.mark.parametrize("bm,bn,bk,warps", SHAPES)
@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
@pytest.mark.parametrize("stages,scale", [(3, 0), (1, 0), (3, 1)])
def test_gpu_matches_numpy(dt, bm, bn, bk, warps, stages, scale) -> None:
    """Ragged M, N and K (masked copies); small integers, so the sums are exact."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    rng = np.random.default_rng(bm + bn + bk + warps)
    m, n, k = 2 * bm + 16, bn + 24, 3 * bk + 16
    at, b = _operands(m, n, k, np.float32, rng)
    t = getattr(torch, dt)
    at_d, b_d = (torch.from_numpy(x).cuda().to(t) for x in (at, b))
    c = torch.zeros((m, n), device="cuda", dtype=torch.float32)
    at_b_kernel[(tilecc.cdiv(m, bm), tilecc.cdiv(n, bn))](
        at_d, b_d, c, m, n, k, SCALE=scale, BM=bm, BN=bn, BK=bk, num_warps=warps,
        num_stages=stages)
    want = (at.T.astype(np.float64) * (1 + scale)) @ b
    np.testing.assert_array_equal(c.cpu().numpy(), want)
