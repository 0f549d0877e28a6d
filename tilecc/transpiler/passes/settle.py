"""The last pass: settle every decision the renderer would otherwise take while writing.

After it the IR says everything the source depends on, and rendering only reads it:

* which planned pipelines are kept — those whose moved ops the renderer writes as
  expressions (`passes.emission`), so they can be written again at the issue point;
* for each kept pipeline, whether one warpgroup MMA stays in flight across iterations
  (num_stages ≥ 4, one product on a unit with asynchronous groups that only accumulates,
  A not from registers, no fp8 partial sums to add), and so how many iterations ahead
  its copies run;
* each product's final plan: whether A goes to the unit from registers, and where its
  operands come from (for the kernel's header);
* whether the kernel needs the arch-specific target (a unit such as wgmma);
* which products of a pipelined body retire at a later product's wait (`Pipeline.deferred`),
  and the loads the pipeline does not copy, moved ahead of the products
  (passes.early_loads);
* the dynamic shared memory of tl.dot's tiles: the operands staged once before a loop
  (`loop.attrs["hoisted"]`) and the pipelines' stages (`Pipeline.tiles`), each at its
  offset, in the order the source declares them.  (The pool for reductions, scans and
  conversions is sized by the renderer as it writes the steps.)
* which stores through tensor descriptors the copy engine writes (`TmaStore`), and the
  tile of shared memory their blocks pass through, after every other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from tilecc.transpiler.ir import Kernel, Op, Region, walk
from tilecc.transpiler.passes import warp_roles
from tilecc.transpiler.passes.dot import DotPlan, a_in_registers, b_k_major, promotion_steps
from tilecc.transpiler.passes.early_loads import loads_first
from tilecc.transpiler.passes.emission import Emission
from tilecc.transpiler.passes.pipeline import (Pipeline, copy_engines, in_registers,
                                               own_elements)
from tilecc.transpiler.specs import TensorMap
from tilecc.transpiler.target import CompileTarget


def _innermost_loops(kernel: Kernel) -> dict[int, Op | None]:
    """id(op) -> the innermost loop op whose body holds it (None outside loops)."""
    found: dict[int, Op | None] = {}

    def visit(region, loop):
        for op in region.ops:
            found[id(op)] = loop
            for r in op.regions:
                visit(r, op if op.kind in ("for", "while") else loop)
    visit(kernel.body, None)
    return found


def _held_across_iterations(dot: Op, loop_of: dict[int, Op | None]) -> bool:
    """Whether the dot's A is made outside the loop the dot runs in (attention's Q).  Such
    an A is staged in shared memory once, before the loop, rather than read from registers
    by every iteration's product: registers that the tensor cores read asynchronously and
    that must survive the loop's back edge untouched were seen given to the next product's
    operand by ptxas 13.0 (the backward of attention at head dim 64 computed wrong dQ, dK
    and dV on an H200); a tile in shared memory is what the field's kernels use for a
    stationary operand anyway."""
    loop = loop_of.get(id(dot))
    a = dot.operands[0].owner
    return loop is not None and a is not None and loop_of.get(id(a)) is not loop


def settle(kernel: Kernel, target: CompileTarget, made_descriptor_tma: bool = True,
           tma_stores: bool = True, deferred_products: bool = True) -> None:
    """Settle `kernel`'s pipelines, dot plans, arch-specific flag and tl.dot tiles in place.
    `tma_stores` False: descriptor stores stay stores of the threads (a build whose
    shared memory would not fit with their tile); `deferred_products` False: no product
    leaves its wait to a later one's (a build where ptxas serialized them so)."""
    emission = Emission(kernel, target.matrix_units)
    pipelined: set[int] = set()  # ids of the loads pipelines copy into shared memory
    planned: dict[int, Pipeline] = {}  # each kept pipeline as the planning pass left it
    for op in kernel.walk():
        p: Pipeline | None = op.attrs.get("pipeline") if op.kind == "for" else None
        if p is None:
            continue
        if not _writable_ahead(op, p, emission):
            del op.attrs["pipeline"]
            continue
        settled = _at_top(op, _in_flight(op, p, emission, kernel.num_warps))
        if p.wider is not None and settled.copies_at_top and \
                _writable_ahead(op, p.wider, emission):
            # every load read ahead, where the copies go out at the top of the iteration
            wider = _at_top(op, _in_flight(op, p.wider, emission, kernel.num_warps))
            if wider.copies_at_top:
                p, settled = p.wider, wider
        pipelined |= {ld.result.id for ld in p.loads} | {v.result.id for v in p.views}
        planned[id(op)] = p
        op.attrs["pipeline"] = _own_stages(op, settled)
    loop_of = _innermost_loops(kernel)
    for op in kernel.walk():
        if op.kind == "dot":
            plan: DotPlan = op.attrs["plan"]
            a_regs = a_in_registers(op) and op.operands[0].id not in pipelined
            if a_regs and _held_across_iterations(op, loop_of):
                a_regs = False
            sources = _sources(op, a_regs) if plan.unit.operands_from_shared else \
                ("A from registers (held in the accumulator layout)" if a_regs else plan.sources)
            op.attrs["plan"] = replace(plan, a_from_registers=a_regs, sources=sources)
    kernel.arch_specific = any(op.attrs["plan"].unit.arch_specific
                               for op in kernel.walk() if op.kind == "dot")
    kernel.tensor_maps = _tensor_maps(kernel)
    stores = _tma_stores(kernel, target, made_descriptor_tma) if tma_stores else []
    roles = kernel.warp_roles = warp_roles.plan(kernel, {id(op) for op, _ in stores})
    # the releases of a body whose second product only accumulates pay through the overlap
    # alone, which takes warp roles: without them that product is deferred, as before
    for op in kernel.walk():
        p = op.attrs.get("pipeline") if op.kind == "for" else None
        if p is not None and p.releases and (roles is None or roles.loop is not op) and \
                _accumulating_readers(op, emission):
            op.attrs["pipeline"] = _own_stages(op, _at_top(op, _in_flight(
                op, planned[id(op)], emission, kernel.num_warps, offer_overlap=False)))
    if roles is not None:
        p = roles.loop.attrs["pipeline"]
        roles.loop.attrs["pipeline"] = replace(p, note=re.sub(
            r", \d+ iterations? ahead \(", ", by a producer warpgroup as each stage is "
            "released (", p.note))
    _dynamic_tiles(kernel, pipelined, stores, kernel.num_warps * target.warp_size)
    for op in kernel.walk():
        if op.kind == "for" and "pipeline" in op.attrs and deferred_products:
            op.attrs["pipeline"] = _deferred(op, op.attrs["pipeline"], emission)
            if roles is not None and roles.loop is op:
                op.attrs["pipeline"] = _overlapped(op, op.attrs["pipeline"], emission)
    loads_first(kernel, emission)


@dataclass(frozen=True)
class Tile:
    """A tl.dot operand's tile (or stages) in dynamic shared memory."""
    offset: int  # bytes from the start of dynamic shared memory
    nbytes: int  # taken: tiles in 1024-byte multiples (wgmma's swizzle atoms), mbarriers 8 each
    what: str  # for the resource check's list of what takes shared memory


@dataclass(frozen=True)
class Hoisted:
    """An operand of a product in a loop's body that is defined before the loop: staged
    into a tile of its own once, before the loop, instead of at every iteration."""
    dot: Op
    which: int  # 0: A, 1: B
    tile: Tile


@dataclass(frozen=True)
class TmaStore:
    """`attrs["tma_store"]` of a store through a tensor descriptor that the copy engine
    (TMA, sm_90) writes: the threads put the block into `buffer` (boxes of `box` = rows x
    128 bytes, 128-byte swizzled, side by side along the columns), one thread issues a copy
    of each box at the block's corner (`corner`: row, column), and the next such store, or
    the kernel's end, waits until the copies have read the buffer.  The copies run on
    while the program does: a persistent kernel's next output tile starts its K loop
    behind them.  The copy engine writes only what lies inside the tensor, as the bounds
    mask the store keeps does (for the interpreter, and for the threads' stores of a
    block whose corner lies outside the tensor: a negative corner, which the copy engine
    faults on, measured on an H200)."""
    map: TensorMap
    corner: tuple
    bounds: tuple  # the descriptor's shape (a block with its corner outside: the threads')
    buffer: Tile
    # the coordinates of the map's dims past the block's (box 1 each, outermost first)
    # and the descriptor's shape there (ir.DescriptorRead.outer)
    outer: tuple = ()
    outer_bounds: tuple = ()


def _tma_stores(kernel: Kernel, target: CompileTarget, made_descriptor_tma: bool
                ) -> list[tuple[Op, TensorMap]]:
    """The descriptor stores the copy engine can write, with their tensor maps (added to
    the kernel's): a 2-D block whose rows are whole 128-byte boxes, at most 256 of them
    (the largest box), of a descriptor whose map is not already one of another box — in
    kernels with pipelined tl.dot loops, which hold one program per SM in shared memory
    already: elsewhere the block's tile would cost programs per SM (a copy kernel)."""
    if not target.has_tma or not any(op.kind == "for" and "pipeline" in op.attrs
                                     for op in kernel.walk()):
        return []
    maps = {m.key: m for m in kernel.tensor_maps}
    out = []
    for op in kernel.walk():
        src = op.attrs.get("descriptor") if op.kind == "store" else None
        if src is None or (src.args is not None and not made_descriptor_tma):
            continue
        x = op.operands[1]
        if not x.type.is_block or len(x.type.shape) != 2 or x.dtype.bits < 8:
            continue
        rows, cols = x.type.shape
        inner = 128 // x.dtype.itemsize
        if cols % inner or rows % 8 or rows > 256:
            continue
        m = TensorMap(src.param, x.dtype.short, (1,) * len(src.outer) + (rows, inner), 128,
                      "zero", src.args, True)
        have = maps.get(m.key)
        if have is not None and have != m:  # one map per descriptor (the loads' box)
            continue
        maps[m.key] = m
        out.append((op, m))
    kernel.tensor_maps = list(maps.values())
    return out


def _dynamic_tiles(kernel: Kernel, pipelined: set[int],
                   stores: list[tuple[Op, TensorMap]], threads: int) -> None:
    at = 0

    def take(nbytes: int, what: str) -> Tile:
        nonlocal at
        taken = (nbytes + 1023) // 1024 * 1024
        tile = Tile(at, taken, f"{what}: {taken} bytes")
        at += taken
        return tile

    for loop in kernel.walk():
        if loop.kind != "for":
            continue
        body = loop.regions[0]
        inside = {a.id for a in body.args}
        for o in walk(body):
            inside.update(r.id for r in o.results)
            inside.update(a.id for r in o.regions for a in r.args)
        hoisted = []
        for o in body.ops:
            if o.kind != "dot" or not o.attrs["plan"].matrix:
                continue
            for which, x in enumerate(o.operands[:2]):
                if x.id in inside or x.id in pipelined or \
                        (which == 0 and o.attrs["plan"].a_from_registers):
                    continue
                rows, cols = x.type.shape
                hoisted.append(Hoisted(o, which, take(
                    rows * cols * x.dtype.itemsize,
                    f"L{o.loc.line}: {x.name or 'an operand'} of tl.dot, {rows} x {cols} "
                    f"{x.dtype.short}, staged before its loop")))
        if hoisted:
            loop.attrs["hoisted"] = hoisted
        p: Pipeline | None = loop.attrs.get("pipeline")
        if p is not None:
            tiles = []
            for ld, own in zip(p.loads, p.own):
                x = ld.result
                shape = " x ".join(map(str, x.type.shape)) or "scalar"
                count = p.own_stages if own and p.own_stages else p.stages
                elems = own_elements(x, threads) if own else x.type.numel
                tiles.append(take(count * elems * x.dtype.itemsize,
                                  f"L{ld.loc.line}: {x.name or 'an operand'} "
                                  f"{'read ahead' if own else 'of tl.dot'}, {shape} "
                                  f"{x.dtype.short} in {count} pipeline stages"))
            loop.attrs["pipeline"] = replace(p, tiles=tiles)
    # the mbarriers of TMA copies or cp.async arrivals (one per stage, 8 bytes each), after
    # every tile
    for loop in kernel.walk():
        p = loop.attrs.get("pipeline") if loop.kind == "for" else None
        if p is not None and (p.arrivals or any(t is not None for t in p.tma)):
            what = "cp.async copies' arrivals" if p.arrivals else "TMA copies"
            released = p.releases or kernel.warp_roles is not None
            count = 2 * p.stages if released else p.stages
            what += ", then those of the warps' releases" if released else ""
            barriers = Tile(at, 8 * count, f"L{loop.loc.line}: the mbarriers of the "
                                           f"{what}: {8 * count} bytes")
            at += barriers.nbytes
            loop.attrs["pipeline"] = replace(p, barriers=barriers)
    # one tile for every TMA store's block (each waits for the copies before to have read
    # it), after all the rest: what the K loops refill never overlaps copies in flight
    if stores:
        at = (at + 1023) // 1024 * 1024  # 128-byte swizzled boxes: 1024-byte aligned
        nbytes = max(op.operands[1].type.numel * op.operands[1].dtype.itemsize
                     for op, _ in stores)
        buffer = Tile(at, nbytes, f"the blocks the copy engine stores: {nbytes} bytes")
        for op, m in stores:
            src = op.attrs["descriptor"]
            op.attrs["tma_store"] = TmaStore(m, src.corner, src.bounds, buffer, src.outer,
                                             src.outer_bounds)


def _tensor_maps(kernel: Kernel) -> list[TensorMap]:
    """The tensor maps the kept pipelines' TMA copies read, one per descriptor."""
    maps: dict[tuple, TensorMap] = {}
    for loop in kernel.walk():
        p: Pipeline | None = loop.attrs.get("pipeline") if loop.kind == "for" else None
        for ld, copy in zip(p.loads if p else (), p.tma if p else ()):
            if copy is not None and copy.key not in maps:
                maps[copy.key] = TensorMap(copy.param, ld.result.dtype.short, copy.map_box,
                                           copy.swizzle, copy.padding, copy.args,
                                           rows_split=copy.rows_split,
                                           requires=copy.requires, pointers=copy.pointers)
            if copy is not None and copy.rows_split and copy.tail_key not in maps:
                maps[copy.tail_key] = TensorMap(copy.param, ld.result.dtype.short,
                                                copy.map_tail_box, copy.swizzle, copy.padding,
                                                copy.args, requires=copy.requires,
                                                pointers=copy.pointers)
    return list(maps.values())


def dynamic_tiles(kernel: Kernel, barriers: bool = True) -> list[Tile]:
    """Every tile `settle` placed in dynamic shared memory, in offset order (without the
    TMA copies' mbarriers and the TMA stores' tile, which come last, where `barriers` is
    False)."""
    tiles: list[Tile] = []
    for loop in kernel.walk():
        tiles += [h.tile for h in loop.attrs.get("hoisted", ())]
        if "pipeline" in loop.attrs:
            tiles += loop.attrs["pipeline"].tiles
    if not barriers:
        return tiles
    tiles += [loop.attrs["pipeline"].barriers for loop in kernel.walk()
              if "pipeline" in loop.attrs and loop.attrs["pipeline"].barriers is not None]
    stores = tma_store_tile(kernel)
    return tiles if stores is None else tiles + [stores]


def tma_store_tile(kernel: Kernel) -> Tile | None:
    """The tile the kernel's TMA stores write through (`TmaStore.buffer`); None: it has
    none."""
    return next((op.attrs["tma_store"].buffer for op in kernel.walk()
                 if "tma_store" in op.attrs), None)


def _writable_ahead(loop: Op, p: Pipeline, emission: Emission) -> bool:
    """The ops a pipeline moves to its issue point are its loads, expressions the
    renderer inlines, and scalars (an offset `k * BLOCK_K` read by several pointers),
    which the issue point writes out again as expressions of the index it copies for."""
    body = {id(o): o for o in loop.regions[0].ops}
    return all(body[i] in p.loads or body[i] in p.rotated or
               body[i].results[0].id in emission.inline
               or not body[i].results[0].type.is_block for i in p.slice_ops)


# multiply-adds of a product per iteration from which one warpgroup's pipeline refills
# behind a barrier, num_stages - 1 iterations ahead (128 x 128 x 32).  Every product does,
# on any number of warps, where the copy engine fills every stage (each thread then waits
# for its stage at the top of the iteration).  Measured on an H200 against the barrier
# ending the iteration, tilecc / Triton speed at the same configuration, 4096³ (8192³), the
# persistent GEMM over host descriptors and the one of a program a tile over descriptors
# made in the kernel (`bench_descriptor.py`'s kernels), 4 stages:
#   128 x 128 x 64, 8 warps: persistent 0.78 -> 1.03 (0.75 -> 1.02), a tile 0.88 -> 1.10
#     (0.81 -> 1.05); 256 x 128 x 64: +8% persistent, 1.03 -> 1.08 a tile;
#   128 x 256 x 32, 8 warps, 5 stages: 0.92 -> 0.95 (0.84 -> 0.88), 0.99 -> 1.03
#     (0.89 -> 0.98); 128 x 256 x 64 level;
#   one warpgroup: 128 x 64 x 32 persistent 0.69 -> 1.02, a tile 1.05 -> 1.15;
#     64 x 128 x 32 0.71 -> 0.97 and 1.04 -> 1.30.
DEEP_PRODUCT = 1 << 19

# cp.async copies run 3 or more ahead arrive on their stage's mbarrier (`Pipeline.arrivals`)
# where the iteration's product is at least this many multiply-adds or its instructions are
# 256 columns wide (measured on an H200, one warpgroup, against the wait before the refill
# barrier: 128 x 128 x 64 +2-4%, 64 x 256 x 32 +5-15%, 64 x 256 x 64 level; 128 x 128 x 32
# 0 to -11%, 64 x 128 x 64 and 128 x 64 x 64 -5 to +3%)
ARRIVALS_PRODUCT = 1 << 20

# Copies at least this many iterations ahead are waited for (the next stage's) before the
# refill barrier, which then ends the iteration: the wait then leaves at least two stages
# of copies in flight.  Two ahead it would leave none (the refill is issued after it):
# measured on an H200, 3 stages of 128 x 256 x 64 on 8 warps ran at 0.69-0.70 of Triton's
# speed that way against 0.86-0.96 with the iteration's own closing barrier; 3 ahead (one
# warpgroup, 4 stages) 64 x 256 x 32 went from 0.73-0.84 to 0.84-0.89 and 128 x 128 x 32
# from 0.80-0.86 to 0.84-0.89 (128 x 128 x 64: -4-5% at 4096³, +1-2% at 8192³).
AWAIT_AT_REFILL_DISTANCE = 3


def _in_flight(loop: Op, p: Pipeline, emission: Emission, num_warps: int,
               offer_overlap: bool = True) -> Pipeline:
    """Hopper, num_stages >= 3: one warpgroup MMA stays in flight while the next iteration
    starts, when only the loop reads its accumulator.  The stage the previous iteration's
    MMA read is refilled once every warp has retired its part of it (a warp's wait is its
    own: the four warps of a warpgroup run their rows on their own tensor cores, reading
    the same B).  With 4 stages or more the copies run num_stages - 2 iterations ahead,
    and the barrier that ends an iteration is that point; with 3 (one iteration ahead
    would not hide a load's latency), where the copy engine fills every stage, and in one
    warpgroup whose product is large enough to hide a barrier, they run num_stages - 1
    ahead, behind a second barrier after the wait for the previous MMA
    (`refill_barrier`, `DEEP_PRODUCT`), as Triton's pipeline does; from 3 ahead
    each thread waits for its copies of the next stage before that barrier, which then
    ends the iteration too (`awaits_at_refill`; Triton's iteration ends with another).
    Where every stage is the copy engine's, each thread instead waits for the stage it
    reads at the top of the iteration, as Triton does (`awaits_at_top`): the refill then
    goes out before the wait for the next stage, and no barrier ends the iteration
    (`bench_descriptor.py --fixed`, persistent, one warpgroup, 128 x 128 x 64, 4 stages:
    0.83 -> 1.00 of Triton's speed at 4096³, 0.78 -> 0.98 at 1024 x 32768 x 1024).  So do
    cp.async stages 3 or more ahead under a long product, their copies arriving on the
    stage's mbarrier (`arrivals`, ARRIVALS_PRODUCT).
    Measured on an H200 (fp16 / bf16, 4096³ and 8192³, one warpgroup, 4 stages, before
    `awaits_at_refill`): 128 x 128 x 64 tiles
    0.72-0.77 -> 0.81-0.87 of Triton's speed, 128 x 128 x 32 +4-6%, 64 x 256 x 32 level,
    128 x 64 x 32 and 64 x 128 x 32 (2^18 multiply-adds) 2-7% slower; with several
    warpgroups (8 warps, 128 x 256 x 64) no faster."""
    body = loop.regions[0]
    s = p.stages
    dots = [o for o in body.ops if o.kind == "dot" and o.attrs["plan"].unit.async_groups]
    overlap = (s >= 3 and len(dots) == 1 and _accumulates_only(dots[0], body, emission)
               and not a_in_registers(dots[0])  # A's registers must outlive the MMA
               and promotion_steps(dots[0]) is None  # its partial sums are waited for
               and _operands_outlive(dots[0], body, p))
    engine = {t is not None for t in p.tma}
    barrier = overlap and (s == 3 or engine == {True} or
                           num_warps <= 4 and _multiply_adds(dots[0]) >= DEEP_PRODUCT)
    dist = s - 2 if overlap and not barrier else s - 1
    note = (f"{p.note.split(' copied')[0]} copied into shared memory with {copy_engines(p)}, "
            f"{dist} iteration{'s' if dist > 1 else ''} ahead ({s} stages{in_registers(p)}"
            + (f"; one {dots[0].attrs['plan'].unit.name} kept in flight)" if overlap else ")"))
    # a thread's wait for a stage is all its reads need where the stage's mbarrier tells
    # when every copy of it landed: the copy engine's, or every thread's cp.async copies
    # arriving on it (not the two mixed), these where the wait for the next stage would
    # otherwise come before the refill (`awaits_at_refill`) and a long product hides the
    # barrier's poll before it (ARRIVALS_PRODUCT)
    long_product = overlap and (_multiply_adds(dots[0]) >= ARRIVALS_PRODUCT or
                                dots[0].operands[1].type.shape[-1] >= 256)
    at_top = barrier and len(engine) == 1 and not any(p.own) and \
        (engine == {True} or dist >= AWAIT_AT_REFILL_DISTANCE and long_product)
    # No product in flight, several warpgroups, every stage the threads' cp.async copies or
    # every stage the copy engine's (then only its thread waits for the release), read by
    # warpgroup products: the stages are released through mbarriers, not a barrier ending
    # the iteration (`releases`); the warpgroups then drift apart, one's softmax under
    # another's products.  Measured on an H200 against the closing barrier, attention
    # forward of D 128 on 8 warps: 1.07-1.13x.  Not on one warpgroup (D 64 on 4 warps:
    # 0.93-0.99x), nor where a product only accumulates (`_deferred` retires it at a later
    # product's wait, before a barrier: attention's dQ 0.92-0.94x without) — unless the
    # body takes the overlap (`_overlapped`; not offered where `offer_overlap` is False),
    # which needs the releases: there, a loop of two 128 x 128 x 128 products whose second
    # only accumulates ran at 791 TFLOP/s against 616 deferred (H200).
    top = {id(o) for o in body.ops}
    readers = [o for o in walk(body) if o.kind == "dot"]
    releases = (not overlap and num_warps > 4 and len(engine) == 1 and not any(p.own) and
                bool(readers) and
                all(id(o) in top and o.attrs["plan"].unit.async_groups for o in readers) and
                (not _accumulating_readers(loop, emission) or
                 offer_overlap and _overlap_candidate(loop, p) is not None))
    if releases:
        note = note[:-1] + "; a stage refilled once its readers' warps released it)"
    return replace(p, in_flight=overlap, refill_barrier=barrier,
                   awaits_at_refill=barrier and dist >= AWAIT_AT_REFILL_DISTANCE and
                   not at_top, awaits_at_top=at_top or releases,
                   arrivals=(at_top or releases) and engine == {False}, releases=releases,
                   distance=dist, note=note)


def _plain(p: Pipeline) -> bool:
    """Whether a settled pipeline keeps the plain scheme: no product in flight across
    iterations, no barrier before its refills, every stage waited for at the end of the
    iteration before the barrier that ends it."""
    return not (p.in_flight or p.refill_barrier or p.awaits_at_refill or p.awaits_at_top or
                p.releases or p.arrivals)


def _at_top(loop: Op, p: Pipeline) -> Pipeline:
    """The copies of a plain pipeline (`_plain`) one iteration ahead (2 stages) whose
    body's one product is a warpgroup MMA go out at the top of each iteration
    (`Pipeline.copies_at_top`), where the stage they refill is free: the previous
    iteration waited for its product and ended with a barrier (or, for the loads read
    ahead alone, each thread read its own copies back).  Issued under the product, one
    iteration ahead, they overlapped the product alone and the rest of the body waited for
    them: a chunked linear attention's state loop, which stores its state and scales its
    values before its product, ran at 0.74 of Triton's speed, and at 0.90 with the copies
    at the top (H200, hand-edited source).  With one product none is deferred to a later
    one's wait (`_deferred`), so none reads a stage past its iteration.  Not two or more
    ahead, where the copies already have a whole iteration to land: there the weight
    products (`bench_weight_products.py --quick`, 3 and 4 stages) lost 5-40% with their
    copies at the top."""
    dots = [o for o in walk(loop.regions[0]) if o.kind == "dot"]
    if not _plain(p) or p.distance != 1 or len(dots) != 1 or \
            dots[0] not in loop.regions[0].ops or \
            not dots[0].attrs["plan"].unit.async_groups:
        return p
    return replace(p, copies_at_top=True, note=p.note[:-1] + "; issued at the top of each "
                   "iteration)")


def _own_stages(loop: Op, p: Pipeline) -> Pipeline:
    """Loads read ahead (`Pipeline.own`) into as many stages as the copies run iterations
    ahead, not num_stages: each thread reads its vectors of a stage back into registers
    before the iteration's refill, which then writes the stage just read (the others hold
    the copies in flight), as Triton sizes such loads.  Where the body's one product is a
    warpgroup MMA, whose issue comes after its operands were computed from what was read
    back (the refill goes out after that issue: `render_dot.pipelined_body`); with a
    second product the refill could come before a later read back.  A stage fewer of a
    64 x 128 int8 weight tile at 4 stages takes the program to Triton's 72 KiB, three
    programs an SM instead of two.  Not where the copies go out at the top of the
    iteration (`_at_top`, one ahead): refilled after the read back, in the middle of the
    body, they would have the rest of it alone to land (the chunked state, H200: 0.86 of
    Triton's speed so, 0.94 in as many stages as the others)."""
    body = loop.regions[0]
    dots = [o for o in body.ops if o.kind == "dot"]
    if not any(p.own) or p.copies_at_top or p.distance >= p.stages or len(dots) != 1 or \
            not dots[0].attrs["plan"].unit.async_groups:
        return p
    at = {id(o): i for i, o in enumerate(body.ops)}
    if any(at.get(id(ld), len(at)) > at[id(dots[0])] for ld, own in zip(p.loads, p.own)
           if own):
        return p  # (read back after the product, or inside a branch: not before it)
    return replace(p, own_stages=p.distance)


def in_stages(p: Pipeline) -> set[int]:
    """The values a product reads straight from the pipeline's stages: its loads (and their
    transposes read the other way, `Pipeline.views`), but for those read ahead and read
    back into registers (`Pipeline.own`), which the threads then store to the pool as any
    value made in the body."""
    return {ld.result.id for ld, own in zip(p.loads, p.own) if not own} | \
        {v.result.id for v in p.views}


def _operands_outlive(dot: Op, body: Region, p: Pipeline) -> bool:
    """Whether what a product reads stays put while it runs on into the next iteration:
    its operands come from the pipeline's stages (whose refills wait for it) or from
    before the loop (staged once).  An operand computed in the body (`b.to(tl.float16)`
    of a loaded int8 block) is staged in the shared-memory pool at every iteration: the
    next iteration's stores would overwrite it under the product still reading it."""
    streamed = in_stages(p)
    made = {r.id for o in walk(body) for r in o.results}
    return all(x.id in streamed or x.id not in made for x in dot.operands[:2])


def _multiply_adds(dot: Op) -> int:
    """A product's multiply-adds: M x N x K."""
    (m, k), n = dot.operands[0].type.shape[-2:], dot.operands[1].type.shape[-1]
    return m * n * k


def _deferred(loop: Op, p: Pipeline, emission: Emission) -> Pipeline:
    """Of a pipelined body's several warpgroup MMAs (once their operands' places are
    settled), those whose wait can be left to a later one (`Pipeline.deferred`): each only
    updates its loop-carried accumulator (read by nothing else in the loop, the old value
    either), with no partial sums to add (fp8), and reads its operands where nothing
    rewrites them while it runs: A from registers, each from the pipeline's stages (whose
    refills wait for it) or from a tile staged once before the loop — never from the
    shared-memory pool, which the next iteration writes again.  A wait for all groups
    retires them (wgmma groups complete in order), so at least one product must wait for
    its own result."""
    body = loop.regions[0]
    dots = [o for o in body.ops if o.kind == "dot" and o.attrs["plan"].unit.async_groups]
    streamed = in_stages(p)
    once = {(id(h.dot), h.which) for h in loop.attrs.get("hoisted", ())}

    def settled(d: Op, which: int) -> bool:
        if which == 0 and d.attrs["plan"].a_from_registers:
            return True
        return d.operands[which].id in streamed or (id(d), which) in once

    # (a result narrower than the sum is rounded from it right after the product: waited)
    chosen = [d for d in dots if _accumulates_only(d, body, emission)
              and emission.uses.get(d.operands[2].id, 0) == 1 and promotion_steps(d) is None
              and d.result.dtype == d.attrs["acc_dtype"] and settled(d, 0) and settled(d, 1)]
    if p.in_flight or p.releases or not chosen or len(chosen) == len(dots):
        return p
    many = len(chosen) > 1
    note = (p.note[:-1] + f"; {len(chosen)} accumulating product{'s' if many else ''} "
            "retired by the next product's wait)")
    return replace(p, deferred=frozenset(id(d) for d in chosen), note=note)


# Registers a consumer thread may hold across the overlapped loop's products (the first
# product's result, the second's accumulator and its A packed in pairs), within what
# `setmaxnreg` gives it (232 at 8 warps): attention's forward at head dim 128, blocks of
# 128 x 128 on 8 warps, holds 64 + 64 + 32 and compiled without spills
OVERLAP_REGISTERS = 160


@dataclass(frozen=True)
class Overlap:
    """The parts of an overlapped loop's body (`Pipeline.overlapped`), in body order: the
    ops before its first product, the two products, the ops between them that do not read
    the second's loop-carried accumulator (`free`: under the previous block's second
    product) and those that do (`dependent`: after it retired), the ops after the second,
    and the index of the accumulator among the loop-carried values."""
    before: list
    first: Op
    free: list
    dependent: list
    second: Op
    after: list
    carried: int


def overlap_parts(loop: Op) -> Overlap | None:
    """A loop body of the form products are overlapped in (attention's forward: scores,
    softmax, P V): two products, both at the body's top level, the first's result not
    carried; the second's result only yielded, as a loop-carried accumulator, and its
    accumulator operand the carried one or made from it by ops between the products —
    which is all that reads it (neither product's A or B, nor another carried value).
    None otherwise."""
    body = loop.regions[0]
    dots = [o for o in walk(body) if o.kind == "dot"]
    if len(dots) != 2 or any(d not in body.ops for d in dots):
        return None
    first, second = dots
    yields = [i for i, y in enumerate(body.yields) if y is second.result]
    if len(yields) != 1 or any(y is first.result for y in body.yields):
        return None
    carried = yields[0]
    reached = {body.args[1 + carried].id}  # what the carried accumulator reaches
    parts: dict[str, list] = {"before": [], "free": [], "dependent": [], "after": []}
    where = "before"
    for o in body.ops:  # (an op's regions read what reaches it too: a branch's body)
        inner = [o, *(i for r in o.regions for i in walk(r))]
        reads = any(x.id in reached for i in inner for x in i.operands) or \
            any(y.id in reached for i in inner for r in i.regions for y in r.yields)
        if o is first:
            if reads:
                return None
            where = "free"
            continue
        if o is second:
            where = "after"
            continue
        if reads:
            reached |= {r.id for r in o.results}
            if where != "free":
                return None  # read before the first product, or after the second
            parts["dependent"].append(o)
        else:
            parts[where].append(o)
    acc = second.operands[2]
    if second.operands[0].id in reached or second.operands[1].id in reached or \
            acc.id not in reached or \
            any(y.id in reached for i, y in enumerate(body.yields) if i != carried):
        return None
    return Overlap(parts["before"], first, parts["free"], parts["dependent"], second,
                   parts["after"], carried)


def _accumulating_readers(loop: Op, emission: Emission) -> bool:
    """Whether a product of the loop's body only updates its loop-carried accumulator."""
    body = loop.regions[0]
    return any(_accumulates_only(o, body, emission) for o in walk(body) if o.kind == "dot")


def _overlap_candidate(loop: Op, p: Pipeline) -> Overlap | None:
    """The body's parts (`overlap_parts`) where the loop has what `_overlapped` asks that
    can be known before the warp roles and the operands' places are settled: the first
    product's A made before the loop (staged once) and both products' B streamed, the
    second's A a 16-bit block the unit can read from registers, no fp8 partial sums or
    narrower results, and the registers the products hold across each other
    (`OVERLAP_REGISTERS`); None otherwise."""
    parts = overlap_parts(loop)
    if parts is None:
        return None
    first, second = parts.first, parts.second
    made = {r.id for o in walk(loop.regions[0]) for r in o.results}
    streamed = in_stages(p)
    a = second.operands[0]
    held = first.result.layout.regs + second.result.layout.regs + a.layout.regs // 2
    ok = (first.operands[0].id not in made and first.operands[1].id in streamed and
          second.operands[1].id in streamed and a_in_registers(second) and
          a.dtype.itemsize == 2 and held <= OVERLAP_REGISTERS and
          all(promotion_steps(d) is None and d.result.dtype == d.attrs["acc_dtype"] and
              d.attrs["plan"].unit.async_groups for d in (first, second)))
    return parts if ok else None


def _overlapped(loop: Op, p: Pipeline, emission: Emission) -> Pipeline:
    """FlashAttention-3's overlap within a warpgroup, for a loop whose stages the
    consumers of warp roles release (`Pipeline.releases`) and whose body has the form
    `overlap_parts` reads: each iteration issues its block's first product (A staged once
    before the loop, B from the stage), then the previous block's second product (A, the
    previous block's values in registers, packed after the wait that retired the product
    before; B from the previous stage), waits for the first only, computes what does not
    read the accumulator under the second, then waits for it.  The tensor cores then run
    the second product while the warpgroup works out the next one's operand.  Measured on
    an H200, attention's forward at head dim 128 (128 x 128 blocks, 8 warps, written by
    hand that way first): 493 -> 570 TFLOP/s non-causal, SDPA 590 in the same run.
    Where the products' registers would not fit (`OVERLAP_REGISTERS`), the loop stays."""
    parts = _overlap_candidate(loop, p) if p.releases else None
    if parts is None:
        return p
    first, second = parts.first, parts.second
    once = {(id(h.dot), h.which) for h in loop.attrs.get("hoisted", ())}
    if (id(first), 0) not in once or not second.attrs["plan"].a_from_registers or \
            emission.uses.get(second.result.id, 0) != 1:
        return p
    return replace(p, overlapped=True, note=p.note[:-1] + "; each block's first product "
                   "issued before the previous block's second, what lies between them "
                   "computed under it)")


def _accumulates_only(dot: Op, body: Region, emission: Emission) -> bool:
    """The dot's result is the loop-carried accumulator, updated in place, and nothing
    else in the loop reads it."""
    d, acc = dot.result, dot.operands[2]
    return (emission.root(d) == emission.root(acc) and any(a is acc for a in body.args) and
            emission.uses.get(d.id, 0) == 1 and any(y is d for y in body.yields))


def _sources(op: Op, a_regs: bool) -> str:
    """Where a unit that reads shared memory itself gets the operands, for the header."""
    if not a_regs and not b_k_major(op):
        return "operands read from shared memory"
    a = "registers (held in the accumulator layout)" if a_regs else "shared memory"
    return f"A from {a}, B from shared memory" + (" (K-major)" if b_k_major(op) else "")
