"""Transposed loads: `tl.load(...).T` read as the transposed block in the first place.

Triton's kernels multiply by `b.T` where B is stored N x K (tutorial 09's descriptor
matmul, attention's `k.T`): a 2-D block loaded row-major, then `tl.trans` / `permute
(1, 0)`, read by `tl.dot`.  Rendered as written, the permute is a round trip through
shared memory after the load, and the product cannot stream its operand with
asynchronous copies.  Where the load's pointers, mask and padding are index arithmetic of
the kinds below (what block pointers, descriptors and `ptr + rows[:, None] * stride +
cols[None, :]` produce), the transposed block is loaded instead: the same arithmetic with
the axes swapped (an `expand_dims` on the other axis, a `splat` / `broadcast` to the
swapped shape), so the load reads each element from the same address, in its transposed
place.  Its layout then runs along the tensor's contiguous axis — axis 0 — which
`passes.dot.b_k_major` stages K-major for the tensor cores.

Runs before the layouts.  The folded load takes the original's place (not the permute's:
a store between the two must not be read), and the permute goes.  Left alone: a load read
by anything besides the permute, index values computed otherwise (a loop-carried pointer
block, a load of pointers), and a transpose read by anything but products (whose layouts
the fold would change, for better or worse).
"""

from __future__ import annotations

from dataclasses import replace

from tilecc.transpiler import ir
from tilecc.transpiler.ir import DescriptorRead, Kernel, Op, Type, Value

# element-wise ops: transposed by transposing their block operands
_ELEMENTWISE = {"cast", "unary", "binary", "cmp", "addptr", "where", "fma"}


def fold_transposed_loads(kernel: Kernel) -> None:
    uses = ir.uses(kernel)
    after: dict[int, list[Op]] = {}  # id(op) → the transposed copies to insert after it
    swapped: dict[int, Op | None] = {}  # id(load) → the load of the transposed block
    renamed: dict[int, Value] = {}  # permute result id → that load's result
    memo: dict[int, Value] = {}
    known: dict[int, bool] = {}  # value id → foldable (index arithmetic shares values)

    def foldable(v: Value) -> bool:
        if v.id not in known:
            known[v.id] = _foldable(v)
        return known[v.id]

    def _foldable(v: Value) -> bool:
        op = v.owner
        if not v.type.is_block:
            return True
        if op is None or len(v.type.shape) != 2:
            return False
        if op.kind == "splat":
            return True
        if op.kind == "expand_dims":
            return len(op.operands[0].type.shape) == 1
        if op.kind == "broadcast" or op.kind in _ELEMENTWISE:
            return all(foldable(x) for x in op.operands)
        return False

    def transposed(v: Value) -> Value:
        if not v.type.is_block:
            return v
        if v.id in memo:
            return memo[v.id]
        op = v.owner
        t = Type(v.dtype, tuple(reversed(v.type.shape)))
        attrs = dict(op.attrs)
        if op.kind == "splat":
            operands = list(op.operands)
        elif op.kind == "expand_dims":  # [n] → [n, 1] becomes [1, n], and the other way
            operands, attrs["axis"] = list(op.operands), 1 - op.attrs["axis"] % 2
        else:
            operands = [transposed(x) for x in op.operands]
        new = Op(op.kind, operands, [Value(t, v.name)], op.loc, attrs)
        if v.hints:  # tl.multiple_of(ptrs, [16, 1]) of the transposed block: [1, 16]
            new.result.hints = {k: tuple(reversed(h)) for k, h in v.hints.items()}
        after.setdefault(id(op), []).append(new)
        memo[v.id] = new.result
        return new.result

    readers: dict[int, set[str]] = {}  # value id → the kinds of op that read it
    for op in kernel.walk():
        for v in op.operands:
            readers.setdefault(v.id, set()).add(op.kind)
    for op in kernel.walk():
        if op.kind != "permute" or tuple(op.attrs["order"]) != (1, 0) or \
                readers.get(op.result.id) != {"dot"}:
            continue
        x = op.operands[0]
        load = x.owner
        if load is None or load.kind != "load" or uses.get(x.id, 0) != 1 or \
                not all(foldable(v) for v in load.operands):
            continue
        attrs = dict(load.attrs)
        read: DescriptorRead | None = attrs.get("descriptor")
        if read is not None:  # the block of the descriptor's tensor map, transposed
            attrs["descriptor"] = replace(read, transposed=True)
        new = Op("load", [transposed(v) for v in load.operands],
                 [Value(op.result.type, x.name)], load.loc, attrs)
        swapped[id(load)] = new
        swapped[id(op)] = None  # the permute: gone
        renamed[op.result.id] = new.result

    if swapped:
        ir.rewrite(kernel.body, swapped, after, renamed)

