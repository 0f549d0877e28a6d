"""Tensor descriptors made in the kernel (tl.make_tensor_descriptor, desc.load / store /
atomic_*): the interpreter against NumPy, Triton's errors, the generated code of a
descriptor matmul against the block-pointer version, native compiles, and GPU runs."""

from __future__ import annotations

import linecache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tilecc
import tilecc.language as tl
from tilecc.errors import CompilationError

try:
    import kernels_ptr as KP
    from conftest_compilers import require_cuda_compiler, require_hip_compiler
    from test_compile_kernels import TARGETS, assert_clean_compile
except ImportError:  # tests/ imported as a package
    from tests import kernels_ptr as KP
    from tests.conftest_compilers import require_cuda_compiler, require_hip_compiler
    from tests.test_compile_kernels import TARGETS, assert_clean_compile

SETTINGS = settings(max_examples=15, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@tilecc.jit
def desc_load_kernel(X, Y, M, N, stride_m, om, on, BM: tl.constexpr, BN: tl.constexpr,
                     PAD: tl.constexpr):
    d = tl.make_tensor_descriptor(X, shape=[M, N], strides=[stride_m, 1],
                                  block_shape=[BM, BN], padding_option=PAD)
    out = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    tl.store(Y + out, d.load([om, on]))


@tilecc.jit
def desc_store_kernel(X, Y, M, N, stride_m, om, on, BM: tl.constexpr, BN: tl.constexpr,
                      ATOMIC: tl.constexpr):
    d = tl.make_tensor_descriptor(Y, [M, N], [stride_m, 1], [BM, BN])
    x = tl.load(X + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :])
    if ATOMIC:
        d.atomic_add([om, on], x)
    else:
        tl.store_tensor_descriptor(d, [om, on], x)


@tilecc.jit
def host_desc_load_kernel(src, Y, om, on):
    """Y (flat) = the block of `src` at (om, on)."""
    bm: tl.constexpr = src.block_shape[0]
    bn: tl.constexpr = src.block_shape[1]
    tl.store(Y + tl.arange(0, bm)[:, None] * bn + tl.arange(0, bn)[None, :], src.load([om, on]))


@tilecc.jit
def host_desc_store_kernel(X, dst, om, on, ATOMIC: tl.constexpr):
    """The block of `dst` at (om, on) = X (flat), or += X."""
    bm: tl.constexpr = dst.block_shape[0]
    bn: tl.constexpr = dst.block_shape[1]
    x = tl.load(X + tl.arange(0, bm)[:, None] * bn + tl.arange(0, bn)[None, :])
    if ATOMIC:
        dst.atomic_add([om, on], x)
    else:
        dst.store([om, on], x)


@tilecc.jit
def desc_rows_kernel(X, R, Y, M, N, y0, ROWS: tl.constexpr, BN: tl.constexpr,
                     PAD: tl.constexpr):
    """Y = the rows R of X from column y0 (desc.gather); then X's rows R from column y0 + 3
    are written with them, plus one (desc.scatter)."""
    d = tl.make_tensor_descriptor(X, [M, N], [N, 1], [1, BN], padding_option=PAD)
    rows = tl.load(R + tl.arange(0, ROWS))
    got = d.gather(rows, y0)
    tl.store(Y + tl.arange(0, ROWS)[:, None] * BN + tl.arange(0, BN)[None, :], got)
    d.scatter(got + 1, rows, y0 + 3)


MATMUL = KP.DESC_MATMUL_SIGNATURE
BP_MATMUL = KP.MATMUL_SIGNATURE


def _window(x2d, om, on, bm, bn, fill):
    """The bm x bn block of x2d at (om, on), `fill` outside x2d."""
    m, n = x2d.shape
    r = om + np.arange(bm)[:, None] + 0 * np.arange(bn)[None, :]
    c = on + np.arange(bn)[None, :] + 0 * np.arange(bm)[:, None]
    inside = (r >= 0) & (r < m) & (c >= 0) & (c < n)
    out = np.full((bm, bn), fill, x2d.dtype)
    out[inside] = x2d[r[inside], c[inside]]
    return out, r, c, inside


@SETTINGS
@given(m=st.integers(1, 40), n=st.integers(4, 40), pitch=st.integers(0, 3),
       bm=st.sampled_from([1, 4, 16]), bn=st.sampled_from([4, 8, 16]),
       om=st.integers(-20, 40), on=st.integers(-20, 40), pad=st.sampled_from(["zero", "nan"]),
       dtype=st.sampled_from(["float32", "int32", "float16"]), seed=st.integers(0, 99))
def test_descriptor_load_matches_numpy(m, n, pitch, bm, bn, om, on, pad, dtype, seed) -> None:
    if dtype == "int32" and pad == "nan":
        pad = "zero"
    if dtype == "float16" and bn < 8:
        bn = 8  # 16 bytes of the last dim at least
    rng = np.random.default_rng(seed)
    stride = n + pitch  # rows may be padded in memory; the descriptor's shape is m x n
    flat = rng.integers(-50, 50, m * stride).astype(dtype)
    y = np.zeros(bm * bn, dtype)
    desc_load_kernel.interpret[(1,)](flat, y, m, n, stride, om, on, BM=bm, BN=bn, PAD=pad)
    x2d = flat.reshape(m, stride)[:, :n]
    want, *_ = _window(x2d, om, on, bm, bn, np.nan if pad == "nan" else 0)
    np.testing.assert_array_equal(y.reshape(bm, bn), want)


@SETTINGS
@given(m=st.integers(1, 40), n=st.integers(4, 40), pitch=st.integers(0, 3),
       bm=st.sampled_from([1, 4, 16]), bn=st.sampled_from([4, 8, 16]),
       om=st.integers(-20, 40), on=st.integers(-20, 40), atomic=st.booleans(),
       seed=st.integers(0, 99))
def test_descriptor_store_and_atomic_add_match_numpy(m, n, pitch, bm, bn, om, on, atomic,
                                                     seed) -> None:
    rng = np.random.default_rng(seed)
    stride = n + pitch
    x = rng.integers(-50, 50, (bm, bn)).astype(np.float32)
    y = rng.integers(-5, 5, m * stride).astype(np.float32)
    want = y.copy()
    desc_store_kernel.interpret[(1,)](x, y, m, n, stride, om, on, BM=bm, BN=bn, ATOMIC=atomic)
    view = want.reshape(m, stride)
    _, r, c, inside = _window(view[:, :n], om, on, bm, bn, 0)
    if atomic:
        view[r[inside], c[inside]] += x[inside]
    else:
        view[r[inside], c[inside]] = x[inside]
    np.testing.assert_array_equal(y, want)  # nothing outside the block (or the tensor) moved


def test_descriptor_matmul_matches_numpy() -> None:
    rng = np.random.default_rng(0)
    m, n, k = 37, 45, 70
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.zeros((m, n), np.float16)
    KP.desc_matmul_kernel.interpret[(tilecc.cdiv(m, 32), tilecc.cdiv(n, 32))](
        a, b, c, m, n, k, BLOCK_SIZE_M=32, BLOCK_SIZE_N=32, BLOCK_SIZE_K=32)
    want = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c.astype(np.float32), want, rtol=2e-2, atol=5e-2)


def test_descriptor_matmul_gets_the_block_pointer_versions_main_loop() -> None:
    """The same tensor-core loop (cp.async copies ahead) as the block-pointer matmul with
    its boundary checks: a descriptor is that block pointer.  On sm_90 the same wgmma
    loop, its copies made by the copy engine (TMA) from the descriptors' tensor maps, and
    from maps of the block pointers' arguments (passes.pointer_tiles)."""
    blocks = dict(bm=128, bn=128, bk=32)
    ours = KP.desc_matmul_kernel.source(MATMUL.format(**blocks), arch="sm_80")
    theirs = KP.bp_matmul_kernel.source(BP_MATMUL.format(**blocks), arch="sm_80")
    for marker in ("mma.sync", "with cp.async"):
        assert (marker in ours) and (marker in theirs), marker
    ours = KP.desc_matmul_kernel.source(MATMUL.format(**blocks), arch="sm_90a")
    theirs = KP.bp_matmul_kernel.source(BP_MATMUL.format(**blocks), arch="sm_90a")
    assert "wgmma.m64n128k16" in ours and "wgmma.m64n128k16" in theirs
    assert "with TMA" in ours and "with TMA" in theirs


def test_descriptor_attributes_and_helpers() -> None:
    code = """
@tilecc.jit
def _inner(d, Y, i):
    d.store([i, 0], tl.full(d.block_shape, 3, d.dtype))

@tilecc.jit
def k(Y, M):
    d = tl.make_tensor_descriptor(Y, [M, 8], [8, 1], [2, 8])
    tl.store(Y + 4 * 8, d.shape[0] + d.strides[0])  # the run-time shape and strides
    tl.static_assert(d.block_shape == (2, 8))
    tl.static_assert(d.dtype == tl.int32)
    tl.static_assert(d.block_type == tl.block_type(tl.int32, [2, 8]))
    _inner(d, Y, 1)
"""
    k = _compile(code)
    y = np.zeros((5, 8), np.int32)
    k.interpret[(1,)](y, 5)
    assert (y[1:3] == 3).all() and (y[0] == 0).all() and (y[3] == 0).all()
    assert y[4, 0] == 5 + 8 and (y[4, 1:] == 0).all()


# --- Triton's errors ------------------------------------------------------------------------

def _compile(code: str):
    code = "import tilecc\nimport tilecc.language as tl\n" + code
    name = f"<descriptor-test-{abs(hash(code))}>"
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)
    ns: dict = {}
    exec(compile(code, name, "exec"), ns)
    return ns["k"]


def _kernel(body: str):
    return _compile("@tilecc.jit\ndef k(X, Y, M, N):\n"
                    "    d = tl.make_tensor_descriptor(X, [M, N], [N, 1], [16, 16])\n"
                    + "".join(f"    {line}\n" for line in body.splitlines()))


@pytest.mark.parametrize("body,message", [
    ("e = tl.make_tensor_descriptor(X, [M, N], [N, 2], [16, 16])",
     "Tensor descriptor last dim must be 1 but got 2"),
    ("e = tl.make_tensor_descriptor(X, [M, N], [N, N], [16, 16])",
     "Tensor descriptor last dim must be 1 but got a run-time value"),
    ("e = tl.make_tensor_descriptor(X, [M, N], [N, 1], [16, 4])",
     "at least 16 bytes in the last dimension, but got 4 * 2 = 8 bytes"),
    ("e = tl.make_tensor_descriptor(X, [M, N], [1], [16, 16])", "Expected 2 strides but got 1"),
    ("e = tl.make_tensor_descriptor(X, [M, N], [N, 1], [16])",
     "Expected block_shape to have 2 dimensions"),
    ("e = tl.make_tensor_descriptor(X, [M, N], [N, 1], [16, 24])", "powers of 2"),
    ("e = tl.make_tensor_descriptor(X, [], [], [])", "Expected 1 <= ndim <= 5"),
    ("e = tl.make_tensor_descriptor(X, [M, N], [N, 1], [16, 16], padding_option='one')",
     "padding option 'one'"),
    ("e = tl.make_tensor_descriptor(X + tl.arange(0, 2), [M], [1], [16])", "must be a pointer"),
    ("x = d.load([0])", "expected 2 offsets, but got 1"),
    ("d.store([0, 0], tl.zeros((16, 8), dtype=tl.float16))", "does not match the descriptor"),
    ("x = d.gather(tl.arange(0, 8), 0)", "descriptor block must have 1 row"),
    ("e = tl.make_tensor_descriptor(X, [M, N], [N, 1], [1, 16])\nx = e.gather(tl.arange(0, 4), 0)",
     "must have at least 8 rows"),
    ("e = tl.make_tensor_descriptor(X, [M, N], [N, 1], [1, 8])\nx = e.gather(tl.arange(0, 8), 0)",
     "must have at least 16 columns"),
    ("e = tl.make_tensor_descriptor(X, [M, N], [N, 1], [1, 16])\n"
     "e.scatter(tl.zeros((8, 8), tl.float16), tl.arange(0, 8), 0)", "does not match"),
    ("x = d.reshape(4)", "no attribute `reshape`"),
    ("x = tl.load_tensor_descriptor(X, [0, 0])", "takes a tensor descriptor"),
    ("d.atomic_max([0, 0], tl.zeros((16, 16), dtype=tl.float16))", "support"),
])
def test_descriptor_misuse_is_a_compilation_error(body, message) -> None:
    with pytest.raises(CompilationError) as e:
        _kernel(body).source("*fp16:16,*fp16:16,i32,i32")
    assert message in str(e.value), str(e.value)
    assert "^" in str(e.value)


def test_nan_padding_of_integers_is_refused() -> None:
    k = _compile("@tilecc.jit\ndef k(X, M):\n"
                 "    d = tl.make_tensor_descriptor(X, [M], [1], [16], padding_option='nan')\n")
    with pytest.raises(CompilationError, match="`nan` is not supported for integer"):
        k.source("*i32,i32")


def test_store_casts_to_the_descriptors_type_as_triton() -> None:
    k = _compile("@tilecc.jit\ndef k(Y):\n"
                 "    d = tl.make_tensor_descriptor(Y, [8], [1], [8])\n"
                 "    d.store([0], tl.arange(0, 8).to(tl.float32) + 0.5)\n")
    y = np.zeros(8, np.float16)
    k.interpret[(1,)](y)
    np.testing.assert_array_equal(y, np.arange(8) + 0.5)


# --- native compiles and the GPU ------------------------------------------------------------

COMPILED = [
    (desc_load_kernel, "*fp32:16,*fp32:16,i32,i32,i32,i32,i32,16,32,'nan'"),
    (desc_store_kernel, "*fp16:16,*fp16:16,i32,i32,i32:16,i32,i32,32,16,0"),
    (desc_store_kernel, "*fp32:16,*fp32:16,i32,i32,i32:16,i32,i32,32,16,1"),
    (KP.desc_matmul_kernel, MATMUL.format(bm=128, bn=128, bk=32)),
    (KP.desc_matmul_kernel, MATMUL.format(bm=64, bn=64, bk=32)),
    (host_desc_load_kernel, "tensordesc<fp32[16, 32], nan>, *fp32:16, i32, i32"),
    (desc_rows_kernel, "*fp16:16, *i32:16, *fp16:16, i32, i32:16, i32, 16, 32, 'zero'"),
    (host_desc_store_kernel, "*bf16:16, tensordesc<bf16[32, 16]>:16, i32, i32, 1"),
]


@pytest.mark.parametrize("kernel,signature,target,arch", [
    pytest.param(k, s, t, a, id=f"{k.__name__}-{a}-{i}")
    for i, (k, s) in enumerate(COMPILED) for t, a in TARGETS])
def test_descriptor_kernels_compile_cleanly(kernel, signature, target, arch) -> None:
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    assert_clean_compile(kernel, signature, target, arch)


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k", [(512, 512, 512), (300, 260, 200), (129, 67, 48)])
def test_descriptor_matmul_on_gpu_matches_the_block_pointer_version(m, n, k) -> None:
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    a = torch.randn((m, k), dtype=torch.float16, device="cuda")
    b = torch.randn((k, n), dtype=torch.float16, device="cuda")
    c = torch.empty((m, n), dtype=torch.float16, device="cuda")
    ref = torch.empty((m, n), dtype=torch.float16, device="cuda")
    grid = (tilecc.cdiv(m, 64), tilecc.cdiv(n, 64))
    KP.desc_matmul_kernel[grid](a, b, c, m, n, k, BLOCK_SIZE_M=64, BLOCK_SIZE_N=64,
                             BLOCK_SIZE_K=32)
    KP.bp_matmul_kernel[grid](a, b, ref, m, n, k, *a.stride(), *b.stride(), *ref.stride(),
                              BLOCK_SIZE_M=64, BLOCK_SIZE_N=64, BLOCK_SIZE_K=32)
    torch.testing.assert_close(c, ref, rtol=0, atol=0)


@pytest.mark.gpu
def test_descriptor_loads_stores_and_atomics_on_gpu_match_the_interpreter() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    m, n, stride = 40, 33, 36
    flat = rng.standard_normal(m * stride).astype(np.float32)
    for om, on in [(-3, 5), (30, -7), (0, 0), (10, 20), (39, 32)]:
        want = np.zeros(16 * 8, np.float32)
        desc_load_kernel.interpret[(1,)](flat, want, m, n, stride, om, on, BM=16, BN=8,
                                         PAD="nan")
        y = torch.zeros(16 * 8, device="cuda")
        desc_load_kernel[(1,)](torch.from_numpy(flat).cuda(), y, m, n, stride, om, on,
                               BM=16, BN=8, PAD="nan")
        np.testing.assert_array_equal(y.cpu().numpy(), want)
        x = rng.standard_normal((16, 8)).astype(np.float32)
        for atomic in (False, True):
            want = flat.copy()
            desc_store_kernel.interpret[(1,)](x, want, m, n, stride, om, on, BM=16, BN=8,
                                              ATOMIC=atomic)
            y = torch.from_numpy(flat).cuda()
            desc_store_kernel[(1,)](torch.from_numpy(x).cuda(), y, m, n, stride, om, on,
                                    BM=16, BN=8, ATOMIC=atomic)
            np.testing.assert_array_equal(y.cpu().numpy(), want)


@pytest.mark.gpu
def test_descriptor_kernels_match_triton_on_gpu() -> None:
    """The same kernels through Triton 3.6 (TMA on sm_90) and through tilecc: loads with
    either padding, stores and atomic adds, blocks inside and across the tensor's edges
    (stores at non-negative offsets only: see below)."""
    torch = pytest.importorskip("torch")
    triton = pytest.importorskip("triton")
    import os
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
    from triton_clone import as_triton

    triton.set_allocator(lambda size, alignment, stream: torch.empty(
        size, device="cuda", dtype=torch.int8))
    rng = np.random.default_rng(1)
    m, n, stride = 40, 36, 36  # Triton's descriptors need 16-byte aligned rows
    x = torch.from_numpy(rng.standard_normal(m * stride).astype(np.float32)).cuda()
    blk = torch.from_numpy(rng.standard_normal(16 * 8).astype(np.float32)).cuda()
    for om, on in [(0, 0), (-3, 4), (30, -8), (32, 32), (39, 28)]:
        for pad in ("zero", "nan"):
            got, want = (torch.zeros(16 * 8, device="cuda") for _ in range(2))
            desc_load_kernel[(1,)](x, got, m, n, stride, om, on, BM=16, BN=8, PAD=pad)
            as_triton(desc_load_kernel)[(1,)](x, want, m, n, stride, om, on, BM=16, BN=8,
                                              PAD=pad)
            torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)
        if om < 0 or on < 0:
            # Triton 3.6's TMA stores at negative offsets fault on an H100 (an illegal
            # instruction); tilecc's are checked against the interpreter above
            continue
        for atomic in (False, True):
            got, want = x.clone(), x.clone()
            desc_store_kernel[(1,)](blk, got, m, n, stride, om, on, BM=16, BN=8, ATOMIC=atomic)
            as_triton(desc_store_kernel)[(1,)](blk, want, m, n, stride, om, on, BM=16, BN=8,
                                               ATOMIC=atomic)
            torch.testing.assert_close(got, want, rtol=0, atol=0)


@SETTINGS
@given(m=st.integers(1, 20), n=st.integers(1, 40), rows=st.sampled_from([8, 16]),
       bn=st.sampled_from([8, 16]), y0=st.integers(-12, 40), pad=st.sampled_from(["zero", "nan"]),
       seed=st.integers(0, 99))
def test_descriptor_gather_and_scatter_match_numpy(m, n, rows, bn, y0, pad, seed) -> None:
    rng = np.random.default_rng(seed)
    x = rng.integers(-50, 50, (m, n)).astype(np.float32)
    # distinct rows (a scatter to one row twice has no defined winner), some outside
    candidates = np.arange(-3, max(m + 3, rows - 3))
    r = rng.choice(candidates, size=rows, replace=False).astype(np.int32)
    y = np.zeros((rows, bn), np.float32)
    want_x = x.copy()
    desc_rows_kernel.interpret[(1,)](x, r, y, m, n, y0, ROWS=rows, BN=bn, PAD=pad)
    fill = np.nan if pad == "nan" else 0
    cols = y0 + np.arange(bn)
    want = np.full((rows, bn), fill, np.float32)
    for i, row in enumerate(r):
        for j, col in enumerate(cols):
            if 0 <= row < m and 0 <= col < n:
                want[i, j] = want_x[row, col]
    np.testing.assert_array_equal(y, want)
    for i, row in enumerate(r):
        for j, col in enumerate(cols + 3):
            if 0 <= row < m and 0 <= col < n:
                want_x[row, col] = want[i, j] + 1
    np.testing.assert_array_equal(x, want_x)


# --- host-side descriptors (kernel arguments) -----------------------------------------------

def _padded(rng, m, n, pitch, dtype):
    """An m x n view of rows `pitch` 16-byte units longer than needed (Triton's descriptors
    take strides that are multiples of 16 bytes), with the whole buffer."""
    unit = 16 // np.dtype(dtype).itemsize
    stride = -(-n // unit) * unit + pitch * unit
    flat = rng.integers(-50, 50, m * stride).astype(dtype)
    return flat, flat.reshape(m, stride)[:, :n]


@SETTINGS
@given(m=st.integers(1, 40), n=st.integers(1, 40), pitch=st.integers(0, 2),
       bm=st.sampled_from([1, 4, 16]), bn=st.sampled_from([8, 16]),
       om=st.integers(-20, 40), on=st.integers(-20, 40), pad=st.sampled_from(["zero", "nan"]),
       dtype=st.sampled_from(["float32", "int32", "float16"]), seed=st.integers(0, 99))
def test_host_descriptor_load_matches_numpy(m, n, pitch, bm, bn, om, on, pad, dtype,
                                            seed) -> None:
    if dtype == "int32" and pad == "nan":
        pad = "zero"
    _, x2d = _padded(np.random.default_rng(seed), m, n, pitch, dtype)
    y = np.zeros(bm * bn, dtype)
    desc = tilecc.TensorDescriptor.from_tensor(x2d, [bm, bn], padding=pad)
    host_desc_load_kernel.interpret[(1,)](desc, y, om, on)
    want, *_ = _window(x2d, om, on, bm, bn, np.nan if pad == "nan" else 0)
    np.testing.assert_array_equal(y.reshape(bm, bn), want)


@SETTINGS
@given(m=st.integers(1, 40), n=st.integers(1, 40), pitch=st.integers(0, 2),
       bm=st.sampled_from([1, 4, 16]), bn=st.sampled_from([4, 8, 16]),
       om=st.integers(-20, 40), on=st.integers(-20, 40), atomic=st.booleans(),
       seed=st.integers(0, 99))
def test_host_descriptor_store_and_atomic_add_match_numpy(m, n, pitch, bm, bn, om, on, atomic,
                                                          seed) -> None:
    rng = np.random.default_rng(seed)
    flat, y2d = _padded(rng, m, n, pitch, np.float32)
    x = rng.integers(-50, 50, (bm, bn)).astype(np.float32)
    want = flat.copy()
    host_desc_store_kernel.interpret[(1,)](x, tilecc.TensorDescriptor.from_tensor(y2d, [bm, bn]),
                                           om, on, ATOMIC=atomic)
    view = want.reshape(m, -1)
    _, r, c, inside = _window(view[:, :n], om, on, bm, bn, 0)
    if atomic:
        view[r[inside], c[inside]] += x[inside]
    else:
        view[r[inside], c[inside]] = x[inside]
    np.testing.assert_array_equal(flat, want)  # nothing outside the block (or the view) moved


def test_host_descriptor_of_three_dims() -> None:
    code = """
@tilecc.jit
def k(src, Y, i, j, l):
    x = src.load([i, j, l])
    tl.store(Y + tl.arange(0, 2)[:, None, None] * 32 + tl.arange(0, 4)[None, :, None] * 8
             + tl.arange(0, 8)[None, None, :], x)
"""
    x = np.arange(3 * 5 * 8, dtype=np.float32).reshape(3, 5, 8)
    y = np.zeros(2 * 4 * 8, np.float32)
    _compile(code).interpret[(1,)](tilecc.TensorDescriptor.from_tensor(x, [2, 4, 8]), y, 2, 3, 0)
    want = np.zeros((2, 4, 8), np.float32)
    want[0, :2] = x[2, 3:5]
    np.testing.assert_array_equal(y.reshape(2, 4, 8), want)


def test_persistent_matmul_example_runs_and_matches_numpy() -> None:
    import os
    import runpy

    path = os.path.join(os.path.dirname(__file__), "..", "examples", "persistent_matmul.py")
    example = runpy.run_path(path, run_name="not_main")
    rng = np.random.default_rng(3)
    for m, n, k in [(70, 40, 56), (33, 128, 24)]:  # dims that are not multiples of the blocks
        a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
        b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
        c = np.zeros((m, n), np.float16)
        example["matmul"](a, b, c, tilecc.Config({"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 32,
                                                  "BLOCK_SIZE_K": 16, "GROUP_SIZE_M": 2}), 3)
        np.testing.assert_allclose(c.astype(np.float32), a.astype(np.float32) @ b, rtol=2e-3,
                                   atol=2e-3)


def test_host_descriptor_kernel_is_specialized_on_block_shape_and_divisibility() -> None:
    from tilecc.runtime.cache import spec_key

    def specs(x, block):
        return host_desc_load_kernel.specs_for(
            {"src": tilecc.TensorDescriptor.from_tensor(x, block), "Y": x, "om": 0, "on": 0})[0]

    x = np.zeros((32, 48), np.float32)
    assert spec_key(specs(x, [16, 16])) != spec_key(specs(x, [16, 32]))
    shapes = [s for s in specs(x, [16, 16]) if "_shape" in s.name]
    assert [s.divisible_by_16 for s in shapes] == [True, True]
    shapes = [s for s in specs(np.zeros((33, 40), np.float32), [16, 16]) if "_shape" in s.name]
    assert [s.divisible_by_16 for s in shapes] == [False, False]
    source = host_desc_load_kernel.source("tensordesc<fp16[16, 32], nan>, *fp16:16, i32, i32")
    assert "src: tensor descriptor of fp16, blocks [16, 32], NaN padding" in source
    assert "const tc::half* src_base" in source and "long long src_stride0" in source


def test_matmul_over_dims_of_any_size_keeps_the_cp_async_pipeline() -> None:
    """Dims that are not multiples of 16 make the K-tail mask a prefix of each vector: the
    copies read the bytes inside it and zero-fill the rest, ahead of the tensor cores as
    for whole vectors (a masked vector used to leave the loop unpipelined)."""
    import os
    import runpy

    path = os.path.join(os.path.dirname(__file__), "..", "examples", "persistent_matmul.py")
    example = runpy.run_path(path, run_name="not_main")
    # (on sm_90 these descriptor loads are TMA copies: tests/test_tma.py)
    source = example["persistent_matmul_kernel"].source(
        example["SIGNATURE"].replace(":16", ""), num_warps=8, num_stages=3, arch="sm_80")
    assert "copied into shared memory with cp.async, 2 iterations ahead" in source
    assert "in_bounds += " in source and "tc::cp_async<16>(" in source


@pytest.mark.parametrize("make,message", [
    (lambda x: tilecc.TensorDescriptor(x, [4, 4], [1, 4], [2, 2]), "must be contiguous"),
    (lambda x: tilecc.TensorDescriptor(x, [4, 4], [4, 1], [2, 3]), "must be a power of 2"),
    (lambda x: tilecc.TensorDescriptor(x, [4, 4], [4, 1], [2]), "one entry per dimension"),
    (lambda x: tilecc.TensorDescriptor(x, [4, 4], [4, 1], [2, 2], "one"), "'zero' or 'nan'"),
    (lambda x: tilecc.TensorDescriptor(x, [2048, 2048], [2048, 1], [2048, 2048]),
     "exceeds the largest block"),
])
def test_host_descriptor_checks_at_creation(make, message) -> None:
    with pytest.raises(ValueError, match=message):
        make(np.zeros((4, 4), np.float32))


@pytest.mark.parametrize("desc,message", [
    (lambda: tilecc.TensorDescriptor(np.zeros(40, np.float32)[1:], [4, 8], [8, 1], [4, 8]),
     "16-byte aligned"),
    (lambda: tilecc.TensorDescriptor(np.zeros(40, np.float32), [4, 6], [6, 1], [4, 8]),
     "multiples of 16 bytes"),
    (lambda: tilecc.TensorDescriptor(np.zeros(32, np.int32), [4, 8], [8, 1], [4, 8], "nan"),
     "needs a floating-point tensor"),
    (lambda: tilecc.TensorDescriptor([0.0] * 32, [4, 8], [8, 1], [4, 8]), "must be an array"),
    (lambda: tilecc.TensorDescriptor(np.zeros(32, np.float16), [4, 8], [8, 1], [4, 4]),
     "at least 16 bytes in the last dimension"),
])
def test_host_descriptor_checks_at_launch(desc, message) -> None:
    with pytest.raises((TypeError, ValueError, CompilationError), match=message):
        host_desc_load_kernel.interpret[(1,)](desc(), np.zeros(64, np.float32), 0, 0)


def test_export_of_host_descriptor_kernels_is_refused() -> None:
    from tilecc.export.variants import ExportError, build_variant

    with pytest.raises(ExportError, match="`src` is a tensor descriptor.*make_tensor_desc"):
        build_variant(host_desc_load_kernel, "tensordesc<fp32[16, 16]>, *fp32:16, i32, i32",
                      "cuda", 4)


@pytest.mark.gpu
def test_host_descriptors_on_gpu_match_the_interpreter_warm_launches_included() -> None:
    """Loads, stores and atomic adds through host-side descriptors over torch tensors, at
    blocks inside and across every edge; repeated launches take the warm path, which must
    still see new strides, shapes and alignments."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    for m, n, pitch in [(40, 33, 1), (17, 64, 0), (40, 33, 2)]:  # the last: new strides
        flat, x2d = _padded(rng, m, n, pitch, np.float32)
        flat = flat.astype(np.float32) + rng.standard_normal(flat.size).astype(np.float32)
        x2d = flat.reshape(m, -1)[:, :n]
        dev = torch.from_numpy(flat).cuda().view(m, -1)[:, :n]
        for om, on in [(-3, 5), (30, -7), (0, 0), (10, 20), (39, 32)]:
            want = np.zeros(16 * 8, np.float32)
            host_desc_load_kernel.interpret[(1,)](
                tilecc.TensorDescriptor.from_tensor(x2d, [16, 8], "nan"), want, om, on)
            y = torch.zeros(16 * 8, device="cuda")
            host_desc_load_kernel[(1,)](tilecc.TensorDescriptor.from_tensor(dev, [16, 8], "nan"),
                                        y, om, on)
            np.testing.assert_array_equal(y.cpu().numpy(), want)
            blk = rng.standard_normal((16, 8)).astype(np.float32)
            for atomic in (False, True):
                want = flat.copy()
                host_desc_store_kernel.interpret[(1,)](
                    blk, tilecc.TensorDescriptor.from_tensor(want.reshape(m, -1)[:, :n], [16, 8]),
                    om, on, ATOMIC=atomic)
                got = torch.from_numpy(flat).cuda()
                host_desc_store_kernel[(1,)](
                    torch.from_numpy(blk).cuda(),
                    tilecc.TensorDescriptor.from_tensor(got.view(m, -1)[:, :n], [16, 8]), om, on,
                    ATOMIC=atomic)
                np.testing.assert_array_equal(got.cpu().numpy(), want)
    bad = torch.zeros(64, device="cuda")[1:].view(7, 9)  # 4 bytes past an aligned address
    with pytest.raises(ValueError, match="16-byte aligned"):
        host_desc_load_kernel[(1,)](tilecc.TensorDescriptor(bad, [7, 8], [9, 1], [16, 8]),
                                    torch.zeros(128, device="cuda"), 0, 0)


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k", [(512, 512, 512), (300, 264, 200), (129, 72, 48)])
def test_persistent_host_descriptor_matmul_on_gpu_matches_torch_and_triton(m, n, k) -> None:
    torch = pytest.importorskip("torch")
    triton = pytest.importorskip("triton")
    import os
    import runpy
    import sys

    from triton.tools.tensor_descriptor import TensorDescriptor as TritonDescriptor

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
    from triton_clone import as_triton

    kernel = runpy.run_path(os.path.join(os.path.dirname(__file__), "..", "examples",
                                         "persistent_matmul.py"),
                            run_name="not_main")["persistent_matmul_kernel"]
    torch.manual_seed(0)
    a = torch.randn((m, k), dtype=torch.float16, device="cuda")
    b = torch.randn((k, n), dtype=torch.float16, device="cuda")
    ours, theirs = (torch.empty((m, n), dtype=torch.float16, device="cuda") for _ in range(2))
    meta = dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64, GROUP_SIZE_M=8, NUM_SMS=132)
    for fn, cls, c in [(kernel, tilecc.TensorDescriptor, ours),
                       (as_triton(kernel), TritonDescriptor, theirs)]:
        fn[(132,)](cls.from_tensor(a, [128, 64]), cls.from_tensor(b, [64, 128]),
                   cls.from_tensor(c, [128, 128]), m, n, k, **meta, num_warps=8, num_stages=3)
    ref = (a.float() @ b.float()).half()
    torch.testing.assert_close(ours, ref, rtol=1e-2, atol=1e-2)
    torch.testing.assert_close(ours, theirs, rtol=1e-2, atol=1e-2)


@pytest.mark.gpu
def test_descriptor_gather_and_scatter_on_gpu_match_the_interpreter() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    m, n = 37, 40
    x = rng.standard_normal((m, n)).astype(np.float32)
    rows = np.array([5, -2, 36, 0, 40, 17, 3, 12, 8, 30, 1, 2, 4, 6, 7, 9], np.int32)
    for y0 in (0, 30, -5):
        want_x, want_y = x.copy(), np.zeros((16, 16), np.float32)
        desc_rows_kernel.interpret[(1,)](want_x, rows, want_y, m, n, y0, ROWS=16, BN=16,
                                         PAD="nan")
        gx, gy = torch.from_numpy(x).cuda(), torch.zeros((16, 16), device="cuda")
        desc_rows_kernel[(1,)](gx, torch.from_numpy(rows).cuda(), gy, m, n, y0, ROWS=16,
                               BN=16, PAD="nan")
        np.testing.assert_array_equal(gy.cpu().numpy(), want_y)
        np.testing.assert_array_equal(gx.cpu().numpy(), want_x)


def test_misused_host_descriptors_are_named_as_the_caller_passed_them() -> None:
    code = """
@tilecc.jit
def k(d, Y):
    tl.store(Y + tl.arange(0, 8), tl.load(d + tl.arange(0, 8)))
"""
    x = np.zeros((8, 8), np.float32)
    with pytest.raises(CompilationError, match="a tensor descriptor .read and write it with"):
        _compile(code).interpret[(1,)](tilecc.TensorDescriptor.from_tensor(x, [8, 8]), x)
    specs, passed = host_desc_load_kernel.specs_for(
        {"src": tilecc.TensorDescriptor.from_tensor(x, [8, 8]), "Y": x, "om": 0, "on": 0})
    from tilecc.runtime.launch.args import device_arrays

    with pytest.raises(TypeError, match="argument `src`'s tensor is a host .numpy. array"):
        device_arrays(specs, passed)


@tilecc.jit
def host_desc_rows_sum(d, Y, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    tl.store(Y + rows, tl.sum(d.load([0, 0]).to(tl.float32), axis=1))


def test_what_a_host_descriptor_argument_emits_names_the_def_line() -> None:
    # The block's index arithmetic a host-side descriptor brings is emitted before the
    # body: it belongs to the `def` line (the renderer groups ops by statement, and errors
    # and comments name the line), never to no line at all.
    from tilecc.runtime import compiler
    from tilecc.transpiler.ir import walk

    x = np.ones((32, 64), np.float16)
    values, _ = host_desc_rows_sum.bind(
        (tilecc.TensorDescriptor.from_tensor(x, [32, 64]), np.zeros(32, np.float32)),
        dict(BM=32, BN=64))
    specs, _ = host_desc_rows_sum.specs_for(values)
    kernel, _ = compiler.lower(host_desc_rows_sum, list(specs), "cuda",
                               host_desc_rows_sum.options())
    ops = list(walk(kernel.body))
    assert ops and all(op.loc is not None for op in ops), \
        [op.kind for op in ops if op.loc is None]
    def_line = host_desc_rows_sum.fn.__code__.co_firstlineno + 1
    assert {op.loc.line for op in ops if op.kind == "arange"} >= {def_line}
