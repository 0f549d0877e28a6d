"""Unit dims of loads and stores: `desc.load([b, m, k]).reshape(BM, BK)` read as the 2-D
block in the first place, `desc.store([b, m, n], acc.reshape(1, BM, BN))` written as one.

Kernels over batched tensors read a block of a 3-D descriptor (or block pointer) with a
box of 1 along the batch, and reshape it to the 2-D block a product multiplies; they
store a product's result reshaped back to the box (Liger's fused SwiGLU MLP, fla).
Rendered as written, the reshape stands between the load and the product: the pipeline
cannot stage the block where the product reads it (its copies are read back into
registers and staged again, each K step), and a store of the reshaped accumulator is
neither the 2-D block the copy engine stores nor a layout its coalescing knows.

Where a reshape only drops dims of size 1 from a load read by nothing else, the load of
the dropped block is made instead: the same index arithmetic (splats, broadcasts,
`expand_dims`, aranges and element-wise ops, as block pointers, descriptors and
`ptr + rows[:, None] * stride + ...` produce them) without those dims, so each element is
read from the same address.  A store whose value is such a reshape of a block (through
element-wise ops: the cast to the descriptor's type) stores that block the same way.  A
descriptor's coordinates of the dropped dims become the copy's outer coordinates (box 1
each; `ir.DescriptorRead.outer`), where they are its leading dims; elsewhere the block is
no longer one the copy engine moves, and the descriptor mark goes.

Runs first among the folds (a transpose of the folded load then folds too,
`passes.transpose`).
"""

from __future__ import annotations

from dataclasses import replace

from tilecc.transpiler import ir
from tilecc.transpiler.ir import DescriptorRead, Kernel, Op, Type, Value

# element-wise ops: their block operands share the result's shape
_ELEMENTWISE = {"cast", "unary", "binary", "cmp", "addptr", "where", "fma"}


def dropped_dims(full: tuple[int, ...], kept: tuple[int, ...]) -> tuple[int, ...] | None:
    """The dims of shape `full` that a reshape to `kept` drops, where it only drops dims of
    size 1 (matched from the innermost: of several unit dims, the leading ones go) and
    keeps a block; None for any other reshape."""
    if not kept:  # (a block of one element to a scalar: scalars are not blocks)
        return None
    dropped, j = [], len(kept) - 1
    for i in reversed(range(len(full))):
        if j >= 0 and full[i] == kept[j]:
            j -= 1
        elif full[i] == 1:
            dropped.append(i)
        else:
            return None
    return tuple(sorted(dropped)) if j < 0 and dropped else None


def fold_unit_dims(kernel: Kernel) -> None:
    uses = ir.uses(kernel)
    folder = _Folder()
    replaced: dict[int, Op | None] = {}  # id(op) → what takes its place (None: it goes)
    renamed: dict[int, Value] = {}  # a dropped reshape's result id → the folded load's
    for op in kernel.walk():
        if op.kind == "reshape" and op.operands[0].owner is not None:
            load = op.operands[0].owner
            dims = dropped_dims(load.result.type.shape, op.result.type.shape)
            if load.kind != "load" or dims is None or uses.get(load.result.id, 0) != 1 or \
                    not all(folder.foldable(v, dims) for v in load.operands):
                continue
            new = Op("load", [folder.squeezed(v, dims) for v in load.operands],
                     [Value(op.result.type, op.result.name or load.result.name)], load.loc,
                     _descriptor(load.attrs, dims))
            replaced[id(load)] = new
            replaced[id(op)] = None
            renamed[op.result.id] = new.result
        elif op.kind == "store" and op.operands[1].type.is_block:
            dims = _reshaped_from(op.operands[1])
            if dims is None or not all(folder.foldable(v, dims) for v in op.operands):
                continue
            replaced[id(op)] = Op("store", [folder.squeezed(v, dims) for v in op.operands],
                                  [], op.loc, _descriptor(op.attrs, dims))
    if replaced:  # (a folded store may read a folded load: `x.reshape(1, n)` of its reshape)
        ir.rewrite(kernel.body, replaced, folder.after, renamed)


def _reshaped_from(x: Value) -> tuple[int, ...] | None:
    """The dims a reshape added to the block `x` is made from, through element-wise ops
    (`acc.reshape(1, BM, BN).to(tl.float16)`); None where it is made otherwise."""
    op = x.owner
    while op is not None and op.kind in _ELEMENTWISE:
        blocks = [v for v in op.operands if v.type.is_block]
        if len(blocks) != 1:
            return None
        op = blocks[0].owner
    if op is None or op.kind != "reshape":
        return None
    return dropped_dims(op.result.type.shape, op.operands[0].type.shape)


def _descriptor(attrs: dict, dims: tuple[int, ...]) -> dict:
    """A folded access's attributes: a descriptor's coordinates of the dropped dims become
    the copy's outer ones where they lead; elsewhere the mark goes (no box of the map)."""
    attrs = dict(attrs)
    read: DescriptorRead | None = attrs.pop("descriptor", None)
    if read is not None and not read.outer and dims == tuple(range(len(dims))) and \
            len(read.corner) == len(read.bounds) > len(dims):
        n = len(dims)
        attrs["descriptor"] = replace(read, corner=read.corner[n:], bounds=read.bounds[n:],
                                      outer=read.corner[:n], outer_bounds=read.bounds[:n])
    return attrs


class _Folder:
    """Index arithmetic written again without some unit dims (`squeezed`), each new op
    placed after the one it copies (`after`)."""

    def __init__(self) -> None:
        self.after: dict[int, list[Op]] = {}
        self._known: dict[tuple, bool] = {}
        self._made: dict[tuple, Value] = {}

    def foldable(self, v: Value, dims: tuple[int, ...]) -> bool:
        key = (v.id, dims)
        if key not in self._known:
            self._known[key] = self._foldable(v, dims)
        return self._known[key]

    def _foldable(self, v: Value, dims: tuple[int, ...]) -> bool:
        op = v.owner
        if not v.type.is_block or not dims:
            return True
        if op is None:
            return False
        if op.kind == "splat":
            return True
        if op.kind == "arange":
            return op.attrs["end"] - op.attrs["start"] == 1
        if op.kind == "expand_dims":
            return self.foldable(op.operands[0], _inner_dims(dims, op.attrs["axis"]))
        if op.kind == "reshape":
            return dropped_dims(v.type.shape, op.operands[0].type.shape) == dims
        if op.kind == "broadcast":  # (of a block of the same rank)
            x = op.operands[0]
            return len(x.type.shape) == len(v.type.shape) and self.foldable(x, dims)
        if op.kind in _ELEMENTWISE:
            return all(x.type.shape in ((), v.type.shape) and self.foldable(x, dims)
                       for x in op.operands)
        return False

    def squeezed(self, v: Value, dims: tuple[int, ...]) -> Value:
        """`v` (for which `foldable`) without its unit dims `dims`."""
        if not v.type.is_block or not dims:
            return v
        key = (v.id, dims)
        if key not in self._made:
            self._made[key] = self._squeezed(v, dims)
        return self._made[key]

    def _squeezed(self, v: Value, dims: tuple[int, ...]) -> Value:
        op = v.owner
        if op.kind == "reshape":  # the reshape that added the dims: what it reshaped
            return op.operands[0]
        if op.kind == "expand_dims":
            axis = op.attrs["axis"]
            x = self.squeezed(op.operands[0], _inner_dims(dims, axis))
            if axis in dims:
                return x
            kept = axis - sum(1 for d in dims if d < axis)
            if x.type.is_block:
                return self._emit(op, "expand_dims", [x], v, dims, axis=kept)
            return self._emit(op, "splat", [x], v, dims)
        if op.kind == "arange":  # a block of one index: that index
            return self._emit(op, "const", [], v, dims, value=op.attrs["start"])
        if op.kind == "splat" or op.kind == "broadcast":
            x = self.squeezed(op.operands[0], dims)
            if len(dims) == len(v.type.shape):  # (a scalar)
                return x
            return self._emit(op, "broadcast" if x.type.is_block else "splat", [x], v, dims)
        return self._emit(op, op.kind, [self.squeezed(x, dims) for x in op.operands], v,
                          dims, **op.attrs)

    def _emit(self, op: Op, kind: str, operands: list[Value], like: Value,
              dims: tuple[int, ...], **attrs) -> Value:
        """A copy of `op` (of result `like`) without dims `dims`, placed after it."""
        kept = [i for i in range(len(like.type.shape)) if i not in dims]
        new = Op(kind, operands, [Value(Type(like.dtype, tuple(like.type.shape[i]
                                                              for i in kept)), like.name)],
                 op.loc, attrs)
        if like.hints and kept:  # tl.multiple_of(...) of the block: its kept dims' values
            new.result.hints = {k: tuple(h[i] for i in kept) for k, h in like.hints.items()}
        self.after.setdefault(id(op), []).append(new)
        return new.result


def _inner_dims(dims: tuple[int, ...], axis: int) -> tuple[int, ...]:
    """`dims` of an `expand_dims(x, axis)` result as dims of `x`."""
    return tuple(d if d < axis else d - 1 for d in dims if d != axis)

