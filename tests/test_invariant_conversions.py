"""Layout conversions of values made before a loop (a vector loaded once and broadcast
against each iteration's block) are made before the loop, once, not through shared memory
and two barriers at every iteration (passes/layouts.py): in the source, on the
interpreter against NumPy, compiled for both vendors, and on the GPU."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tilecc
import tilecc.language as tl

try:
    from conftest_compilers import require_cuda_compiler, require_hip_compiler
    from test_compile_kernels import TARGETS, assert_clean_compile
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import require_cuda_compiler, require_hip_compiler
    from tests.test_compile_kernels import TARGETS, assert_clean_compile


@tilecc.jit
def dequant_matmul(a_ptr, b_ptr, s_ptr, z_ptr, c_ptr, M, N, K, REPEAT: tl.constexpr,
                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C = REPEAT * A @ (B * s + z) * s + z: int8 B dequantized in the K loop by per-column
    fp16 scales and zeros loaded once, before the loops, which also scale and shift the
    product's columns after them."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    s = tl.load(s_ptr + rn)
    z = tl.load(z_ptr + rn)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(REPEAT):
        for k in range(0, K, BK):
            a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
            b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
            acc = tl.dot(a, b.to(tl.float16) * s[None, :] + z[None, :], acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc * s[None, :] + z[None, :])


def _signature(repeat: int, blocks=(64, 64, 32)) -> str:
    return ("*fp16:16,*i8:16,*fp16:16,*fp16:16,*fp32:16,i32:16,i32:16,i32:16,"
            f"{repeat},{blocks[0]},{blocks[1]},{blocks[2]}")


CONVERSION = "layout conversion: through shared memory"


@pytest.mark.parametrize("repeat", [1, 2])
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_conversions_of_values_made_before_the_loops_leave_them(repeat, arch) -> None:
    """The scales and zeros, read as often against the product after the loops as against
    the weights inside them, are in the product's layout (their slice of its accumulator)
    and converted once each, before the loops, for the weights' block."""
    src = dequant_matmul.source(_signature(repeat, (128, 128, 64)), arch=arch, num_warps=8,
                                num_stages=3)
    body = src.split("#include", 1)[1]
    first_loop = re.search(r"// L\d+: for ", body).start()  # the outer loop's line
    assert body[:first_loop].count(CONVERSION) == 2  # s and z, once each
    assert body[first_loop:].count(CONVERSION) == 0


def _operands(rng, m, n, k):
    a = (rng.standard_normal((m, k)) / 4).astype(np.float16)
    b = rng.integers(-128, 128, (k, n)).astype(np.int8)
    s = (rng.random(n) / 16).astype(np.float16)
    z = rng.standard_normal(n).astype(np.float16)
    return a, b, s, z


def _reference(a, b, s, z, repeat):
    # b * s + z in fp16 is one fused multiply-add (passes.contract): rounded once
    w = (b.astype(np.float64) * s.astype(np.float64) + z.astype(np.float64)).astype(np.float16)
    return (repeat * (a.astype(np.float64) @ w.astype(np.float64)) * s.astype(np.float64)
            + z.astype(np.float64))


@pytest.mark.parametrize("repeat", [1, 2])
def test_the_interpreter_matches_numpy(repeat) -> None:
    rng = np.random.default_rng(3)
    m, n, k = 64, 64, 96
    a, b, s, z = _operands(rng, m, n, k)
    c = np.zeros((m, n), np.float32)
    dequant_matmul.interpret[(1, 1)](a, b, s, z, c, m, n, k, REPEAT=repeat, BM=64, BN=64,
                                      BK=32)
    np.testing.assert_allclose(c, _reference(a, b, s, z, repeat), rtol=1e-3, atol=1e-2)


@pytest.mark.parametrize("target,arch", TARGETS)
def test_compiles_cleanly(target: str, arch: str) -> None:
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    for repeat in (1, 2):
        assert_clean_compile(dequant_matmul, _signature(repeat), target, arch, num_warps=4,
                             num_stages=3)


@pytest.mark.gpu
def test_gpu_matches_the_interpreter() -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    rng = np.random.default_rng(4)
    m, n, k = 256, 256, 512
    a, b, s, z = _operands(rng, m, n, k)
    want = np.zeros((m, n), np.float32)
    dequant_matmul.interpret[(2, 2)](a, b, s, z, want, m, n, k, REPEAT=2, BM=128, BN=128,
                                      BK=64)
    got = torch.zeros((m, n), device="cuda")
    dequant_matmul[(2, 2)](*(torch.from_numpy(x).cuda() for x in (a, b, s, z)), got, m, n,
                           k, REPEAT=2, BM=128, BN=128, BK=64, num_warps=8, num_stages=3)
    np.testing.assert_allclose(got.cpu().numpy(), want, rtol=1e-3, atol=1e-2)
