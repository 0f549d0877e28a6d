"""`tl.dot` beyond 2-D products of one input type: fp8 inputs (any two formats), 3-D
batched products (4-D: the leading axes as one batch), `input_precision` "tf32x3" / "bf16x3" / "bf16x6", `out_dtype` and
`max_num_imprecise_acc` by Triton's rules.  The interpreter against NumPy, the generated
code through NVRTC and hiprtc; GPU runs in tests/test_gpu_fp8.py."""

from __future__ import annotations

import os
import sys

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tilecc
import tilecc.language as tl
from tilecc.errors import CompilationError

try:
    from conftest_compilers import require_cuda_compiler, require_hip_compiler
    from test_compile_kernels import assert_clean_compile
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import require_cuda_compiler, require_hip_compiler
    from tests.test_compile_kernels import assert_clean_compile

F8 = {"fp8e4nv": ml_dtypes.float8_e4m3fn, "fp8e5": ml_dtypes.float8_e5m2,
      "fp8e4b8": ml_dtypes.float8_e4m3fnuz, "fp8e5b16": ml_dtypes.float8_e5m2fnuz}


@tilecc.jit
def mm_kernel(A, B, C, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
              OUT: tl.constexpr, IMPRECISE: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(A + rm[:, None] * K + rk[None, :])
    b = tl.load(B + rk[:, None] * N + rn[None, :])
    c = tl.dot(a, b, out_dtype=OUT, max_num_imprecise_acc=IMPRECISE)
    tl.store(C + rm[:, None] * N + rn[None, :], c)


@tilecc.jit
def fp8_loop_kernel(A, B, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                    IMPRECISE: tl.constexpr = None):
    # the tutorial's loop, fp8 operands (A row-major, B row-major), fp32 accumulator
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(A + rm[:, None] * K + (k * BK + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k * BK + rk)[None, :] < K), other=0.0)
        b = tl.load(B + (k * BK + rk)[:, None] * N + rn[None, :],
                    mask=((k * BK + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, max_num_imprecise_acc=IMPRECISE)
    tl.store(C + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@tilecc.jit
def fp8_strided_kernel(A, B, C, M, N, K, stride_bk, stride_bn, BM: tl.constexpr,
                       BN: tl.constexpr, BK: tl.constexpr, IMPRECISE: tl.constexpr):
    # whole tiles, B through strides (K-major when stride_bk is 1), the tutorial's
    # pointer increments (pipelined)
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = A + rm[:, None] * K + rk[None, :]
    b_ptrs = B + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc, max_num_imprecise_acc=IMPRECISE)
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    tl.store(C + rm[:, None] * N + rn[None, :], acc)


@tilecc.jit
def fp8_attention_kernel(Q, Kt, V, O, N, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    # attention's two products in fp8: Q K^T (K read transposed: K-major), then the
    # probabilities cast to fp8 times V (A from a product's result)
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rd = tl.arange(0, D)
    q = tl.load(Q + rm[:, None] * D + rd[None, :])
    acc = tl.zeros((BM, D), dtype=tl.float32)
    for start in range(0, N, BN):
        rn = start + tl.arange(0, BN)
        s = tl.dot(q, tl.load(Kt + rn[None, :] * D + rd[:, None]))
        p = (s * 0.01).to(tl.float8e4nv)
        acc = tl.dot(p, tl.load(V + rn[:, None] * D + rd[None, :]), acc)
    tl.store(O + rm[:, None] * D + rd[None, :], acc)


def fp8_attention_reference(q, k, v):
    s = q.astype(np.float32) @ k.astype(np.float32).T
    p = (s * np.float32(0.01)).astype(ml_dtypes.float8_e4m3fn).astype(np.float64)
    return p @ v.astype(np.float64)


@tilecc.jit
def batched_kernel(A, B, C, D, BS: tl.constexpr, M: tl.constexpr, N: tl.constexpr,
                   K: tl.constexpr, WITH_ACC: tl.constexpr):
    rb = tl.arange(0, BS)[:, None, None]
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(A + rb * M * K + rm[None, :, None] * K + rk[None, None, :])
    b = tl.load(B + rb * K * N + rk[None, :, None] * N + rn[None, None, :])
    out = rb * M * N + rm[None, :, None] * N + rn[None, None, :]
    if WITH_ACC:
        c = tl.dot(a, b, tl.load(C + out))
    else:
        c = tl.dot(a, b)
    tl.store(D + out, c)


@tilecc.jit
def batched_inner_kernel(A, B, D, BS: tl.constexpr, M: tl.constexpr, N: tl.constexpr,
                         K: tl.constexpr):
    # A and D hold the batch axis innermost ([M, K, BS], [M, N, BS]): the store runs
    # along it (its batches are then not a thread's registers); A's batches are taken
    # apart from a value computed from the load (not loaded into the batches' layout)
    rb = tl.arange(0, BS)[:, None, None]
    rm = tl.arange(0, M)[None, :, None]
    rn = tl.arange(0, N)[None, None, :]
    rk_row = tl.arange(0, K)[None, None, :]
    rk_col = tl.arange(0, K)[None, :, None]
    a = tl.load(A + rm * K * BS + rk_row * BS + rb)
    b = tl.load(B + rb * K * N + rk_col * N + rn)
    tl.store(D + rm * N * BS + rn * BS + rb, tl.dot(a * 2, b))


@tilecc.jit
def batched_4d_kernel(A, B, C, D, P: tl.constexpr, Q: tl.constexpr, M: tl.constexpr,
                      N: tl.constexpr, K: tl.constexpr):
    # [P, Q, M, K] @ [P, Q, K, N] + C: P x Q products (Triton folds the leading axes)
    rp = tl.arange(0, P)[:, None, None, None]
    rq = tl.arange(0, Q)[None, :, None, None]
    rm = tl.arange(0, M)[None, None, :, None]
    rn = tl.arange(0, N)[None, None, None, :]
    rk_row = tl.arange(0, K)[None, None, None, :]
    rk_col = tl.arange(0, K)[None, None, :, None]
    batch = rp * Q + rq
    a = tl.load(A + batch * M * K + rm * K + rk_row)
    b = tl.load(B + batch * K * N + rk_col * N + rn)
    out = batch * M * N + rm * N + rn
    tl.store(D + out, tl.dot(a, b, tl.load(C + out)))


@tilecc.jit
def precision_kernel(A, B, C, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                     P: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(A + rm[:, None] * K + rk[None, :])
    b = tl.load(B + rk[:, None] * N + rn[None, :])
    c = tl.load(C + rm[:, None] * N + rn[None, :])
    tl.store(C + rm[:, None] * N + rn[None, :], tl.dot(a, b, c, input_precision=P))


def _exact(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a.astype(np.float64) @ b.astype(np.float64)


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(list(F8)), st.sampled_from(list(F8)), st.integers(0, 2 ** 32 - 1))
def test_fp8_dot_of_any_two_formats(fa, fb, seed) -> None:
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal((32, 64)) * 4).astype(F8[fa])
    b = (rng.standard_normal((64, 16)) * 4).astype(F8[fb])
    c = np.zeros((32, 16), np.float32)
    mm_kernel.interpret[(1,)](a, b, c, M=32, N=16, K=64, OUT=tl.float32, IMPRECISE=None)
    # each fp8 product is exact in fp32; only the order of the fp32 sum differs
    np.testing.assert_allclose(c, _exact(a, b), rtol=1e-6, atol=1e-4)


def test_fp8_dot_out_dtype_fp16_and_imprecise_acc_accepted() -> None:
    rng = np.random.default_rng(3)
    a = rng.standard_normal((16, 32)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.standard_normal((32, 16)).astype(ml_dtypes.float8_e5m2)
    c = np.zeros((16, 16), np.float16)
    mm_kernel.interpret[(1,)](a, b, c, M=16, N=16, K=32, OUT=tl.float16, IMPRECISE=32)
    np.testing.assert_allclose(c.astype(np.float32), _exact(a, b).astype(np.float16)
                               .astype(np.float32), rtol=1e-3, atol=1e-2)


def test_fp8_loop_matmul_with_masks() -> None:
    rng = np.random.default_rng(4)
    m, n, k = 40, 72, 100
    a = rng.standard_normal((m, k)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.standard_normal((k, n)).astype(ml_dtypes.float8_e4m3fn)
    c = np.zeros((m, n), np.float32)
    fp8_loop_kernel.interpret[(2, 2)](a, b, c, m, n, k, BM=32, BN=64, BK=32)
    np.testing.assert_allclose(c, _exact(a, b), rtol=1e-5, atol=1e-4)


def test_fp8_attention_products_match_numpy() -> None:
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((128, 64)).astype(ml_dtypes.float8_e4m3fn)
               for _ in range(3))
    o = np.zeros((128, 64), np.float32)
    fp8_attention_kernel.interpret[(1,)](q, k, v, o, 128, D=64, BM=128, BN=64, num_warps=8)
    np.testing.assert_allclose(o, fp8_attention_reference(q, k, v), rtol=1e-5, atol=1e-5)
    src = fp8_attention_kernel.source("*fp8e4nv:16,*fp8e4nv:16,*fp8e4nv:16,*fp32:16,i32:16",
                                      D=64, BM=128, BN=64, num_warps=8)
    assert src.count("wgmma.m64n64k32 (fp8e4nv, Hopper)") == 4  # header and body, twice


@pytest.mark.parametrize("bs", [1, 2, 4])
@pytest.mark.parametrize("dt", [np.float16, np.float32, np.int8])
def test_batched_dot_is_one_product_per_batch(bs, dt) -> None:
    rng = np.random.default_rng(bs)
    m, n, k = 16, 32, 32
    a = rng.integers(-3, 4, (bs, m, k)).astype(dt)
    b = rng.integers(-3, 4, (bs, k, n)).astype(dt)
    acc_t = np.int32 if dt == np.int8 else np.float32
    c = rng.integers(-5, 6, (bs, m, n)).astype(acc_t)
    for with_acc in (False, True):
        d = np.zeros((bs, m, n), acc_t)
        batched_kernel.interpret[(1,)](a, b, c, d, BS=bs, M=m, N=n, K=k, WITH_ACC=with_acc)
        want = np.matmul(a.astype(np.int64), b.astype(np.int64)) + (c if with_acc else 0)
        assert np.array_equal(d, want.astype(acc_t))  # small integers: exact in every type


@pytest.mark.parametrize("dt", [np.float16, np.float32])
def test_dot_of_4d_blocks_folds_the_leading_axes_into_batches(dt) -> None:
    rng = np.random.default_rng(7)
    p, q, m, n, k = 2, 2, 16, 16, 32
    a = rng.integers(-3, 4, (p, q, m, k)).astype(dt)
    b = rng.integers(-3, 4, (p, q, k, n)).astype(dt)
    c = rng.integers(-5, 6, (p, q, m, n)).astype(np.float32)
    d = np.zeros((p, q, m, n), np.float32)
    batched_4d_kernel.interpret[(1,)](a, b, c, d, P=p, Q=q, M=m, N=n, K=k)
    want = np.matmul(a.astype(np.int64), b.astype(np.int64)) + c  # small integers: exact
    assert np.array_equal(d, want.astype(np.float32))


@pytest.mark.parametrize("target,arch", [("cuda", "sm_80"), ("hip", "gfx90a")])
def test_dot_of_4d_blocks_compiles(target, arch) -> None:
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    assert_clean_compile(batched_4d_kernel, "*fp16:16,*fp16:16,*fp32:16,*fp32:16", target,
                         arch, P=1, Q=2, M=16, N=16, K=32)


@pytest.mark.gpu
def test_dot_of_4d_blocks_on_gpu() -> None:
    torch = pytest.importorskip("torch")
    g = torch.Generator(device="cuda").manual_seed(7)
    a = torch.randint(-3, 4, (2, 2, 16, 32), device="cuda", generator=g).half()
    b = torch.randint(-3, 4, (2, 2, 32, 16), device="cuda", generator=g).half()
    c = torch.randint(-5, 6, (2, 2, 16, 16), device="cuda", generator=g).float()
    d = torch.zeros_like(c)
    batched_4d_kernel[(1,)](a, b, c, d, P=2, Q=2, M=16, N=16, K=32)
    assert torch.equal(d, torch.matmul(a.float(), b.float()) + c)  # small integers: exact


BATCHED_SHAPES = [  # (BS, M, N, K, num_warps)
    (8, 32, 32, 32, 4), (2, 16, 32, 32, 1), (4, 64, 32, 16, 8), (2, 16, 16, 16, 16),
    (16, 16, 16, 32, 4), (2, 32, 64, 32, 2)]


def _batched_inputs(bs, m, n, k, dt, seed=3):
    rng = np.random.default_rng(seed)
    acc_t = np.int32 if dt == np.int8 else np.float32
    return (rng.integers(-3, 4, (bs, m, k)).astype(dt), rng.integers(-3, 4, (bs, k, n)).astype(dt),
            rng.integers(-5, 6, (bs, m, n)).astype(acc_t), acc_t)


def test_batched_dot_takes_batches_apart_in_registers() -> None:
    """The batches of a 3-D product's operands are a thread's registers (unstack, a
    register view) and the products' results are stacked once through shared memory:
    there were trees of splits and joins, each through shared memory, and spills."""
    src = batched_kernel.source("*fp16:16,*fp16:16,*fp32:16,*fp32:16", BS=8, M=32, N=32,
                                K=32, WITH_ACC=False, num_warps=4, arch="sm_90a")
    assert src.count("the batches taken apart (axis 0): in registers") == 2
    assert src.count("the batches stacked (axis 0), in 16-byte chunks swizzled by row") == 1
    assert "split the last axis" not in src and "join along" not in src
    # one barrier per product's staged operands, none for the buffer's reuse
    assert "may still be read by an earlier step" not in src
    # batches smaller than the program (16 x 16 over 512 threads): warps split the batch
    # axis; a computed block's batches go through shared memory, a loaded one is loaded
    # into its batches' layout
    src = batched_inner_kernel.source("*fp16:16,*fp16:16,*fp32:16", BS=4, M=16, N=16, K=16,
                                      num_warps=16, arch="sm_90a")
    assert src.count("the batches taken apart (axis 0): through shared memory") == 1
    assert src.count("the batches taken apart (axis 0): in registers") == 1


@pytest.mark.parametrize("target,arch", [("cuda", "sm_80"), ("cuda", "sm_90a"),
                                         ("hip", "gfx90a")])
def test_batched_dots_compile_cleanly(target, arch) -> None:
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    for bs, m, n, k, warps in BATCHED_SHAPES:
        assert_clean_compile(batched_kernel, "*fp16:16,*fp16:16,*fp32:16,*fp32:16", target,
                             arch, BS=bs, M=m, N=n, K=k, WITH_ACC=True, num_warps=warps)
    assert_clean_compile(batched_inner_kernel, "*fp16:16,*fp16:16,*fp32:16", target, arch,
                         BS=4, M=16, N=16, K=16, num_warps=4)


@pytest.mark.gpu
@pytest.mark.parametrize("shape", BATCHED_SHAPES, ids=str)
@pytest.mark.parametrize("dt", [np.float16, np.float32, np.int8])
def test_batched_dot_on_gpu(shape, dt) -> None:
    cupy = pytest.importorskip("cupy")
    bs, m, n, k, warps = shape
    k = max(k, 32) if dt == np.int8 else k  # int8 products take K >= 32 (Triton's rule)
    a, b, c, acc_t = _batched_inputs(bs, m, n, k, dt)
    for with_acc in (False, True):
        d = cupy.zeros((bs, m, n), acc_t)
        batched_kernel[(1,)](cupy.asarray(a), cupy.asarray(b), cupy.asarray(c), d, BS=bs, M=m,
                             N=n, K=k, WITH_ACC=with_acc, num_warps=warps)
        want = np.matmul(a.astype(np.int64), b.astype(np.int64)) + (c if with_acc else 0)
        assert np.array_equal(cupy.asnumpy(d), want.astype(acc_t))  # small integers: exact


@pytest.mark.gpu
@pytest.mark.parametrize("warps", [1, 4, 16])
def test_batched_dot_with_the_batch_axis_innermost_on_gpu(warps) -> None:
    cupy = pytest.importorskip("cupy")
    bs, m, n, k = 4, 16, 32, 16
    a, b, _, _ = _batched_inputs(bs, m, n, k, np.float16)
    d = cupy.zeros((m, n, bs), np.float32)
    batched_inner_kernel[(1,)](cupy.asarray(np.ascontiguousarray(a.transpose(1, 2, 0))),
                               cupy.asarray(b), d, BS=bs, M=m, N=n, K=k, num_warps=warps)
    want = np.matmul(2 * a.astype(np.int64), b.astype(np.int64)).transpose(1, 2, 0)
    assert np.array_equal(cupy.asnumpy(d), want.astype(np.float32))


def _precision_error(p: str, a, b) -> float:
    c = np.full((32, 32), 0.5, np.float32)
    precision_kernel.interpret[(1,)](a, b, c, M=32, N=32, K=64, P=p)
    want = _exact(a, b) + 0.5
    return float(np.max(np.abs(c - want)) / np.max(np.abs(want)))


def test_split_precisions_recover_fp32_accuracy() -> None:
    rng = np.random.default_rng(5)
    a = rng.standard_normal((32, 64)).astype(np.float32)
    b = rng.standard_normal((64, 32)).astype(np.float32)
    err = {p: _precision_error(p, a, b) for p in ("tf32", "tf32x3", "ieee", "bf16x3", "bf16x6")}
    assert err["tf32"] > 1e-4  # tf32 keeps 10 mantissa bits ...
    assert err["tf32x3"] < 1e-6 and err["bf16x6"] < 1e-6  # ... three of them nearly fp32's
    assert err["bf16x3"] < 1e-4 < err["tf32"] * 10
    assert err["ieee"] < 1e-6


@pytest.mark.parametrize("p", ["tf32x3", "bf16x3", "bf16x6"])
def test_split_precision_keeps_infinities(p) -> None:
    # 1.0 splits into 1.0 + 0.0; 0.0 * inf in the small products would make NaN (Triton
    # replaces NaNs of the small products by zeros before adding the big one)
    a = np.ones((32, 64), np.float32)
    b = np.ones((64, 32), np.float32)
    b[0, 0] = np.inf
    b[1, 1] = np.nan
    c = np.zeros((32, 32), np.float32)
    precision_kernel.interpret[(1,)](a, b, c, M=32, N=32, K=64, P=p)
    assert np.all(np.isposinf(c[:, 0])) and np.all(np.isnan(c[:, 1]))
    assert np.all(c[:, 2:] == 64)


def test_split_precision_source_shows_the_products() -> None:
    src = precision_kernel.source("*fp32:16,*fp32:16,*fp32:16", M=32, N=32, K=32, P="tf32x3",
                                  arch="sm_80")
    assert src.count("tc::mma_m16n8k8_tf32(") == 3
    src = precision_kernel.source("*fp32:16,*fp32:16,*fp32:16", M=32, N=32, K=32, P="bf16x3",
                                  arch="sm_80")
    assert src.count("tc::mma_m16n8k16_bf16(") == 3


def _dot_kernel(expr: str, a_t: str = "tl.float16"):
    ns = {"tilecc": tilecc, "tl": tl}
    code = ("@tilecc.jit\n"
            "def k(A, B, C):\n"
            "    r16 = tl.arange(0, 16)\n"
            "    r32 = tl.arange(0, 32)\n"
            "    a = tl.load(A + r16[:, None] * 32 + r32[None, :])\n"
            "    b = tl.load(B + r32[:, None] * 16 + r16[None, :])\n"
            f"    c = {expr}\n"
            "    tl.store(C + r16[:, None] * 16 + r16[None, :], c)\n")
    import linecache
    name = f"<dot-forms-{abs(hash(code))}>"
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)
    exec(compile(code, name, "exec"), ns)
    return ns["k"]


@pytest.mark.parametrize("expr,sig,message", [
    ("tl.dot(a, b, max_num_imprecise_acc=64)", "*fp8e4nv,*fp8e4nv,*fp32",
     "max_num_imprecise_acc (64) must be <= K (32)"),
    ("tl.dot(a, b, out_dtype=tl.bfloat16)", "*bf16,*bf16,*fp32", "out_dtype=bfloat16 is unsupported"),
    ("tl.dot(a, b, out_dtype=tl.int32)", "*fp8e5,*fp8e5,*fp32", "out_dtype of a fp8 tl.dot"),
    ("tl.dot(a, b)", "*fp8e5,*fp16,*fp32", "one element type"),
    ("tl.dot(a, b, input_precision='tf32x9')", "*fp32,*fp32,*fp32", "input_precision must be"),
    ("tl.dot(a[None, :, :], b)", "*fp16,*fp16,*fp32", "two 2-D blocks"),
    ("tl.dot(a[None, :, :], b[None, :, :].broadcast_to(2, 32, 16))", "*fp16,*fp16,*fp32",
     "batch dimensions differ"),
])
def test_dot_form_errors_point_at_the_line(expr, sig, message) -> None:
    with pytest.raises(CompilationError) as e:
        _dot_kernel(expr).source(sig)
    assert message in str(e.value) and ":7:" in str(e.value)


def test_result_types_follow_triton() -> None:
    # fp32 / bf16 inputs give fp32 whatever out_dtype asks; fp8 and fp16 give out_dtype
    assert "float c[" in _dot_kernel("tl.dot(a, b, out_dtype=tl.float16)").source(
        "*bf16,*bf16,*fp32")
    assert "tc::half c[" in _dot_kernel("tl.dot(a, b, out_dtype=tl.float16)").source(
        "*fp8e5,*fp8e5,*fp16")


_TARGETS = [("cuda", "sm_80"), ("cuda", "sm_89"), ("cuda", "sm_90"), ("hip", "gfx90a")]


@pytest.mark.parametrize("target,arch", _TARGETS, ids=[a for _, a in _TARGETS])
def test_dot_forms_compile_cleanly(target, arch) -> None:
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    e4 = "fp8e5" if arch == "sm_80" else "fp8e4nv"
    assert_clean_compile(fp8_loop_kernel, f"*{e4}:16,*fp8e5:16,*fp32:16,i32,i32,i32", target,
                         arch, BM=64, BN=64, BK=64, num_warps=4)
    assert_clean_compile(mm_kernel, f"*{e4}:16,*{e4}:16,*fp16:16", target, arch, M=64, N=64,
                         K=32, OUT=tl.float16, IMPRECISE=None)
    assert_clean_compile(batched_kernel, "*fp16:16,*fp16:16,*fp32:16,*fp32:16", target, arch,
                         BS=2, M=16, N=16, K=32, WITH_ACC=True)
    # AMD: the split products are fused multiply-adds whatever the size, and hiprtc spends
    # some 20 s of CPU on bf16x6's six 32 x 32 x 32 ones (under a second at 16)
    size = 16 if target == "hip" else 32
    for p in ("tf32x3", "bf16x3", "bf16x6"):
        assert_clean_compile(precision_kernel, "*fp32:16,*fp32:16,*fp32:16", target, arch,
                             M=size, N=size, K=size, P=p)
    if arch == "sm_90":  # fp8 wgmma: B K-major and N-major, partial sums or not; P @ V
        assert_clean_compile(fp8_attention_kernel, "*fp8e4nv:16,*fp8e4nv:16,*fp8e4nv:16,"
                             "*fp32:16,i32:16", target, arch, D=64, BM=128, BN=64, num_warps=8)
        for stride_b, imprecise in (("i32:1,i32:16", None), ("i32:16,i32:1", 64)):
            assert_clean_compile(fp8_strided_kernel, f"*fp8e4nv:16,*fp8e4nv:16,*fp32:16,"
                                 f"i32:16,i32:16,i32:16,{stride_b}", target, arch, BM=128,
                                 BN=128, BK=128, IMPRECISE=imprecise, num_warps=8,
                                 num_stages=3)
    if target == "hip":
        assert_clean_compile(mm_kernel, "*fp8e4b8:16,*fp8e5b16:16,*fp32:16", target, arch,
                             M=32, N=32, K=32, OUT=tl.float32, IMPRECISE=None)


def test_fp8_dot_runs_on_hoppers_fp8_tensor_cores() -> None:
    # two e4m3 or two e5m2 blocks: wgmma's fp8 instructions (K = 32), B staged K-major
    # even when its loads run along N
    for dt, ptx in (("fp8e4nv", "e4m3"), ("fp8e5", "e5m2")):
        src = fp8_loop_kernel.source(f"*{dt}:16,*{dt}:16,*fp32:16,i32,i32,i32", BM=128,
                                     BN=128, BK=64, num_warps=4)
        assert f"wgmma.m64n128k32 ({dt}, Hopper)" in src and "B from shared memory (K-major)" in src
        assert f"tc::wgmma_m64n128k32_{ptx}_ss<0>(" in src
        assert "fp16" not in src.split("extern \"C\"")[1]  # no conversion anywhere


@pytest.mark.parametrize("sig,options,plan", [
    ("*fp8e5:16,*fp8e5:16", dict(BM=64, BN=64, BK=64, arch="sm_80"), "mma.sync.m16n8k16 (f16)"),
    ("*fp8e4nv:16,*fp8e5:16", dict(BM=64, BN=64, BK=64), "wgmma.m64n64k16 (fp16, Hopper)"),
    ("*fp8e4nv:16,*fp8e4nv:16", dict(BM=64, BN=64, BK=32), "wgmma.m64n64k16 (fp16, Hopper)"),
    ("*fp8e4nv:16,*fp8e4nv:16", dict(BM=64, BN=64, BK=64, num_warps=2), "mma.sync.m16n8k16 (f16)"),
    ("*fp8e4nv:16,*fp8e4nv:16", dict(BM=64, BN=64, BK=64, target="hip"),
     "v_mfma_f32_32x32x8f16 (fp16)"),
])
def test_fp8_dot_goes_through_fp16_where_no_fp8_instruction_fits(sig, options, plan) -> None:
    # another arch, mixed formats, K below two instructions, a split wgmma cannot take, AMD
    src = fp8_loop_kernel.source(f"{sig},*fp32:16,i32,i32,i32", **options)
    assert plan in src
    assert all(f"tc::cast<tc::half>({x}[" in src for x in "ab")  # fp8 → fp16, in registers


def test_max_num_imprecise_acc_adds_partial_sums_in_fp32() -> None:
    sig = "*fp8e4nv:16,*fp8e4nv:16,*fp32:16"
    plain = mm_kernel.source(sig, M=64, N=64, K=128, OUT=tl.float32, IMPRECISE=None)
    assert "c_part" not in plain
    for imprecise, every in ((0, 1), (32, 1), (64, 2), (100, 4), (128, 4)):
        src = mm_kernel.source(sig, M=64, N=64, K=128, OUT=tl.float32, IMPRECISE=imprecise)
        flush = "kk + 1 == 4" if every == 4 else f"(kk + 1) % {every} == 0 || kk + 1 == 4"
        assert f"if ({flush}) {{  // the partial sum, added in fp32" in src, imprecise
        assert "c[r] += c_part[r];" in src
    # a loop that promotes keeps no multiplication in flight across iterations (B K-major:
    # both operands stream into the pipeline's stages, which the product may read on)
    kw = dict(BM=128, BN=128, BK=64, num_warps=4, num_stages=4)
    sig = "*fp8e4nv:16,*fp8e4nv:16,*fp32:16,i32:16,i32:16,i32:16,i32:1,i32:16"
    assert "one wgmma kept in flight" in fp8_strided_kernel.source(sig, IMPRECISE=None, **kw)
    loop = fp8_strided_kernel.source(sig, IMPRECISE=64, **kw)
    assert "pipeline (" in loop and "in flight" not in loop
    # B row-major: the threads store it K-major into the pool at every iteration, which
    # the next iteration writes again: not in flight either (it was, under those stores)
    row_major = fp8_loop_kernel.source("*fp8e4nv:16,*fp8e4nv:16,*fp32:16,i32:16,i32:16,i32:16",
                                       **kw)
    assert "pipeline (" in row_major and "in flight" not in row_major


@tilecc.jit
def int8_dot_kernel(a_ptr, b_ptr, c_ptr, N: tl.constexpr, OUT: tl.constexpr):
    rows = tl.arange(0, N)[:, None] * N + tl.arange(0, N)[None, :]
    c = tl.dot(tl.load(a_ptr + rows), tl.load(b_ptr + rows), out_dtype=OUT)
    tl.static_assert(c.dtype == tl.int32)
    tl.store(c_ptr + rows, c)


@pytest.mark.parametrize("out", [tl.int8, tl.int32, tl.float16])
def test_int8_dot_sums_in_int32_whatever_out_dtype_says(out):
    """Triton's int8 tl.dot returns int32 and ignores out_dtype: no value wraps at 8 bits."""
    rng = np.random.default_rng(3)
    a = rng.integers(-128, 128, (32, 32)).astype(np.int8)
    b = rng.integers(-128, 128, (32, 32)).astype(np.int8)
    c = np.zeros((32, 32), np.int32)
    int8_dot_kernel.interpret[(1,)](a, b, c, 32, out)
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32))


def test_a_product_reading_the_pool_waits_where_it_is_issued() -> None:
    """fp8 attention's P @ V accumulates only, but P is stored to the shared-memory pool in
    every iteration (fp8 wgmma reads A there): the next iteration's store must not meet
    the product still reading, so its wait is not left to a later product (as it is where
    A comes from registers, or from the pipeline's stages).  Deferred, ptxas serialized
    the products and the stores raced the reads."""
    src = fp8_attention_kernel.source("*fp8e4nv:16,*fp8e4nv:16,*fp8e4nv:16,*fp32:16,i32:16",
                                      arch="sm_90", D=64, BM=128, BN=64, num_warps=8)
    body = src.split("#include")[1]
    loop = body[body.index("for (int start = 0;"):]
    assert loop.count("tc::wgmma_commit();") == 2
    assert "not waited for here" not in loop and "wgmma_wait<1>" not in loop


@tilecc.jit
def half_sum_attention_kernel(Q, Kt, V, O, N, D: tl.constexpr, BM: tl.constexpr,
                              BN: tl.constexpr):
    # P @ V kept in an fp16 accumulator (out_dtype): summed in fp32, rounded after each product
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rd = tl.arange(0, D)
    q = tl.load(Q + rm[:, None] * D + rd[None, :])
    acc = tl.zeros((BM, D), dtype=tl.float16)
    for start in range(0, N, BN):
        rn = start + tl.arange(0, BN)
        s = tl.dot(q, tl.load(Kt + rn[None, :] * D + rd[:, None]))
        p = (s * 0.01).to(tl.float16)
        acc = tl.dot(p, tl.load(V + rn[:, None] * D + rd[None, :]), acc, out_dtype=tl.float16)
    tl.store(O + rm[:, None] * D + rd[None, :], acc)


def test_a_product_rounded_after_it_waits_where_it_is_issued() -> None:
    """An fp16 accumulator summed in fp32 is rounded right after its product: that product
    is not left to a later one's wait (the rounding would read registers still in flight)."""
    src = half_sum_attention_kernel.source("*fp16:16,*fp16:16,*fp16:16,*fp16:16,i32:16",
                                           arch="sm_90", D=64, BM=64, BN=64, num_warps=4)
    body = src.split("#include")[1]
    loop = body[body.index("for (int start = 0;"):]
    assert loop.count("tc::wgmma_commit();") == 2
    assert "not waited for here" not in loop and "wgmma_wait<1>" not in loop
    require_cuda_compiler()
    assert_clean_compile(half_sum_attention_kernel, "*fp16:16,*fp16:16,*fp16:16,*fp16:16,i32:16",
                         "cuda", "sm_90", D=64, BM=64, BN=64, num_warps=4)


def test_batched_dot_with_the_batch_axis_innermost_interpreted() -> None:
    bs, m, n, k = 4, 16, 32, 16
    a, b, _, _ = _batched_inputs(bs, m, n, k, np.float16)
    d = np.zeros((m, n, bs), np.float32)
    batched_inner_kernel.interpret[(1,)](np.ascontiguousarray(a.transpose(1, 2, 0)), b, d,
                                         BS=bs, M=m, N=n, K=k)
    want = np.matmul(2 * a.astype(np.int64), b.astype(np.int64)).transpose(1, 2, 0)
    assert np.array_equal(d, want.astype(np.float32))


@pytest.mark.gpu
def test_batched_dot_as_triton() -> None:
    """The same batched kernel through Triton on the same GPU (random fp16 operands, with
    and without acc): the products agree to fp32 rounding (each batch summed over K = 32
    by the tensor cores, in an order neither tool promises)."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("triton")
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
    from triton_clone import as_triton

    g = torch.Generator(device="cuda").manual_seed(11)
    for bs, m, n, k, warps in [(8, 32, 32, 32, 4), (4, 64, 32, 16, 8), (2, 16, 16, 16, 1)]:
        a = torch.randn((bs, m, k), device="cuda", generator=g).half()
        b = torch.randn((bs, k, n), device="cuda", generator=g).half()
        c = torch.randn((bs, m, n), device="cuda", generator=g)
        for with_acc in (False, True):
            outs = []
            for kernel in (batched_kernel, as_triton(batched_kernel)):
                d = torch.zeros((bs, m, n), device="cuda")
                kernel[(1,)](a, b, c, d, BS=bs, M=m, N=n, K=k, WITH_ACC=with_acc,
                             num_warps=warps)
                outs.append(d.cpu().numpy())
            np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-5)

