"""fp16 / bf16 `a * b + c` contracted into one fused multiply-add under fp fusion, as
Triton's compiler does (passes/contract.py): the IR, the source, the interpreter's values
and the GPU's."""

from __future__ import annotations

import os
import sys

import ml_dtypes
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

BF16 = ml_dtypes.bfloat16

# rotary-embedding lanes where x1*c - x2*s rounded three times and rounded twice (the
# first product fused) differ by a bf16 ulp: the two products nearly cancel
X1, C, X2, S = (np.array(v, dtype=BF16) for v in zip(
    (3.515625, -2.4375, 0.271484375, 1.7109375), (2.515625, 3.5625, -1.265625, 1.1953125),
    (-2.578125, 3.1875, -0.63671875, -0.23046875), (3.5625, 2.53125, 0.32421875, 0.8828125),
    (-2.453125, -3.296875, 0.2109375, -1.2421875), (-2.0625, -2.1875, 1.96875, -3.0625),
    (2.1875, -3.5625, -1.796875, -1.0390625), (-0.98828125, -1.6796875, -4.40625, 2.046875)))


@tilecc.jit
def rotate(x1_ptr, c_ptr, x2_ptr, s_ptr, o1_ptr, o2_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    x1, c = tl.load(x1_ptr + i), tl.load(c_ptr + i)
    x2, s = tl.load(x2_ptr + i), tl.load(s_ptr + i)
    tl.store(o1_ptr + i, x1 * c - x2 * s)
    tl.store(o2_ptr + i, x2 * c + x1 * s)


@tilecc.jit
def product_read_twice(x_ptr, y_ptr, o_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    p = tl.load(x_ptr + i) * tl.load(y_ptr + i)
    tl.store(o_ptr + i, p + p)


def _round(x) -> np.ndarray:  # to bf16 through float32, as the generated code does
    return np.asarray(x, np.float64).astype(np.float32).astype(BF16)


def _expected(fused: bool) -> tuple[np.ndarray, np.ndarray]:
    f = lambda a: np.asarray(a, np.float64)  # noqa: E731
    x1c, x2s, x2c, x1s = (f(a) * f(b) for a, b in ((X1, C), (X2, S), (X2, C), (X1, S)))
    if fused:  # the left product fused, the right one rounded
        return _round(x1c - f(_round(x2s))), _round(x2c + f(_round(x1s)))
    return (_round(f(_round(x1c)) - f(_round(x2s))), _round(f(_round(x2c)) + f(_round(x1s))))


def _inputs(width: int) -> list[np.ndarray]:  # the lanes above, repeated
    return [np.tile(a, width // 8) for a in (X1, C, X2, S)]


def _run(fusion: bool, launch=None, width: int = 8):
    o1, o2 = np.zeros(width, BF16), np.zeros(width, BF16)
    (launch or rotate.interpret)[(1,)](*_inputs(width), o1, o2, BLOCK=width,
                                       enable_fp_fusion=fusion)
    return o1, o2


@pytest.mark.parametrize("fusion", [True, False])
def test_the_interpreter_rounds_as_the_option_says(fusion) -> None:
    """Fused: each sum of products rounds twice (Triton's contraction); unfused: three
    times.  The inputs are ones where the two differ."""
    want = _expected(fusion)
    assert not np.array_equal(_expected(True)[0], _expected(False)[0])
    for got, exp in zip(_run(fusion), want):
        np.testing.assert_array_equal(got.astype(np.float32), exp.astype(np.float32))


def test_the_source_fuses_only_under_fusion() -> None:
    sig = "*bf16:16,*bf16:16,*bf16:16,*bf16:16,*bf16:16,*bf16:16,8"
    fused = rotate.source(sig)
    assert fused.count("tc::fma(") == 2 and "-(x2[r] * s[r])" in fused
    assert "tc::fma(" not in rotate.source(sig, enable_fp_fusion=False)
    # float32 sums of products are left to the native compiler's own contraction
    assert "tc::fma(" not in rotate.source(sig.replace("bf16", "fp32"))
    # a product read twice is computed once, as written
    assert "tc::fma(" not in product_read_twice.source("*fp16:16,*fp16:16,*fp16:16,8")
    # four elements a thread: the fmas and the products they add go two per instruction
    wide = rotate.source(sig[:-1] + "512")
    assert wide.count("tc::fma_pair(") == 2 and wide.count("tc::mul_pair(") == 2
    assert "tc::fma(" not in wide


@pytest.mark.parametrize("target,arch", TARGETS)
def test_fmas_in_pairs_compile_cleanly(target: str, arch: str) -> None:
    """fp16 and bf16, four elements a thread (tc::fma_pair, tc::mul_pair), every target."""
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    for dtype in ("bf16", "fp16"):
        assert_clean_compile(rotate, f"*{dtype}:16," * 6 + "512", target, arch)


@pytest.mark.gpu
def test_the_gpu_rounds_as_the_interpreter() -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")

    def on_gpu(a: np.ndarray):
        return torch.from_numpy(a.view(np.uint16).astype(np.int16)).cuda().view(torch.bfloat16)

    for fusion in (True, False):
        for width in (8, 512):  # one element a thread; four, in pairs (tc::fma_pair)
            o1, o2 = on_gpu(np.zeros(width, BF16)), on_gpu(np.zeros(width, BF16))
            rotate[(1,)](*(on_gpu(a) for a in _inputs(width)), o1, o2, BLOCK=width,
                         enable_fp_fusion=fusion)
            for got, exp in zip((o1, o2), _run(fusion, width=width)):
                np.testing.assert_array_equal(got.float().cpu().numpy(),
                                              exp.astype(np.float32))


@pytest.mark.gpu
def test_the_gpu_rounds_as_triton() -> None:
    """The same kernel source through Triton on the same GPU: the same bf16 results, with
    fusion (Triton's default) and without."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("triton")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
    from triton_clone import as_triton

    def on_gpu(a: np.ndarray):
        return torch.from_numpy(a.view(np.uint16).astype(np.int16)).cuda().view(torch.bfloat16)

    for fusion in (True, False):
        for width in (8, 512):
            outs = []
            for kernel in (rotate, as_triton(rotate)):
                o1, o2 = on_gpu(np.zeros(width, BF16)), on_gpu(np.zeros(width, BF16))
                kernel[(1,)](*(on_gpu(a) for a in _inputs(width)), o1, o2, BLOCK=width,
                             enable_fp_fusion=fusion)
                outs.append(torch.cat([o1, o2]).float().cpu().numpy())
            np.testing.assert_array_equal(outs[0], outs[1])
