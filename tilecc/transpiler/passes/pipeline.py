"""Software pipelining of `tl.dot` operands loaded in a loop (NVIDIA, `num_stages` ≥ 2).

When an operand of a tensor-core dot is a `tl.load` in the same loop body, read by nothing
else, the load need not pass through registers: it becomes a `cp.async` copy from global
memory straight into a shared-memory stage, issued `num_stages - 1` iterations ahead, so
the copies of later iterations overlap the mma of this one.  This is Triton's pipeliner
for the loops its matmul tutorial writes:

    for k in range(...):
        a = tl.load(a_ptrs, mask=..., other=0)      # issued ahead, into stage (i + S-1) % S
        b = tl.load(b_ptrs, mask=..., other=0)
        acc = tl.dot(a, b, acc)                     # reads stage i % S
        a_ptrs += BLOCK_K * stride_ak               # advanced ahead with the copies
        b_ptrs += BLOCK_K * stride_bk

What the loads read must be computable ahead: their pointers, masks and `other` may depend
on the loop index, on values from before the loop, and on loop-carried values ("stream
state", the pointers) whose updates depend on nothing else and which nothing else reads.
Masked-off vectors are zero-filled by the copy (`other` must be 0); a load whose mask
varies inside a vector, or whose vectors are not 4, 8 or 16 bytes along tile rows (along
K for a B staged K-major, `passes.dot.b_k_major`), stays a plain load.  This pass only
marks what could be pipelined; `passes.settle` keeps what the renderer can write out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tilecc.transpiler import ir
from tilecc.transpiler.ir import Kernel, Op, Region, Value
from tilecc.transpiler.passes.dce import PURE
from tilecc.transpiler.passes.dot import b_k_major


@dataclass
class Pipeline:
    stages: int
    loads: list[Op]  # the pipelined loads, in body order
    state: list[int]  # indices (into the carried values) of the stream-state values
    slice_ops: set[int] = field(default_factory=set)  # id() of body ops moved to the issue point
    note: str = ""
    # settled by passes.settle: one multiplication group kept in flight across iterations,
    # and how many iterations ahead the copies run (num_stages - 2 then, else - 1)
    in_flight: bool = False
    distance: int = 0
    tiles: list = field(default_factory=list)  # passes.settle.Tile per load: its stages


def plan(kernel: Kernel) -> None:
    """Mark pipelinable loops (`op.attrs["pipeline"]`)."""
    if kernel.num_stages < 2:
        return
    reads = ir.uses(kernel)
    for op in kernel.walk():
        if op.kind == "for":
            p = _loop(op, kernel.num_stages, reads)
            if p is not None:
                op.attrs["pipeline"] = p


def _is_zero(v: Value) -> bool:
    op = v.owner
    while op is not None and op.kind in ("splat", "broadcast", "cast"):
        op = op.operands[0].owner
    return op is not None and op.kind == "const" and op.attrs["value"] == 0


def _candidate(load: Op, dot: Op, which: int) -> bool:
    x = load.result
    plan = load.attrs.get("plan")
    p = x.layout
    # vectors along the tile's rows; along B's K where B is staged K-major
    along = 0 if which == 1 and b_k_major(dot) else 1
    if plan is None or p.fast_axis != along:
        return False
    nbytes = plan.vec * x.dtype.itemsize
    if nbytes not in (4, 8, 16) or plan.mask_mode not in ("none", "vector", "prefix"):
        return False
    return len(load.operands) < 3 or _is_zero(load.operands[2])


def _loop(loop: Op, stages: int, reads: dict[int, int]) -> Pipeline | None:
    body = loop.regions[0]
    defined = {r.id: op for op in body.ops for r in op.results}
    users: dict[int, list[Op]] = {}
    for op in body.ops:
        for v in op.operands:
            users.setdefault(v.id, []).append(op)
    yielded = {y.id for y in body.yields}
    carried = {a.id: i for i, a in enumerate(body.args[1:])}
    loads: list[Op] = []
    for op in body.ops:
        if op.kind != "dot" or not op.attrs["plan"].matrix:
            continue
        for which, x in enumerate(op.operands[:2]):
            ld = defined.get(x.id)
            if ld is not None and ld.kind == "load" and users.get(x.id) == [op] and \
                    x.id not in yielded and _candidate(ld, op, which):
                loads.append(ld)
    if not loads:
        return None
    # the ops the loads' operands come from, within the body
    slice_ops: dict[int, Op] = {}
    state: set[int] = set()

    def pull(v: Value) -> bool:
        if v.id in carried:
            state.add(carried[v.id])
            return True
        op = defined.get(v.id)
        if op is None:  # the loop index, or a value from before the loop
            return True
        if op.kind not in PURE:
            return False
        if id(op) not in slice_ops:
            slice_ops[id(op)] = op
            return all(pull(o) for o in op.operands)
        return True

    for ld in loads:
        if not all(pull(o) for o in ld.operands):
            return None
    # stream state: updated from itself, the index and outer values only; read by no one else
    update_ops: dict[int, Op] = {}
    for i in sorted(state):
        y = body.yields[i]
        before = dict(slice_ops)
        if not pull(y):
            return None
        for k, op in slice_ops.items():
            if k not in before:
                update_ops[k] = op
        if reads.get(loop.results[i].id, 0):  # its value after the loop would be ahead
            return None
    moved = {**slice_ops, **update_ops}
    moved_values = {r.id for op in moved.values() for r in op.results} | \
        {body.args[1 + i].id for i in state} | {ld.result.id for ld in loads}
    for op in body.ops:  # nothing left in the body may read what moved
        if id(op) in moved or op in loads:
            continue
        if op.kind == "dot" and any(ld.result in op.operands[:2] for ld in loads):
            rest = [v for v in op.operands if v not in [ld.result for ld in loads]]
        else:
            rest = op.operands
        if any(v.id in moved_values for v in rest) or any(
                v.id in moved_values for r in op.regions for o in _walk(r) for v in o.operands):
            return None
    for i, y in enumerate(body.yields):
        if i not in state and y.id in moved_values:
            return None
    p = Pipeline(stages, loads, sorted(state), set(moved) | {id(ld) for ld in loads})
    names = ", ".join(ld.result.name or "an operand" for ld in loads)
    p.note = (f"L{loop.loc.line}: {names} of tl.dot copied into shared memory with cp.async, "
              f"{stages - 1} iteration{'s' if stages > 2 else ''} ahead ({stages} stages)")
    return p


def _walk(region: Region):
    for op in region.ops:
        yield op
        for r in op.regions:
            yield from _walk(r)
