"""Block pointers: `tl.make_block_ptr`, `tl.advance`, and `tl.load` / `tl.store` through
them, lowered to the pointer arithmetic a kernel would write by hand.

A block pointer is a trace-time object (`BlockPointer`), not an IR value: its base, shape
and strides are scalars, its offsets int32 scalars, its block shape and order constants.
Loading through it emits

    ptrs = (base + sum(offset_d * stride_d)) + tile          tile = sum(arange(B_d) * stride_d)
    mask = AND over the checked dims d of 0 <= offset_d + arange(B_d) < shape_d

`tile` is built once where the block pointer is made (it does not depend on the offsets,
so a loop that advances the block pointer keeps it out of its body), and the rest is the
same IR as `base + offs[:, None] * stride + ...`: axis analysis, vectorization and the
cp.async pipelining of tl.dot operands apply unchanged.  A block pointer carried through
a loop carries its offsets (for the masks) and its pointers, which tl.advance moves (the
frontend asks `loop_slots` / `rebind` / `slot_value`).  As in Triton, shapes and strides
are int64 and offsets int32.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from tilecc.language import dtypes as D
from tilecc.transpiler import semantic as S
from tilecc.transpiler.builtin_registry import constant, handles, kernel_value
from tilecc.transpiler.builtins_blocks import expand_dims
from tilecc.transpiler.ir import Op, Type, Value
from tilecc.transpiler.semantic import Const


@dataclass(frozen=True, eq=False)
class BlockPointer:
    base: Value  # a scalar pointer
    shape: tuple  # int64 scalars (Value or Const), one per dim
    strides: tuple  # int64 scalars
    offsets: tuple  # int32 scalars
    block_shape: tuple[int, ...]
    order: tuple[int, ...]
    tile: Value  # sum over dims of arange(B_d) * stride_d, broadcast to block_shape
    # The block's pointers at `offsets`, where a loop that moves the block pointer carries
    # them (tl.advance then adds to them, as a kernel written with pointer tensors does);
    # None: computed from the offsets at each load and store.
    pointers: Value | None = None

    @property
    def element_ty(self) -> D.dtype:
        return self.base.dtype.element_ty

    def same_layout(self, other: Any) -> bool:
        """`other` points into the same tensor the same way; only offsets may differ."""
        return isinstance(other, BlockPointer) and other.base is self.base and \
            other.tile is self.tile and other.block_shape == self.block_shape


def attribute(bp: BlockPointer, attr: str) -> Const | None:
    """`p.dtype` and `p.type` of a block pointer: as in Triton, a pointer to a block of its
    elements, whose `element_ty` is that block's type (`x.to(p.dtype.element_ty)`, as
    chunked kernels store, converts to the block's element type)."""
    if attr in ("dtype", "type"):
        return Const(D.pointer_type(D.block_type(bp.element_ty, bp.block_shape)))
    return None


def unwrap(x: Any) -> Any:
    """The BlockPointer inside a builtin's argument, else the argument."""
    return x.value if isinstance(x, Const) and isinstance(x.value, BlockPointer) else x


def is_block_pointer(x: Any) -> bool:
    return isinstance(unwrap(x), BlockPointer)


# --- loop-carried block pointers: offsets, and the pointers a loop moves -------------------

POINTERS = "pointers"  # the slot of a carried block pointer's pointers


def loop_slots(b, name: str, bp: BlockPointer) -> list[tuple[str, Value]]:
    """The carried values standing for block pointer `name` in a loop: its offsets (which
    its bounds masks read) and, where the target takes them so
    (`Target.carried_block_pointers`), its pointers (made here where it has none yet).  A
    loop that advances a block pointer then adds to its pointers instead of writing each
    element's address again from the offsets at every load: that costs 64-bit multiplies
    per copy and iteration, which the CUDA compiler keeps in the loop (a block-pointer
    GEMM ran 10-25% slower than the same GEMM written with pointer tensors)."""
    if not b.target.carried_block_pointers:
        return offset_slots(name, bp)
    return offset_slots(name, bp) + [(f"{name}.{POINTERS}", pointers_of(b, bp))]


def offset_slots(name: str, bp: BlockPointer) -> list[tuple[str, Value]]:
    """The offsets of block pointer `name`, as carried values (an `if` merges these)."""
    return [(f"{name}.offset{i}", off) for i, off in enumerate(bp.offsets)]


def split_slot(key: str) -> tuple[str, int | None] | None:
    """("a_ptr", 1) for the slot key "a_ptr.offset1", ("a_ptr", None) for its pointers'
    "a_ptr.pointers"; None for a plain name."""
    owner, dot, rest = key.partition(".offset")
    if dot and rest.isdigit():
        return owner, int(rest)
    owner, dot, rest = key.partition(f".{POINTERS}")
    return (owner, None) if dot and not rest else None


def rebind(bp: BlockPointer, index: int | None, value: Value) -> BlockPointer:
    if index is None:
        return replace(bp, pointers=value)
    offsets = list(bp.offsets)
    offsets[index] = value
    return replace(bp, offsets=tuple(offsets))


def slot_value(b, name: str, index: int | None, before: BlockPointer, now: Any) -> Value | Const:
    """The offset (or the pointers) a loop body yields for a carried block pointer;
    TypeError when the body made it point elsewhere (anything but tl.advance)."""
    if not before.same_layout(now):
        raise TypeError(f"block pointer `{name}` is carried through the loop, so its body may "
                        "only move it with tl.advance (not make a new one); make it before "
                        "the loop")
    return pointers_of(b, now) if index is None else now.offsets[index]


# --- building and moving -------------------------------------------------------------------

def items(x: Any, what: str) -> tuple:
    x = unwrap(x)
    if isinstance(x, Const) and isinstance(x.value, tuple):
        return tuple(v if isinstance(v, (Value, Const)) else Const(v) for v in x.value)
    if isinstance(x, (Value, Const)):
        return (x,)
    raise TypeError(f"{what} must be a tuple of integers")


def scalar(b, x: Any, bits64: bool, what: str) -> Value | Const:
    """An int64 (shape, strides) or int32 (offsets) scalar, checked as Triton does."""
    if isinstance(x, Const):
        if isinstance(x.value, bool) or not isinstance(x.value, int):
            raise TypeError(f"{what} must be integers, got {x.value!r}")
        bound = 1 << (63 if bits64 else 31)
        if not -bound <= x.value < bound:
            raise ValueError(f"block pointers only support {64 if bits64 else 32}-bit {what}, "
                             f"got {x.value}")
        return x
    if x.type.is_block or not x.dtype.is_int():
        raise TypeError(f"{what} must be integer scalars, got {x.type}")
    if bits64:
        return S.cast(b, x, D.int64 if x.dtype.signed or x.dtype.bits < 64 else x.dtype)
    if x.dtype.bits == 64:
        raise TypeError(f"block pointers only support 32-bit {what}, got {x.type}; add a "
                        ".to(tl.int32) or use pointer arithmetic for 64-bit offsets")
    return S.cast(b, x, D.int32)


def dims(x: Any, what: str) -> tuple[int, ...]:
    x = unwrap(x)
    v = x.value if isinstance(x, Const) else None
    v = v if isinstance(v, tuple) else (v,)
    if not all(isinstance(d, int) and not isinstance(d, bool) for d in v):
        raise TypeError(f"{what} must be a tuple of constexpr integers")
    return v


def _range_along(b, n: int, rank: int, dim: int) -> Value:
    """arange(0, n) as a block of `rank` dims, size 1 except along `dim`."""
    r = b.emit("arange", [], Type(D.int32, (n,)), start=0, end=n)
    for axis in range(rank):
        if axis != dim:
            r = expand_dims(b, r, axis)
    return r


@handles("make_block_ptr")
def _make_block_ptr(tracer, name, base, shape, strides, offsets, block_shape, order):
    b = tracer.b
    base = unwrap(base)
    if not isinstance(base, Value) or not base.dtype.is_ptr() or base.type.is_block:
        raise ValueError("tl.make_block_ptr: `base` must be a pointer (not a block of "
                         "pointers or a block pointer)")
    block = dims(block_shape, "block_shape")
    rank = len(block)
    for n in block:
        if n <= 0 or n & (n - 1):
            raise ValueError(f"tl.make_block_ptr: block_shape {list(block)} must be powers of 2")
    ordering = dims(order, "order")
    if sorted(ordering) != list(range(len(ordering))):
        raise ValueError(f"tl.make_block_ptr: order {list(ordering)} must be a permutation of "
                         f"(0, ..., {len(ordering) - 1})")
    shape_ = tuple(scalar(b, kernel_value(tracer, x, "shape"), True, "shape")
                   for x in items(shape, "shape"))
    strides_ = tuple(scalar(b, kernel_value(tracer, x, "strides"), True, "strides")
                     for x in items(strides, "strides"))
    offsets_ = tuple(scalar(b, kernel_value(tracer, x, "offsets"), False, "offsets")
                     for x in items(offsets, "offsets"))
    if not all(len(x) == rank for x in (shape_, strides_, offsets_, ordering)):
        raise ValueError("tl.make_block_ptr: shape, strides, offsets, block_shape and order "
                         f"must have the same length, got {len(shape_)}, {len(strides_)}, "
                         f"{len(offsets_)}, {rank} and {len(ordering)}")
    if base.dtype.element_ty == D.int1:  # as Triton: bool tensors are read as int8 bytes
        base = S.cast(b, base, D.pointer_type(D.int8))
    offsets_ = tuple(S.to_value(b, S.cast(b, o, D.int32)) if isinstance(o, Const) else o
                     for o in offsets_)
    return BlockPointer(base, shape_, strides_, offsets_, block, ordering,
                        block_tile(b, block, strides_))


def block_tile(b, block: tuple[int, ...], strides: tuple) -> Value:
    """sum over dims of arange(B_d) * stride_d, broadcast to `block`: each element's offset
    from the block's corner."""
    rank = len(block)
    tile = _sum(b, [_times(b, _range_along(b, block[d], rank, d), strides[d])
                    for d in range(rank)])
    return S.splat(b, S.to_value(b, S.cast(b, tile, D.int64)), block)


@handles("advance")
def _advance(tracer, name, base, offsets):
    bp = unwrap(base)
    if not isinstance(bp, BlockPointer):
        raise TypeError("tl.advance takes a block pointer (from tl.make_block_ptr)")
    deltas = tuple(scalar(tracer.b, kernel_value(tracer, x, "offsets"), False, "offsets")
                   for x in items(offsets, "offsets"))
    if len(deltas) != len(bp.block_shape):
        raise ValueError(f"tl.advance: {len(deltas)} offsets for a block pointer of "
                         f"{len(bp.block_shape)} dims")
    b = tracer.b
    moved = tuple(o if isinstance(d, Const) and d.value == 0 else
                  S.to_value(b, S.binary(b, "add", o, d))
                  for o, d in zip(bp.offsets, deltas))
    pointers = bp.pointers
    if pointers is not None:  # carried by a loop: moved by the deltas' distance
        step = [_times(b, d, s) for d, s in zip(deltas, bp.strides)
                if not (isinstance(d, Const) and d.value == 0)]
        if any(t is not None for t in step):
            pointers = S.binary(b, "add", pointers, _sum(b, step))
    return replace(bp, offsets=moved, pointers=pointers)


def _boundary_check(x: Any, rank: int) -> list[int]:
    """Triton's canonical boundary_check: sorted, distinct dims of the block."""
    v = x.value if isinstance(x, Const) else None
    if v is None or v == () or v == []:
        return []
    dims = list(v) if isinstance(v, (tuple, list)) else [v]
    for d in dims:
        if not isinstance(d, int) or isinstance(d, bool) or not 0 <= d < rank:
            raise ValueError(f"boundary_check: {d!r} is not a dim of a block of rank {rank}")
    if len(set(dims)) != len(dims):
        raise ValueError(f"boundary_check: duplicate dims in {dims}")
    return sorted(dims)


def _times(b, x: Value, stride: Value | Const) -> Value | Const | None:
    """x * stride in int64; None where the stride or the offset is the constant 0 (no
    `0 * stride` term in the generated code)."""
    if isinstance(x, Const) and x.value == 0 or isinstance(x, Value) and \
            x.owner is not None and x.owner.kind == "const" and x.owner.attrs["value"] == 0:
        return None
    if isinstance(stride, Const) and stride.value in (0, 1):
        return S.cast(b, x, D.int64) if stride.value else None
    return S.binary(b, "mul", S.cast(b, x, D.int64), stride)


def _sum(b, terms: list) -> Value | Const:
    terms = [t for t in terms if t is not None]
    total = terms[0] if terms else Const(0)
    for t in terms[1:]:
        total = S.binary(b, "add", total, t)
    return total


_REWRITABLE = ("binary", "unary", "cast", "const")


def fresh(b, v: Any) -> Any:
    """`v` written again as new ops where it is a scalar expression made in the body of the
    loop being traced (`k * BLOCK_K`): each use of an offset then has an expression of its
    own, which the renderer writes where it is read, so that the pipeliner can write a
    load's address out again for a later iteration (a variable of this iteration it could
    not).  Outside loops, and for values made before the loop, `v` itself."""
    body = b.regions[-1]
    op = v.owner if isinstance(v, Value) else None
    if not body.args or op is None or v.type.is_block or op.kind not in _REWRITABLE or \
            not any(o is op for o in body.ops):
        return v
    return b.emit(op.kind, [fresh(b, x) for x in op.operands], v.type, **op.attrs)


def pointers_and_mask(b, bp: BlockPointer, checked: list[int], corner: list | None = None):
    """The block's pointers and its bounds mask (None: no dim checked).  `corner`, where
    given, receives the offset Value each checked dim's mask reads (a tensor descriptor's
    TMA copy takes them as its coordinates: they live as long as the mask does)."""
    ptrs = pointers_of(b, bp)
    mask: Any = None
    rank = len(bp.block_shape)
    for d in checked:
        i = _range_along(b, bp.block_shape[d], rank, d)
        off = bp.offsets[d]  # converted at each use: expressions, not a variable
        first = fresh(b, off)
        if corner is not None:
            corner.append(first)
        inside = _inside(b, i, first, bp.shape[d])
        mask = inside if mask is None else S.binary(b, "and", mask, inside)
    return ptrs, (None if mask is None else S.splat(b, mask, bp.block_shape))


def pointers_of(b, bp: BlockPointer) -> Value:
    """The block's pointers: those a loop carries, else (base + its corner's offset) + the
    tile."""
    if bp.pointers is not None:
        return bp.pointers
    start = _sum(b, [_times(b, fresh(b, off), stride)
                     for off, stride in zip(bp.offsets, bp.strides)])
    return S.binary(b, "add", S.binary(b, "add", bp.base, start), bp.tile)


def _inside(b, i: Value, offset: Value, shape: Value | Const) -> Value:
    """0 <= offset + i < shape as one unsigned comparison: (offset + i) read as unsigned
    is below max(shape, 0) exactly when it lies in [0, shape) — a negative sum reads as at
    least 2^31 (2^63), past any shape of the width.  In 32 bits where the shape is a 32-bit
    value widened to int64 (offsets are int32, i a small tl.arange): a quarter of the
    instructions of two signed 64-bit comparisons, and the unsigned sum cannot overflow
    (C's signed one could).  Constancy along i is that of `i < n`: the analysis reads the
    sum's divisors and the bound's (the maximum keeps both operands' common divisor)."""
    narrow = _narrow_shape(shape)
    wide = D.uint32 if narrow is not None else D.uint64
    signed = D.int32 if narrow is not None else D.int64
    bound = S.min_max(b, "max", narrow if narrow is not None else shape, Const(0))
    total = S.binary(b, "add", S.cast(b, i, wide), S.cast(b, S.cast(b, offset, signed), wide))
    return S.compare(b, "lt", total, S.cast(b, bound, wide))


def bound(shape: Value | Const) -> Value | Const:
    """A block pointer's shape in a dim as its bounds mask reads it (`_inside`)."""
    narrow = _narrow_shape(shape)
    return shape if narrow is None else narrow


def _narrow_shape(shape: Value | Const) -> Value | Const | None:
    """The 32-bit value a block pointer's int64 shape was widened from (None: a 64-bit
    one)."""
    if isinstance(shape, Const):
        return shape if -(1 << 31) <= shape.value < 1 << 31 else None
    src = shape.owner.operands[0] if shape.owner is not None and \
        shape.owner.kind == "cast" else None
    if src is not None and src.dtype.is_int() and (
            src.dtype.bits < 32 or (src.dtype.bits == 32 and src.dtype.signed)):
        return src
    return None


def load(tracer, bp: BlockPointer, mask, other, boundary_check, padding_option,
         corner: list | None = None) -> Value:
    b = tracer.b
    if not (isinstance(mask, Const) and mask.value is None) or \
            not (isinstance(other, Const) and other.value is None):
        raise ValueError("`mask` and `other` arguments cannot be specified for loading block "
                         "pointers; use boundary_check and padding_option")
    padding = constant(padding_option, "padding_option") or ""
    if padding not in ("", "zero", "nan"):
        raise ValueError(f"padding option {padding!r} is not supported (\"zero\", \"nan\" or "
                         "\"\")")
    elem = bp.element_ty
    if padding == "nan" and not elem.is_floating():
        raise ValueError("padding option \"nan\" is not supported for integer block pointers")
    ptrs, m = pointers_and_mask(b, bp, _boundary_check(boundary_check, len(bp.block_shape)),
                                corner)
    operands = [ptrs]
    if m is not None:
        operands.append(m)
        if padding:
            fill = S.constant(b, float("nan") if padding == "nan" else 0, elem)
            operands.append(S.splat(b, fill, bp.block_shape))
    return b.emit("load", operands, ptrs.type.with_dtype(elem))


def store(tracer, bp: BlockPointer, value, mask, boundary_check,
          corner: list | None = None) -> Op:
    """The store op (`corner`, where given, receives the offsets the bounds mask reads, as
    for `load`)."""
    b = tracer.b
    if not (isinstance(mask, Const) and mask.value is None):
        raise ValueError("`mask` cannot be specified for storing through block pointers; use "
                         "boundary_check")
    if bp.base.dtype.is_const():
        raise ValueError(f"Cannot store to a constant pointer ({bp.base.dtype}: its "
                         "parameter is annotated tl.const)")
    v = kernel_value(tracer, value, "value")
    elem = bp.element_ty
    if isinstance(v, Const):
        v = S.constant(b, v.value, elem)
    if v.type.is_block and v.type.shape != bp.block_shape:
        raise ValueError(f"tl.store: the value's shape {list(v.type.shape)} does not match the "
                         f"block pointer's block shape {list(bp.block_shape)}")
    if v.dtype != elem:
        raise TypeError(f"tl.store: the value's element type {v.dtype!r} differs from the block "
                        f"pointer's {elem!r}; convert it with .to({elem!r}) first")
    ptrs, m = pointers_and_mask(b, bp, _boundary_check(boundary_check, len(bp.block_shape)),
                                corner)
    operands = [ptrs, S.splat(b, v, bp.block_shape)]
    if m is not None:
        operands.append(m)
    b.emit("store", operands, None)
    return b.regions[-1].ops[-1]
