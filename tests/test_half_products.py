"""Products of fp16 / bf16 blocks held in registers, two per instruction (tc::mul_pair:
mul.rn.f16x2, fma.rn.bf16x2 with -0): in the source, compiled for both vendors, on the
interpreter against NumPy, and on the GPU bit for bit against torch's products (one
rounding of the exact product) over ordinary, subnormal, infinite and NaN values."""

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


def _signature(dtype: str) -> str:
    return f"*{dtype}:16,*{dtype}:16,*{dtype}:16,*{dtype}:16,i32,256"


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_products_held_in_registers_are_taken_two_at_a_time(dtype, arch) -> None:
    src = products.source(_signature(dtype), arch=arch)
    assert "tc::mul_pair(x[r], x[r + 1], y[r], y[r + 1], p[r], p[r + 1]);" in src
    require_cuda_compiler()
    assert_clean_compile(products, _signature(dtype), "cuda", arch)


def test_products_in_pairs_compile_for_amd() -> None:
    require_hip_compiler()
    for dtype in ("fp16", "bf16"):
        assert_clean_compile(products, _signature(dtype), "hip", "gfx90a")


def _special_values(dtype) -> np.ndarray:
    """Ordinary values, subnormals, the largest finite, infinities, NaN and signed zeros,
    every pair of them once (x and y of the same length)."""
    info = np.finfo(dtype)
    small = float(info.smallest_subnormal)
    base = np.array([0.0, -0.0, 1.0, -1.5, 3.25, 1e-3, small, -small, 3 * small,
                     float(info.tiny), float(info.max), -float(info.max), np.inf, -np.inf,
                     np.nan, 0.1, 7.0, 300.0, -2.0 ** -10], dtype=np.float64)
    return base


def test_interpreter_products_match_numpy() -> None:
    vals = _special_values(np.float16)
    x = np.repeat(vals, len(vals)).astype(np.float16)
    y = np.tile(vals, len(vals)).astype(np.float16)
    n = len(x)
    p, q = np.empty_like(x), np.empty_like(x)
    products.interpret[(tilecc.cdiv(n, 256),)](x, y, p, q, n, BLOCK=256)
    with np.errstate(all="ignore"):
        want = (x.astype(np.float32) * y.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(p.view(np.uint16)[~np.isnan(want)],
                                  want.view(np.uint16)[~np.isnan(want)])
    assert np.isnan(p[np.isnan(want)]).all()


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_gpu_products_in_pairs_round_once_as_torch(dtype) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    dt = getattr(torch, dtype)
    vals = torch.tensor(_special_values(np.float16 if dtype == "float16" else np.float32),
                        dtype=torch.float64)
    if dtype == "bfloat16":  # bf16's own subnormals and extremes
        vals = torch.cat([vals, torch.tensor([1e-39, -3e-40, 3e38, 1e-38], dtype=torch.float64)])
    x = vals.repeat_interleave(len(vals)).to(dt).cuda()
    y = vals.repeat(len(vals)).to(dt).cuda()
    torch.manual_seed(0)
    x = torch.cat([x, torch.randn(5000, device="cuda").to(dt)])
    y = torch.cat([y, (torch.randn(5000, device="cuda") * 100).to(dt)])
    n = x.numel()
    p, q = torch.empty_like(x), torch.empty_like(x)
    products[(tilecc.cdiv(n, 256),)](x, y, p, q, n, BLOCK=256)
    want = (x.float() * y.float()).to(dt)  # the exact product, rounded once
    nan = torch.isnan(want)
    assert torch.equal(p[~nan].view(torch.int16), want[~nan].view(torch.int16))
    assert torch.isnan(p[nan]).all()
    want_q = (want.float() * x.float()).to(dt)
    nan_q = torch.isnan(want_q)
    assert torch.equal(q[~nan_q].view(torch.int16), want_q[~nan_q].view(torch.int16))
