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


# --- random kernels (tilecc.testing.random_kernels; tests/test_random_kernels.py) -----------

def test_random_kernels_gpu_matches_interpreter() -> None:
    """The first programs on the GPU against the interpreter (the campaign runs thousands)."""
    import tempfile

    from tilecc.testing import random_kernels as RK

    programs = {s: RK.generate(s) for s in range(200)}
    with tempfile.TemporaryDirectory() as tmp:
        failed = []
        for prog in programs.values():
            r = RK.check(prog, tmp, targets=(("cuda", None),))
            if r.kind == "ok":
                r = RK.run_gpu(prog, prog.load(tmp), r)
            if r.kind != "ok":
                failed.append(r)
    assert not failed, "\n\n".join(f"seed {r.seed}: {r.kind}: {r.detail[:2000]}\n"
                                    f"{programs[r.seed].source}" for r in failed)


@tilecc.jit
def double_negation_kernel(x_ptr, out_ptr):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, -(-x))


def test_double_negation_on_gpu() -> None:
    """-(-x) was rendered `--x`, a decrement of x."""
    import cupy

    x = cupy.arange(16, dtype=cupy.int32) - 5
    out = cupy.zeros(16, cupy.int32)
    double_negation_kernel[(1,)](x, out)
    np.testing.assert_array_equal(cupy.asnumpy(out), np.arange(16) - 5)
