"""Constructs that libraries' kernels use and that once failed: pointer blocks carried
through loops and stored through under branches, skinny products (M or N below 16).
Each is checked on the interpreter against NumPy, compiled by NVRTC and hiprtc, and, on a
GPU with Triton installed, run against Triton on the same source."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import tilecc
import tilecc.language as tl
from tilecc.errors import CompilationError

try:
    from conftest_compilers import require_cuda_compiler, require_hip_compiler
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import require_cuda_compiler, require_hip_compiler

TARGETS = (("cuda", "sm_80"), ("cuda", "sm_90"), ("hip", "gfx90a"))


def compile_everywhere(kernel, signature: str, **options) -> None:
    for target, arch in TARGETS:
        (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
        log = kernel.compile(signature, target=target, arch=arch, **options).log or ""
        assert "warning" not in log.lower(), log


def triton_twin(kernel):
    """The same source through Triton (None without it)."""
    try:
        import triton  # noqa: F401
    except ImportError:
        return None
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
    from triton_clone import as_triton
    return as_triton(kernel)


# --- pointer blocks carried through a loop, stored through under if / else ----------------

@tilecc.jit
def running_sums(src_ptr, out_ptr, fin_ptr, n, nchunks, stride, B: tl.constexpr):
    # each partial sum stored a row further on, the last one elsewhere: the store's
    # pointers are advanced in the loop and written through in one branch only
    offs = tl.arange(0, B)
    src_ptrs = src_ptr + offs
    out_ptrs = out_ptr + offs
    fin_ptrs = fin_ptr + offs
    acc = tl.zeros((B,), dtype=tl.float32)
    tl.store(out_ptrs, acc, mask=offs < n)
    out_ptrs += stride
    for c in range(nchunks):
        acc = acc + tl.load(src_ptrs, mask=offs < n, other=0.0)
        if c < nchunks - 1:
            tl.store(out_ptrs, acc, mask=offs < n)
        else:
            tl.store(fin_ptrs, acc, mask=offs < n)
        src_ptrs += stride
        out_ptrs += stride


@tilecc.jit
def pick_then_store(a_ptr, b_ptr, flags_ptr, n, steps, B: tl.constexpr):
    # the pointers a branch picks (an if's result), advanced in a while loop, stored through
    offs = tl.arange(0, B)
    ptrs = a_ptr + offs
    i = 0
    while i < steps:
        if tl.load(flags_ptr + i) > 0:
            target = ptrs
        else:
            target = b_ptr + offs + i * B
        tl.store(target, tl.full((B,), 1.0, tl.float32) * i, mask=offs < n)
        ptrs += B
        i += 1


def running_sums_reference(src: np.ndarray, n: int, nchunks: int, stride: int, rows: int):
    out = np.full(rows * stride, -1.0, np.float32)
    fin = np.full(stride, -1.0, np.float32)
    acc = np.zeros(n, np.float32)
    out[:n] = 0
    for c in range(nchunks):
        acc = acc + src[c * stride:c * stride + n]
        if c < nchunks - 1:
            out[(c + 1) * stride:(c + 1) * stride + n] = acc
        else:
            fin[:n] = acc
    return out, fin


RUNNING_SIG = "*fp32,*fp32,*fp32,i32,i32,i32,64"


def test_pointers_advanced_in_a_loop_and_stored_under_a_branch() -> None:
    n, nchunks, stride = 50, 5, 64
    src = np.random.default_rng(1).standard_normal(nchunks * stride).astype(np.float32)
    out = np.full((nchunks + 1) * stride, -1.0, np.float32)
    fin = np.full(stride, -1.0, np.float32)
    running_sums.interpret[(1,)](src, out, fin, n, nchunks, stride, B=64)
    want_out, want_fin = running_sums_reference(src, n, nchunks, stride, nchunks + 1)
    np.testing.assert_allclose(out, want_out, rtol=1e-6)
    np.testing.assert_allclose(fin, want_fin, rtol=1e-6)
    compile_everywhere(running_sums, RUNNING_SIG)


def test_pointers_a_branch_picks_stored_in_a_while_loop() -> None:
    flags = np.array([1, 0, 1, 0], np.int32)
    a, b = np.zeros(4 * 32, np.float32), np.zeros(4 * 32, np.float32)
    pick_then_store.interpret[(1,)](a, b, flags, 32, 4, B=32)
    want_a, want_b = np.zeros_like(a), np.zeros_like(b)
    for i, f in enumerate(flags):
        (want_a if f else want_b)[i * 32:(i + 1) * 32] = i
    np.testing.assert_array_equal(a, want_a)
    np.testing.assert_array_equal(b, want_b)
    compile_everywhere(pick_then_store, "*fp32,*fp32,*i32,i32,i32,32")


@pytest.mark.gpu
def test_carried_pointer_stores_on_gpu_equal_tritons() -> None:
    torch = pytest.importorskip("torch")
    n, nchunks, stride = 50, 5, 64
    src = torch.randn(nchunks * stride, device="cuda")
    results = []
    for kernel in (running_sums, triton_twin(running_sums)):
        if kernel is None:
            break
        out = torch.full(((nchunks + 1) * stride,), -1.0, device="cuda")
        fin = torch.full((stride,), -1.0, device="cuda")
        kernel[(1,)](src, out, fin, n, nchunks, stride, B=64)
        results.append((out.cpu().numpy(), fin.cpu().numpy()))
    want = running_sums_reference(src.cpu().numpy(), n, nchunks, stride, nchunks + 1)
    for got in results:
        np.testing.assert_allclose(got[0], want[0], rtol=1e-5)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-5)


# --- skinny products ----------------------------------------------------------------------

@tilecc.jit
def small_dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))


NP = {"fp32": np.float32, "fp16": np.float16, "i8": np.int8}
# (inputs, M, N, K): a matrix times a vector, a row times a matrix, tiles below 16 x 16
SKINNY = [("fp32", 64, 1, 128), ("fp16", 1, 64, 16), ("fp32", 2, 4, 16),
          ("fp16", 16, 8, 32), ("i8", 4, 16, 32), ("fp16", 128, 8, 32)]


def _operands(dt: str, m: int, n: int, k: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    if dt == "i8":
        return (rng.integers(-9, 9, (m, k)).astype(np.int8),
                rng.integers(-9, 9, (k, n)).astype(np.int8))
    # small integers and halves: every product and sum exact, whatever the order or tf32
    return ((rng.integers(-8, 8, (m, k)) / 2).astype(NP[dt]),
            (rng.integers(-8, 8, (k, n)) / 2).astype(NP[dt]))


@pytest.mark.parametrize("dt,m,n,k", SKINNY)
def test_skinny_products_on_the_interpreter_and_compiled(dt, m, n, k) -> None:
    a, b = _operands(dt, m, n, k)
    out_dt = np.int32 if dt == "i8" else np.float32
    c = np.zeros((m, n), out_dt)
    small_dot.interpret[(1,)](a, b, c, M=m, N=n, K=k)
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64) if dt == "i8"
                                  else a.astype(np.float64) @ b.astype(np.float64))
    sig = f"*{dt},*{dt},*{'i32' if dt == 'i8' else 'fp32'},{m},{n},{k}"
    assert "fused multiply-adds (M = " in small_dot.source(sig)
    compile_everywhere(small_dot, sig)


@pytest.mark.parametrize("dt,k,least", [("fp16", 8, 16), ("fp32", 8, 16), ("i8", 16, 32),
                                        ("fp8e4nv", 16, 32), ("fp8e5", 16, 32)])
def test_products_below_tritons_smallest_k_are_refused(dt, k, least) -> None:
    with pytest.raises(CompilationError, match=f"tl.dot needs K >= {least} for {dt} inputs"):
        small_dot.source(f"*{dt},*{dt},*fp32,16,16,{k}")


@pytest.mark.gpu
@pytest.mark.parametrize("dt,m,n,k", SKINNY)
def test_skinny_products_on_gpu_equal_tritons(dt, m, n, k) -> None:
    torch = pytest.importorskip("torch")
    a, b = _operands(dt, m, n, k, seed=3)
    want = a.astype(np.float64) @ b.astype(np.float64)
    for kernel in (small_dot, triton_twin(small_dot)):
        if kernel is None:
            break
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        c = torch.zeros((m, n), device="cuda",
                        dtype=torch.int32 if dt == "i8" else torch.float32)
        kernel[(1,)](ta, tb, c, M=m, N=n, K=k)
        np.testing.assert_array_equal(c.cpu().numpy(), want.astype(c.cpu().numpy().dtype))


# --- what the native compilers once got wrong (CUDA 13.0, sm_90) --------------------------

@tilecc.jit
def extremes_of_negations(x_ptr, max_ptr, min_ptr, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    tl.store(max_ptr + rn, tl.max(-x, axis=0))
    tl.store(min_ptr + rn, tl.min(-x, axis=0))


@tilecc.jit
def masked_bytes(x_ptr, y_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    y = tl.load(y_ptr + rn)[None, :]
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], (-(x & y)).to(tl.float32))


def _small_ints(dt, shape, seed=0):
    return np.random.default_rng(seed).integers(-100, 100, shape).astype(dt)


@pytest.mark.parametrize("dt", ["int32", "int16", "int8"])
def test_extremes_of_negated_rows(dt) -> None:
    x = _small_ints(dt, (4, 128))
    hi, lo = np.zeros(128, dt), np.zeros(128, dt)
    extremes_of_negations.interpret[(1,)](x, hi, lo, M=4, N=128)
    np.testing.assert_array_equal(hi, (-x).max(0))
    np.testing.assert_array_equal(lo, (-x).min(0))
    sig = {"int32": "i32", "int16": "i16", "int8": "i8"}[dt]
    compile_everywhere(extremes_of_negations, f"*{sig}:16,*{sig}:16,*{sig}:16,4,128",
                       num_warps=1)


def test_bytes_of_a_vector_load() -> None:
    x, y = _small_ints(np.int8, (8, 128)), _small_ints(np.int8, 128, seed=1)
    out = np.zeros((8, 128), np.float32)
    masked_bytes.interpret[(1,)](x, y, out, M=8, N=128)
    np.testing.assert_array_equal(out, (-(x & y)).astype(np.float32))
    compile_everywhere(masked_bytes, "*i8:16,*i8:16,*fp32:16,8,128", num_warps=1)


@pytest.mark.gpu
@pytest.mark.parametrize("dt", ["int32", "int16", "int8"])
@pytest.mark.parametrize("num_warps", [1, 4])
def test_extremes_of_negated_rows_on_gpu(dt, num_warps) -> None:
    torch = pytest.importorskip("torch")
    x = _small_ints(dt, (4, 128))
    tx = torch.from_numpy(x).cuda()
    hi, lo = torch.zeros_like(tx[0]), torch.zeros_like(tx[0])
    extremes_of_negations[(1,)](tx, hi, lo, M=4, N=128, num_warps=num_warps)
    np.testing.assert_array_equal(hi.cpu().numpy(), (-x).max(0))
    np.testing.assert_array_equal(lo.cpu().numpy(), (-x).min(0))


@pytest.mark.gpu
@pytest.mark.parametrize("num_warps", [1, 4])
def test_bytes_of_a_vector_load_on_gpu(num_warps) -> None:
    torch = pytest.importorskip("torch")
    x, y = _small_ints(np.int8, (8, 128)), _small_ints(np.int8, 128, seed=1)
    out = torch.zeros((8, 128), device="cuda")
    masked_bytes[(1,)](torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda(), out, M=8, N=128,
                       num_warps=num_warps)
    np.testing.assert_array_equal(out.cpu().numpy(), (-(x & y)).astype(np.float32))
