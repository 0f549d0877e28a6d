"""Builtins that reorder a block's elements: sort, topk, bitonic_merge, flip, interleave,
cat, gather, histogram; the integer reductions xor_sum and reduce_or; swizzle2d; and
map_elementwise (a scalar function run per element, as a region of its own).

Sort, topk and bitonic_merge are built as Triton's standard library writes them: the
block is reshaped into a hypercube of 2s, and each compare-and-swap finds an element's
partner along one axis of the cube with an xor reduction (a warp shuffle, or an exchange
in registers, where the layout puts the pair).  Building the same network out of the same
operations gives Triton's results bit for bit, ties and NaNs included (a comparison with
NaN is false, so a NaN can take its partner's place), on the interpreter and the GPU
alike.  Flip, cat and gather move data once through shared memory (their own ops);
histogram counts in shared memory.
"""

from __future__ import annotations

from tilecc.language import dtypes as D
from tilecc.transpiler import semantic as S
from tilecc.transpiler.builtin_registry import constant, handles, kernel_value
from tilecc.transpiler.builtins_blocks import (
    _axis, _axis_value, _block, _min_max, _std, expand_dims, reduce_blocks, reshape)
from tilecc.transpiler.ir import Op, Region, Type, Value
from tilecc.transpiler.semantic import Const, HelperRef


def _log2(n: int, what: str) -> int:
    if n <= 0 or n & (n - 1):
        raise ValueError(f"{what} must be a power of 2, got {n}")
    return n.bit_length() - 1


def _signed_int(bits: int) -> D.dtype:
    return {1: D.int1, 8: D.int8, 16: D.int16, 32: D.int32, 64: D.int64}[bits]


def _xor_sum(tracer, x: Value, axis: int | None, keep_dims: bool) -> Value:
    return reduce_blocks(tracer, [x], axis, _std("_xor_combine"), {}, keep_dims)[0]


# --- the bitonic network (Triton's standard.py, step for step) ---------------------------

def _indicator(b, n_dims: int, j: int) -> Value:
    """0 / 1 by bit `j` of an element's index in the cube: arange(0, 2) along axis
    n_dims-1-j, size 1 along the others."""
    ar = b.emit("arange", [], Type(D.int32, (2,)), start=0, end=2)
    axis = n_dims - 1 - j
    # Triton reshapes [2] to that shape; size-1 axes added one by one give the same block
    # as index arithmetic, which the layouts pass recomputes in place instead of moving
    for d in range(n_dims):
        if d != axis:
            ar = expand_dims(b, ar, d)
    return ar


def _compare_and_swap(tracer, x: Value, flip, i: int) -> Value:
    """Each element against its partner across bit `i` of its index: the left one keeps
    the smaller, the right one the larger (reversed where `flip` is 1)."""
    b = tracer.b
    n_dims = _log2(x.type.numel, "the block's size")
    ix = _named(S.cast(b, x, _signed_int(x.dtype.primitive_bitwidth), bitcast=True), "bits")
    # the pair's xor, xor-ed with an element, gives its partner
    iy = S.binary(b, "xor", ix, _xor_sum(tracer, ix, n_dims - 1 - i, True))
    y = _named(S.cast(b, iy, x.dtype, bitcast=True), "partner")
    swap = S.compare(b, "ne", S.compare(b, "gt", x, y),
                     S.binary(b, "xor", flip, _indicator(b, n_dims, i)))
    return _named(S.where(b, swap, y, x), "cube")


def _named(v: Value, name: str) -> Value:
    """Name a step of the network in the generated code (`cube`, `partner`, ...), where
    the value is not already a user's."""
    if v.name is None and v.owner is not None:
        v.name = name
    return v


def _merge_hypercube(tracer, x: Value, stage: int, order: int) -> Value:
    """`stage` rounds of compare-and-swap: order 0 ascending, 1 descending, 2 alternating
    by bit `stage` of the index (what the next stage merges)."""
    flip = _indicator(tracer.b, _log2(x.type.numel, "size"), stage) if order == 2 \
        else Const(order)
    for i in range(stage):
        x = _compare_and_swap(tracer, x, flip, stage - 1 - i)
    return x


def _last_dim(x: Value, dim) -> int:
    rank = len(x.type.shape)
    d = rank - 1 if _axis_value(dim) is None else _axis_value(dim)
    if d != rank - 1:  # Triton's own restriction and message
        raise ValueError("only minor dimension is currently supported")
    return d


def _sort_impl(tracer, x: Value, k: int | None, dim, descending: bool) -> Value:
    b = tracer.b
    d = _last_dim(x, dim)
    log_n = _log2(x.type.shape[d], "the sorted axis' length")
    log_k = log_n if k is None else _log2(k, "k")
    if log_k > log_n:
        raise ValueError(f"k ({k}) must not exceed the axis' length ({x.type.shape[d]})")
    n_dims = _log2(x.type.numel, "the block's size")
    h = _named(reshape(b, x, (2,) * n_dims if n_dims else (1,)), "cube")
    for i in range(1, log_k + 1):
        h = _merge_hypercube(tracer, h, i, 2 if i < log_n else int(descending))
    # top k: keep the larger (smaller) half of each pair of sorted runs, merge, repeat
    for i in range(log_k + 1, log_n + 1):
        axis = _log2(h.type.numel, "size") - 1 - log_k
        h = _min_max(tracer, "max" if descending else "min", h, Const(axis), Const(False),
                     Const(True), Const(False))
        h = _merge_hypercube(tracer, h, log_k, 2 if i < log_n else int(descending))
    return reshape(b, h, x.type.shape[:-1] + (1 << log_k,))


def _sortable(tracer, x, what: str = "x") -> Value:
    v = _block(tracer, x, what)
    if v.dtype.is_ptr():
        raise TypeError("cannot sort a block of pointers")
    return v


@handles("sort")
def _sort(tracer, name, x, dim, descending):
    return _sort_impl(tracer, _sortable(tracer, x), None, dim,
                      bool(constant(descending, "descending")))


@handles("topk")
def _topk(tracer, name, x, k, dim):
    kk = constant(k, "k")
    if not isinstance(kk, int) or isinstance(kk, bool):
        raise TypeError(f"k must be a constexpr int, got {kk!r}")
    return _sort_impl(tracer, _sortable(tracer, x), kk, dim, True)


@handles("bitonic_merge")
def _bitonic_merge(tracer, name, x, dim, descending):
    v = _sortable(tracer, x)
    _last_dim(v, dim)
    n = _log2(v.type.shape[-1], "the merged axis' length")
    h = reshape(tracer.b, v, (2,) * _log2(v.type.numel, "the block's size") or (1,))
    h = _merge_hypercube(tracer, h, n, int(bool(constant(descending, "descending"))))
    return reshape(tracer.b, h, v.type.shape)


# --- flip, interleave, cat -------------------------------------------------------------

@handles("flip")
def _flip(tracer, name, x, dim):
    v = _block(tracer, x, "x")
    rank = len(v.type.shape)
    d = _axis_value(dim)
    d = _axis(rank - 1 if d is None else d, rank)
    _log2(v.type.shape[d], "the flipped axis' length")
    if v.type.shape[d] == 1:
        return v
    return tracer.b.emit("flip", [v], v.type, axis=d)


@handles("interleave")
def _interleave(tracer, name, a, b):
    from tilecc.transpiler.builtins_blocks import _join

    c = _join(tracer, "join", a, b)
    if len(c.type.shape) == 1:  # two scalars
        return c
    return reshape(tracer.b, c, c.type.shape[:-2] + (2 * c.type.shape[-2],))


@handles("cat")
def _cat(tracer, name, input, other, can_reorder):
    if not constant(can_reorder, "can_reorder"):
        raise ValueError("current implementation of `cat` always may reorder elements: "
                         "pass can_reorder=True (tilecc keeps the order, input then other)")
    x, y = _block(tracer, input), _block(tracer, other, "other")
    if len(x.type.shape) != 1 or len(y.type.shape) != 1:
        raise ValueError("tl.cat joins 1-D blocks; for other ranks use tl.join and "
                         "tl.reshape")
    if x.dtype != y.dtype:
        raise TypeError(f"tl.cat needs blocks of one dtype, got {x.dtype!r} and {y.dtype!r}")
    n = x.type.shape[0] + y.type.shape[0]
    _log2(n, "tl.cat's result length")
    return tracer.b.emit("cat", [x, y], Type(x.dtype, (n,)))


# --- gather, histogram ------------------------------------------------------------------

@handles("gather")
def _gather(tracer, name, src, index, axis):
    s, i = _block(tracer, src, "src"), _block(tracer, index, "index")
    if not i.dtype.is_int():
        raise TypeError(f"index must be an integer tensor, got {i.dtype!r}")
    rank = len(s.type.shape)
    if len(i.type.shape) != rank:
        raise ValueError("source and index tensors must have the same rank")
    ax = constant(axis, "axis")
    if not isinstance(ax, int) or not -rank <= ax < rank:
        raise ValueError(f"gather axis {ax} must be < source rank ({rank})")
    ax %= rank
    for d in range(rank):
        if d != ax and i.type.shape[d] != s.type.shape[d]:
            raise ValueError(f"index dim {d} must match the corresponding source dim")
    return tracer.b.emit("gather", [s, i], Type(s.dtype, i.type.shape), axis=ax)


@handles("histogram")
def _histogram(tracer, name, input, num_bins, mask):
    x = _block(tracer, input)
    if len(x.type.shape) != 1:
        raise ValueError("histogram only supports 1D input")
    if not x.dtype.is_int():
        raise TypeError("histogram only supports integer input")
    bins = constant(num_bins, "num_bins")
    if not isinstance(bins, int) or isinstance(bins, bool) or bins <= 0:
        raise ValueError(f"num_bins must be a positive constexpr int, got {bins!r}")
    _log2(bins, "num_bins")
    operands = [x]
    if not (isinstance(mask, Const) and mask.value is None):
        m = S.to_value(tracer.b, kernel_value(tracer, mask, "mask"))
        if m.dtype != D.int1:
            raise ValueError("Mask must have boolean scalar type")
        operands.append(S.splat(tracer.b, m, x.type.shape))
    return tracer.b.emit("histogram", operands, Type(D.int32, (bins,)), num_bins=bins)


# --- integer reductions, swizzle2d ------------------------------------------------------

def _int_reduction(tracer, name, input, axis, keep_dims, combine: str):
    x = _block(tracer, input)
    if not x.dtype.is_int():
        raise TypeError(f"{name} only supported for integers")
    return reduce_blocks(tracer, [x], _axis_value(axis), _std(combine), {},
                         bool(constant(keep_dims, "keep_dims")))[0]


@handles("xor_sum")
def _xor_sum_builtin(tracer, name, input, axis, keep_dims):
    return _int_reduction(tracer, name, input, axis, keep_dims, "_xor_combine")


@handles("reduce_or")
def _reduce_or(tracer, name, input, axis, keep_dims):
    return _int_reduction(tracer, name, input, axis, keep_dims, "_or_combine")


@handles("swizzle2d")
def _swizzle2d(tracer, name, i, j, size_i, size_j, size_g):
    """Triton's arithmetic: row-major (i, j) of a size_i × size_j grid → column-major
    within groups of size_g rows (the last group may have fewer)."""
    b = tracer.b
    vals = [kernel_value(tracer, v, w) for v, w in
            ((i, "i"), (j, "j"), (size_i, "size_i"), (size_j, "size_j"), (size_g, "size_g"))]
    i, j, size_i, size_j, size_g = vals
    ij = S.binary(b, "add", S.binary(b, "mul", i, size_j), j)
    size_gj = S.binary(b, "mul", size_g, size_j)
    off_i = S.binary(b, "mul", S.binary(b, "floordiv", ij, size_gj), size_g)
    size_g = S.min_max(b, "min", S.binary(b, "sub", size_i, off_i), size_g)
    ij = S.binary(b, "rem", ij, size_gj)
    new_i = S.binary(b, "add", off_i, S.binary(b, "rem", ij, size_g))
    new_j = S.binary(b, "floordiv", ij, size_g)
    return Const((new_i, new_j))


# --- map_elementwise ------------------------------------------------------------------------

@handles("map_elementwise")
def _map_elementwise(tracer, name, scalar_fn, args, pack):
    """`scalar_fn` traced once on scalars (`pack` elements of each input at a time, input
    by input), into a region the renderer calls per element: its `if`s branch per element
    instead of computing both sides, as `tl.where` would."""
    import inspect

    ref = scalar_fn.value if isinstance(scalar_fn, Const) else scalar_fn
    if not isinstance(ref, HelperRef):
        raise TypeError("scalar_fn must be a @tilecc.jit function")
    fn = ref.fn
    k = constant(pack, "pack")
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ValueError(f"pack must be a positive constexpr int, got {k!r}")
    b = tracer.b
    inputs = [S.to_value(b, kernel_value(tracer, a, "map_elementwise's inputs"))
              for a in args.value]
    if not inputs:
        raise ValueError("map_elementwise must have at least 1 input tensor")
    shape: tuple[int, ...] = ()
    for x in inputs:
        shape = S.broadcast_shapes(shape, x.type.shape)
    if not shape:  # scalars: nothing to map over, the function's own values
        out = tracer.inline(fn, [x for x in inputs for _ in range(k)], {}, tracer.current_call)
        if not (isinstance(out, Const) and isinstance(out.value, tuple)):
            return out
        return Const(tuple(out.value[::k])) if len(out.value) > k else out.value[0]
    params = [p for p in inspect.signature(fn).parameters][:len(inputs) * k]
    params += [f"arg{i}" for i in range(len(params), len(inputs) * k)]
    region = Region([Value(Type(x.dtype), params[i * k + j])
                     for i, x in enumerate(inputs) for j in range(k)])
    b.regions.append(region)
    try:
        out = tracer.inline(fn, list(region.args), {}, tracer.current_call)
        single = not (isinstance(out, Const) and isinstance(out.value, tuple))
        items = [out] if single else list(out.value)
        if not items or len(items) % k:
            raise ValueError(f"the mapped function returned {len(items)} values: a multiple "
                             f"of pack={k} was expected")
        region.yields = [S.to_value(b, v if isinstance(v, (Value, Const)) else Const(v))
                         for v in items]
    finally:
        b.regions.pop()
    types = [y.dtype for y in region.yields[::k]]
    for j in range(1, k):
        if [y.dtype for y in region.yields[j::k]] != types:
            raise TypeError("type mismatch in unpacked results")
    operands = [S.splat(b, x, shape) for x in inputs]
    results = [Value(Type(t, shape)) for t in types]
    b.emit_op(Op("map", operands, results, b.loc, {"pack": k, "fn": fn.__name__}, [region]))
    return results[0] if single else Const(tuple(results))
