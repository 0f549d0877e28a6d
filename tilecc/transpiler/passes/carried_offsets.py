"""Blocks of pointers a K loop advances by one step: the block before the loop, plus one
carried offset.

    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, ...)
        ...
        a_ptrs += BLOCK_K * stride_ak

carries one pointer per element (per register of the threads' layout) from iteration to
iteration, each advanced by the same step.  Where the step is one scalar, the block is its
value before the loop plus that scalar's running sum: the loop carries the sum (an int64,
as the pointers' own arithmetic is 64-bit) and each iteration adds it to the block from
before the loop where the block is read.  The threads then add one 64-bit offset to an
address they hold anyway instead of carrying every address through the loop, which NVCC
compiled into a copy of each advanced address at the end of every iteration (16 register
moves a K step in Triton's matmul tutorial at 128 x 128 x 64 on sm_90, of the loop's 172
instructions; 161 after, Triton's 131).  The loaded values are the same: the rewrite is
exact.

Only loops with a `tl.dot` are rewritten (the K loops the pipeline copies ahead of the
products), and only values the loop's result is not read of: after the loop the block
would have to be rebuilt.
"""

from __future__ import annotations

from tilecc.language import dtypes as D
from tilecc.transpiler import ir
from tilecc.transpiler.ir import Kernel, Op, Region, Type, Value


def carry_offsets(kernel: Kernel) -> bool:
    """Rewrite the blocks of pointers K loops advance by a scalar step (see above), except
    those that loads the copy engine may copy read (passes.pointer_tiles: the copies
    compute their coordinates from the loop index and read no pointer, which would leave
    the offset unread); whether any was rewritten (the blocks it replaced are left for
    passes.dce to drop)."""
    return _region(kernel.body, ir.uses(kernel))


def _region(region: Region, reads: dict[int, int]) -> bool:
    ops: list[Op] = []
    changed = False
    for op in region.ops:
        for r in op.regions:
            changed |= _region(r, reads)
        if op.kind == "for" and any(o.kind == "dot" for o in op.regions[0].ops):
            before = _rewrite(op, reads)
            ops += before
            changed |= bool(before)
        ops.append(op)
    region.ops = ops
    return changed


def _rewrite(loop: Op, reads: dict[int, int]) -> list[Op]:
    """Rewrite `loop`'s advanced pointer blocks; returns the ops to put before it (each
    offset's start, 0)."""
    body = loop.regions[0]
    before: list[Op] = []
    for j in range(len(body.yields)):
        arg, y, result = body.args[1 + j], body.yields[j], loop.results[j]
        step = _scalar_step(arg, y, body)
        if step is None or reads.get(result.id, 0) or any(
                o.kind == "load" and "descriptor" in o.attrs and _from(o.operands[0], arg)
                for o in ir.walk(body)):
            continue
        start = loop.operands[3 + j]
        if start.name is None:  # (held in registers now: named as the loop named it)
            start.name = arg.name
        loc = y.owner.loc
        zero = Op("const", [], [Value(Type(D.int64))], loc, {"value": 0})
        before.append(zero)
        name = f"{arg.name}_offset" if arg.name else None
        offset = Value(Type(D.int64), name)
        # where the block is read: the block from before the loop plus the offset
        spread = Op("splat", [offset], [Value(Type(D.int64, arg.type.shape))], loc)
        # (unnamed: written where it is read, `start[r] + offset`; `start` is held in
        # registers from before the loop, passes.emission)
        block = Op("addptr", [start, spread.result], [Value(arg.type)], loc,
                   {"carried_offset": True})
        for o in body.ops:
            if o is not y.owner:
                o.operands = [block.result if v is arg else v for v in o.operands]
        # (any region's ops reading the block: loads under a branch)
        for o in body.ops:
            for r in o.regions:
                _replace(r, arg, block.result)
        body.yields = [block.result if v is arg else v for v in body.yields]
        body.ops[:0] = [spread, block]
        # the offset's update, where the block's was
        wide = step
        update: list[Op] = []
        if step.owner is not None and step.owner.kind == "const":  # (an int64 constant)
            update.append(Op("const", [], [Value(Type(D.int64))], loc,
                             {"value": step.owner.attrs["value"]}))
            wide = update[-1].result
        elif step.dtype != D.int64:
            update.append(Op("cast", [step], [Value(Type(D.int64))], loc, {"bitcast": False}))
            wide = update[-1].result
        add = Op("binary", [offset, wide], [Value(Type(D.int64))], loc, {"fn": "add"})
        update.append(add)
        at = body.ops.index(y.owner)
        body.ops[at + 1:at + 1] = update
        # the loop carries the offset too; the block itself is read by its own update only
        # now, which passes.dce drops
        loop.operands.append(zero.result)
        body.args.append(offset)
        body.yields.append(add.result)
        loop.results.append(Value(Type(D.int64), name))
        loop.results[-1].owner = loop
    return before


def _scalar_step(arg: Value, y: Value, body: Region) -> Value | None:
    """The int scalar `y` advances the pointer block `arg` by (`y = arg + splat(s)`), or
    None."""
    if not (arg.type.is_block and arg.dtype.is_ptr()):
        return None
    op = y.owner
    if op is None or op not in body.ops or op.kind != "addptr" or op.operands[0] is not arg:
        return None
    spread = op.operands[1].owner
    if spread is None or spread.kind != "splat":
        return None
    s = spread.operands[0]
    if s.type.is_block or not s.dtype.is_int() or s.dtype == D.int1 or \
            s.dtype.is_int_unsigned() or s.dtype.bits > 64:
        return None  # (unsigned steps: rare, and widened otherwise than signed ones)
    return s


def _from(v: Value, arg: Value) -> bool:
    """Whether `v` is computed from `arg` (through ops of the loop's body)."""
    seen: set[int] = set()
    todo = [v]
    while todo:
        x = todo.pop()
        if x is arg:
            return True
        if x.id in seen or x.owner is None:
            continue
        seen.add(x.id)
        todo += x.owner.operands
    return False


def _replace(region: Region, old: Value, new: Value) -> None:
    for o in region.ops:
        o.operands = [new if v is old else v for v in o.operands]
        for r in o.regions:
            _replace(r, old, new)
    region.yields = [new if v is old else v for v in region.yields]
