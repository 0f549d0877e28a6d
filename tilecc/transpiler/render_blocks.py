"""Rendering of the block operations that move data between threads: reductions,
layout changes (convert, reshape, permute, join, split, unstack, stack) and atomics.

Their writer (`BlockWriter`) also keeps the shared-memory pool.  Reductions go register →
warp (butterfly shuffles) → block (one shared-memory exchange, only when warps split the
reduced axis), leaving the result in the slice layout every thread of a row already agrees
on.  Layout changes go through shared memory.  Scans are written by `render_scan.Scans`,
which the BlockWriter owns.  Each step is written out in the kernel, commented, so a
reader can follow where the data goes.
"""

from __future__ import annotations

from math import gcd, prod
from typing import NamedTuple

from tilecc.transpiler.ir import Op, Region, Value
from tilecc.transpiler.line_breaks import BODY, BREAK, NOTE, SPACE, inner, joined, words
from tilecc.transpiler.passes.layouts import Placement, view_encoding
from tilecc.transpiler.passes.placement import Blocked
from tilecc.transpiler.passes.settle import tma_store_tile
from tilecc.transpiler.render_places import _packed_arrays, _reduced_register, _row_major
from tilecc.transpiler.render_scan import Scans
from tilecc.transpiler.render_writer import Writer
from tilecc.transpiler.render_expr import call
from tilecc.transpiler.target import c_type


class SharedMemory(NamedTuple):
    """What a rendered kernel takes of shared memory (render.render returns it with the
    source's other products: render.Rendered)."""
    dynamic: int  # bytes given at launch
    static: int  # `__shared__` arrays (the pool)
    uses: list[str]  # what takes it, one line each


# where the pool's second half starts: written as a placeholder, replaced by the byte
# offset once every step has been rendered and the largest is known (render.render)
POOL_B = "@pool_b@"


class BlockWriter(Writer):
    """Reductions, scans, layout changes and atomics, and the shared-memory pool their
    steps (and other families': reorders, tl.dot's staged operands) take turns in.  Its
    state, written only here: the pool's first half's size (the largest step there), its
    second half's, and the half the last step used (see pool_step)."""

    def __init__(self, renderer):
        super().__init__(renderer)
        self.smem_bytes = 0
        self.pool_b_bytes = 0
        # None (none yet), "A", "B", or "?" (a step in a loop or branch: not known which
        # ran last)
        self.pool_prev: str | None = None
        self.scans = Scans(self)  # tl.cumsum and other scans: in registers, or in the pool

    def finish_pool(self, body: list[str]) -> list[str]:
        """`body` with the second half's place written in, once every step is rendered and
        the first half's size is known; the pool, both halves."""
        if not self.pool_b_bytes:
            return body
        body = [line.replace(POOL_B, str(self.smem_bytes)) for line in body]
        self.smem_bytes += self.pool_b_bytes  # the second half after the first
        return body

    def use_smem(self, nbytes: int) -> None:
        self.smem_bytes = max(self.smem_bytes, (nbytes + 15) // 16 * 16)

    def shared_memory_declarations(self) -> tuple[list[str], SharedMemory]:
        """The kernel's shared memory, declared (lines to put first in its body), once
        every step is rendered: the pool (`smem`) and the dynamic part (`dynamic_smem`,
        tl.dot's tiles); and the sizes and what takes them.  CUDA's static `__shared__`
        arrays stop at 48 KiB: a larger pool goes into dynamic shared memory, after the
        tl.dot tiles."""
        kernel, pool_bytes = self.ctx.kernel, self.smem_bytes
        pool_at, pipe_smem = None, self.ctx.pipe_smem
        limit = self.ctx.target.static_shared_limit
        if limit is not None and pool_bytes > limit:
            pool_at = -(-pipe_smem // 1024) * 1024
        dynamic = pipe_smem if pool_at is None else pool_at + pool_bytes
        # ptxas pads the static arrays to the dynamic array's alignment (1024 bytes)
        static = 0 if pool_at is not None else pool_bytes if not dynamic else \
            -(-pool_bytes // 1024) * 1024
        sizes = SharedMemory(dynamic, static, list(self.ctx.shared_uses) + (
            [f"the pool for reductions, scans, layout conversions and tl.dot operands staged "
             f"from registers: {pool_bytes} bytes"] if pool_bytes else []))
        pool, dynamic_decl = [], []
        if pool_bytes:
            half = pool_bytes - self.pool_b_bytes
            reuse = "reused step by step" + \
                (f"; consecutive steps alternate at byte {half}" if self.pool_b_bytes else "")
            pool = [words(f"  // shared memory for reductions, scans and layout conversions "
                          f"({pool_bytes} bytes, {reuse})")]
            if pool_at is None:
                align = 1024 if kernel.arch_specific else 16  # wgmma's swizzle atoms: 1024 B
                pool.append(f"  __shared__ unsigned char smem[{pool_bytes}] "
                            f"__attribute__((aligned({align})));")
            else:
                at = f" + {pool_at}" if pool_at else ""
                pool.append(f"  unsigned char* const smem = dynamic_smem{at};{NOTE}// more than "
                            "static arrays may take (48 KiB)")
        if dynamic:
            what = "the tl.dot pipeline stages" if pool_at is None else \
                "the tl.dot tiles, then the pool" if pipe_smem else "the pool"
            if tma_store_tile(kernel) is not None:
                what += " and the tile of the copy engine's stores"
            dynamic_decl = [words(f"  // dynamic shared memory: {what} ({dynamic} bytes, given "
                                  "at launch)"),
                            "  extern __shared__ __align__(1024) unsigned char dynamic_smem[];"]
        return (pool + dynamic_decl if pool_at is None else dynamic_decl + pool), sizes

    def pool_step(self, nbytes: int, alternate: bool = True) -> str:
        """Start a step that writes `nbytes` of the shared-memory pool, then (after its own
        barrier) reads them; returns the base of its region.  An earlier step may still be
        reading the pool, so a step waits for it first — except where that cannot be:
        the pool's first use outside loops, and consecutive steps of the kernel's straight-
        line code, which alternate between the pool's two halves (a thread that reaches a
        step has passed the barrier inside the one before, so every thread has finished
        reading what the step before that wrote).  Inside loops and branches (and for
        tl.dot's tiles, `alternate=False`) steps use the first half and always wait, and
        the alternation starts again after them; so do steps too large for two halves to
        fit the target's shared memory (two block-sized reorders, one after the other)."""
        straight = not self.core.loop_depth and not self.core.branch_depth
        if straight and alternate and self.pool_prev != "?" and self._halves_fit(nbytes):
            region = "B" if self.pool_prev == "A" else "A"
        else:
            if self.pool_prev is not None or self.core.loop_depth:
                self.out.line(
                    "__syncthreads();  // the buffer may still be read by an earlier step")
            region = "A"
        self.pool_prev = region if straight else "?"
        if region == "A":
            self.use_smem(nbytes)
            return "smem"
        self.pool_b_bytes = max(self.pool_b_bytes, (nbytes + 15) // 16 * 16)
        return f"smem + {POOL_B}"

    def pool_room(self) -> int:
        """Bytes a step of the pool may take beside tl.dot's tiles."""
        return self.ctx.target.shared_memory_limit - -(-self.ctx.pipe_smem // 1024) * 1024

    def _halves_fit(self, nbytes: int) -> bool:
        """The pool's two halves, with a step of `nbytes` in either, fit the target's
        shared memory beside tl.dot's tiles."""
        size = (nbytes + 15) // 16 * 16
        a, b = max(self.smem_bytes, size), max(self.pool_b_bytes, size)
        return -(-self.ctx.pipe_smem // 1024) * 1024 + a + b <= self.ctx.target.shared_memory_limit

    def smem_view(self, v: Value, name: str, offset_elems: int = 0) -> str:
        t = c_type(v.dtype)
        off = f" + {offset_elems}" if offset_elems else ""
        self.out.line(f"{t}* {name} = reinterpret_cast<{t}*>(smem){off};")
        return name

    def linear(self, p: Placement, idx: str, strides: list[int]) -> str:
        """Row-major position of register `idx`'s element, by the placement's coordinates."""
        terms = []
        for i, stride in enumerate(strides):
            if p.shape[i] == 1:
                continue
            c = f"{self.exprs.lname(p)}::coord{i}({idx})"
            terms.append(c if stride == 1 else f"{c} * {stride}")
        return inner(f" +{SPACE}".join(terms)) or "0"  # an index: inside brackets

    def slot(self, v: Value, idx: str) -> str:
        return f"{self.names.name(v)}[{idx}]" if v.type.is_block else self.names.name(v)

    def combine_lambda(self, region: Region, n: int, name: str = "combine") -> None:
        """The combine function as a C++ lambda: `combine(a, b)` returning the combined
        value, or, for several values, `combine(a0, .., b0, .., out0, ..)`."""
        with self.names.own_names():
            with self.out.lambda_body() as body:
                self.core.region(region)
                if n == 1:
                    ret = f"return {self.exprs.text(region.yields[0])};"
                else:
                    ret = " ".join(f"out{i} = {self.exprs.text(y)};"
                                   for i, y in enumerate(region.yields))
            params = [f"{c_type(a.dtype)} {self.names.name(a)}" for a in region.args]
        if n > 1:
            params += [f"{c_type(a.dtype)}& out{i}" for i, a in enumerate(region.args[:n])]
        head = f"auto {name} = []({joined(params, ', ')}) {{"
        if not body:
            self.out.line(f"{head} {ret} }};")
        else:
            self.out.line(head)
            self.out.extend(body)
            self.out.line(f"  {ret}")
            self.out.line("};")

    def combine_call(self, accs: list[str], others: list[str], name: str = "combine") -> str:
        if len(accs) == 1:
            return f"{accs[0]} ={BREAK}{name}({accs[0]},{SPACE}{others[0]});"
        return f"{name}({joined(accs + others + accs, ', ')});"

    # --- reductions ------------------------------------------------------------------------------
    def op_reduce(self, op: Op) -> None:
        xs, results, axis = op.operands, op.results, op.attrs["axis"]
        # every result is written with the first one's layout (the layout pass derives
        # them alike from the operands')
        assert all(r.layout == results[0].layout for r in results[1:]), \
            "reduce: results placed apart"
        src: Placement = xs[0].layout
        e = src.kept[axis]
        dst = results[0].layout if results[0].type.is_block else None
        n_out = dst.regs if dst is not None else 1
        warps = src.unique_warps(e)
        used = [self.ctx.uses.get(res.id, 0) > 0 for res in results]
        for res, u in zip(results, used):
            if u:
                self.core.declare(res)
        j_count = min(src.reg_sizes[e], src.full[e])

        def reg(s: str, j: str) -> str:
            return _reduced_register(src, e, dst, s, j)

        with self.out.captured() as head:
            for res, u in zip(results, used):
                if not u and warps > 1:  # not read later, but the warps exchange it
                    self.core.declare(res)
            self.combine_lambda(op.regions[0], len(xs))
            # a thread's own elements, folded in order: the combine for elements in order
            # where the reduction has one (builtins_blocks.reduce_blocks)
            in_order = "combine_in_order" if len(op.regions) > 1 and j_count > 1 else "combine"
            if in_order != "combine":
                self.combine_lambda(op.regions[1], len(xs), in_order)
        types = [c_type(x.dtype) for x in xs]
        accs = ["acc"] if len(xs) == 1 else [f"acc{i}" for i in range(len(xs))]
        lanes, lstride = src.unique_lanes(e), src.lstride(e)
        # A loop that would run once (one output register, two elements, two lanes)
        # is written as its body.
        o = "o" if n_out > 1 else "0"
        inits = [f"{t} {acc} ={BREAK}{self.exprs.text(x, reg(o, '0'))};"
                 for t, acc, x in zip(types, accs, xs)]
        combine = []
        if j_count == 2:
            combine = [self.combine_call(accs, [self.exprs.text(x, reg(o, "1")) for x in xs],
                                         in_order)]
        elif j_count > 2:
            others = [self.exprs.text(x, reg(o, "j")) for x in xs]
            loop = f"for (int j = 1; j < {j_count}; ++j)"
            combine = ["#pragma unroll",
                       f"{loop}{BODY}{self.combine_call(accs, others, in_order)}"]
        with self.out.captured() as shuffle:
            if lanes > 1:
                self.shuffle_steps(accs, types, lstride, lanes)
        stores = [f"{self.slot(res, o)} = {acc};"
                  for res, acc, u in zip(results, accs, used) if u or warps > 1]
        with self.out.captured() as cross:
            if warps > 1:
                self.cross_warp(op, src, e, dst, results, accs, types, warps, used)
        self.out.line(self.ctx.block_macros.reduce(dict(
            head=head, lanes=lanes, n_out=n_out, inits=inits, combine=combine,
            shuffle=shuffle, stores=stores, cross=cross,
            what=f"axis {axis} of a {' x '.join(map(str, xs[0].type.shape))} block",
            first=(f"in registers: each thread combines its {j_count} elements"
                   if j_count > 1 else "each thread holds one element"))))

    def shuffle_steps(self, accs: list[str], types: list[str], lstride: int, lanes: int) -> None:
        """Combines `accs` across `lanes` lanes `lstride` apart by butterfly shuffles."""
        once = lanes == 2
        mask = str(lstride) if once else "lane_mask"
        shuffled = [f"tc::shfl_xor({a}, {mask})" for a in accs]
        head = (f"for (int lane_mask = {lstride}; lane_mask < {lstride * lanes}; "
                "lane_mask <<= 1)")
        if len(accs) == 1:
            step = self.combine_call(accs, shuffled)
            if once:
                self.out.line(step)
            else:
                self.out.line("#pragma unroll")
                self.out.line(f"{head}{BODY}{step}")
            return
        with self.out.block_if(not once, f"#pragma unroll\n{head} {{"):
            others = [f"{a}_other" for a in accs]
            for t, o, sh in zip(types, others, shuffled):
                self.out.line(f"const {t} {o} = {sh};")
            self.out.line(self.combine_call(accs, others))

    def cross_warp(self, op, src, e, dst, results, accs, types, warps, used) -> None:
        wpc = src.base.wpc[e]
        slots = prod(results[0].type.shape) if dst is not None else 1
        self.out.line(f"// 3. across the {warps} warps that split the axis: through shared memory")
        offsets, total = _packed_arrays([(slots * wpc, res.dtype.itemsize) for res in results])
        base = self.pool_step(total)
        for k, res in enumerate(results):
            t = c_type(res.dtype)
            off = f" + {offsets[k]}" if offsets[k] else ""
            self.out.line(f"{t}* partial{k} = reinterpret_cast<{t}*>({base}{off});")
        n_out = dst.regs if dst is not None else 1
        # One output register: no loops, and the accumulators of step 1 are still in scope.
        o = "o" if n_out > 1 else "0"
        # each warp's partial results side by side, in the results' order: the lanes of a
        # warp write and read neighbouring slots (slot-major, the warps' values of one slot
        # side by side, put lanes holding slots 8 apart on one bank: a 16-way conflict)
        slot = self.linear(dst, o, _row_major(dst.shape)) if dst is not None else "0"
        slot = f"({slot})" if " " in slot else slot

        def at(w: str) -> str:  # warp w's entry of the slot (w: an index or an expression)
            if slot == "0":
                return w
            if w == "0":
                return slot
            return f"{w if w.isalnum() else f'({w})'} * {slots} + {slot}"

        writes = [f"partial{k}[{at(src.warp_along(e))}] ={BREAK}{self.slot(res, o)};"
                  for k, res in enumerate(results)]
        if n_out > 1:
            with self.out.block(f"#pragma unroll\nfor (int o = 0; o < {n_out}; ++o) {{"):
                for write in writes:
                    self.out.line(write)
        else:
            for write in writes:
                self.out.line(write)
        self.out.line("__syncthreads();")
        with self.out.block_if(n_out > 1, f"#pragma unroll\nfor (int o = 0; o < {n_out}; ++o) {{"):
            for k, (t, acc) in enumerate(zip(types, accs)):
                decl = f"{t} {acc}" if n_out > 1 else acc
                self.out.line(f"{decl} ={BREAK}partial{k}[{at('0')}];")
            if warps == 2:
                self.out.line(self.combine_call(accs, [f"partial{k}[{at('1')}]"
                                                       for k in range(len(results))]))
            else:
                others = [f"partial{k}[{at('warp')}]" for k in range(len(results))]
                self.out.line("#pragma unroll")
                self.out.line(f"for (int warp = 1; warp < {warps}; ++warp){BODY}"
                              f"{self.combine_call(accs, others)}")
            for res, acc, u in zip(results, accs, used):
                if u:
                    self.out.line(f"{self.slot(res, o)} = {acc};")

    # --- scans (render_scan.Scans) --------------------------------------------------------
    def op_scan(self, op: Op) -> None:
        self.scans.write(op)

    # --- layout changes through shared memory -------------------------------------------------
    def exchange(self, op: Op, writes: list[tuple[Value, str]],
                 reads: list[tuple[Value, str]], why: str, runs: tuple[int, int] = (1, 1),
                 tiles: bool = False, fragments: bool = False,
                 elements: int | None = None, read_fragments: bool = False) -> None:
        """Each thread writes its registers of `writes` at the given positions; after a
        barrier each reads `reads`' registers from theirs.  `runs`: consecutive registers
        written / read as one vector (positions are then those of each run's first);
        `tiles`: in the tl.dot tiles' dynamic shared memory, every loop reading them done;
        `fragments`: the writes are `stmatrix`'s, eight registers at a time (positions:
        `fragment_rows`); `read_fragments`: the reads are `ldmatrix`'s, alike; `elements`: the buffer's size, where the positions leave gaps
        (padded rows: `_padded_rows`), else the writes' elements."""
        for res, _ in reads:
            self.core.declare(res)
        count = elements or sum(prod(v.type.shape) for v, _ in writes)
        with self.out.captured() as wait:
            if tiles:
                self.out.line("__syncthreads();  // every thread is done with the tl.dot tiles")
                base = "dynamic_smem"
            else:  # (in the first half, behind a barrier: where the products' tiles were)
                base = self.pool_step(count * writes[0][0].dtype.itemsize,
                                      alternate=not op.attrs.get("pool_first_half"))
        self.out.line(self.ctx.block_macros.exchange(dict(
            comment=f"{why}: through shared memory" + (" (the tl.dot tiles')" if tiles else ""),
            wait=wait, base=base, ctype=c_type(writes[0][0].dtype),
            writes=[dict(regs=v.layout.regs, pos=pos, run=runs[0],
                         value=self.exprs.text(v, "r + k" if runs[0] > 1 else "r"),
                         pairs=self.fragment_pairs(v) if fragments else None)
                    for v, pos in writes],
            reads=[dict(regs=v.layout.regs, pos=pos, name=self.names.name(v), run=runs[1],
                        fragments=read_fragments) for v, pos in reads],
            after="__syncthreads();  // read by every thread: the tiles can be refilled"
            if tiles and op.attrs.get("tiles_again") else "")))

    def tma_store(self, op: Op, threads: list[str]) -> None:
        """A store the copy engine writes (passes.settle.TmaStore): the block into its tile,
        128-byte rows swizzled by row (`tc::swizzled_chunk`, as TMA's 128-byte swizzle
        places 16-byte chunks), then one thread's copies of each box at the corner — where
        the corner lies inside the tensor; elsewhere `threads`, the threads' own store."""
        t, x = op.attrs["tma_store"], op.operands[1]
        rows, cols = x.type.shape
        box_cols, per_chunk = t.map.box[-1], 16 // x.dtype.itemsize
        layout = x.layout
        run = layout.vec if layout.fast_axis == 1 else 1
        while per_chunk % run:
            run //= 2
        pairs = None
        if self.by_stmatrix(x):  # (`pos` of a row's first element, in chunks of a box)
            chunks = box_cols // per_chunk

            def place(row: str, chunk: str) -> str:
                swizzled = call("tc::swizzled_chunk<8>", row, f"{chunk} % {chunks}")
                return inner(f"{chunk} / {chunks} * {rows * box_cols} +{SPACE}{swizzled} * 8")
            pos, pairs = self.fragment_rows(x, place), self.fragment_pairs(x)
        else:
            name = self.exprs.lname(layout)
            row, col = f"{name}::coord0(r)", f"{name}::coord1(r)"
            chunk = call("tc::swizzled_chunk<8>", row, f"{col} % {box_cols} / {per_chunk}")
            pos = inner(f"{col} / {box_cols} * {rows * box_cols} +{SPACE}{chunk} * "
                        f"{per_chunk} +{SPACE}{col} % {per_chunk}")
        row0, col0 = (self.exprs.text(c) for c in t.corner)
        outer = [self.exprs.text(c) for c in t.outer]
        inside = f" &&{SPACE}".join(f"{c} >= 0 && {c} < {self.exprs.text(n)}" for c, n in zip(
            outer + [row0, col0], t.outer_bounds + t.bounds))
        self.out.line(self.ctx.block_macros.tma_store(dict(
            inside=inside, threads="\n".join(threads),
            comment=f"through shared memory, then the copy engine (TMA): {rows} x {box_cols} "
                    f"boxes of {x.dtype.short}, 128-byte swizzled",
            ctype=c_type(x.dtype), offset=t.buffer.offset, regs=layout.regs, run=run,
            value=self.exprs.text(x, "r + k" if run > 1 else "r"), pos=pos, pairs=pairs,
            cols=cols,
            inner=box_cols, rows=rows, map=self.names.map_names[t.map.key], row=row0,
            col=col0, rank=2 + len(outer), outer="".join(f", {c}" for c in reversed(outer)))))

    def op_convert(self, op: Op) -> None:
        x, y = op.operands[0], op.result
        tiles = bool(op.attrs.get("reuse_tiles"))
        runs = _swizzled_runs(x, y)
        if runs is None:
            same = tuple(range(len(x.type.shape)))
            strides = _row_major(x.type.shape) if tiles else _padded_rows(
                x.type.shape, [(x.layout, same), (y.layout, same)], x.dtype.itemsize,
                self.ctx.target.warp_size, self.pool_room())
            self.exchange(op, [(x, self.linear(x.layout, "r", strides))],
                          [(y, self.linear(y.layout, "r", strides))], "layout conversion",
                          tiles=tiles, elements=strides[0] * x.type.shape[0])
            return
        if self.by_stmatrix(x):
            def place(row: str, chunk: str) -> str:
                return inner(call(f"tc::swizzled_chunk<{x.type.shape[1] // 8}>", row, chunk) +
                             " * 8")
            self.exchange(op, [(x, self.fragment_rows(x, place))],
                          [(y, self.swizzled(y, "r"))],
                          "layout conversion, in 16-byte chunks swizzled by row (stmatrix)",
                          (8, runs[1]), tiles, fragments=True)
            return
        if self.by_ldmatrix(y):
            def place(row: str, chunk: str) -> str:
                return inner(call(f"tc::swizzled_chunk<{y.type.shape[1] // 8}>", row, chunk) +
                             " * 8")
            self.exchange(op, [(x, self.swizzled(x, "r"))], [(y, self.fragment_rows(y, place))],
                          "layout conversion, in 16-byte chunks swizzled by row (ldmatrix)",
                          (runs[0], 8), tiles, read_fragments=True)
            return
        self.exchange(op, [(x, self.swizzled(x, "r"))], [(y, self.swizzled(y, "r"))],
                      "layout conversion, in 16-byte chunks swizzled by row", runs, tiles)

    def by_stmatrix(self, v: Value) -> bool:
        """Whether `v`'s registers go to shared memory as `stmatrix`'s 8 x 8 blocks:
        16-bit floats whose pairs are fragments (`Placement.matrix_fragments`: the
        tensor-core accumulators) on a target that has the instruction (sm_90): one
        16-byte store a lane per four pairs, where pairs take one 4-byte store each and
        each its own swizzled address."""
        return v.dtype.short in ("fp16", "bf16") and self.ctx.target.has_stmatrix and \
            v.layout.matrix_fragments

    def by_ldmatrix(self, v: Value) -> bool:
        """Whether `v`'s registers are read from shared memory as `ldmatrix`'s 8 x 8
        blocks: `by_stmatrix`'s fragments the other way, on any target with the
        instruction (sm_75 and later)."""
        return v.dtype.short in ("fp16", "bf16") and self.ctx.target.has_ldmatrix and \
            v.layout.matrix_fragments

    def fragment_pairs(self, v: Value) -> list[str]:
        """The four registers `stmatrix` stores from registers r ... r + 7 of `v`."""
        return [call("tc::pack2", self.exprs.text(v, f"r + {2 * k}"),
                     self.exprs.text(v, f"r + {2 * k + 1}")) for k in range(4)]

    def fragment_rows(self, v: Value, place) -> str:
        """Where this lane's row of an 8 x 8 block of `v` lies, as `stmatrix` writes
        registers r ... r + 7: lane i gives row i % 8 of the block of registers (j, j + 1),
        j = r + 2 (i / 8) (the template declares j), whose row in this lane is coord0(j) -
        lane / 4 and whose 16-byte chunk is coord1(j) / 8.  `place(row, chunk)`: the
        position of a chunk's first element."""
        name = self.exprs.lname(v.layout)
        return place(f"{name}::coord0(j) -{SPACE}tc::lane_id() / 4 +{SPACE}tc::lane_id() % 8",
                     f"{name}::coord1(j) / 8")

    def swizzled(self, v: Value, idx: str, axis: int = 0) -> str:
        """Where register `idx` of a 2-D block lies in its row-major copy whose rows' 16-byte
        chunks are permuted by row (`tc::swizzled_chunk`): the rows a warp writes or reads
        together fall in different banks.  `axis`: that of the rows, the columns' the next
        (a 3-D block's batches: the one before, each batch's copy after the last's)."""
        per_chunk = 16 // v.dtype.itemsize
        name = self.exprs.lname(v.layout)
        row, col = f"{name}::coord{axis}({idx})", f"{name}::coord{axis + 1}({idx})"
        rows, width = v.type.shape[axis:axis + 2]
        chunk = call(f"tc::swizzled_chunk<{width // per_chunk}>", row, f"{col} / {per_chunk}")
        batch = f"{name}::coord{axis - 1}({idx}) * {rows * width} +{SPACE}" if axis else ""
        return inner(f"{batch}{chunk} * {per_chunk} +{SPACE}{col} % {per_chunk}")

    def op_reshape(self, op: Op) -> None:
        x, y = op.operands[0], op.result
        if self.in_registers(op, f"reshape {list(x.type.shape)} -> {list(y.type.shape)}"):
            return
        self.exchange(op, [(x, self.linear(x.layout, "r", _row_major(x.type.shape)))],
                      [(y, self.linear(y.layout, "r", _row_major(y.type.shape)))],
                      f"reshape {list(x.type.shape)} -> {list(y.type.shape)} (row-major order)")

    def in_registers(self, op: Op, what: str) -> bool:
        """Write a permute, join, split or reshape whose result holds the source's elements
        in the same threads (passes.layouts.view_encoding) as register copies; whether it
        is one."""
        x = op.operands[0]
        # (a split's two results may be placed apart: each must hold its half in place)
        if not isinstance(x.layout.enc, Blocked) or any(
                v.layout != x.layout for v in op.operands[1:]) or any(
                y.layout.enc != view_encoding(op, x.layout.enc) for y in op.results):
            return False
        for y in op.results:
            self.core.declare(y)
        self.out.line(f"// {what}: in registers (every thread keeps its elements)")
        if op.kind == "join":
            a, b = (self.exprs.text(v, "r") for v in op.operands)
            name = self.names.name(op.result)
            lines = [f"{name}[2 * r] = {a};", f"{name}[2 * r + 1] = {b};"]
        elif op.kind == "split":
            lines = [f"{self.names.name(y)}[r] = {self.exprs.text(x, f'2 * r + {h}')};"
                     for h, y in enumerate(op.results)]
        elif op.kind == "unstack":  # batch i: the source's registers i R ... i R + R - 1
            each = op.results[0].layout.regs
            lines = [f"{self.names.name(y)}[r] = {self.exprs.text(x, f'{i * each} + r')};"
                     for i, y in enumerate(op.results)]
        elif op.kind == "stack":
            name = self.names.name(op.result)
            lines = [f"{name}[{i * x.layout.regs} + r] = {self.exprs.text(v, 'r')};"
                     for i, v in enumerate(op.operands)]
        else:
            lines = [f"{self.names.name(op.result)}[r] = {self.exprs.text(x, 'r')};"]
        regs = op.results[0].layout.regs if op.kind in ("split", "unstack") else x.layout.regs
        self.out.line(self.ctx.macros.register_loop(regs, lines))
        return True

    def op_permute(self, op: Op) -> None:
        x, y, order = op.operands[0], op.result, op.attrs["order"]
        if self.in_registers(op, f"permute axes to {list(order)}"):
            return
        src_strides = _padded_rows(x.type.shape, [(x.layout, tuple(range(len(order)))),
                                                  (y.layout, tuple(order))],
                                   x.dtype.itemsize, self.ctx.target.warp_size,
                                   self.pool_room())
        self.exchange(op, [(x, self.linear(x.layout, "r", src_strides))],
                      [(y, self.linear(y.layout, "r", [src_strides[o] for o in order]))],
                      f"permute axes to {list(order)}",
                      elements=src_strides[0] * x.type.shape[0])

    def op_join(self, op: Op) -> None:
        a, b = op.operands
        if self.in_registers(op, "join along a new last axis"):
            return
        strides = [2 * s for s in _row_major(a.type.shape)]
        self.exchange(op, [(a, self.linear(a.layout, "r", strides)),
                           (b, self.linear(b.layout, "r", strides) + " + 1")],
                      [(op.result, self.linear(op.result.layout, "r",
                                               _row_major(op.result.type.shape)))],
                      "join along a new last axis")

    def op_split(self, op: Op) -> None:
        x = op.operands[0]
        if self.in_registers(op, "split the last axis"):
            return
        out = op.results
        strides = [2 * s for s in _row_major(out[0].type.shape)]
        self.exchange(op, [(x, self.linear(x.layout, "r", _row_major(x.type.shape)))],
                      [(out[0], self.linear(out[0].layout, "r", strides)),
                       (out[1], self.linear(out[1].layout, "r", strides) + " + 1")],
                      "split the last axis")

    def op_unstack(self, op: Op) -> None:
        what = "the batches taken apart (axis 0)"
        if not self.in_registers(op, what):
            self.batch_exchange(op, op.operands[0], op.results, False, what)

    def op_stack(self, op: Op) -> None:
        what = "the batches stacked (axis 0)"
        if not self.in_registers(op, what):
            self.batch_exchange(op, op.result, op.operands, True, what)

    def batch_exchange(self, op: Op, whole: Value, parts: list[Value], stacking: bool,
                       what: str) -> None:
        """An unstack or stack through shared memory: batch i's copy after batch i - 1's,
        2-D batches in rows swizzled by 16-byte chunk (`swizzled`) where their vectors
        allow (`_swizzled_runs`: a product's accumulator pairs written 8 bytes at a time
        into rows of 32 words would all meet in a few banks)."""
        size = prod(whole.type.shape[1:])
        runs = _swizzled_runs(parts[0], whole, 1) if len(whole.type.shape) == 3 else None
        if runs is not None:
            whole_at, part_at = self.swizzled(whole, "r", 1), [
                self.swizzled(x, "r") + (f" + {i * size}" if i else "")
                for i, x in enumerate(parts)]
            what += ", in 16-byte chunks swizzled by row"
        else:
            runs = (1, 1)
            whole_at = self.linear(whole.layout, "r", _row_major(whole.type.shape))
            part_at = [self.linear(x.layout, "r", _row_major(x.type.shape)) +
                       (f" + {i * size}" if i else "") for i, x in enumerate(parts)]
        sides = [list(zip(parts, part_at)), [(whole, whole_at)]]
        if not stacking:
            sides.reverse()
            runs = runs[::-1]
        self.exchange(op, sides[0], sides[1], what, runs)

    # --- atomics and barriers -------------------------------------------------------------
    @staticmethod
    def atomic_scope(op: Op) -> str:
        """The template argument of scope="sys" / "cta" (none: device-wide, scope="gpu")."""
        return {"sys": "<tc::kSystem>", "cta": "<tc::kCta>"}.get(op.attrs["scope"], "")

    def atomic_call(self, op: Op, idx: str) -> str:
        args = [self.exprs.text(x, idx) for x in op.operands[:3 if op.kind == "atomic_cas" else 2]]
        what = "cas" if op.kind == "atomic_cas" else op.attrs["op"]
        return call(f"tc::atomic_{what}{self.atomic_scope(op)}", *args)

    def op_atomic(self, op: Op) -> None:
        res = op.result
        used = self.ctx.uses.get(res.id, 0) > 0
        mask = op.operands[2] if op.kind == "atomic" and len(op.operands) > 2 else None
        sem = op.attrs["sem"]
        a = dict(release="true" if sem in ("release", "acq_rel") else "false",
                 acquire="true" if sem in ("acquire", "acq_rel") else "false", used=used,
                 before=f"tc::fence_before{self.atomic_scope(op)}",
                 after=f"tc::fence_after{self.atomic_scope(op)}")
        if used:
            self.core.declare(res)
        if not res.type.is_block:
            a["guard"] = "threadIdx.x == 0" + (f" && {self.exprs.text(mask)}" if mask is not None
                                               else "")
            with self.out.captured() as a["wait"]:
                a["base"] = self.pool_step(res.dtype.itemsize) if used else ""
            a.update(ctype=c_type(res.dtype), call=self.atomic_call(op, "r"),
                     name=self.names.name(res) if used else "")
            self.out.line(self.ctx.block_macros.scalar_atomic(a))
            return
        p: Placement = res.layout
        # an element held in several registers, lanes or warps is updated once, by its
        # owning copy; the others then take the owner's result (below)
        conds = [c for c in (f"{self.exprs.lname(p)}::owner()" if p.owner_expr() != "true" else "",
                             f"(r & {p.reg_owner_mask}) == r" if p.replicated_registers else "",
                             self.exprs.text(mask, "r") if mask is not None else "") if c]
        step = op.attrs["plan"].vec if "plan" in op.attrs else 1
        if step > 1:  # packed 16-bit adds (passes.layouts._atomic_plan)
            conds = [c for c in (f"{self.exprs.lname(p)}::owner()" if p.owner_expr() != "true"
                                 else "", self.exprs.text(mask, "v") if mask is not None else "")
                     if c]
            stmt = self.packed_atomic(op, res, step, used)
        else:
            update = self.atomic_call(op, "r")
            stmt = f"{self.names.name(res)}[r] ={BREAK}{update};" if used else f"{update};"
        if conds:
            stmt = f"if ({joined(conds, ' && ')}){BODY}{stmt}"
        self.out.line(self.ctx.block_macros.block_atomic(dict(a, regs=p.regs, stmt=stmt,
                                                              step=step)))
        if used and p.replicated:
            self.broadcast_from_owners(res)

    def packed_atomic(self, op: Op, res: Value, step: int, used: bool) -> str:
        """`step` consecutive adds of a thread in one instruction: a 16-bit pair whose old
        values are read, else a 16-bit pair or a vector reduction (16-bit or fp32)."""
        ptr, val = op.operands[0], op.operands[1]
        vals = [self.exprs.text(val, f"v + {k}" if k else "v") for k in range(step)]
        scope, name, at = self.atomic_scope(op), self.names.name(res), self.exprs.text(ptr, "v")
        if used:  # pairs only
            return call(f"tc::atomic_add_pair{scope}", f"{name}[v]", f"{name}[v + 1]", at,
                        *vals) + ";"
        if step == 2 and val.dtype.itemsize == 2:
            return call(f"tc::reduce_add_pair{scope}", at, *vals) + ";"
        packed = f"tc::Vec<{c_type(val.dtype)}, {step}>{{{{{', '.join(vals)}}}}}"
        return call(f"tc::reduce_add_vec{scope}", at, packed) + ";"

    def broadcast_from_owners(self, v: Value) -> None:
        """Every copy of each element of `v` takes the value its owning copy holds: from
        the owning register of this thread, by a shuffle from the owning lane when all
        copies are in one warp, else through shared memory."""
        p: Placement = v.layout
        name, t = self.names.name(v), c_type(v.dtype)
        reg = f"r & {p.reg_owner_mask}" if p.replicated_registers else "r"
        if not p.replicated_warps:
            comment, value = (
                ("copies of an element in other lanes take the owning lane's result",
                 f"tc::shfl({name}[{reg}], tc::lane_id() & {p.lane_owner_mask})")
                if p.replicated_lanes else
                ("copies of an element in other registers take the owning one's result",
                 f"{name}[{reg}]"))
            self.out.line(self.ctx.block_macros.broadcast(dict(
                shared=False, comment=comment, regs=p.regs, name=name, value=value)))
            return
        with self.out.captured() as wait:
            base = self.pool_step(prod(v.type.shape) * v.dtype.itemsize)
        lin = self.linear(p, "r", _row_major(p.shape))
        conds = [c for c in (f"{self.exprs.lname(p)}::owner()" if p.owner_expr() != "true" else "",
                             f"(r & {p.reg_owner_mask}) == r" if p.replicated_registers else "")
                 if c]
        self.out.line(self.ctx.block_macros.broadcast(dict(
            shared=True, wait=wait, ctype=t, base=base, regs=p.regs, lin=lin, name=name,
            guard=f"if ({' && '.join(conds)}) " if conds else "")))

    op_atomic_cas = op_atomic

    def op_barrier(self, op: Op) -> None:
        self.out.line("__syncthreads();")


# Row paddings tried for an exchange of single elements (in elements; 0 first: ties keep
# the rows unpadded)
ROW_PADDINGS = (0, 1, 2, 4, 8)


def _padded_rows(shape: tuple[int, ...], sides: list[tuple[Placement, tuple[int, ...]]],
                 esize: int, warp_size: int, room: int | None = None) -> list[int]:
    """Strides of a row-major copy of a block of `shape` whose rows (its last axis) are
    padded so that the writes and reads of `sides` — each a placement whose axis i is the
    block's axis `order[i]` — take the fewest shared-memory wavefronts: a transpose read
    down the columns of unpadded rows of 64 words has every lane of a column in one bank
    (0.45-0.84x Triton's speed; 0.96-1.01 with rows of 65).  A side whose registers run
    along the rows is counted as the compiler accesses it, a vector of its run where the
    rows keep the vectors aligned, so rows a vector side reads whole stay unpadded.
    Only paddings whose copy fits `room` bytes are tried."""
    base = _row_major(shape)
    if len(shape) < 2 or shape[-1] == 1:
        return base
    last = len(shape) - 1

    def strides(pad: int) -> list[int]:
        out = [1]
        for n in reversed(shape[1:]):
            out.append(out[-1] * n + (pad if len(out) == 1 else 0))
        return list(reversed(out))

    lanes = min(warp_size, 32)
    # per side: its run along the rows (1: none), and the first registers' coordinates
    # in the block's axes, lane by lane (the same whatever the padding)
    seen = []
    for p, order in sides:
        run = p.vec if p.fast_axis is not None and order[p.fast_axis] == last else 1
        at = [[tuple(sorted(zip(order, p.coords(lane, r, warp_size))))
               for lane in range(lanes)] for r in range(min(p.regs, 8 * run))]
        seen.append((run, at))

    def cost(st: list[int]) -> int:
        total = 0
        for run, at in seen:
            vec = run
            while vec > 1 and (st[-2] % vec or vec * esize > 16):
                vec //= 2
            width = max(4, vec * esize)  # bytes a lane accesses, in whole words
            phase = lanes * 4 // width  # lanes served together
            for coords in at[::vec]:
                words = [sum(c * st[a] for a, c in lane) * esize // 4 for lane in coords]
                for first in range(0, lanes, phase):
                    banks: dict[int, set[int]] = {}
                    for word in words[first:first + phase]:
                        for w in range(word, word + width // 4):
                            banks.setdefault(w % 32, set()).add(w)
                    total += max(len(w) for w in banks.values())
        return total

    fits = [st for st in map(strides, ROW_PADDINGS)
            if room is None or st[0] * shape[0] * esize <= room or st == base]
    return min(fits, key=cost)


def _swizzled_runs(x: Value, y: Value, batch_axes: int = 0) -> tuple[int, int] | None:
    """A 2-D conversion's vectors (registers written, read at once) where it can go
    through swizzled rows of 16-byte chunks: a power-of-two number of chunks per row, each
    side's vectors within a chunk, one side's at least 2 wide.  None: the plain row-major
    exchange.  `batch_axes`: y has as many more axes in front (a stack of x's)."""
    if len(x.type.shape) != 2:
        return None
    per_chunk = 16 // x.dtype.itemsize
    width = x.type.shape[1]
    chunks = width // per_chunk
    if per_chunk < 1 or width % per_chunk or chunks & (chunks - 1):
        return None
    runs = (x.layout.vec if x.layout.fast_axis == 1 else 1,
            y.layout.vec if y.layout.fast_axis == 1 + batch_axes else 1)
    if batch_axes:  # a run of a stack's side longer than a chunk: read a chunk at a time
        runs = tuple(gcd(r, per_chunk) for r in runs)
    if max(runs) < 2 or any(per_chunk % r for r in runs):
        return None
    return runs
