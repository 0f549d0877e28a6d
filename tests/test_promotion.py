"""Triton's type promotion and integer semantics, operator by operator (issue "Zero wrong
answers", items 2-4).

The rules are written out here a second time, in the test's own words, from Triton 3.6's
`semantic.py` / `core.py` / `standard.py`; tilecc's typing (`transpiler/semantic.py`,
`language/dtypes.py`) must give the same result type for every operator on every pair of
the 13 element types, and for blocks combined with Python literals. Values are checked
on the interpreter against NumPy evaluations written out under the same rules; GPU runs
compare the GPU with the interpreter.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tilecc
import tilecc.language as tl
from tilecc.language import dtypes as D
from tilecc.language.standard import _argmax_combine, _argmin_combine
from tilecc.transpiler import semantic as S
from tilecc.transpiler.ir import Type, Value
from tilecc.transpiler.semantic import Const

try:
    from conftest_compilers import require_cuda_compiler, require_hip_compiler
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import require_cuda_compiler, require_hip_compiler

SIGNED = (D.int8, D.int16, D.int32, D.int64)
UNSIGNED = (D.int1, D.uint8, D.uint16, D.uint32, D.uint64)  # Triton counts int1 unsigned
INTS = SIGNED + UNSIGNED
FLOATS = (D.float16, D.bfloat16, D.float32, D.float64)
ALL = INTS + FLOATS
LITERALS = {"3": 3, "-3": -3, "300": 300, "3e9": 3_000_000_000, "2**40": 2**40,
            "2**63+5": 2**63 + 5, "2.0": 2.0, "1e-40": 1e-40, "1e300": 1e300, "True": True}


# --- the rules, in the test's words ------------------------------------------------------

def literal_type(v) -> D.dtype:
    """bool is int1; an int takes the first of int32, uint32, int64, uint64 holding it; a
    float is fp32 unless fp32 would overflow it or make it subnormal (0, inf, NaN: fp32)."""
    if isinstance(v, bool):
        return D.int1
    if isinstance(v, int):
        return next(d for d in (D.int32, D.uint32, D.int64, D.uint64) if d.min <= v <= d.max)
    small, big = 2.0 ** -126, 3.4028234663852886e38
    return D.float32 if v == 0 or v != v or abs(v) == float("inf") or small <= abs(v) <= big \
        else D.float64


def category(d: D.dtype) -> int:
    return 0 if d == D.int1 else 2 if d in FLOATS else 1


def join_ints(a: D.dtype, b: D.dtype) -> D.dtype:
    """C's usual conversions: equal signedness → the wider; else the unsigned one when it
    is at least as wide as the signed one, the signed one otherwise."""
    if (a in SIGNED) == (b in SIGNED):
        return a if a.bits > b.bits else b
    u, s = (a, b) if a in UNSIGNED else (b, a)
    return u if u.bits >= s.bits else s


class Rejected(Exception):
    pass


def common_type(a, a_lit, b, b_lit, div_or_mod=False) -> D.dtype:
    if a_lit != b_lit:  # a literal of a lower or equal category adopts the block's type
        lit, blk = (a, b) if a_lit else (b, a)
        if category(lit) <= category(blk):
            return D.float32 if div_or_mod and blk in (D.float16, D.bfloat16) else blk
    for wide in (D.float64, D.float32):
        if wide in (a, b):
            return wide
    if D.float16 in (a, b):
        return D.float32 if div_or_mod else D.float16
    if D.bfloat16 in (a, b):
        return D.bfloat16 if a == b and not div_or_mod else D.float32
    if div_or_mod and (a in SIGNED) != (b in SIGNED):
        raise Rejected("/, // and % refuse mixed signedness")
    return join_ints(a, b)


def check_literals(t: D.dtype, lits) -> None:
    for v in lits:
        if t in INTS and not t.min <= v <= t.max:
            raise Rejected(f"{v} does not fit {t}")


def expected(op: str, x, y) -> str:
    """Triton's result type of `x op y` (x, y: a dtype for a block, or a Python literal),
    with `:ashr` / `:lshr` for `>>`; "error" where Triton refuses it."""
    lx, ly = not isinstance(x, D.dtype), not isinstance(y, D.dtype)
    tx = literal_type(x) if lx else x
    ty = literal_type(y) if ly else y
    lits = [v for v, lit in ((x, lx), (y, ly)) if lit]
    try:
        if op in ("lt", "eq", "minimum", "maximum"):  # literals become values first
            if op in ("minimum", "maximum"):
                tx, ty = (D.float32 if t == D.bfloat16 else t for t in (tx, ty))
            t = common_type(tx, False, ty, False)
            return "i1" if op in ("lt", "eq") else t.short
        div = op in ("div", "floordiv", "rem")
        t = common_type(tx, lx, ty, ly, div)
        if t in D.ALL_DTYPES and t.kind == "uint" and any(v < 0 for v in lits):
            raise Rejected("negative literal with an unsigned type")
        check_literals(t, lits)
        if op == "div":
            return (D.float32 if t in INTS else t).short
        if op in ("floordiv", "and", "or", "xor", "shl", "shr") and t in FLOATS:
            raise Rejected(f"{op} needs integers")
        if op == "shr":  # the block operand's own signedness picks the shift
            return t.short + (":ashr" if (ty if lx else tx) in SIGNED else ":lshr")
        return t.short
    except Rejected:
        return "error"


# --- tilecc's typing, through transpiler/semantic.py ----------------------------------------

class _Recorder:
    fn = None

    def emit(self, kind, operands, type, **attrs):
        _Recorder.fn = attrs.get("fn")
        return Value(type)


_B = _Recorder()
_COND = Value(Type(D.int1, (4,)))
OPS = {
    **{op: (lambda op: lambda x, y: S.binary(_B, op, x, y))(op)
       for op in ("add", "sub", "mul", "div", "floordiv", "rem", "and", "or", "xor", "shl",
                  "shr")},
    "lt": lambda x, y: S.compare(_B, "lt", x, y),
    "eq": lambda x, y: S.compare(_B, "eq", x, y),
    "minimum": lambda x, y: S.min_max(_B, "min", x, y),
    "maximum": lambda x, y: S.min_max(_B, "max", x, y),
    "where": lambda x, y: S.where(_B, _COND, x, y),
}


def tilecc_type(op: str, x, y) -> str:
    def operand(v):
        return Value(Type(v, (4,))) if isinstance(v, D.dtype) else Const(v)
    try:
        r = OPS[op](operand(x), operand(y))
    except (TypeError, ValueError, OverflowError):
        return "error"
    kind = _Recorder.fn if _Recorder.fn in ("ashr", "lshr") else None
    return r.dtype.short + (f":{kind}" if kind else "")


def _operands():
    for a in ALL:
        for b in ALL:
            yield pytest.param(a, b, id=f"{a.short}-{b.short}")
        for name, v in LITERALS.items():
            yield pytest.param(a, v, id=f"{a.short}-lit{name}")
            yield pytest.param(v, a, id=f"lit{name}-{a.short}")


@pytest.mark.parametrize("op", list(OPS))
def test_result_type_matches_triton(op) -> None:
    """All 13 x 13 pairs of blocks and all 13 x 10 x 2 block-literal pairs, per operator."""
    wrong = []
    for p in _operands():
        x, y = p.values
        want, got = expected(op, x, y), tilecc_type(op, x, y)
        if want != got:
            wrong.append(f"{p.id}: Triton {want}, tilecc {got}")
    assert not wrong, f"{len(wrong)} result types differ from Triton:\n" + "\n".join(wrong[:40])


@pytest.mark.parametrize("x,y,want", [
    (D.int8, D.uint8, "u8:ashr"), (D.int8, D.uint32, "u32:ashr"),
    (D.int32, D.uint64, "u64:ashr"), (D.uint8, D.int8, "u8:lshr"),
    (D.uint8, D.int32, "i32:lshr"), (D.int1, D.int32, "i32:lshr"), (-8, D.int32, "i32:ashr"),
    (200, D.uint8, "u8:lshr")])
def test_shift_kind_is_the_block_operands(x, y, want) -> None:
    assert tilecc_type("shr", x, y) == want


# --- values on the interpreter, against NumPy under Triton's rules --------------------------

def np_type(d: D.dtype) -> np.dtype:
    return d.to_numpy()


def bits_of(a: np.ndarray, d: D.dtype) -> np.ndarray:
    """The d-typed values' bit patterns as Python ints (unsigned)."""
    return [int(v) & ((1 << d.bits) - 1) for v in np.asarray(a, dtype=np_type(d)).ravel()]


def from_bits(bits, d: D.dtype) -> np.ndarray:
    out = []
    for b in bits:
        b &= (1 << d.bits) - 1
        if d in SIGNED and b >> (d.bits - 1):
            b -= 1 << d.bits
        out.append(bool(b) if d == D.int1 else b)
    return np.array(out, dtype=np_type(d))


def ref_shift(kind: str, x: np.ndarray, y: np.ndarray, t: D.dtype) -> np.ndarray:
    """Shifts on t's bits: the amount reads as unsigned; amounts of t's width or more give
    0 (shl, lshr) or the sign bit everywhere (ashr)."""
    xs, ns, out = bits_of(x.astype(np_type(t)), t), bits_of(y.astype(np_type(t)), t), []
    for v, n in zip(xs, ns):
        sign = v >> (t.bits - 1)
        if kind == "shl":
            out.append(v << n if n < t.bits else 0)
        elif kind == "lshr":
            out.append(v >> n if n < t.bits else 0)
        else:
            k = min(n, t.bits - 1)
            out.append((v >> k) | ((((1 << k) - 1) << (t.bits - k)) if sign else 0))
    return from_bits(out, t)


@tilecc.jit
def shift_kernel(x_ptr, y_ptr, shl_ptr, shr_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    tl.store(shl_ptr + offs, x << y, mask=m)
    tl.store(shr_ptr + offs, x >> y, mask=m)


NON_BOOL_INTS = tuple(d for d in INTS if d != D.int1)


def _random_ints(rng, d: D.dtype, n: int) -> np.ndarray:
    if d == D.int1:
        return rng.integers(0, 2, n).astype(bool)
    return rng.integers(d.min, d.max, n, dtype=np_type(d), endpoint=True)


def _amounts(rng, d: D.dtype, n: int) -> np.ndarray:
    """Shift amounts: mostly in range, some at or past the widest width, some negative."""
    if d == D.int1:
        return rng.integers(0, 2, n).astype(bool)
    hi = min(d.max, 70)
    lo = max(d.min, -3)
    return rng.integers(lo, hi, n, endpoint=True).astype(np_type(d))


def run_shifts(run, x: np.ndarray, y: np.ndarray, t: D.dtype, block: int = 64):
    n = x.size
    shl, shr = (np.zeros(n, np_type(t)) for _ in range(2))
    run[(tilecc.cdiv(n, block),)](x, y, shl, shr, n, BLOCK=block)
    return shl, shr


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(INTS), st.sampled_from(INTS), st.integers(0, 2**32 - 1))
def test_shift_values_match_triton(dx, dy, seed) -> None:
    rng = np.random.default_rng(seed)
    x, y = _random_ints(rng, dx, 50), _amounts(rng, dy, 50)
    t = D.integer_promote(dx, dy)
    shl, shr = run_shifts(shift_kernel.interpret, x, y, t)
    np.testing.assert_array_equal(shl, ref_shift("shl", x, y, t))
    kind = "ashr" if dx in SIGNED else "lshr"
    np.testing.assert_array_equal(shr, ref_shift(kind, x, y, t), err_msg=f"{dx} >> {dy}: {kind}")


def test_signed_shift_of_unsigned_bits() -> None:
    """int8 >> uint8 is an arithmetic shift of uint8 bits (C would shift the int value)."""
    x = np.array([-128, -1, 64, -2], np.int8)
    y = np.array([1, 3, 1, 200], np.uint8)
    shl, shr = run_shifts(shift_kernel.interpret, x, y, D.uint8)
    np.testing.assert_array_equal(shr, np.array([0xC0, 0xFF, 0x20, 0xFF], np.uint8))
    np.testing.assert_array_equal(shl, np.array([0x00, 0xF8, 0x80, 0x00], np.uint8))


@tilecc.jit
def bool_arith_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    tl.store(out_ptr + offs * 4, x + y, mask=m)
    tl.store(out_ptr + offs * 4 + 1, x - y, mask=m)
    tl.store(out_ptr + offs * 4 + 2, x * y, mask=m)
    tl.store(out_ptr + offs * 4 + 3, ~x, mask=m)


def bool_arith_ref(x, y):
    return np.stack([x ^ y, x ^ y, x & y, ~x], axis=1).reshape(-1)  # 1-bit arithmetic


def test_int1_arithmetic_wraps() -> None:
    x = np.array([0, 0, 1, 1], bool)
    y = np.array([0, 1, 0, 1], bool)
    out = np.zeros(16, bool)
    bool_arith_kernel.interpret[(1,)](x, y, out, 4, BLOCK=4)
    np.testing.assert_array_equal(out, bool_arith_ref(x, y))


@tilecc.jit
def compare_literal_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(out_ptr + offs * 2, x < 0.1, mask=m)
    tl.store(out_ptr + offs * 2 + 1, x == 300, mask=m)


def test_comparison_with_literal_promotes_the_literal() -> None:
    """`x_fp16 < 0.1` compares in fp32 (0.1 is no fp16 number); `x_int8 == 300` in int32."""
    x = np.array([0.1, 0.0999, 0.1001], np.float16)  # 0.1 rounds to 0.0999755859375
    out = np.zeros(6, bool)
    compare_literal_kernel.interpret[(1,)](x, out, 3, BLOCK=4)
    np.testing.assert_array_equal(out[0::2], x.astype(np.float32) < np.float32(0.1))
    xi = np.array([44, -1, 0], np.int8)  # 300 wraps to 44 in int8: still not equal
    out = np.zeros(6, bool)
    compare_literal_kernel.interpret[(1,)](xi, out, 3, BLOCK=4)
    np.testing.assert_array_equal(out[1::2], [False, False, False])


@tilecc.jit
def int_ops_kernel(x_ptr, y_ptr, out_ptr, cmp_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    tl.store(out_ptr + offs * 6, x + y, mask=m)
    tl.store(out_ptr + offs * 6 + 1, x - y, mask=m)
    tl.store(out_ptr + offs * 6 + 2, x * y, mask=m)
    tl.store(out_ptr + offs * 6 + 3, x & y, mask=m)
    tl.store(out_ptr + offs * 6 + 4, x | y, mask=m)
    tl.store(out_ptr + offs * 6 + 5, x ^ y, mask=m)
    tl.store(cmp_ptr + offs * 2, x < y, mask=m)
    tl.store(cmp_ptr + offs * 2 + 1, x == y, mask=m)


def int_ops_ref(x: np.ndarray, y: np.ndarray, t: D.dtype):
    """Both converted to t (sign-extending or truncating bits), then t's wrapping
    arithmetic; t's own order for <, so int8 -1 < uint8 5 is false (255 > 5)."""
    a, b = x.astype(np_type(t)), y.astype(np_type(t))
    if t == D.int1:
        ops = [a ^ b, a ^ b, a & b, a & b, a | b, a ^ b]
    else:
        ops = [a + b, a - b, a * b, a & b, a | b, a ^ b]
    return np.stack(ops, axis=1).reshape(-1), np.stack([a < b, a == b], axis=1).reshape(-1)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(INTS), st.sampled_from(INTS), st.integers(0, 2**32 - 1))
def test_integer_ops_of_mixed_types_match_triton(dx, dy, seed) -> None:
    rng = np.random.default_rng(seed)
    x, y = _random_ints(rng, dx, 40), _random_ints(rng, dy, 40)
    t = join_ints(dx, dy)
    out, cmp = np.zeros(240, np_type(t)), np.zeros(80, bool)
    with np.errstate(over="ignore"):
        int_ops_kernel.interpret[(1,)](x, y, out, cmp, 40, BLOCK=64)
        want_out, want_cmp = int_ops_ref(x, y, t)
    np.testing.assert_array_equal(out, want_out, err_msg=f"{dx} op {dy} in {t}")
    np.testing.assert_array_equal(cmp, want_cmp, err_msg=f"{dx} cmp {dy} in {t}")


# --- reductions ----------------------------------------------------------------------------

@tilecc.jit
def sum_dtype_kernel(x_ptr, out_ptr, DT: tl.constexpr):
    offs = tl.arange(0, 32)[:, None] * 32 + tl.arange(0, 32)[None, :]
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr, tl.sum(x, dtype=DT).to(tl.int64))


@pytest.mark.parametrize("dt,fill,want", [
    (tl.int1, 1, 0),            # 1024 ones in 1 bit: 1024 % 2
    (tl.int1, 3, 0),            # 3 converts to int1 as `!= 0`: 1
    (tl.int8, 1, 0),            # 1024 wraps to 0 in int8
    (tl.int8, 3, 3072 % 256),
    (tl.uint8, 1, 0),
    (tl.int16, 64, 0),          # 65536 wraps to 0 in int16
    (tl.int32, 3, 3072),
])
def test_sum_with_dtype_wraps(dt, fill, want) -> None:
    x = np.full(1024, fill, np.int32)
    out = np.zeros(1, np.int64)
    sum_dtype_kernel.interpret[(1,)](x, out, dt)
    assert out[0] == want


@tilecc.jit
def accumulation_kernel(x_ptr, SUM: tl.constexpr, MAX: tl.constexpr, CUMSUM: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 32)[:, None] * 32 + tl.arange(0, 32)[None, :])
    tl.static_assert(tl.sum(x).dtype == SUM)
    tl.static_assert(tl.max(x, axis=1).dtype == MAX)
    tl.static_assert(tl.cumsum(x, 1).dtype == CUMSUM)
    tl.static_assert(tl.max(x, axis=1, return_indices=True)[0].dtype ==
                     (tl.float32 if x.dtype == tl.bfloat16 else x.dtype))


@pytest.mark.parametrize("in_dt,sum_dt,max_dt,cumsum_dt", [
    (tl.int1, tl.uint32, tl.int32, tl.uint32), (tl.int8, tl.int32, tl.int32, tl.int32),
    (tl.uint8, tl.uint32, tl.int32, tl.uint32), (tl.uint16, tl.uint32, tl.int32, tl.uint32),
    (tl.int64, tl.int64, tl.int64, tl.int64), (tl.uint32, tl.uint32, tl.uint32, tl.uint32),
    (tl.float16, tl.float16, tl.float32, tl.float16),
    (tl.bfloat16, tl.bfloat16, tl.float32, tl.float32),
    (tl.float32, tl.float32, tl.float32, tl.float32)])
def test_default_accumulation_types(in_dt, sum_dt, max_dt, cumsum_dt) -> None:
    """Triton 3.6: tl.sum adds integers narrower than 32 bits in int32 / uint32 after
    their signedness (int1 is unsigned) and floats in their own type (bfloat16 too);
    tl.max without indices widens everything below 32 bits to int32 / fp32; tl.cumsum
    is tl.sum's rule after bfloat16 → fp32."""
    x = np.ones(1024, in_dt.to_numpy())
    accumulation_kernel.interpret[(1,)](x, sum_dt, max_dt, cumsum_dt)


# --- argmax / argmin with NaN ----------------------------------------------------------------

@tilecc.jit
def arg_kernel(x_ptr, out_ptr, N: tl.constexpr, TIE_LEFT: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * N + tl.arange(0, N))
    tl.store(out_ptr + row * 4, tl.argmax(x, 0, tie_break_left=TIE_LEFT))
    tl.store(out_ptr + row * 4 + 1, tl.argmin(x, 0, tie_break_left=TIE_LEFT))
    v, i = tl.max(x, 0, return_indices=True)
    tl.store(out_ptr + row * 4 + 2, i)
    w, j = tl.min(x, 0, return_indices=True)
    tl.store(out_ptr + row * 4 + 3, j)


def nan_rows(rng, rows: int, n: int, dtype=np.float32) -> np.ndarray:
    x = rng.integers(-4, 5, (rows, n)).astype(dtype)  # many ties
    for r in range(rows):
        k = r % 4  # rows with 0..3 NaNs
        x[r, rng.choice(n, k, replace=False)] = np.nan
    return x


def arg_reference(x: np.ndarray) -> np.ndarray:
    """NumPy's rule (Triton's interpreter uses it): the first NaN wins both argmax and
    argmin; otherwise the first index of the extreme value."""
    a, b = np.argmax(x, axis=1), np.argmin(x, axis=1)
    return np.stack([a, b, a, b], axis=1).astype(np.int32)


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(0, 2**32 - 1), st.sampled_from([np.float32, np.float16, np.float64]))
def test_argmax_argmin_nan_on_interpreter(seed, dtype) -> None:
    rng = np.random.default_rng(seed)
    x = nan_rows(rng, 8, 64, dtype)
    out = np.zeros((8, 4), np.int32)
    arg_kernel.interpret[(8,)](x, out, 64, True)
    np.testing.assert_array_equal(out, arg_reference(x))


@tilecc.jit
def _argmax_any_order(a, ai, b, bi):
    return _argmax_combine(a, ai, b, bi, True)


@tilecc.jit
def _argmin_any_order(a, ai, b, bi):
    return _argmin_combine(a, ai, b, bi, True)


@tilecc.jit
def arg_reversed_kernel(x_ptr, out_ptr, N: tl.constexpr):
    # the row read back to front with each element's own index: the interpreter's tree
    # then puts the higher indices on the left of every combine
    row = tl.program_id(0)
    i = N - 1 - tl.arange(0, N)
    x = tl.load(x_ptr + row * N + i)
    tl.store(out_ptr + row * 4, tl.reduce((x, i), 0, _argmax_any_order)[1])
    tl.store(out_ptr + row * 4 + 1, tl.reduce((x, i), 0, _argmin_any_order)[1])
    tl.store(out_ptr + row * 4 + 2, tl.argmax(x, 0))  # the combine for elements in order
    tl.store(out_ptr + row * 4 + 3, tl.argmin(x, 0))


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(0, 2**32 - 1), st.sampled_from([np.float32, np.float16]))
def test_argmax_combine_in_either_order(seed, dtype) -> None:
    """tl.argmax's general combine (the GPU's shuffles and warps, whose operands come in
    either order) with the higher indices on the left gives NumPy's answer; tl.argmax,
    whose reduction also carries the combine for elements in order (a thread's own fold,
    the interpreter's tree), gives it on the reversed block, its positions no longer
    its indices' order."""
    rng = np.random.default_rng(seed)
    x = nan_rows(rng, 8, 64, dtype)
    out = np.zeros((8, 4), np.int32)
    arg_reversed_kernel.interpret[(8,)](x, out, 64)
    want = arg_reference(x)
    np.testing.assert_array_equal(out[:, :2], want[:, :2])
    np.testing.assert_array_equal(out[:, 2:], arg_reference(x[:, ::-1])[:, :2])


def test_a_threads_own_elements_fold_with_two_comparisons() -> None:
    """A thread folds its own elements of an argmax in order, with the combine for
    elements in order (a tie or a NaN on the left keeps it: two comparisons), and only
    the shuffles take the general combine (four: a router's top-2 ran at 0.85x Triton's
    speed with it everywhere)."""
    src = arg_kernel.source("*fp32:16,*i32:16", N=1024, TIE_LEFT=True, num_warps=4)
    assert src.count("auto combine_in_order = ") == 4  # argmax, argmin, max and min
    assert "const bool take_first = b0 <= a0;" in src
    assert src.count("combine_in_order(acc0, acc1,") == 4


def test_argmax_nan_regression() -> None:
    """[5, NaN, 1]: a NaN losing every comparison made a sequential fold answer 2 (the 1)."""
    x = np.array([[5, np.nan, 1, 0]], np.float32)
    out = np.zeros((1, 4), np.int32)
    arg_kernel.interpret[(1,)](x, out, 4, True)
    np.testing.assert_array_equal(out, [[1, 1, 1, 1]])


# --- the generated code compiles ------------------------------------------------------------

COMPILE_CASES = [
    (shift_kernel, "*i8,*u8,*u8,*u8,i32,64"),
    (shift_kernel, "*u8,*i8,*u8,*u8,i32,64"),
    (shift_kernel, "*i32,*u64,*u64,*u64,i32,64"),
    (shift_kernel, "*i64,*i64,*i64,*i64,i32,64"),
    (shift_kernel, "*i1,*i1,*i1,*i1,i32,64"),
    (shift_kernel, "*i1,*i32,*i32,*i32,i32,64"),
    (bool_arith_kernel, "*i1,*i1,*i1,i32,64"),
    (int_ops_kernel, "*u16,*u16,*u16,*i1,i32,64"),
    (int_ops_kernel, "*i8,*u8,*u8,*i1,i32,64"),
    (int_ops_kernel, "*i32,*u32,*u32,*i1,i32,64"),
    (int_ops_kernel, "*i1,*i1,*i1,*i1,i32,64"),
    (compare_literal_kernel, "*fp16,*i1,i32,64"),
    (compare_literal_kernel, "*i8,*i1,i32,64"),
    (sum_dtype_kernel, "*i32,*i64,int1"),
    (sum_dtype_kernel, "*i32,*i64,int8"),
    (arg_kernel, "*fp32,*i32,64,True"),
    (arg_kernel, "*fp16,*i32,64,False"),
    (arg_kernel, "*i8,*i32,64,True"),
]


@pytest.mark.parametrize("target,arch", [("cuda", "sm_80"), ("hip", "gfx90a")])
@pytest.mark.parametrize("kernel,signature", COMPILE_CASES,
                         ids=[f"{k.__name__}[{s}]" for k, s in COMPILE_CASES])
def test_promotion_kernels_compile(kernel, signature, target, arch) -> None:
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    binary = kernel.compile(signature, target=target, arch=arch)
    log = binary.log or ""
    assert "warning" not in log.lower(), f"{log}\n{kernel.source(signature, target=target)}"


@pytest.mark.parametrize("x,y,z,want", [
    (D.float16, 2.0, D.float16, D.float32),    # the literal is an fp32 value here
    (D.float16, D.float16, D.float16, D.float16),
    (D.bfloat16, D.float16, D.float16, D.float16),  # fp16 wins over bf16
    (D.float64, 1.5, D.float32, D.float64)])
def test_fma_promotes_literals_as_values(x, y, z, want) -> None:
    def operand(v):
        return Value(Type(v, (4,))) if isinstance(v, D.dtype) else Const(v)
    assert S.fma(_B, operand(x), operand(y), operand(z)).dtype == want


def test_literal_beside_wider_float_is_its_fp32_value() -> None:
    """Triton makes 0.1 an fp32 value before comparing it with fp64: 0.1f, widened."""
    captured = []

    class Rec(_Recorder):
        def emit(self, kind, operands, type, **attrs):
            if kind == "const":
                captured.append(attrs["value"])
            return Value(type)

    S.compare(Rec(), "lt", Value(Type(D.float64, (4,))), Const(0.1))
    S.compare(Rec(), "lt", Value(Type(D.uint32, (4,))), Const(-1))
    assert captured == [float(np.float32(0.1)), 2**32 - 1]


def test_device_shift_helpers_agree_with_the_interpreter(tmp_path) -> None:
    """tilecc.h's tc::shl / ashr / lshr, compiled for the host (their code is plain C++),
    against the interpreter's shifts: every type, amounts in range, at the width, past it
    and negative. The GPU runs in test_gpu.py check the same on the device."""
    import shutil
    import subprocess
    from pathlib import Path

    from tilecc.interpreter.evaluate import shift

    cxx = shutil.which("g++") or shutil.which("clang++")
    if cxx is None:
        pytest.skip("no host C++ compiler")
    header = (Path(tilecc.__file__).parent / "templates/include/tilecc.h").read_text()
    helpers = header[header.index("// ---- shifts"):header.index("// ---- vectors")]
    ctypes = {D.int1: "bool", D.int8: "signed char", D.int16: "short", D.int32: "int",
              D.int64: "long long", D.uint8: "unsigned char", D.uint16: "unsigned short",
              D.uint32: "unsigned int", D.uint64: "unsigned long long"}
    rng = np.random.default_rng(5)
    cases, lines = [], []
    for t, c in ctypes.items():
        x = _random_ints(rng, t, 12)
        n = _amounts(rng, t, 12)
        if t != D.int1:
            n[:4] = np.array([t.bits - 1, t.bits, t.bits + 1, 0]).astype(np_type(t))
        for fn in ("shl", "ashr", "lshr"):
            cases.append((t, fn, x, n))
            for a, b in zip(x.tolist(), n.tolist()):
                lines.append(f'  std::printf("%llu\\n", (unsigned long long)tc::{fn}<{c}>'
                             f'(({c}){int(a) % 2**64}ull, ({c}){int(b) % 2**64}ull));')
    src = tmp_path / "shifts.cpp"
    src.write_text("#include <cstdio>\n#define TC_DEVICE inline\nnamespace tc {\n"
                   "template <typename A, typename B> struct is_same { static constexpr bool "
                   "value = false; };\ntemplate <typename A> struct is_same<A, A> { static "
                   "constexpr bool value = true; };\n" + helpers + "}\nint main() {\n" +
                   "\n".join(lines) + "\n}\n")
    exe = tmp_path / "shifts"
    subprocess.run([cxx, "-std=c++17", "-O2", "-o", str(exe), str(src)], check=True)
    got = [int(v) for v in subprocess.run([str(exe)], check=True, capture_output=True,
                                          text=True).stdout.split()]
    want = []
    for t, fn, x, n in cases:
        want += [int(v) % 2**64 for v in shift(fn, x, n, t).tolist()]
    bad = [(c[0], c[1]) for c, g, w in zip(
        [(t, fn) for t, fn, x, _ in cases for _ in x], got, want) if g != w]
    assert got == want, f"device helpers differ from the interpreter: {bad[:10]}"
