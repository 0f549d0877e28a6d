"""GPU runs against NumPy, with CuPy and torch arguments (`pytest -m gpu`)."""

import os
import sys

import numpy as np
import pytest

import tilecc
import tilecc.language as tl

pytestmark = pytest.mark.gpu


# The examples' kernels, run here on real arrays.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
from fused_elementwise import silu_mul_kernel  # noqa: E402
from vector_add import add_kernel  # noqa: E402


@tilecc.jit
def loop_kernel(x_ptr, out_ptr, n, reps, scale, BLOCK: tl.constexpr):
    # a run-time loop carrying a block, a while loop and an if on a scalar
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    acc = x * 0.0
    for i in range(reps):
        acc += x * i
    j = 0
    while j < 3:
        acc = acc + 1.0
        j += 1
    if scale > 1.0:
        acc = acc * scale
    else:
        acc = acc - scale
    tl.store(out_ptr + offs, acc, mask=mask)


@tilecc.jit
def int_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=1)
    b = tl.load(b_ptr + offs, mask=mask, other=1)
    r = (a // b) + (a % b) * 3 + ((a ^ b) & 7) - (a >> 1) + tl.maximum(a, b) - tl.minimum(a, b)
    tl.store(out_ptr + offs, r, mask=mask)


def _ref_int(a, b):
    q = np.fmod(a, b)
    return ((a - q) // b) + q * 3 + ((a ^ b) & 7) - (a >> 1) + np.maximum(a, b) - np.minimum(a, b)


def _frameworks():
    out = []
    try:
        import cupy
        out.append(("cupy", cupy.asarray, cupy.asnumpy))
    except ImportError:
        pass
    try:
        import torch
        if torch.cuda.is_available():
            out.append(("torch", lambda a: torch.from_numpy(np.ascontiguousarray(a)).cuda(),
                        lambda t: t.cpu().numpy()))
    except ImportError:
        pass
    return out


FRAMEWORKS = _frameworks()
SIZES = [1, 100, 1024, 1000003, 1 << 20]


@pytest.mark.parametrize("fw", FRAMEWORKS, ids=[f[0] for f in FRAMEWORKS])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_add(fw, n, dtype):
    _, to_dev, to_host = fw
    rng = np.random.default_rng(n)
    x, y = (rng.standard_normal(n).astype(dtype) for _ in range(2))
    out = to_dev(np.full(n, np.nan, dtype))
    add_kernel[(tilecc.cdiv(n, 1024),)](to_dev(x), to_dev(y), out, n, BLOCK_SIZE=1024)
    np.testing.assert_array_equal(to_host(out), x + y)


@pytest.mark.parametrize("fw", FRAMEWORKS, ids=[f[0] for f in FRAMEWORKS])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_silu_mul(fw, n, dtype):
    _, to_dev, to_host = fw
    rng = np.random.default_rng(n + 1)
    x, y = (rng.standard_normal(n).astype(dtype) for _ in range(2))
    out = to_dev(np.full(n, np.nan, dtype))
    silu_mul_kernel[lambda m: (tilecc.cdiv(n, m["BLOCK_SIZE"]),)](to_dev(x), to_dev(y), out, n,
                                                              BLOCK_SIZE=2048, num_warps=8)
    xf, yf = x.astype(np.float64), y.astype(np.float64)
    ref = xf / (1 + np.exp(-xf)) * yf
    tol = 1e-5 if dtype == np.float32 else 2e-3
    np.testing.assert_allclose(to_host(out).astype(np.float64), ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("fw", FRAMEWORKS, ids=[f[0] for f in FRAMEWORKS])
def test_loops_and_branches(fw):
    _, to_dev, to_host = fw
    n = 5000
    x = np.random.default_rng(3).standard_normal(n).astype(np.float32)
    for reps, scale in [(0, 2.0), (5, 0.5)]:
        out = to_dev(np.full(n, np.nan, np.float32))
        loop_kernel[(tilecc.cdiv(n, 256),)](to_dev(x), out, n, reps, scale, BLOCK=256)
        ref = loop_kernel.interpret  # the interpreter is the reference semantics
        host = np.full(n, np.nan, np.float32)
        ref[(tilecc.cdiv(n, 256),)](x, host, n, reps, scale, BLOCK=256)
        np.testing.assert_allclose(to_host(out), host, rtol=1e-6)
        acc = x * sum(range(reps)) + 3.0
        np.testing.assert_allclose(host, acc * scale if scale > 1 else acc - scale,
                                   rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fw", FRAMEWORKS, ids=[f[0] for f in FRAMEWORKS])
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint16])
def test_integer_ops(fw, dtype):
    _, to_dev, to_host = fw
    n = 3001
    rng = np.random.default_rng(7)
    info = np.iinfo(dtype)
    lo = max(info.min, -1000)
    a = rng.integers(lo, min(info.max, 1000), n).astype(dtype)
    b = rng.integers(1, min(info.max, 50), n).astype(dtype)
    if info.min < 0:
        b = np.where(rng.random(n) < 0.5, -b, b).astype(dtype)
    out = to_dev(np.zeros(n, dtype))
    int_kernel[(tilecc.cdiv(n, 512),)](to_dev(a), to_dev(b), out, n, BLOCK=512)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(to_host(out), _ref_int(a, b).astype(dtype))


def test_empty_grid_launches_nothing():
    import cupy
    x = cupy.ones(16, cupy.float32)
    out = cupy.full(16, -1.0, cupy.float32)
    add_kernel[(0,)](x, x, out, 16, BLOCK_SIZE=16)
    assert float(out[0]) == -1.0


def test_host_array_is_rejected():
    x = np.ones(16, np.float32)
    with pytest.raises(TypeError, match="x_ptr.*host"):
        add_kernel[(1,)](x, x, x, 16, BLOCK_SIZE=16)


def test_current_torch_stream_is_used():
    torch = pytest.importorskip("torch")
    s = torch.cuda.Stream()
    n = 1 << 20
    x = torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    with torch.cuda.stream(s):
        add_kernel[(tilecc.cdiv(n, 1024),)](x, x, out, n, BLOCK_SIZE=1024)
    s.synchronize()
    torch.testing.assert_close(out, x + x)


@pytest.mark.parametrize("out,block", [("float16", 1024), ("int8", 1024), ("float16", 256),
                                       ("float32", 1024)])
def test_masked_narrow_vector_stores(out, block):
    """Predicated vector stores (`tc::store_if`) write exactly the elements below n, as the
    interpreter does, and nothing past them (n a multiple of 16, not of the block)."""
    import torch

    sys.path.insert(0, os.path.dirname(__file__))
    from kernels import cdiv, narrow_store_kernel

    n = 3 * block + 48
    x = np.random.default_rng(1).uniform(-30, 30, n).astype(np.float32)
    want = np.full(n + 16, 7, dtype=out)
    narrow_store_kernel.interpret[(cdiv(n, block),)](x, want, n, BLOCK=block)
    got = torch.full((n + 16,), 7, dtype=getattr(torch, out), device="cuda")
    narrow_store_kernel[(cdiv(n, block),)](torch.from_numpy(x).cuda(), got, n, BLOCK=block)
    np.testing.assert_array_equal(got.cpu().numpy(), want)


# --- atomics on blocks held by several threads (tests/kernels_atomics.py) --------------------

def _atomics():
    sys.path.insert(0, os.path.dirname(__file__))
    import kernels_atomics

    return kernels_atomics


_KA_OPS = [(op, dt) for op in ("add", "max", "min", "xchg", "cas", "and", "or", "xor")
           for dt in ("int32", "float32", "float64")
           if not (op in ("and", "or", "xor") and dt != "int32")]
_KA_SHAPES = [(S, S, w) for S in (1, 4, 16, 64) for w in (1, 4)] + [(32, 4, 1), (128, 4, 4)]


@pytest.mark.parametrize("S,C,num_warps", _KA_SHAPES, ids=lambda v: str(v))
@pytest.mark.parametrize("op,dtype", _KA_OPS, ids=lambda v: str(v))
def test_replicated_atomics_run_once_and_reach_every_copy(op, dtype, S, C, num_warps):
    """An S x 1 block's atomic is performed once per row (P after = op(P0, X) exactly, not
    applied twice), and every copy of its result — read broadcast over C columns and as a
    gather index — is the old value, as on the interpreter."""
    import torch

    KA = _atomics()
    args = KA.rmw_args(op, S, np.dtype(dtype), C=C)
    want = KA.rmw_reference(op, [a.copy() for a in args])
    interp = [a.copy() for a in args]
    KA.replicated_rmw_kernel.interpret[(1,)](*interp, S=S, C=C, OP=KA.OP_CODE[op])
    dev = [torch.from_numpy(a.copy()).cuda() for a in args]
    KA.replicated_rmw_kernel[(1,)](*dev, S=S, C=C, OP=KA.OP_CODE[op], num_warps=num_warps)
    for name, got, ref, i in zip(("P", "OLD", "GATHER"), (dev[0], dev[2], dev[3]), want,
                                 (0, 2, 3)):
        np.testing.assert_array_equal(got.cpu().numpy(), ref, err_msg=name)
        np.testing.assert_array_equal(interp[i], ref, err_msg=f"{name} (interpreter)")


@pytest.mark.parametrize("S", [1, 4, 16, 64])
@pytest.mark.parametrize("num_warps", [1, 4])
def test_issue_atomic_results_used_as_indices(S, num_warps):
    """The issue's kernels: the old values of atomic_add / atomic_cas on an S x 1 block,
    used right away as store indices."""
    import torch

    KA = _atomics()
    p0 = np.random.default_rng(S).permutation(S).astype(np.int32)
    for kernel, new, key in ((KA.issue_add_kernel, p0 + np.arange(S), p0),
                             (KA.issue_cas_kernel, np.where(p0 == np.arange(S),
                                                            np.arange(S) + 100, p0), p0)):
        want_out = np.full((S, S), -1, np.int32)
        want_p = p0.copy()
        kernel.interpret[(1,)](want_p, want_out, S=S)
        np.testing.assert_array_equal(want_p, new)
        expect = np.full((S, S), -1, np.int32)
        expect[key & (S - 1), :] = (key + 1)[:, None]
        np.testing.assert_array_equal(want_out, expect)
        p = torch.from_numpy(p0.copy()).cuda()
        out = torch.full((S, S), -1, dtype=torch.int32, device="cuda")
        kernel[(1,)](p, out, S=S, num_warps=num_warps)
        np.testing.assert_array_equal(p.cpu().numpy(), want_p)
        np.testing.assert_array_equal(out.cpu().numpy(), want_out)


@pytest.mark.parametrize("num_warps", [1, 4, 8])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_atomic_on_a_reductions_slice_layout(dtype, num_warps):
    import torch

    KA = _atomics()
    S = 16
    rng = np.random.default_rng(5)
    x = rng.integers(-8, 9, (S, S)).astype(dtype)  # exact sums
    p0 = rng.integers(-8, 9, S).astype(dtype)
    p, xs, old = (torch.from_numpy(a.copy()).cuda() for a in (p0, x, np.zeros((S, S), dtype)))
    KA.reduce_then_atomic_kernel[(1,)](p, xs, old, S=S, num_warps=num_warps)
    np.testing.assert_array_equal(p.cpu().numpy(), p0 + x.sum(axis=1))
    np.testing.assert_array_equal(old.cpu().numpy(), np.repeat(p0[:, None], S, axis=1))


@pytest.mark.parametrize("S,num_warps", [(4, 4), (16, 1), (16, 4), (64, 8)])
def test_replicated_atomics_in_loops_and_branches(S, num_warps):
    import torch

    KA = _atomics()
    T = 5
    p0 = np.arange(S, dtype=np.int32) * 3
    for flag in (0, 1):
        want_p, want_out = p0.copy(), np.zeros((S, S), np.int32)
        KA.loop_atomic_kernel.interpret[(1,)](want_p, want_out, T, flag, S=S)
        acc = T * p0 + T * (T - 1) // 2 + flag * 1000 * (p0 + T)
        np.testing.assert_array_equal(want_out, np.repeat(acc[:, None], S, axis=1))
        p = torch.from_numpy(p0.copy()).cuda()
        out = torch.zeros((S, S), dtype=torch.int32, device="cuda")
        KA.loop_atomic_kernel[(1,)](p, out, T, flag, S=S, num_warps=num_warps)
        np.testing.assert_array_equal(p.cpu().numpy(), want_p)
        np.testing.assert_array_equal(out.cpu().numpy(), want_out)


@pytest.mark.parametrize("largest", [True, False], ids=["max", "min"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_atomic_max_min_follow_tritons_order(dtype, largest):
    """Signed zeros and NaNs of both signs: the GPU, the interpreter and Triton's order
    agree bit for bit, and the old values are returned."""
    import torch

    KA = _atomics()
    mem, val = KA.float_extreme_args(dtype)
    bits = f"i{mem.itemsize}"
    want = KA.float_extreme_reference(mem, val, largest)
    p, v = torch.from_numpy(mem.copy()).cuda(), torch.from_numpy(val.copy()).cuda()
    old = torch.zeros_like(p)
    KA.float_extreme_kernel[(1,)](p, v, old, mem.size, LARGEST=largest, BLOCK=16)
    np.testing.assert_array_equal(p.cpu().numpy().view(bits), want.view(bits))
    np.testing.assert_array_equal(old.cpu().numpy().view(bits), mem.view(bits))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_atomic_cas_compares_bits(dtype):
    """Signed zeros are different bits, a NaN matches the same NaN: GPU and interpreter
    agree with the bitwise comparison."""
    import torch

    KA = _atomics()
    mem, cmp = KA.float_cas_args(dtype)
    bits = f"u{mem.itemsize}"
    want = KA.float_cas_reference(mem, cmp)
    interp, interp_old = mem.copy(), np.zeros_like(mem)
    KA.float_cas_kernel.interpret[(1,)](interp, cmp, interp_old, BLOCK=mem.size)
    np.testing.assert_array_equal(interp.view(bits), want.view(bits))
    p, c = torch.from_numpy(mem.copy()).cuda(), torch.from_numpy(cmp.copy()).cuda()
    old = torch.zeros_like(p)
    KA.float_cas_kernel[(1,)](p, c, old, BLOCK=mem.size)
    np.testing.assert_array_equal(p.cpu().numpy().view(bits), want.view(bits))
    np.testing.assert_array_equal(old.cpu().numpy().view(bits), mem.view(bits))
