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


# --- `acc += tl.dot(a, b)`: the sum accumulated by the product (passes/contract.py) ---------
@tilecc.jit
def dot_added(a_ptr, b_ptr, c_ptr, x_ptr, K, FORM: tl.constexpr, BM: tl.constexpr,
              BN: tl.constexpr, BK: tl.constexpr):
    """C = X + A @ B over a K loop, the product added as FORM says: 0 `acc += dot`,
    1 `dot + acc`, 2 the product also stored (read twice), 3 `acc - dot`."""
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.load(x_ptr + rm[:, None] * BN + rn[None, :])
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        if FORM == 0:
            acc += tl.dot(a, b)
        elif FORM == 1:
            acc = tl.dot(a, b) + acc
        elif FORM == 2:
            p = tl.dot(a, b)
            tl.store(x_ptr + rm[:, None] * BN + rn[None, :], p)
            acc += p
        else:
            acc = acc - tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


DOT_ADDED_SIG = "*fp16:16,*fp16:16,*fp32:16,*fp32:16,i32:16,{form},64,64,32"


def _loop_product(kernel, sig: str, arch: str):
    """The K loop's body, its product, and whether an add or subtraction reads it."""
    ir = kernel.ir(sig, num_warps=4, arch=arch)
    body = next(op for op in ir.walk() if op.kind == "for").regions[0]
    dot = next(op for op in body.ops if op.kind == "dot")
    added = any(op.kind == "binary" and dot.result in op.operands for op in body.ops)
    return body, dot, added


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_a_product_added_to_the_accumulator_accumulates_into_it(arch) -> None:
    """`acc += tl.dot(a, b)` and `tl.dot(a, b) + acc` are one product into the carried
    accumulator, as Triton's combine pass makes them: no add is left in the loop, and the
    product reads the loop's accumulator.  A product read twice, or subtracted, keeps its
    own zeroed accumulator and the add."""
    for form in (0, 1):
        body, dot, added = _loop_product(dot_added, DOT_ADDED_SIG.format(form=form), arch)
        assert not added and dot.result in body.yields
        assert dot.operands[2] is body.args[1]  # the carried accumulator
    for form in (2, 3):
        body, dot, added = _loop_product(dot_added, DOT_ADDED_SIG.format(form=form), arch)
        assert added and dot.operands[2] is not body.args[1]


@pytest.mark.gpu
@pytest.mark.parametrize("form", [0, 1, 2, 3])
def test_the_gpu_adds_the_products_as_numpy(form) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    rng = np.random.default_rng(form)
    k = 256
    a, b = rng.standard_normal((64, k)), rng.standard_normal((k, 64))
    x = rng.standard_normal((64, 64))
    args = [torch.tensor(v, device="cuda", dtype=torch.float16) for v in (a, b)]
    c = torch.zeros((64, 64), device="cuda")
    xt = torch.tensor(x, device="cuda", dtype=torch.float32)
    dot_added[(1,)](*args, c, xt, k, FORM=form, BM=64, BN=64, BK=32)
    a16, b16 = (t.double().cpu().numpy() for t in args)
    want = x - a16 @ b16 if form == 3 else x + a16 @ b16
    np.testing.assert_allclose(c.cpu().numpy(), want, rtol=1e-3, atol=1e-2)


@pytest.mark.gpu
def test_the_gpu_adds_the_products_as_triton() -> None:
    """The same kernel source through Triton on the same GPU, `acc += tl.dot(a, b)` and
    `tl.dot(a, b) + acc` over K = 4096 onto a large accumulator: both tools accumulate the
    products into the loop's accumulator (Triton's combine pass, tilecc's fold), and the
    sums agree to a few fp32 ulps."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("triton")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
    from triton_clone import as_triton

    rng = np.random.default_rng(7)
    k = 4096
    a = torch.tensor(rng.standard_normal((64, k)), device="cuda", dtype=torch.float16)
    b = torch.tensor(rng.standard_normal((k, 64)), device="cuda", dtype=torch.float16)
    x = torch.tensor(rng.standard_normal((64, 64)) * 1e3, device="cuda", dtype=torch.float32)
    for form in (0, 1):
        outs = []
        for kernel in (dot_added, as_triton(dot_added)):
            c = torch.zeros((64, 64), device="cuda")
            kernel[(1,)](a, b, c, x, k, FORM=form, BM=64, BN=64, BK=32)
            outs.append(c.cpu().numpy())
        np.testing.assert_allclose(outs[0], outs[1], rtol=1e-6, atol=1e-3)
