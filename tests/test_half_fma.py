"""16-bit tl.fma rounded once in its type (as Triton's fma.rn.f16 / .bf16), and integers
converted to fp16 in one rounding: the dequantization of low-bit weights (shifted and
masked int32 fields, `fma(w.to(fp16), scale, zero)`).  Through fp32, a product landing on
an fp16 midpoint plus a tiny addend is rounded twice and comes out one ulp low."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tilecc
import tilecc.language as tl

try:
    from conftest_compilers import require_cuda_compiler, require_hip_compiler
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import require_cuda_compiler, require_hip_compiler

BF16 = np.dtype(ml_dtypes.bfloat16)

# (a, b, c) fp16 bit patterns where fp32's fma then rounding to fp16 is one ulp below the
# correctly rounded result: a * b sits on an fp16 midpoint, c (subnormal) just above it
DOUBLE_ROUNDING = [(15936, 16144, 2), (15704, 15552, 1), (15940, 15488, 1), (15952, 15392, 1)]


@tilecc.jit
def fma_kernel(A, B, C, OUT, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(OUT + offs, tl.fma(tl.load(A + offs), tl.load(B + offs), tl.load(C + offs)))


@tilecc.jit
def dequantize_kernel(W, SCALE, ZERO, OUT, BLOCK: tl.constexpr, SHIFT: tl.constexpr):
    """A packed int32 field (signed: shifted arithmetically, then masked) as fp16 times a
    scale plus a zero: gemlite's fma dequantization."""
    offs = tl.arange(0, BLOCK)
    w = (tl.load(W + offs) >> SHIFT) & 15
    out = tl.fma(w.to(tl.float16), tl.load(SCALE + offs), tl.load(ZERO + offs))
    tl.store(OUT + offs, out)


@tilecc.jit
def int_to_fp16_kernel(X, OUT, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(OUT + offs, tl.load(X + offs).to(tl.float16))


def _fma_inputs(dtype=np.float16, n=64):
    rng = np.random.default_rng(3)
    a = rng.uniform(-4, 4, n).astype(dtype)
    b = rng.uniform(-4, 4, n).astype(dtype)
    c = rng.uniform(-4, 4, n).astype(dtype)
    if dtype == np.float16:
        bits = np.array(DOUBLE_ROUNDING, np.uint16)
        a[:4], b[:4], c[:4] = (bits[:, i].view(np.float16) for i in range(3))
    return a, b, c


def _rounded_once(a, b, c, dtype):
    # a * b is exact in float64 and c lies within 53 bits of it here: one rounding
    return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(dtype)


def test_the_cases_round_twice_through_fp32() -> None:
    a, b, c = _fma_inputs()
    via32 = (a[:4].astype(np.float32) * b[:4].astype(np.float32) + c[:4].astype(np.float32))
    assert (via32.astype(np.float16) != _rounded_once(a[:4], b[:4], c[:4], np.float16)).all()


@pytest.mark.parametrize("dtype", [np.float16, BF16])
def test_fma_rounds_once_on_the_interpreter(dtype) -> None:
    a, b, c = _fma_inputs(dtype)
    out = np.zeros(64, dtype)
    fma_kernel.interpret[(1,)](a, b, c, out, BLOCK=64)
    np.testing.assert_array_equal(out, _rounded_once(a, b, c, dtype))


def test_dequantize_on_the_interpreter() -> None:
    rng = np.random.default_rng(4)
    w = rng.integers(-2**31, 2**31, 64, dtype=np.int64).astype(np.int32)
    scale = rng.uniform(0.001, 0.02, 64).astype(np.float16)
    zero = rng.uniform(-0.1, 0.0, 64).astype(np.float16)
    out = np.zeros(64, np.float16)
    dequantize_kernel.interpret[(1,)](w, scale, zero, out, BLOCK=64, SHIFT=28)
    field = ((w >> 28) & 15).astype(np.float16)
    np.testing.assert_array_equal(out, _rounded_once(field, scale, zero, np.float16))


@pytest.mark.parametrize("target,arch", [("cuda", "sm_80"), ("cuda", "sm_90"), ("hip", "gfx90a")])
def test_kernels_compile(target, arch) -> None:
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    for dt in ("fp16", "bf16"):
        assert fma_kernel.compile(f"*{dt},*{dt},*{dt},*{dt},64", target=target, arch=arch).data
    assert dequantize_kernel.compile("*i32,*fp16,*fp16,*fp16,64,28", target=target,
                                     arch=arch).data
    for it in ("i8", "i16", "i32", "u8", "u16", "u32", "i64", "u64", "i1"):
        assert int_to_fp16_kernel.compile(f"*{it},*fp16,64", target=target, arch=arch).data


def _on_gpu(kernel, arrays, out, **consts):
    """The kernel on torch tensors (CuPy has no bfloat16 arrays)."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")

    def dev(a: np.ndarray):
        if a.dtype.name == "bfloat16":
            return torch.from_numpy(a.view(np.int16)).cuda().view(torch.bfloat16)
        return torch.from_numpy(a).cuda()

    res = dev(out)
    kernel[(1,)](*[dev(a) for a in arrays], res, **consts)
    host = res.cpu()
    return (host.view(torch.int16).numpy().view(out.dtype) if out.dtype.name == "bfloat16"
            else host.numpy())


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float16, BF16])
def test_fma_rounds_once_on_gpu(dtype) -> None:
    a, b, c = _fma_inputs(dtype)
    got = _on_gpu(fma_kernel, [a, b, c], np.zeros(64, dtype), BLOCK=64)
    np.testing.assert_array_equal(got.view(np.uint16),
                                  _rounded_once(a, b, c, dtype).view(np.uint16))


@pytest.mark.gpu
def test_dequantize_on_gpu() -> None:
    rng = np.random.default_rng(4)
    w = rng.integers(-2**31, 2**31, 64, dtype=np.int64).astype(np.int32)
    scale = rng.uniform(0.001, 0.02, 64).astype(np.float16)
    zero = rng.uniform(-0.1, 0.0, 64).astype(np.float16)
    got = _on_gpu(dequantize_kernel, [w, scale, zero], np.zeros(64, np.float16), BLOCK=64,
                  SHIFT=28)
    field = ((w >> 28) & 15).astype(np.float16)
    np.testing.assert_array_equal(got, _rounded_once(field, scale, zero, np.float16))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.uint16, np.uint32])
def test_int_to_fp16_on_gpu(dtype) -> None:
    info = np.iinfo(dtype)
    x = np.linspace(info.min, info.max, 64).astype(dtype)
    x[:8] = np.array([0, 1, 2047, 2049, 65504, 65519, 65520, 4097], np.int64).clip(
        info.min, info.max).astype(dtype)
    got = _on_gpu(int_to_fp16_kernel, [x], np.zeros(64, np.float16), BLOCK=64)
    np.testing.assert_array_equal(got, x.astype(np.float16))
