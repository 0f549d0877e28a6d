"""tl.clamp, tl.fdiv, tl.div_rn, tl.softmax and tl.minimum / tl.maximum's propagate_nan:
the interpreter against NumPy (Hypothesis), Triton's typing errors, and the generated CUDA
and HIP compiled by NVRTC and hiprtc (GPU runs: tests/test_gpu_math.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tilecc
import tilecc.language as tl

try:
    from conftest_compilers import require_cuda_compiler, require_hip_compiler
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import require_cuda_compiler, require_hip_compiler

N = 64


@tilecc.jit
def clamp_kernel(x_ptr, lo_ptr, hi_ptr, out_ptr, ALL: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    lo = tl.load(lo_ptr + offs)
    hi = tl.load(hi_ptr + offs)
    if ALL:
        y = tl.clamp(x, lo, hi, propagate_nan=tl.PropagateNan.ALL)
    else:
        y = tl.clamp(x, lo, hi)
    tl.store(out_ptr + offs, y)


@tilecc.jit
def min_max_kernel(x_ptr, y_ptr, out_ptr, ALL: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    if ALL:
        lo = tl.minimum(x, y, propagate_nan=tl.PropagateNan.ALL)
        hi = tl.maximum(x, y, tl.PropagateNan.ALL)
    else:
        lo = tl.minimum(x, y, propagate_nan=tl.PropagateNan.NONE)
        hi = tl.maximum(x, y)
    tl.store(out_ptr + offs, lo)
    tl.store(out_ptr + BLOCK + offs, hi)


@tilecc.jit
def div_kernel(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, tl.fdiv(x, y))
    tl.store(out_ptr + BLOCK + offs, tl.fdiv(x, y, ieee_rounding=True))
    tl.store(out_ptr + 2 * BLOCK + offs, tl.div_rn(x, y))
    tl.store(out_ptr + 3 * BLOCK + offs, tl.math.div_rn(x, 3.0))


@tilecc.jit
def softmax_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, DIM: tl.constexpr,
                   KEEP: tl.constexpr, IEEE: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols)
    y = tl.softmax(x, dim=DIM, keep_dims=KEEP, ieee_rounding=IEEE)
    tl.store(out_ptr + rows * N + cols, y)


@tilecc.jit
def softmax_1d_kernel(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.softmax(tl.load(x_ptr + offs)))


def _floats(dtype=np.float32, n=N, nan=True):
    return hnp.arrays(dtype, n, elements=st.floats(width=32 if dtype == np.float32 else 64,
                                                     allow_nan=nan, allow_infinity=nan))


@settings(max_examples=30, deadline=None)
@given(x=_floats(), a=_floats(nan=False), b=_floats(nan=False), all_nan=st.booleans())
def test_clamp_matches_numpy(x, a, b, all_nan):
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    out = np.zeros(N, np.float32)
    clamp_kernel.interpret[(1,)](x, lo, hi, out, ALL=all_nan, BLOCK=N)
    # NONE: a NaN x gives `min` (maxnum, then minnum); ALL: NaN stays NaN
    want = np.minimum(np.maximum(x, lo), hi) if all_nan else np.fmin(np.fmax(x, lo), hi)
    np.testing.assert_array_equal(out, want)


@settings(max_examples=30, deadline=None)
@given(x=_floats(), y=_floats(), all_nan=st.booleans())
def test_minimum_maximum_propagate_nan(x, y, all_nan):
    out = np.zeros(2 * N, np.float32)
    min_max_kernel.interpret[(1,)](x, y, out, ALL=all_nan, BLOCK=N)
    lo, hi = (np.minimum(x, y), np.maximum(x, y)) if all_nan else (np.fmin(x, y), np.fmax(x, y))
    np.testing.assert_array_equal(out[:N], lo)
    np.testing.assert_array_equal(out[N:], hi)


@settings(max_examples=30, deadline=None)
@given(x=_floats(nan=False), y=_floats(nan=False))
def test_fdiv_and_div_rn(x, y):
    y = np.where(y == 0, np.float32(1), y)
    out = np.zeros(4 * N, np.float32)
    div_kernel.interpret[(1,)](x, y, out, BLOCK=N)
    with np.errstate(all="ignore"):
        exact = x / y  # NumPy's float32 division is correctly rounded
        np.testing.assert_array_equal(out[N:2 * N], exact)  # ieee_rounding=True
        np.testing.assert_array_equal(out[2 * N:3 * N], exact)
        np.testing.assert_array_equal(out[3 * N:], x / np.float32(3))
        fast = out[:N]
        ok = (fast == exact) | (np.abs(fast - exact) <= 2 * np.spacing(np.abs(exact)))
    assert ok.all()


@pytest.mark.parametrize("dim,keep", [(None, True), (0, True), (1, True)])
@pytest.mark.parametrize("ieee", [False, True])
def test_softmax_matches_numpy(dim, keep, ieee):
    rng = np.random.default_rng(0)
    x = rng.normal(0, 3, (8, 16)).astype(np.float32)
    out = np.zeros_like(x)
    softmax_kernel.interpret[(1,)](x, out, M=8, N=16, DIM=dim, KEEP=keep, IEEE=ieee)
    axis = 0 if dim is None else dim
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=axis, keepdims=True), rtol=3e-6, atol=1e-7)


def test_softmax_of_a_vector_and_its_typing():
    """Triton's defaults (dim 0, keep_dims False); as in Triton, a 2-D block without
    keep_dims=True subtracts its 1-D maximum by broadcasting (NumPy's rules): right along
    dim 0, an error along dim 1 (the shapes do not broadcast)."""
    x = np.random.default_rng(1).normal(0, 4, 32).astype(np.float32)
    out = np.zeros_like(x)
    softmax_1d_kernel.interpret[(1,)](x, out, N=32)
    e = np.exp(x - x.max())
    np.testing.assert_allclose(out, e / e.sum(), rtol=3e-6, atol=1e-7)
    x2 = np.random.default_rng(2).normal(0, 4, (8, 16)).astype(np.float32)
    out2 = np.zeros_like(x2)
    softmax_kernel.interpret[(1,)](x2, out2, M=8, N=16, DIM=0, KEEP=False, IEEE=False)
    e2 = np.exp(x2 - x2.max(axis=0))
    np.testing.assert_allclose(out2, e2 / e2.sum(axis=0), rtol=3e-6, atol=1e-7)
    with pytest.raises(tilecc.CompilationError, match=r"incompatible block shapes \[8, 16\] "
                                                      r"and \[1, 8\]"):
        softmax_kernel.source("*fp32, *fp32", M=8, N=16, DIM=1, KEEP=False, IEEE=False)


@tilecc.jit
def _bad_math(x_ptr, out_ptr, WHAT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if WHAT == 0:
        y = tl.div_rn(x, x)
    elif WHAT == 1:
        y = tl.fdiv(x, 2)
    elif WHAT == 2:
        y = tl.clamp(x, 0, 1)
    elif WHAT == 3:
        y = tl.minimum(x, x, propagate_nan=3)
    else:
        y = tl.sqrt(x)
    tl.store(out_ptr + offs, y)


@pytest.mark.parametrize("what,sig,message", [
    (0, "*fp16, *fp16", "expected dtype ['fp32'] but got fp16"),
    (1, "*fp32, *fp32", "both operands of fdiv must have floating scalar type"),
    (2, "*i32, *i32", "Only floating point clamp is supported"),
    (3, "*fp32, *fp32", "propagate_nan must be tl.PropagateNan.NONE or tl.PropagateNan.ALL"),
    (4, "*i32, *fp32", "tl.sqrt: expected dtype ['fp32', 'fp64'] but got int32"),
])
def test_typing_errors_as_triton(what, sig, message):
    with pytest.raises(tilecc.CompilationError) as e:
        _bad_math.source(sig, WHAT=what, BLOCK=N)
    assert message in e.value.message
    assert e.value.loc is not None and "^" in str(e.value)


@pytest.mark.parametrize("target,arch", [("cuda", "sm_90"), ("hip", "gfx90a")])
def test_math_kernels_compile(target, arch):
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    for kernel, sig, consts in (
            (clamp_kernel, "*fp32, *fp32, *fp32, *fp32", {"ALL": True, "BLOCK": N}),
            (clamp_kernel, "*fp16, *fp16, *fp16, *fp32", {"ALL": False, "BLOCK": N}),
            (min_max_kernel, "*fp32, *fp32, *fp32", {"ALL": True, "BLOCK": N}),
            (min_max_kernel, "*fp16, *fp16, *fp16", {"ALL": True, "BLOCK": N}),
            (div_kernel, "*fp32, *fp32, *fp32", {"BLOCK": N}),
            (softmax_kernel, "*fp32, *fp32", {"M": 8, "N": 16, "DIM": 1, "KEEP": True,
                                              "IEEE": True})):
        binary = kernel.compile(sig, target=target, arch=arch, **consts)
        assert binary.data and "warning" not in (binary.log or "").lower()


def test_generated_code_names_the_rounding():
    src = div_kernel.source("*fp32, *fp32, *fp32", BLOCK=N)
    assert "tc::fdiv(" in src and "__fdiv_rn(" in src
    src = min_max_kernel.source("*fp32, *fp32, *fp32", ALL=True, BLOCK=N)
    assert "tc::fmin_nan(" in src and "tc::fmax_nan(" in src
    src = min_max_kernel.source("*fp32, *fp32, *fp32", ALL=False, BLOCK=N)
    assert "tc::fmin(" in src and "_nan(" not in src
