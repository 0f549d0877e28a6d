"""`tl.dot(a, b.T)` of a loaded block: the load reads the transposed block instead
(passes.transpose), so B streams in K-major, by cp.async or, for a descriptor on sm_90,
by TMA.  Interpreter against NumPy (the interpreter runs the folded IR), what is and is not
folded, the generated copies and their compiles, and the GPU against torch.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tilecc
import tilecc.language as tl
from tilecc.runtime import compiler

from conftest_compilers import require_cuda_compiler, require_hip_compiler
from kernels_ptr import desc_bt_matmul, host_desc_bt_matmul, ptr_bt_matmul


@tilecc.jit
def at_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
              BK: tl.constexpr):
    """C = A^T @ B with A stored K x M: the transposed operand is A."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kk = k * BK + rk
        a = tl.load(a_ptr + kk[:, None] * M + rm[None, :],
                    mask=(kk[:, None] < K) & (rm[None, :] < M), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * N + rn[None, :],
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a.T, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


AT_SIG = "*fp16:16, *fp16:16, *fp32:16, i32:16, i32:16, i32, 64, 64, 32"


@tilecc.jit
def overwrite_then_transpose(x_ptr, a_ptr, out_ptr, N: tl.constexpr):
    """The block is stored over before its transpose is read: the product sees the values
    loaded, not the ones stored (the folded load stays where the load was)."""
    r = tl.arange(0, N)
    offs = r[:, None] * N + r[None, :]
    x = tl.load(x_ptr + offs)
    a = tl.load(a_ptr + offs)
    tl.store(x_ptr + offs, a + 1.0)
    tl.store(out_ptr + offs, tl.dot(a, x.T))


@tilecc.jit
def transpose_read_twice(x_ptr, a_ptr, out_ptr, N: tl.constexpr):
    """The loaded block is read besides its transpose: nothing to fold."""
    r = tl.arange(0, N)
    offs = r[:, None] * N + r[None, :]
    x = tl.load(x_ptr + offs)
    a = tl.load(a_ptr + offs)
    tl.store(out_ptr + offs, tl.dot(a, x.T) + x)


def _source(kernel, signature: str, arch: str = "sm_90a", **options) -> str:
    return kernel.source(signature, arch=arch, **options)


PTR_SIG = "*fp16:16, *fp16:16, *fp32:16, i32, i32, i32, i32:16, i32:16, i32:16, 64, 64, 64"
DESC_SIG = "*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, {bm}, {bn}, {bk}"
HOST_SIG = ("tensordesc<fp16[{bm}, {bk}]>, tensordesc<fp16[{bn}, {bk}]>, "
            "tensordesc<fp16[{bm}, {bn}]>, {bm}, {bn}, {bk}")


# --- the interpreter ------------------------------------------------------------------------------

@settings(max_examples=15, deadline=None)
@given(m=st.integers(1, 40), n=st.integers(1, 40), k=st.integers(1, 50),
       seed=st.integers(0, 2 ** 16))
def test_transposed_operands_match_numpy(m, n, k, seed) -> None:
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (n, k)).astype(np.float16)
    want = a.astype(np.float32) @ b.astype(np.float32).T
    c = np.zeros((m, n), np.float32)
    ptr_bt_matmul.interpret[(tilecc.cdiv(m, 16), tilecc.cdiv(n, 16))](
        a, b, c, m, n, k, k, k, n, BM=16, BN=16, BK=16)
    np.testing.assert_allclose(c, want, rtol=1e-3, atol=1e-3)
    # descriptors: rows of 16-byte multiples (C's too: N padded, B with rows of zeros)
    kp, np_ = -(-k // 8) * 8, -(-n // 8) * 8
    ap = np.zeros((m, kp), np.float16)
    ap[:, :k] = a
    bp = np.zeros((np_, kp), np.float16)
    bp[:n, :k] = b
    c16 = np.zeros((m, np_), np.float16)
    desc_bt_matmul.interpret[(tilecc.cdiv(m, 16), tilecc.cdiv(np_, 16))](
        ap, bp, c16, m, np_, kp, BLOCK_SIZE_M=16, BLOCK_SIZE_N=16, BLOCK_SIZE_K=16)
    np.testing.assert_allclose(c16[:, :n].astype(np.float32), want, rtol=2e-2, atol=2e-2)


def test_a_transposed_a_operand_matches_numpy() -> None:
    rng = np.random.default_rng(3)
    for m, n, k in ((37, 45, 50), (64, 64, 32), (1, 9, 3)):
        a = rng.uniform(-1, 1, (k, m)).astype(np.float16)
        b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
        c = np.zeros((m, n), np.float32)
        at_matmul.interpret[(tilecc.cdiv(m, 16), tilecc.cdiv(n, 16))](
            a, b, c, m, n, k, BM=16, BN=16, BK=16)
        np.testing.assert_allclose(c, a.astype(np.float32).T @ b.astype(np.float32),
                                   rtol=1e-3, atol=1e-3)
    assert "permute axes" not in at_matmul.source(AT_SIG, arch="sm_90a")


def test_a_load_stored_over_before_its_transpose_is_read_keeps_the_loaded_values() -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (16, 16)).astype(np.float32)
    a = rng.uniform(-1, 1, (16, 16)).astype(np.float32)
    out = np.zeros((16, 16), np.float32)
    xx = x.copy()
    overwrite_then_transpose.interpret[(1,)](xx, a, out, N=16)
    np.testing.assert_allclose(out, a @ x.T, rtol=1e-2, atol=1e-2)  # tf32 products
    np.testing.assert_array_equal(xx, a + 1)
    src = overwrite_then_transpose.source("*fp32:16, *fp32:16, *fp32:16, 16", arch="sm_80")
    assert "permute axes" not in src  # folded, and still read before the store


# --- what is folded -------------------------------------------------------------------------------

def test_b_transposed_streams_in_k_major() -> None:
    for arch in ("sm_80", "sm_90a"):
        src = _source(ptr_bt_matmul, PTR_SIG, arch)
        assert "permute axes" not in src, arch  # no trip through shared memory
        assert "load b: 8 x fp16 (16 B) along axis 0" in src, arch  # along K
    # wgmma reads B K-major: the copies go straight into its stages (the copy engine's:
    # its boxes are rows of B as stored, the block's transpose)
    assert "a, b of tl.dot copied into shared memory with TMA" in src
    assert "the block's transpose: B K-major" in src


def test_what_is_not_folded_keeps_its_permute() -> None:
    src = _source(transpose_read_twice, "*fp32:16, *fp32:16, *fp32:16, 16", "sm_80")
    assert "permute axes to [1, 0]" in src


def test_descriptor_b_transposed_is_copied_by_tma_on_sm_90() -> None:
    from tilecc.transpiler.specs import TensorMap

    sig = DESC_SIG.format(bm=128, bn=128, bk=64)
    art = compiler.transpile(desc_bt_matmul, desc_bt_matmul._specs(sig, {}), "cuda",
                             desc_bt_matmul.options(arch="sm_90", num_warps=4, num_stages=3))
    # (A's two maps first: its rows in one box, and 8 at a time past the whole slabs)
    assert art.kernel.tensor_maps[2] == TensorMap("b_ptr", "fp16", (128, 64), 128, "zero",
                                                  ("b_ptr", "N", "K", "K", 1))
    assert "128 x 64 a copy, the block's transpose: B K-major" in art.source
    assert "permute axes" not in art.source and "cp_async" not in art.source
    # 64-byte rows of B (K = 32 halves): 64-byte swizzle, still one box
    art = compiler.transpile(desc_bt_matmul, desc_bt_matmul._specs(
        DESC_SIG.format(bm=64, bn=64, bk=32), {}), "cuda", desc_bt_matmul.options(
        arch="sm_90", num_warps=4, num_stages=3))
    assert [(m.box, m.swizzle) for m in art.kernel.tensor_maps] == [((64, 32), 64),
                                                                    ((8, 32), 64),
                                                                    ((64, 32), 64),
                                                                    ((64, 64), 128)]  # C


@pytest.mark.parametrize("target,arch", [("cuda", "sm_80"), ("cuda", "sm_90a"),
                                         ("hip", "gfx90a")])
def test_transposed_operand_kernels_compile_cleanly(target, arch) -> None:
    (require_hip_compiler if target == "hip" else require_cuda_compiler)()
    from test_compile_kernels import assert_clean_compile

    assert_clean_compile(ptr_bt_matmul, PTR_SIG, target, arch)
    assert_clean_compile(at_matmul, AT_SIG, target, arch)
    for bm, bn, bk, warps, stages in ((128, 128, 64, 4, 4), (128, 256, 64, 8, 3),
                                      (64, 64, 32, 4, 3)):
        assert_clean_compile(desc_bt_matmul, DESC_SIG.format(bm=bm, bn=bn, bk=bk), target,
                             arch, num_warps=warps, num_stages=stages)
        assert_clean_compile(host_desc_bt_matmul, HOST_SIG.format(bm=bm, bn=bn, bk=bk),
                             target, arch, num_warps=warps, num_stages=stages)


# --- the GPU --------------------------------------------------------------------------------------

CONFIGS = [(128, 128, 64, 4, 4), (128, 256, 64, 8, 3), (64, 64, 32, 4, 3)]
SHAPES = [(256, 256, 256), (300, 264, 200), (129, 80, 48), (1000, 1000, 1000)]


@pytest.mark.gpu
@pytest.mark.parametrize("bm,bn,bk,warps,stages", CONFIGS)
@pytest.mark.parametrize("m,n,k", SHAPES)
def test_transposed_operand_products_on_gpu_match_torch(bm, bn, bk, warps, stages, m, n,
                                                        k) -> None:
    torch = pytest.importorskip("torch")
    torch.manual_seed(m + 5 * n + k)
    a = torch.randn(m, k, device="cuda").half()
    b = torch.randn(n, k, device="cuda").half()
    ref = a.float() @ b.float().T
    tol = dict(rtol=1e-2, atol=1e-2 * k ** 0.5)
    grid = (tilecc.cdiv(m, bm), tilecc.cdiv(n, bn))
    meta = dict(num_warps=warps, num_stages=stages)
    c = torch.full((m, n), -1.0, device="cuda")
    ptr_bt_matmul[grid](a, b, c, m, n, k, a.stride(0), b.stride(0), c.stride(0), BM=bm,
                        BN=bn, BK=bk, **meta)
    torch.testing.assert_close(c, ref, **tol)
    c16 = torch.full((m, n), -1.0, device="cuda").half()
    desc_bt_matmul[grid](a, b, c16, m, n, k, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn,
                         BLOCK_SIZE_K=bk, **meta)
    torch.testing.assert_close(c16.float(), ref, **tol)
    c16.fill_(-1.0)
    desc = tilecc.TensorDescriptor.from_tensor
    host_desc_bt_matmul[grid](desc(a, [bm, bk]), desc(b, [bn, bk]), desc(c16, [bm, bn]),
                              BM=bm, BN=bn, BK=bk, **meta)
    torch.testing.assert_close(c16.float(), ref, **tol)


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k", [(256, 128, 96), (300, 264, 200), (17, 80, 48)])
def test_a_transposed_a_operand_on_gpu_matches_torch(m, n, k) -> None:
    torch = pytest.importorskip("torch")
    torch.manual_seed(m + n + k)
    a = torch.randn(k, m, device="cuda").half()
    b = torch.randn(k, n, device="cuda").half()
    c = torch.full((m, n), -1.0, device="cuda")
    at_matmul[(tilecc.cdiv(m, 64), tilecc.cdiv(n, 64))](a, b, c, m, n, k, BM=64, BN=64, BK=32)
    torch.testing.assert_close(c, a.float().T @ b.float(), rtol=1e-2, atol=1e-2 * k ** 0.5)


@pytest.mark.gpu
def test_transposed_descriptor_products_equal_tritons_on_gpu() -> None:
    """Tutorial 09's `b.T` descriptor matmul, one source through both compilers: tilecc's
    folded load (TMA, K-major) gives Triton's products."""
    torch = pytest.importorskip("torch")
    triton = pytest.importorskip("triton")
    import os
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
    from triton_clone import as_triton

    triton.set_allocator(lambda size, alignment, stream: torch.empty(
        size, device="cuda", dtype=torch.int8))
    m, n, k = 300, 264, 200
    torch.manual_seed(9)
    a = torch.randn(m, k, device="cuda").half()
    b = torch.randn(n, k, device="cuda").half()
    out = []
    for kernel in (desc_bt_matmul, as_triton(desc_bt_matmul)):
        c = torch.full((m, n), -1.0, device="cuda").half()
        kernel[(tilecc.cdiv(m, 128), tilecc.cdiv(n, 128))](
            a, b, c, m, n, k, BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64,
            num_warps=4, num_stages=3)
        out.append(c)
    torch.testing.assert_close(out[0], out[1], rtol=1e-3, atol=1e-3)
