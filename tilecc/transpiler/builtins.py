"""Implementations of the `tl` builtins and value methods, as IR emission.

Each builtin's signature is its stub in `tilecc.language.core`; a call's arguments are
bound against that signature first, so argument errors read like Python's.  Handlers
receive the tracer (for `.b`, the emitter, and `.error`) and the bound arguments.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from tilecc.language import core as L
from tilecc.language import dtypes as D
from tilecc.transpiler import semantic as S
from tilecc.transpiler.builtin_registry import (HANDLERS, bind, constant, handles, kernel_value,
                                                not_supported)
from tilecc.transpiler.ir import Type, Value
from tilecc.transpiler.semantic import Const


def is_builtin(short_name: str) -> bool:
    return short_name in HANDLERS


def call_builtin(tracer, name: str, args: list, kwargs: dict, node: cst.Call) -> Any:
    short = name[3:] if name.startswith("tl.") else name
    if short == "constexpr":
        if len(args) != 1 or not isinstance(args[0], Const):
            raise tracer.error(node, "tl.constexpr() takes one compile-time value")
        return args[0]
    if short == "constexpr_type":  # as Triton's, compared with `N.type`
        if len(args) != 1 or kwargs or not isinstance(args[0], Const):
            raise tracer.error(node, "constexpr_type() takes one compile-time value")
        return Const(L.constexpr_type(args[0].value))
    if short == "pointer_type":
        if len(args) != 1 or not isinstance(args[0], Const) or \
                not isinstance(args[0].value, (D.dtype, D.pointer_type)):
            raise tracer.error(node, "tl.pointer_type() takes a dtype")
        return Const(D.pointer_type(args[0].value))
    if short == "block_type":  # tl.block_type(tl.float16, [16, 16]), at compile time
        if len(args) != 2 or kwargs or not all(isinstance(a, Const) for a in args) or \
                not isinstance(args[0].value, D.dtype):
            raise tracer.error(node, "tl.block_type() takes a dtype and a shape")
        return Const(D.block_type(args[0].value, list(args[1].value)))
    handler = HANDLERS.get(short)
    if handler is None:
        raise tracer.error(node, not_supported(short), "AttributeError")
    stub, what = _stub(short)
    try:
        bound = bind(stub, args, kwargs, what)
    except TypeError as e:
        raise tracer.error(node, str(e), "TypeError") from None
    bound.apply_defaults()
    arguments = {k: v if isinstance(v, (Value, Const)) else  # defaults: tl.constexpr(0)...
                 Const(v.value if isinstance(v, L.constexpr) else v)
                 for k, v in bound.arguments.items()}
    return handler(tracer, short, **arguments)


def _stub(short: str):
    """The declaration of builtin `short` and how errors name it: `tl.sum()`,
    `libdevice.tanh()`, `tl.extra.cuda.smid()`."""
    prefix, _, name = short.rpartition(".")
    if prefix == "libdevice":
        from tilecc.language.extra import libdevice

        return getattr(libdevice, name), f"{short}()"
    if prefix in ("cuda", "hip"):
        import importlib

        return getattr(importlib.import_module(f"tilecc.language.extra.{prefix}"), name), \
            f"tl.extra.{short}()"
    return getattr(L, short), f"tl.{short}()"


@handles("program_id", "num_programs")
def _program_geometry(tracer, name, axis):
    axis = constant(axis, "axis")
    if axis not in (0, 1, 2):
        raise ValueError(f"{name} axis must be 0, 1, or 2 but got {axis}")
    return tracer.b.emit(name, [], Type(D.int32), axis=axis)


@handles("arange")
def _arange(tracer, name, start, end):
    start, end = constant(start, "tl.arange start"), constant(end, "tl.arange end")
    if not (isinstance(start, int) and isinstance(end, int)):
        raise TypeError("tl.arange bounds must be integers")
    n = end - start
    if n <= 0 or n & (n - 1):
        raise ValueError(f"tl.arange(start, end) needs end - start to be a positive power of 2, "
                         f"got {n}")
    if n > 1 << 20:
        raise ValueError(f"a block of {n} elements is too large (at most 2**20)")
    return tracer.b.emit("arange", [], Type(D.int32, (n,)), start=start, end=end)


@handles("load")
def _load(tracer, name, pointer, mask, other, boundary_check, padding_option, cache_modifier,
          eviction_policy, volatile):
    b = tracer.b
    if BP.is_block_pointer(pointer):
        return BP.load(tracer, BP.unwrap(pointer), mask, other, boundary_check, padding_option)
    _no_block_pointer_options(boundary_check, padding_option)
    if not isinstance(pointer, Value) or not pointer.dtype.is_ptr():
        raise ValueError("tl.load needs a pointer or a block of pointers as its first argument")
    elem = pointer.dtype.element_ty
    operands = [pointer]
    if isinstance(mask, Const) and mask.value is None:
        if not (isinstance(other, Const) and other.value is None):
            raise ValueError("tl.load: `other` needs a `mask`")
    else:
        m = S.truthy(b, kernel_value(tracer, mask, "mask"))
        if isinstance(m, Const):
            if not m.value:  # loads nothing: `other` (0 when there is none), as Triton
                fill = Const(0) if isinstance(other, Const) and other.value is None else \
                    kernel_value(tracer, other, "other")
                return S.splat(b, S.cast(b, fill, elem), pointer.type.shape)
        else:
            shape = _load_shape(pointer.type.shape, m.type.shape)
            if shape is None:
                raise _at_argument(tracer, 1, "mask", f"tl.load: the mask's shape "
                                   f"{list(m.type.shape)} does not match the pointers' shape "
                                   f"{list(pointer.type.shape)}: give a mask of the pointers' "
                                   "shape (or one that broadcasts with it)")
            if shape != pointer.type.shape:  # as Triton, the pointers broadcast to the mask
                pointer = operands[0] = S.splat(b, pointer, shape)
            operands.append(S.splat(b, m, shape))
            if not (isinstance(other, Const) and other.value is None):
                o = S.cast(b, kernel_value(tracer, other, "other"), elem)
                operands.append(S.splat(b, o, shape))
    return b.emit("load", operands, pointer.type.with_dtype(elem))


def _fits(shape: tuple[int, ...], ptr_shape: tuple[int, ...]) -> bool:
    """A stored value or mask of `shape` goes with pointers of `ptr_shape`: a scalar, or a
    block that broadcasts to the pointers' shape (NumPy's rules, as Triton's)."""
    return not shape or _load_shape(ptr_shape, shape) == ptr_shape


def _load_shape(ptr_shape: tuple[int, ...], mask_shape: tuple[int, ...]) -> tuple | None:
    """The shape pointers and a load's mask broadcast to (None where they do not)."""
    if not mask_shape:
        return ptr_shape
    if not ptr_shape:
        return None  # a block mask with a single pointer
    try:
        return S.broadcast_shapes(ptr_shape, mask_shape)
    except ValueError:
        return None


def _at_argument(tracer, index: int, keyword: str, message: str) -> Exception:
    """An error at argument `index` (or `keyword`) of the call being traced, where the
    caret is most useful; at the call where that argument is not written out."""
    call = tracer.current_call
    for i, a in enumerate(call.args if call is not None else ()):
        if (a.keyword is None and i == index) or \
                (a.keyword is not None and a.keyword.value == keyword):
            return tracer.error(a.value, message)
    return ValueError(message)


def _no_block_pointer_options(boundary_check, padding_option=Const("")) -> None:
    if (boundary_check.value if isinstance(boundary_check, Const) else True) or \
            (padding_option.value if isinstance(padding_option, Const) else True):
        raise ValueError("`padding_option` and `boundary_check` are only for block pointers "
                         "(tl.make_block_ptr): the bounds of a block of pointers are not known; "
                         "use `mask` (and `other`)")


def check_writable(ptr: D.pointer_type) -> None:
    """Refuse a store through a pointer to read-only data (a `tl.const` parameter's)."""
    if ptr.is_const():
        raise ValueError(f"Cannot store to a constant pointer ({ptr}: its parameter is "
                         "annotated tl.const)")


@handles("store")
def _store(tracer, name, pointer, value, mask, boundary_check, cache_modifier, eviction_policy):
    b = tracer.b
    if BP.is_block_pointer(pointer):
        BP.store(tracer, BP.unwrap(pointer), value, mask, boundary_check)
        return Const(None)
    _no_block_pointer_options(boundary_check)
    if not isinstance(pointer, Value) or not pointer.dtype.is_ptr():
        raise ValueError("tl.store needs a pointer or a block of pointers as its first argument")
    check_writable(pointer.dtype)
    elem = pointer.dtype.element_ty
    v = S.cast(b, kernel_value(tracer, value, "value"), elem)
    shape, ptr_shape = v.type.shape, pointer.type.shape
    if v.type.is_block and not _fits(shape, ptr_shape):
        if not pointer.type.is_block:
            raise _at_argument(tracer, 1, "value", "tl.store of a block through a single "
                               "pointer; add offsets (ptr + tl.arange(...)) to make a block "
                               "of pointers")
        raise _at_argument(tracer, 1, "value", f"tl.store: the value's shape {list(shape)} "
                           f"does not match the pointers' shape {list(ptr_shape)}: store a "
                           "value of the pointers' shape (or one that broadcasts to it), or "
                           "build pointers of the value's shape")
    operands = [pointer, S.splat(b, v, pointer.type.shape)]
    if not (isinstance(mask, Const) and mask.value is None):
        m = S.truthy(b, kernel_value(tracer, mask, "mask"))
        if isinstance(m, Const):
            if not m.value:
                return Const(None)
        else:
            if not _fits(m.type.shape, pointer.type.shape):
                raise _at_argument(tracer, 2, "mask", f"tl.store: the mask's shape "
                                   f"{list(m.type.shape)} does not match the pointers' shape "
                                   f"{list(pointer.type.shape)}: give a mask of the pointers' "
                                   "shape (or one that broadcasts to it)")
            operands.append(S.splat(b, m, pointer.type.shape))
    b.emit("store", operands, None)
    return Const(None)


@handles("where")
def _where(tracer, name, condition, x, y):
    return S.where(tracer.b, kernel_value(tracer, condition, "condition"), kernel_value(tracer, x, "x"),
                   kernel_value(tracer, y, "y"))


@handles("minimum", "maximum")
def _min_max(tracer, name, x, y, propagate_nan):
    from tilecc.transpiler.builtins_math import propagates_nan

    fn = "min" if name == "minimum" else "max"
    return S.min_max(tracer.b, fn, kernel_value(tracer, x, "x"), kernel_value(tracer, y, "y"),
                     propagates_nan(propagate_nan))


@handles("cast")
def _cast(tracer, name, input, dtype, fp_downcast_rounding, bitcast):
    to = constant(dtype, "dtype")
    if isinstance(to, D.block_type):  # as Triton: a block type converts to its element type
        to = to.scalar
    if not isinstance(to, (D.dtype, D.pointer_type)):
        raise TypeError(f"expected a dtype, got {to!r}")
    x = kernel_value(tracer, input, "input")
    bitcast = bool(constant(bitcast, "bitcast"))
    rounding = constant(fp_downcast_rounding, "fp_downcast_rounding")
    src = x.dtype if isinstance(x, Value) else D.literal_dtype(x.value)
    # Triton's order: a bitcast never reads the rounding mode, and a cast to the type the
    # value already has is a no-op before the rounding mode is checked
    if rounding is not None and not bitcast and src != to:  # rtne is what casts do
        if rounding not in ("rtne", "rtz"):
            raise ValueError(f"fp_downcast_rounding must be 'rtne' or 'rtz', got {rounding!r}")
        if not (src.is_floating() and to.is_floating() and to.bits < src.bits):
            raise ValueError("fp_downcast_rounding should be set only for truncating fp "
                             f"conversions. Source scalar type is {src} and destination type "
                             f"is {to}")
        if rounding == "rtz":
            return S.cast(tracer.b, x, to, rounding="rtz")
    return S.cast(tracer.b, x, to, bitcast)


@handles("add", "sub", "mul")
def _arithmetic(tracer, name, x, y, sanitize_overflow):
    constant(sanitize_overflow, "sanitize_overflow")  # Triton's check: none in tilecc (nor for +)
    return S.binary(tracer.b, name, kernel_value(tracer, x, "x"), kernel_value(tracer, y, "y"))


@handles("fma")
def _fma(tracer, name, x, y, z):
    return S.fma(tracer.b, kernel_value(tracer, x, "x"), kernel_value(tracer, y, "y"), kernel_value(tracer, z, "z"))


@handles("cdiv")
def _cdiv(tracer, name, x, div):
    b = tracer.b
    x, div = kernel_value(tracer, x, "x"), kernel_value(tracer, div, "div")
    return S.binary(b, "floordiv", S.binary(b, "sub", S.binary(b, "add", x, div), Const(1)), div)


@handles("sigmoid")
def _sigmoid(tracer, name, x):
    # Triton's definition, operator by operator, so types follow its rules exactly
    # (sigmoid of fp16 is fp32, because `1 / half` divides in fp32).
    b = tracer.b
    e = S.math_unary(b, "exp", S.unary(b, "neg", kernel_value(tracer, x, "x")))
    return S.binary(b, "div", Const(1), S.binary(b, "add", Const(1), e))


@handles("umulhi")
def _umulhi(tracer, name, x, y):
    return S.umulhi(tracer.b, kernel_value(tracer, x, "x"), kernel_value(tracer, y, "y"))


@handles("to_tensor")
def _to_tensor(tracer, name, x):
    return S.to_value(tracer.b, kernel_value(tracer, x, "x"))


for _name in L.UNARY_MATH:
    handles(_name)(lambda tracer, name, x: S.math_unary(tracer.b, name, kernel_value(tracer, x, "x")))


@handles("static_range", "range")
def _range_outside_for(tracer, name, **_):
    raise TypeError(f"tl.{name}() can only be used as a `for` loop's range")


@handles("static_assert")
def _static_assert(tracer, name, cond, msg):
    if not isinstance(cond, Const):
        raise NotImplementedError("tl.static_assert needs a compile-time condition (one that "
                                  "depends on constexprs only); use tl.device_assert for "
                                  "run-time checks")
    if not cond.value:
        from tilecc.errors import CompileTimeAssertionFailure  # Triton's class for it

        raise CompileTimeAssertionFailure(
            f"static assertion failed: {constant(msg, 'msg')}" if msg.value
            else "static assertion failed", tracer.b.loc)
    return Const(None)


@handles("device_assert")
def device_assert(tracer, name, cond, msg, mask):
    msg = constant(msg, "msg") if isinstance(msg, Const) else ""
    c = S.truthy(tracer.b, kernel_value(tracer, cond, "cond"))
    if not (isinstance(mask, Const) and mask.value is None):  # checked only where mask holds
        masked_off = S.unary(tracer.b, "not", kernel_value(tracer, mask, "mask"))
        c = S.truthy(tracer.b, S.binary(tracer.b, "or", c, masked_off))
    if isinstance(c, Const):
        if not c.value:
            raise ValueError(f"assertion is always false: {msg}")
        return Const(None)
    tracer.b.emit("device_assert", [c], None, msg=str(msg or "device assertion failed"))
    return Const(None)


@handles("multiple_of", "max_contiguous", "max_constancy")
def _hint(tracer, name, input, values):
    """A promise about `input`, one value per axis (a single int for a scalar or a 1-D
    block), attached to the value itself as Triton sets it on the op that defines the
    value: the call returns `input`, and a hint written as a statement, its result
    unused, holds as well (for every use of the value, before the call too)."""
    v = kernel_value(tracer, input, "input")
    per_axis = _hint_values(name, values)
    rank = len(v.type.shape) if isinstance(v, Value) else 0
    if len(per_axis) != max(1, rank):
        raise ValueError(f"tl.{name}: {len(per_axis)} value{'s' * (len(per_axis) != 1)} for "
                         f"{'a scalar' if not rank else f'a {rank}-D block'}: give one per "
                         f"axis ({max(1, rank)}), e.g. tl.{name}(x, "
                         f"{list(per_axis[:1]) * max(1, rank)})")
    if isinstance(v, Value):
        v.hints = {**(v.hints or {}), name: per_axis}
    return v


def _hint_values(name: str, values) -> tuple[int, ...]:
    """The per-axis values of a hint: an int, or a tuple / list of ints (constexprs)."""
    raw = values.value if isinstance(values, Const) else values
    items = list(raw) if isinstance(raw, (tuple, list)) else [raw]
    out = []
    for i, item in enumerate(items):
        item = item.value if isinstance(item, Const) else item
        if not isinstance(item, int) or isinstance(item, bool):
            raise TypeError(f"tl.{name}: values element {i} must be a constexpr int, got "
                            f"{item!r}" if not isinstance(item, Value) else
                            f"tl.{name}: values element {i} must be a constexpr int, not a "
                            "value known only at run time")
        if item <= 0:
            raise ValueError(f"tl.{name}: values must be positive, got {item}")
        out.append(item)
    return tuple(out)


def call_method(tracer, value: Value, name: str, args: list, kwargs: dict, node: cst.Call):
    if name == "to":
        def to(dtype, fp_downcast_rounding=None, bitcast=False):
            return dtype, fp_downcast_rounding, bitcast
        try:
            bound = bind(to, args, kwargs, ".to()")
            dtype, rounding, bitcast = to(*bound.args, **bound.kwargs)
        except TypeError as e:
            raise tracer.error(node, str(e), "TypeError") from None
        return _cast(tracer, "cast", value, dtype, *(v if isinstance(v, (Const, Value)) else
                                                      Const(v) for v in (rounding, bitcast)))
    if isinstance(value, TD.TensorDescriptor):
        return TD.call(tracer, value, name, args, kwargs)
    return builtins_lang.call_method(tracer, value, name, args, kwargs, node, call_builtin)


from tilecc.transpiler import builtins_blocks  # noqa: E402,F401  (registers its handlers)
from tilecc.transpiler import builtins_dot  # noqa: E402,F401  (registers its handlers)
from tilecc.transpiler import builtins_sort  # noqa: E402,F401  (registers its handlers)
from tilecc.transpiler import builtins_block_ptr as BP  # noqa: E402  (registers its handlers)
from tilecc.transpiler import builtins_descriptor as TD  # noqa: E402  (registers its handlers)
from tilecc.transpiler import builtins_asm  # noqa: E402,F401  (registers its handlers)
from tilecc.transpiler import builtins_math  # noqa: E402,F401  (registers its handlers)
from tilecc.transpiler import builtins_lang  # noqa: E402,F401  (registers its handlers)
from tilecc.transpiler import builtins_vendor  # noqa: E402,F401  (registers its handlers)
