"""Warp specialization (sm_90): a pipelined loop's TMA copies issued by warps of their own.

A kernel that walks output tiles in a loop (Triton's tutorial 09: `for tile_id in
tl.range(start, num_tiles, NUM_SMS)`), each tile a K loop whose operands the copy engine
(TMA) brings, is written twice: a producer warpgroup, added after the kernel's
`num_warps`, whose one thread runs the tile loop with only what the copies read (the
scalars of the tile's coordinates and the K loop's bounds) and issues every stage's
copies; and the consumer warps (the kernel's own), which wait for each stage, multiply,
release it and store the tile.  The producer runs on into the next tile while the
consumers store the last: on an H200, a 128 x 256 x 64 persistent GEMM written by hand
this way ran 1.01-1.02x the single-role loop at 4096³ and 8192³ and 1.23x at
8192 x 512 x 8192, where the epilogue weighs most (docs/architecture.md).

Each stage has two mbarriers: "landed" (the copy engine's bytes) and "released" (one
arrival per consumer warp once the product that read the stage retired).  Neither role
waits on a block-wide barrier: the consumers' own barriers are named ones of their
threads only (the renderer writes them so).

Only where nothing else needs every warp: one pipelined loop in the kernel, every load of
it a TMA copy (no stream state, nothing read ahead or deferred), its first product long
enough (`PRODUCT`), and everything the copies and the loops' bounds read scalar
arithmetic of arguments, program ids and the tile loop's index; the loop either
  * the one product of a loop over tiles at the kernel's top level that carries no
    values and stores its blocks through the copy engine (a coalesced store would go
    through the stages the producer refills under it), or
  * at the kernel's top level, its stages released by each warp once its products
    retired (`Pipeline.releases`: attention's forward loop, two products; nothing is in
    flight after the loop).  On an H200 (`bench_attention.py --quick`, two runs, head
    dim 128, 8 warps) causal attention went from 429.8 / 428.5 to 448.3 / 445.7 TFLOP/s
    (1.49 -> 1.56x Triton), non-causal stayed level (487.0 / 489.4 -> 491.6 / 484.3).
Elsewhere the pipeline keeps its one role (a GEMM of one tile a program gained nothing
measurable: 0.97-1.04 of the single-role loop).
"""

from __future__ import annotations

from dataclasses import dataclass

from tilecc.transpiler.ir import Kernel, Op, Value, walk
from tilecc.transpiler.passes.dce import PURE

# the producer is one warpgroup: `setmaxnreg` moves registers by warpgroup
PRODUCER_WARPS = 4
# Products of at least this many multiply-adds a stage (M x N x K: 128 x 256 x 64;
# attention's 128 x 128 x 128) take the two roles.  Measured on an H200
# (`bench_descriptor.py --fixed`, Triton time / tilecc time, one role -> two):
# 128 x 256 x 64 on 8 warps, 3 stages, 0.992 -> 1.001 at 4096³, 0.995 -> 1.014 at 8192³,
# 0.997 -> 0.989 at 1024 x 32768 x 1024; shorter products lost: 128 x 128 x 64 on 8 warps
# 0.951-0.963 against 0.980-0.987, on 4 warps (one consumer warpgroup) 0.870-0.923
# against 0.968-0.984 (the stage's hand-over through the producer is paid per product)
PRODUCT = 1 << 21
# registers a producer thread keeps (`setmaxnreg.dec`); the consumers take the rest
PRODUCER_REGISTERS = 40
REGISTERS_PER_SM = 65536


@dataclass(frozen=True)
class WarpRoles:
    """`Kernel.warp_roles`: the loop over tiles (None: the pipelined loop is at the
    kernel's top level), the pipelined loop, and the ops the producer runs (id(): the
    loops and the scalars they and the copies read; the pipelined loop's own scalars of
    the copies are `Pipeline.slice_ops`)."""
    tiles: Op | None
    loop: Op
    producer: frozenset
    # id() of the producer's scalars the consumers do not read (the copies' coordinates)
    producer_only: frozenset = frozenset()
    producer_warps: int = PRODUCER_WARPS

    def consumer_registers(self, num_warps: int) -> int | None:
        """What `setmaxnreg.inc` gives each consumer thread (a multiple of 8, at most 256),
        where that is at least 8 more than the compiler's share of an SM (one program of
        all the warps: 170 a thread at 384 threads, against 232); None where it is not
        (one consumer warpgroup has 255 already)."""
        threads = (num_warps + self.producer_warps) * 32
        share = min(255, REGISTERS_PER_SM // threads)
        left = REGISTERS_PER_SM - self.producer_warps * 32 * PRODUCER_REGISTERS
        mine = min(256, left // (num_warps * 32) // 8 * 8)
        return mine if mine >= share + 8 else None


def plan(kernel: Kernel, tma_stores: set[int]) -> WarpRoles | None:
    """The kernel's warp roles, or None where it keeps one role (see the module's text).
    Reads what passes.settle decided: run where the pipelines and their TMA copies are
    settled; `tma_stores`: id() of the stores the copy engine writes."""
    if kernel.num_warps % 4 or kernel.num_warps + PRODUCER_WARPS > 32:
        return None
    loops = [op for op in kernel.walk() if op.kind == "for" and "pipeline" in op.attrs]
    if len(loops) != 1:
        return None
    loop = loops[0]
    p = loop.attrs["pipeline"]
    if not p.tma or any(t is None for t in p.tma) or any(p.own) or p.state or p.deferred \
            or p.arrivals:
        return None
    dots = [o for o in walk(loop.regions[0]) if o.kind == "dot"]
    if not dots or not all(d.attrs["plan"].unit.async_groups for d in dots):
        return None
    (m, k), n = dots[0].operands[0].type.shape[-2:], dots[0].operands[1].type.shape[-1]
    if m * n * k < PRODUCT:
        return None
    if p.releases and any(o is loop for o in kernel.body.ops):
        tiles = None  # a loop at the top level whose warps release the stages they read
    else:
        if len(dots) != 1:
            return None
        tiles = next((op for op in kernel.body.ops if op.kind == "for" and
                      any(o is loop for o in op.regions[0].ops)), None)
        if tiles is None or tiles.results or loop.attrs.get("hoisted"):
            return None
        for o in walk(tiles.regions[0]):
            if o.kind == "store" and o.operands[1].type.is_block and id(o) not in tma_stores:
                return None  # (a coalesced store would go through the tiles the producer fills)
            if o.kind in ("while", "atomic", "atomic_cas") or o.kind == "for" and \
                    o is not loop and "hoisted" in o.attrs:
                return None
    needed: list[Value] = [*(tiles.operands[:3] if tiles else ()), *loop.operands[:3]]
    body = loop.regions[0]
    for o in body.ops:  # (the copy engine's copies read the slice's scalars only)
        if id(o) in p.slice_ops and o not in p.loads and not o.results[0].type.is_block:
            needed += o.operands
    for copy in p.tma:
        needed += [*copy.corner, *copy.outer] + ([copy.rows] if copy.rows is not None else [])
    inner = {id(o) for o in walk(body)}
    tile_ops = tiles.regions[0].ops if tiles else ()
    placed = {id(o) for o in (*kernel.body.ops, *tile_ops)}  # (not in branches)
    known = {a.id for a in (*(tiles.regions[0].args if tiles else ()), *body.args)}
    producer = {id(loop)} | ({id(tiles)} if tiles else set())
    while needed:
        v = needed.pop()
        if v.id in known or v.owner is None:  # (an argument, or a loop's index)
            continue
        known.add(v.id)
        op = v.owner
        if id(op) in inner or op.kind == "const":
            continue  # the copies' own scalars (Pipeline.slice_ops), literals
        if op.kind not in PURE or v.type.is_block or id(op) not in placed:
            return None
        producer.add(id(op))
        needed += op.operands
    return WarpRoles(tiles, loop, frozenset(producer),
                     _read_by_producer_only(kernel, producer, p.slice_ops - p.kept))


def _read_by_producer_only(kernel: Kernel, producer: set[int], moved: set[int]) -> frozenset:
    """Of the producer's ops, those whose values no op the consumers write reads (the
    consumers skip the copies, `moved`, and would leave such a variable unread)."""
    readers: dict[int, list[Op]] = {}
    for op in kernel.walk():
        for v in op.operands:
            readers.setdefault(v.id, []).append(op)
        for r in op.regions:
            for v in r.yields:
                readers.setdefault(v.id, []).append(op)
    only = {id(op) for op in kernel.walk() if id(op) in producer and op.kind != "for"}
    changed = True
    while changed:
        changed = False
        for op in kernel.walk():
            if id(op) in only and any(id(r) not in only and id(r) not in moved
                                      for v in op.results for r in readers.get(v.id, ())):
                only.discard(id(op))
                changed = True
    return frozenset(only)
