"""The libdevice table: one row per function of Triton 3.6's `extra.cuda.libdevice` (and
`extra.hip.libdevice`'s `fast_tanhf`).

A row gives each accepted signature (argument dtypes → result dtype, exactly Triton's
table: other dtypes are refused, as Triton refuses them), the CUDA math API function that
computes it, the HIP function where it differs (`None` where AMD has no function that
rounds the same way: the call is refused on HIP), and the NumPy implementation the
interpreter runs.  The transpiler types calls from it, the renderer names the function
from it, the interpreter evaluates it; nothing else knows about individual functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from tilecc.language.extra import numerics as N

SAME = "same"  # HIP's device library has the CUDA name, with the same meaning


@dataclass(frozen=True)
class Signature:
    args: tuple[str, ...]  # dtype names (fp32, i32...)
    result: str
    cuda: str  # the CUDA function called
    hip: str | None  # the HIP function (or an expression, "{}" for the arguments); None:
    # refused on AMD
    c_result: str = ""  # the C function's own return type where it is not `result`'s


@dataclass(frozen=True)
class Function:
    name: str
    signatures: tuple[Signature, ...]
    numpy: Callable | None  # arrays of the signature's dtypes → the result (any dtype)
    why_not_hip: str = ""  # why a signature refused on HIP is refused

    def signature(self, args: tuple[str, ...]) -> Signature | None:
        return next((s for s in self.signatures if s.args == args), None)

    @property
    def arity(self) -> int:
        return len(self.signatures[0].args)


TABLE: dict[str, Function] = {}
DIRECTED = "AMD GPUs have no instruction rounding in this direction"


def _sig(args, result, cuda, hip=SAME, c_result=""):
    return Signature(tuple(args), result, cuda, cuda if hip == SAME else hip, c_result)


def row(name, *signatures, numpy, why_not_hip=""):
    TABLE[name] = Function(name, tuple(signatures), numpy, why_not_hip)


def floats(name, numpy, arity=1):
    """fp32 → fp32 and fp64 → fp64 as the math API's `::<name>f` and `::<name>`."""
    row(name, _sig(("fp32",) * arity, "fp32", f"::{name}f"),
        _sig(("fp64",) * arity, "fp64", f"::{name}"), numpy=numpy)


def _np(fn):
    return N.in_f64(fn)


# --- integer intrinsics -------------------------------------------------------------------
row("clz", _sig(["i32"], "i32", "__clz"), _sig(["i64"], "i32", "__clzll"),
    numpy=lambda x: (N.clz(32) if np.asarray(x).dtype.itemsize == 4 else N.clz(64))(x))
row("popc", _sig(["i32"], "i32", "__popc"), _sig(["i64"], "i32", "__popcll"),
    numpy=lambda x: (N.popc(32) if np.asarray(x).dtype.itemsize == 4 else N.popc(64))(x))
row("byte_perm", _sig(["i32"] * 3, "i32", "__byte_perm", c_result="unsigned"),
    numpy=N.byte_perm)
row("mulhi", _sig(["i32"] * 2, "i32", "__mulhi"), _sig(["u32"] * 2, "u32", "__umulhi"),
    _sig(["i64"] * 2, "i64", "__mul64hi"), _sig(["u64"] * 2, "u64", "__umul64hi"),
    numpy=lambda x, y: N.mulhi(np.asarray(x).dtype.itemsize * 8, np.asarray(x).dtype.kind == "i",
                               np.asarray(x).dtype)(x, y))
row("mul24", _sig(["i32"] * 2, "i32", "__mul24"), _sig(["u32"] * 2, "u32", "__umul24"),
    numpy=lambda x, y: N.mul24(np.asarray(x).dtype.kind == "i", np.asarray(x).dtype)(x, y))
row("brev", _sig(["i32"], "i32", "__brev", c_result="unsigned"),
    _sig(["i64"], "i64", "__brevll", c_result="unsigned long long"),
    numpy=lambda x: N.brev(np.asarray(x).dtype.itemsize * 8, np.asarray(x).dtype)(x))
# HIP's __hadd / __rhadd / __uhadd / __urhadd / __sad overflow or return a flag:
# tilecc.h's exact versions on AMD
row("sad", _sig(["i32", "i32", "u32"], "i32", "__sad", "tc::sad", c_result="unsigned"),
    _sig(["u32"] * 3, "u32", "__usad", "tc::sad"),
    numpy=lambda x, y, z: N.sad(np.asarray(x).dtype.kind == "i", np.asarray(x).dtype)(x, y, z))
row("hadd", _sig(["i32"] * 2, "i32", "__hadd", "tc::hadd"),
    _sig(["u32"] * 2, "u32", "__uhadd", "tc::hadd"),
    numpy=lambda x, y: N.halving_add(np.asarray(x).dtype.kind == "i", False,
                                     np.asarray(x).dtype)(x, y))
row("rhadd", _sig(["i32"] * 2, "i32", "__rhadd", "tc::rhadd"),
    _sig(["u32"] * 2, "u32", "__urhadd", "tc::rhadd"),
    numpy=lambda x, y: N.halving_add(np.asarray(x).dtype.kind == "i", True,
                                     np.asarray(x).dtype)(x, y))
row("ffs", _sig(["i32"], "i32", "__ffs"), _sig(["i64"], "i32", "__ffsll"),
    numpy=lambda x: N.ffs(np.asarray(x).dtype.itemsize * 8)(x))
row("abs", _sig(["i32"], "i32", "::abs"), _sig(["i64"], "i64", "::llabs"),
    _sig(["fp32"], "fp32", "::fabsf"), _sig(["fp64"], "fp64", "::fabs"), numpy=np.abs)

# --- rounding to integers, classification, sign -------------------------------------------
floats("floor", numpy=np.floor)
floats("ceil", numpy=np.ceil)
floats("trunc", numpy=np.trunc)
floats("rint", numpy=np.rint)
floats("nearbyint", numpy=np.rint)
floats("round", numpy=N.round_half_away)
# HIP converts out-of-range floats with C's undefined cast: tc::float_to_int saturates
# as NVIDIA's conversions do, and gives NaN the value NVIDIA's libdevice gives it: 0 from
# fp32 to 32 bits, the sign bit alone from fp64 or to 64 bits (measured on the GPU)
_HIP_TO_INT = "tc::float_to_int<{0}>({1}({{}}), {2})"
_NAN_64 = "(long long)0x8000000000000000ull"
row("llrint", _sig(["fp32"], "i64", "::llrintf",
                   _HIP_TO_INT.format("long long", "::rintf", _NAN_64)),
    _sig(["fp64"], "i64", "::llrint", _HIP_TO_INT.format("long long", "::rint", _NAN_64)),
    numpy=N.llrint)
row("llround", _sig(["fp32"], "i64", "::llroundf",
                    _HIP_TO_INT.format("long long", "::roundf", _NAN_64)),
    _sig(["fp64"], "i64", "::llround", _HIP_TO_INT.format("long long", "::round", _NAN_64)),
    numpy=N.llround)
row("isnan", _sig(["fp32"], "i32", "isnan", c_result="bool"),
    _sig(["fp64"], "i32", "isnan", c_result="bool"), numpy=N.flag(np.isnan))
row("isinf", _sig(["fp32"], "i32", "isinf", c_result="bool"),
    _sig(["fp64"], "i32", "isinf", c_result="bool"), numpy=N.flag(np.isinf))
row("finitef", _sig(["fp32"], "i32", "isfinite", c_result="bool"), numpy=N.flag(np.isfinite))
row("isfinited", _sig(["fp64"], "i32", "isfinite", c_result="bool"),
    numpy=N.flag(np.isfinite))
row("signbit", _sig(["fp32"], "i32", "signbit", c_result="bool"),
    _sig(["fp64"], "i32", "signbit", c_result="bool"), numpy=N.flag(np.signbit))
floats("copysign", arity=2, numpy=np.copysign)
floats("nextafter", arity=2, numpy=np.nextafter)
row("saturatef", _sig(["fp32"], "fp32", "__saturatef", "tc::saturatef"),  # HIP's keeps NaN
    numpy=N.saturate)
floats("fdim", arity=2, numpy=_np(lambda x, y: np.where(x > y, x - y, np.where(
    np.isnan(x) | np.isnan(y), np.nan, 0.0))))
row("ilogb", _sig(["fp32"], "i32", "::ilogbf"), _sig(["fp64"], "i32", "::ilogb"),
    numpy=N.ilogb)
floats("logb", numpy=N.logb)
row("ldexp", _sig(["fp32", "i32"], "fp32", "::ldexpf"), _sig(["fp64", "i32"], "fp64", "::ldexp"),
    numpy=lambda x, n: np.ldexp(x, n))
row("scalbn", _sig(["fp32", "i32"], "fp32", "::scalbnf"),
    _sig(["fp64", "i32"], "fp64", "::scalbn"), numpy=lambda x, n: np.ldexp(x, n))
floats("fmod", arity=2, numpy=np.fmod)
floats("remainder", arity=2, numpy=_np(N.remainder))

# --- exponentials, logarithms, powers, roots --------------------------------------------------
floats("exp", numpy=_np(np.exp))
floats("exp2", numpy=_np(np.exp2))
floats("exp10", numpy=_np(lambda x: np.power(10.0, x)))
floats("expm1", numpy=_np(np.expm1))
floats("log", numpy=_np(np.log))
floats("log2", numpy=_np(np.log2))
floats("log10", numpy=_np(np.log10))
floats("log1p", numpy=_np(np.log1p))
floats("sqrt", numpy=_np(np.sqrt))
floats("rsqrt", numpy=_np(lambda x: 1 / np.sqrt(x)))
floats("cbrt", numpy=_np(np.cbrt))
floats("rcbrt", numpy=_np(N.reciprocal_cbrt))
floats("hypot", arity=2, numpy=_np(np.hypot))
floats("rhypot", arity=2, numpy=_np(N.reciprocal_norm))
floats("norm3d", arity=3, numpy=_np(N.norm))
floats("rnorm3d", arity=3, numpy=_np(N.reciprocal_norm))
floats("norm4d", arity=4, numpy=_np(N.norm))
floats("rnorm4d", arity=4, numpy=_np(N.reciprocal_norm))
row("pow", _sig(["fp32", "i32"], "fp32", "__nv_powif", "tc::powi"),
    _sig(["fp64", "i32"], "fp64", "__nv_powi", "tc::powi"),
    _sig(["fp32", "fp32"], "fp32", "::powf"), _sig(["fp64", "fp64"], "fp64", "::pow"),
    numpy=_np(lambda x, y: np.power(x, np.asarray(y).astype(np.float64))))
row("fma", _sig(["fp32"] * 3, "fp32", "::fmaf"), _sig(["fp64"] * 3, "fp64", "::fma"),
    numpy=lambda x, y, z: N.directed(
        "fma", "fp32" if np.asarray(x).dtype == np.float32 else "fp64", "rn")(x, y, z))

# --- trigonometric, hyperbolic -------------------------------------------------------------
for _f in ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh",
           "acosh", "atanh"):
    floats(_f, numpy=_np({"asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
                          "asinh": np.arcsinh, "acosh": np.arccosh,
                          "atanh": np.arctanh}.get(_f) or getattr(np, _f)))
floats("atan2", arity=2, numpy=_np(np.arctan2))
floats("sinpi", numpy=_np(N.sinpi))
floats("cospi", numpy=_np(N.cospi))

# --- special functions ------------------------------------------------------------------------
floats("erf", numpy=_np(N.scipy_special("erf")))
floats("erfc", numpy=_np(N.scipy_special("erfc")))
floats("erfinv", numpy=_np(N.scipy_special("erfinv")))
floats("erfcinv", numpy=_np(N.erfcinv))
floats("erfcx", numpy=_np(N.erfcx))
floats("normcdf", numpy=_np(N.normcdf))
floats("normcdfinv", numpy=_np(N.scipy_special("ndtri")))
floats("lgamma", numpy=_np(N.lgamma))
floats("tgamma", numpy=_np(N.tgamma))
floats("j0", numpy=_np(N.bessel("j", 0)))
floats("j1", numpy=_np(N.bessel("j", 1)))
floats("y0", numpy=_np(N.bessel("y", 0)))
floats("y1", numpy=_np(N.bessel("y", 1)))
row("jn", _sig(["i32", "fp32"], "fp32", "::jnf"), _sig(["i32", "fp64"], "fp64", "::jn"),
    numpy=_np(N.bessel("j")))
row("yn", _sig(["i32", "fp32"], "fp32", "::ynf"), _sig(["i32", "fp64"], "fp64", "::yn"),
    numpy=_np(N.bessel("y")))
floats("cyl_bessel_i0", numpy=_np(N.scipy_special("i0")))
floats("cyl_bessel_i1", numpy=_np(N.scipy_special("i1")))

# --- fast approximations (fp32): the hardware's approximate units on NVIDIA -------------------
for _f, _c, _fn in (("fast_sinf", "__sinf", np.sin), ("fast_cosf", "__cosf", np.cos),
                    ("fast_tanf", "__tanf", np.tan), ("fast_expf", "__expf", np.exp),
                    ("fast_exp10f", "__exp10f", lambda x: np.power(10.0, x)),
                    ("fast_logf", "__logf", np.log), ("fast_log2f", "__log2f", np.log2),
                    ("fast_log10f", "__log10f", np.log10)):
    row(_f, _sig(["fp32"], "fp32", _c), numpy=_np(_fn))
row("fast_powf", _sig(["fp32"] * 2, "fp32", "__powf"), numpy=_np(np.power))
row("fast_dividef", _sig(["fp32"] * 2, "fp32", "__fdividef"), numpy=_np(np.divide))
row("fast_tanhf", _sig(["fp32"], "fp32", "::tanhf"), numpy=_np(np.tanh))  # Triton's HIP name

# --- arithmetic rounded in a chosen direction ------------------------------------------------
_MODES = ("rn", "rz", "rd", "ru")


def _directed_row(name, op, arity, c32, c64, hip_rn32=SAME, hip_rn64=SAME, f32_only=False):
    for m in _MODES:
        sigs = [_sig(["fp32"] * arity, "fp32", c32.format(m),
                     (hip_rn32 if m == "rn" else None))]
        if not f32_only:
            sigs.append(_sig(["fp64"] * arity, "fp64", c64.format(m),
                             (hip_rn64 if m == "rn" else None)))
        row(f"{name}_{m}", *sigs, why_not_hip=DIRECTED,
            numpy=(lambda m: lambda *xs: N.directed(
                op, "fp32" if np.asarray(xs[0]).dtype == np.float32 else "fp64", m)(*xs))(m))


_directed_row("add", "add", 2, "__fadd_{}", "__dadd_{}")
_directed_row("sub", "sub", 2, "__fsub_{}", "__dsub_{}")
_directed_row("mul", "mul", 2, "__fmul_{}", "__dmul_{}")
_directed_row("div", "div", 2, "__fdiv_{}", "__ddiv_{}")
_directed_row("fma", "fma", 3, "__fmaf_{}", "__fma_{}")
# HIP's __frcp_rn / __drcp_rn / __fsqrt_rn are approximations: tilecc.h's exact ones instead
_directed_row("rcp", "rcp", 1, "__frcp_{}", "__drcp_{}", "tc::rcp_rn", "tc::rcp_rn")
_directed_row("sqrt", "sqrt", 1, "__fsqrt_{}", "__dsqrt_{}", "::sqrtf", "::sqrt")
row("rsqrt_rn", _sig(["fp32"], "fp32", "__frsqrt_rn", None),
    numpy=N.directed("rsqrt", "fp32", "rn"),
    why_not_hip="AMD's device library has no correctly rounded reciprocal square root")
row("rcp64h", _sig(["fp64"], "fp64", "__nv_rcp64h", None), numpy=None,
    why_not_hip="rcp64h is an NVIDIA libdevice primitive with no AMD counterpart")

# --- conversions -------------------------------------------------------------------------------
C_INT = {"i32": "int", "u32": "unsigned int", "i64": "long long", "u64": "unsigned long long"}
_INT_NAMES = {"int": ("i32", 32, False), "uint": ("u32", 32, True), "ll": ("i64", 64, False),
              "ull": ("u64", 64, True)}
for _src, _sname in (("fp32", "float"), ("fp64", "double")):
    for _dst, (_dty, _bits, _unsigned) in _INT_NAMES.items():
        # Triton types unsigned results as signed integers of the same width
        _res = {"u32": "i32", "u64": "i64"}.get(_dty, _dty)
        _c_res = {"u32": "unsigned", "u64": "unsigned long long"}.get(_dty, "")
        for _m in _MODES:
            _round = {"rn": "::rint", "rz": "::trunc", "rd": "::floor", "ru": "::ceil"}[_m]
            _nan = 0 if _src == "fp32" and _bits == 32 else -2 ** (_bits - 1)
            _hip = _HIP_TO_INT.format(C_INT[_dty], _round + ("f" if _src == "fp32" else ""),
                                      f"({C_INT[_dty]})0x{_nan % 2 ** _bits:x}ull")
            row(f"{_sname}2{_dst}_{_m}",
                _sig([_src], _res, f"__{_sname}2{_dst}_{_m}", _hip, c_result=_c_res),
                numpy=N.to_int(_m, _bits, _unsigned, np.dtype(np.int32 if _bits == 32
                                                               else np.int64), nan=_nan))
for _m in _MODES:
    row(f"double2float_{_m}", _sig(["fp64"], "fp32", f"__double2float_{_m}",
                                   SAME if _m == "rn" else None),
        numpy=N.convert("fp64", "fp32", _m), why_not_hip=DIRECTED)
    for _src, (_dty, _bits, _unsigned) in _INT_NAMES.items():
        for _dname, _dst in (("float", "fp32"), ("double", "fp64")):
            if _dname == "double" and _src in ("int", "uint"):
                continue  # exact: only the _rn spelling exists (below)
            row(f"{_src}2{_dname}_{_m}", _sig([_dty], _dst, f"__{_src}2{_dname}_{_m}",
                                               SAME if _m == "rn" else None),
                numpy=N.convert(_dty, _dst, _m), why_not_hip=DIRECTED)
row("int2double_rn", _sig(["i32"], "fp64", "__int2double_rn"), numpy=lambda x: np.float64(x))
row("uint2double_rn", _sig(["u32"], "fp64", "__uint2double_rn"), numpy=lambda x: np.float64(x))

# --- bit reinterpretation --------------------------------------------------------------------
row("int_as_float", _sig(["i32"], "fp32", "__int_as_float"), numpy=N.bits_as(np.float32))
row("uint_as_float", _sig(["u32"], "fp32", "__uint_as_float"), numpy=N.bits_as(np.float32))
row("float_as_int", _sig(["fp32"], "i32", "__float_as_int"), numpy=N.bits_as(np.int32))
row("float_as_uint", _sig(["fp32"], "i32", "__float_as_uint", c_result="unsigned"),
    numpy=N.bits_as(np.int32))
row("longlong_as_double", _sig(["i64"], "fp64", "__longlong_as_double"),
    numpy=N.bits_as(np.float64))
row("double_as_longlong", _sig(["fp64"], "i64", "__double_as_longlong"),
    numpy=N.bits_as(np.int64))
row("hiloint2double", _sig(["i32"] * 2, "fp64", "__hiloint2double"), numpy=N.hiloint2double)
row("double2hiint", _sig(["fp64"], "i32", "__double2hiint"), numpy=N.double_half(True))
row("double2loint", _sig(["fp64"], "i32", "__double2loint"), numpy=N.double_half(False))

# Triton's extra.hip.libdevice: the functions its AMD backend defines (all of them in TABLE)
HIP_NAMES = (
    "abs", "floor", "rsqrt", "ceil", "trunc", "exp2", "exp", "fast_dividef", "sqrt",
    "llrint", "nearbyint", "isnan", "signbit", "copysign", "isinf", "nextafter", "sin", "cos",
    "tan", "log2", "cosh", "sinh", "tanh", "atan2", "atan", "asin", "acos", "log", "log10",
    "log1p", "acosh", "asinh", "atanh", "expm1", "hypot", "j0", "j1", "y0", "y1",
    "cyl_bessel_i0", "cyl_bessel_i1", "erf", "erfinv", "erfc", "erfcx", "lgamma", "ldexp",
    "fmod", "fma", "pow", "ilogb", "round", "fast_expf", "fast_tanhf")
