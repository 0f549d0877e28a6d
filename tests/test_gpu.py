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


def _scale(x_ptr, out_ptr, n, s, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * s, mask=mask)


@pytest.mark.parametrize("fw", ["torch", "cupy"])
def test_warm_launches_however_the_grid_and_thread_come(fw):
    """Warm launches (the generated direct launch) with a grid tuple, a callable grid, a
    list, through kernel.run, from another thread (no CUDA context current there yet) and
    with a float beyond fp32 (inf, as a C cast makes it): each computes its own result."""
    xp = pytest.importorskip(fw)
    import threading

    n, block = 5000, 1024
    host = np.arange(1, n + 1, dtype=np.float32)
    x = xp.asarray(host) if fw == "cupy" else xp.from_numpy(host).cuda()

    def new_out():
        return xp.zeros(n, dtype=xp.float32) if fw == "cupy" else \
            xp.zeros(n, dtype=xp.float32, device="cuda")

    def to_host(a):
        return a.get() if fw == "cupy" else a.cpu().numpy()

    k = tilecc.jit(_scale)
    grid = (tilecc.cdiv(n, block),)
    launches = [
        lambda out, s: k[grid](x, out, n, s, BLOCK=block),
        lambda out, s: k[grid](x, out, n, s, BLOCK=block),
        lambda out, s: k[grid](x, out, n, s, BLOCK=block),
        lambda out, s: k[lambda meta: (tilecc.cdiv(meta["n"], meta["BLOCK"]),)](
            x, out, n, s, BLOCK=block),
        lambda out, s: k[list(grid)](x, out, n, s, BLOCK=block),
        lambda out, s: k.run(x, out, n, s, grid=grid, warmup=False, BLOCK=block),
        lambda out, s: k[grid](x, out, n, s, BLOCK=block, num_warps=8),
        lambda out, s: k[grid](x, out, n, s, BLOCK=block, num_warps=8),
    ]
    for i, launch in enumerate(launches):
        out = new_out()
        launch(out, i + 0.5)
        np.testing.assert_array_equal(to_host(out), host * np.float32(i + 0.5))
    assert k._direct is not None
    out = new_out()
    thread = threading.Thread(target=lambda: k[grid](x, out, n, 3.5, BLOCK=block))
    thread.start()
    thread.join()
    np.testing.assert_array_equal(to_host(out), host * np.float32(3.5))
    out = new_out()
    k[grid](x, out, n, 1e300, BLOCK=block)
    assert np.isposinf(to_host(out)).all()


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


# --- shared memory: a pool past 48 KiB, and configs over the device's limit -----------------

def _dot_loop_run(kernel, m, n, k, blocks, stages, warps):
    import cupy as cp

    rng = np.random.default_rng(5)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = cp.full((m, n), np.nan, cp.float32)
    bm, bn, bk = blocks
    kernel[(tilecc.cdiv(m, bm), tilecc.cdiv(n, bn))](
        cp.asarray(a), cp.asarray(b), c, m, n, k, k, 1, n, 1, n, BM=bm, BN=bn, BK=bk, IEEE=False,
        num_warps=warps, num_stages=stages)
    return cp.asnumpy(c), a.astype(np.float32) @ b.astype(np.float32)


def test_shared_pool_past_48_kib_runs_from_dynamic_shared_memory():
    """A pool over CUDA's 48 KiB of static arrays lives in dynamic shared memory (after the
    tl.dot stages, when there are some): the results are the interpreter's / NumPy's."""
    import cupy as cp

    sys.path.insert(0, os.path.dirname(__file__))
    import kernels_dot as KD
    from test_resources import transpose_kernel

    x = np.random.default_rng(2).standard_normal((128, 128)).astype(np.float32)
    y = cp.full((128, 128), np.nan, cp.float32)
    transpose_kernel[(1,)](cp.asarray(x), y, N=128)
    np.testing.assert_array_equal(cp.asnumpy(y), x.T + 1.0)
    # B (N ragged: staged from registers) takes a 64 KiB pool behind A's cp.async stages
    got, want = _dot_loop_run(KD.dot_loop_kernel, 200, 250, 320, (64, 256, 128), 2, 8)
    np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-2)


def test_config_over_the_device_limit_is_out_of_resources(monkeypatch, tmp_path):
    import cupy as cp

    monkeypatch.setenv("TILECC_CACHE_DIR", str(tmp_path))  # keeps what the patch lets by

    sys.path.insert(0, os.path.dirname(__file__))
    import kernels_dot as KD

    device_limit = cp.cuda.runtime.deviceGetAttribute(97, 0)  # MaxSharedMemoryPerBlockOptin
    with pytest.raises(tilecc.OutOfResources) as info:  # 512 KiB of stages: too much anywhere
        _dot_loop_run(KD.dot_loop_kernel, 256, 256, 512, (256, 256, 128), 4, 8)
    # the stages (and, where TMA copies them, sm_90, an mbarrier each)
    assert info.value.required - 4 * (256 * 128 + 128 * 256) * 2 in (0, 4 * 8)
    assert info.value.limit == device_limit  # the architecture's table is the device's number
    # where the table would allow it, the device's own number (read at load) still refuses
    import tilecc.transpiler.target as T

    monkeypatch.setattr(T, "shared_memory_limit", lambda target, arch: 1 << 30)
    with pytest.raises(tilecc.OutOfResources, match=f"Hardware limit: {device_limit}"):
        _dot_loop_run(KD.dot_loop_kernel, 256, 256, 512, (256, 256, 128), 3, 8)


@pytest.mark.parametrize("fw", FRAMEWORKS, ids=[f[0] for f in FRAMEWORKS])
def test_interpreter_on_interleaved_device_views(fw):
    """kernel.interpret with device arrays: two interleaved strided views of one buffer are
    copied to the host once, with their strides, and back (as on the GPU)."""
    _, to_dev, to_host = fw
    sys.path.insert(0, os.path.dirname(__file__))
    from test_interpreter import bump_two_views

    memory = np.arange(6 * 8, dtype=np.float32).reshape(6, 8)
    want = memory.copy()
    bump_two_views.interpret[(1,)](want[1:5, 0::2], want[1:5, 1::2], 4, 4, 8, 2, BR=4, BC=4)
    for launch in (bump_two_views.interpret, bump_two_views):
        dev = to_dev(memory)
        launch[(1,)](dev[1:5, 0::2], dev[1:5, 1::2], 4, 4, 8, 2, BR=4, BC=4)
        np.testing.assert_array_equal(to_host(dev), want)


# --- Triton's integer semantics and reductions: the GPU against the interpreter ---------------

def _promotion_tests():
    sys.path.insert(0, os.path.dirname(__file__))
    import test_promotion

    return test_promotion


def _on_gpu(fw, kernel, grid, args, **kw):
    """Run `kernel` with the NumPy arrays in `args` moved to the GPU; the arrays back."""
    _, to_dev, to_host = fw
    dev = [to_dev(a) if isinstance(a, np.ndarray) else a for a in args]
    kernel[grid](*dev, **kw)
    return [to_host(d) if isinstance(a, np.ndarray) else a for a, d in zip(args, dev)]


_INT_NAMES = ["int1", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
_CUPY_ONLY = {"uint16", "uint32", "uint64"}  # torch's unsigned types lack some kernels


def _fw_for(*names):
    fws = [f for f in FRAMEWORKS if f[0] == "cupy" or not _CUPY_ONLY & set(names)]
    if not fws:
        pytest.skip("needs CuPy for unsigned 16/32/64-bit arrays")
    return fws[0]


@pytest.mark.parametrize("dx", _INT_NAMES)
@pytest.mark.parametrize("dy", _INT_NAMES)
def test_shifts_of_every_signedness_pair(dx, dy):
    """x << y and x >> y for every pair of integer types, amounts past the width and
    negative ones included: the GPU gives what the interpreter (and Triton) gives."""
    T = _promotion_tests()
    from tilecc.language import dtypes as D

    tx, ty = D.BY_LONG_NAME[dx], D.BY_LONG_NAME[dy]
    t = D.integer_promote(tx, ty)
    rng = np.random.default_rng(11)
    x, y = T._random_ints(rng, tx, 1000), T._amounts(rng, ty, 1000)
    want = T.run_shifts(T.shift_kernel.interpret, x, y, t)
    fw = _fw_for(dx, dy, D.LONG_NAMES[t.short])
    for block in (64, 1024):
        n = x.size
        shl, shr = (np.zeros(n, t.to_numpy()) for _ in range(2))
        got = _on_gpu(fw, T.shift_kernel, (tilecc.cdiv(n, block),), [x, y, shl, shr, n],
                      BLOCK=block)
        np.testing.assert_array_equal(got[2], want[0], err_msg=f"{dx} << {dy}")
        np.testing.assert_array_equal(got[3], want[1], err_msg=f"{dx} >> {dy}")


def test_int1_arithmetic_and_literal_comparisons_on_gpu():
    T = _promotion_tests()
    fw = FRAMEWORKS[0]
    x = np.array([0, 0, 1, 1], bool)
    y = np.array([0, 1, 0, 1], bool)
    got = _on_gpu(fw, T.bool_arith_kernel, (1,), [x, y, np.zeros(16, bool), 4], BLOCK=4)
    np.testing.assert_array_equal(got[2], T.bool_arith_ref(x, y))
    for xs in (np.array([0.1, 0.0999, 0.1001], np.float16), np.array([44, -1, 0], np.int8)):
        want = np.zeros(6, bool)
        T.compare_literal_kernel.interpret[(1,)](xs, want, 3, BLOCK=4)
        got = _on_gpu(fw, T.compare_literal_kernel, (1,), [xs, np.zeros(6, bool), 3], BLOCK=4)
        np.testing.assert_array_equal(got[1], want)


@pytest.mark.parametrize("dt,fill", [(tl.int1, 1), (tl.int1, 3), (tl.int8, 1), (tl.int8, 3),
                                     (tl.uint8, 1), (tl.int16, 64), (tl.int32, 3)])
def test_sum_with_dtype_wraps_on_gpu(dt, fill):
    """tl.sum(x, dtype=tl.int1) over 32 x 32 ones is 0, as Triton's 1-bit adds give."""
    T = _promotion_tests()
    x = np.full(1024, fill, np.int32)
    want = np.zeros(1, np.int64)
    T.sum_dtype_kernel.interpret[(1,)](x, want, dt)
    for warps in (1, 4, 8):
        got = _on_gpu(FRAMEWORKS[0], T.sum_dtype_kernel, (1,), [x, np.zeros(1, np.int64), dt],
                      num_warps=warps)
        assert got[1][0] == want[0], (dt, fill, warps)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("n,warps", [(64, 1), (256, 4), (1024, 8)])
@pytest.mark.parametrize("tie_left", [True, False])
def test_argmax_argmin_with_nan_on_gpu(dtype, n, warps, tie_left):
    """NaN wins argmax and argmin (the first NaN with tie_break_left): the GPU's combine
    tree gives the interpreter's answer. Without tie_break_left any index of the extreme
    value (or of a NaN) is allowed."""
    T = _promotion_tests()
    rng = np.random.default_rng(n + warps)
    x = T.nan_rows(rng, 16, n, dtype)
    got = _on_gpu(FRAMEWORKS[0], T.arg_kernel, (16,), [x, np.zeros((16, 4), np.int32), n,
                                                       tie_left], num_warps=warps)[1]
    if tie_left:
        want = np.zeros((16, 4), np.int32)
        T.arg_kernel.interpret[(16,)](x, want, n, True)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got, T.arg_reference(x))
        return
    for r in range(16):
        row = x[r]
        has_nan = np.isnan(row).any()
        for col, extreme in ((0, np.max), (1, np.min), (2, np.max), (3, np.min)):
            v = row[got[r, col]]
            assert np.isnan(v) if has_nan else v == extreme(row), (r, col)


@pytest.fixture(scope="module")
def identifier_kernels(tmp_path_factory):
    try:
        import identifier_names
    except ImportError:  # tests/ imported as a package
        from tests import identifier_names
    return identifier_names, identifier_names.load_module(tmp_path_factory.mktemp("ids"))


@pytest.mark.parametrize("fw", FRAMEWORKS, ids=[f[0] for f in FRAMEWORKS])
def test_names_cxx_cannot_take(fw, identifier_kernels):
    """Kernels whose locals, parameters, helpers and own names are C++ keywords, CUDA
    built-ins, math functions, tilecc's names or non-ASCII (tests/identifier_names.py):
    launched under their C++ symbols, against the interpreter and NumPy."""
    _, to_dev, to_host = fw
    I, mod = identifier_kernels
    n = 1000
    x = np.random.default_rng(5).standard_normal(n).astype(np.float32)
    for kernel in (mod.locals_kernel, mod.roles_kernel):
        out = to_dev(np.full(n, np.nan, np.float32))
        kernel[(tilecc.cdiv(n, 128),)](to_dev(x), out, n, 128)
        host = np.full(n, np.nan, np.float32)
        kernel.interpret[(tilecc.cdiv(n, 128),)](x, host, n, 128)
        np.testing.assert_allclose(to_host(out), host, rtol=1e-5, atol=1e-3)
    np.testing.assert_allclose(host[:128], 6 * x[:128] + 1 + 3 * x[:128].sum() + x[:128].max()
                               + np.cumsum(x[:128]), rtol=1e-4, atol=1e-3)
    for c, names in enumerate(I.param_chunks()):
        args = [(i * 7 + c) % 11 - 5 for i in range(len(names))]
        res = to_dev(np.zeros(1, np.int32))
        getattr(mod, f"params_{c}")[(1,)](res, *args)
        assert int(to_host(res)[0]) == sum((i + 1) * a for i, a in enumerate(args))
    for name in ("this", "sinf", "pow", "threadIdx", "A7", "αβ", "变量", "_", "tc", "main",
                 "acc0", "Blocked0", "NULL", "printf", "xé"):
        one = to_dev(np.full(1, -1.0, np.float32))
        mod.KERNELS[name][(1,)](one)
        assert float(to_host(one)[0]) == I.ALL.index(name), name


@tilecc.jit
def fill_shape(out_ptr, value, SHAPE: tl.constexpr):
    rows = tl.arange(0, SHAPE[0])[:, None]
    cols = tl.arange(0, SHAPE[1])[None, :]
    tl.store(out_ptr + rows * SHAPE[1] + cols, tl.full(SHAPE, value, tl.float32))


def test_tuple_constexpr_at_launch():
    """A tuple constexpr (a shape) specializes the launch, warm launches included."""
    import cupy
    for shape in [(16, 32), (16, 32), (8, 4), (16, 32)]:  # cold, warm, another, warm again
        out = cupy.zeros(16 * 32 + 1, cupy.float32)
        fill_shape[(1,)](out, 2.5, shape)
        n = shape[0] * shape[1]
        host = cupy.asnumpy(out)
        assert (host[:n] == 2.5).all() and (host[n:] == 0).all(), shape


@tilecc.jit
def fp32_constants(out_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    offs = tl.arange(0, 4)
    v = tl.where(offs == 0, tl.full((4,), A, tl.float32), tl.full((4,), C, tl.float32))
    v = tl.where(offs == 1, tl.full((4,), B, tl.float32), v)
    tl.store(out_ptr + offs, v)


def test_fp32_constants_beyond_range_as_the_interpreter():
    import cupy
    values = dict(A=1e39, B=1e-50, C=1e-40)
    out = cupy.zeros(4, cupy.float32)
    fp32_constants[(1,)](out, **values)
    ref = np.zeros(4, np.float32)
    fp32_constants.interpret[(1,)](ref, **values)
    assert np.array_equal(cupy.asnumpy(out), ref), (out, ref)
    assert np.isinf(ref[0]) and ref[1] == 0 and ref[2] == np.float32(1e-40)


def test_launch_with_no_visible_gpu_says_so(tmp_path):
    """The corpus' launch_without_a_gpu case, on a machine that has a GPU (hidden)."""
    import subprocess
    case = os.path.join(os.path.dirname(__file__), "bad_inputs", "kernels",
                        "launch_without_a_gpu.py")
    runner = os.path.join(os.path.dirname(__file__), "test_bad_kernels.py")
    env = {**os.environ, "TILECC_CACHE_DIR": str(tmp_path),
           "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    r = subprocess.run([sys.executable, runner, case], capture_output=True, text=True,
                       timeout=120, env=env)
    assert r.stdout.startswith("raised: tilecc.errors.NoDeviceError\ncontext: no\n"), r.stdout


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


# --- random kernels (tilecc.testing.random_kernels; tests/test_random_kernels.py) -----------

def test_random_kernels_gpu_matches_interpreter() -> None:
    """The first programs on the GPU against the interpreter (the campaign runs thousands),
    and the campaign's seeds that once failed."""
    from tilecc.testing import random_kernels as RK

    sys.path.insert(0, os.path.dirname(__file__))
    from test_random_kernels import CAMPAIGN_SEEDS

    programs = {s: RK.generate(s) for s in [*range(200), *CAMPAIGN_SEEDS]}
    _random_programs_on_gpu(programs)


def test_random_kernels_of_wild_constructs_gpu_matches_interpreter() -> None:
    """Programs of the constructs of libraries' kernels (RK.WILD_FEATURES) on the GPU."""
    from tilecc.testing import random_kernels as RK

    sys.path.insert(0, os.path.dirname(__file__))
    from test_random_kernels import WILD_CAMPAIGN_SEEDS

    _random_programs_on_gpu({s: RK.generate(s, RK.WILD_FEATURES)
                             for s in [*range(120), *WILD_CAMPAIGN_SEEDS]})


def _random_programs_on_gpu(programs: dict) -> None:
    import tempfile

    from tilecc.testing import random_kernels as RK

    with tempfile.TemporaryDirectory() as tmp:
        failed = []
        for prog in programs.values():
            r = RK.check(prog, tmp, targets=(("cuda", None),))
            if r.kind == "ok":
                r = RK.run_gpu(prog, prog.load(tmp), r)
            if r.kind not in ("ok", "ill-conditioned"):
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


@pytest.mark.parametrize("dt", ["uint8", "int8", "float16"])
@pytest.mark.parametrize("warps", [2, 4, 8])
def test_argmax_of_narrow_types_across_warps(dt, warps) -> None:
    """argmax's int32 index partials follow the narrow values' partials in shared memory:
    they must start aligned (at byte 2 they faulted with a misaligned address)."""
    import cupy

    sys.path.insert(0, os.path.dirname(__file__))
    from test_random_kernels import _argmax_narrow

    rng = np.random.default_rng(warps)
    x = rng.integers(0, 100, (3, 256)).astype(dt)
    out = cupy.zeros(3, cupy.int32)
    for row in range(3):
        _argmax_narrow[(1,)](cupy.asarray(x[row]), out[row:], N=256, num_warps=warps)
    np.testing.assert_array_equal(cupy.asnumpy(out), np.argmax(x, axis=1))


# --- two GPUs: the launch follows the arrays' device ------------------------------------------

def _gpu_count() -> int:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount()
    except Exception:
        pass
    try:
        import torch

        return torch.cuda.device_count()
    except Exception:
        return 0


two_gpus = pytest.mark.skipif(_gpu_count() < 2, reason="needs two GPUs")


def _on_device(fw: str, dev: int):
    """(to the device, back to NumPy, the current device) for one framework."""
    if fw == "cupy":
        import cupy

        def put(a):
            with cupy.cuda.Device(dev):
                return cupy.asarray(a)
        return put, cupy.asnumpy, lambda: cupy.cuda.runtime.getDevice()
    torch = pytest.importorskip("torch")
    return (lambda a: torch.from_numpy(np.ascontiguousarray(a)).to(f"cuda:{dev}"),
            lambda t: t.cpu().numpy(), torch.cuda.current_device)


@two_gpus
@pytest.mark.parametrize("fw", ["cupy", "torch"])
def test_launch_on_the_second_device(fw) -> None:
    """Arrays on cuda:1 while cuda:0 is current: the kernel runs on cuda:1 (its module is
    loaded there) and the current device is left as it was."""
    put, get, current = _on_device(fw, 1)
    n = 100_003
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    dx, dy, out = put(x), put(y), put(np.zeros(n, np.float32))
    before = current()
    add_kernel[(tilecc.cdiv(n, 1024),)](dx, dy, out, n, BLOCK_SIZE=1024)
    np.testing.assert_array_equal(get(out), x + y)
    assert current() == before


@two_gpus
@pytest.mark.parametrize("fw", ["cupy", "torch"])
def test_one_kernel_alternating_between_two_devices(fw) -> None:
    """The same kernel launched on cuda:0, cuda:1, cuda:0, ...: each device its own module,
    the warm launch of one never sent to the other."""
    n = 4099
    for step, dev in enumerate((0, 1, 0, 1, 1, 0)):
        put, get, _ = _on_device(fw, dev)
        x = np.arange(n, dtype=np.float32) + step
        out = put(np.zeros(n, np.float32))
        add_kernel[(tilecc.cdiv(n, 256),)](put(x), put(x), out, n, BLOCK_SIZE=256)
        np.testing.assert_array_equal(get(out), 2 * x)


@two_gpus
@pytest.mark.parametrize("fw", ["cupy", "torch"])
def test_arrays_on_two_devices_are_refused(fw) -> None:
    put0, _, _ = _on_device(fw, 0)
    put1, _, _ = _on_device(fw, 1)
    x = np.ones(64, np.float32)
    with pytest.raises(ValueError, match=r"`y_ptr` on cuda:1"):
        add_kernel[(1,)](put0(x), put1(x), put0(x), 64, BLOCK_SIZE=64)


@tilecc.jit
def store_num_warps_kernel(out, num_warps: tl.constexpr):
    tl.store(out + tl.arange(0, 32), tl.full((32,), num_warps, tl.int32))


def test_a_parameter_named_num_warps_receives_the_launch_option():
    """Triton passes `num_warps=8` both to the launch and to a `num_warps` parameter
    (Liger's kernels declare one); twice, so the warm launch path binds it too."""
    import cupy

    for _ in range(2):
        out = cupy.zeros(32, cupy.int32)
        store_num_warps_kernel[(1,)](out, num_warps=8)
        assert cupy.asnumpy(out).tolist() == [8] * 32
