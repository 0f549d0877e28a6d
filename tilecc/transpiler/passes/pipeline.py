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
K for a B staged K-major, `passes.dot.b_k_major`, along M for an A staged M-major,
`passes.dot.a_m_major`), stays a plain load.  Loads the
operands are *computed* from (weights cast, `b.T`, fp4 unpacked) are read ahead too, each
thread's vectors into stages of their own (`prologue_loads`).  This pass only
marks what could be pipelined; `passes.settle` keeps what the renderer can write out.

On sm_90 a load through a tensor descriptor whose tensor map the launch encodes
(`ir.DescriptorRead`: a host-side descriptor, one made in the kernel from arguments, or a
block of pointers `passes.pointer_tiles` reads as a box of a strided tensor, whose
coordinates are computed where the copies are issued) that feeds a warpgroup product is
copied by the copy engine instead (TMA:
`cp.async.bulk.tensor` from the descriptor's tensor map, one thread issuing, completion
counted in bytes on an mbarrier per stage).  The copy writes shared memory in the swizzle
wgmma reads, so each copy moves one box of the tile as the product lays it out: for B
N-major, K rows of 128 bytes per copy; for B K-major (a block loaded transposed,
passes.transpose), N rows of 128 bytes of K.  A's rows are placed where each warp's
instruction computes them (`tc::wgmma_a_row`): one copy still moves all of them, through a
tensor map that views the descriptor's rows as up to four dims whose order in the box is
that placement (`a_rows_split`; eight-row boxes took the copy engine a third of the K
step's time), or two copies where it needs five (256 rows on 8 warps).  The bounds are
the hardware's: outside the tensor a copy reads zeros (or NaN for "nan" padding), as the
mask would.  A split map's bounds are the tensor's over its
whole slabs of rows only: a block that reaches past the last whole slab is copied 8 rows
at a time through a second map of the descriptor (the last row of blocks of a ragged M),
in a loop that runs once per program only the boxes that hold rows of the tensor
(`TmaCopy.skip_past`: the others' places, zeroed before the loop, read as the padding).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from tilecc.transpiler import ir
from tilecc.transpiler.ir import Kernel, Op, Region, Value
from tilecc.transpiler.passes.dce import PURE
from tilecc.transpiler.passes.axis_info import const_int, info
from tilecc.transpiler.passes.dot import a_m_major, b_k_major, operand_place, wgmma_a_place
from tilecc.transpiler.specs import row_copies, rows_slab


@dataclass(frozen=True)
class TmaCopy:
    """How one pipelined load is copied by TMA: from descriptor `key`'s tensor map (box
    `box`, in the descriptor's dims: rows x columns, written with `swizzle`-byte
    swizzling), the block's corner `corner` (row, column Values), boxes side by side over
    the tile (`transposed`: the tile is the block transposed, a K-major B)."""
    param: str
    corner: tuple
    box: tuple[int, int]
    swizzle: int
    nbytes: int  # what the copies of one stage deliver (the mbarrier counts bytes)
    padding: str  # what a copy reads outside the tensor: "zero" or "nan"
    args: tuple | None = None  # a descriptor made in the kernel: ir.DescriptorRead.args
    transposed: bool = False
    # A's rows in one box: (extent, row stride) of each dim after the columns, in the order
    # the box fills shared memory (`a_rows_split`); None: boxes of `box` rows.  Such a copy
    # also has a map of 8-row boxes for the blocks that reach past the tensor's last whole
    # slab (`rows`: the descriptor's rows, as its bounds mask reads them)
    rows_split: tuple[tuple[int, ...], ...] | None = None
    rows: Value | None = None
    # a load of pointers (passes.pointer_tiles): the coordinates of the map's dims past
    # the block's (outermost first, box 1 each), and what the launch must find of the
    # arguments (specs.TensorMap.requires)
    outer: tuple = ()
    requires: tuple = ()
    pointers: bool = False
    # a split copy whose block past the last whole slab copies only the 8-row boxes that
    # hold rows of the tensor: the others' places in every stage are zeroed once before
    # the loop (`skip_past`: the loop runs once per program, its block's first row and the
    # tensor's rows fixed before it, so no copy ever writes there)
    skip_past: bool = False

    @property
    def map_box(self) -> tuple[int, ...]:
        """The box of the map, in all its dims (outermost first)."""
        return (1,) * len(self.outer) + self.box

    @property
    def key(self) -> tuple:
        """The descriptor's map this copy reads, as the kernel's tensor maps are told
        apart (specs.TensorMap.key)."""
        return self.param, self.args, self.rows_split is not None

    @property
    def tail_key(self) -> tuple:
        """A split copy's map of 8-row boxes (that of an unsplit copy)."""
        return self.param, self.args, False

    @property
    def tail_box(self) -> tuple[int, int]:
        return 8, self.box[1]

    @property
    def map_tail_box(self) -> tuple[int, ...]:
        """The box of the 8-row map, in all its dims (outermost first)."""
        return (1,) * len(self.outer) + self.tail_box

    @property
    def maps(self) -> dict[tuple, tuple]:
        """The maps this copy reads: key -> (box, swizzle, rows split)."""
        out = {self.key: (self.map_box, self.swizzle, self.rows_split)}
        if self.rows_split:
            out[self.tail_key] = (self.map_tail_box, self.swizzle, None)
        return out


@dataclass
class Pipeline:
    stages: int
    loads: list[Op]  # the pipelined loads, in body order
    state: list[int]  # indices (into the carried values) of the stream-state values
    slice_ops: set[int] = field(default_factory=set)  # id() of body ops moved to the issue point
    note: str = ""
    # settled by passes.settle: one multiplication group kept in flight across iterations,
    # and how many iterations ahead the copies run (num_stages - 2 then, but - 1 with 3
    # stages or none in flight)
    in_flight: bool = False
    refill_barrier: bool = False  # in flight with 3 stages: a barrier before the copies
    # the refill barrier (in flight) is also where every thread's copies of the next stage
    # are known to have landed (each waits for its own first): the iteration ends without
    # a barrier of its own
    awaits_at_refill: bool = False
    # every stage copied by TMA, behind a refill barrier: each thread waits for the stage
    # it reads at the top of the iteration (the stage's mbarrier orders the copies before
    # its reads; no barrier makes a stage everyone's), the refill barrier is the
    # iteration's only one, and the refill goes out before any wait for a later stage
    awaits_at_top: bool = False
    # awaits_at_top with cp.async stages: each thread's copies of a stage arrive on the
    # stage's mbarrier when they land (cp.async.mbarrier.arrive), which then counts every
    # thread's arrival instead of the copy engine's bytes
    arrivals: bool = False
    # awaits_at_top with no product in flight across iterations (cp.async arrivals, or
    # TMA): each warp, once its products retired, arrives on the stage's second mbarrier,
    # and the copies that refill a stage wait for every warp's arrival there (on TMA, the
    # thread that issues them) instead of a barrier ending the iteration (the warps, no
    # longer in lockstep, overlap one's softmax with another's product)
    releases: bool = False
    # several products in the body: id() of those that only update their loop-carried
    # accumulator, which retire at a later product's wait instead of their own
    deferred: frozenset = frozenset()
    # releases on the consumers of warp roles, two products (attention's forward): each
    # iteration issues its block's first product, then the previous block's second, and
    # computes what lies between them under the second (passes.settle `_overlapped`)
    overlapped: bool = False
    distance: int = 0
    tiles: list = field(default_factory=list)  # passes.settle.Tile per load: its stages
    tma: list = field(default_factory=list)  # per load: its TmaCopy, or None (cp.async)
    # per load: read ahead for the product's prologue (`prologue_loads`): each thread's
    # vectors in a stage of its own layout, read back into registers where the load was
    own: list = field(default_factory=list)
    # the stages of the loads read ahead, where fewer than `stages` (passes.settle
    # `_own_stages`); 0: as many
    own_stages: int = 0
    # passes.settle.Tile of the stages' mbarriers (TMA copies, or `arrivals`), one per stage,
    # then one more per stage with `releases`
    barriers: object = None
    # the same loop with every other load of the body read ahead too (`prologue_loads`
    # with `every`), which passes.settle takes where the copies go out at the top
    wider: Pipeline | None = None
    # settled: the copies go out at the top of each iteration, not under its product
    copies_at_top: bool = False
    # loads of a wider pipeline that no product's operand is computed from, each thread's
    # part within ROTATED_REGISTERS: loaded one iteration ahead into registers of their
    # own where the copies go out (no stage), the value taken from them at the top
    rotated: list = field(default_factory=list)
    # transposes (`permute` (1, 0)) of pipelined loads that products read from the loads'
    # stages (`_shared_stage`): no value in registers, the stage read the other way
    views: list = field(default_factory=list)
    # ids of ops of `slice_ops` the rest of the body reads too (index arithmetic: a causal
    # mask's offsets), written at the issue point and in the body both (`_kept_in_body`)
    kept: set = field(default_factory=set)


def plan(kernel: Kernel, has_tma: bool = False, made_descriptor_tma: bool = True,
         prologue_reads: bool = True) -> None:
    """Mark pipelinable loops (`op.attrs["pipeline"]`); TMA copies where the target has
    them (`CompileTarget.has_tma`; of descriptors made in the kernel only with
    `made_descriptor_tma`); the loads of the products' prologues read ahead too with
    `prologue_reads`."""
    if not any_pipelined(kernel):
        return
    reads = ir.uses(kernel)
    origins = Origins(kernel)
    maps: dict[tuple, tuple] = {}  # descriptor → the box of its one tensor map (kernel-wide)
    top = {id(op) for op in kernel.body.ops}  # loops that run once per program
    for op in kernel.walk():
        stages = loop_stages(kernel, op) if op.kind == "for" else 0
        if stages >= 2:
            # with the loads of the products' prologues, else (they would spoil it) without
            tma = has_tma, maps, made_descriptor_tma, id(op) in top
            p = (prologue_reads and _loop(op, stages, reads, *tma, origins)) or \
                _loop(op, stages, reads, *tma, None)
            if p is not None and prologue_reads:
                wider = _loop(op, stages, reads, *tma, origins, every=True)
                if wider is not None and len(wider.loads) + len(wider.rotated) > len(p.loads):
                    p.wider = wider
            if p is not None:
                op.attrs["pipeline"] = p


def loop_stages(kernel: Kernel, loop: Op) -> int:
    """The pipeline depth of `loop`: its own (`tl.range(..., num_stages=n)`), which Triton
    takes over the launch's, else the launch's `num_stages`; below 2, not pipelined.  At
    most the loop's iterations where their count is a constant (`range(tl.cdiv(K, BK))`
    of constexprs): stages no copy ever fills only cost shared memory (fla's output
    kernel at K = BK ran its one iteration on 3 stages, 80 KiB, 2 programs an SM where
    Triton's 24 KiB fit 9)."""
    stages = loop.attrs.get("num_stages", kernel.num_stages)
    trips = constant_trips(loop)
    return stages if trips is None else min(stages, trips)


def constant_trips(loop: Op) -> int | None:
    """How many times `loop` (a `for`) runs, where its bounds and step are constants."""
    lo, hi, step = (const_int(v) for v in loop.operands[:3])
    if lo is None or hi is None or not step:
        return None
    return max(0, -(-(hi - lo) // step)) if step > 0 else max(0, -(-(lo - hi) // -step))


def any_pipelined(kernel: Kernel) -> bool:
    """Whether any loop of `kernel` may be pipelined (a depth of 2 or more)."""
    return any(op.kind == "for" and loop_stages(kernel, op) >= 2 for op in kernel.walk())


def tma_copy(load: Op, dot: Op, which: int, has_tma: bool,
             row_split: bool = True) -> TmaCopy | None:
    """The TMA copy of `load`, operand `which` of `dot`, where sm_90's copy engine can write
    the tile the product reads: a 2-D block of a descriptor whose tensor map the launch
    encodes (ir.DescriptorRead) feeding a warpgroup product, in rows (the descriptor's
    inner dim) of 64 bytes (A, a K-major B) or of 128-byte multiples.  TMA cannot
    transpose: a B staged K-major is copied only where the load reads the descriptor's
    block transposed (`b_desc.load(...).T`, whose rows run along K already).  A's rows go
    in one box where `a_rows_split` finds the dims (and `row_split`), else 8 at a time."""
    src = load.attrs.get("descriptor")
    x = load.result
    if src is None or not has_tma or len(x.type.shape) != 2 or \
            not dot.attrs["plan"].unit.async_proxy:
        return None
    k_major_b = which == 1 and b_k_major(dot)
    if src.transposed != k_major_b or which == 0 and a_m_major(dot):
        return None
    rows, cols = x.type.shape
    outer, inner = (cols, rows) if src.transposed else (rows, cols)  # the descriptor's dims
    esize = x.dtype.itemsize
    row_bytes = inner * esize
    split = a_rows_split(dot, rows, src.corner[0], len(src.outer)) if which == 0 and \
        row_split and src.bounds else None
    box_rows = 8 if which == 0 and split is None else outer  # (where wgmma_a_row puts A's)
    if which + k_major_b != 1 and row_bytes == 64:  # A or K-major B: 64-byte swizzle
        swizzle, box = 64, (box_rows, inner)
    elif row_bytes % 128 == 0 and outer % 8 == 0:
        swizzle, box = 128, (box_rows, 128 // esize)
    else:
        return None
    padding = "zero"  # (a load of pointers without `other`: what masked off reads is 0)
    if len(load.operands) > 2:  # the padding: a splat of 0 or NaN
        fill = load.operands[2].owner
        while fill is not None and fill.kind in ("splat", "broadcast", "cast"):
            fill = fill.operands[0].owner
        if fill is None or fill.kind != "const" or (fill.attrs["value"] != 0 and
                                                    fill.attrs["value"] == fill.attrs["value"]):
            return None
        padding = "nan" if fill.attrs["value"] != fill.attrs["value"] else "zero"
    if box[0] > 256 or (padding == "nan" and x.dtype.short not in ("fp16", "bf16", "fp32")):
        return None  # the largest box; the copy engine fills NaN in these types only
    return TmaCopy(src.param, src.corner, box, swizzle, rows * cols * esize, padding,
                   src.args, src.transposed, split, src.bounds[0] if split else None,
                   src.outer, src.requires, src.pointers)


def a_rows_split(dot: Op, rows: int, row0, outer: int = 0
                 ) -> tuple[tuple[int, ...], ...] | None:
    """The dims of a tensor map that copies all `rows` of A's block to where each warp's
    wgmma reads them (`wgmma_a_place`) in one box: (extent, row stride) per dim, in the
    order the box fills shared memory, the first the 8 rows of a core matrix.  Where the
    rows need one dim more than the copy engine's five (with the columns), the last,
    slowest in shared memory, is taken by copies of their own, each a box further along
    the dim it continues (`specs.row_copies`: 256 rows on 8 warps, two copies a block;
    they had taken 32 copies of 8 rows, which ran the K loop at 0.41x the speed).  The dim
    of the largest stride steps over whole slabs of the rows below it, which the others
    fill exactly: the copy engine's bounds on it are the tensor's over its whole slabs
    (a block past them takes the 8-row map), where the block starts at a slab (`row0`,
    the block's first row, known to be a multiple).  None where no such dims exist within
    the copy engine's five (with the columns and the map's `outer` dims past the block's)
    or the start is not known to be one."""
    warps = dot.attrs["plan"].warps[0]
    if warps % 4 or rows % (warps // 4) or rows % 8:
        return None
    per_group = rows // (warps // 4)
    perm = [-1] * rows  # shared-memory row -> the block's row
    for row in range(rows):
        at = wgmma_a_place(row, warps, per_group)
        if not 0 <= at < rows or perm[at] >= 0:
            return None
        perm[at] = row
    dims: list[tuple[int, ...]] | None = _mixed_radix(perm)
    if dims is None:
        return None
    most = 4 - outer  # the copy engine's five dims, less the columns and the outer ones
    if len(dims) == most + 1:  # (256 rows on 8 warps) the last dim's boxes as copies
        extent, stride = dims.pop()
        into = [i for i, (e, s) in enumerate(dims) if e * s == stride]
        if not into:
            return None
        dims[into[0]] = (*dims[into[0]], extent)
    if len(dims) > most:
        return None
    slab = rows_slab(dims)
    below = {0}
    for d in dims:
        if d[1] != slab:
            below = {b + i * d[1] for b in below for i in range(d[0] * row_copies(d))}
    if below != set(range(slab)):
        return None
    first = row0 if isinstance(row0, int) else info(row0).divisibility[0]
    return tuple(dims) if first % slab == 0 else None


def _mixed_radix(perm: list[int]) -> list[tuple[int, int]] | None:
    """`perm` (position -> value) as dims (extent, stride), fastest first, such that
    perm[p] = sum of each digit of p times its dim's stride; adjacent dims that continue
    each other merged.  None where it is not of that form."""
    n, dims, unit = len(perm), [], 1
    while unit < n:
        stride, extent = perm[unit] - perm[0], 1
        while unit * (extent + 1) <= n and all(
                perm[unit * extent + j] == perm[j] + extent * stride for j in range(unit)):
            extent += 1
        if extent == 1 or n % (unit * extent):
            return None
        dims.append((extent, stride))
        unit *= extent
    merged: list[tuple[int, int]] = []
    for extent, stride in dims:
        if merged and stride == merged[-1][0] * merged[-1][1]:
            merged[-1] = (merged[-1][0] * extent, merged[-1][1])
        else:
            merged.append((extent, stride))
    for p, value in enumerate(perm):  # the form holds for every position
        total, rest = 0, p
        for extent, stride in merged:
            total += rest % extent * stride
            rest //= extent
        if total != value:
            return None
    return merged


def _one_map_each(maps: dict[tuple, tuple], copy: TmaCopy) -> bool:
    """Whether the maps `copy` reads (`TmaCopy.maps`) are those any other copy of their
    descriptor reads (a kernel has one map of each), noting them in `maps` if so."""
    wanted = copy.maps
    if any(maps.get(key, box) != box for key, box in wanted.items()):
        return False
    maps.update(wanted)
    return True


def _is_zero(v: Value) -> bool:
    op = v.owner
    while op is not None and op.kind in ("splat", "broadcast", "cast"):
        op = op.operands[0].owner
    return op is not None and op.kind == "const" and op.attrs["value"] == 0


def _candidate(load: Op, dot: Op, which: int) -> bool:
    x = load.result
    plan = load.attrs.get("plan")
    p = x.layout
    # vectors along the tile's rows; along B's K where B is staged K-major, along A's M
    # where A is staged M-major
    along = 0 if which == 1 and b_k_major(dot) or which == 0 and a_m_major(dot) else 1
    if plan is None or p.fast_axis != along:
        return False
    nbytes = plan.vec * x.dtype.itemsize
    if nbytes not in (4, 8, 16) or plan.mask_mode not in ("none", "vector", "prefix"):
        return False
    return len(load.operands) < 3 or _is_zero(load.operands[2])


def _loop(loop: Op, stages: int, reads: dict[int, int], has_tma: bool,
          maps: dict[tuple, tuple], made_descriptor_tma: bool, once: bool,
          prologue: Origins | None, every: bool = False) -> Pipeline | None:
    """`loop`'s pipeline, or None; with `prologue` (the kernel's pointers' origins), the
    loads of the products' prologues read ahead too, and with `every` each other load
    whose address the copies can compute ahead."""
    body = loop.regions[0]
    defined = {r.id: op for op in body.ops for r in op.results}
    users: dict[int, list[Op]] = {}
    for op in body.ops:
        for v in op.operands:
            users.setdefault(v.id, []).append(op)
    yielded = {y.id for y in body.yields}
    carried = {a.id: i for i, a in enumerate(body.args[1:])}
    loads: list[Op] = []
    tma: list[TmaCopy | None] = []
    fed: list[tuple[Op, int]] = []  # per load: the product it feeds, and as which operand
    views: list[Op] = []  # transposes of loads read from their stages (`Pipeline.views`)
    for op in body.ops:
        if op.kind != "dot" or not op.attrs["plan"].matrix:
            continue
        for which, x in enumerate(op.operands[:2]):
            ld = defined.get(x.id)
            if ld is None or ld.kind != "load" or x.id in yielded or ld in loads:
                continue
            if users.get(x.id) != [op]:  # read by other products too, or transposed
                shared = _shared_stage(ld, users, yielded)
                if shared is None or shared and not _candidate(ld, op, which):
                    continue
                if shared:  # (the copy engine's boxes serve one product's layout)
                    loads.append(ld)
                    tma.append(None)
                    fed.append((op, which))
                    views += shared
                    continue
                # several products read the stage as it is, each element where this one
                # does (`_shared_stage`): copied for this one, it serves them all
            copy = tma_copy(ld, op, which, has_tma)
            if copy is not None and copy.args is not None and not made_descriptor_tma:
                copy = None
            if copy is not None and copy.rows_split and not _one_map_each(maps, copy):
                copy = tma_copy(ld, op, which, has_tma, row_split=False)
            if copy is not None and not _one_map_each(maps, copy):
                copy = None  # another load of this descriptor needs other boxes
            if copy is not None or _candidate(ld, op, which):
                loads.append(ld)
                tma.append(copy)
                fed.append((op, which))
    direct = len(loads)
    for ld in prologue_loads(body, loads, users, yielded, prologue, every) if prologue else ():
        loads.append(ld)
        tma.append(None)
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

    kept = []
    for i, ld in enumerate(loads):
        before, held = dict(slice_ops), set(state)
        if all(pull(o) for o in ld.operands):
            kept.append(i)
        elif every and i >= direct:  # (an address computed from what the body loads)
            slice_ops.clear()
            slice_ops.update(before)
            state.clear()
            state.update(held)
        else:
            return None
    loads, tma = [loads[i] for i in kept], [tma[i] for i in kept]
    rotated: list[Op] = []
    prologue_only: set[int] = set()
    if every:  # the small loads no product's operand is computed from: into registers
        prologue_only = {id(ld) for ld in prologue_loads(body, loads[:direct], users, yielded,
                                                         prologue)}
        rotated = [ld for ld in loads[direct:] if id(ld) not in prologue_only and
                   rotatable(ld)]
        out = {id(ld) for ld in rotated}
        tma = [c for ld, c in zip(loads, tma) if id(ld) not in out]
        loads = [ld for ld in loads if id(ld) not in out]
    if not loads:
        return None
    # the coordinates of a load of pointers a TMA copy reads (passes.pointer_tiles) are
    # computed where the copies are issued, where nothing else in the body reads them
    for i, copy in enumerate(tma):
        if copy is not None and copy.pointers:
            before, held = dict(slice_ops), set(state)
            pulled = all(pull(c) for c in copy.corner + copy.outer)
            new = {r.id for k, op in slice_ops.items() if k not in before for r in op.results}
            if not pulled or any(v.id in new for op in body.ops if id(op) not in slice_ops
                                 for v in op.operands):
                slice_ops.clear()
                slice_ops.update(before)
                state.clear()
                state.update(held)
                if not _candidate(loads[i], *fed[i]):
                    return None
                tma[i] = None
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
    # index arithmetic the copies share with the rest of the body (a causal mask's `o_k`
    # and `m_k`, also the loads' mask): written at the issue point for the iteration
    # ahead and in the body for its own, where it reads no stream state and no load
    kept = _kept_in_body(body, slice_ops, set(update_ops), loads + rotated, views, state,
                         defined)
    moved = {k: op for k, op in moved.items() if k not in kept}
    moved_values = {r.id for op in moved.values() for r in op.results} | \
        {body.args[1 + i].id for i in state} | {ld.result.id for ld in loads}
    moved_values -= {ld.result.id for ld in loads[direct:]}  # (read back where they were)
    moved_values -= {ld.result.id for ld in rotated}  # (taken at the top of the body)
    moved_values |= {v.result.id for v in views}  # (no registers: read from the stages)
    staged = [ld.result for ld in loads[:direct]] + [v.result for v in views]
    for op in body.ops:  # nothing left in the body may read what moved
        if id(op) in moved or op in loads or op in rotated or op in views:
            continue
        if op.kind == "dot" and any(v in op.operands[:2] for v in staged):
            rest = [v for v in op.operands if v not in staged]
        else:
            rest = op.operands
        if any(v.id in moved_values for v in rest) or any(
                v.id in moved_values for r in op.regions for o in _walk(r) for v in o.operands):
            return None
    for i, y in enumerate(body.yields):
        if i not in state and y.id in moved_values:
            return None
    # a TMA copy's corner is written at the issue point: a value the copies may read there
    for i, copy in enumerate(tma):
        if copy is not None and not all(
                c.id in carried or c is body.args[0] or c.id not in defined or
                id(defined[c.id]) in slice_ops for c in copy.corner + copy.outer):
            if not _candidate(loads[i], *fed[i]):
                return None
            tma[i] = None
    if once:  # blocks past the last whole slab: their boxes past the tensor's rows skipped
        tma = [replace(c, skip_past=True) if c is not None and c.rows_split and
               c.padding == "zero" and _invariant(c.corner[0], body, defined) and
               _invariant(c.rows, body, defined) else c for c in tma]
    p = Pipeline(stages, loads, sorted(state),
                 set(moved) | set(kept) | {id(ld) for ld in loads + rotated}, tma=tma,
                 own=[i >= direct for i in range(len(loads))], rotated=rotated,
                 views=[v for v in views if v.operands[0].owner in loads[:direct]],
                 kept=set(kept))
    operands = not every or all(id(ld) in prologue_only for ld in loads[direct:])
    why = "for the product's operands" if operands else "where loaded"
    names = ", ".join(ld.result.name or "an operand" for ld in loads[:direct])
    read = ", ".join(ld.result.name or "a block" for ld in loads[direct:])
    what = (f"{names} of tl.dot" if names else "") + (" and " if names and read else "") + \
        (f"{read} (read back {why})" if read else "")
    p.note = (f"L{loop.loc.line}: {what} copied into shared memory with "
              f"{copy_engines(p)}, {stages - 1} iteration{'s' if stages > 2 else ''} ahead "
              f"({stages} stages{in_registers(p)})")
    return p


def _kept_in_body(body: Region, slice_ops: dict[int, Op], updates: set[int], moved_loads: list,
                  views: list, state: set[int], defined: dict[int, Op]) -> dict[int, Op]:
    """The ops of `slice_ops` (moved to the issue point) that the rest of the body reads,
    with the ops of the slice they read in turn, where none of them reads a stream-state
    value (the issue point advances it) or a load: they stay in the body too."""
    streamed = {body.args[1 + i].id for i in state}
    tainted: dict[int, bool] = {}

    def taints(v: Value) -> bool:  # reads stream state or a load, within the body
        if v.id in streamed:
            return True
        op = defined.get(v.id)
        if op is None:  # (the index, a value from before the loop, a carried one)
            return False
        if v.id not in tainted:
            tainted[v.id] = op.kind == "load" or any(taints(o) for o in op.operands)
        return tainted[v.id]

    skip = set(slice_ops) | {id(o) for o in moved_loads + views}  # (updates: in the slice)
    produced = {r.id: k for k, op in slice_ops.items() for r in op.results}
    wanted = [v for op in body.ops if id(op) not in skip
              for v in list(op.operands) + [x for r in op.regions for o in _walk(r)
                                            for x in o.operands]
              if v.id in produced]
    kept: dict[int, Op] = {}
    while wanted:
        v = wanted.pop()
        k = produced.get(v.id)
        if k is None or k in kept or k in updates:
            continue
        op = slice_ops[k]
        if taints(v):
            return {}  # (the body reads what only the issue point may compute)
        kept[k] = op
        wanted += [o for o in op.operands if o.id in produced]
    return kept


def _shared_stage(load: Op, users: dict[int, list[Op]], yielded: set[int]) -> list[Op] | None:
    """Where a load is read by several products, or by one and transposed for another
    (attention's backward: `tl.dot(k, qT)`, then `tl.dot(dsT, tl.trans(qT))`): the
    transposes (`permute` (1, 0)) whose products read its stage as it is, or None.  One
    stage serves them all where every product's tile places each element where the first
    one's does (`operand_place`): a block whose 128-byte rows run along its contiguous
    axis is K-major B of one product and, transposed, N-major B of the other, the same
    bytes, read with the other major-ness (Triton reads such a block so).  Read by anything
    else, or placed otherwise, the load stays with the operands read ahead (each thread's
    vectors read back into registers, then staged for each product)."""
    x = load.result
    reads: list[tuple[Op, int, bool]] = []  # (product, operand, through a transpose)
    views: list[Op] = []
    for u in dict.fromkeys(users.get(x.id, [])):  # (each reader once)
        if u.kind == "permute" and tuple(u.attrs["order"]) == (1, 0) and \
                u.result.id not in yielded:
            views.append(u)
            for w in dict.fromkeys(users.get(u.result.id, [])):
                if not _reads_as_operand(w, u.result, reads, True):
                    return None
        elif not _reads_as_operand(u, x, reads, False):
            return None
    first = next(((d, which) for d, which, view in reads if not view), None)
    if first is None or len(reads) < 2:
        return None
    units = {(d.attrs["plan"].unit, d.attrs["plan"].swizzled) for d, _, _ in reads}
    if len(units) != 1:
        return None
    rows, cols = x.type.shape
    for d, which, view in reads:
        if (d, which) != first and any(
                operand_place(*first, r, c) != operand_place(d, which, *((c, r) if view else
                                                                       (r, c)))
                for r in range(rows) for c in range(cols)):
            return None
    return views


def _reads_as_operand(dot: Op, x: Value, reads: list, view: bool) -> bool:
    """Whether `dot` is a matrix unit's product reading `x` as A or B alone (noted in
    `reads`), not as its accumulator."""
    if dot.kind != "dot" or not dot.attrs["plan"].matrix or x in dot.operands[2:]:
        return False
    reads += [(dot, which, view) for which in (0, 1) if dot.operands[which] is x]
    return True


def _invariant(v: Value, body: Region, defined: dict[int, Op]) -> bool:
    """Whether `v` is the same at every iteration of the loop of `body`: defined before
    it, or by pure ops of the body from such values (not the index, nothing carried)."""
    op = defined.get(v.id)
    if op is None:
        return all(v is not a for a in body.args)
    return op.kind in PURE and not op.regions and \
        all(_invariant(o, body, defined) for o in op.operands)


def prologue_loads(body: Region, direct: list[Op], users: dict[int, list[Op]],
                   yielded: set[int], origins: Origins | None = None,
                   every: bool = False) -> list[Op]:
    """Loads of the body that a product's operands are computed from (`a.to(tl.bfloat16)`,
    fp8 or int8 weights scaled, fp4 nibbles unpacked, `b.T` of a block): read only by
    element-wise ops and views whose results reach the products' A or B alone.  Copied
    ahead by cp.async like the products' own loads (Triton pipelines them the same way),
    each thread's vectors into a stage of their own layout, which the same thread reads
    back: no barrier orders those reads, the loop's wait for its own copies does.  Only
    loads cp.async can make (4-, 8- or 16-byte vectors, zero where masked off), in loops
    whose stores write through other pointer arguments than the loads read (`origins`: as
    Triton's pipeliner, which reads ahead across any store, arguments are taken not to
    overlap; a loop that stores through the argument a load reads, or writes memory in
    any other way, reads nothing ahead).  (A build whose stages do not fit is made without
    them: `runtime.compiler`.)

    With `every`, the body's other loads too, whatever reads them: scalars and small
    blocks (`rotatable`; read ahead into registers: `Pipeline.rotated`), larger blocks
    cp.async can copy (`copied_ahead`).  Triton's pipeliner copies every load of a loop
    that holds a product ahead with cp.async, scalars included, and a loop of a long body
    (a state stored, a decay computed before its product) otherwise waits for them at
    each iteration."""
    operand_of = {v.id for o in body.ops if o.kind == "dot" and o.attrs["plan"].matrix
                  for v in o.operands[:2]}
    writes = [o for o in _walk(body) if o.kind in _WRITES]
    if not operand_of or (writes and origins is None):
        return []
    written = {origins.argument(o.operands[0]) for o in writes if o.kind == "store"}
    if any(o.kind != "store" for o in writes) or None in written:
        return []  # (a write through a pointer of unknown origin might reach any load)
    known: dict[int, bool] = {}

    def feeds_operands(v: Value) -> bool:
        if v.id not in known:
            known[v.id] = False  # (cycles: no)
            readers = users.get(v.id, [])
            known[v.id] = bool(readers) and v.id not in yielded and all(
                (r.kind == "dot" and v.id in operand_of and v not in r.operands[2:]) or
                (r.kind in _PROLOGUE_OPS and all(feeds_operands(x) for x in r.results))
                for r in readers)
        return known[v.id]

    out = []
    for op in body.ops:
        if op.kind != "load" or op in direct:
            continue
        if writes and origins.argument(op.operands[0]) in written | {None}:
            continue  # (the loop stores through what it reads, or may)
        if every and rotatable(op) and not feeds_operands(op.result):
            out.append(op)  # (into registers: any load)
            continue
        if not op.result.type.is_block or not copied_ahead(op) or \
                not every and op.result.layout.replicated:
            continue
        # a product's own operand that its pipeline does not copy (read by two products,
        # or an 8-bit B along N): only for warpgroup MMAs, whose operands the threads store
        # to their tiles before they start, and which then keep no product in flight
        # (passes.settle.in_stages); with mma.sync, copies issued among the fragments' mma
        # held their addresses in registers (a 128 x 128 tile on sm_80 spilled)
        own = [r for r in users[op.result.id] if r.kind == "dot"]
        if (every or feeds_operands(op.result)) and all(
                r.attrs["plan"].unit.operands_from_shared for r in own):
            out.append(op)
    return out


# registers a thread may hold of a load read one iteration ahead into registers
# (`Pipeline.rotated`), twice over (this iteration's and the next's): the decays of a
# chunked linear attention (a scalar and a slice of 4), copied through shared memory
# stages instead, left it at 0.95 of Triton's speed, and at 1.00 so (H200)
ROTATED_REGISTERS = 8


def rotatable(load: Op) -> bool:
    """Whether `load` is small enough to read one iteration ahead into registers
    (`Pipeline.rotated`): a scalar, or a block of at most ROTATED_REGISTERS a thread."""
    x = load.result
    return not x.type.is_block or x.layout.regs <= ROTATED_REGISTERS


def copied_ahead(load: Op) -> bool:
    """Whether each thread's part of block `load` can be copied ahead by cp.async, into a
    stage of its own: vectors of 4, 8 or 16 bytes, each read whole or not at all, zero
    where masked off.  A block held in copies (several threads hold each element) is
    copied by every holder, as its load reads it."""
    x = load.result
    if len(load.operands) > 2 and not _is_zero(load.operands[2]):
        return False
    plan = load.attrs.get("plan")
    return plan is not None and plan.vec * x.dtype.itemsize in (4, 8, 16) and (
        plan.mask_mode in ("none", "vector", "prefix") or
        plan.mask_mode == "element" and plan.vec == 1)


def own_elements(x: Value, threads: int) -> int:
    """The elements of a stage of `x`, a block read ahead (`Pipeline.own`): each thread's
    registers side by side (`render_dot.own_offset`; more than the block's elements where
    threads hold copies)."""
    return x.layout.regs * threads


class Origins:
    """The pointer argument a block of pointers is computed from: through offsets added,
    broadcasts, views and the pointers a loop carries (its initial value, where each
    iteration only adds to it); None where it may come from several or from memory."""

    _VIEWS = {"splat", "broadcast", "expand_dims", "convert", "reshape", "permute"}

    def __init__(self, kernel: Kernel):
        self.params = {p.value.id: p.value for p in kernel.params if p.value is not None}
        self.carried: dict[int, tuple[Value, Value]] = {}  # loop arg -> (init, update)
        for op in kernel.walk():
            if op.kind == "for":
                body = op.regions[0]
                for arg, init, update in zip(body.args[1:], op.operands[3:], body.yields):
                    self.carried[arg.id] = (init, update)

    def argument(self, v: Value) -> Value | None:
        got = self._origin(v, frozenset())
        return got if isinstance(got, Value) else None

    def _origin(self, v: Value, seen: frozenset):
        """`argument`, or `_ITSELF` for a carried value met again inside its own update."""
        if v.id in self.params:
            return self.params[v.id]
        if v.id in self.carried:
            if v.id in seen:
                return _ITSELF
            init, update = self.carried[v.id]
            first = self._origin(init, seen | {v.id})
            later = self._origin(update, seen | {v.id})
            return first if isinstance(first, Value) and later in (first, _ITSELF) else None
        op = v.owner
        if op is not None and (op.kind == "addptr" or op.kind in self._VIEWS or
                               (op.kind == "cast" and op.result.dtype.is_ptr())):
            return self._origin(op.operands[0], seen)
        return None


_ITSELF = object()


def reads_ahead(kernel: Kernel) -> bool:
    """Whether a pipeline of `kernel` reads a product's prologue loads ahead."""
    return any(any(op.attrs["pipeline"].own) for op in kernel.walk()
               if op.kind == "for" and "pipeline" in op.attrs)


# what a product's operand may be computed with from its prologue loads
_PROLOGUE_OPS = PURE | {"permute", "reshape", "join", "split", "unstack", "stack", "convert"}
# ops that may write memory (inline assembly may)
_WRITES = {"store", "atomic", "atomic_cas", "inline_asm"}


def in_registers(p: Pipeline) -> str:
    """The loads a pipeline reads ahead into registers, for the kernel's header."""
    names = ", ".join(ld.result.name or "a load" for ld in p.rotated)
    return f"; {names} loaded one iteration ahead into registers" if p.rotated else ""


def copy_engines(p: Pipeline) -> str:
    """How a pipeline's copies are made, for the kernel's header."""
    kinds = (["TMA"] if any(t is not None for t in p.tma) else []) + \
        (["cp.async"] if any(t is None for t in p.tma) else [])
    return " and ".join(kinds)


def _walk(region: Region):
    for op in region.ops:
        yield op
        for r in op.regions:
            yield from _walk(r)
