"""Reference arithmetic for the interpreter's libdevice: exact rounding in a chosen
direction, special functions, and the integer intrinsics, on NumPy arrays.

Directed roundings (`_rz`, `_rd`, `_ru`) are computed exactly: each element's true result
is a `Fraction` (or, for square roots, bracketed exactly with integer square roots) and
rounded to the target format in the asked direction, so that the interpreter agrees bit
for bit with IEEE hardware.  SciPy is imported only by the functions that need it.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable

import numpy as np

# (mantissa bits with the implicit one, lowest normal exponent, highest exponent)
_FORMATS = {"fp32": (24, -126, 127), "fp64": (53, -1022, 1023)}
_NP = {"fp32": np.float32, "fp64": np.float64}


def _floor_log2(q: Fraction) -> int:
    e = q.numerator.bit_length() - q.denominator.bit_length()
    # 2**e <= q < 2**(e+1) after at most one step
    if (Fraction(2) ** e) > q:
        e -= 1
    return e


def _round_scaled(sign: int, n: int, inexact: bool, half: int, qe: int, fmt: str,
                  mode: str) -> float:
    """The value sign * (n + r) * 2**qe rounded, where n is the integer part, r in [0, 1)
    is nonzero iff `inexact`, and `half` compares r with 1/2 (-1, 0, +1)."""
    p, _, emax = _FORMATS[fmt]
    away = {"rz": False, "rd": sign < 0, "ru": sign > 0}.get(mode)
    if mode == "rn":
        up = half > 0 or (half == 0 and inexact and n % 2 == 1)
    else:
        up = inexact and away
    n += int(up)
    largest = (2 ** p - 1) * Fraction(2) ** (emax - p + 1)
    value = n * Fraction(2) ** qe
    if value > largest:
        # overflow: to infinity when rounding away from zero (or to nearest), else the
        # largest finite number
        to_inf = mode == "rn" or away
        return sign * (math.inf if to_inf else float(largest))
    return sign * float(value)


def round_fraction(q: Fraction, fmt: str, mode: str) -> float:
    """The exact rational q rounded to fp32 / fp64 toward `mode` (rn, rz, rd, ru)."""
    if q == 0:
        return 0.0
    p, emin, _ = _FORMATS[fmt]
    sign, a = (1, q) if q > 0 else (-1, -q)
    qe = max(_floor_log2(a), emin) - (p - 1)
    scaled = a / Fraction(2) ** qe
    n = scaled.numerator // scaled.denominator
    r = scaled - n
    half = (r > Fraction(1, 2)) - (r < Fraction(1, 2))
    return _round_scaled(sign, n, r != 0, half, qe, fmt, mode)


def round_sqrt(q: Fraction, fmt: str, mode: str) -> float:
    """sqrt(q) for a rational q > 0, rounded toward `mode` exactly."""
    p, emin, _ = _FORMATS[fmt]
    qe = max(_floor_log2(q) // 2, emin) - (p - 1)
    scaled = q / Fraction(4) ** qe  # sqrt(q) / 2**qe = sqrt(scaled)
    n = math.isqrt(scaled.numerator // scaled.denominator)
    inexact = n * n != scaled
    mid = (n + Fraction(1, 2)) ** 2
    half = (scaled > mid) - (scaled < mid)
    return _round_scaled(1, n, inexact, half, qe, fmt, mode)


def _elementwise(fn: Callable, out: str, *arrays) -> np.ndarray:
    arrays = np.broadcast_arrays(*(np.asarray(a) for a in arrays))
    flat = [a.ravel() for a in arrays]
    res = np.array([fn(*vals) for vals in zip(*flat)], dtype=out).reshape(arrays[0].shape)
    return res


def _signed_zero(mode: str) -> float:
    return -0.0 if mode == "rd" else 0.0


def directed(op: str, fmt: str, mode: str) -> Callable:
    """add / sub / mul / div / fma / rcp / sqrt / rsqrt of fp32 or fp64, rounded once
    toward `mode`, as __fadd_rz & co. compute them."""
    t = _NP[fmt]

    def one(*xs):
        xs = [float(x) for x in xs]
        with np.errstate(all="ignore"):
            nearest = float(_nearest(op, [t(x) for x in xs]))
        if not all(math.isfinite(x) for x in xs) or math.isnan(nearest):
            return nearest  # inf and NaN operands: exact in every mode
        fr = [Fraction(x) for x in xs]
        if op in ("sqrt", "rsqrt"):
            x = fr[0]
            if x == 0:
                return nearest  # sqrt(±0) = ±0, rsqrt(±0) = ±inf
            if x < 0:
                return math.nan
            return round_sqrt(x if op == "sqrt" else 1 / x, fmt, mode)
        if op == "rcp":
            return nearest if fr[0] == 0 else round_fraction(1 / fr[0], fmt, mode)
        if op == "div":
            if fr[1] == 0:
                return nearest
            exact = fr[0] / fr[1]
        elif op == "add":
            exact = fr[0] + fr[1]
        elif op == "sub":
            exact = fr[0] - fr[1]
        elif op == "mul":
            exact = fr[0] * fr[1]
        else:  # fma
            exact = fr[0] * fr[1] + fr[2]
        if exact == 0:
            if op in ("mul", "div") or nearest != 0 or math.copysign(1, nearest) < 0 and \
                    _exact_zero_of_zeros(op, xs):
                return nearest  # the sign of a product, or of a sum of like-signed zeros
            return _signed_zero(mode)
        return round_fraction(exact, fmt, mode)

    if mode == "rn" and op in ("add", "sub", "mul", "div", "rcp", "sqrt"):
        # IEEE's own operations, which NumPy performs correctly rounded: no rational detour
        def nearest(*arrays):
            with np.errstate(all="ignore"):
                return np.asarray(_nearest(op, [np.asarray(a, dtype=t) for a in arrays]),
                                  dtype=t)
        return nearest
    return lambda *arrays: _elementwise(one, np.dtype(t), *arrays)


def _exact_zero_of_zeros(op: str, xs: list[float]) -> bool:
    """The exact zero sum is one of zeros of one sign (-0 + -0): its sign is theirs."""
    if op == "add":
        terms = xs
    elif op == "sub":
        terms = [xs[0], -xs[1]]
    else:  # fma: x*y + z
        terms = [xs[0] * xs[1], xs[2]]
    return all(v == 0 for v in terms) and len({math.copysign(1, v) for v in terms}) == 1


def _nearest(op: str, xs):
    if op == "add":
        return xs[0] + xs[1]
    if op == "sub":
        return xs[0] - xs[1]
    if op == "mul":
        return xs[0] * xs[1]
    if op == "div":
        return xs[0] / xs[1]
    if op == "fma":
        return round_fraction(Fraction(float(xs[0])) * Fraction(float(xs[1]))
                              + Fraction(float(xs[2])), "fp64", "rn") \
            if all(math.isfinite(float(x)) for x in xs) else xs[0] * xs[1] + xs[2]
    if op == "rcp":
        return xs[0].dtype.type(1) / xs[0]
    if op == "sqrt":
        return np.sqrt(xs[0])
    return xs[0].dtype.type(1) / np.sqrt(xs[0])  # rsqrt: only its inf / nan / zero cases


def convert(src: str, dst: str, mode: str) -> Callable:
    """A conversion rounded toward `mode`: int (i32/u32/i64/u64) or fp64 → fp32 / fp64."""
    def one(x):
        if isinstance(x, float) and (not math.isfinite(x) or x == 0):
            return x  # inf, NaN and signed zeros convert as they are
        return round_fraction(Fraction(x if isinstance(x, float) else int(x)), dst, mode)

    def run(a):
        values = np.asarray(a)
        py = values.astype(object) if values.dtype.kind in "iu" else values.astype(np.float64)
        return _elementwise(lambda v: one(float(v) if isinstance(v, (float, np.floating))
                                          else int(v)), np.dtype(_NP[dst]), py)
    return run


_INT_ROUND = {"rn": np.rint, "rz": np.trunc, "rd": np.floor, "ru": np.ceil}


def to_int(mode: str, bits: int, unsigned: bool, out: np.dtype, nan: int = 0) -> Callable:
    """Float → integer rounded toward `mode`, saturating to the range as the GPUs'
    conversions do, NaN → `nan` (`out`'s bits: NVIDIA's libdevice gives 0 from fp32 to
    32 bits, the sign bit alone from fp64 or to 64 bits); an unsigned result is returned
    as `out`'s bits."""
    lo, hi = (0, 2 ** bits - 1) if unsigned else (-2 ** (bits - 1), 2 ** (bits - 1) - 1)

    def run(x):
        f = np.asarray(x, dtype=np.float64)
        vals = np.nan_to_num(_INT_ROUND[mode](f), nan=0.0)
        res = [lo if v <= lo else hi if v >= hi else int(v) for v in vals.ravel()]
        wide = np.array(res, dtype=np.uint64 if unsigned else np.int64).reshape(vals.shape)
        got = wide.astype(np.dtype(f"{'u' if unsigned else 'i'}{bits // 8}")).view(out) \
            if unsigned else wide.astype(out)
        return np.where(np.isnan(f), out.type(nan), got).astype(out)
    return run


# --- float functions beyond NumPy's --------------------------------------------------------

def in_f64(fn: Callable) -> Callable:
    """fn applied in float64 and rounded to the argument's own type (fp32 results are then
    correctly rounded but for the rare double rounding)."""
    def run(*xs):
        out = np.result_type(*(np.asarray(x).dtype for x in xs if np.asarray(x).dtype.kind == "f"))
        with np.errstate(all="ignore"):
            return np.asarray(fn(*(np.asarray(x, dtype=np.float64)
                                   if np.asarray(x).dtype.kind == "f" else np.asarray(x)
                                   for x in xs))).astype(out)
    return run


def scipy_special(name: str) -> Callable:
    def run(*xs):
        import scipy.special  # only the functions that need it load SciPy

        return getattr(scipy.special, name)(*xs)
    return run


def vectorized(fn: Callable) -> Callable:
    """A scalar function of Python floats (math.remainder...) over arrays, in float64."""
    def run(*xs):
        return np.vectorize(lambda *v: fn(*map(float, v)), otypes=[np.float64])(*xs)
    return run


def norm(*xs):
    """sqrt(sum of squares) as a chain of C hypot calls (each scales its operands, so no
    square overflows or underflows): hypot(x, y), hypot(hypot(x, y), z),
    hypot(hypot(x, y), hypot(z, w))."""
    if len(xs) == 4:
        return np.hypot(np.hypot(xs[0], xs[1]), np.hypot(xs[2], xs[3]))
    out = np.hypot(xs[0], xs[1])
    return np.hypot(out, xs[2]) if len(xs) == 3 else out


def reciprocal_norm(*xs):
    """1 / norm(xs) with the operands first scaled by a power of two (exact) so that the
    largest is near 1: the norm itself may exceed the largest float where its reciprocal
    is a subnormal (rnorm3d(0, 1.28e308, 1.28e308) is 5.5e-309, not 1 / inf)."""
    xs = [np.asarray(x, dtype=np.float64) for x in xs]
    largest = np.abs(xs[0])
    for x in xs[1:]:
        largest = np.fmax(largest, np.abs(x))
    usable = np.isfinite(largest) & (largest > 0)
    _, e = np.frexp(np.where(usable, largest, 1.0))
    return np.ldexp(1.0 / norm(*(np.ldexp(x, -e) for x in xs)), -e)


def reciprocal_cbrt(x):
    """1 / cbrt(x) as cbrt(1 / m) * 2**-k for x = m * 2**(3k): the rounding of 1 / m costs
    a third of an ulp, where 1 / cbrt(x) would double cbrt's own error; no overflow for
    subnormal x."""
    x = np.asarray(x, dtype=np.float64)
    m, e = np.frexp(x)
    k = np.floor_divide(e, 3)
    return np.ldexp(np.cbrt(1.0 / np.ldexp(m, e - 3 * k)), -k)


def _sin_cos_pi(r, cosine: bool):
    """sin(pi r) or cos(pi r) for r in [0, 1/2], through the argument nearer zero (where
    the rounding of pi * r costs least)."""
    low = r <= 0.25
    s = np.where(low, np.sin(np.pi * r), np.cos(np.pi * (0.5 - r)))
    c = np.where(low, np.cos(np.pi * r), np.sin(np.pi * (0.5 - r)))
    return c if cosine else s


def sinpi(x):
    x = np.asarray(x)
    r = np.fmod(np.abs(x), 2.0)  # exact
    sign = np.where(r > 1, -1.0, 1.0) * np.sign(x)
    r = np.where(r > 1, r - 1, r)  # sin(pi (1 + t)) = -sin(pi t)
    r = np.where(r > 0.5, 1 - r, r)  # sin(pi (1 - t)) = sin(pi t)
    out = sign * _sin_cos_pi(r, False)
    return np.where(out == 0, np.copysign(0.0, x), out)


def cospi(x):
    r = np.fmod(np.abs(np.asarray(x)), 2.0)
    sign = np.where((r > 0.5) & (r < 1.5), -1.0, 1.0)
    r = np.where(r > 1, 2 - r, r)  # cos(pi (2 - t)) = cos(pi t)
    r = np.where(r > 0.5, 1 - r, r)  # cos(pi (1 - t)) = -cos(pi t)
    out = sign * _sin_cos_pi(r, True)
    return np.where(out == 0, 0.0, out)


def lgamma(x):
    """log|gamma(x)| (SciPy's gammaln, which overflows for subnormal x: -log|x| there)."""
    import scipy.special

    x = np.asarray(x)
    tiny = np.abs(x) < 1e-300
    return np.where(tiny & (x != 0), -np.log(np.where(tiny, np.abs(x), 1.0)),
                    scipy.special.gammaln(x))


def round_half_away(x):
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)


def tgamma(x):
    def one(v):
        if math.isnan(v) or v == -math.inf:
            return math.nan
        if v == 0:
            return math.copysign(math.inf, v)
        if v < 0 and v == math.floor(v):
            return math.nan
        try:
            return math.gamma(v)
        except OverflowError:  # negative v: gamma's sign is (-1) ** ceil(-v)
            return math.inf if v > 0 or math.ceil(-v) % 2 == 0 else -math.inf
    return vectorized(one)(x)


def remainder(x, y):
    def one(a, b):
        if math.isnan(a) or math.isnan(b) or math.isinf(a) or b == 0:
            return math.nan
        return math.remainder(a, b)
    return vectorized(one)(x, y)


def ilogb(x):
    """ilogb as CUDA: the unbiased exponent; 0 → INT_MIN, NaN → INT_MIN, inf → INT_MAX
    (CUDA's values for FP_ILOGB0 / FP_ILOGBNAN)."""
    x = np.asarray(x)
    _, e = np.frexp(x)
    return np.where(np.isnan(x) | (x == 0), np.int32(-2 ** 31),
                    np.where(np.isinf(x), np.int32(2 ** 31 - 1), e - 1)).astype(np.int32)


def logb(x):
    x = np.asarray(x)
    _, e = np.frexp(x)
    with np.errstate(all="ignore"):
        return np.where(x == 0, -np.inf, np.where(np.isfinite(x), (e - 1).astype(x.dtype),
                                                   np.abs(x))).astype(x.dtype)


def erfcx(x):
    import scipy.special

    return scipy.special.erfcx(x)


def normcdf(x):
    """Φ(x) (SciPy's ndtr) in float64; below -1 as erfcx(-x/√2) e^(-x²/2) / 2, with x² carried
    to twice the precision (Dekker's split).  ndtr takes erfc(-x/√2), whose rounded argument
    costs the result up to about x² ulp (572 at x = -29), and below about -37.5, where Φ is
    subnormal, it returned 0; this form stays within 6 ulp down to -38.5, where Φ
    underflows."""
    import scipy.special

    x = np.asarray(x, np.float64)
    out = np.array(scipy.special.ndtr(x), np.float64)
    tail = (x < -1) & (x > -40)  # (past -40 Φ is 0: ndtr's)
    if np.any(tail):
        t = x[tail]
        scaled = t * 134217729.0  # 2^27 + 1: t = hi + lo, each 26 bits
        hi = scaled - (scaled - t)
        lo = t - hi
        square = t * t
        error = ((hi * hi - square) + 2 * hi * lo) + lo * lo  # t² = square + error, exactly
        out[tail] = (0.5 * scipy.special.erfcx(-t / np.sqrt(2.0)) * np.exp(-square / 2)
                     * (1 - error / 2))
    return out


# --- integer intrinsics -----------------------------------------------------------------

def _unsigned(x, bits: int):
    return np.asarray(x).astype(np.dtype(f"i{bits // 8}")).view(np.dtype(f"u{bits // 8}"))


def int_map(fn: Callable, out: str, bits: int) -> Callable:
    """fn over the operands' bits as Python ints (unsigned, `bits` wide)."""
    def run(*xs):
        us = np.broadcast_arrays(*(_unsigned(x, bits) if np.asarray(x).dtype.kind == "i"
                                   else np.asarray(x) for x in xs))
        vals = [fn(*map(int, v)) for v in zip(*(u.ravel() for u in us))]
        wrapped = [v % (1 << 64) for v in vals]
        return np.array(wrapped, dtype=np.uint64).reshape(us[0].shape).astype(
            np.dtype(f"u{np.dtype(out).itemsize}")).view(out)
    return run


def _signed(v: int, bits: int) -> int:
    return v - (1 << bits) if v >= 1 << (bits - 1) else v


def clz(bits: int):
    return int_map(lambda v: bits - v.bit_length(), "int32", bits)


def popc(bits: int):
    return int_map(lambda v: bin(v).count("1"), "int32", bits)


def brev(bits: int, out: str):
    return int_map(lambda v: int(f"{v:0{bits}b}"[::-1], 2), out, bits)


def ffs(bits: int):
    return int_map(lambda v: (v & -v).bit_length(), "int32", bits)


def byte_perm(x, y, s):
    def one(a, b, sel):
        src = a | (b << 32)
        out = 0
        for i in range(4):
            k = (sel >> (4 * i)) & 7
            out |= ((src >> (8 * k)) & 0xFF) << (8 * i)
        return out
    return int_map(one, "int32", 32)(x, y, s)


def mulhi(bits: int, signed: bool, out: str):
    def one(a, b):
        if signed:
            a, b = _signed(a, bits), _signed(b, bits)
        return (a * b) >> bits
    return int_map(one, out, bits)


def mul24(signed: bool, out: str):
    def one(a, b):
        a, b = a & 0xFFFFFF, b & 0xFFFFFF
        if signed:
            a, b = _signed(a, 24), _signed(b, 24)
        return a * b
    return int_map(one, out, 32)


def halving_add(signed: bool, rounded: bool, out: str):
    def one(a, b):
        if signed:
            a, b = _signed(a, 32), _signed(b, 32)
        return (a + b + int(rounded)) >> 1
    return int_map(one, out, 32)


def sad(signed: bool, out: str):
    def one(a, b, c):
        if signed:
            a, b = _signed(a, 32), _signed(b, 32)
        return abs(a - b) + c
    return int_map(one, out, 32)


def bits_as(out) -> Callable:
    return lambda x: np.asarray(x).view(out)


def hiloint2double(hi, lo):
    h = _unsigned(hi, 32).astype(np.uint64)
    lo = _unsigned(lo, 32).astype(np.uint64)
    return ((h << np.uint64(32)) | lo).view(np.float64)


def double_half(high: bool):
    def run(x):
        u = np.asarray(x, dtype=np.float64).view(np.uint64)
        part = (u >> np.uint64(32)) if high else (u & np.uint64(0xFFFFFFFF))
        return part.astype(np.uint32).view(np.int32)
    return run


def saturate(x):
    # + 0: -0.0 saturates to +0.0, as __saturatef
    return (np.where(np.isnan(x), 0, np.clip(x, 0, 1)) + 0.0).astype(np.asarray(x).dtype)


def flag(fn: Callable) -> Callable:
    """A predicate as libdevice returns it: an int32 0 or 1."""
    return lambda x: fn(np.asarray(x)).astype(np.int32)


def powi(x, n):
    # float64 holds the fp32 result's exact rounding input closely enough; fp64 results
    # go through the same power in float64
    return np.power(np.asarray(x, dtype=np.float64), np.asarray(n).astype(np.float64))


def llround(x):
    return to_int_saturating(round_half_away(np.asarray(x, dtype=np.float64)), 64)


def llrint(x):
    return to_int_saturating(np.rint(np.asarray(x, dtype=np.float64)), 64)


def to_int_saturating(r, bits: int):
    """Saturated to the range; NaN → the sign bit alone, as NVIDIA's llrint / llround."""
    lo, hi = -2 ** (bits - 1), 2 ** (bits - 1) - 1
    vals = np.nan_to_num(np.asarray(r), nan=lo)
    res = [lo if v <= lo else hi if v >= hi else int(v) for v in vals.ravel()]
    return np.array(res, dtype=np.int64).reshape(vals.shape)


def erfcinv(x):
    """SciPy's erfcinv, which overflows below about 1e-300; there, Newton's method on
    log(erfc(y)) = log(x) with erfc's asymptotic series (exact to double precision for
    y > 26)."""
    import scipy.special

    x = np.asarray(x, dtype=np.float64)
    out = scipy.special.erfcinv(x)
    tiny = (x > 0) & (x < 1e-300)
    if np.any(tiny):
        out = np.where(tiny, np.vectorize(_erfcinv_tiny, otypes=[np.float64])(
            np.where(tiny, x, 1e-300)), out)
    return out


def _erfcinv_tiny(x: float) -> float:
    target = math.log(x)
    y = math.sqrt(-target)
    for _ in range(60):
        s, term = 1.0, 1.0
        for k in range(1, 12):  # 1 - 1/(2y^2) + 3/(2y^2)^2 - ...
            term *= -(2 * k - 1) / (2 * y * y)
            s += term
        f = -y * y - math.log(y * math.sqrt(math.pi)) + math.log(s) - target
        step = f / (-2 * y - 1 / y)  # d/dy of the leading terms
        y -= step
        if abs(step) < 1e-17 * y:
            break
    return y


def bessel(kind: str, order: int | None = None) -> Callable:
    """SciPy's J_n / Y_n (kind "j" / "y"; order None: the first argument is n), switching
    beyond |x| = 1e8 to Hankel's asymptotic expansion evaluated with sin(x) and cos(x) of
    the argument itself: SciPy loses every digit there (x ~ 1e16)."""
    def run(*args):
        import scipy.special

        n, x = (np.asarray(args[0]).astype(np.float64), args[1]) if order is None else \
            (np.float64(order), args[0])
        x = np.asarray(x, dtype=np.float64)
        f = scipy.special.jv if kind == "j" else scipy.special.yn if order is None else \
            {0: scipy.special.y0, 1: scipy.special.y1}[order]
        with np.errstate(all="ignore"):
            small = f(n, x) if order is None else f(x) if kind == "y" else \
                {0: scipy.special.j0, 1: scipy.special.j1}[order](x)
            big = np.abs(x) > 1e8
            if not np.any(big):
                return small
            return np.where(big, _hankel(kind, n, np.where(big, x, 1e8)), small)
    return run


def _hankel(kind: str, n, x):
    """J_n(x) or Y_n(x) for |x| > 1e8: sqrt(2 / (pi |x|)) (P cos chi - Q sin chi) (J) or
    (P sin chi + Q cos chi) (Y), chi = |x| - (n / 2 + 1 / 4) pi, P = 1 - O(x^-2),
    Q = (4 n^2 - 1) / (8 |x|); cos chi and sin chi expanded so that |x| is reduced once."""
    a = np.abs(x)
    mu = 4 * n * n
    p = 1 - (mu - 1) * (mu - 9) / (2 * (8 * a) ** 2)
    q = (mu - 1) / (8 * a)
    phi = (n / 2 + 0.25) * np.pi
    c, s = np.cos(a), np.sin(a)
    cos_chi = c * np.cos(phi) + s * np.sin(phi)
    sin_chi = s * np.cos(phi) - c * np.sin(phi)
    amp = np.sqrt(2 / (np.pi * a))
    if kind == "j":
        v = amp * (p * cos_chi - q * sin_chi)
        return np.where((x < 0) & (np.fmod(n, 2) == 1), -v, v)  # J_n(-x) = (-1)^n J_n(x)
    return np.where(x < 0, np.nan, amp * (p * sin_chi + q * cos_chi))
