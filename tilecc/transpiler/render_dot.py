"""Rendering of `tl.dot` (planned by `passes.dot`, settled by `passes.settle`).

Written by `DotWriter`.  The generated code has three visible parts: the operands
are staged into shared-memory tiles (by the threads' own stores, or — when the pipelining
pass moved their loads ahead — by `cp.async` copies issued iterations earlier), the main
loop over K reads fragments (`ldmatrix`) and issues `mma.sync`, and the result is left in
the accumulator's registers for whatever the kernel does next.  The portable path keeps
the staging and replaces the middle part by a loop of fused multiply-adds.  Which loop
over K is written is the plan's matrix unit's (`MatrixUnit.main_loop`), and what it
needs (fences, operands from shared memory or registers) is asked of the unit's row.
The methods here compute plain data (sizes, names, offsets, the lines other ops wrote);
`templates/c_like/dot.j2` spells the C.
"""

from __future__ import annotations

import re

from tilecc.transpiler.ir import Op, Value, walk
from tilecc.transpiler.line_breaks import BODY, BREAK, SPACE, inner, joined, words
from tilecc.transpiler.matrix_units import Instruction
from tilecc.transpiler.passes.dot import (DotPlan, a_m_major, b_k_major, operand_place,
                                          promotion_steps)
from tilecc.transpiler.passes.emission import pairs_cast
from tilecc.transpiler.passes.pipeline import Pipeline, own_elements
from tilecc.transpiler.passes.settle import overlap_parts
from tilecc.transpiler.passes.warp_roles import PRODUCER_REGISTERS, WarpRoles
from tilecc.transpiler.render_writer import Writer
from tilecc.transpiler.specs import row_copies, rows_slab
from tilecc.transpiler.target import c_type

INNER = inner(SPACE)  # a break inside a call's parentheses


def fragment_row_start(layout: str, axis: int) -> tuple[str, str]:
    """Where the row of an 8 x 8 fragment block that this lane addresses for `stmatrix`
    starts, as C (row, column) of the block: the block of registers (j, j + 1), its rows
    along `axis` (lane i holding row i / 4, columns 2 (i % 4) and the next); lane i gives
    the start of row i % 8."""
    c = [f"{layout}::coord{e}(j)" for e in (0, 1)]
    c[axis] += " - tc::lane_id() / 4 + tc::lane_id() % 8"
    c[1 - axis] += " - 2 * (tc::lane_id() % 4)"
    return c[0], c[1]


def mfma_indices(ins: Instruction, warps: tuple[int, int], nt: int,
                 shape: tuple[int, int]) -> dict[str, str]:
    """The C expressions of the MFMA loop's indices, from the instruction's lane layouts
    and the accumulator's blocked layout (tests evaluate them against both): the warp's
    place, the lane's A row (`row`, of instruction mi) and B column (`col`, of ni) and K
    offsets, and the first accumulator register of instruction (mi, ni) (its slot q is
    `q * nt` further).  Instruction row i is the accumulator block's row
    `(i / G) * G wm_count + wm G + i % G` (G: the rows one register set spans).  Warps
    beyond a small product's tiles (`shape`) hold copies: their place wraps."""
    wm_count, wn_count = warps
    m, n = shape
    warp_m = "tc::warp_id()" if wn_count == 1 else f"tc::warp_id() / {wn_count}"
    if ins.m * wm_count > m:
        warp_m = f"{warp_m if wn_count == 1 else '(' + warp_m + ')'} % {m // ins.m}"
    warp_n = "0" if wn_count == 1 else f"tc::warp_id() % {min(wn_count, n // ins.n)}"
    if warp_n.endswith("% 1"):
        warp_n = "0"
    rows = 4 * 64 // ins.n  # accumulator rows one set of 4 registers spans, over the wave
    lane = "tc::lane_id()"
    a_row = (f"{lane} % {ins.m} / {rows} * {rows * wm_count} + wm * {rows} + {lane} % {rows}"
             if ins.m > rows else f"wm * {ins.m} + {lane} % {ins.m}")
    return dict(
        warp_m=warp_m, warp_n=warp_n, a_row=a_row, b_col=f"wn * {ins.n} + {lane} % {ins.n}",
        a_k=f"{lane} / {ins.m} * {ins.k_per_lane}", b_k=f"{lane} / {ins.n} * {ins.k_per_lane}",
        row=f"a_row + mi * {ins.m * wm_count}", col=f"b_col + ni * {ins.n * wn_count}",
        slot0=f"mi * {ins.accumulator_slots * nt} + ni")


def a_fragment_register(i: int | str, h: int, c: int, k: int, kk: str) -> str:
    """The first of the two registers (a C expression of `kk`, and of `i` where it is one)
    that make A's fragment register (h, c) of tile `i` of a product reading A from the
    accumulator-layout registers of a [M, k] value: rows 8 h + lane / 4 of the tile,
    columns 8 c + 2 (lane % 4) + [0, 2) of K step `kk` (16 columns; that layout has k / 4
    registers a row repetition)."""
    rk = k // 4
    if isinstance(i, int):
        first = (2 * i + h) * rk + 2 * c
        return f"{first} + 4 * {kk}" if first else f"4 * {kk}"
    return f"(2 * {i} + {h}) * {rk} + {2 * c} + 4 * {kk}"


class DotWriter(Writer):
    """tl.dot, and the loops whose dot operands stream into shared memory ahead of their
    use (pipelined `for`s: the core writer hands them over, `pipelined_for`).  Its state,
    written only here: the operand tiles, the pipelines' stages, the hooks and flags of the
    loop being written, and the ops moved to a pipeline's issue points (`moved`, which
    the core writer skips)."""

    def __init__(self, renderer):
        super().__init__(renderer)
        # (dot, operand) staged once before its loop → its tile
        self.hoisted: dict[tuple[int, int], str] = {}
        self.pipe_tiles: dict[int, tuple[str, str, int]] = {}  # load → (stages, stage, elems)
        self.dot_use: dict[int, tuple[Op, int]] = {}  # pipelined load → (its dot, operand)
        self.after_first_fragments = None  # a pipeline's copies, issued inside its mma loop
        self.wgmma_in_flight = False  # rendering a loop that keeps one wgmma in flight
        # ... whose copies wait behind the product's own barrier for every warp's retire
        # (not where the copies bring their own, after awaiting the next stage)
        self.refill_barrier = False
        # a pipelined loop's products whose wait a later one does (Pipeline.deferred), and
        # their accumulators (name, registers): pinned wherever the groups are retired
        self.deferred: frozenset = frozenset()
        self.deferred_accs: list[tuple[str, int]] = []
        # the accumulator of the wgmma whose commit the copies being written follow
        self.committing: str | None = None
        # an overlapped loop's (Pipeline.overlapped): the product issued without its wait,
        # and the second product's A, packed in pairs in the registers of this array
        self.issue_only: frozenset = frozenset()  # id() of the products issued unwaited
        self.rotated: dict[int, str] = {}  # a load read ahead into registers: their name
        self.packed_a: str | None = None
        self.vector_offsets: dict[int, str] = {}  # pipelined load → its vectors' offsets
        # loads read ahead for a product's prologue → (stages array, stage, elements)
        self.read_ahead: dict[int, tuple[str, str, int]] = {}
        self.barriers = self.phase = ""  # a TMA pipeline's mbarriers, and their parity
        # the loop's split copies that skip the boxes past the tensor's rows, whose places
        # it zeroes before it (TmaCopy.skip_past), by id()
        self.zeroed: set[int] = set()
        # a pipeline's mbarriers of the warps' releases (Pipeline.releases), and the
        # variable of the stage its iteration reads
        self.released = self.current_stage = ""
        self.moved = self.pipelined_ops()  # ops written at a pipeline's issue point
        # the role being written (passes.warp_roles: "producer" or "consumer"; "" with
        # one role), and the names both roles' pipelines use (barriers, stage, parity)
        self.role = ""
        self.role_names: dict[str, str] = {}
        self.role_stages: list[dict] = []

    def tile_offset(self, swizzled: bool, row: str, col: str, row_len: int, esize: int) -> str:
        """Element offset of (row, col) in an operand tile: swizzled 16-byte chunks for
        ldmatrix, plain row-major for the portable loop."""
        if not swizzled:
            return f"{row} * {row_len} + {col}"
        epc = 16 // esize
        return (f"tc::swizzled_chunk<{row_len // epc}>({row},{INNER}{col} / {epc}) * {epc} +{SPACE}"
                f"{col} % {epc}")

    def operand_offset(self, dot: Op, which: int, row: str, col: str) -> str:
        """Element offset of (row, col) in operand `which` (0: A, 1: B) of `dot`'s tiles, in
        the layout its plan reads: wgmma's atoms (A's rows placed where each warpgroup's
        instruction computes them), ldmatrix's swizzled rows, or plain rows."""
        plan: DotPlan = dot.attrs["plan"]
        x = dot.operands[which]
        rows, cols = x.type.shape
        esize = x.dtype.itemsize
        if not plan.unit.operands_from_shared:  # ldmatrix's rows, or the portable loop's
            # B's columns as the tile's rows (MFMA; ldmatrix untransposed), A's columns
            # (ldmatrix transposed)
            if which == 1 and b_k_major(dot) or which == 0 and a_m_major(dot):
                return self.tile_offset(plan.swizzled, col, row, rows, esize)
            return self.tile_offset(plan.swizzled, row, col, cols, esize)
        epc, atom = 16 // esize, 128 // esize  # elements in a 16-byte chunk, a 128-byte row
        if which == 0 and a_m_major(dot):  # A M-major: laid out as an N-major B, A^T's, its
            # rows placed where each warp's instruction computes them (as K-major)
            warps = plan.warps[0]
            place = f"tc::wgmma_a_row<{warps}, {rows // (warps // 4)}>({row})"
            row, col, rows, cols = col, place, cols, rows
        if which == 0 and a_m_major(dot) or which == 1 and not b_k_major(dot):
            # B: atoms of 64 columns, each K rows of 128 B (A M-major: of 64 rows of M); B
            # of 64-byte rows: one atom of 64-byte swizzle
            if cols * esize == 64:
                return (f"tc::swizzled_chunk<4>({row},{INNER}{col} / {epc}) * {epc} +{SPACE}"
                        f"{col} % {epc}")
            return (f"{col} / {atom} * {rows * atom} +{SPACE}tc::swizzled_chunk<8>({row},{INNER}"
                    f"{col} % {atom} / {epc}) * {epc} +{SPACE}{col} % {epc}")
        if which == 1:  # B K-major: B's columns are the tile's rows, laid out as A's
            row, col, rows, cols = col, row, cols, rows
            place = row
        else:
            warps = plan.warps[0]
            place = f"tc::wgmma_a_row<{warps}, {rows // (warps // 4)}>({row})"
        if cols * esize == 64:  # 64-byte rows, 64-byte swizzle
            return (f"tc::swizzled_chunk<4>({place},{INNER}{col} / {epc}) * {epc} +{SPACE}"
                    f"{col} % {epc}")
        return (f"{col} / {atom} * {rows * atom} +{SPACE}tc::swizzled_chunk<8>({place},{INNER}"
                f"{col} % {atom} / {epc}) * {epc} +{SPACE}{col} % {epc}")

    def operand_place(self, dot: Op, which: int, row: int, col: int) -> int:
        """What `operand_offset` computes, for one element (passes.dot.operand_place: tests
        hold the two to each other)."""
        return operand_place(dot, which, row, col)

    def vector_steps(self, dot: Op, which: int, layout, vec: int) -> list[int] | None:
        """Where each of a thread's vectors of operand `which` lands in its tile, in bytes
        from where its first one does, when that is the same in every thread (the copies
        then address one register and constant offsets); None where it is not."""
        x = dot.operands[which]
        ws = self.ctx.target.warp_size
        threads = self.ctx.kernel.num_warps * ws
        steps = None
        for t in range(threads):
            at = [x.dtype.itemsize * self.operand_place(dot, which, *layout.coords(t, v, ws))
                  for v in range(0, layout.regs, vec)]
            mine = [a - at[0] for a in at]
            if steps is None:
                steps = mine
            elif mine != steps:
                return None
        return steps

    def fragment_staging(self, dot: Op, which: int) -> int | None:
        """Whether operand `which` of `dot` goes to its tile as `stmatrix`'s 8 x 8 blocks:
        where its register pairs are tensor-core fragments (a product's result, or its
        `tl.trans`) whose rows are 16 contiguous bytes of the tile — the axis of the
        operand along which a fragment's rows run (`fragment_row_start`); None elsewhere.
        Found by simulating every warp's stores against `operand_place`.  (The tile runs
        along the operand's layout, `b_k_major`, `a_m_major`: a fragment's columns are never
        the tile's rows, which `stmatrix.trans` would store.)"""
        x = dot.operands[which]
        if x.dtype.short not in ("fp16", "bf16") or not self.ctx.target.has_stmatrix or \
                x.layout.regs % 8 or len(x.type.shape) != 2:
            return None
        return next((axis for axis in (0, 1) if self._stores_fragments(dot, which, axis)),
                    None)

    def _stores_fragments(self, dot: Op, which: int, axis: int) -> bool:
        """Whether `stmatrix` of operand `which`'s registers r ... r + 7, each lane
        addressing the row `fragment_row_start` gives it, writes every element where
        `operand_place` puts it: element e of row k of block m (registers r + 2m and the
        next) comes from register r + 2m + e % 2 of lane 4k + e / 2, at the address lane
        8m + k gives."""
        x = dot.operands[which]
        layout, ws = x.layout, self.ctx.target.warp_size

        def place(c: tuple[int, ...]) -> int:
            return self.operand_place(dot, which, *c)

        for warp in range(self.ctx.kernel.num_warps):
            for r in range(0, layout.regs, 8):
                for lane in range(ws):
                    m, k = lane // 8, lane % 8
                    start = list(layout.coords(warp * ws + lane, r + 2 * m, ws))
                    start[axis] += k - lane // 4
                    start[1 - axis] -= 2 * (lane % 4)
                    first = place(tuple(start))
                    if first % 8 or any(  # (16-byte aligned)
                            place(layout.coords(warp * ws + 4 * k + e // 2, r + 2 * m + e % 2,
                                                ws)) != first + e for e in range(8)):
                        return False
        return True

    def stage_operand(self, dot: Op, which: int, tile: str) -> None:
        """Operand `which`'s registers → its shared-memory tile, a vector per store where
        its layout holds consecutive elements of a tile row."""
        plan: DotPlan = dot.attrs["plan"]
        x = dot.operands[which]
        p = x.layout
        esize = x.dtype.itemsize
        lname = self.exprs.lname(p)
        along = 0 if which == 1 and b_k_major(dot) or which == 0 and a_m_major(dot) else 1
        # (the axis contiguous in the tile)
        vec = p.vec if p.fast_axis == along else 1
        if plan.swizzled:
            vec = min(vec, 16 // esize)
        t = c_type(x.dtype)
        staging = self.fragment_staging(dot, which)
        if staging is not None:  # 16 bytes a lane per four register pairs
            row, col = fragment_row_start(lname, staging)
            self.out.line(self.ctx.dot_macros.stage_fragments(dict(
                regs=p.regs, row=row, col=col, tile=tile,
                offset=self.operand_offset(dot, which, "row", "col"),
                pairs=joined(self.blocks.fragment_pairs(x), ", "))))
            return
        if vec == 1:
            off = self.operand_offset(dot, which, f"{lname}::coord0(r)", f"{lname}::coord1(r)")
            value = self.exprs.text(x, 'r')
            self.out.line(self.ctx.macros.register_loop(p.regs, [f"{tile}[{off}] = {value};"]))
            return
        off = self.operand_offset(dot, which, "row", "col")
        self.out.line(self.ctx.dot_macros.stage_vectors(dict(
            regs=p.regs, vec=vec, layout=lname, ctype=t, value=self.exprs.text(x, "v + k"),
            tile=tile, offset=off)))

    def op_dot(self, op: Op) -> None:
        plan: DotPlan = op.attrs["plan"]
        a, b, c = op.operands
        d = op.result
        (m, k), n = a.type.shape, d.type.shape[1]
        acc_t = c_type(op.attrs["acc_dtype"])
        in_t = c_type(a.dtype)
        esize = a.dtype.itemsize
        a_regs = plan.a_from_registers
        self.out.line(words(f"// {m} x {k} @ {k} x {n} ({a.dtype.short}): {plan.description}"))
        # the result: in the accumulator's own registers when nothing else reads them
        if self.ctx.root(d) != self.ctx.root(c):
            self.core.declare(d)
            self.out.line(self.ctx.macros.register_loop(
                d.layout.regs, [f"{self.names.name(d)}[r] = {self.exprs.text(c, 'r')};"]))
        acc = self.names.name(d)
        if c_type(d.dtype) != acc_t:  # out_dtype narrower than the sum: round once at the end
            acc = self.names.fresh(f"{self.names.name(d)}_sum")
            self.out.line(f"{acc_t} {acc}[{d.layout.regs}];")
            self.out.line(self.ctx.macros.register_loop(
                d.layout.regs, [f"{acc}[r] = tc::cast<{acc_t}>({self.names.name(d)}[r]);"]))
        tiles = []
        offset = 0
        for which, x in enumerate((a, b)):
            if which == 0 and a_regs:
                tiles.append((x, None, False))
            elif x.id in self.pipe_tiles:  # already in its pipeline stage
                arr, stage, elems = self.pipe_tiles[x.id]
                tiles.append((x, f"({arr} + {stage} * {elems})", False))
            elif (id(op), which) in self.hoisted:  # staged once, before the loop
                tiles.append((x, self.hoisted[(id(op), which)], False))
            else:
                tiles.append((x, self.names.fresh(f"{self.names.name(d)}_{'ab'[which]}"), True))
                offset += (x.type.shape[0] * x.type.shape[1] * esize + 15) // 16 * 16
        if any(own for *_, own in tiles):
            # wgmma's tiles at the pool's start (its swizzle atoms: 1024-byte aligned); other
            # units' alternate halves with the steps before them, as other steps do (one
            # product after another: no barrier before each product's stores)
            base = self.blocks.pool_step(offset, alternate=not plan.unit.async_proxy)
            at = 0
            for x, tile, own in tiles:
                if own:
                    self.out.line(f"{in_t}* {tile} = reinterpret_cast<{in_t}*>({base}" +
                                  (f" + {at});" if at else ");"))
                    at += (x.type.shape[0] * x.type.shape[1] * esize + 15) // 16 * 16
            for which, (x, tile, own) in enumerate(tiles):
                if own:
                    self.stage_operand(op, which, tile)
            if plan.unit.async_proxy:
                self.out.line(
                    "tc::fence_proxy_async();  // the stores, visible to the tensor cores")
            self.out.line("__syncthreads();")
        a_tile, b_tile = tiles[0][1], tiles[1][1]
        # the loop over K: the unit's (mma_loop, wgmma_loop, fma_loop)
        getattr(self, plan.unit.main_loop)(op, plan, acc, a_tile, b_tile)
        if acc != self.names.name(d):
            self.out.line(self.ctx.macros.register_loop(
                d.layout.regs,
                [f"{self.names.name(d)}[r] = tc::cast<{c_type(d.dtype)}>({acc}[r]);"]))

    def fma_loop(self, op: Op, plan: DotPlan, acc: str, a_tile: str, b_tile: str) -> None:
        a, d = op.operands[0], op.result
        (m, k), n = a.type.shape, d.type.shape[1]
        lname = self.exprs.lname(d.layout)
        acc_t = c_type(op.attrs["acc_dtype"])
        x, y = (f"tc::cast<{acc_t}>({t}[{i}])" for t, i in
                ((a_tile, f"{lname}::coord0(r) * {k} + kk"),
                 (b_tile, f"kk * {n} + {lname}::coord1(r)")))
        step = f"{acc}[r] +={BREAK}{x} *{SPACE}{y};" if op.attrs["acc_dtype"].is_int() else \
            f"{acc}[r] ={BREAK}tc::fma({x},{INNER}{y},{INNER}{acc}[r]);"
        self.out.line(self.ctx.dot_macros.fma_loop(k, d.layout.regs, step))

    def mma_loop(self, op: Op, plan: DotPlan, acc: str, a_tile: str | None,
                 b_tile: str) -> None:
        """mma.sync over K: each step's fragments by ldmatrix from the tiles, or A's (where
        `a_tile` is None) paired from the registers of its accumulator-layout value."""
        a, d = op.operands[0], op.result
        (m, k), n = a.type.shape, d.type.shape[1]
        wm, wn = plan.warps
        mt, nt = m // (16 * wm), n // (8 * wn)  # mma tiles per warp along M and N
        rn = 2 * nt  # accumulator registers per row of the warp's share
        hook_lines = self.copies_in_loop() or []  # the pipeline's, after the first loads
        frags = self.fragment_data(op, plan, b_tile)
        if a_tile is None:
            frags["a_registers"] = [
                self.a_register_fragments(a, k, "mi", kk) for kk in ("0", "(kk + 1)")]
        self.out.line(self.ctx.dot_macros.mma_loop(dict(
            steps=k // plan.k_step, k_step=plan.k_step, wm=wm, wn=wn, mt=mt, nt=nt, rn=rn,
            warp_m="tc::warp_id()" if wn == 1 else f"tc::warp_id() / {wn}",
            warp_n="0" if wn == 1 else f"tc::warp_id() % {wn}", a_tile=a_tile, b_tile=b_tile,
            intrinsic=plan.unit.instructions[(a.dtype.short, op.attrs["precision"])].intrinsic,
            acc=acc, c0=f"2 * mi * {rn} + 2 * ni", hook=hook_lines, frags=frags)))

    def mfma_loop(self, op: Op, plan: DotPlan, acc: str, a_tile: str, b_tile: str) -> None:
        """AMD MFMA over K: per K step, each lane reads its run of `k_per_lane` elements of
        A's row and of B's column (both K-major in their swizzled tiles: one vector read
        each), and the wave issues its instructions; the accumulator registers of
        instruction (mi, ni) are the block's (slots mi + q, ni), q < M N / 64."""
        a, d = op.operands[0], op.result
        (m, k), n = a.type.shape, d.type.shape[1]
        ins = plan.unit.instructions[(a.dtype.short, op.attrs["precision"])]
        esize = a.dtype.itemsize
        wm, wn = plan.warps
        # instructions per warp along M, N (warps beyond the tiles hold copies)
        mt, nt = max(1, m // (ins.m * wm)), max(1, n // (ins.n * wn))
        self.out.line(self.ctx.dot_macros.mfma_loop(dict(
            steps=k // plan.k_step, k_step=plan.k_step, mt=mt, nt=nt, kpl=ins.k_per_lane,
            in_t=c_type(a.dtype), a_tile=a_tile, b_tile=b_tile, mnemonic=ins.mnemonic,
            m_i=ins.m, n_i=ins.n, intrinsic=f"tc::{ins.intrinsic}<{nt}>", acc=acc,
            a_offset=self.tile_offset(True, "row", "kr", k, esize),
            b_offset=self.tile_offset(True, "col", "kc", k, esize),
            **mfma_indices(ins, plan.warps, nt, (m, n)))))

    def wgmma_loop(self, op: Op, plan: DotPlan, acc: str, a_tile: str | None,
                   b_tile: str) -> None:
        """Warpgroup MMA over K.  A comes from its shared-memory tile, or, when `a_tile` is
        None, from the registers of its accumulator-layout value; B from its tile, N-major
        (transposed for the instruction) or K-major."""
        a, d = op.operands[0], op.result
        (m, k), n = a.type.shape, d.type.shape[1]
        ins = plan.unit.instructions[(a.dtype.short, op.attrs["precision"])]
        esize = a.dtype.itemsize
        groups = plan.warps[0] // 4
        per_group = m // groups
        rn = n // 4  # accumulator registers per row repetition
        b_trans = 0 if b_k_major(op) else 1
        every = promotion_steps(op)
        # the registers the instructions accumulate into: fp8's partial sums apart
        target = acc if every is None else self.names.fresh(f"{acc}_part")
        # each K step's descriptor is the tile's plus its offset (in 16-byte units: the
        # address field is the low 14 bits, and the tiles end below 256 KiB)
        if b_trans and n * esize == 64:  # N-major, one 64-byte swizzle atom of K rows
            b_desc0, b_step = f"tc::wgmma_descriptor(b_base, {k * 64}, 512, 2)", "kk * 64"
        elif b_trans:  # N-major: atoms of 64 columns, K rows of 128 bytes each
            b_desc0, b_step = f"tc::wgmma_descriptor(b_base, {k * 128}, 1024, 1)", "kk * 128"
        else:  # K-major: as A's tile, all n rows
            b_desc0, b_step = self.k_major_descriptor("b_base", "", k * esize, n)
        a_desc0, a_step = [], ""
        a_trans = a_tile is not None and a_m_major(op)
        for i in range(per_group // 64 if a_tile is not None else 0):
            first = f"warpgroup * {per_group}" + (f" + {64 * i}" if i else "")
            if a_trans:  # M-major: the instruction's 64 rows are one atom of K rows
                atom = f" + ({first}) / 64 * {k * 128}"
                desc, a_step = f"tc::wgmma_descriptor(a_base{atom}, {k * 128}, 1024, 1)", \
                    "kk * 128"
            else:
                desc, a_step = self.k_major_descriptor("a_base", first, k * esize, m)
            a_desc0.append(desc)
        data = dict(
            steps=k // plan.k_step, k_step=plan.k_step, per_group=per_group, n=n,
            a_from_registers=a_tile is None, a_tile=a_tile, b_tile=b_tile, every=every,
            acc=acc, target=target, regs=d.layout.regs, b_desc0=b_desc0, b_step=b_step,
            a_desc0=a_desc0, a_step=a_step, in_flight=self.wgmma_in_flight,
            refill_barrier=self.refill_barrier,
            intrinsic=f"tc::{ins.intrinsic_for(n)}_{'rs' if a_tile is None else 'ss'}"
                      f"<{b_trans}{', 1' if a_trans else ''}>",
            halves=[[f"{target} + {(2 * i + h) * rn}" if (2 * i + h) else target for h in (0, 1)]
                    for i in range(per_group // 64)],
            frags=[self.a_register_fragments(a, k, i) if a_tile is None else []
                   for i in range(per_group // 64)], issue_only=id(op) in self.issue_only)
        # the next stages' copies overlap the products
        self.committing = acc
        try:
            data["hook"] = self.copies_in_loop()
        finally:
            self.committing = None
        # deferred: retired by a later product's wait (which pins this accumulator too)
        data["deferred"] = id(op) in self.deferred
        data["retired"] = [(name, regs) for name, regs in self.deferred_accs if name != acc]
        self.out.line(self.ctx.dot_macros.wgmma_loop(data))

    def copies_in_loop(self) -> list[str] | None:
        """The lines of the pipeline's copies waiting to be issued inside the loop over K
        being written (`after_first_fragments`), or None where none wait; taken once."""
        hook, self.after_first_fragments = self.after_first_fragments, None
        if hook is None:
            return None
        with self.out.captured() as lines:
            hook()
        return lines

    def retire_deferred(self, refill: bool = False) -> None:
        """The wait that retires the deferred products (Pipeline.deferred): before copies
        refill a stage (`refill`), all groups but the newest where this iteration committed
        one (it reads this iteration's stage, never the one refilled), then a barrier: a
        warp's wait retires its own part of a product, and the other warps' parts (their
        rows, on their own tensor cores) read the same stage; else all.  Their
        accumulators pinned after it, as after their own wait."""
        keep = 1 if refill and self.committing is not None else 0
        self.out.line(f"tc::wgmma_wait<{keep}>();  // "
                      + ("earlier products retired: their stages can be refilled" if keep else
                         "every product retired"))
        for name, regs in self.deferred_accs:
            if keep and name == self.committing:
                continue  # the newest group's, still in flight
            self.pin(name, regs)
        if refill:
            self.out.line("__syncthreads();  // ... by every warp")

    def pin(self, name: str, regs: int) -> None:
        """Array `name`'s registers pinned where they are (`tc::fence_operand`): after the
        wait that gave them back from the tensor cores, before they go to them again."""
        self.out.line(self.ctx.macros.register_loop(regs, [f"tc::fence_operand({name}[r]);"]))

    def a_register_fragments(self, a: Value, k: int, i: int | str,
                             kk: str = "kk") -> list[str]:
        """A from registers, the four of wgmma's instruction `i` (mma.sync's tile `i`, a C
        expression): fragment register (h, c) is row 8 h + lane / 4, columns 8 c +
        2 (lane % 4) + [0, 2) of K step `kk`, the accumulator layout's registers, paired."""
        frags = []
        for c in (0, 1):
            for h in (0, 1):
                r0 = a_fragment_register(i, h, c, k, kk)
                if self.packed_a is not None:  # (packed already: register r0 / 2)
                    frags.append(f"{self.packed_a}[({r0}) / 2]")
                    continue
                pair = self.exprs.text(a, r0), self.exprs.text(a, r0 + ' + 1')
                frags.append(f"tc::pack2({pair[0]}, {pair[1]})")
        return frags

    @staticmethod
    def k_major_descriptor(base: str, first_row: str, row_bytes: int,
                           rows: int) -> tuple[str, str]:
        """The descriptor of a K-major wgmma tile (`rows` rows of K elements, `row_bytes`
        bytes each: 64-byte rows with 64-byte swizzle, else 128-byte swizzle atoms) from
        row `first_row` on, and what K step `kk` (an instruction's K: 32 bytes) adds to it
        (its offset / 16 bytes)."""
        if row_bytes == 64:
            row = f" + ({first_row}) * 64" if first_row else ""
            return f"tc::wgmma_descriptor({base}{row}, 16, 512, 2)", "kk * 2"
        row = f" + ({first_row}) * 128" if first_row else ""
        return (f"tc::wgmma_descriptor({base}{row}, 16, 1024, 1)",
                f"kk / 4 * {rows * 8} + kk % 4 * 2")

    def fragment_data(self, op: Op, plan: DotPlan, b_tile: str) -> dict:
        """What dot.j2's fragment_loads needs: ldmatrix of A (and of B for 16-bit types;
        for B of tf32 / int8, shared-memory loads)."""
        a, d = op.operands[0], op.result
        (m, k), n = a.type.shape, d.type.shape[1]
        esize = a.dtype.itemsize
        epc = 16 // esize
        wm, wn = plan.warps
        mt, nt = m // (16 * wm), n // (8 * wn)
        tf32 = a.dtype.short == "fp32"
        lane_k, half = ("tc::lane_id() % 4", 4) if tf32 else ("tc::lane_id() % 4 * 4", 16)
        # A M-major, B K-major (passes.dot): their tiles' rows run along M and N, and
        # ldmatrix reads them with the other `.trans`
        a_m, b_k = a_m_major(op), b_k_major(op)
        return dict(
            mt=mt, nt=nt, wn=wn, chunks_a=(m if a_m else k) // epc,
            chunks_b=(k if b_k else n) // epc, tf32=tf32, a_m_major=a_m, b_k_major=b_k,
            a_row=f"(2 * mi + q % 2) * {8 * wm} + wm * 8 + g",
            a_chunk=f"(2 * mi + q % 2) * {wm} + wm", ldmatrix_b=esize == 2,
            pairs=nt // 2, col0=f"{8 * wn} * ni + 8 * wn", ks=plan.k_step, lane_k=lane_k,
            half=half, b_tile=b_tile, a_registers=None,
            b_offset=self.tile_offset(plan.swizzled, "kr", "nc", n, esize),
            b_offset_packed=self.tile_offset(plan.swizzled, "(kr + t)", "nc", n, esize))

    # --- operands that do not change in a loop -----------------------------------------------
    def hoist_invariant_operands(self, loop: Op) -> None:
        """Stage once, before `loop`, the tensor-core operands of the dots in its body that
        are defined before it (attention's block of queries): each gets a tile of its own in
        dynamic shared memory instead of being stored again every iteration."""
        staged: list[tuple[Op, int, Value]] = []
        for h in loop.attrs.get("hoisted", ()):  # placed by passes.settle
            # a tile per product and operand: its layout is the operand's for that product
            o, which = h.dot, h.which
            x = o.operands[which]
            t = c_type(x.dtype)
            tile = self.names.fresh(f"{self.names.name(x)}_tile")
            self.hoisted[(id(o), which)] = tile
            self.out.line(f"// L{o.loc.line}: {x.name or 'an operand'} of tl.dot does not change "
                          "in the loop: staged in shared memory once")
            self.out.line(f"{t}* const {tile} = reinterpret_cast<{t}*>(dynamic_smem"
                          + (f" + {h.tile.offset});" if h.tile.offset else ");"))
            staged.append((o, which, x))
        if not staged:
            return
        if loop not in self.ctx.kernel.body.ops:  # an enclosing loop's last pass may still read it
            self.out.line("__syncthreads();")
        for o, which, x in staged:
            self.stage_operand(o, which, self.hoisted[(id(o), which)])
        if any(o.attrs["plan"].unit.async_proxy for o, _, _ in staged):
            self.out.line("tc::fence_proxy_async();  // the stores, visible to the tensor cores")
        self.out.line("__syncthreads();")

    # --- loops whose dot operands stream in with cp.async (passes.pipeline) -------------------
    def pipelined_ops(self) -> set[int]:
        """Ids of the ops the pipelines (settled by passes.settle) move to their issue
        points; records which dot and operand each pipelined load feeds."""
        moved: set[int] = set()
        for op in self.ctx.kernel.walk():
            p: Pipeline | None = op.attrs.get("pipeline") if op.kind == "for" else None
            if p is None:
                continue
            moved |= p.slice_ops - p.kept  # (the kept ops: in the body too)
            # read back from their stages where they were (`read_ahead`)
            moved -= {id(ld) for ld, own in zip(p.loads, p.own) if own}
            moved |= {id(v) for v in p.views}  # (read from the stages: no registers)
            for o in op.regions[0].ops:
                if o.kind == "dot":
                    for which, x in enumerate(o.operands[:2]):
                        self.dot_use[x.id] = (o, which)
        return moved

    def warp_roles(self, roles: WarpRoles) -> None:
        """The kernel's body in two roles (passes.warp_roles.WarpRoles): the stages'
        mbarriers set up once, then the producer warpgroup's branch — the tile loop with
        only what the copies read, its first thread issuing them — and the consumers'
        code, the kernel as written with the copies taken out and each stage released
        once its product retired.  The consumers' block barriers are named ones of their
        own threads (`tc::sync_consumers`): the producer never reaches them."""
        kernel = self.ctx.kernel
        p: Pipeline = roles.loop.attrs["pipeline"]
        ivn = self.names.name(roles.loop.regions[0].args[0])
        consumers = kernel.num_warps * self.ctx.target.warp_size
        self.role_names = dict(
            landed=self.names.fresh(f"{ivn}_landed"), released=self.names.fresh(f"{ivn}_released"),
            stage=self.names.fresh(f"{ivn}_stage"), phase=self.names.fresh(f"{ivn}_phase"))
        # the stages' arrays, named once for both roles
        self.role_stages = self.stage_arrays(p, self.role_names["stage"], "")
        with self.out.captured() as producer, self.core.filtered(only=roles.producer):
            self.role = "producer"
            self.core.region(kernel.body)
        with self.out.captured() as consumer, self.core.filtered(skipped=roles.producer_only):
            self.role = "consumer"
            self.core.region(kernel.body)
        self.role = ""
        barrier = f"tc::sync_consumers<{consumers}>()"
        self.out.line(self.ctx.dot_macros.warp_roles(dict(
            self.role_names, offset=p.barriers.offset, stages=p.stages,
            warps=kernel.num_warps, consumers=consumers,
            registers=roles.consumer_registers(kernel.num_warps),
            producer_registers=PRODUCER_REGISTERS, producer=producer,
            consumer=[line.replace("__syncthreads()", barrier) for line in consumer])))

    def producer_loop(self, op: Op) -> None:
        """The producer's K loop (passes.warp_roles): each iteration's copies into the
        next stage, once every consumer warp released it."""
        p: Pipeline = op.attrs["pipeline"]
        lo, hi, step = op.operands[:3]
        body = op.regions[0]
        iv = body.args[0]
        ivn = self.names.name(iv)
        names = self.role_names
        self.barriers = names["landed"]
        scalars = {o.results[0].id for o in body.ops if id(o) in p.slice_ops
                   and o not in p.loads and o.results[0].id not in self.exprs.inline}
        with self.exprs.inlined(scalars), self.out.captured() as copies:
            self.tma_copies(p, names["stage"], issuer=False)
        self.out.line(self.ctx.dot_macros.producer_loop(dict(
            ivt=c_type(iv.dtype), iv=ivn, lo=self.exprs.text(lo), hi=self.exprs.text(hi),
            cmp=">" if op.attrs["step_sign"] < 0 else "<", step=self.exprs.text(step),
            released=names["released"], stage=names["stage"], phase=names["phase"],
            stages_count=p.stages, stages=self.role_stages, copies=copies)))
        self.barriers = ""

    def pipelined_for(self, op: Op) -> None:
        if self.role == "producer":
            return self.producer_loop(op)
        roles = self.role == "consumer"
        p: Pipeline = op.attrs["pipeline"]
        lo, hi, step = op.operands[:3]
        body = op.regions[0]
        iv = body.args[0]
        ivn = self.names.name(iv)
        cmp = ">" if op.attrs["step_sign"] < 0 else "<"
        step_text, hi_text = self.exprs.text(step), self.exprs.text(hi)
        self.core.declare_slots(op.results, op.operands[3:])
        stage = self.current_stage = self.role_names["stage"] if roles else \
            self.names.fresh(f"{ivn}_stage")
        # the loads read ahead in fewer stages (Pipeline.own_stages): a counter of their own
        # beside the others' (all of them read ahead: the loop's counter counts those)
        mixed = p.own_stages and not all(p.own)
        own_stage = self.names.fresh(f"{ivn}_own_stage") if mixed else stage
        d = dict(shared=not all(p.own), iv=ivn, ivt=c_type(iv.dtype), lo=self.exprs.text(lo),
                 hi=hi_text, cmp=cmp,
                 step=step_text, step_operand=self.exprs.wrap(step, "r", 13), stage=stage,
                 stages_count=p.own_stages if p.own_stages and not mixed else p.stages,
                 note=p.note.split(": ", 1)[1],
                 own_stage=own_stage if mixed else None, own_count=p.own_stages,
                 stages=self.role_stages if roles else self.stage_arrays(p, stage, own_stage),
                 fence=None, fence_regs=0, released="", roles=False,
                 warp_releases=False)
        # one multiplication group kept in flight across iterations (passes.settle): the
        # copies then run num_stages - 2 iterations ahead (with 3 stages, 2 ahead behind a
        # barrier); each accumulator register its own before the first multiplication
        self.wgmma_in_flight = p.in_flight
        self.refill_barrier = p.refill_barrier and not p.awaits_at_refill and not roles
        self.deferred = p.deferred
        self.deferred_accs = [(self.names.name(o.result), o.result.layout.regs)
                              for o in body.ops if id(o) in p.deferred]
        d["retire"] = self.deferred_accs
        if p.in_flight:
            acc = next(o for o in body.ops if o.kind == "dot" and
                       o.attrs["plan"].unit.async_groups).result
            d.update(fence=self.names.name(acc), fence_regs=acc.layout.regs)
        tma = any(t is not None for t in p.tma)
        self.barriers = self.phase = self.released = ""
        if roles:  # the barriers the kernel's two roles set up (warp_roles)
            self.barriers, self.phase = self.role_names["landed"], self.role_names["phase"]
            self.released = self.role_names["released"]
            d.update(released=self.released, roles=True, warp_releases=p.releases,
                     last_stage=f"({stage} == 0 ? {p.stages - 1} : {stage} - 1)")
        elif tma or p.arrivals:  # one mbarrier per stage: the bytes its TMA copies deliver,
            # or each thread's arrival once its cp.async copies of the stage have landed
            self.barriers = self.names.fresh(f"{ivn}_landed")
            self.phase = self.names.fresh(f"{ivn}_phase")
            d["barrier_offset"] = p.barriers.offset
        if p.releases and not roles:  # and one per stage that each warp arrives on once
            # done reading it
            self.released = self.names.fresh(f"{ivn}_released")
            d.update(released=self.released, released_offset=p.barriers.offset + 8 * p.stages,
                     warps=self.ctx.kernel.num_warps)
        threads = self.ctx.kernel.num_warps * self.ctx.target.warp_size
        d.update(phase=self.phase, next=self.names.fresh(f"{ivn}_next"), wait=dict(
            cp_async=any(t is None for t in p.tma) and not p.arrivals,
            arrivals=threads if p.arrivals else None, barriers=self.barriers, dist=p.distance,
            wgmma=any(self.dot_use[ld.result.id][0].attrs["plan"].unit.async_proxy
                      for ld, own in zip(p.loads, p.own) if not own)))
        # (only where the block's first row reads nothing the loop defines: the zeroing
        # runs before it)
        inside = {a.id for a in body.args} | {r.id for o in walk(body) for r in o.results}
        self.zeroed = {id(c) for c in p.tma if c is not None and c.skip_past and
                       self.before_loop(c.corner[0], inside) and
                       self.before_loop(c.rows, inside)}
        d["zero_fill"] = [self.zero_fill(ld, copy, p.stages, threads)
                          for ld, copy in zip(p.loads, p.tma) if id(copy) in self.zeroed]
        with self.out.captured() as d["prologue"]:
            self.issue_copies(op, d["next"], "s", f"{d['next']} {cmp} {hi_text}")
        d["ahead"] = self.names.fresh(f"{ivn}_ahead")
        # the next iteration: whether there is one, its stage and its barrier's parity
        count = d["stages_count"]
        d.update(more=f"{ivn} + {d['step_operand']} {cmp} {hi_text}",
                 next_stage=f"({stage} + 1 == {count} ? 0 : {stage} + 1)",
                 next_parity=f"({stage} + 1 == {count} ? {self.phase} ^ 1 : {self.phase})")
        if p.rotated:
            self.rotated_loads(op, d["lo"], f"{d['lo']} {cmp} {hi_text}", first=True)
        if roles and p.overlapped:
            self.overlapped_body(op, d)
            self.out.line(self.ctx.dot_macros.overlapped_loop(d))
        else:
            self.pipelined_body(op, d)
            self.out.line(self.ctx.dot_macros.pipelined_loop(d))
        self.zeroed = set()
        self.wgmma_in_flight = self.refill_barrier = False
        self.deferred, self.deferred_accs = frozenset(), []

    def stage_arrays(self, p: Pipeline, stage: str, own_stage: str) -> list[dict]:
        """The stages of each pipelined load, in dynamic shared memory (sized at launch;
        placed by passes.settle): their arrays, recorded for the dots that read them, and
        where each of a thread's cp.async vectors lands in a stage (the same place in every
        stage: worked out once, before the loop, rather than at every copy)."""
        arrays = []
        for ld, tile, tma, own in zip(p.loads, p.tiles, p.tma, p.own):
            x = ld.result
            arr = self.names.fresh(f"{self.names.name(x)}_stages")
            at = None
            if own:  # vector v of thread t at (v / vec * threads + t) vectors
                threads = self.ctx.kernel.num_warps * self.ctx.target.warp_size
                self.read_ahead[x.id] = (arr, own_stage, own_elements(x, threads))
                arrays.append(dict(ctype=c_type(x.dtype), arr=arr, offset=tile.offset, at=None))
                continue
            self.pipe_tiles[x.id] = (arr, stage, x.type.numel)
            for view in p.views:  # the same stage, read the other way
                if view.operands[0] is x:
                    self.pipe_tiles[view.result.id] = self.pipe_tiles[x.id]
            if tma is None:
                dot, which = self.dot_use[x.id]
                vec = ld.attrs["plan"].vec
                at = dict(name=self.names.fresh(f"{self.names.name(x)}_at"),
                          vectors=x.layout.regs // vec,
                          regs=x.layout.regs, vec=vec, layout=self.exprs.lname(x.layout),
                          esize=x.dtype.itemsize,
                          offset=self.operand_offset(dot, which, "row", "col"),
                          steps=self.vector_steps(dot, which, x.layout, vec), table=None)
                self.vector_offsets[x.id] = self.vector_at(at)
            arrays.append(dict(ctype=c_type(x.dtype), arr=arr, offset=tile.offset, at=at))
        return arrays

    def vector_at(self, at: dict) -> str:
        """Where vector `v` of a thread's copies lands in a stage, in bytes: its own
        register, or the first vector's and a constant distance (`vector_steps`: a step
        per vector, or a table of them, `at["table"]`)."""
        name, steps, vec = at["name"], at["steps"], at["vec"]
        if steps is None:
            return f"{name}[v / {vec}]"
        step = steps[1] if len(steps) > 1 else 0
        if steps == [i * step for i in range(len(steps))]:
            return f"{name} + v / {vec} * {step}" if step else name
        at["table"] = self.names.fresh(f"{name}_step")
        return f"{name} + {at['table']}[v / {vec}]"

    def pipelined_body(self, op: Op, d: dict) -> None:
        """The rotated loop's body (`d["body"]`) and its loop-carried updates
        (`d["yields"]`), as lines; whether the body waited for the next stage itself."""
        p: Pipeline = op.attrs["pipeline"]
        body = op.regions[0]
        s, dist, stage = p.stages, p.distance, d["stage"]
        # (whole: it lands in sums and products, where `^` would bind last)
        write = f"({stage} ^ 1)" if s == 2 and dist == 1 else f"({stage} + {dist}) % {s}"
        # (own_stages == dist: iteration + dist lands in the stage read back this iteration)
        own_write = d["own_stage"] or stage if p.own_stages else write
        d["waited"] = False
        # a barrier ends the iteration (else the refill barrier does), where the stages are
        # read by other threads than the ones that copied them: not a block read ahead
        d["closing"] = not p.awaits_at_refill and not p.awaits_at_top and d["shared"] and \
            not d["roles"]
        d["await_top"] = p.awaits_at_top or d["roles"]

        def release() -> None:
            # a consumer (warp_roles): the previous iteration's product retired (this one's
            # wait, in flight, or its own), so this warp releases the stage it read
            self.out.line(self.ctx.dot_macros.release(
                self.released, d["last_stage"], "the previous iteration's product retired: "
                "its stage, released", f"{d['iv']} != {d['lo']}").strip())
            d["waited"] = True

        def copies() -> None:
            # Issued once the first mma fragments are read from shared memory (their reads
            # need not queue behind the copies' writes), or once the wgmma are issued; a
            # wgmma then waits for the next stage while it multiplies.
            if self.deferred:
                self.retire_deferred(refill=True)
            if p.awaits_at_refill:  # this thread's copies of the next stage, then one barrier
                self.out.line(self.ctx.dot_macros.await_stage(
                    d["wait"], "the next stage", d["next_stage"], d["next_parity"], d["more"],
                    pending=dist - 2).strip())
                self.out.line("__syncthreads();  // by every warp: the previous products "
                              "retired, the next stage landed")
                d["waited"] = True
            self.issue_copies(op, d["ahead"], write, f"{d['ahead']} {d['cmp']} {d['hi']}",
                              refill=True, own_stage=own_write)
            if p.awaits_at_top:  # (the next iteration waits for its stage where it starts)
                d["waited"] = True
            elif d["wait"]["wgmma"] and not p.awaits_at_refill:
                self.out.line(self.ctx.dot_macros.await_stage(
                    d["wait"], "the next stage", d["next_stage"], d["next_parity"],
                    d["more"]).strip())
                d["waited"] = True

        self.after_first_fragments = copies if not d["roles"] else \
            None if p.releases else release
        at_top = p.copies_at_top and not d["roles"]
        if at_top:  # (passes.settle._at_top: the stage they refill is free there)
            self.after_first_fragments = None
        with self.out.same_last_statement():
            with self.out.captured() as d["body"]:
                if p.rotated:  # (settle takes them only with the copies at the top; before
                    # the copies, which advance the stream state past the iteration ahead)
                    self.rotated_loads(op, d["ahead"], f"{d['ahead']} {d['cmp']} {d['hi']}",
                                       first=False)
                if at_top:
                    self.issue_copies(op, d["ahead"], write,
                                      f"{d['ahead']} {d['cmp']} {d['hi']}", refill=True,
                                      own_stage=own_write)
                self.core.region(body)
                if self.after_first_fragments is not None:  # no mma read the stages first
                    self.after_first_fragments()
                    self.after_first_fragments = None
            with self.out.captured() as d["yields"]:
                keep = [i for i in range(len(op.results)) if i not in p.state]
                self.core.assign_yields([op.results[i] for i in keep],
                                        [body.yields[i] for i in keep])

    def overlapped_body(self, op: Op, d: dict) -> None:
        """An overlapped loop's parts (`Pipeline.overlapped`, `settle.overlap_parts`), as
        lines: the first block (`d["first"]`: its first product waited for, then the ops
        between and after the products, the accumulator set to the second product's
        operand), each later block (`d["body"]`: its first product and the previous
        block's second issued, the first waited for, the ops that do not read the
        accumulator under the second, then its wait, the previous stage released and
        the rest), and the last block's second product (`d["last"]`).  The second
        product's A (the previous block's values) is packed in pairs into `d["packed"]`
        once the product before retired, by an instruction the compiler keeps after that
        wait (`tc::cast_pair_ordered`: the conversion from fp32, where A is converted for
        the product alone; else `tc::pack2_ordered`): packed earlier, the registers the
        product still reads would be written under it (ptxas then serializes the
        products, C7513)."""
        p: Pipeline = op.attrs["pipeline"]
        body = op.regions[0]
        parts = overlap_parts(op)
        first, second = parts.first, parts.second
        a, b = second.operands[:2]
        stage, iv = d["stage"], d["iv"]
        previous = d["previous"] = self.names.fresh(f"{iv}_previous_stage")
        slot = body.args[1 + parts.carried]
        acc = self.names.name(slot)
        regs = slot.layout.regs
        arr, _, elems = self.pipe_tiles[b.id]
        skipped = self.core.skipped
        # A converted from fp32 for the product alone: the conversion is the packing
        cast = a.owner if a.owner is not None and pairs_cast(a.owner) and \
            self.ctx.uses.get(a.id, 0) == 1 else None
        if cast is not None:
            x = cast.operands[0]
            pack = (f"tc::cast_pair_ordered<{c_type(a.dtype)}>({self.exprs.text(x, 'r')},"
                    f"{INNER}{self.exprs.text(x, 'r + 1')})")
        else:
            pack = (f"tc::pack2_ordered({self.exprs.text(a, 'r')},{INNER}"
                    f"{self.exprs.text(a, 'r + 1')})")
        free = [o for o in parts.free if o is not cast]
        packed = d["packed"] = self.names.fresh(
            f"{self.names.name(a if cast is None else cast.operands[0])}_packed")
        d["packed_regs"] = a.layout.regs // 2

        def ops(subset: list) -> None:
            with self.core.filtered(only=frozenset(id(o) for o in subset), skipped=skipped):
                self.core.region(body)

        def second_product() -> None:
            self.core.comment_for(second)
            self.packed_a = packed
            try:
                self.wgmma_loop(second, second.attrs["plan"], acc, None,
                                f"({arr} + {previous} * {elems})")
            finally:
                self.packed_a = None

        def release(which: str = "the previous block's") -> None:
            self.out.line(f"__syncwarp();  // this warp's products of {which} stage retired")
            self.out.line(f"if (tc::lane_id() == 0){BODY}tc::mbarrier_arrive("
                          f"tc::smem_address({self.released} +{BREAK}{previous}));")

        def block(later: bool) -> None:
            self.out.line(self.ctx.dot_macros.await_stage(
                d["wait"], "this stage", stage, self.phase, None).strip())
            ops(parts.before)
            ops([first])
            if later:
                second_product()
                self.out.line("tc::wgmma_wait<1>();  // this block's product is back; the "
                              "previous block's runs on")
            else:
                self.out.line("tc::wgmma_wait<0>();  // the product is back in registers")
            self.pin(self.names.name(first.result), first.result.layout.regs)
            ops(free)
            if later:
                self.out.line("tc::wgmma_wait<0>();  // the previous block's product retired")
                self.pin(acc, regs)
                release()
            ops(parts.dependent)
            self.core.assign_yields([slot], [second.operands[2]])
            self.out.line("// the next product's A, packed once the product reading the "
                          "registers retired")
            self.out.line("#pragma unroll")
            self.out.line(f"for (int r = 0; r < {a.layout.regs}; r += 2){BODY}{packed}[r / 2] ="
                          f"{BREAK}{pack};")
            ops(parts.after)
            keep = [i for i in range(len(op.results)) if i not in p.state and i != parts.carried]
            self.core.assign_yields([op.results[i] for i in keep], [body.yields[i] for i in keep])

        self.issue_only = frozenset((id(first), id(second)))  # (the loop waits for them)
        try:
            with self.out.same_last_statement():
                with self.out.captured() as d["first"]:
                    block(later=False)
                with self.out.captured() as d["body"]:
                    block(later=True)
            with self.out.captured() as d["last"]:
                second_product()
                self.out.line("tc::wgmma_wait<0>();  // the last block's product retired")
                self.pin(acc, regs)
                release("the last block's")
        finally:
            self.issue_only = frozenset()
        # the first block's index, declared where its code (not a comment) reads it
        d["first_iv"] = any(re.search(rf"\b{re.escape(iv)}\b", line.split("//")[0])
                            for line in d["first"])

    def issue_copies(self, op: Op, iv_text: str, stage: str, guard: str,
                     refill: bool = False, own_stage: str | None = None) -> None:
        """The copies of one iteration (index `iv_text`) into `stage`, then the stream state
        advanced past it; skipped past the end of the loop.  Commits one group either way,
        so the waits can count groups (or, `Pipeline.arrivals`, has the copies arrive on
        the stage's mbarrier).  A `refill` of a stage the warps release
        (`Pipeline.releases`) first waits until every warp has: the stage written is the
        one the previous iteration read (distance num_stages - 1), released when that
        iteration ended, whose phase is this stage's, or the one before where this
        iteration's stage is the first (a barrier's first wait for the phase before its
        first passes at once: the first refill of the last stage)."""
        p: Pipeline = op.attrs["pipeline"]
        body = op.regions[0]
        with self.names.named_as(body.args[0], iv_text), \
                self.exprs.inlined(self.ahead_scalars(op)), self.out.captured() as lines:
            release = ""
            if refill and p.releases:  # (the copy engine's: its one thread waits)
                release = self.ctx.dot_macros.await_release(dict(
                    released=self.released, stage=stage, current=self.current_stage,
                    phase=self.phase)).strip()
                if not any(t is not None for t in p.tma):
                    self.out.line(release)
            if any(t is not None for t in p.tma):
                self.tma_copies(p, stage, release)
            for ld, copy, own in zip(p.loads, p.tma, p.own):
                if copy is None:
                    self.core.comment_for(ld)
                    self.copy_tile(ld, own_stage if own and own_stage else stage)
            if p.arrivals:
                self.out.line("// this thread's arrival on the stage's barrier, once they "
                              "have landed")
                self.out.line(f"tc::cp_async_arrive(tc::smem_address({self.barriers} + {stage}));")
            self.core.assign_yields([body.args[1 + i] for i in p.state],
                                    [body.yields[i] for i in p.state])
        groups = any(t is None for t in p.tma) and not p.arrivals
        self.out.line(self.ctx.dot_macros.issue_copies(guard, lines, groups))

    def ahead_scalars(self, op: Op) -> set[int]:
        """The scalars a pipeline's copies and its loads read ahead read (named in the
        body, where they are no longer written: passes.settle), to be written as
        expressions of the index of the iteration they are for."""
        p: Pipeline = op.attrs["pipeline"]
        return {o.results[0].id for o in op.regions[0].ops if id(o) in p.slice_ops
                and o.kind != "load" and o.results[0].id not in self.exprs.inline}

    def rotated_loads(self, op: Op, iv_text: str, guard: str, first: bool) -> None:
        """The loads a pipeline reads one iteration ahead into registers
        (`Pipeline.rotated`): before the loop (`first`) the registers of each, loaded for
        the first iteration; at the top of the body each value taken from them, then the
        next iteration's loaded into them (skipped past the end of the loop).  A load is
        written as it would be where it was, its index the iteration's (`iv_text`), into a
        variable of its own, then copied into the registers."""
        p: Pipeline = op.attrs["pipeline"]
        body = op.regions[0]
        for ld in p.rotated:
            x = ld.result
            ctype, name = self.exprs.ctype(x), self.names.name(x)
            regs = x.layout.regs if x.type.is_block else None
            if first:
                self.rotated[x.id] = self.names.fresh(f"{name}_next")
                self.out.line(f"// {x.name or 'a load'}: loaded one iteration ahead into "
                              "these registers")
                self.out.line(self.ctx.macros.declaration(
                    ctype, self.rotated[x.id], regs=regs, init=None if regs else "{}"))
                continue
            self.core.comment_for(ld)
            if regs is None:
                self.core.declare(x, self.rotated[x.id])
            else:
                self.core.declare(x)
                self.out.line(self.ctx.macros.register_loop(
                    regs, [f"{name}[r] = {self.rotated[x.id]}[r];"]))
        with self.names.named_as(body.args[0], iv_text), \
                self.exprs.inlined(self.ahead_scalars(op)), self.out.captured() as lines:
            for ld in p.rotated:
                x = ld.result
                loaded = self.names.fresh(f"{self.names.name(x)}_ahead")
                self.core.comment_for(ld)
                with self.names.named_as(x, loaded):
                    self.core.op_load(ld)
                nxt = self.rotated[x.id]
                self.out.line(f"{nxt} = {loaded};" if not x.type.is_block else
                              self.ctx.macros.register_loop(
                                  x.layout.regs, [f"{nxt}[r] = {loaded}[r];"]))
        self.out.line(self.ctx.dot_macros.issue_copies(guard, lines, False))

    def before_loop(self, v: Value, inside: set[int]) -> bool:
        """Whether `v`'s text reads only values defined before the loop (`inside`: those
        it defines)."""
        if v.id in self.exprs.inline and v.owner is not None:
            return all(self.before_loop(o, inside) for o in v.owner.operands)
        return v.id not in inside

    def whole_slabs(self, copy, row0: str, rows: int) -> str:
        """Whether a split copy's block, from row `row0`, lies in the tensor's whole slabs of
        rows (its one box), as C."""
        slab = rows_slab(copy.rows_split)
        return f"{row0} + {rows} <= {self.exprs.text(copy.rows)} / {slab} * {slab}"

    def zero_fill(self, ld: Op, copy, stages: int, threads: int) -> dict:
        """Where a split copy's block ends past the tensor's last whole slab, the places of
        its 8-row boxes wholly past the tensor's rows, zeroed in every stage before the loop
        (`TmaCopy.skip_past`: no copy writes there, and the product reads the zeros a
        copy would have brought): a warp a box, 16 bytes a lane a store."""
        x = ld.result
        arr, _, elems = self.pipe_tiles[x.id]
        dot, which = self.dot_use[x.id]
        rows, cols = x.type.shape
        box_rows, box_cols = copy.tail_box
        row0 = self.exprs.text(copy.corner[0])
        box_bytes = box_rows * box_cols * x.dtype.itemsize
        warp = self.ctx.target.warp_size
        boxes = stages * rows // box_rows * (cols // box_cols)
        return dict(arr=arr, elems=elems, name=x.name or "the operand", warps=threads // warp,
                    lanes=warp, whole=self.whole_slabs(copy, row0, rows),
                    past=f"{row0} + r >= {self.exprs.text(copy.rows)}", chunks=box_bytes // 16,
                    box_bytes=box_bytes, col_boxes=cols // box_cols,
                    row_boxes=rows // box_rows, box_rows=box_rows, box_cols=box_cols,
                    boxes=boxes,
                    offset=self.operand_offset(dot, which, "r", "col"))

    def split_boxes(self, copy, dot: Op, which: int, row0: str, col0: str,
                    past: str) -> list[dict]:
        """The copies of a block whose rows a split map copies in one box (`rows_split`),
        each its coordinates and where it lands: the slab dim's coordinate, the others 0,
        but for a dim taken by copies of their own (`specs.row_copies`), box j at j boxes
        along it (the slab dim's too: 128 rows on 4 warps through a map with a dim past
        the block's), landing where the block's row of its first place lies; `past`: the
        coordinates of the map's dims past the block's, as the copy's text ends."""
        slab = rows_slab(copy.rows_split)
        stepped = [d for d in copy.rows_split if row_copies(d) > 1]
        boxes = []
        for j in range(row_copies(stepped[0]) if stepped else 1):
            def coordinate(d: tuple[int, ...]) -> str:
                step = j * d[0] if row_copies(d) > 1 else 0
                if d[1] != slab:
                    return str(step)
                return f"{row0} / {slab}" + (f" + {step}" if step else "")
            at = ", ".join([f"{col0} + col"] + [coordinate(d) for d in copy.rows_split])
            first = str(j * stepped[0][0] * stepped[0][1]) if stepped else "0"
            boxes.append(dict(at=at + past,
                              offset=self.operand_offset(dot, which, first, "col")))
        return boxes

    def tma_copies(self, p: Pipeline, stage: str, release: str = "",
                   issuer: bool = True) -> None:
        """One thread's TMA copies of a stage (passes.pipeline.TmaCopy), after it told the
        stage's barrier how many bytes they bring (and, `release`, waited until every
        warp released the stage: Pipeline.releases); `issuer`: thread 0's, else the
        thread writing them (a producer's, passes.warp_roles)."""
        copies = []
        for ld, copy in zip(p.loads, p.tma):
            if copy is None:
                continue
            with self.out.captured() as comment:
                self.core.comment_for(ld)
            x = ld.result
            arr, _, elems = self.pipe_tiles[x.id]
            dot, which = self.dot_use[x.id]
            rows, cols = x.type.shape
            row0, col0 = (self.exprs.text(c) for c in copy.corner)
            # the copy engine's coordinates are the descriptor's, innermost first
            (box_rows, box_cols), at = copy.box, f"{col0} + col, {row0} + r"
            if copy.transposed:
                (box_cols, box_rows), at = copy.box, f"{col0} + r, {row0} + col"
            # the map's dims past the block's (a map of pointer blocks, a descriptor's unit
            # dims), one element each
            past = "".join(f", {self.exprs.text(c)}" for c in reversed(copy.outer))
            at += past
            split = None
            if copy.rows_split:  # all rows in one box: the slab dim's coordinate, the rest 0
                split = dict(
                    rank=1 + len(copy.rows_split) + len(copy.outer),
                    map=self.names.map_names[copy.key],
                    boxes=self.split_boxes(copy, dot, which, row0, col0, past),
                    whole=self.whole_slabs(copy, row0, rows),
                    skipped=None,
                    inside=f"{row0} + r < {self.exprs.text(copy.rows)}"
                    if id(copy) in self.zeroed else None,
                    dims="as " + " x ".join(str(d[0]) for d in copy.rows_split) + " (" +
                         ", ".join(str(d[1]) for d in copy.rows_split) + " rows apart)")
                box_rows = copy.tail_box[0]  # (the blocks past the whole slabs)
                if id(copy) in self.zeroed:  # the bytes of the boxes wholly past the rows
                    boxes = rows // box_rows  # (per 8 rows: a box of each column's)
                    nbytes = box_rows * cols * x.dtype.itemsize
                    split["skipped"] = dict(
                        name=self.names.fresh(f"{arr}_skipped", add=False),
                        bytes=f"{split['whole']} ? 0u :{BREAK}{nbytes}u * ({boxes} - "
                              f"tc::min<int>(tc::max<int>(({self.exprs.text(copy.rows)} - "
                              f"{row0} + {box_rows - 1}) / {box_rows}, 0), {boxes}))")
            copies.append(dict(split=split,
                comment=comment, base=self.names.fresh(f"{arr}_base", add=False), arr=arr,
                elems=elems, box=copy.box, rows=rows, cols=cols, box_rows=box_rows,
                box_cols=box_cols, esize=x.dtype.itemsize, at=at, rank=2 + len(copy.outer),
                map=self.names.map_names[copy.tail_key if split else copy.key],
                offset=self.operand_offset(dot, which, "r", "col"),
                what=", placed where each warp's wgmma reads those rows" if which == 0 else
                ", the block's transpose: B K-major" if copy.transposed else ""))
        self.out.line(self.ctx.dot_macros.tma_copies(dict(
            release=release, issuer=issuer,
            bar=self.names.fresh("landed", add=False), barriers=self.barriers, stage=stage,
            total=sum(t.nbytes for t in p.tma if t is not None), copies=copies)))

    def own_offset(self, vec: int, size: int) -> str:
        """Where a thread's vector `v` of a block read ahead lies in its stage, in units of
        `size` (bytes: a vector's; elements: `vec`): the warps' vectors side by side (a
        warp's 16-byte copies and reads fill every bank once per 512 bytes)."""
        threads = self.ctx.kernel.num_warps * self.ctx.target.warp_size
        return f"(v / {vec} * {threads} + threadIdx.x) * {size}"

    def read_back(self, op: Op) -> bool:
        """A load a pipeline read ahead (passes.pipeline.prologue_loads), where it was:
        this thread's vectors from the stage this iteration reads (the loop waited for
        its own copies of it); whether `op` is one."""
        x = op.result
        if x.id not in self.read_ahead:
            return False
        arr, stage, elems = self.read_ahead[x.id]
        plan = op.attrs["plan"]
        self.core.comment_for(op)
        self.core.declare(x)
        self.out.line(self.ctx.dot_macros.read_back(dict(
            name=self.names.name(x), arr=arr, stage=stage, elems=elems, regs=x.layout.regs,
            vec=plan.vec, ctype=c_type(x.dtype), at=self.own_offset(plan.vec, plan.vec))))
        return True

    def copy_tile(self, ld: Op, stage: str) -> None:
        """A thread's cp.async copies of its vectors of `ld`'s tile into `stage`."""
        x = ld.result
        plan = ld.attrs["plan"]
        layout = self.exprs.lname(x.layout)  # (layouts are numbered as first named)
        esize = x.dtype.itemsize
        arr, _, elems = self.pipe_tiles.get(x.id) or self.read_ahead[x.id]
        ptr = self.exprs.text(ld.operands[0], "v")
        mask = ld.operands[1] if len(ld.operands) > 1 else None
        prefix = mask is not None and plan.mask_mode == "prefix"
        nbytes = plan.vec * esize
        size = "in_bounds" if prefix else f"{self.exprs.wrap(mask, 'v', 4)} ? {nbytes} : 0" \
            if mask is not None else str(nbytes)
        at = self.vector_offsets.get(x.id) or self.own_offset(plan.vec, nbytes)
        self.out.line(self.ctx.dot_macros.cp_async_tile(dict(
            base=self.names.fresh(f"{arr}_base", add=False), arr=arr, stage=stage, elems=elems,
            regs=x.layout.regs, vec=plan.vec, layout=layout, esize=esize, nbytes=nbytes,
            at=at, ptr=ptr, size=size,
            lane_mask=self.exprs.wrap(mask, "v + k", 4) if prefix else "")))
