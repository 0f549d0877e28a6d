"""Data layouts: which thread holds which element of a block, in which register slot.

A program is one thread block of `num_warps × warp_size` threads.  Layouts are Triton's:

* `Blocked(spt, tpw, wpc, order)`: along each axis a thread holds `spt` consecutive
  elements, `tpw` lanes of a warp and `wpc` warps tile the axis, and the tile repeats to
  cover the block; `order` lists axes fastest first.  A thread holds `regs` elements in a
  register array, the fastest axis varying fastest, so 16-byte vectors are consecutive
  registers.
* `Slice(parent, dim)`: the parent with axis `dim` removed — what a reduction along `dim`
  leaves.  `x[:, None]` of a slice value is the parent again, with no data movement.

An encoding is shape-free; a `Placement` is an encoding applied to a block shape, and
knows the register count and each register's coordinates (as Python, for tests, and as C
expressions, for the renderer).  `assign` gives every block value a placement: values
joined by element-wise ops share one encoding, `expand_dims` and reductions relate
encodings by slicing, and where two demands disagree a `convert` op (through shared
memory) is inserted and listed in the kernel's header.  Loads and stores then get a
`MemoryPlan`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from math import prod

from tilecc.transpiler import ir
from tilecc.transpiler.ir import Kernel, Op, Region, Type, Value
from tilecc.transpiler.matrix_units import MatrixUnit
from tilecc.transpiler.passes import dot
from tilecc.transpiler.passes.axis_info import info
from tilecc.transpiler.passes.placement import Blocked, Encoding, Placement, Slice


@dataclass(frozen=True)
class MemoryPlan:
    vec: int  # elements per vector access
    mask_mode: str  # "none", "vector", "prefix" (vector when whole, else lanes), "element"
    reason: str
    # (rstride, span): registers whose index along one axis differs only in its low `span`
    # (that axis's registers counted in steps of `rstride`) read the same address
    shared: tuple[int, int] | None = None

    def address_register(self, idx: str) -> str:
        """The register whose address is written for register `idx`: the first of those
        sharing its address, so that the compiler sees one expression and one load."""
        if self.shared is None:
            return idx
        stride, span = self.shared
        return f"({idx} - {idx} / {stride} % {span} * {stride})" if stride > 1 else \
            f"{idx} / {span} * {span}"


# --- assignment ----------------------------------------------------------------------------

ELEMENTWISE = {"cast", "unary", "binary", "cmp", "where", "fma", "extern", "addptr",
               "load", "store", "atomic", "atomic_cas", "broadcast", "device_assert", "scan",
               "map", "inline_asm"}


class _Classes:
    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def find(self, x: int) -> int:
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def join(self, a: Value, b: Value) -> None:
        if a.type.is_block and b.type.is_block:
            self.parent[self.find(a.id)] = self.find(b.id)


def default_blocked(shape: tuple[int, ...], vec: int, num_warps: int, warp_size: int,
                    order: tuple[int, ...] | None = None) -> Blocked:
    rank = len(shape)
    order = tuple(reversed(range(rank))) if order is None else order
    fast = order[0]
    threads = num_warps * warp_size
    spt = [1] * rank
    spt[fast] = max(1, min(vec, shape[fast], prod(shape) // threads))
    return _spread(shape, spt, order, num_warps, warp_size)


def view_encoding(op: Op, enc: Blocked) -> Blocked | None:
    """The encoding of the result of `op` (a permute, join, split or reshape) of a source
    in `enc` under which each thread holds the source's elements, in registers that
    follow from the source's (the renderer copies them: `render_blocks`), or None where
    no such encoding is a `Blocked` one.

    * permute: axis i of the result is axis `order[i]` of the source; same registers.
    * join (of two operands in `enc`): the new last axis of 2 fastest, in registers:
      register 2 r + h holds operand h's register r.  split is its inverse, where the
      last axis is held so.
    * reshape merging an axis with the next one, which each thread holds whole and
      runs next faster (fp4 nibble pairs into a row): same registers.
    * unstack (of a source whose axis 0, the batches, each thread holds whole and
      slowest: `batch_in_registers`): result i is source registers i R ... i R + R - 1,
      R the result's count.  stack is its inverse."""
    x, rank = op.operands[0], len(enc.order)
    if len(x.type.shape) != rank:
        return None
    if op.kind == "stack":
        return batch_in_registers(enc)
    if op.kind == "unstack":
        if (enc.spt[0], enc.tpw[0], enc.wpc[0]) != (1, 1, 1) or enc.order[-1] != 0:
            return None
        return Blocked(enc.spt[1:], enc.tpw[1:], enc.wpc[1:],
                       tuple(a - 1 for a in enc.order[:-1]))
    if op.kind == "permute":
        return permuted(enc, tuple(op.attrs["order"]))
    if op.kind == "join":
        return Blocked(enc.spt + (2,), enc.tpw + (1,), enc.wpc + (1,), (rank,) + enc.order)
    last = rank - 1
    if op.kind == "split":
        if enc.order[0] != last or (enc.spt[last], enc.tpw[last], enc.wpc[last]) != (2, 1, 1):
            return None
        return Blocked(enc.spt[:-1], enc.tpw[:-1], enc.wpc[:-1], enc.order[1:])
    if op.kind != "reshape":
        return None
    src, dst = x.type.shape, op.result.type.shape
    for k in range(rank - 1):  # one merge of axes k and k + 1, every other axis kept
        if src[:k] + (src[k] * src[k + 1],) + src[k + 2:] != dst:
            continue
        at = enc.order.index(k + 1)
        if (enc.spt[k + 1], enc.tpw[k + 1], enc.wpc[k + 1]) != (src[k + 1], 1, 1) or \
                at + 1 >= rank or enc.order[at + 1] != k or 1 in src:
            return None
        order = tuple(a if a < k + 1 else a - 1 for a in enc.order if a != k + 1)
        return Blocked(enc.spt[:k] + (enc.spt[k] * src[k + 1],) + enc.spt[k + 2:],
                       enc.tpw[:k + 1] + enc.tpw[k + 2:], enc.wpc[:k + 1] + enc.wpc[k + 2:],
                       order)
    return None


def permuted(enc: Blocked, order: tuple[int, ...]) -> Blocked:
    """The encoding of `permute(x, order)` of an x in `enc` that keeps each element in its
    thread and register: axis i is x's axis order[i]."""
    return Blocked(tuple(enc.spt[a] for a in order), tuple(enc.tpw[a] for a in order),
                   tuple(enc.wpc[a] for a in order), tuple(order.index(a) for a in enc.order))


def batch_in_registers(enc: Blocked) -> Blocked:
    """`enc` with a new axis 0 in front that each thread holds whole, slowest: the
    encoding of a stack of blocks in `enc`, whose batches are then register views."""
    return Blocked((1,) + enc.spt, (1,) + enc.tpw, (1,) + enc.wpc,
                   tuple(a + 1 for a in enc.order) + (0,))


def fma_tile(shape: tuple[int, ...], num_warps: int, warp_size: int) -> Blocked:
    """The accumulator of a dot run as fused multiply-adds: each thread holds a 2-D tile
    of rows x columns (an outer product per step of K), so that the A and B elements it
    reads from shared memory each feed several multiply-adds, and a row reduction is
    mostly in registers.  Columns first: 4 along them (16-byte reads of fp32 B), then as
    many rows as the block leaves each thread.  Not the accesses' vector width: products
    of one row count then split their rows alike, so that the row statistics joining
    them (attention's running max and sum) need no conversion."""
    m, n = shape
    per = max(1, m * n // (num_warps * warp_size))
    sn = max(1, min(n, per, 4))
    sm = max(1, min(m, per // sn))
    return _spread(shape, [sm, sn], (1, 0), num_warps, warp_size)


def _spread(shape: tuple[int, ...], spt: list[int], order: tuple[int, ...], num_warps: int,
            warp_size: int) -> Blocked:
    """`spt` elements per thread, then the lanes and warps over the axes, fastest first."""
    rank = len(shape)
    tpw, wpc = [1] * rank, [1] * rank
    lanes, warps = warp_size, num_warps
    for e in order:
        tpw[e] = min(lanes, max(1, shape[e] // spt[e]))
        lanes //= tpw[e]
    tpw[order[-1]] *= lanes
    for e in order:
        wpc[e] = min(warps, max(1, shape[e] // (spt[e] * tpw[e])))
        warps //= wpc[e]
    wpc[order[-1]] *= warps
    return Blocked(tuple(spt), tuple(tpw), tuple(wpc), order)


def assign(kernel: Kernel, warp_size: int, matrix_units: tuple[MatrixUnit, ...] = (), arch: str = "",
           packed_adds: int = 2) -> list[str]:
    """Give every block value a placement, every load/store a memory plan and every dot a
    dot plan; returns the descriptions of the layout conversions inserted."""
    classes = _Classes()
    forced: list[tuple[Value, Blocked]] = []  # dot results: their unit's accumulator layout
    derived: list[tuple[Value, Value, int]] = []  # (value, source, axis): enc(v) = Slice(enc(src))
    views: list[tuple[Value, Value, Op]] = []  # (result, source, op): permutes, joins...
    unstacked: set[int] = set()  # sources of unstack: batches taken apart
    blocks: list[Value] = []
    for op in kernel.walk():
        for v in op.results + [a for r in op.regions for a in r.args]:
            if v.type.is_block:
                blocks.append(v)
                classes.find(v.id)
        if op.kind in ELEMENTWISE:
            group = [v for v in op.operands + op.results if v.type.is_block]
            for v in group[1:]:
                classes.join(group[0], v)
        elif op.kind == "for":
            body = op.regions[0]
            for init, arg, y, res in zip(op.operands[3:], body.args[1:], body.yields, op.results):
                for v in (arg, y, res):
                    classes.join(init, v)
        elif op.kind == "while":
            before, body = op.regions
            for i, init in enumerate(op.operands):
                for v in (before.args[i], body.args[i], body.yields[i], op.results[i]):
                    classes.join(init, v)
        elif op.kind == "if":
            for i, res in enumerate(op.results):
                for r in op.regions:
                    classes.join(res, r.yields[i])
        elif op.kind == "reduce":
            for x, res in zip(op.operands, op.results):
                classes.join(op.operands[0], x)
                if res.type.is_block:
                    derived.append((res, x, op.attrs["axis"]))
        elif op.kind == "gather":  # each result element reads its index in registers
            classes.join(op.operands[1], op.result)
        elif op.kind == "histogram" and len(op.operands) > 1:  # value r counts under mask r
            classes.join(op.operands[0], op.operands[1])
        elif op.kind == "expand_dims" and op.operands[0].type.is_block:
            derived.append((op.operands[0], op.result, op.attrs["axis"]))
        elif op.kind in ("permute", "reshape", "split", "unstack") or (
                op.kind in ("join", "stack") and
                all(v.type == op.operands[0].type for v in op.operands)):
            views += [(r, op.operands[0], op) for r in op.results]
            if op.kind == "unstack":
                unstacked.add(op.operands[0].id)
        elif op.kind == "dot":
            classes.join(op.operands[2], op.result)
            op.attrs["plan"] = dot.plan(op, kernel.num_warps, matrix_units, arch)
            if op.attrs["plan"].matrix:
                forced.append((op.result, dot.accumulator(op.attrs["plan"].unit, op.attrs["plan"].warps)))
    # one vector width per class: 16 bytes of the narrowest element type among its largest
    # accesses (a row of per-column scales broadcast over a block of weights takes the
    # weights' width: at twice their width, the columns a warp covers halve and the warps
    # go to the rows, where a reduction over the rows crosses warps); and the axis order
    # its pointers are contiguous in (Triton's coalescing): the loads of a transposed
    # block (`K^T`, contiguous along axis 0) run along axis 0.  A vector atomic among
    # them sets the width, not the widest load: a warp's atomics then cover whole
    # sectors, adjacent lanes adjacent 16 bytes (fp32 gradients added from bf16 ones,
    # loaded 16 bytes a thread, took each 32-byte sector in two instructions)
    used = {o.id for op in kernel.walk() for o in op.operands}
    vec: dict[int, int] = {}
    widest: dict[int, int] = {}  # class → elements of its largest access
    vector_atomics: dict[int, tuple[int, int]] = {}  # class → (elements, narrowest width)
    orders: dict[int, tuple[tuple[int, ...], int]] = {}  # class → (order, elements accessed)
    for op in kernel.walk():
        if op.kind in ("load", "store", "atomic", "atomic_cas") and op.operands[0].type.is_block:
            ptr = op.operands[0]
            c = classes.find(ptr.id)
            width = _add_width(op, packed_adds, used) if op.kind.startswith("atomic") \
                else 16 // ptr.dtype.element_ty.itemsize
            size = prod(ptr.type.shape)
            if size > widest.get(c, 0):
                widest[c], vec[c] = size, width
            elif size == widest[c]:
                vec[c] = max(vec[c], width)
            if op.kind == "atomic" and width > 1:
                known = vector_atomics.get(c, (size, width))
                vector_atomics[c] = max(known, (size, width), key=lambda k: (k[0], -k[1]))
            order = _contiguity_order(ptr)
            if c not in orders or prod(ptr.type.shape) > orders[c][1]:
                orders[c] = (order, prod(ptr.type.shape))
    for c, (size, width) in vector_atomics.items():
        if size == widest[c]:
            vec[c] = min(vec[c], width)
    rep: dict[int, tuple[int, ...]] = {}
    for v in blocks:
        c = classes.find(v.id)
        if c not in rep or prod(v.type.shape) > prod(rep[c]):
            rep[c] = v.type.shape
    forced_classes = {classes.find(v.id) for v, _ in forced}
    # a dot run as multiply-adds (no matrix unit) keeps its accumulator in register tiles;
    # row statistics sliced from it and from loads take its slice, as a matrix unit's
    fma_tiles: dict[int, Blocked] = {}
    for op in kernel.walk():
        if op.kind == "dot" and not op.attrs["plan"].matrix:
            c = classes.find(op.result.id)
            if c not in forced_classes and rep[c] == op.result.type.shape and len(rep[c]) == 2:
                fma_tiles[c] = fma_tile(rep[c], kernel.num_warps, warp_size)
    forced_classes |= set(fma_tiles)
    sources = _slice_sources(kernel, classes, derived, forced_classes)
    # A permute's, join's, split's or reshape's result whose class no access or slice
    # places otherwise takes the encoding that holds its elements where the source's
    # are (`view_encoding`), where there is one: the op then moves no data (a `b.T` cast
    # and fed to a product, which then stages it K-major, passes.dot.b_k_major; fp4
    # nibbles joined and merged into a row).  A join's two operands must share an encoding.
    viewed: dict[int, tuple[int, Op]] = {}
    for v, src, op in views:
        c = classes.find(v.id)
        if c not in orders and c not in sources and c not in forced_classes:
            viewed.setdefault(c, (classes.find(src.id), op))
    # a block whose batches are taken apart (a batched tl.dot's operands) holds its batch
    # axis in registers, where each batch still spreads over every thread and the batch
    # axis is the slowest in memory: `unstack` is then a register view
    batches = {c for c in {classes.find(i) for i in unstacked}
               if c not in forced_classes and c not in sources and
               prod(rep[c][1:]) >= kernel.num_warps * warp_size and
               (c not in orders or orders[c][0][-1] == 0)}
    encodings: dict[int, Encoding] = dict(fma_tiles)
    for v, enc in forced:
        c = classes.find(v.id)
        if encodings.setdefault(c, enc) != enc:  # two dots of different splits in one class
            for op in kernel.walk():
                if op.kind == "dot" and classes.find(op.result.id) == c:
                    op.attrs["plan"] = dot.fma_plan("results joined with another dot's")
            encodings[c] = default_blocked(rep[c], vec.get(c, 1), kernel.num_warps, warp_size)

    def encoding(c: int, seen: tuple = ()) -> Encoding:
        if c in encodings:
            return encodings[c]
        if c in sources and c not in seen:
            src, axis = sources[c]
            enc: Encoding = Slice(encoding(src, seen + (c,)), axis)
        elif c in viewed and c not in seen and isinstance(
                of := encoding(viewed[c][0], seen + (c,)), Blocked) and \
                (view := view_encoding(viewed[c][1], of)) is not None and \
                all(encoding(classes.find(v.id), seen + (c,)) == of
                    for v in viewed[c][1].operands[1:]):
            enc = view
        else:
            order = orders[c][0] if c in orders and len(orders[c][0]) == len(rep[c]) else None
            enc = default_blocked(rep[c], vec.get(c, 1), kernel.num_warps, warp_size, order)
            if c in batches:  # each batch whole in every thread's registers: no exchange
                enc = batch_in_registers(default_blocked(
                    rep[c][1:], vec.get(c, 1), kernel.num_warps, warp_size,
                    order and tuple(a - 1 for a in order[:-1])))
        encodings[c] = enc
        return enc

    for v in blocks:
        v.layout = Placement(encoding(classes.find(v.id)), v.type.shape)
    conversions = _insert_conversions(kernel, derived)
    _load_batches_in_place(kernel)
    _permuted_index_arithmetic(kernel.body)
    for op in kernel.walk():
        if op.kind == "load":
            op.attrs["plan"] = _shared_rows(_plan(op), op.operands[0])
        elif op.kind == "store":
            op.attrs["plan"] = _plan(op)
        elif op.kind == "atomic" and op.operands[0].type.is_block:
            op.attrs["plan"] = _atomic_plan(op, _add_width(op, packed_adds, used))
    return conversions


def _slice_sources(kernel: Kernel, classes: _Classes, derived: list,
                   forced_classes: set[int]) -> dict[int, tuple[int, int]]:
    """class -> (class, axis) it is a slice of.  A class sliced from several others (a
    row statistic that is both a reduction of a dot's result and broadcast against a
    load; a row of per-column scales broadcast against a block of weights, whose columns
    also index the product's stores) takes the slice whose unmet demands cost least: a
    demand on index arithmetic costs nothing (computed again in the layout wanted), any
    other a conversion through shared memory, a hundred times over inside a loop (scales
    loaded in a K loop, converted there at every iteration, took a 4-bit weight product
    to 941 instructions an iteration against Triton's 546).  Among equal costs, the slice
    of a dot result's class: the tensor-core accumulator's layout is fixed."""
    depth = _loop_depths(kernel)
    entries: dict[int, list[tuple[Value, int, int]]] = {}
    for v, src, axis in derived:
        entries.setdefault(classes.find(v.id), []).append((v, classes.find(src.id), axis))

    def cost(c: int, source: tuple[int, int]) -> int:
        return sum(0 if (s, axis) == source or _index_arithmetic(v) else
                   1 + 100 * depth.get(v.id, 0) for v, s, axis in entries[c])

    sources = {}
    for c, demands in entries.items():
        candidates = list(dict.fromkeys((s, axis) for _, s, axis in demands))
        sources[c] = min(candidates, key=lambda source: (cost(c, source),
                                                         source[0] not in forced_classes))
    return sources


def _loop_depths(kernel: Kernel) -> dict[int, int]:
    """value id -> how many loops its definition is inside."""
    out: dict[int, int] = {}

    def visit(region: Region, d: int) -> None:
        for a in region.args:
            out[a.id] = d
        for op in region.ops:
            for r in op.results:
                out[r.id] = d
            for r in op.regions:
                visit(r, d + 1 if op.kind in ("for", "while") else d)

    visit(kernel.body, 0)
    return out


def _index_arithmetic(v: Value, seen: dict[int, bool] | None = None) -> bool:
    """`v` is built from `tl.arange`, constants and scalars alone (`_rematerialize` computes
    it again in any layout)."""
    seen = {} if seen is None else seen
    if v.id not in seen:
        op = v.owner
        seen[v.id] = op is not None and op.kind in _REMAT and all(
            not o.type.is_block or _index_arithmetic(o, seen) for o in op.operands)
    return seen[v.id]


def _add_width(op: Op, packed_adds: int, used: set[int]) -> int:
    """Elements one atomic of `op` may update: fp16 / bf16 adds two at a time (one packed
    f16x2 / bf16x2 instruction: the hardware adds no single 16-bit element, which becomes a
    compare-and-swap loop), and where the old values go unused, the target's
    `packed_add_elements` (16 bytes, a vector red, on sm_90); fp32 adds whose old values go
    unused, 16 bytes where the target has the vector red (an embedding's backward, rows of
    fp32 gradients added, ran at 0.26x Triton's speed an element at a time); everything
    else one."""
    if op.kind != "atomic" or op.attrs.get("op") != "add":
        return 1
    kind = op.operands[1].dtype.short
    if kind == "fp32":
        return packed_adds // 2 if op.result.id not in used and packed_adds >= 8 else 1
    if kind not in ("fp16", "bf16"):
        return 1
    return packed_adds if op.result.id not in used else 2


def _atomic_plan(op: Op, width: int) -> MemoryPlan:
    """Runs of a thread's consecutive registers updated by one packed add where their
    addresses are consecutive, the first aligned to the run's bytes, the mask one value
    over the run, and no register copies another (each element updated once, by its
    owner)."""
    if width < 2:
        return MemoryPlan(1, "element", "1 element per atomic")
    plan = _plan(op)
    place: Placement = op.operands[0].layout
    vec = min(plan.vec, width)
    if vec < 2 or plan.mask_mode not in ("none", "vector") or place.replicated_registers:
        return MemoryPlan(1, "element", "1 element per atomic (no aligned consecutive pairs)")
    bits = op.operands[1].dtype.itemsize * 8
    return MemoryPlan(vec, plan.mask_mode, f"{vec} {bits}-bit elements per atomic")


def _contiguity_order(ptr: Value) -> tuple[int, ...]:
    """Axes of a pointer block, the one its addresses run contiguously along first (the
    last axis unless another is strictly more contiguous); the rest keep their order."""
    rank = len(ptr.type.shape)
    default = tuple(reversed(range(rank)))
    contig = info(ptr).contiguity
    if len(contig) != rank:
        return default
    fast = max(default, key=lambda e: (min(contig[e], ptr.type.shape[e]), e == rank - 1))
    return (fast,) + tuple(e for e in default if e != fast)


def _insert_conversions(kernel: Kernel, derived) -> list[str]:
    """Where a slice demand was not met, convert through shared memory."""
    notes = []
    fixes: dict[int, tuple[Value, Placement]] = {}
    for v, src, axis in derived:
        want = Placement(Slice(src.layout.enc, axis), v.type.shape)
        if v.layout != want:
            fixes[v.id] = (v, want)
    if not fixes:
        return notes

    def walk(region: Region) -> None:
        new_ops: list[Op] = []
        for op in region.ops:
            for r in op.regions:
                walk(r)
            if op.kind == "expand_dims" and op.operands[0].id in fixes and \
                    op.operands[0].layout != Placement(Slice(op.result.layout.enc,
                                                             op.attrs["axis"]),
                                                       op.operands[0].type.shape):
                x = op.operands[0]
                want = Placement(Slice(op.result.layout.enc, op.attrs["axis"]), x.type.shape)
                clones: list[Op] = []
                y = _rematerialize(x, want, clones)
                if y is not None:  # index arithmetic: computed again in the layout wanted
                    new_ops.extend(clones)
                    op.operands[0] = y
                    new_ops.append(op)
                    continue
                y = Value(x.type, x.name)
                y.layout, y.info = want, x.info
                new_ops.append(Op("convert", [x], [y], op.loc))
                op.operands[0] = y
                notes.append(f"L{op.loc.line}: {x.name or 'a value'} ({x.type}) before "
                             "x[..., None]: through shared memory")
            new_ops.append(op)
            if op.kind == "reduce":
                for i, res in enumerate(op.results):
                    made = Placement(Slice(op.operands[i].layout.enc, op.attrs["axis"]),
                                     res.type.shape)
                    # fixed for another demand on it (an x[None, :] of it, converted there):
                    # the reduction itself already gives the result's placement
                    if res.id in fixes and res.layout != made:
                        tmp = Value(res.type, res.name)
                        tmp.layout = made
                        tmp.info = res.info
                        op.results[i] = tmp
                        tmp.owner = op
                        conv = Op("convert", [tmp], [res], op.loc)
                        new_ops.append(conv)
                        notes.append(f"L{op.loc.line}: result of the reduction "
                                     f"({res.type}): through shared memory")
        region.ops = new_ops

    walk(kernel.body)
    _hoist_invariant_conversions(kernel.body)
    return notes


def _load_batches_in_place(kernel: Kernel) -> None:
    """A block loaded only to be taken apart into batches whose layout is not a view of
    its own (a 3-D `acc` of a batched tl.dot: the products' accumulators) is loaded
    straight into the batches' layout, stacked (`batch_in_registers`), as a 2-D
    accumulator is loaded into its own; its pointers, mask and default, index
    arithmetic, are computed again in that layout.  Else each batch would go through
    shared memory, every batch's registers live at once."""
    uses = ir.uses(kernel)
    wanted: dict[int, Placement] = {}  # load op id → the placement of its result
    for op in kernel.walk():
        x = op.operands[0] if op.kind == "unstack" else None
        if x is None or x.owner is None or x.owner.kind != "load" or uses.get(x.id) != 1:
            continue
        part = op.results[0].layout.enc
        if isinstance(part, Blocked) and all(y.layout.enc == part for y in op.results):
            want = Placement(batch_in_registers(part), x.type.shape)
            if want != x.layout:
                wanted[id(x.owner)] = want

    def walk(region: Region) -> None:
        new_ops: list[Op] = []
        for op in region.ops:
            for r in op.regions:
                walk(r)
            want = wanted.get(id(op))
            if want is not None:
                clones: list[Op] = []
                operands = [o if not o.type.is_block else
                            _rematerialize(o, Placement(want.enc, o.type.shape), clones,
                                           REMAT_POINTERS) for o in op.operands]
                if all(o is not None for o in operands):
                    new_ops.extend(clones)
                    op.operands[:] = operands
                    op.result.layout = want
            new_ops.append(op)
        region.ops = new_ops

    if wanted:
        walk(kernel.body)


def _permuted_index_arithmetic(region: Region) -> None:
    """A permute of index arithmetic (`tl.trans(mask)` of a tile stored transposed) whose
    result is not a view of its operand: the operand is computed again in the layout
    whose permute is the result's, and the permute moves no data (`view_encoding`),
    where it went through shared memory behind a barrier of its own."""
    new_ops: list[Op] = []
    for op in region.ops:
        for r in op.regions:
            _permuted_index_arithmetic(r)
        y = op.results[0] if op.kind == "permute" else None
        if y is not None and isinstance(y.layout.enc, Blocked):
            x, order = op.operands[0], tuple(op.attrs["order"])
            inverse = tuple(order.index(a) for a in range(len(order)))
            want = Placement(permuted(y.layout.enc, inverse), x.type.shape)
            clones: list[Op] = []
            if x.layout != want and (made := _rematerialize(x, want, clones)) is not None:
                new_ops.extend(clones)
                op.operands[0] = made
        new_ops.append(op)
    region.ops = new_ops


def _hoist_invariant_conversions(region: Region) -> None:
    """A conversion at the top of a loop's body of a value made before the loop (a vector
    loaded once, broadcast against each iteration's block) goes before the loop: made
    once, not through shared memory and two barriers at every iteration.  Inner loops
    first, so that a conversion leaves every loop it does not depend on."""
    new_ops: list[Op] = []
    for op in region.ops:
        for r in op.regions:
            _hoist_invariant_conversions(r)
        if op.kind in ("for", "while"):
            body = op.regions[0] if op.kind == "for" else op.regions[1]
            inside = {v.id for r in op.regions for v in r.args}
            inside |= {v.id for r in op.regions for o in ir.walk(r) for v in o.results}
            moved = [o for o in body.ops
                     if o.kind == "convert" and o.operands[0].id not in inside]
            body.ops = [o for o in body.ops if o not in moved]
            new_ops.extend(moved)
        new_ops.append(op)
    region.ops = new_ops


_REMAT = {"arange", "splat", "const", "binary", "cmp", "cast", "unary", "where",
          "broadcast", "expand_dims"}
REMAT_POINTERS = _REMAT | {"addptr"}  # and pointers offset by index arithmetic


def _rematerialize(x: Value, want: Placement, clones: list[Op],
                   kinds: set[str] = _REMAT, origins: dict | None = None) -> Value | None:
    """`x` computed again with placement `want`, when it is index arithmetic (built from
    `tl.arange`, constants and scalars; ops of `kinds`): a few integer operations instead
    of a trip through shared memory.  New ops are appended to `clones` in dependency
    order (and `origins`, where given, maps each one's id() to the op it copies); None
    when x depends on anything else."""
    op = x.owner
    if op is None or op.kind not in kinds:
        return None
    operands = []
    for o in op.operands:
        if not o.type.is_block:
            operands.append(o)
            continue
        if op.kind == "expand_dims":
            sub = Placement(Slice(want.enc, op.attrs["axis"]), o.type.shape)
        else:  # element-wise and broadcast: the same encoding at the operand's shape
            sub = Placement(want.enc, o.type.shape)
        y = o if o.layout == sub else _rematerialize(o, sub, clones, kinds, origins)
        if y is None:
            return None
        operands.append(y)
    y = Value(x.type, None)
    y.layout, y.info = want, x.info
    clone = Op(op.kind, operands, [y], op.loc, dict(op.attrs))
    clones.append(clone)
    if origins is not None:
        origins[id(clone)] = op
    return y


def _pow2_floor(n: int) -> int:
    return 1 << (max(1, n).bit_length() - 1)


def _plan(op: Op) -> MemoryPlan:
    ptr = op.operands[0]
    mask = _mask_of(op)
    if not ptr.type.is_block:
        return MemoryPlan(1, "none" if mask is None else "element", "scalar access")
    place: Placement = ptr.layout
    ax = place.fast_axis
    esize = ptr.dtype.element_ty.itemsize
    pinfo = info(ptr)
    if ax is None:
        return MemoryPlan(1, "element" if mask is not None else "none",
                          "1 element per access (no contiguous axis in this layout)")
    contig, div = pinfo.contiguity[ax], pinfo.divisibility[ax]
    align_elems = max(1, div // esize) if div >= esize else 1
    vec = _pow2_floor(min(place.vec, contig, align_elems, 16 // esize))
    axis_note = f" along axis {ax}" if len(ptr.type.shape) > 1 else ""
    why = (f"{vec} x {ptr.dtype.element_ty.short}" + (f" ({vec * esize} B)" if vec > 1 else "")
           + f"{axis_note}; pointers contiguous over {min(contig, ptr.type.shape[ax])}, "
           f"aligned to {div if div < 1 << 20 else 'any'} B")
    if mask is None:
        return MemoryPlan(vec, "none", why + "; no mask")
    if vec == 1:
        return MemoryPlan(1, "element", why + "; mask checked per element")
    minfo = info(mask)
    if minfo.constancy[ax] >= vec:
        return MemoryPlan(vec, "vector", why + f"; mask uniform over {minfo.constancy[ax]} "
                                             "elements, checked once per vector")
    if _is_prefix_mask(mask, vec, ax):
        return MemoryPlan(vec, "prefix", why + "; mask is a bound on contiguous offsets: "
                                             "whole vectors in bounds take the vector path, "
                                             "the tail goes lane by lane")
    return MemoryPlan(1, "element", why.replace(f"{vec} x {ptr.dtype.element_ty.short} ({vec * esize} B)", f"1 x {ptr.dtype.element_ty.short}", 1)
                      + "; mask varies within vectors, checked per element")


def _shared_rows(plan: MemoryPlan, ptr: Value) -> MemoryPlan:
    """Pointers equal over aligned runs along an axis other than the vector's (rows of
    packed low-bit weights: `offs_k // 8` rows share an int32), where a thread holds several
    registers of one run (the tile along the axis divides the run): written at the run's
    first register, the compiler loads each address once, as Triton's does."""
    place: Placement | None = ptr.layout if ptr.type.is_block else None
    pinfo = info(ptr) if place is not None else None
    if place is None or pinfo is None or len(pinfo.constancy) != len(ptr.type.shape):
        return plan
    for ax, e in enumerate(place.kept):
        if ax == place.fast_axis or place.reg_sizes[e] < 2:
            continue
        run, tile, spt = pinfo.constancy[ax], place.tile(e), place.base.spt[e]
        if run < 2 or run % tile or place.full[e] % run:
            continue
        span = run // tile * spt  # registers along e per run
        span = math.gcd(span, place.reg_sizes[e])
        if span < 2:
            continue
        note = f"; {span} registers along axis {ax} share each address: loaded once"
        return replace(plan, reason=plan.reason + note, shared=(place.rstride(e), span))
    return plan


def _mask_of(op: Op) -> Value | None:
    if op.kind == "load":
        return op.operands[1] if len(op.operands) > 1 else None
    return op.operands[2] if len(op.operands) > 2 else None


def _is_prefix_mask(mask: Value, vec: int, ax: int) -> bool:
    """mask = offs < n (or n > offs, <=, >=) with offs increasing and n uniform per vector
    along the vector axis: within a vector the mask is true on a prefix, so its last lane
    decides the whole."""
    op = mask.owner
    while op is not None and op.kind == "broadcast":  # repeats along other axes keep prefixes
        op = op.operands[0].owner
    if op is not None and op.kind == "binary" and op.attrs["fn"] == "and":
        # (rows < M) & (cols < N): one side fixed along the vector, the other a prefix
        a, c = op.operands
        return any(info(u).constancy[ax] >= vec and _is_prefix_mask(w, vec, ax)
                   for u, w in ((a, c), (c, a)))
    if op is None or op.kind != "cmp":
        return False
    a, c = (info(v) for v in op.operands)
    pred = op.attrs["pred"]
    if pred in ("lt", "le"):
        return a.contiguity[ax] >= vec and c.constancy[ax] >= vec
    if pred in ("gt", "ge"):
        return c.contiguity[ax] >= vec and a.constancy[ax] >= vec
    return False


# Elements of one block value a thread may hold.  Its registers (255 of them) hold far
# fewer; the rest spill to local memory, and ptxas's time grows with the unrolled code:
# 5 s for 512 elements a thread, 15 s for 1024 (2**17 on 4 warps), about three times
# longer per doubling: minutes for a 2**20 block on 4 warps (8192).
MAX_ELEMENTS_PER_THREAD = 1024


def check_registers(kernel: Kernel) -> None:
    """Reject, before rendering, the first block value whose layout gives each thread more
    than MAX_ELEMENTS_PER_THREAD elements (an OutOfRegisters at its statement)."""
    from tilecc.errors import OutOfRegisters

    for op in kernel.walk():
        for v in op.results:
            regs = getattr(v.layout, "regs", 0) if v.type.is_block else 0
            if regs <= MAX_ELEMENTS_PER_THREAD:
                continue
            base = v.layout.base
            threads = prod(base.tpw) * prod(base.wpc)
            numel = v.type.numel
            raise OutOfRegisters(
                f"out of resource: registers: a block of {numel} elements ({list(v.type.shape)})"
                f" on {threads} threads (num_warps={kernel.num_warps}) gives each thread "
                f"{regs} of them; tilecc compiles at most {MAX_ELEMENTS_PER_THREAD} (a thread "
                "has 255 registers; beyond that ptxas spills and takes minutes): use a "
                "smaller block and loop over the data, or more warps",
                op.loc, regs, MAX_ELEMENTS_PER_THREAD)


__all__ = ["Blocked", "Slice", "Placement", "MemoryPlan", "assign", "default_blocked", "Type"]
