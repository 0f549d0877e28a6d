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

SETTINGS = settings(max_examples=40, deadline=None,
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
    """The same tensor-core loop (wgmma, cp.async copies ahead) as the block-pointer matmul
    with its boundary checks: a descriptor is that block pointer."""
    blocks = dict(bm=128, bn=128, bk=32)
    ours = KP.desc_matmul_kernel.source(MATMUL.format(**blocks))
    theirs = KP.bp_matmul_kernel.source(BP_MATMUL.format(**blocks))
    for marker in ("wgmma.m64n128k16", "with cp.async"):
        assert (marker in ours) == (marker in theirs), marker
    assert "wgmma" in ours and "cp.async" in ours


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
    ("d.gather(tl.arange(0, 8), 0)", "not implemented by tilecc"),
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
