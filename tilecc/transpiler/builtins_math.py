"""The math builtins beyond the element-wise core: `tl.fdiv`, `tl.div_rn`, `tl.clamp`,
`tl.softmax`, and every libdevice function (`libdevice.<name>`, typed from
`tilecc.language.extra.libdevice_table`).

A libdevice call becomes one `extern` op named after its table row; the renderer picks
the CUDA or HIP function from the same row and the interpreter its NumPy implementation.
As Triton's `extern_elementwise`, literals become values of their own type (int32, fp32),
the argument dtypes must match one of the row's signatures exactly (no promotion), and the
operands broadcast to one shape.
"""

from __future__ import annotations

from tilecc.language import core as L
from tilecc.language import dtypes as D
from tilecc.language.extra.libdevice import __all__ as _LIBDEVICE_NAMES
from tilecc.language.extra.libdevice_table import TABLE
from tilecc.transpiler import semantic as S
from tilecc.transpiler.builtin_registry import HANDLERS, bind, constant, handles, kernel_value
from tilecc.transpiler.ir import Type, Value
from tilecc.transpiler.semantic import Const


def libdevice(b: S.Emitter, name: str, args: list) -> S.Operand:
    """`libdevice.<name>(*args)` as an `extern` op; TypeError for dtypes its row lacks."""
    fn = TABLE[name]
    values = [S.to_value(b, a) for a in args]
    types = tuple(v.dtype.short if not v.dtype.is_ptr() else str(v.type) for v in values)
    sig = fn.signature(types)
    if sig is None:
        accepted = ", ".join(f"({', '.join(_long(t) for t in s.args)})" for s in fn.signatures)
        raise TypeError(f"libdevice.{name} has no implementation for argument types "
                        f"({', '.join(_long(t) for t in types)}); it takes {accepted}"
                        f"{_cast_hint(types, fn)}")
    shape: tuple[int, ...] = ()
    for v in values:
        shape = S.broadcast_shapes(shape, v.type.shape)
    values = [S.splat(b, v, shape) for v in values]
    return b.emit("extern", values, Type(D.BY_NAME[sig.result], shape), fn=name)


def _long(name: str) -> str:
    return D.LONG_NAMES.get(name, name)


def _cast_hint(types: tuple[str, ...], fn) -> str:
    if any(t in ("fp16", "bf16") for t in types) and fn.signature(
            tuple("fp32" if t in ("fp16", "bf16") else t for t in types)):
        return "; cast 16-bit floats to tl.float32 first, e.g. x.to(tl.float32)"
    return ""


for _name in _LIBDEVICE_NAMES:
    handles(f"libdevice.{_name}")(
        lambda tracer, name, **args: libdevice(
            tracer.b, name.split(".", 1)[1],
            [kernel_value(tracer, v, k) for k, v in args.items()]))


def _floats_only(what: str, *values: S.Operand) -> None:
    for v in values:
        t = v.dtype if not isinstance(v, Const) else D.literal_dtype(v.value)
        if not t.is_floating():
            raise TypeError(f"both operands of {what} must have floating scalar type, "
                            f"got {t!r}")


@handles("fdiv")
def _fdiv(tracer, name, x, y, ieee_rounding):
    b = tracer.b
    x, y = (S.to_value(b, kernel_value(tracer, v, k)) for k, v in (("x", x), ("y", y)))
    _floats_only("fdiv", x, y)
    if constant(ieee_rounding, "ieee_rounding"):
        return _div_rn(b, x, y, "tl.fdiv(ieee_rounding=True)")
    return S.binary(b, "div", x, y)  # fp32: the fast division, as Triton's `/`


def _div_rn(b, x, y, what: str):
    x, y = S.to_value(b, x), S.to_value(b, y)
    a, c, t = S.promote_pair(b, x, y)
    if t.short not in ("fp32", "fp64"):
        raise ValueError(f"{what}: expected dtype ['fp32'] but got {t.name}")
    return libdevice(b, "div_rn", [a, c])


@handles("div_rn")
def _div_rn_handler(tracer, name, x, y):
    b = tracer.b
    x, y = (S.to_value(b, kernel_value(tracer, v, k)) for k, v in (("x", x), ("y", y)))
    for v in (x, y):
        if v.dtype.short != "fp32":  # Triton's check, before promotion
            raise ValueError(f"tl.div_rn: expected dtype ['fp32'] but got {v.dtype.name}")
    return _div_rn(b, x, y, "tl.div_rn")


def propagates_nan(value) -> bool:
    """tl.PropagateNan.ALL (True) or NONE (False), from tilecc's or Triton's enum."""
    v = value.value if isinstance(value, Const) else value
    if type(v).__name__ == "constexpr":  # Triton's constexpr around it
        v = v.value
    name = getattr(v, "name", None)
    if name in ("ALL", "NONE"):
        return name == "ALL"
    if v is None:
        return False
    raise ValueError(f"propagate_nan must be tl.PropagateNan.NONE or tl.PropagateNan.ALL, "
                     f"got {v!r}")


@handles("clamp")
def _clamp(tracer, name, x, min, max, propagate_nan):
    b = tracer.b
    x, lo, hi = (S.to_value(b, kernel_value(tracer, v, k))
                 for k, v in (("x", x), ("min", min), ("max", max)))
    lo, hi, x = (S.cast(b, v, D.float32) if v.dtype == D.bfloat16 else v for v in (lo, hi, x))
    lo, hi, _ = S.promote_pair(b, lo, hi)
    x, lo, _ = S.promote_pair(b, x, lo)
    x, hi, t = S.promote_pair(b, x, hi)
    if not t.is_floating():
        raise TypeError(f"Unexpected dtype {t!r}. Only floating point clamp is supported")
    nan = propagates_nan(propagate_nan)
    # NONE: a NaN x gives `min` (maxnum then minnum); ALL: a NaN x gives NaN
    return S.min_max(b, "min", S.min_max(b, "max", x, lo, nan), hi, nan)


@handles("softmax")
def _softmax(tracer, name, x, dim, keep_dims, ieee_rounding):
    # Triton's definition in `tl` calls, so its types and shapes follow by construction
    axis = Const(0) if dim.value is None else dim
    x = kernel_value(tracer, x, "x")
    largest = _call(tracer, "max", [x, axis], {"keep_dims": keep_dims})
    num = S.math_unary(tracer.b, "exp", S.binary(tracer.b, "sub", x, largest))
    den = _call(tracer, "sum", [num, axis], {"keep_dims": keep_dims})
    return _fdiv(tracer, "fdiv", num, den, ieee_rounding)


def _call(tracer, short: str, args: list, kwargs: dict):
    """The builtin `tl.<short>` called from another one, its defaults applied."""
    bound = bind(getattr(L, short), args, kwargs, f"tl.{short}()")
    bound.apply_defaults()
    return HANDLERS[short](tracer, short, **{k: v if isinstance(v, (Value, Const)) else Const(v)
                                             for k, v in bound.arguments.items()})
