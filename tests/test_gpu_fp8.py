"""fp8 and the forms of tl.dot on the GPU (`pytest -m gpu`): the GPU's conversions (the
hardware's cvt on sm_89+, tilecc.h's software elsewhere) bit for bit against the
interpreter, torch float8 tensors as arguments, fp8 / batched / split-precision products
against the interpreter and NumPy, and Hopper's fp8 tensor-core products (reduced-
precision sums, `max_num_imprecise_acc`) against the exact product and Triton's."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import tilecc.language as tl

try:
    import test_dot_forms as DF
    import test_fp8 as F
except ImportError:  # tests/ imported as a package
    from tests import test_dot_forms as DF
    from tests import test_fp8 as F

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")


def _capability() -> int:
    major, minor = torch.cuda.get_device_capability()
    return 10 * major + minor


def _formats():
    """The formats Triton 3.6 has on this GPU (tilecc refuses the others, as Triton)."""
    names = ["fp8e5"] + (["fp8e4nv"] if _capability() >= 89 else [])
    return [n for n in F.FORMATS if n in names]


def _dev(a: np.ndarray):
    return torch.from_numpy(np.ascontiguousarray(a)).cuda()


def _floats() -> np.ndarray:
    """Every fp8 value of every format, every tie between neighbours, one step off each tie,
    specials, and random floats of every magnitude."""
    parts = []
    for ml, _, _ in F.FORMATS.values():
        v = np.arange(256, dtype=np.uint8).view(ml).astype(np.float64)
        v = np.unique(v[np.isfinite(v)])
        mids = ((v[:-1] + v[1:]) / 2).astype(np.float32)
        parts += [v.astype(np.float32), mids, np.nextafter(mids, np.float32(np.inf)),
                  np.nextafter(mids, np.float32(-np.inf))]
    rng = np.random.default_rng(0)
    parts.append((rng.standard_normal(50000) * 2.0 ** rng.integers(-40, 40, 50000))
                 .astype(np.float32))
    parts.append(np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-45, 3e38, -3e38],
                          np.float32))
    return np.concatenate(parts).astype(np.float32)


@pytest.mark.parametrize("out", [np.float32, np.float16])
def test_every_bit_pattern_converts_up_as_the_interpreter(out) -> None:
    for name in _formats():
        bits = np.arange(256, dtype=np.uint8)
        want = np.zeros(256, out)
        F.up_kernel.interpret[(2,)](bits, want, 256, FMT=F._fmt(name), BLOCK=128)
        got = _dev(np.zeros(256, out))
        F.up_kernel[(2,)](_dev(bits), got, 256, FMT=F._fmt(name), BLOCK=128)
        assert F.same_floats(got.cpu().numpy(), want), name


@pytest.mark.parametrize("src", [np.float32, np.float16])
def test_floats_convert_down_as_the_interpreter(src) -> None:
    with np.errstate(over="ignore"):
        x = _floats().astype(src)
    for name in _formats():
        want = np.zeros(len(x), np.uint8)
        F.down_kernel.interpret[(len(x) // 1024 + 1,)](x, want, len(x), FMT=F._fmt(name),
                                                      BLOCK=1024)
        got = _dev(np.zeros(len(x), np.uint8))
        F.down_kernel[(len(x) // 1024 + 1,)](_dev(x), got, len(x), FMT=F._fmt(name),
                                            BLOCK=1024)
        ml = F.FORMATS[name][0]
        assert F.same_floats(got.cpu().numpy().view(ml).astype(np.float32),
                             want.view(ml).astype(np.float32)), name


def test_torch_float8_tensors_are_arguments() -> None:
    torch_types = {"fp8e4nv": torch.float8_e4m3fn, "fp8e5": torch.float8_e5m2}
    for name in _formats():
        x = (torch.randn(5000, device="cuda") * 8).to(torch_types[name])
        y = torch.zeros_like(x)
        F.copy_kernel[(5,)](x, y, 5000, BLOCK=1024)
        assert torch.equal(x.view(torch.uint8), y.view(torch.uint8))


def _fp8_tensor(x: np.ndarray, fmt: str):
    return _dev(x.view(np.uint8)).view(getattr(torch, F.FORMATS[fmt][0].__name__))


def _relative_error(got, want) -> float:
    return float(np.max(np.abs(np.asarray(got, np.float64) - want)) / np.max(np.abs(want)))


@pytest.mark.parametrize("shape,blocks,warps", [((256, 256, 256), (128, 128, 64), 4),
                                                ((200, 136, 300), (64, 64, 64), 4),
                                                ((256, 256, 512), (128, 128, 64), 8)])
def test_fp8_matmul_matches_the_interpreter(shape, blocks, warps) -> None:
    m, n, k = shape
    bm, bn, bk = blocks
    rng = np.random.default_rng(m + n + k)
    names = _formats()
    for fa, fb in [(names[-1], names[-1]), (names[0], names[-1])]:
        a = rng.standard_normal((m, k)).astype(F.FORMATS[fa][0])
        b = rng.standard_normal((k, n)).astype(F.FORMATS[fb][0])
        want = np.zeros((m, n), np.float32)
        grid = ((m + bm - 1) // bm, (n + bn - 1) // bn)
        DF.fp8_loop_kernel.interpret[grid](a, b, want, m, n, k, BM=bm, BN=bn, BK=bk)
        got = _dev(np.zeros((m, n), np.float32))
        DF.fp8_loop_kernel[grid](_fp8_tensor(a, fa), _fp8_tensor(b, fb), got, m, n, k,
                                 BM=bm, BN=bn, BK=bk, num_warps=warps)
        sig = f"*{fa}:16,*{fb}:16,*fp32:16,i32,i32,i32"
        native = "k32 (fp8" in DF.fp8_loop_kernel.source(
            sig, BM=bm, BN=bn, BK=bk, num_warps=warps, arch=f"sm_{_capability()}")
        if native:  # Hopper's fp8 wgmma sums at reduced precision (Triton's default too)
            assert _relative_error(got.cpu().numpy(), want) < 4e-3, (fa, fb)
        else:  # through fp16: every product exact, summed in fp32
            np.testing.assert_allclose(got.cpu().numpy(), want, rtol=1e-5, atol=1e-3)


def _hopper_fp8_product(k: int, fmt: str, imprecise, kernel=None):
    """A 256 x 256 fp8 product over `k` on the fp8 tensor cores (B K-major): the result, and
    the exact one."""
    if _capability() < 90 or fmt not in _formats():
        pytest.skip("fp8 tensor cores: Hopper")
    rng = np.random.default_rng(k)
    ml = F.FORMATS[fmt][0]
    a = rng.standard_normal((256, k)).astype(ml)
    b = rng.standard_normal((256, k)).astype(ml)  # B^T, row-major: B is K-major
    out = _dev(np.zeros((256, 256), np.float32))
    (kernel or DF.fp8_strided_kernel)[(2, 2)](
        _fp8_tensor(a, fmt), _fp8_tensor(b, fmt), out, 256, 256, k, 1, k, BM=128, BN=128,
        BK=128, IMPRECISE=imprecise, num_warps=8, num_stages=3)
    return out.cpu().numpy(), a.astype(np.float64) @ b.astype(np.float64).T


@pytest.mark.parametrize("fmt", ["fp8e4nv", "fp8e5"])
def test_max_num_imprecise_acc_promotes_partial_sums_on_hopper(fmt) -> None:
    # measured on an H100 (K = 4096): 2-3e-3 of the largest value unpromoted, 1-2e-4
    # promoted every 128, 4e-5 every 32 — as Triton's, to the digit
    errors = {imp: _relative_error(*_hopper_fp8_product(4096, fmt, imp))
              for imp in (None, 128, 32)}
    assert errors[None] < 1e-2 and errors[128] < 5e-4 and errors[32] < 1.5e-4, errors
    assert errors[32] < errors[128] < errors[None] / 4, errors


@pytest.mark.parametrize("imprecise", [None, 64])
def test_fp8_products_equal_tritons(imprecise) -> None:
    # the same source through Triton: the same instructions summing in the same order
    pytest.importorskip("triton")
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
    from triton_clone import as_triton
    ours, _ = _hopper_fp8_product(1024, "fp8e4nv", imprecise)
    theirs, _ = _hopper_fp8_product(1024, "fp8e4nv", imprecise,
                                    as_triton(DF.fp8_strided_kernel))
    assert np.array_equal(ours, theirs)


def test_fp8_attention_products_on_the_gpu() -> None:
    if "fp8e4nv" not in _formats():
        pytest.skip("e4m3: sm_89+")
    rng = np.random.default_rng(4)
    q, k, v = (rng.standard_normal((256, 64)).astype(F.FORMATS["fp8e4nv"][0])
               for _ in range(3))
    got = _dev(np.zeros((256, 64), np.float32))
    DF.fp8_attention_kernel[(2,)](*(_fp8_tensor(x, "fp8e4nv") for x in (q, k, v)), got, 256,
                                  D=64, BM=128, BN=64, num_warps=8)
    # the probabilities are rounded to fp8 from sums the tensor cores add at reduced
    # precision: a few land on the neighbouring fp8 value
    assert _relative_error(got.cpu().numpy(), DF.fp8_attention_reference(q, k, v)) < 2e-2


def test_batched_and_split_precision_products() -> None:
    rng = np.random.default_rng(7)
    a = rng.integers(-3, 4, (4, 16, 32)).astype(np.float16)
    b = rng.integers(-3, 4, (4, 32, 32)).astype(np.float16)
    c = rng.integers(-5, 6, (4, 16, 32)).astype(np.float32)
    d = _dev(np.zeros((4, 16, 32), np.float32))
    DF.batched_kernel[(1,)](_dev(a), _dev(b), _dev(c), d, BS=4, M=16, N=32, K=32,
                            WITH_ACC=True)
    assert np.array_equal(d.cpu().numpy(), np.matmul(a.astype(np.float32),
                                                     b.astype(np.float32)) + c)
    a = rng.standard_normal((32, 64)).astype(np.float32)
    b = rng.standard_normal((64, 32)).astype(np.float32)
    want = DF._exact(a, b) + 0.5
    for p, tol in (("tf32", 1e-2), ("tf32x3", 2e-6), ("bf16x3", 2e-4), ("bf16x6", 2e-6)):
        c = _dev(np.full((32, 32), 0.5, np.float32))
        DF.precision_kernel[(1,)](_dev(a), _dev(b), c, M=32, N=32, K=64, P=p)
        err = np.max(np.abs(c.cpu().numpy() - want)) / np.max(np.abs(want))
        assert err < tol, (p, err)


def test_split_precision_keeps_infinities_on_the_gpu() -> None:
    a = np.ones((32, 64), np.float32)
    b = np.ones((64, 32), np.float32)
    b[0, 0] = np.inf
    for p in ("tf32x3", "bf16x3", "bf16x6"):
        c = _dev(np.zeros((32, 32), np.float32))
        DF.precision_kernel[(1,)](_dev(a), _dev(b), c, M=32, N=32, K=64, P=p)
        out = c.cpu().numpy()
        assert np.all(np.isposinf(out[:, 0])) and np.all(out[:, 1:] == 64), p


def test_fp8_dot_out_dtype_fp16_on_the_gpu() -> None:
    name = _formats()[-1]
    rng = np.random.default_rng(8)
    a = rng.standard_normal((64, 32)).astype(F.FORMATS[name][0])
    b = rng.standard_normal((32, 64)).astype(F.FORMATS[name][0])
    want = np.zeros((64, 64), np.float16)
    DF.mm_kernel.interpret[(1,)](a, b, want, M=64, N=64, K=32, OUT=tl.float16, IMPRECISE=None)
    got = _dev(np.zeros((64, 64), np.float16))
    DF.mm_kernel[(1,)](_dev(a.view(np.uint8)).view(getattr(torch, F.FORMATS[name][0].__name__)),
                       _dev(b.view(np.uint8)).view(getattr(torch, F.FORMATS[name][0].__name__)),
                       got, M=64, N=64, K=32, OUT=tl.float16, IMPRECISE=None)
    np.testing.assert_allclose(got.cpu().numpy().astype(np.float32), want.astype(np.float32),
                               rtol=1e-3, atol=1e-3)




try:
    from test_blocks import load_example
except ImportError:  # tests/ imported as a package
    from tests.test_blocks import load_example
MM = load_example("matmul")


@pytest.mark.parametrize("config", MM.FP8_CONFIGS, ids=lambda c: "{BLOCK_SIZE_M}x{BLOCK_SIZE_N}x"
                         "{BLOCK_SIZE_K}".format(**c.kwargs) + f"-w{c.num_warps}-s{c.num_stages}")
def test_matmul_example_fp8_configs_on_hopper(config) -> None:
    """examples/matmul.py's kernel at each fp8 configuration the fp8 benchmark tries
    (Triton's tutorial's), e4m3 operands as the benchmark passes them (B column-major),
    ragged in M, N and K: against the exact product of the same fp8 values."""
    if _capability() < 90:
        pytest.skip("fp8 wgmma: Hopper")
    m, n, k = 300, 264, 528  # (rows of 16-byte multiples, as the benchmark's)
    rng = np.random.default_rng(m)
    a = rng.standard_normal((m, k)).astype(F.FORMATS["fp8e4nv"][0])
    bt = rng.standard_normal((n, k)).astype(F.FORMATS["fp8e4nv"][0])  # B^T row-major
    want = a.astype(np.float64) @ bt.astype(np.float64).T
    a_t, b_t = _fp8_tensor(a, "fp8e4nv"), _fp8_tensor(bt, "fp8e4nv").T
    c = torch.zeros((m, n), device="cuda", dtype=torch.float16)
    MM.launch(a_t, b_t, c, config)
    assert _relative_error(c.float().cpu().numpy(), want) < 4e-3
