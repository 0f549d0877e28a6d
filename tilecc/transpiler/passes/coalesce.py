"""Stores of a product's result, and loads into a product's layout, in whole 16-byte vectors:
the block goes through shared memory.

A matrix unit leaves its accumulator in the unit's layout: a thread holds pairs of
adjacent columns, so a store straight from it writes 4 bytes per lane (fp16) in rows 8
lanes apart, half of each 32-byte sector per instruction.  Where the pointers allow wider
vectors, `coalesce_stores` stores from a blocked layout instead (each thread 16 bytes
along the pointers' contiguous axis, a warp's lanes along it, as Triton's coalescing
does): the stored value is converted through shared memory, and the pointers and mask,
index arithmetic, are computed again in the new layout.

After the loops, only where the conversion cannot cost shared memory the kernel does not
have: a store after every loop whose tl.dot tiles lie in dynamic shared memory, whose
block fits in those tiles (`Op.attrs["reuse_tiles"]` on the convert: the renderer writes
it there once every thread is past the loops) — at the kernel's top level, or in the body
of a loop that holds no tiles itself after the loops there that do: the output tiles of a
persistent kernel, whose next tile's copies then wait for the conversion's reads
(`Op.attrs["tiles_again"]`: a barrier after them).  Measured on Hopper GEMM epilogues
(H200, 4096³ to 8192³, fp16 / bf16): 3-10% of the whole kernel's time.

Inside a loop, a 16-bit accumulator stored at each iteration, or under a branch of it
(the state of a chunked linear attention, written before each chunk is added, or every
few chunks), is converted through the pool of layout conversions (`coalesce_in_loops`),
a step like any other there, where the pool's largest step still fits beside the tiles:
a loop that stored 4 bytes a lane spent a third of its time on those stores (H200, 64 x 64
bf16 states, 64 chunks a program).

Loads the other way round (`coalesce_loads`): a 16-bit block loaded into a matrix unit's
accumulator layout (it is added to a product's result, or is a product's A read from
registers) reads 4 bytes a lane there, in rows 8 lanes apart.  Where the pointers allow,
it is loaded from a blocked layout in 16-byte vectors instead and converted through the
pool, as Triton's loads keep their coalesced layout and convert: fla's WY-representation
backward kernel read its six 64 x 64 blocks in 196 four-byte loads (Triton: 56 of 16 bytes).
The conversion is placed where the block is first read, not after the load, so that a load
the loop issued early keeps its latency hidden.
"""

from __future__ import annotations

from math import prod

from tilecc.transpiler import ir
from tilecc.transpiler.ir import Kernel, Op, Value, walk
from tilecc.transpiler.passes.dce import PURE
from tilecc.transpiler.passes.emission import in_accumulator_layout
from tilecc.transpiler.passes.layouts import (REMAT_POINTERS, _contiguity_order, _plan,
                                              _rematerialize, _shared_rows, default_blocked)
from tilecc.transpiler.passes.placement import Placement
from tilecc.transpiler.passes.settle import dynamic_tiles

LOOPS = ("for", "while")


def coalesce_in_loops(kernel: Kernel, warp_size: int, units, room: int) -> list[str]:
    """Convert the values of the stores in loops whose blocks are matrix units'
    accumulators of 16-bit elements, stored less than 8 bytes a lane, through the pool
    (`room`: the bytes of shared memory beside the tl.dot tiles); the header's notes."""
    tiles = _tiles_kib(kernel)
    notes: list[str] = []
    for loop in kernel.walk():
        if loop.kind not in LOOPS:
            continue
        for body in _iteration_regions(loop):
            new_ops: list[Op] = []
            for op in body.ops:
                x = op.operands[1] if op.kind == "store" else None
                if x is not None and x.type.is_block and x.dtype.itemsize == 2 and \
                        in_accumulator_layout(x, units) and \
                        op.attrs["plan"].vec * 2 < 8 and \
                        prod(x.type.shape) * 2 <= room - tiles * 1024:
                    made = _coalesced(op, kernel.num_warps, warp_size, room, reuse=False)
                    if made is not None:
                        new_ops.extend(made)
                        notes.append(_note(op, made, " in the loop: through shared memory"))
                new_ops.append(op)
            body.ops = new_ops
    return notes


def _iteration_regions(loop: Op) -> list:
    """The regions a loop's iteration runs: its body's, and those of the branches in it
    (a state stored every few chunks: `if i_t % NTS == 0: tl.store(...)`), not those of
    the loops nested in it (each is a loop of its own).  A branch's condition is a scalar,
    alike in every thread: a conversion's barriers there are reached by all or none."""
    out = []

    def visit(region) -> None:
        out.append(region)
        for op in region.ops:
            if op.kind == "if":
                for r in op.regions:
                    visit(r)
    for body in loop.regions:
        visit(body)
    return out


def coalesce_loads(kernel: Kernel, warp_size: int, units, room: int) -> list[str]:
    """Load the 16-bit blocks held in a matrix unit's accumulator layout, read less than 8
    bytes a lane there, from a blocked layout in 16-byte vectors, converted through the
    pool (`room`: the bytes of shared memory beside the tl.dot tiles); the header's notes.
    Only in loops: a block loaded once (attention backward's Q and dO before its loop over
    keys) costs little read narrow, and its conversion would take the pool's memory from
    the kernel's whole run (at head dim 64 that cost attention backward a third of its
    speed).  Not the loads a pipeline copies (they never pass through registers), nor in
    a kernel with warp roles (a producer warp takes no part in the pool's barriers)."""
    if kernel.warp_roles is not None:
        return []
    copied = {id(ld) for op in kernel.walk() if op.kind == "for" and "pipeline" in op.attrs
              for ld in op.attrs["pipeline"].loads}
    tiles = _tiles_kib(kernel)
    notes: list[str] = []
    home = {id(op): r for r in _regions(kernel.body) for op in r.ops}  # op → its region

    def visit(region, in_loop: bool) -> None:
        for op in list(region.ops):
            for r in op.regions:
                visit(r, in_loop or op.kind in LOOPS)
            x = op.results[0] if op.kind == "load" and op.results else None
            if x is None or not in_loop or id(op) in copied or "descriptor" in op.attrs or \
                    not x.type.is_block or x.dtype.itemsize > 2 or \
                    not in_accumulator_layout(x, units) or \
                    op.attrs["plan"].vec * x.dtype.itemsize >= 8 or \
                    prod(x.type.shape) * x.dtype.itemsize > room - tiles * 1024:
                continue
            made = _coalesced_load(op, kernel.num_warps, warp_size)
            if made is None:
                continue
            clones, origins, convert = made
            replaced.update(id(o) for o in origins.values())
            for clone in clones:  # each beside what it copies: pointers kept from before a
                where = home[id(origins[id(clone)])]  # loop are made there again
                where.ops.insert(where.ops.index(origins[id(clone)]) + 1, clone)
                home[id(clone)] = where
            at = _first_reader(region, op, x)
            region.ops.insert(at, convert)
            what = x.name or "the loaded value"
            notes.append(f"L{op.loc.line}: {what} ({x.type}), loaded in 16-byte vectors")

    replaced: set[int] = set()  # id() of the index arithmetic made again in a new layout
    visit(kernel.body, False)
    if replaced:
        _drop_unread(kernel, replaced)
    return notes


def _drop_unread(kernel: Kernel, candidates: set[int]) -> None:
    """Drop the ops of `candidates` (pure index arithmetic) that nothing reads any more,
    and then what only they read: the pointers of a layout no load uses."""
    while True:
        uses = ir.uses(kernel)
        dropped = False
        for region in _regions(kernel.body):
            kept = []
            for op in region.ops:
                if id(op) in candidates and op.kind in PURE and \
                        not any(uses.get(r.id) for r in op.results):
                    candidates.update(id(o.owner) for o in op.operands if o.owner is not None)
                    dropped = True
                else:
                    kept.append(op)
            region.ops = kept
        if not dropped:
            return


def _coalesced_load(load: Op, num_warps: int, warp_size: int):
    """The index arithmetic that gives `load` a coalesced layout (its operands rewritten,
    its result a new value), which op each of those copies, and the conversion back to the
    layout its result had, whose result is that old value; None where no wider vector
    would be read, or its pointers, mask or default are not index arithmetic."""
    ptr, x = load.operands[0], load.results[0]
    if len(x.type.shape) != 2:
        return None
    want = _coalesced_placement(ptr, x.type.shape, num_warps, warp_size)
    if want == x.layout:
        return None
    clones: list[Op] = []
    origins: dict[int, Op] = {}
    operands = [o if not o.type.is_block else
                _rematerialize(o, Placement(want.enc, o.type.shape), clones, REMAT_POINTERS,
                               origins)
                for o in load.operands]
    if any(o is None for o in operands):
        return None
    before, old = load.attrs["plan"], list(load.operands)
    y = Value(x.type, x.name)
    y.layout, y.info = want, x.info
    load.operands[:], load.results[0] = operands, y
    y.owner = load
    after = _shared_rows(_plan(load), load.operands[0])
    if after.vec <= before.vec:  # no wider: keep the load as it was
        load.operands[:], load.results[0] = old, x
        return None
    load.attrs["plan"] = after
    convert = Op("convert", [y], [x], load.loc, {})
    return clones, origins, convert


def _regions(region):
    """`region` and every region nested in it."""
    yield region
    for op in region.ops:
        for r in op.regions:
            yield from _regions(r)


def _first_reader(region, after: Op, x: Value) -> int:
    """The index in `region` of the first op past `after` that reads `x` (itself or in a
    region of its own); the end where only the region's yields do."""
    start = region.ops.index(after) + 1
    for i in range(start, len(region.ops)):
        if any(o is x for o in _read_by(region.ops[i])):
            return i
    return len(region.ops)


def _read_by(op: Op):
    """The values `op` reads: its operands, and those its regions' ops and yields read."""
    yield from op.operands
    for r in op.regions:
        for sub in _regions(r):
            yield from sub.yields
            for inner in sub.ops:
                yield from inner.operands


def _tiles_kib(kernel: Kernel) -> int:
    """The KiB of dynamic shared memory the tl.dot tiles take, rounded up."""
    return -(-max((t.offset + t.nbytes for t in dynamic_tiles(kernel)), default=0) // 1024)


def coalesce_stores(kernel: Kernel, warp_size: int) -> list[str]:
    """Convert the values of the stores described above; returns the header's notes."""
    # (not over the TMA copies' mbarriers: memory that held one is not reused uninvalidated)
    tiles_end = max((t.offset + t.nbytes for t in dynamic_tiles(kernel, barriers=False)),
                    default=0)
    if not tiles_end:
        return _coalesce_in_pool(kernel, warp_size)
    if kernel.warp_roles is not None and kernel.warp_roles.tiles:
        # (a producer refills the tiles under the next tile's stores)
        return []
    notes: list[str] = []
    _coalesce_region(kernel.body, False, kernel.num_warps, warp_size, tiles_end, notes)
    return notes


def _coalesce_in_pool(kernel: Kernel, warp_size: int) -> list[str]:
    """A kernel whose products stage their operands in the pool of shared memory, with no
    tiles in dynamic memory (no K loop, or one of a single iteration, `range(tl.cdiv(K,
    BK))` at K = BK): its stores outside loops converted through the pool's first half
    too, where the block fits in what the products' tiles take of it already (the pool
    does not grow: as many programs an SM)."""
    room = max((_staged_bytes(op) for op in kernel.walk() if op.kind == "dot"), default=0)
    notes: list[str] = []
    new_ops: list[Op] = []
    for op in kernel.body.ops:
        made = _coalesced(op, kernel.num_warps, warp_size, room, reuse=False) \
            if op.kind == "store" and room else None
        if made is not None:
            made[-1].attrs["pool_first_half"] = True
            new_ops.extend(made)
            notes.append(_note(op, made, ": through shared memory (the tl.dot tiles' pool)"))
        new_ops.append(op)
    kernel.body.ops = new_ops
    return notes


def _note(store: Op, made: list[Op], where: str) -> str:
    """The header's note of a store given a coalesced layout by `made` (its conversion
    last)."""
    what = made[-1].operands[0].name or "the stored value"
    return f"L{store.loc.line}: {what} ({store.operands[1].type}), for 16-byte stores{where}"


def _staged_bytes(dot: Op) -> int:
    """The bytes of the pool a matrix unit's product stages its operands in (those not
    read from registers): render_dot.op_dot's tiles."""
    plan = dot.attrs["plan"]
    if not plan.matrix:
        return 0
    staged = dot.operands[1:2] if plan.a_from_registers else dot.operands[:2]
    return sum((prod(x.type.shape) * x.dtype.itemsize + 15) // 16 * 16 for x in staged)


def _coalesce_region(region, in_loop: bool, num_warps: int, warp_size: int, room: int,
                     notes: list[str]) -> None:
    """Coalesce the stores of `region` that come after its last op with tiles; then those
    of the bodies of its loops that hold tiles further in but none of their own (a
    persistent kernel's loop over output tiles).  `in_loop`: the region runs again, its
    tiles refilled, after the stores."""
    ops = region.ops
    last_tiles = max((i for i, op in enumerate(ops) if _has_tiles(op)), default=len(ops))
    new_ops: list[Op] = []
    for i, op in enumerate(ops):
        if i > last_tiles and op.kind == "store":
            made = _coalesced(op, num_warps, warp_size, room)
            if made is not None:
                if in_loop:
                    made[-1].attrs["tiles_again"] = True
                new_ops.extend(made)
                notes.append(_note(op, made, ": through shared memory (the tl.dot tiles')"))
        elif op.kind in LOOPS and not _own_tiles(op) and _has_tiles(op):
            for body in op.regions:
                _coalesce_region(body, True, num_warps, warp_size, room, notes)
        new_ops.append(op)
    region.ops = new_ops


def _own_tiles(op: Op) -> bool:
    """Whether loop `op` itself streams or holds tl.dot tiles."""
    return "pipeline" in op.attrs or bool(op.attrs.get("hoisted"))


def _has_tiles(op: Op) -> bool:
    """Whether `op` (or an op inside it) is a loop with tl.dot tiles in dynamic memory."""
    inner = (o for r in op.regions for o in walk(r))
    return any(o.kind in LOOPS and _own_tiles(o) for o in (op, *inner))


def _coalesced_placement(ptr: Value, shape: tuple[int, ...], num_warps: int,
                         warp_size: int) -> Placement:
    """Triton's coalesced layout of a block accessed through `ptr`: 16 bytes a thread along
    the pointers' contiguous axis, a warp's lanes along it."""
    enc = default_blocked(shape, max(1, 16 // ptr.dtype.element_ty.itemsize), num_warps,
                          warp_size, _contiguity_order(ptr))
    return Placement(enc, shape)


def _coalesced(store: Op, num_warps: int, warp_size: int, room: int,
               reuse: bool = True) -> list[Op] | None:
    """The ops that give `store` a coalesced layout (rewriting its operands), or None
    where it has one already, or none would store wider vectors, or its pointers or mask
    are not index arithmetic."""
    ptr, x = store.operands[0], store.operands[1]
    mask = store.operands[2] if len(store.operands) > 2 else None
    if "tma_store" in store.attrs or not x.type.is_block or len(x.type.shape) != 2 or x.owner is None:
        return None
    esize = x.dtype.itemsize
    if prod(x.type.shape) * esize > room:
        return None
    before = store.attrs["plan"]
    want = _coalesced_placement(ptr, x.type.shape, num_warps, warp_size)
    if want == x.layout:
        return None
    clones: list[Op] = []
    new_ptr = _rematerialize(ptr, want, clones, REMAT_POINTERS)
    new_mask = mask if mask is None else _rematerialize(mask, want, clones, REMAT_POINTERS)
    if new_ptr is None or (mask is not None and new_mask is None):
        return None
    y = Value(x.type, x.name)
    y.layout, y.info = want, x.info
    convert = Op("convert", [x], [y], store.loc, {"reuse_tiles": True} if reuse else {})
    old_operands = list(store.operands)
    store.operands[:] = [new_ptr, y] + ([new_mask] if mask is not None else [])
    after = _plan(store)
    if after.vec <= before.vec:  # no wider: keep the store as it was
        store.operands[:] = old_operands
        return None
    store.attrs["plan"] = after
    return clones + [convert]
