"""Triton's fp8 types: conversions (all 256 bit patterns up, random floats down, against a
reference written here from the formats' definitions), loads and stores, arguments, the
per-architecture support, refusals, and the generated code compiled by NVRTC and hiprtc.
fp8 `tl.dot` is in tests/test_dot_forms.py; GPU runs in tests/test_gpu_fp8.py."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tilecc
import tilecc.language as tl
from tilecc.errors import CompilationError
from tilecc.language import dtypes as D
from tilecc.transpiler import specialize as SP

try:
    from conftest_compilers import (compile_cleanly_together, require_cuda_compiler,
                                    require_hip_compiler)
    from test_compile_kernels import assert_clean_compile
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import (compile_cleanly_together, require_cuda_compiler,
                                          require_hip_compiler)
    from tests.test_compile_kernels import assert_clean_compile

# tilecc's fp8 types, their ml_dtypes types, and the encoding facts the reference needs:
# (largest finite value, whether zero has a sign)
FORMATS = {
    "fp8e4nv": (ml_dtypes.float8_e4m3fn, 448.0, True),
    "fp8e5": (ml_dtypes.float8_e5m2, 57344.0, True),
    "fp8e4b8": (ml_dtypes.float8_e4m3fnuz, 240.0, False),
    "fp8e5b16": (ml_dtypes.float8_e5m2fnuz, 57344.0, False),
}


def reference_down(x: np.ndarray, name: str) -> np.ndarray:
    """float32 → fp8 bit patterns from first principles: the nearest finite value of the
    format (ties to the even bit pattern), saturated to the largest finite value
    (infinities too), NaN to NaN."""
    ml, top, signed_zero = FORMATS[name]
    codes = np.arange(128, dtype=np.uint8)
    values = codes.view(ml).astype(np.float64)
    keep = np.isfinite(values) & (values <= top)
    codes, values = codes[keep], values[keep]  # ascending with the code
    mag = np.minimum(np.abs(x.astype(np.float64)), top)
    hi = np.clip(np.searchsorted(values, mag), 0, len(values) - 1)
    lo = np.maximum(hi - 1, 0)
    d_lo, d_hi = mag - values[lo], values[hi] - mag
    pick_hi = (d_hi < d_lo) | ((d_hi == d_lo) & (codes[hi] % 2 == 0))
    code = np.where(pick_hi, codes[hi], codes[lo]).astype(np.uint8)
    negative = np.signbit(x) & ((code != 0) | signed_zero)
    code = np.where(negative, code | np.uint8(0x80), code)
    nan = np.uint8(np.array(np.nan, np.float32).astype(ml).view(np.uint8))
    return np.where(np.isnan(x), nan, code).astype(np.uint8)


def same_floats(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal values, NaN equal to NaN, +0 and -0 told apart."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return bool(np.all((a == b) & (np.signbit(a) == np.signbit(b)) | np.isnan(a) & np.isnan(b)))


@tilecc.jit
def up_kernel(Bits, Out, N, FMT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < N
    x = tl.load(Bits + offs, mask=m, other=0).to(FMT, bitcast=True)
    tl.store(Out + offs, x.to(Out.dtype.element_ty), mask=m)


@tilecc.jit
def down_kernel(X, Bits, N, FMT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < N
    y = tl.load(X + offs, mask=m, other=0.0).to(FMT)
    tl.store(Bits + offs, y.to(tl.uint8, bitcast=True), mask=m)


@tilecc.jit
def copy_kernel(X, Y, N, BLOCK: tl.constexpr):
    # fp8 arrays loaded and stored as they are (ml_dtypes / torch float8 arguments)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < N
    x = tl.load(X + offs, mask=m)
    tl.store(Y + offs, tl.where(x > x.to(tl.float32).to(X.dtype.element_ty), x, x), mask=m)


def _fmt(name: str):
    return getattr(tl, D.LONG_NAMES[name])


@pytest.mark.parametrize("out", [np.float32, np.float16, ml_dtypes.bfloat16, np.float64])
@pytest.mark.parametrize("name", list(FORMATS))
def test_every_bit_pattern_converts_up_exactly(name, out) -> None:
    bits = np.arange(256, dtype=np.uint8)
    got = np.zeros(256, out)
    up_kernel.interpret[(2,)](bits, got, 256, FMT=_fmt(name), BLOCK=128)
    want = bits.view(FORMATS[name][0]).astype(np.float32).astype(out)
    assert same_floats(got.astype(np.float64), want.astype(np.float64))


def test_reference_agrees_with_ml_dtypes_where_nothing_saturates() -> None:
    # the reference above is checked against ml_dtypes' own rounding on in-range values
    rng = np.random.default_rng(1)
    for name, (ml, top, _) in FORMATS.items():
        x = (rng.standard_normal(4000) * rng.choice([1e-3, 1, 30], 4000)).astype(np.float32)
        x = x[np.abs(x) <= top]
        assert np.array_equal(reference_down(x, name), x.astype(ml).view(np.uint8)), name


_DOWN_CASES = {name: [] for name in FORMATS}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(width=32, allow_nan=True, allow_infinity=True, allow_subnormal=True),
                min_size=1, max_size=64),
       st.sampled_from(list(FORMATS)))
def test_floats_round_to_nearest_even_and_saturate(values, name) -> None:
    x = np.array(values, np.float32)
    got = np.zeros(len(x), np.uint8)
    down_kernel.interpret[(1,)](x, got, len(x), FMT=_fmt(name), BLOCK=64)
    want = reference_down(x, name)
    as_fp8 = FORMATS[name][0]
    assert same_floats(got.view(as_fp8).astype(np.float32), want.view(as_fp8).astype(np.float32))


@pytest.mark.parametrize("name", list(FORMATS))
def test_ties_overflow_and_specials_down(name) -> None:
    ml, top, _ = FORMATS[name]
    values = np.arange(256, dtype=np.uint8).view(ml).astype(np.float64)
    finite = np.unique(values[np.isfinite(values)])
    mids = (finite[:-1] + finite[1:]) / 2  # every tie, exactly
    x = np.concatenate([finite, mids, [np.inf, -np.inf, np.nan, top * 4, -top * 4, 1e30,
                                       2.0 ** -30, -(2.0 ** -30)]]).astype(np.float32)
    for src in (np.float32, np.float16):
        with np.errstate(over="ignore"):  # beyond fp16: infinities, which saturate too
            xs = x.astype(src)
        got = np.zeros(len(xs), np.uint8)
        down_kernel.interpret[(1,)](xs, got, len(xs), FMT=_fmt(name), BLOCK=1024)
        want = reference_down(xs.astype(np.float32), name)
        assert same_floats(got.view(ml).astype(np.float32), want.view(ml).astype(np.float32))
    # saturation: overflow and infinities give the largest finite value, NaN stays NaN
    got = np.zeros(4, np.uint8)
    down_kernel.interpret[(1,)](np.array([np.inf, -np.inf, 1e9, np.nan], np.float32), got, 4,
                                FMT=_fmt(name), BLOCK=4)
    back = got.view(ml).astype(np.float32)
    assert list(back[:3]) == [top, -top, top] and np.isnan(back[3])


def test_fp8_arrays_are_kernel_arguments() -> None:
    rng = np.random.default_rng(2)
    for name, (ml, _, _) in FORMATS.items():
        x = rng.standard_normal(100).astype(ml)
        y = np.zeros(100, ml)
        copy_kernel.interpret[(1,)](x, y, 100, BLOCK=128)
        assert np.array_equal(x.view(np.uint8), y.view(np.uint8))
        assert SP.array_info(x).dtype == D.BY_NAME[name]


def test_signature_names_and_torch_dtypes() -> None:
    for name in ("fp8e4nv", "fp8e5", "fp8e4b8", "fp8e5b16", "fp8e4b15"):
        assert SP.parse_type(name) is D.BY_NAME[name]
        assert repr(D.BY_NAME[name]) == f"{D.REPR_MODULE[0]}.{D.LONG_NAMES[name]}"

    class FakeTorchDtype:  # torch is not a test dependency: its dtypes print as torch.X
        def __init__(self, name):
            self.name = name

        def __str__(self):
            return f"torch.{self.name}"

    torch_names = {"float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5",
                   "float8_e4m3fnuz": "fp8e4b8", "float8_e5m2fnuz": "fp8e5b16"}
    for torch_name, name in torch_names.items():
        assert SP._torch_dtype(FakeTorchDtype(torch_name)) is D.BY_NAME[name]


def test_constants_are_rounded_and_saturated_once() -> None:
    @tilecc.jit
    def consts(Out):
        r = tl.arange(0, 4)
        big = tl.full((4,), 1000.0, tl.float8e4nv)  # saturates to 448
        tie = tl.full((4,), 1.0625, tl.float8e4nv)  # halfway between 1 and 1.125: to even
        x = tl.where(r == 0, big, tie)
        tl.store(Out + r, x.to(tl.float32))

    out = np.zeros(4, np.float32)
    consts.interpret[(1,)](out)
    assert list(out) == [448.0, 1.0, 1.0, 1.0]
    src = consts.source("*fp32")
    assert "tc::fp8e4nv::from_bits(0x7e" in src and "tc::fp8e4nv::from_bits(0x38" in src


def _kernel(body: str, signature: str, target: str = "cuda", arch: str | None = None):
    ns = {"tilecc": tilecc, "tl": tl}
    code = ("@tilecc.jit\n"
            "def k(X, Y):\n"
            "    r = tl.arange(0, 16)\n"
            "    x = tl.load(X + r)\n"
            f"    {body}\n")
    import linecache
    name = f"<fp8-test-{abs(hash(code))}>"
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)
    exec(compile(code, name, "exec"), ns)
    return ns["k"].source(signature, target=target, arch=arch)


@pytest.mark.parametrize("body,signature,message", [
    ("tl.store(Y + r, x + x)", "*fp8e4nv,*fp8e4nv",
     "operator add is not defined on {tl}.float8e4nv"),  # {tl}: the module dtype reprs name
    ("tl.store(Y + r, x * 2)", "*fp8e5,*fp8e5", "operator mul is not defined"),
    ("tl.store(Y + r, -x)", "*fp8e5,*fp8e5", "operator neg is not defined"),
    ("tl.store(Y + r, tl.exp(x))", "*fp8e5,*fp8e5", "tl.exp is not defined"),
    ("tl.store(Y + r, tl.maximum(x, x))", "*fp8e5,*fp8e5", "tl.maximum is not defined"),
    ("tl.store(Y + r, x + r)", "*fp8e5,*i32", "cannot combine"),
    ("tl.store(Y + r, x + 1)", "*fp8e5,*i32", "operator add is not defined"),
    ("tl.store(Y + r, x.to(tl.int32))", "*fp8e5,*i32", "only to and from floating types"),
    ("tl.store(Y + r, x.to(tl.float8e5))", "*i32,*fp8e5", "only to and from floating types"),
    ("tl.store(Y + r, x.to(tl.float8e5))", "*fp64,*fp8e5", "convert to tl.float32 first"),
])
def test_what_fp8_refuses_points_at_the_line(body, signature, message) -> None:
    with pytest.raises(CompilationError) as e:
        _kernel(body, signature)
    assert message.format(tl=D.REPR_MODULE[0]) in str(e.value) and ":5:" in str(e.value)


@pytest.mark.parametrize("name,target,arch,ok", [
    ("fp8e4nv", "cuda", "sm_80", False), ("fp8e5", "cuda", "sm_80", True),
    ("fp8e4nv", "cuda", "sm_89", True), ("fp8e4nv", "cuda", "sm_90", True),
    ("fp8e4b8", "cuda", "sm_90", False), ("fp8e5b16", "cuda", "sm_90", False),
    ("fp8e4b8", "hip", "gfx90a", True), ("fp8e5b16", "hip", "gfx90a", True),
    ("fp8e4nv", "hip", "gfx90a", True), ("fp8e4b15", "cuda", "sm_90", False),
    ("fp8e4b15", "cuda", "sm_80", False),
])
def test_formats_per_architecture_as_triton(name, target, arch, ok) -> None:
    body = "tl.store(Y + r, x.to(tl.float32))"
    if ok:
        assert f"tc::{name}" in _kernel(body, f"*{name},*fp32", target, arch)
        return
    with pytest.raises(CompilationError) as e:
        _kernel(body, f"*{name},*fp32", target, arch)
    if name == "fp8e4b15":
        assert "tl.float8e4b15 is not supported by tilecc" in str(e.value)
    else:
        assert f"type {name} is not supported on {arch}" in str(e.value)


def test_interpreter_takes_every_ml_dtypes_format_and_refuses_e4b15() -> None:
    x = np.zeros(16, np.uint8)
    y = np.zeros(16, np.float32)
    with pytest.raises(CompilationError, match="float8e4b15 is not supported by tilecc"):
        up_kernel.interpret[(1,)](x, y, 16, FMT=tl.float8e4b15, BLOCK=16)


@tilecc.jit
def _fp8_abs(X, Z, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(Z + offs, tl.abs(tl.load(X + offs)))


def test_interpreter_refuses_arrays_reinterpreted_as_e4b15_at_the_def() -> None:
    """Bytes given as tl.float8e4b15 (`reinterpret`), which NumPy cannot hold: the
    interpreter refuses them as a GPU compile does, at the kernel's line, instead of
    failing while it reads their memory."""
    from tilecc.runtime.tensor_wrappers import TensorWrapper  # what reinterpret() makes

    raw = np.zeros(16, np.int8)
    with pytest.raises(CompilationError, match="float8e4b15 is not supported by tilecc") as e:
        _fp8_abs.interpret[(1,)](TensorWrapper(raw, tl.float8e4b15),
                                 TensorWrapper(raw.copy(), tl.float8e4b15), BLOCK=16)
    assert e.value.loc.line == _fp8_abs.fn.__code__.co_firstlineno + 1  # the `def` line
    z = np.zeros(16, np.uint8)  # a format the interpreter has: |x| of each byte's value
    x = (np.arange(16) | (np.arange(16) % 2) << 7).astype(np.uint8)  # finite, both signs
    _fp8_abs.interpret[(1,)](TensorWrapper(x, tl.float8e5), TensorWrapper(z, tl.float8e5),
                             BLOCK=16)
    assert (z.view(ml_dtypes.float8_e5m2) == np.abs(x.view(ml_dtypes.float8_e5m2))).all()


_COMPILES = [("cuda", "sm_80", "fp8e5"), ("cuda", "sm_89", "fp8e4nv"),
             ("cuda", "sm_89", "fp8e5"), ("cuda", "sm_90", "fp8e4nv"),
             ("cuda", "sm_90", "fp8e5"), ("hip", "gfx90a", "fp8e4nv"),
             ("hip", "gfx90a", "fp8e5"), ("hip", "gfx90a", "fp8e4b8"),
             ("hip", "gfx90a", "fp8e5b16")]


@pytest.mark.parametrize("target,arch,name", _COMPILES, ids=[f"{a}-{n}" for _, a, n in _COMPILES])
def test_conversions_compile_cleanly(target, arch, name) -> None:
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    if not compile_cleanly_together("fp8", target, arch, lambda: [
            case for t, a, n in _COMPILES if (t, a) == (target, arch)
            for case in _conversion_cases(n)]):
        for kernel, sig, options in _conversion_cases(name):
            assert_clean_compile(kernel, sig, target, arch, **options)


def _conversion_cases(name: str) -> list:
    """(kernel, signature, options): conversions from and to the fp8 type `name`, a copy."""
    both = {"FMT": _fmt(name), "BLOCK": 1024}
    return [(up_kernel, "*u8:16,*fp32:16,i32", both), (up_kernel, "*u8:16,*fp16:16,i32", both),
            (up_kernel, "*u8:16,*bf16:16,i32", both), (down_kernel, "*fp32:16,*u8:16,i32", both),
            (down_kernel, "*bf16:16,*u8:16,i32", both),
            (copy_kernel, f"*{name}:16,*{name}:16,i32", {"BLOCK": 1024})]


def test_sm89_converts_with_the_hardware_and_vectorizes_loads() -> None:
    src = down_kernel.source("*fp32:16,*u8:16,i32", arch="sm_89", FMT=tl.float8e4nv, BLOCK=1024)
    assert "tc::cast<tc::fp8e4nv>" in src
    src = copy_kernel.source("*fp8e4nv:16,*fp8e4nv:16,i32", BLOCK=2048)
    assert "tc::load<tc::fp8e4nv, 16>" in src or "16 x fp8e4nv (16 B)" in src


@tilecc.jit
def _to_e4m3(x, y, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs, mask=offs < n).to(tl.float8e4nv), mask=offs < n)


@tilecc.jit
def _doubled(x, y, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs, mask=offs < n).to(tl.float32) * 2, mask=offs < n)


def test_torch_cpu_float8_and_bfloat16_tensors_on_the_interpreter():
    """CPU torch tensors of the types NumPy lacks are read and written in place (their
    bits viewed as ml_dtypes' types): a quantization kernel stores into a float8 tensor."""
    torch = pytest.importorskip("torch")
    x = torch.tensor([0.5, 1.0, -3.0, 500.0, 0.1])
    y = torch.zeros(5, dtype=torch.float8_e4m3fn)
    _to_e4m3.interpret[(1,)](x, y, 5, BLOCK=8)
    want = torch.clamp(x, -448, 448).to(torch.float8_e4m3fn)  # the downcast saturates
    assert torch.equal(y.view(torch.uint8), want.view(torch.uint8))
    out = torch.zeros(5)
    _doubled.interpret[(1,)](y, out, 5, BLOCK=8)
    assert torch.equal(out, want.float() * 2)
    _doubled.interpret[(1,)](x.to(torch.bfloat16), out, 5, BLOCK=8)
    assert torch.equal(out, x.to(torch.bfloat16).float() * 2)


@tilecc.jit
def fp8_abs_kernel(x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(y_ptr + offs, tl.abs(tl.load(x_ptr + offs)))


@pytest.mark.parametrize("fmt", ["fp8e5", "fp8e4nv"])
def test_abs_of_fp8_clears_the_sign_as_triton(fmt):
    """tl.abs on fp8 values is taken in fp8 (Triton's), every finite value exactly."""
    dt = {"fp8e5": ml_dtypes.float8_e5m2, "fp8e4nv": ml_dtypes.float8_e4m3fn}[fmt]
    x = np.arange(256, dtype=np.uint8).view(dt)
    x = x[np.isfinite(x.astype(np.float32))]
    x = np.concatenate([x[:32], x[-32:]])  # positive and negative bit patterns
    y = np.zeros_like(x)
    fp8_abs_kernel.interpret[(1,)](x, y, 64)
    np.testing.assert_array_equal(y.astype(np.float32), np.abs(x.astype(np.float32)))
