"""Typing and broadcasting of operations: Triton's semantics, emitted as tile IR.

Operands are IR `Value`s or `Const`s (compile-time Python values).  Two constants fold
with Python's own semantics (as constexpr arithmetic does in Triton); otherwise operands
are promoted with `dtypes.computation_type`, scalars are splatted to the block shape, and
one op is emitted through the `Emitter`.  Errors are `TypeError` / `ValueError`; the
frontend turns them into `CompilationError`s at the user's line.
"""

from __future__ import annotations

import operator
import struct
from dataclasses import dataclass
from typing import Any, Protocol

from tilecc.language import dtypes as D
from tilecc.language.dtypes import dtype
from tilecc.transpiler import fp8
from tilecc.transpiler.ir import Type, Value


@dataclass(frozen=True)
class Const:
    """A compile-time value: a Python number, bool, None, string, dtype or tuple."""

    value: Any

    def __repr__(self) -> str:
        return f"Const({self.value!r})"


@dataclass(frozen=True)
class HelperRef:
    """A @jit helper named in a kernel (called, or passed as a combine function)."""

    fn: Any  # the helper's plain Python function


class Emitter(Protocol):
    def emit(self, kind: str, operands: list[Value], type: Type | None, **attrs) -> Value: ...


Operand = Value | Const


def is_number(x: Operand) -> bool:
    return isinstance(x, Const) and isinstance(x.value, (bool, int, float)) and \
        not isinstance(x.value, dtype)


def constant(b: Emitter, value, d: dtype | None = None) -> Value:
    d = d or D.literal_dtype(value)
    if d.is_fp8():
        value = fp8.round_constant(value, d)
    elif d.is_floating():
        value = float(value)
    elif d.is_bool():
        value = bool(value)
    else:
        value = int(value)
        if not d.min <= value <= d.max:
            raise ValueError(f"constant {value} is out of range for {d!r}")
    return b.emit("const", [], Type(d), value=value)


def to_value(b: Emitter, x: Operand) -> Value:
    if isinstance(x, Value):
        return x
    if not is_number(x):
        raise TypeError(f"{x.value!r} cannot be used as a kernel value")
    return constant(b, x.value)


def broadcast_shapes(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """Triton's (and NumPy's) broadcasting: scalars broadcast to anything; a block of lower
    rank gains leading axes of size 1; then axes broadcast where one side has size 1."""
    if a == b or not b:
        return a
    if not a:
        return b
    rank = max(len(a), len(b))
    a, b = (1,) * (rank - len(a)) + tuple(a), (1,) * (rank - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            raise ValueError(f"incompatible block shapes {list(a)} and {list(b)}")
        out.append(max(x, y))
    return tuple(out)


def splat(b: Emitter, v: Value, shape: tuple[int, ...]) -> Value:
    """`v` broadcast to `shape`: a scalar is splatted, a block's size-1 axes are repeated."""
    if v.type.shape == shape:
        return v
    if not v.type.is_block:
        return b.emit("splat", [v], Type(v.dtype, shape))
    if len(v.type.shape) > len(shape) or broadcast_shapes(v.type.shape, shape) != shape:
        raise ValueError(f"cannot broadcast a block of shape {list(v.type.shape)} to {list(shape)}")
    while len(v.type.shape) < len(shape):  # leading axes of size 1, as Triton adds them
        v = b.emit("expand_dims", [v], Type(v.dtype, (1,) + v.type.shape), axis=0)
    if v.type.shape == shape:
        return v
    return b.emit("broadcast", [v], Type(v.dtype, shape))


def cast(b: Emitter, x: Operand, to: dtype, bitcast: bool = False,
         rounding: str | None = None) -> Value:
    """`x` as `to`; `rounding="rtz"`: a narrowing float conversion rounded toward zero."""
    if rounding is not None:
        return b.emit("cast", [to_value(b, x)], to_value(b, x).type.with_dtype(to),
                      bitcast=False, rounding=rounding)
    if isinstance(x, Const):
        if to.is_ptr():  # an address written as a number
            return cast(b, to_value(b, x), to)
        return constant(b, x.value, to) if not bitcast else cast(b, to_value(b, x), to, True)
    if x.dtype == to:
        return x
    if x.dtype.is_ptr() or to.is_ptr():
        return pointer_cast(b, x, to)
    if bitcast and x.dtype.bits != to.bits:
        raise ValueError(f"bitcast needs equal widths, got {x.dtype!r} and {to!r}")
    fp8.check_cast(x.dtype, to, bitcast)
    return b.emit("cast", [x], x.type.with_dtype(to), bitcast=bitcast)


def pointer_cast(b: Emitter, x: Value, to) -> Value:
    """Triton's casts with pointers: pointer <-> 64-bit integer (the address), integer ->
    pointer, pointer -> pointer of another element type, pointer -> int1 (not null)."""
    src = x.dtype
    if to.is_ptr() and to.element_ty.is_ptr():
        raise TypeError(f"pointers to pointers ({to!r}) are not supported; keep addresses as "
                        "int64 and cast each one: tl.load(table + i).to(tl.pointer_type(...))")
    if src.is_ptr() and to.is_bool():
        return compare(b, "ne", cast(b, x, D.int64), constant(b, 0, D.int64))
    if src.is_ptr() and not to.is_ptr() and not (to.is_int() and to.bits == 64):
        raise TypeError(f"cannot cast {src!r} to {to!r}: a pointer converts to a 64-bit "
                        "integer (tl.int64, tl.uint64), int1 or another pointer type")
    if to.is_ptr() and not src.is_ptr() and not src.is_int():
        raise TypeError(f"cannot cast {src!r} to {to!r}: only integers (addresses) convert "
                        "to pointers")
    return b.emit("cast", [x], x.type.with_dtype(to), bitcast=False)


_FOLD = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv,
    "floordiv": operator.floordiv, "rem": operator.mod, "and": operator.and_,
    "or": operator.or_, "xor": operator.xor, "shl": operator.lshift, "shr": operator.rshift,
    "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge,
    "eq": operator.eq, "ne": operator.ne,
}


def _scalar_dtype(x: Operand) -> D.dtype | D.pointer_type:
    return x.dtype if isinstance(x, Value) else D.literal_dtype(x.value)


def _promote(b: Emitter, lhs: Operand, rhs: Operand, div_or_mod: bool,
             literal_rule: bool = True) -> tuple[Value, Value, dtype]:
    """Both operands converted to their computation type. With `literal_rule` (Triton's
    arithmetic), a literal beside a block of its kind or above does not take part and
    must fit the block's type; without it (comparisons, tl.minimum / maximum, tl.fma) a
    literal is a value of its own type, converted like one."""
    lt, rt = _scalar_dtype(lhs), _scalar_dtype(rhs)
    ct = D.computation_type(lt, literal_rule and isinstance(lhs, Const), rt,
                            literal_rule and isinstance(rhs, Const), div_or_mod)
    if not literal_rule:
        return _unify(b, _convert(b, lhs, ct), _convert(b, rhs, ct)) + (ct,)
    for side in (lhs, rhs):
        if isinstance(side, Const) and ct.kind == "uint" and side.value < 0:
            raise ValueError("cannot combine an unsigned value with a negative constant "
                             f"({side.value}); cast one of them explicitly")
    return _unify(b, cast(b, lhs, ct), cast(b, rhs, ct)) + (ct,)


def promote_pair(b: Emitter, lhs: Operand, rhs: Operand) -> tuple[Value, Value, dtype]:
    """Both operands in their common type and shape, literals typed as values of their own
    (Triton's binary_op_type_checking_impl: tl.clamp, tl.div_rn)."""
    return _promote(b, lhs, rhs, False, literal_rule=False)


def _convert(b: Emitter, x: Operand, to: dtype) -> Value:
    """`x` converted to `to`; a literal as Triton converts it: first made a value of its
    own type (0.1 is fp32's 0.1 even beside fp64), then cast (-1 as uint32 is 2**32 - 1)."""
    if isinstance(x, Value):
        return cast(b, x, to)
    own = D.literal_dtype(x.value)
    if to.is_floating():
        v = float(x.value)
        if own == D.float32:
            v = struct.unpack("f", struct.pack("f", v))[0]
        return constant(b, v, to)
    if to.is_bool():
        return constant(b, x.value != 0, to)
    v = int(x.value) % (1 << to.bits)  # integer casts wrap (the literal is an integer here)
    return constant(b, v - (1 << to.bits) if to.signed and v > to.max else v, to)


def _unify(b: Emitter, lhs: Value, rhs: Value) -> tuple[Value, Value]:
    shape = broadcast_shapes(lhs.type.shape, rhs.type.shape)
    return splat(b, lhs, shape), splat(b, rhs, shape)


def binary(b: Emitter, fn: str, lhs: Operand, rhs: Operand) -> Operand:
    """`lhs <fn> rhs` for fn in add sub mul div floordiv rem and or xor shl shr."""
    if is_number(lhs) and is_number(rhs):
        return Const(_FOLD[fn](lhs.value, rhs.value))
    lt, rt = _scalar_dtype(lhs), _scalar_dtype(rhs)
    if fn in ("add", "sub") and (lt.is_ptr() or rt.is_ptr()):
        return _pointer_arith(b, fn, lhs, rhs)
    if lt.is_ptr() or rt.is_ptr():
        raise TypeError(f"operator {fn} is not defined on pointers")
    if fn in ("and", "or", "xor"):
        if not (lt.is_int() and rt.is_int()):
            raise TypeError(f"invalid operands of type {lt!r} and {rt!r}: bitwise operators "
                            "need integer operands")  # Triton's words first
        a, c, t = _promote(b, lhs, rhs, False)
        return b.emit("binary", [a, c], a.type, fn=fn)
    if fn in ("shl", "shr"):
        if not (lt.is_int() and rt.is_int()):
            raise TypeError(f"invalid operands of type {lt!r} and {rt!r}: shifts need integer "
                            "operands")
        a, c, t = _promote(b, lhs, rhs, False)
        if fn == "shr":
            # Triton picks the shift from the block operand's own signedness (the left
            # one, or the right one under a literal), before promotion: int8 >> uint8
            # is an arithmetic shift of uint8 bits.
            fn = "ashr" if (lt if isinstance(lhs, Value) else rt).signed else "lshr"
        return b.emit("binary", [a, c], a.type, fn=fn)
    if fn == "floordiv":
        a, c, t = _promote(b, lhs, rhs, True)
        if not t.is_int():
            raise TypeError(f"// is only defined on integers in kernels, got {lt!r} and {rt!r}")
        return b.emit("binary", [a, c], a.type, fn="div")  # C semantics: rounds toward zero
    if fn == "div":
        a, c, t = _promote(b, lhs, rhs, True)
        fp8.check_arithmetic(t, "operator div")
        if t.is_int():  # int / int is float32 in Triton
            a, c, t = cast(b, a, D.float32), cast(b, c, D.float32), D.float32
        return b.emit("binary", [a, c], a.type, fn="div")
    a, c, t = _promote(b, lhs, rhs, fn == "rem")
    fp8.check_arithmetic(t, f"operator {fn}")
    if t == D.int1 and fn in ("add", "sub", "mul"):
        # 1-bit arithmetic wraps: + and - are exclusive or, * is and (1 + 1 == 0)
        fn = "and" if fn == "mul" else "xor"
    return b.emit("binary", [a, c], a.type, fn=fn)


def _pointer_arith(b: Emitter, fn: str, lhs: Operand, rhs: Operand) -> Value:
    if _scalar_dtype(rhs).is_ptr():
        if fn == "sub":
            raise TypeError("subtracting pointers is not supported")
        lhs, rhs = rhs, lhs
    if _scalar_dtype(rhs).is_ptr() or not _scalar_dtype(rhs).is_int():
        raise TypeError(f"a pointer offset must be an integer, got {_scalar_dtype(rhs)!r}")
    offset = to_value(b, rhs)
    if fn == "sub":
        offset = unary(b, "neg", offset)
    ptr, offset = _unify(b, lhs, offset)
    return b.emit("addptr", [ptr, offset], ptr.type)


def compare_constants(pred: str, lhs: Any, rhs: Any) -> bool:
    """Two compile-time values compared with Python's semantics."""
    return bool(_FOLD[pred](lhs, rhs))


def compare(b: Emitter, pred: str, lhs: Operand, rhs: Operand) -> Operand:
    if is_number(lhs) and is_number(rhs):
        return Const(_FOLD[pred](lhs.value, rhs.value))
    if _scalar_dtype(lhs).is_ptr() or _scalar_dtype(rhs).is_ptr():
        raise TypeError("comparing pointers is not supported (as in Triton); compare their "
                        "addresses: p.to(tl.int64) == q.to(tl.int64)")
    # Triton turns a literal into a value of its own type before comparing (no literal
    # rule here): `x_fp16 < 0.1` compares in fp32, `x_int8 == 300` in int32.
    a, c, _ = _promote(b, lhs, rhs, False, literal_rule=False)
    return b.emit("cmp", [a, c], a.type.with_dtype(D.int1), pred=pred)


def unary(b: Emitter, fn: str, x: Operand) -> Operand:
    if is_number(x):
        v = x.value
        return Const({"neg": operator.neg, "invert": operator.invert,
                      "not": operator.not_}[fn](v))
    x = to_value(b, x)
    if x.dtype.is_ptr():
        raise TypeError(f"operator {fn} is not defined on pointers")
    if fn == "invert":
        if not x.dtype.is_int():
            raise TypeError(f"~ needs an integer operand, got {x.dtype!r}")
        return b.emit("unary", [x], x.type, fn="invert")
    if fn == "not":
        return b.emit("unary", [truthy(b, x)], x.type.with_dtype(D.int1), fn="not")
    fp8.check_arithmetic(x.dtype, f"operator {fn}")
    return b.emit("unary", [x], x.type, fn=fn)


def truthy(b: Emitter, x: Operand) -> Operand:
    """x as int1 (x != 0), for conditions and the logical operators."""
    if isinstance(x, Const):
        return Const(bool(x.value))
    if x.dtype == D.int1:
        return x
    return compare(b, "ne", x, constant(b, 0, x.dtype))


def logical(b: Emitter, fn: str, lhs: Operand, rhs: Operand) -> Operand:
    """`and` / `or` (both sides are evaluated; kernels have no side effects in
    conditions).  On blocks, as Triton: elementwise on boolean blocks (& and |), which
    broadcast; a block of another type is Triton's error (it reinterprets the operands
    as int1, which only a 1-bit type can be)."""
    if any(isinstance(x, Value) and x.type.is_block for x in (lhs, rhs)):
        for x in (lhs, rhs):
            if isinstance(x, Value) and x.dtype.bits != 1:
                raise ValueError(f"Cannot bitcast data-type of size {x.dtype.bits} to "
                                 f"data-type of size 1: `{'and' if fn == 'land' else 'or'}` "
                                 "of blocks takes boolean blocks (compare first: x != 0)")
        a, c = _unify(b, to_value(b, truthy(b, lhs)), to_value(b, truthy(b, rhs)))
        return b.emit("binary", [a, c], a.type, fn="and" if fn == "land" else "or")
    lhs, rhs = truthy(b, lhs), truthy(b, rhs)
    if isinstance(lhs, Const) and isinstance(rhs, Const):
        return Const(lhs.value and rhs.value if fn == "land" else lhs.value or rhs.value)
    a, c = to_value(b, lhs), to_value(b, rhs)
    return b.emit("binary", [a, c], a.type, fn=fn)


# tl functions of Python numbers (tl.maximum(1, 2), tl.exp(1.0), tl.where(True, 1.0, 2.0))
# are scalar tensors in Triton, typed like literals (int32, fp32): not literals, so they take
# part in the promotion of what they meet (x_fp16 * tl.exp(1.0) is fp32).

def min_max(b: Emitter, fn: str, lhs: Operand, rhs: Operand,
            propagate_nan: bool = False) -> Operand:
    if is_number(lhs) and is_number(rhs):
        lhs, rhs = to_value(b, lhs), to_value(b, rhs)
    # As tl.minimum / tl.maximum: literals become values of their own type first (they
    # take part in promotion: maximum(x_fp16, 0.0) is fp32), bfloat16 goes to fp32.
    lhs, rhs = (_bf16_to_fp32(b, x) if isinstance(x, Value) else x for x in (lhs, rhs))
    a, c, t = _promote(b, lhs, rhs, False, literal_rule=False)
    fp8.check_arithmetic(t, f"tl.{fn}imum")
    if t.is_floating():
        fn = "f" + fn  # fminf / fmaxf: a NaN operand yields the other
        if propagate_nan:  # tl.PropagateNan.ALL: a NaN operand yields NaN
            fn += "_nan"
    return b.emit("binary", [a, c], a.type, fn=fn)


UMULHI_TYPES = (D.int32, D.int64, D.uint32, D.uint64)


def umulhi(b: Emitter, lhs: Operand, rhs: Operand) -> Value:
    """tl.umulhi: the high half of the double-width product, the bits of both operands
    read as unsigned whatever their type (as CUDA's __umulhi / __umul64hi). As Triton, a
    literal is first a value of its own type, and blocks must be 32- or 64-bit integers."""
    for x in (lhs, rhs):
        if isinstance(x, Value) and x.dtype not in UMULHI_TYPES:
            raise ValueError(f"tl.umulhi expects int32, int64, uint32 or uint64 operands, "
                             f"got {x.dtype!r}")
    if is_number(lhs) and is_number(rhs):
        lhs = to_value(b, lhs)
    a, c, t = _promote(b, lhs, rhs, False, literal_rule=False)
    if t not in UMULHI_TYPES:
        raise ValueError(f"tl.umulhi expects int32, int64, uint32 or uint64 operands, "
                         f"got {t!r}")
    return b.emit("binary", [a, c], a.type, fn="umulhi")


FLOAT_ONLY = {"exp", "exp2", "log", "log2", "sqrt", "sqrt_rn", "rsqrt", "sin", "cos", "floor", "ceil",
              "erf"}
# Triton's math takes fp32 / fp64 only (its _check_dtype); tilecc also takes 16-bit floats
# (computed in fp32, rounded once), and refuses integers with Triton's message
MATH_DTYPES = {fn: ("fp32", "fp64") for fn in FLOAT_ONLY}


def triton_dtype_name(d: dtype) -> str:
    """A dtype as Triton's messages name it: fp16, bf16, fp32, int32, uint8..."""
    return d.name


def math_unary(b: Emitter, fn: str, x: Operand) -> Operand:
    x = to_value(b, x)
    if fn in MATH_DTYPES and not x.dtype.is_floating():
        raise ValueError(f"tl.{fn}: expected dtype {list(MATH_DTYPES[fn])} but got "
                         f"{triton_dtype_name(x.dtype)}; cast it first, e.g. "
                         "x.to(tl.float32)")
    if fn == "abs" and x.dtype.kind in ("uint", "bool"):
        return x
    if fn == "abs" and x.dtype.is_fp8():  # as Triton: the sign bit cleared, no conversion
        bits = cast(b, x, D.uint8, bitcast=True)
        return cast(b, binary(b, "and", bits, constant(b, 0x7F, D.uint8)), x.dtype,
                    bitcast=True)
    fp8.check_arithmetic(x.dtype, f"tl.{fn}")
    return b.emit("unary", [x], x.type, fn=fn)


def where(b: Emitter, cond: Operand, x: Operand, y: Operand) -> Operand:
    if _scalar_dtype(x).is_ptr() or _scalar_dtype(y).is_ptr():
        return _where_pointers(b, cond, x, y)
    if isinstance(cond, Const) and not (is_number(x) and is_number(y)):
        # a constant condition picks a side, which still takes the promoted type and shape
        xv, yv, t = _promote(b, x, y, False)
        shape = broadcast_shapes(xv.type.shape, yv.type.shape)
        return splat(b, xv if cond.value else yv, shape)
    cond = truthy(b, to_value(b, cond) if isinstance(cond, Const) else cond)
    if is_number(x) and is_number(y):
        t = D.computation_type(D.literal_dtype(x.value), False, D.literal_dtype(y.value), False)
        xv, yv = constant(b, x.value, t), constant(b, y.value, t)
    else:
        xv, yv, t = _promote(b, x, y, False)
    shape = broadcast_shapes(cond.type.shape, xv.type.shape)
    cond, xv, yv = splat(b, cond, shape), splat(b, xv, shape), splat(b, yv, shape)
    return b.emit("where", [cond, xv, yv], xv.type)


def _where_pointers(b: Emitter, cond: Operand, x: Operand, y: Operand) -> Value:
    """A choice between pointers: of one type (as Triton: no promotion of pointers)."""
    if _scalar_dtype(x) != _scalar_dtype(y):
        raise TypeError(f"invalid operands of type {_scalar_dtype(x)} and {_scalar_dtype(y)}: "
                        "tl.where chooses between pointers of one type")
    cond = truthy(b, to_value(b, cond) if isinstance(cond, Const) else cond)
    shape = broadcast_shapes(cond.type.shape, broadcast_shapes(x.type.shape, y.type.shape))
    cond, xv, yv = splat(b, cond, shape), splat(b, x, shape), splat(b, y, shape)
    return b.emit("where", [cond, xv, yv], xv.type)


def _bf16_to_fp32(b: Emitter, x: Value) -> Value:
    return cast(b, x, D.float32) if x.dtype == D.bfloat16 else x


def fma(b: Emitter, x: Operand, y: Operand, z: Operand) -> Operand:
    if all(is_number(t) for t in (x, y, z)):
        x, y, z = (to_value(b, t) for t in (x, y, z))
    # tl.fma turns literals into values of their own type, then promotes pairwise
    xt, yt, zt = (_scalar_dtype(v) for v in (x, y, z))
    t = D.computation_type(D.computation_type(xt, False, yt, False), False, zt, False)
    if not t.is_floating():
        raise TypeError(f"tl.fma needs floating-point operands, got {t!r}")
    fp8.check_arithmetic(t, "tl.fma")
    xy_a, xy_b, zv = (_convert(b, v, t) for v in (x, y, z))
    shape = broadcast_shapes(broadcast_shapes(xy_a.type.shape, xy_b.type.shape), zv.type.shape)
    ops = [splat(b, v, shape) for v in (xy_a, xy_b, zv)]
    return b.emit("fma", ops, ops[0].type)
