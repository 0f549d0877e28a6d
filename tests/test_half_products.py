"""Products, sums and differences of fp16 / bf16 blocks, two per instruction (tc::mul_pair:
mul.rn.f16x2, fma.rn.bf16x2 with -0; tc::add_pair, tc::sub_pair), held in registers or read
once, and conversions from fp32 that a product reads, two per instruction too
(tc::cast_pair): in the source, compiled for both vendors, on the interpreter against
NumPy, and on the GPU bit for bit against torch (one rounding of the exact result) over
ordinary, subnormal, infinite and NaN values."""

from __future__ import annotations

import numpy as np
import pytest

import tilecc
import tilecc.language as tl

try:
    from conftest_compilers import require_cuda_compiler, require_hip_compiler
    from test_compile_kernels import assert_clean_compile
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import require_cuda_compiler, require_hip_compiler
    from tests.test_compile_kernels import assert_clean_compile


@tilecc.jit
def products(x_ptr, y_ptr, p_ptr, q_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    x = tl.load(x_ptr + offs, mask=ok)
    y = tl.load(y_ptr + offs, mask=ok)
    p = x * y  # read twice: held in registers
    tl.store(p_ptr + offs, p, mask=ok)
    tl.store(q_ptr + offs, p * x, mask=ok)


@tilecc.jit
def gated(x_ptr, y_ptr, out_ptr, scaled_ptr, n, BLOCK: tl.constexpr):
    # the GELU-gate form of LLM kernels: fp32 math, converted, times a 16-bit block
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    x = tl.load(x_ptr + offs, mask=ok)
    y = tl.load(y_ptr + offs, mask=ok)
    h = x.to(tl.float32) * 0.5
    tl.store(out_ptr + offs, h.to(y.dtype) * y, mask=ok)
    tl.store(scaled_ptr + offs, h.to(y.dtype), mask=ok)  # a conversion only stored


@tilecc.jit
def sums(x_ptr, y_ptr, s_ptr, d_ptr, n, BLOCK: tl.constexpr):
    # a residual add, and a difference
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    x = tl.load(x_ptr + offs, mask=ok)
    y = tl.load(y_ptr + offs, mask=ok)
    tl.store(s_ptr + offs, x + y, mask=ok)
    tl.store(d_ptr + offs, x - y, mask=ok)


def _signature(dtype: str) -> str:
    return f"*{dtype}:16,*{dtype}:16,*{dtype}:16,*{dtype}:16,i32,256"


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_products_held_in_registers_are_taken_two_at_a_time(dtype, arch) -> None:
    src = products.source(_signature(dtype), arch=arch)
    assert "tc::mul_pair(x[r], x[r + 1], y[r], y[r + 1], p[r], p[r + 1]);" in src
    require_cuda_compiler()
    assert_clean_compile(products, _signature(dtype), "cuda", arch)


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_products_and_conversions_read_once_are_taken_two_at_a_time(dtype, arch) -> None:
    """Before, both went into the store's expression one element at a time: each
    conversion an F2F of its own (ptxas packs pairs only of what is stored) and each product
    a float product and another conversion.  The conversion is made in the product's loop,
    a pair at a time: made in a loop of its own before, every pair is live at once."""
    c = "half" if dtype == "fp16" else "bfloat16"
    src = gated.source(_signature(dtype), arch=arch)
    body = (f"    tc::{c} h_{dtype}[2];\n"
            f"    tc::cast_pair(h[r], h[r + 1], h_{dtype}[0], h_{dtype}[1]);\n"
            f"    tc::mul_pair(h_{dtype}[0], h_{dtype}[1], y[r], y[r + 1], t[r], t[r + 1]);\n")
    assert body in src
    # the conversion only stored stays in its store, where ptxas packs its pairs
    assert f"chunk[k] = tc::cast<tc::{c}>(h[v + k]);" in src
    require_cuda_compiler()
    assert_clean_compile(gated, _signature(dtype), "cuda", arch)


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_sums_and_differences_are_taken_two_at_a_time(dtype, arch) -> None:
    """Before, each element was two conversions up, a float sum and a conversion down."""
    src = sums.source(_signature(dtype), arch=arch)
    assert "tc::add_pair(x[r], x[r + 1], y[r], y[r + 1], t[r], t[r + 1]);" in src
    assert "tc::sub_pair(x[r], x[r + 1], y[r], y[r + 1], t_1[r], t_1[r + 1]);" in src
    require_cuda_compiler()
    assert_clean_compile(sums, _signature(dtype), "cuda", arch)


def test_products_in_pairs_compile_for_amd() -> None:
    require_hip_compiler()
    for dtype in ("fp16", "bf16"):
        assert_clean_compile(products, _signature(dtype), "hip", "gfx90a")
        assert_clean_compile(gated, _signature(dtype), "hip", "gfx90a")
        assert_clean_compile(sums, _signature(dtype), "hip", "gfx90a")


def _special_values(dtype) -> np.ndarray:
    """Ordinary values, subnormals, the largest finite, infinities, NaN and signed zeros,
    every pair of them once (x and y of the same length)."""
    info = np.finfo(dtype)
    small = float(info.smallest_subnormal)
    base = np.array([0.0, -0.0, 1.0, -1.5, 3.25, 1e-3, small, -small, 3 * small,
                     float(info.tiny), float(info.max), -float(info.max), np.inf, -np.inf,
                     np.nan, 0.1, 7.0, 300.0, -2.0 ** -10], dtype=np.float64)
    return base


def _host_pairs() -> tuple[np.ndarray, np.ndarray]:
    """x and y in fp16: every pair of the special values once."""
    vals = _special_values(np.float16)
    return (np.repeat(vals, len(vals)).astype(np.float16),
            np.tile(vals, len(vals)).astype(np.float16))


def _same_bits(got: np.ndarray, ref: np.ndarray) -> None:
    """The same bits where `ref` is a number, a NaN where it is one."""
    nan = np.isnan(ref)
    np.testing.assert_array_equal(got.view(np.uint16)[~nan], ref.view(np.uint16)[~nan])
    assert np.isnan(got[nan]).all()


def _interpret(kernel, x, y) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's two outputs on the interpreter."""
    n = len(x)
    first, second = np.empty_like(x), np.empty_like(x)
    kernel.interpret[(tilecc.cdiv(n, 256),)](x, y, first, second, n, BLOCK=256)
    return first, second


def _rounded(x, dtype=np.float16):
    """Float values rounded once to `dtype` (NumPy's warnings of infinities silenced)."""
    with np.errstate(all="ignore"):
        return x.astype(dtype)


def test_interpreter_products_match_numpy() -> None:
    x, y = _host_pairs()
    p, _ = _interpret(products, x, y)
    _same_bits(p, _rounded(x.astype(np.float32) * y.astype(np.float32)))


def test_interpreter_gated_matches_numpy() -> None:
    x, y = _host_pairs()
    out, scaled = _interpret(gated, x, y)
    h = _rounded(x.astype(np.float32) * np.float32(0.5))
    _same_bits(out, _rounded(h.astype(np.float32) * y.astype(np.float32)))
    _same_bits(scaled, h)


def test_interpreter_sums_match_numpy() -> None:
    x, y = _host_pairs()
    s, d = _interpret(sums, x, y)
    _same_bits(s, _rounded(x.astype(np.float32) + y.astype(np.float32)))
    _same_bits(d, _rounded(x.astype(np.float32) - y.astype(np.float32)))


def _device_pairs(dtype: str, x_scale: float, y_scale: float):
    """(torch, x, y) on the GPU in `dtype`: every pair of the special values (bf16's own
    subnormals and extremes added), then random values times the scales."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    dt = getattr(torch, dtype)
    vals = torch.tensor(_special_values(np.float16 if dtype == "float16" else np.float32),
                        dtype=torch.float64)
    if dtype == "bfloat16":
        vals = torch.cat([vals, torch.tensor([1e-39, -3e-40, 3e38, 1e-38], dtype=torch.float64)])
    x = vals.repeat_interleave(len(vals)).to(dt).cuda()
    y = vals.repeat(len(vals)).to(dt).cuda()
    torch.manual_seed(0)
    x = torch.cat([x, (torch.randn(5000, device="cuda") * x_scale).to(dt)])
    y = torch.cat([y, (torch.randn(5000, device="cuda") * y_scale).to(dt)])
    return torch, x, y


def _launch(kernel, x, y):
    first, second = x.new_empty(x.shape), x.new_empty(x.shape)
    kernel[(tilecc.cdiv(x.numel(), 256),)](x, y, first, second, x.numel(), BLOCK=256)
    return first, second


def _same_bits_on_gpu(torch, got, ref) -> None:
    nan = torch.isnan(ref)
    assert torch.equal(got[~nan].view(torch.int16), ref[~nan].view(torch.int16))
    assert torch.isnan(got[nan]).all()


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_gpu_sums_round_once_as_torch(dtype) -> None:
    """Signed zeros included: x - x is +0, -0 + -0 is -0 (the bf16 forms are fmas)."""
    torch, x, y = _device_pairs(dtype, 30, 1)
    s, d = _launch(sums, x, y)
    _same_bits_on_gpu(torch, s, (x.float() + y.float()).to(x.dtype))
    _same_bits_on_gpu(torch, d, (x.float() - y.float()).to(x.dtype))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_gpu_gated_rounds_as_torch(dtype) -> None:
    torch, x, y = _device_pairs(dtype, 30, 1)
    out, scaled = _launch(gated, x, y)
    h = (x.float() * 0.5).to(x.dtype)
    _same_bits_on_gpu(torch, out, (h.float() * y.float()).to(x.dtype))
    _same_bits_on_gpu(torch, scaled, h)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_gpu_products_in_pairs_round_once_as_torch(dtype) -> None:
    torch, x, y = _device_pairs(dtype, 1, 100)
    p, q = _launch(products, x, y)
    want = (x.float() * y.float()).to(x.dtype)  # the exact product, rounded once
    _same_bits_on_gpu(torch, p, want)
    _same_bits_on_gpu(torch, q, (want.float() * x.float()).to(x.dtype))
