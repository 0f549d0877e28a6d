"""Triton's fp8 types in kernels: which conversions exist, and which formats a target has.

fp8 values are storage: kernels load, store, select (`tl.where`), compare and convert
them, and feed them to `tl.dot`; arithmetic needs a conversion first (`x.to(tl.float32)`).
Conversions follow Triton on the GPUs of the spec (sm_89 / sm_90's `cvt.rn.satfinite`):
downcasts round to nearest even and *saturate* — a finite value beyond the format's
range, and an infinity, become the largest finite value of its sign; NaN stays NaN.
Upcasts are exact.  fp64 goes through fp32 only as an upcast (exact); fp64 → fp8 would
round twice and is refused, as are conversions between fp8 and integers (Triton has none:
bitcast to / from int8 or uint8 instead).
"""

from __future__ import annotations

from tilecc.errors import CompilationError
from tilecc.language import dtypes as D
from tilecc.transpiler.ir import Kernel


def check_cast(src: D.dtype, to: D.dtype, bitcast: bool) -> None:
    """Raise TypeError where a cast touching an fp8 type has no meaning in Triton."""
    if not (src.is_fp8() or to.is_fp8()) or bitcast:
        return
    other = to if src.is_fp8() else src
    if not other.is_floating():
        raise TypeError(f"cannot convert between {src!r} and {to!r}: Triton converts fp8 "
                        "values only to and from floating types; convert through "
                        "tl.float32, or bitcast to / from tl.uint8")
    if to.is_fp8() and src == D.float64:
        raise TypeError(f"cannot convert {src!r} to {to!r} directly: convert to tl.float32 "
                        "first (fp64 → fp32 → fp8 rounds twice)")


def check_arithmetic(d: D.dtype, what: str) -> None:
    """fp8 values do not take part in arithmetic (as in Triton, whose back ends convert
    them first): say so instead of rounding to 8 bits after every operation."""
    if isinstance(d, D.dtype) and d.is_fp8():
        raise TypeError(f"{what} is not defined on {d!r} values: convert them first, e.g. "
                        "x.to(tl.float32) (fp8 is a storage and tl.dot input type)")


def check_supported(kernel: Kernel, ok: tuple[str, ...], where: str) -> None:
    """A CompilationError at the first use of an fp8 type not among `ok` (the compile
    target's `fp8_formats`, as Triton 3.6's backends' `supported_fp8_dtypes`; the
    interpreter has the four ml_dtypes formats).  `where`: the architecture, in words."""

    def bad(t) -> str | None:
        d = t.element_ty if t.is_ptr() else t
        return d.short if d.is_fp8() and d.short not in ok else None

    for p in kernel.params:
        if p.value is not None and bad(p.value.dtype):
            raise CompilationError(unsupported_message(bad(p.value.dtype), ok, where), kernel.loc)
    for op in kernel.walk():
        for v in op.results:
            if bad(v.dtype):
                raise CompilationError(unsupported_message(bad(v.dtype), ok, where), op.loc)


FP8E4B15_REFUSED = ("tl.float8e4b15 is not supported by tilecc (Triton's own software "
                    "format, deprecated on Hopper): use tl.float8e4nv or tl.float8e5")


def unsupported_message(name: str, ok: tuple[str, ...], arch: str) -> str:
    """Why fp8 format `name` is refused on `arch` (in words), which has the formats `ok`."""
    if name == "fp8e4b15":
        return FP8E4B15_REFUSED
    return (f"type {name} is not supported on {arch} (as in Triton 3.6); the fp8 types "
            f"supported there are {', '.join(ok)}")


def convert(x, to: D.dtype):
    """`x` (a NumPy float array or scalar of a type other than fp64) converted to the fp8
    type `to` as the generated code converts it: round to nearest even, saturate finite
    overflow and infinities to the largest finite value, keep NaN.  (ml_dtypes rounds to
    nearest even but overflows to NaN or infinity, so values are clamped first: whatever
    lies beyond the largest finite value rounds to it under saturation.)"""
    import numpy as np

    import ml_dtypes

    limit = float(ml_dtypes.finfo(to.to_numpy()).max)
    x32 = np.asarray(x).astype(np.float32)
    with np.errstate(invalid="ignore"):
        clamped = np.where(np.isnan(x32), x32, np.clip(x32, -limit, limit))
    return clamped.astype(to.to_numpy())


def round_constant(value: float, to: D.dtype) -> float:
    """A compile-time value as the fp8 type `to` holds it (a constant is converted once,
    at trace time, with the rules of `convert`)."""
    return float(convert(value, to))
