"""Builtins of multi-dimensional blocks: creation, shape, reductions, scans, atomics.

Reductions and scans carry their combine function as a region traced from a @jit
function — the user's `combine_fn`, or one of `tilecc.language.standard`'s for `tl.sum`,
`tl.max`, ... — so the interpreter and the renderer see one definition of each.
"""

from __future__ import annotations

from typing import Any

from tilecc.language import dtypes as D
from tilecc.transpiler import semantic as S
from tilecc.transpiler.builtin_registry import constant, handles, kernel_value
from tilecc.transpiler.ir import Op, Region, Type, Value
from tilecc.transpiler.semantic import Const, HelperRef


def _ints(x: Any, what: str) -> tuple[int, ...]:
    """A constexpr int or (nested) tuple of ints → a flat tuple of ints."""
    v = x.value if isinstance(x, Const) else x
    if isinstance(v, Const):
        v = v.value
    if isinstance(v, int) and not isinstance(v, bool):
        return (v,)
    if isinstance(v, (tuple, list)):
        out: list[int] = []
        for item in v:
            out.extend(_ints(item, what))
        return tuple(out)
    raise TypeError(f"{what} must be constexpr integers, got {v!r}")


def _block(tracer, x: Any, what: str = "input") -> Value:
    v = kernel_value(tracer, x, what)
    if isinstance(v, Const) or not v.type.is_block:
        raise TypeError(f"{what} must be a block")
    return v


def _axis(axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise ValueError(f"invalid axis {axis}. Expected {-rank} <= axis < {rank}")
    return axis % rank


# --- creation and shape -------------------------------------------------------------------

@handles("zeros", "full")
def _full(tracer, name, shape, dtype, value=Const(0)):
    shape = _ints(shape, "shape")
    d = constant(dtype, "dtype")
    if not isinstance(d, D.dtype):
        raise TypeError(f"expected a dtype, got {d!r}")
    for n in shape:
        if n <= 0 or n & (n - 1):
            raise ValueError(f"block dimensions must be powers of 2, got {list(shape)}")
    scalar = S.cast(tracer.b, kernel_value(tracer, value, "value"), d)
    return S.splat(tracer.b, scalar, shape)


@handles("zeros_like")
def _zeros_like(tracer, name, input):
    x = _block(tracer, input)
    return S.splat(tracer.b, S.constant(tracer.b, 0, x.dtype), x.type.shape)


def expand_dims(b, x: Value, axis: int) -> Value:
    if not x.type.is_block:
        return S.splat(b, x, (1,))
    shape = x.type.shape
    axis = _axis(axis, len(shape) + 1)
    return b.emit("expand_dims", [x], Type(x.dtype, shape[:axis] + (1,) + shape[axis:]),
                  axis=axis)


@handles("expand_dims")
def _expand_dims(tracer, name, input, axis):
    x = kernel_value(tracer, input, "input")
    if isinstance(x, Const):
        x = S.to_value(tracer.b, x)
    # as Triton: every axis counts in the result's rank, each once, inserted in order
    axes = _ints(axis, "axis")
    rank = len(x.type.shape) + len(axes) if x.type.is_block else len(axes)
    normalized = [_axis(a, rank) for a in axes]
    if len(set(normalized)) != len(normalized):
        raise ValueError(f"expand_dims received duplicate axes, normalized axes = {normalized}")
    for a in sorted(normalized):
        x = expand_dims(tracer.b, x, a)
    return x


@handles("broadcast_to")
def _broadcast_to(tracer, name, input, shape):
    # a Python number is a scalar of its literal type, as Triton's broadcast_to takes it
    value = S.to_value(tracer.b, kernel_value(tracer, input, "input"))
    return S.splat(tracer.b, value, _ints(shape, "shape"))


@handles("broadcast")
def _broadcast(tracer, name, input, other):
    a, c = (S.to_value(tracer.b, kernel_value(tracer, v, "input")) for v in (input, other))
    shape = S.broadcast_shapes(a.type.shape, c.type.shape)
    return Const((S.splat(tracer.b, a, shape), S.splat(tracer.b, c, shape)))


def reshape(b, x: Value, shape: tuple[int, ...]) -> Value:
    if x.type.shape == shape:
        return x
    n = 1
    for s in shape:
        n *= s
    if n != x.type.numel:
        raise ValueError(f"cannot reshape a block of shape {list(x.type.shape)} to {list(shape)}")
    if x.owner is not None and x.owner.kind == "arange":
        # tl.arange(s, e).reshape(...) is s + each element's row-major position: index
        # arithmetic, recomputed where it is used instead of moved through shared memory
        flat = _flat_indices(b, shape)
        start = x.owner.attrs["start"]
        return S.binary(b, "add", flat, Const(start)) if start else flat
    return b.emit("reshape", [x], Type(x.dtype, shape))


@handles("reshape", "view")
def _reshape(tracer, name, input, shape, can_reorder=Const(False)):
    return reshape(tracer.b, _block(tracer, input), _ints(shape, "shape"))


@handles("ravel")
def _ravel(tracer, name, x, can_reorder):
    v = _block(tracer, x, "x")
    return reshape(tracer.b, v, (v.type.numel,))


@handles("trans", "permute")
def _permute(tracer, name, input, dims):
    x = _block(tracer, input)
    rank = len(x.type.shape)
    if dims.value:
        order = _ints(dims, "dims")
    elif name == "trans":  # as Triton: no dims swaps the last two axes
        if rank < 2:
            raise ValueError("tl.trans invoked with a 0- or 1-dimensional tensor")
        order = tuple(range(rank - 2)) + (rank - 1, rank - 2)
    else:
        raise TypeError("tl.permute needs the dims")
    if len(order) != rank:
        raise ValueError(f"permute dims must have the same length as input shape: got "
                         f"{list(order)} for a block of rank {rank}")
    if sorted(order) != list(range(rank)):
        raise ValueError(f"dims {list(order)} is not a permutation of the block's {rank} axes")
    if order == tuple(range(rank)):
        return x
    shape = tuple(x.type.shape[i] for i in order)
    return tracer.b.emit("permute", [x], Type(x.dtype, shape), order=order)


@handles("join")
def _join(tracer, name, a, b):
    x, y = (S.to_value(tracer.b, kernel_value(tracer, v, "input")) for v in (a, b))
    if x.dtype != y.dtype:
        raise TypeError(f"tl.join needs blocks of one dtype, got {x.dtype!r} and {y.dtype!r}")
    shape = S.broadcast_shapes(x.type.shape, y.type.shape)
    if not shape:  # two scalars: join them as blocks of one element, then drop that axis
        x, y = S.splat(tracer.b, x, (1,)), S.splat(tracer.b, y, (1,))
        pair = tracer.b.emit("join", [x, y], Type(x.dtype, (1, 2)))
        return tracer.b.emit("reshape", [pair], Type(x.dtype, (2,)))
    x, y = S.splat(tracer.b, x, shape), S.splat(tracer.b, y, shape)
    return tracer.b.emit("join", [x, y], Type(x.dtype, shape + (2,)))


@handles("split")
def _split(tracer, name, a):
    x = _block(tracer, a, "a")
    if x.type.shape[-1] != 2:
        raise ValueError(f"tl.split needs a last axis of size 2, got shape {list(x.type.shape)}")
    shape = x.type.shape[:-1]
    if not shape:  # a block of 2 splits into two scalars: split [1, 2], take each element
        pair = tracer.b.emit("reshape", [x], Type(x.dtype, (1, 2)))
        halves = _split(tracer, name, pair).value
        return Const(tuple(_only_element(tracer.b, h) for h in halves))
    results = [Value(Type(x.dtype, shape)), Value(Type(x.dtype, shape))]
    tracer.b.emit_op(Op("split", [x], results, tracer.b.loc))
    return Const(tuple(results))


def _only_element(b, x: Value) -> Value:
    """The element of a block of one, as a scalar: a reduction whose combine keeps `a`."""
    region = Region([Value(Type(x.dtype), "a"), Value(Type(x.dtype), "b")])
    region.yields = [region.args[0]]
    result = Value(Type(x.dtype, ()))
    b.emit_op(Op("reduce", [x], [result], b.loc, {"axis": 0, "combine": "first"}, [region]))
    return result


# --- reductions and scans ---------------------------------------------------------------------

def _combine_region(tracer, fn, dtypes: list[D.dtype], constexprs: dict) -> Region:
    """Trace `fn(a0, .., b0, ..)` on scalars into a region yielding one value per input."""
    b = tracer.b
    region = Region([Value(Type(d), f"{side}{i}" if len(dtypes) > 1 else side)
                     for side in ("a", "b") for i, d in enumerate(dtypes)])
    b.regions.append(region)
    try:
        out = tracer.inline(fn, list(region.args), {k: Const(v) for k, v in constexprs.items()},
                            tracer.current_call)
        items = list(out.value) if isinstance(out, Const) and isinstance(out.value, tuple) \
            else [out]
        if len(items) != len(dtypes):
            raise TypeError(f"combine function returned {len(items)} values for "
                            f"{len(dtypes)} inputs")
        region.yields = [S.cast(b, S.to_value(b, v if isinstance(v, (Value, Const)) else
                                               Const(v)), d) for v, d in zip(items, dtypes)]
    finally:
        b.regions.pop()
    return region


def _combine_fn(x: Any):
    ref = x.value if isinstance(x, Const) else x
    if isinstance(ref, HelperRef):
        return ref.fn
    raise TypeError("combine_fn must be a @tilecc.jit function")


def reduce_blocks(tracer, inputs: list[Value], axis, fn, constexprs: dict,
                  keep_dims: bool = False, kind: str = "reduce", reverse: bool = False,
                  in_order=None) -> list[Value]:
    """`fn` over `axis` (every axis: None).  `in_order`: a combine equal to `fn` where
    every element of its left operands comes before every one of its right operands
    along the axis (a reduction's second region: the renderer's fold of a thread's own
    elements, and the interpreter's tree, use it)."""
    b = tracer.b
    if axis is None:
        if kind == "scan":
            raise ValueError("scans need an axis")
        # Every axis, the last first: for an associative combine_fn that is the fold of the
        # elements in row-major order (what a reshape to one axis would give) without moving
        # the block through shared memory: each step needs only its own partials.  With
        # keep_dims each reduced axis stays, of size 1: shape (1,) * rank.
        for ax in reversed(range(len(inputs[0].type.shape))):
            inputs = reduce_blocks(tracer, inputs, ax, fn, constexprs, keep_dims,
                                   in_order=in_order)
        return inputs
    shape = inputs[0].type.shape
    for x in inputs[1:]:
        if x.type.shape != shape:
            raise ValueError("reduced blocks must have one shape")
    axis = _axis(axis, len(shape))
    region = _combine_region(tracer, fn, [x.dtype for x in inputs], constexprs)
    out_shape = shape if kind == "scan" else shape[:axis] + shape[axis + 1:]
    results = [Value(Type(x.dtype, out_shape)) for x in inputs]
    # the combine function's name, for readable names in the generated code
    attrs = {"axis": axis, "combine": fn.__name__.strip("_").replace("_combine", "")}
    if kind == "scan":
        attrs["reverse"] = reverse
    regions = [region]
    if in_order is not None and kind == "reduce":
        regions.append(_combine_region(tracer, in_order, [x.dtype for x in inputs], constexprs))
    b.emit_op(Op(kind, list(inputs), results, b.loc, attrs, regions))
    if keep_dims and kind == "reduce":
        results = [expand_dims(b, r, axis) if r.type.is_block else S.splat(b, r, (1,))
                   for r in results]
    return results


def _std(name: str):
    from tilecc.language import standard

    return getattr(standard, name).fn


def _axis_value(axis) -> int | None:
    v = axis.value if isinstance(axis, Const) else axis
    if v is None:
        return None
    if isinstance(v, tuple) and len(v) == 1:
        v = v[0]
    if not isinstance(v, int):
        raise TypeError(f"axis must be a constexpr int or None, got {v!r}")
    return v


def _indices(b, shape: tuple[int, ...], axis: int) -> Value:
    idx = b.emit("arange", [], Type(D.int32, (shape[axis],)), start=0, end=shape[axis])
    for d in range(len(shape)):
        if d != axis:
            idx = expand_dims(b, idx, d)
    return S.splat(b, idx, shape)


def _flat_indices(b, shape: tuple[int, ...]) -> Value:
    """The row-major position of each element of a block of `shape` (index arithmetic)."""
    flat, stride = None, 1
    for d in reversed(range(len(shape))):
        term = _indices(b, shape, d)
        if stride > 1:
            term = S.binary(b, "mul", term, Const(stride))
        flat = term if flat is None else S.binary(b, "add", flat, term)
        stride *= shape[d]
    return flat


def _summand(tracer, input, dtype, promote_bf16: bool) -> Value:
    """The block `tl.sum` / `tl.cumsum` add up: in `dtype` if given (tl.int1 and the
    narrow integers then wrap); else as Triton does, integers narrower than 32 bits in
    int32 / uint32 after their signedness (int1 counts as unsigned). `tl.cumsum` also
    takes bfloat16 to fp32; `tl.sum` adds bfloat16 in bfloat16."""
    x = _block(tracer, input)
    if promote_bf16 and x.dtype == D.bfloat16:
        x = S.cast(tracer.b, x, D.float32)
    out = constant(dtype, "dtype")
    if out is None and x.dtype.is_int() and x.dtype.bits < 32:
        out = D.int32 if x.dtype.signed else D.uint32
    return S.cast(tracer.b, x, out) if out is not None else x


@handles("sum")
def _sum(tracer, name, input, axis, keep_dims, dtype):
    x = _summand(tracer, input, dtype, promote_bf16=False)
    return reduce_blocks(tracer, [x], _axis_value(axis), _std("_sum_combine"), {},
                         bool(constant(keep_dims, "keep_dims")))[0]


def _min_max(tracer, name, input, axis, return_indices, tie_break_left, keep_dims):
    x = _block(tracer, input)
    keep = bool(constant(keep_dims, "keep_dims"))
    if x.dtype == D.bfloat16 or (x.dtype.bits < 32 and not constant(return_indices, "r")):
        # Triton reduces 16-bit floats in fp32 and narrow integers, unsigned ones too,
        # in int32 (with indices, only bfloat16 is widened)
        x = S.cast(tracer.b, x, D.float32 if x.dtype.is_floating() else D.int32)
    ax = _axis_value(axis)
    if not constant(return_indices, "return_indices"):
        fn = _std("_max_combine" if name in ("max", "argmax") else "_min_combine")
        return reduce_blocks(tracer, [x], ax, fn, {}, keep)[0]
    # axis=None: each element's row-major position, as if the block were one axis
    idx = _flat_indices(tracer.b, x.type.shape) if ax is None else \
        _indices(tracer.b, x.type.shape, _axis(ax, len(x.type.shape)))
    which = "_argmax_combine" if name in ("max", "argmax") else "_argmin_combine"
    values, indices = reduce_blocks(tracer, [x, idx], ax, _std(which),
                                    {"TIE_BREAK_LEFT": bool(constant(tie_break_left, "tie"))}, keep,
                                    in_order=_std(f"{which}_in_order"))
    return Const((values, indices))


@handles("max", "min")
def _max_min(tracer, name, input, axis, return_indices, return_indices_tie_break_left,
             keep_dims):
    return _min_max(tracer, name, input, axis, return_indices, return_indices_tie_break_left,
                    keep_dims)


@handles("argmax", "argmin")
def _arg(tracer, name, input, axis, tie_break_left, keep_dims):
    pair = _min_max(tracer, name, input, axis, Const(True), tie_break_left, keep_dims)
    return pair.value[1]


@handles("reduce")
def _reduce(tracer, name, input, axis, combine_fn, keep_dims):
    is_tuple = isinstance(input, Const) and isinstance(input.value, tuple)
    inputs = list(input.value) if is_tuple else [input]
    blocks = [_block(tracer, x) for x in inputs]
    out = reduce_blocks(tracer, blocks, _axis_value(axis), _combine_fn(combine_fn), {},
                        bool(constant(keep_dims, "keep_dims")))
    # a single block (a Value, no `.value`) gives a single result
    return Const(tuple(out)) if is_tuple else out[0]


def _scan(tracer, inputs, axis, fn, reverse) -> list[Value]:
    return reduce_blocks(tracer, inputs, _axis_value(axis), fn, {}, kind="scan",
                         reverse=bool(constant(reverse, "reverse")))


@handles("cumsum")
def _cumsum(tracer, name, input, axis, reverse, dtype):
    x = _summand(tracer, input, dtype, promote_bf16=True)
    return _scan(tracer, [x], axis, _std("_sum_combine"), reverse)[0]


@handles("cumprod")
def _cumprod(tracer, name, input, axis, reverse):
    x = _block(tracer, input)
    if x.dtype == D.bfloat16:  # as Triton: bfloat16 is promoted to fp32
        x = S.cast(tracer.b, x, D.float32)
    return _scan(tracer, [x], axis, _std("_prod_combine"), reverse)[0]


@handles("associative_scan")
def _associative_scan(tracer, name, input, axis, combine_fn, reverse):
    is_tuple = isinstance(input, Const) and isinstance(input.value, tuple)
    inputs = list(input.value) if is_tuple else [input]
    out = _scan(tracer, [_block(tracer, x) for x in inputs], axis, _combine_fn(combine_fn),
                reverse)
    return Const(tuple(out)) if is_tuple else out[0]  # same fix as _reduce


# --- atomics and barriers ------------------------------------------------------------------------

_ATOMIC_TYPES = {
    "add": ("i32", "u32", "i64", "u64", "fp16", "bf16", "fp32", "fp64"),
    "max": ("i32", "u32", "i64", "u64", "fp32", "fp64"),
    "min": ("i32", "u32", "i64", "u64", "fp32", "fp64"),
    "and": ("i32", "u32", "i64", "u64"), "or": ("i32", "u32", "i64", "u64"),
    "xor": ("i32", "u32", "i64", "u64"),
    "xchg": ("i32", "u32", "i64", "u64", "fp32", "fp64"),
    "cas": ("i16", "u16", "i32", "u32", "i64", "u64", "fp16", "bf16", "fp32", "fp64"),
}
_SEMS = ("acq_rel", "acquire", "release", "relaxed")
_SCOPES = ("gpu", "cta", "sys")


def _atomic_common(tracer, op: str, pointer, sem, scope):
    if not isinstance(pointer, Value) or not pointer.dtype.is_ptr():
        raise TypeError(f"tl.atomic_{op} needs a pointer or a block of pointers")
    elem = pointer.dtype.element_ty
    if elem.short not in _ATOMIC_TYPES[op]:
        raise TypeError(f"tl.atomic_{op} does not support {elem!r} (supported: "
                        f"{', '.join(_ATOMIC_TYPES[op])})")
    sem = constant(sem, "sem") or "acq_rel"
    scope = constant(scope, "scope") or "gpu"
    if sem not in _SEMS or scope not in _SCOPES:
        raise ValueError(f"sem must be one of {_SEMS} and scope one of {_SCOPES}")
    return elem, {"sem": sem, "scope": scope}


def atomic_rmw(tracer, name, pointer, val, mask, sem, scope):
    op = name[len("atomic_"):]
    elem, attrs = _atomic_common(tracer, op, pointer, sem, scope)
    b = tracer.b
    v = S.cast(b, kernel_value(tracer, val, "val"), elem)
    shape = S.broadcast_shapes(pointer.type.shape, v.type.shape)
    operands = [S.splat(b, pointer, shape), S.splat(b, v, shape)]
    if not (isinstance(mask, Const) and mask.value is None):
        m = S.truthy(b, kernel_value(tracer, mask, "mask"))
        operands.append(S.splat(b, S.to_value(b, m), shape))
    return b.emit("atomic", operands, Type(elem, shape), op=op, **attrs)


for _name in ("atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or",
              "atomic_xor", "atomic_xchg"):
    handles(_name)(atomic_rmw)


@handles("atomic_cas")
def _atomic_cas(tracer, name, pointer, cmp, val, sem, scope):
    elem, attrs = _atomic_common(tracer, "cas", pointer, sem, scope)
    b = tracer.b
    c = S.cast(b, kernel_value(tracer, cmp, "cmp"), elem)
    v = S.cast(b, kernel_value(tracer, val, "val"), elem)
    shape = S.broadcast_shapes(S.broadcast_shapes(pointer.type.shape, c.type.shape),
                               v.type.shape)
    operands = [S.splat(b, x, shape) for x in (pointer, c, v)]
    return b.emit("atomic_cas", operands, Type(elem, shape), **attrs)


@handles("debug_barrier")
def _barrier(tracer, name):
    tracer.b.emit("barrier", [], None)
    return Const(None)
