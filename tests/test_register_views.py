"""Permutes, joins, splits, reshapes, stacks and unstacks that move no data (passes.layouts.view_encoding):
where nothing else places the result, it takes the encoding that keeps every element of
the source in the same thread, and the renderer copies registers instead of going
through shared memory.  The encodings are checked against the layouts' own coordinates
for every placement of a range of shapes; kernels built on them run on the interpreter
against NumPy, compile with NVRTC and hiprtc, and run on the GPU."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tilecc
import tilecc.language as tl
from tilecc.language.dtypes import BY_NAME
from tilecc.transpiler.ir import Op, Type, Value
from tilecc.transpiler.passes.layouts import default_blocked, view_encoding
from tilecc.transpiler.passes.placement import Placement

try:
    from conftest_compilers import (compile_cleanly_together, require_cuda_compiler,
                                    require_hip_compiler)
    from test_compile_kernels import assert_clean_compile
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import (compile_cleanly_together, require_cuda_compiler,
                                          require_hip_compiler)
    from tests.test_compile_kernels import assert_clean_compile

F32 = BY_NAME["fp32"]


def _op(kind: str, shape: tuple, out: list[tuple], **attrs) -> Op:
    x = Value(Type(F32, shape))
    operands = [x, Value(Type(F32, shape))] if kind == "join" else [x]
    return Op(kind, operands, [Value(Type(F32, s)) for s in out], None, attrs)


def _placements(shape: tuple):
    for warps, vec in itertools.product((1, 8), (1, 2, 8)):
        for order in itertools.permutations(range(len(shape))):
            yield Placement(default_blocked(shape, vec, warps, 32, order), shape), warps


def _holds(p: Placement, warps: int) -> dict:
    """(thread, register) → the element it holds."""
    return {(t, r): p.coords(t, r, 32) for t in range(warps * 32) for r in range(p.regs)}


SHAPES_2D = [(4, 8), (16, 64), (256, 2)]  # copies in registers and lanes; wide; tall


@pytest.mark.parametrize("shape", SHAPES_2D + [(4, 4, 8)])
def test_a_permute_keeps_each_element_in_its_thread_and_register(shape) -> None:
    for order in itertools.permutations(range(len(shape))):
        out = tuple(shape[a] for a in order)
        op = _op("permute", shape, [out], order=order)
        for p, warps in _placements(shape):
            q = Placement(view_encoding(op, p.enc), out)
            assert q.regs == p.regs
            for (t, r), c in _holds(p, warps).items():
                assert q.coords(t, r, 32) == tuple(c[a] for a in order)


@pytest.mark.parametrize("shape", SHAPES_2D + [(64,), (4, 4, 8)])
@pytest.mark.parametrize("batches", [1, 3, 8])
def test_a_stack_and_an_unstack_keep_the_batches_in_registers(shape, batches) -> None:
    """stack (the batches of a batched tl.dot put together): register i R + r of the
    result holds block i's register r (R registers a block); unstack (of a stack held
    so) gives each block back, and refuses a source whose batch axis lanes or warps
    split."""
    stacked = (batches,) + shape
    for p, warps in _placements(shape):
        x = Value(Type(F32, shape))
        op = Op("stack", [x] * batches, [Value(Type(F32, stacked))], None, {})
        enc = view_encoding(op, p.enc)
        q = Placement(enc, stacked)
        assert q.regs == batches * p.regs
        for (t, r), c in _holds(p, warps).items():
            for i in range(batches):
                assert q.coords(t, i * p.regs + r, 32) == (i,) + c
        unstack = _op("unstack", stacked, [shape] * batches)
        assert view_encoding(unstack, enc) == p.enc
    split = default_blocked(stacked, 1, 8, 32, tuple(reversed(range(len(stacked)))))
    if split.tpw[0] * split.wpc[0] > 1:
        assert view_encoding(_op("unstack", stacked, [shape] * batches), split) is None


@pytest.mark.parametrize("shape", SHAPES_2D + [(64,), (4, 4, 8)])
def test_a_join_and_a_split_keep_the_pairs_in_registers(shape) -> None:
    """join: register 2 r + h of the result holds operand h's register r; split (of a
    pair held so) gives them back."""
    pair = shape + (2,)
    for p, warps in _placements(shape):
        enc = view_encoding(_op("join", shape, [pair]), p.enc)
        q = Placement(enc, pair)
        assert q.regs == 2 * p.regs
        for (t, r), c in _holds(p, warps).items():
            for h in (0, 1):
                assert q.coords(t, 2 * r + h, 32) == c + (h,)
        back = view_encoding(_op("split", pair, [shape, shape]), enc)
        assert back == p.enc


@pytest.mark.parametrize("shape", [(16, 32, 2), (128, 32, 2), (32, 2, 128), (4, 8, 4),
                                   (2, 16, 8)])
def test_a_reshape_merging_an_axis_held_in_registers_moves_nothing(shape) -> None:
    """Merging axes k and k + 1 (row-major) where each thread holds axis k + 1 whole and it
    runs just faster than k: the same registers, read as the merged axis; any other
    placement is refused (None) rather than guessed."""
    merged = 0
    for k in range(len(shape) - 1):
        out = shape[:k] + (shape[k] * shape[k + 1],) + shape[k + 2:]
        op = _op("reshape", shape, [out])
        for p, warps in _placements(shape):
            enc = view_encoding(op, p.enc)
            if enc is None:
                continue
            merged += 1
            q = Placement(enc, out)
            assert q.regs == p.regs
            for (t, r), c in _holds(p, warps).items():
                assert q.coords(t, r, 32) == \
                    c[:k] + (c[k] * shape[k + 1] + c[k + 1],) + c[k + 2:]
    assert merged  # the placements a join leaves are among them


@tilecc.jit
def views_kernel(x_ptr, y_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    y = tl.load(y_ptr + rm[:, None] * N + rn[None, :])
    t = tl.trans(x) * 3.0  # [N, M]
    tl.store(out_ptr + rn, tl.sum(t, axis=1))
    j = tl.join(x, y)  # [M, N, 2]
    r = tl.reshape(j, (M, 2 * N))
    w = (tl.arange(0, 2 * N) + 1).to(tl.float32)
    tl.store(out_ptr + N + rm, tl.sum(r * w[None, :], axis=1))
    lo, hi = tl.split(j * 2.0)
    tl.store(out_ptr + N + M + rm, tl.max(lo - 3.0 * hi, axis=1))
    p = tl.permute(tl.reshape(x, (M, N // 2, 2)), (2, 0, 1))  # [2, M, N / 2]
    tl.store(out_ptr + N + 2 * M + tl.arange(0, 2), tl.sum(tl.sum(p, axis=2), axis=1))


def views_reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    m, n = x.shape
    r = np.stack([x, y], axis=-1).reshape(m, 2 * n)
    w = np.arange(1, 2 * n + 1, dtype=np.float32)
    pairs = x.reshape(m, n // 2, 2)
    return np.concatenate([(3 * x).sum(0), (r * w).sum(1), (2 * x - 6 * y).max(1),
                           [pairs[..., 0].sum(), pairs[..., 1].sum()]]).astype(np.float32)


VIEW_SHAPES = [(16, 32), (64, 128), (128, 64), (2, 64)]
# (m, n, num_warps): at most 64 elements of a block per thread
VIEW_CASES = [(16, 32, 1), (16, 32, 4), (64, 128, 4), (64, 128, 8), (128, 64, 8), (2, 64, 1),
              (2, 64, 4)]


def _views_signature(m: int, n: int) -> str:
    return f"*fp32:16,*fp32:16,*fp32:16,{m},{n}"


def _inputs(m: int, n: int):
    rng = np.random.default_rng(m * 1000 + n)
    return (rng.integers(-8, 8, (m, n)).astype(np.float32),
            rng.integers(-8, 8, (m, n)).astype(np.float32))


@pytest.mark.parametrize("m,n", VIEW_SHAPES)
def test_the_views_kernel_on_the_interpreter(m, n) -> None:
    x, y = _inputs(m, n)
    out = np.zeros(n + 2 * m + 2, np.float32)
    views_kernel.interpret[(1,)](x, y, out, M=m, N=n)
    np.testing.assert_array_equal(out, views_reference(x, y))


@pytest.mark.parametrize("warps", [1, 4, 8])
def test_the_views_are_register_copies_in_the_source(warps) -> None:
    src = views_kernel.source(_views_signature(16, 32), num_warps=warps, arch="sm_80")
    for what in ("permute axes to [1, 0]", "join along a new last axis",
                 "reshape [16, 32, 2] -> [16, 64]", "split the last axis",
                 "permute axes to [2, 0, 1]"):
        assert f"// {what}: in registers (every thread keeps its elements)" in src, what


@pytest.mark.parametrize("target,arch", [("cuda", "sm_80"), ("cuda", "sm_90"),
                                         ("hip", "gfx90a")])
def test_the_views_kernel_compiles_cleanly(target, arch) -> None:
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    cases = [(views_kernel, _views_signature(m, n), {"num_warps": warps})
             for m, n, warps in VIEW_CASES]
    if not compile_cleanly_together("register views", target, arch, lambda: cases):
        for kernel, signature, options in cases:  # (which one, and why)
            assert_clean_compile(kernel, signature, target, arch, **options)


@tilecc.jit
def split_apart_kernel(a_ptr, b_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    """A split whose halves are placed apart: the first is read by nothing, the second by
    a store that wants its own vectors (found by the random kernels: its registers were
    copied as if it held the view's elements, and the GPU stored them in the wrong
    places)."""
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    a = tl.load(a_ptr + rm)[:, None]
    b = tl.load(b_ptr + rn)[None, :]
    lo, hi = tl.split(tl.join(tl.broadcast_to(a, (M, N)), tl.broadcast_to(b, (M, N))))
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], hi * 2.0 + 1.0)


SPLIT_CASES = [(4, 32, 2), (4, 32, 4), (16, 64, 4), (64, 16, 8)]


def _split_inputs(m: int, n: int):
    rng = np.random.default_rng(m + n)
    return rng.standard_normal(m).astype(np.float32), rng.standard_normal(n).astype(np.float32)


@pytest.mark.parametrize("m,n,warps", SPLIT_CASES)
def test_a_split_whose_halves_are_placed_apart(m, n, warps) -> None:
    """Each half of a split holds its elements where its own encoding says: copied in
    registers only where both are the view's, else through shared memory."""
    a, b = _split_inputs(m, n)
    out = np.zeros((m, n), np.float32)
    split_apart_kernel.interpret[(1,)](a, b, out, M=m, N=n)
    np.testing.assert_array_equal(out, np.broadcast_to(2 * b + 1, (m, n)))
    src = split_apart_kernel.source(f"*fp32:16,*fp32:16,*fp32:16,{m},{n}", num_warps=warps)
    if (m, n, warps) == (4, 32, 2):  # (the placement the random program had)
        assert "// split the last axis: through shared memory" in src
    for target, arch in (("cuda", "sm_90"), ("hip", "gfx90a")):
        (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
        split_apart_kernel.compile(f"*fp32:16,*fp32:16,*fp32:16,{m},{n}", target=target,
                                   arch=arch, num_warps=warps)  # (`lo` is never read)


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,warps", SPLIT_CASES)
def test_gpu_split_whose_halves_are_placed_apart(m, n, warps) -> None:
    cupy = pytest.importorskip("cupy")
    a, b = _split_inputs(m, n)
    out = cupy.zeros((m, n), cupy.float32)
    split_apart_kernel[(1,)](cupy.asarray(a), cupy.asarray(b), out, M=m, N=n,
                             num_warps=warps)
    np.testing.assert_array_equal(cupy.asnumpy(out), np.broadcast_to(2 * b + 1, (m, n)))


@tilecc.jit
def upcast_dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr,
                      K: tl.constexpr):
    """A (M x K) and B stored N x K, both fp8, multiplied as bf16: `b.T` cast, then fed
    to the product (the fp8-weights form of tutorial 09's b.T)."""
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rn[:, None] * K + rk[None, :])
    acc = tl.dot(a.to(tl.bfloat16), b.T.to(tl.bfloat16))
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


def _dot_signature(m=128, n=128, k=64) -> str:
    return f"*fp8e4nv:16,*fp8e4nv:16,*fp32:16,{m},{n},{k}"


def test_a_transposed_operand_cast_before_the_product_is_staged_k_major() -> None:
    """The transpose of B moves nothing (it was a byte-by-byte round trip through shared
    memory, with bank conflicts); the product stores B K-major in 16-byte vectors."""
    src = upcast_dot_kernel.source(_dot_signature(), num_warps=8, arch="sm_90a")
    assert "permute axes to [1, 0]: in registers" in src
    assert "through shared memory" not in src.split("#include")[1].split(
        "// 128 x 64 @ 64 x 128")[0]
    assert "B from shared memory (K-major)" in src


def test_fp4_nibbles_are_unpacked_in_registers() -> None:
    """tl.dot_scaled of e2m1 operands: the nibbles joined and merged into rows with no
    trip through shared memory."""
    from test_blocks import load_example

    ex = load_example("block_scaled_matmul")
    sig = ('tensordesc<u8[128,32]>,*u8:16,tensordesc<u8[128,32]>,*u8:16,*fp32:16,i32:16,'
           'i32:16,i32:16,i32:16,i32:16,i32:16,"e2m1",128,128,64')
    src = ex.block_scaled_matmul_kernel.source(sig, num_warps=8, num_stages=3, arch="sm_90a")
    for what in ("join along a new last axis", "reshape [128, 32, 2] -> [128, 64]",
                 "reshape [32, 2, 128] -> [64, 128]"):
        assert f"// {what}: in registers" in src, what
    assert "join along a new last axis: through shared memory" not in src


def test_the_upcast_product_on_the_interpreter() -> None:
    import ml_dtypes

    rng = np.random.default_rng(3)
    a = rng.standard_normal((32, 32)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.standard_normal((16, 32)).astype(ml_dtypes.float8_e4m3fn)
    c = np.zeros((32, 16), np.float32)
    upcast_dot_kernel.interpret[(1,)](a, b, c, M=32, N=16, K=32)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32).T, rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])  # (no fp8e4nv before sm_89)
def test_the_upcast_product_compiles_cleanly(arch) -> None:
    require_cuda_compiler()
    for (m, n, k), warps in [((128, 128, 64), 8), ((64, 64, 64), 4), ((128, 256, 64), 8)]:
        assert_clean_compile(upcast_dot_kernel, _dot_signature(m, n, k), "cuda", arch,
                             num_warps=warps)


def _cuda_torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    return torch


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,warps", VIEW_CASES)
def test_gpu_views_kernel(m, n, warps) -> None:
    torch = _cuda_torch()
    x, y = _inputs(m, n)
    out = torch.zeros(n + 2 * m + 2, device="cuda")
    views_kernel[(1,)](torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda(), out, M=m,
                       N=n, num_warps=warps)
    np.testing.assert_array_equal(out.cpu().numpy(), views_reference(x, y))


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k,warps", [(128, 128, 64, 8), (64, 64, 64, 4),
                                         (128, 256, 64, 8), (64, 32, 32, 4)])
def test_gpu_upcast_product(m, n, k, warps) -> None:
    torch = _cuda_torch()
    torch.manual_seed(m + n + k)
    a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)
    c = torch.zeros(m, n, device="cuda")
    upcast_dot_kernel[(1,)](a, b, c, M=m, N=n, K=k, num_warps=warps)
    torch.testing.assert_close(c, a.float() @ b.float().T, rtol=1e-4, atol=1e-3)
