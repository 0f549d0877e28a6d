"""Render a kernel (after the passes) as CUDA C++ or HIP source: `render(kernel, target)`.

Block values become per-thread register arrays (`float x[8]`) filled by `#pragma unroll`
loops; scalars become plain variables.  Values are named after the Python variables they
were bound to; single-use temporaries, constants, broadcasts and index arithmetic are
inlined as expressions at their use.  Above the code each Python statement produced, the
statement and its author's comments appear as `//` comments (optionally with `#line`
directives back to the .py file).  Spellings live in the Jinja templates and the device
header.  The passes decide (plans, pipelines, dynamic shared memory); this module only
reads the IR they leave and writes it out (`TILECC_CHECK_IR=1` checks that it does).

The kernel is written by one writer per family of ops (`Renderer` makes them), each in
its own file, each keeping the state of its family: `CoreWriter` here (regions, control
flow, loads and stores), `render_expr.ExprWriter` (values as C expressions),
`render_blocks.BlockWriter` (reductions, scans — through its `render_scan.Scans` —,
layout changes, atomics, the shared-memory pool), `render_reorder.ReorderWriter`, `render_dot.DotWriter` (tl.dot, pipelined loops)
and `render_asm.AsmWriter`.  They share a read-only `RenderContext`, an `Emitter` (the
output) and the `Names`; an op `k` is written by the `op_k` method of its family's writer
(`Renderer.ops`).
"""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator

from tilecc.errors import Loc
from tilecc.transpiler import ir
from tilecc.transpiler.emitter import Emitter
from tilecc.transpiler.ir import Kernel, Op, Region, Value
from tilecc.transpiler.line_breaks import SPACE, joined, lay_out, words
from tilecc.transpiler.passes.dce import PURE
from tilecc.transpiler.passes.emission import (in_pairs, pairs_cast, pairs_fma,
                                                pairs_product, pairs_sum)
from tilecc.transpiler.passes.layouts import MemoryPlan, Placement
from tilecc.transpiler.passes.settle import tma_store_tile
from tilecc.transpiler.render_asm import AsmWriter
from tilecc.transpiler.render_blocks import BlockWriter
from tilecc.transpiler.render_bounds import BlockBounds
from tilecc.transpiler.render_context import INCLUDE_DIR  # noqa: F401  (the runtime's)
from tilecc.transpiler.render_context import RenderContext, environment, programs_per_sm
from tilecc.transpiler.render_dot import DotWriter
from tilecc.transpiler.render_expr import COND, EQ, LAND, ExprWriter, literal
from tilecc.transpiler.render_names import Names
from tilecc.transpiler.render_reorder import ReorderWriter
from tilecc.transpiler.render_writer import Writer
from tilecc.transpiler.target import CompileTarget, c_type


class Renderer:
    """The writers of one kernel, and the table that says which writes each op: `op_k`
    of a writer writes the ops of kind `k` (an op kind is one family's).  A new op goes
    to its family's writer as an `op_<kind>` method; a new family, to a writer of its own
    (a `Writer`) made here."""

    def __init__(self, kernel: Kernel, target: CompileTarget, line_directives: bool):
        self.ctx = RenderContext.of(kernel, target, line_directives)
        self.out = Emitter()  # the lines, the indentation, the last statement commented
        self.names = Names(self.ctx)  # each value's C name, fresh names
        self.core = CoreWriter(self)
        self.exprs = ExprWriter(self)
        self.blocks = BlockWriter(self)
        self.dots = DotWriter(self)
        self.reorders = ReorderWriter(self)
        self.asm = AsmWriter(self)
        self.ops = _op_table([self.core, self.exprs, self.blocks, self.dots, self.reorders,
                              self.asm])


def _op_table(writers: list[Writer]) -> dict[str, Callable[[Op], None]]:
    """Op kind → the `op_<kind>` method of the one writer that has it."""
    table: dict[str, Callable[[Op], None]] = {}
    for writer in writers:
        for attr in dir(writer):
            if attr.startswith("op_"):
                kind = attr[len("op_"):]
                if kind in table:
                    raise ValueError(f"op {kind} has two writers")
                table[kind] = getattr(writer, attr)
    return table


# ops whose regions the renderer counts itself inside (the pool's steps ask: pool_step)
_LOOPS, _BRANCHES = ("for", "while"), ("if",)


class CoreWriter(Writer):
    """Regions op by op (statement comments, groups of element-wise block values), control
    flow (for, while, if and what their regions yield), declarations, loads and stores,
    asserts and prints.  Its state: the loops and branches around the op being written,
    and the loop-carried values updated where they are computed (`early`)."""

    def __init__(self, renderer):
        super().__init__(renderer)
        self.early: dict[int, Value] = {}  # yielded value id → loop variable updated in place
        self.loop_depth = 0  # loops around the op being rendered
        self.testing = False  # writing the copies of a tested run (no test inside them)
        self.branch_depth = 0  # ifs around it
        # the ops written, where not all: a warp role's (passes.warp_roles), else None;
        # and the ops not written (the consumers': what only the producer reads)
        self.only: frozenset | None = None
        self.skipped: frozenset = frozenset()

    @contextmanager
    def _inside(self, op: Op) -> Iterator[None]:
        """The regions of `op` counted as a loop's or a branch's in the `with`."""
        loop, branch = int(op.kind in _LOOPS), int(op.kind in _BRANCHES)
        self.loop_depth += loop
        self.branch_depth += branch
        try:
            yield
        finally:
            self.loop_depth -= loop
            self.branch_depth -= branch

    @contextmanager
    def filtered(self, only: frozenset | None = None,
                 skipped: frozenset = frozenset()) -> Iterator[None]:
        """Regions written in the `with` write only the ops of `only` (all where None) and
        none of `skipped`: one warp role's part of the kernel (passes.warp_roles)."""
        before = self.only, self.skipped
        self.only, self.skipped = only, skipped
        try:
            yield
        finally:
            self.only, self.skipped = before

    def comment_for(self, op: Op, note: str = "") -> None:
        loc: Loc | None = op.loc
        if loc is None:  # made outside any statement (a branch's constant yield): no comment
            return
        key = (loc.file, loc.stmt)
        if key not in self.ctx.kernel.statements or not self.out.new_statement(key):
            return
        text, comments = self.ctx.kernel.statements[key]
        for c in comments:
            self.out.line(words("// " + c.lstrip("#").strip()))
        where = f"L{loc.stmt}" if loc.function == self.ctx.kernel.name else \
            f"{loc.function} L{loc.stmt}"
        self.out.line(words(f"// {where}: {text}{note}"))
        if self.ctx.line_directives:
            self.out.at_margin(f'#line {loc.stmt} "{loc.file}"')

    def region(self, region: Region) -> None:
        ops = []
        for op in region.ops:
            if id(op) in self.dots.moved or id(op) in self.skipped or \
                    self.only is not None and id(op) not in self.only:
                continue
            if op.results and op.results[0].id in self.exprs.inline and op.kind in PURE:
                if (op.results[0].id in self.ctx.recomputed and not self.out.in_lambda) or \
                        op.results[0].id in self.early:
                    ops.append(op)  # only a comment, or an early loop-carried update
                continue
            ops.append(op)
        i = 0
        while i < len(ops):
            op = ops[i]
            if self._bookkeeping(op):
                i += 1
                continue
            self.comment_for(op)
            if op.kind in PURE and op.result.type.is_block:
                group, i = self._group_at(ops, i)
                run, i = self._tested_run(ops, group, i)
                if run is None:
                    self.block_values(group)
            else:
                with self._inside(op):  # what the pool's steps need to know
                    self._family.ops.get(op.kind, self.scalar_value)(op)
            i += 1

    def _bookkeeping(self, op: Op) -> bool:
        """Whether `op` is an early loop-carried update or recomputed index arithmetic,
        written here (the update, or only its statement's comment)."""
        if op.results and op.results[0].id in self.early:
            self.comment_for(op)
            self._assign_into(self.early[op.results[0].id], op.results[0], declare=False)
            return True
        if op.results and op.results[0].id in self.ctx.recomputed:
            self.comment_for(op, " (index arithmetic: recomputed where it is used)")
            return True
        return False

    def _group_at(self, ops: list[Op], i: int) -> tuple[list[Op], int]:
        """The block values computed in one register loop from `ops[i]` on (one statement's,
        of one placement), and the index of the last."""
        op = ops[i]
        group = [op]
        while not in_pairs(op) and i + 1 < len(ops) and ops[i + 1].kind in PURE and \
                not in_pairs(ops[i + 1]) and \
                ops[i + 1].result.id not in self.ctx.recomputed and \
                ops[i + 1].result.type.is_block and ops[i + 1].loc.stmt == op.loc.stmt \
                and ops[i + 1].result.layout == op.result.layout:
            i += 1
            group.append(ops[i])
        return group, i

    def _tested_run(self, ops: list[Op], group: list[Op], i: int
                    ) -> tuple[list | None, int]:
        """In a loop, where `group`'s selects have conditions one test can show true for
        the whole block (render_bounds), the run of block statements from it to the next
        op of another kind, written twice — without the selects where the test holds — and
        the index of its last op; else (None, i).  The run goes on past the selects so that
        a select's result is consumed in each copy, not kept whole where the two meet."""
        if not self._tests_selects():
            return None, i
        run: list = [group]
        j = i + 1
        while j < len(ops):
            op = ops[j]
            if op.results and op.results[0].id in self.early and \
                    not op.results[0].type.is_block:
                break  # (a scalar a later test could read: the test runs before it)
            if op.results and (op.results[0].id in self.early or
                               op.results[0].id in self.ctx.recomputed):
                run.append(op)
            elif op.kind in PURE and op.result.type.is_block:
                more, j = self._group_at(ops, j)
                run.append(more)
            else:
                break
            j += 1
        values = [x for item in run for x in
                  ([o.result for o in item] if isinstance(item, list) else [item.results[0]])]
        test = BlockBounds(self.exprs).test(values)
        if test is None:
            return None, i
        for item in run:
            if isinstance(item, list):
                for op in item:
                    self.declare(op.result)

        def write() -> None:
            for k, item in enumerate(run):
                if not isinstance(item, list):
                    self._bookkeeping(item)
                    continue
                if k:
                    self.comment_for(item[0])
                self._block_statements(item)
                self._pinned(item)
        self._write_tested(test, write)
        return run, j - 1

    def _tests_selects(self) -> bool:
        """Whether selects here may be tested once per block: in a loop, not inside the
        copies of a tested run, and only where the kernel issues tensor-core products (one
        that streams memory hides its selects behind its loads, and the copies' branch
        costs registers it needs for loads in flight: layer norm spilled at 128)."""
        return bool(self.loop_depth) and not self.ctx.memory_bound and not self.testing

    def _write_tested(self, test: tuple[str, set[int]], write: Callable[[], None]) -> None:
        """`write()` twice: without the selects `test` proves, where its condition holds."""
        cond, proved = test
        self.testing = True
        try:
            with self.out.captured() as fast, self.exprs.assuming(proved), \
                    self.out.same_last_statement():
                write()
            with self.out.captured() as general:
                write()
        finally:
            self.testing = False
        self.out.line("// where this test holds, so do the selects' conditions, for every "
                      "element: no selects")
        self.out.line(self.ctx.macros.branch(cond, fast, general))

    def declare(self, v: Value, init: str | None = None, const: bool | None = None) -> None:
        """`v`'s variable: a register array, or a scalar (const where it is initialised and
        never assigned again, unless `const` says)."""
        if v.type.is_block:
            self.out.line(self.ctx.macros.declaration(self.exprs.ctype(v), self.names.name(v),
                                                      regs=v.layout.regs))
            return
        if const is None:
            const = self.ctx.root(v) not in self.ctx.mutable and init is not None
        self.out.line(self.ctx.macros.declaration(self.exprs.ctype(v), self.names.name(v),
                                                  init=init, const=const,
                                                  pointer=v.dtype.is_ptr()))

    def block_values(self, group: list[Op]) -> None:
        for op in group:
            self.declare(op.result)
        self._block_statements(group)
        self._pinned(group)

    def _pinned(self, group: list[Op]) -> None:
        for op in group:  # (the copies' registers of a held block: Emission.pinned_step)
            step = self.ctx.emission.pinned_step(op.result)
            if step is not None and self.ctx.target.async_copies:
                self.out.line("// held through the loop as it is, not rebuilt from one pointer "
                              "at each use")
                self.out.line(self.ctx.macros.register_loop(
                    op.result.layout.regs,
                    [f"tc::keep_in_register({self.names.name(op.result)}[r]);"], step=step))

    def _selects_tested(self, values: list[Value], write: Callable[[], None]) -> None:
        """`write()`, the statements computing block `values`; in a loop, where the selects
        of their expressions have conditions one test can show true for the whole block
        (render_bounds), written twice (`_write_tested`)."""
        test = BlockBounds(self.exprs).test(values) if self._tests_selects() else None
        if test is None:
            write()
        else:
            self._write_tested(test, write)

    def _paired_statements(self, fn: str, op: Op) -> None:
        """`op` (a 16-bit product, sum or fma) two registers at a time through `fn`; an operand
        that is a conversion from fp32 written into it (passes.emission) is converted two
        at a time there first, into a pair of the loop's own.  Converted one element at a
        time ptxas gives each its own F2F; converted in a statement before, every pair
        of the block is live at once (GELU's gate at 1024 threads spilled at 32 registers)."""
        v = op.result
        converted, operands = [], []
        for x in op.operands:
            cast = x.owner
            if x.id in self.ctx.emission.inline and cast is not None and pairs_cast(cast) \
                    and x.layout == v.layout:
                src = cast.operands[0]
                base = self.names.name(src) if src.id not in self.ctx.emission.inline \
                    else "converted"
                pair = self.names.fresh(f"{base}_{x.dtype.short}")
                converted.append((c_type(x.dtype), pair, self.exprs.text(src, "r"),
                                  self.exprs.text(src, "r + 1")))
                operands += [f"{pair}[0]", f"{pair}[1]"]
            else:
                operands += [self.exprs.text(x, "r"), self.exprs.text(x, "r + 1")]
        self.out.line(self.ctx.macros.pairs(fn, v.layout.regs, operands, self.names.name(v),
                                            converted))

    def _block_statements(self, group: list[Op]) -> None:
        """The statements that compute a group of block values, declared before."""
        if pairs_cast(group[0]):  # fp32 -> fp16 / bf16, two elements per instruction
            x, v = group[0].operands[0], group[0].result
            self.out.line(self.ctx.macros.cast_pairs(
                v.layout.regs, self.exprs.text(x, "r"), self.exprs.text(x, "r + 1"),
                self.names.name(v)))
            return
        first = group[0]
        paired = "tc::mul_pair" if pairs_product(first) else \
            "tc::fma_pair" if pairs_fma(first) else \
            f"tc::{first.attrs['fn']}_pair" if pairs_sum(first) else None
        if paired and self.ctx.root(first.result) == first.result.id:
            # fp16 / bf16 products, sums and fmas, two per instruction (a result updating
            # another value's variable in place keeps the general path, which orders its
            # reads first)
            self._paired_statements(paired, first)
            return
        # a result living in another value's variable (a loop-carried one) updates it in place
        in_place = {self.ctx.root(op.result) for op in group
                    if self.ctx.root(op.result) != op.result.id}
        with self.exprs.overwriting(in_place):
            assigns = [(self.names.name(op.result), self.exprs.defining_text(op))
                       for op in group]
        self.out.line(self.ctx.macros.register_assignments(group[0].result.layout.regs, assigns))

    def scalar_value(self, op: Op) -> None:
        """A scalar op without a writer of its own: its value, declared."""
        self.declare(op.result, self.exprs.defining_text(op))

    def op_counter(self, op: Op) -> None:  # read once, where the kernel reads it
        self.declare(op.result, f"tc::{op.attrs['counter']}()")

    def op_load(self, op: Op) -> None:
        if self.dots.read_back(op):  # a pipeline read it ahead
            return
        v, ptr = op.result, op.operands[0]
        mask = op.operands[1] if len(op.operands) > 1 else None
        other = op.operands[2] if len(op.operands) > 2 else None
        zero = literal(0, v.dtype)
        if not v.type.is_block:
            load = self.exprs.element(ptr, "r")
            if mask is not None:
                load = f"{self.exprs.wrap(mask, 'r', EQ)} ?{SPACE}{load} :{SPACE}" + \
                       (self.exprs.wrap(other, "r", COND) if other is not None else zero)
            self.declare(v, load)
            return
        plan: MemoryPlan = op.attrs["plan"]
        regs = v.layout.regs
        self.declare(v)
        if plan.vec == 1:
            value = self.exprs.element(ptr, plan.address_register("r"))
            if mask is not None and self.exprs.run_start(ptr, "r") != "r":
                # an address shared by a run of registers: computed outside the condition
                # (tc::load1_if), once for the run, not under each element's branch
                fill = self.exprs.text(other, "r") if other is not None else zero
                where = self.exprs.text(mask, 'r'), self.exprs.text(ptr, 'r')
                value = f"tc::load1_if({where[0]}, {where[1]}, {fill})"
            elif mask is not None:
                fill = self.exprs.wrap(other, "r", COND) if other is not None else zero
                value = f"{self.exprs.wrap(mask, 'r', EQ)} ? {value} : {fill}"
            self.out.line(self.ctx.macros.register_assignments(regs, [(self.names.name(v), value)]))
            return
        vec = plan.vec
        if other is None:
            fill = f"tc::splat<{vec}>({zero})"
        elif not self.exprs.varies(other):
            fill = f"tc::splat<{vec}>({self.exprs.text(other, 'v')})"
        else:
            raise NotImplementedError("per-element `other` with vector loads")
        self.out.line(self.ctx.macros.vector_load(
            dst=self.names.name(v), regs=regs, vec=vec, ctype=c_type(v.dtype), fill=fill,
            ptr=self.exprs.text(ptr, plan.address_register("v")), mask_mode=plan.mask_mode,
            mask_first=self.exprs.text(mask, "v") if mask is not None else "",
            mask_last=self.exprs.text(mask, f"v + {vec - 1}") if mask is not None else "",
            lane_mask=self.exprs.text(mask, "v + k") if mask is not None else "",
            lane_ptr=self.exprs.element(ptr, "v + k")))

    def op_store(self, op: Op) -> None:
        if "tma_store" in op.attrs:  # the copy engine writes it (passes.settle.TmaStore)
            with self.out.captured() as threads:  # ... or the threads, where it cannot
                self.thread_store(op)
            self.blocks.tma_store(op, threads)
            return
        self.thread_store(op)

    def thread_store(self, op: Op) -> None:
        ptr, value = op.operands[0], op.operands[1]
        mask = op.operands[2] if len(op.operands) > 2 else None
        if not ptr.type.is_block:
            guard = self.exprs.wrap(mask, "r", LAND) if mask else ""
            self.out.line(self.ctx.macros.scalar_store(self.exprs.element(ptr, "r"),
                                                       self.exprs.text(value, "r"), guard))
            return
        plan: MemoryPlan = op.attrs["plan"]
        layout: Placement = ptr.layout
        owner = f"{self.exprs.lname(layout)}::owner()" if layout.owner_expr() != "true" else ""
        if plan.vec == 1:
            conds = [c for c in (owner, self.exprs.wrap(mask, "r", LAND) if mask else "") if c]
            self.out.line(self.ctx.macros.element_store(
                self.exprs.element(ptr, "r"), self.exprs.text(value, "r"), conds,
                regs=layout.regs))
            return
        vec = plan.vec
        guard = self.exprs.text(mask, "v") if mask is not None and plan.mask_mode == "vector" \
            else ""
        # elements under 32 bits are packed into words: a predicated store keeps the packing
        # out from under the branch (layer norm at 1024 columns, 1 warp: +3%).  32-bit ones
        # keep the branch, which lets the compiler compute each vector just before its store
        # (softmax at 1024 columns, 2 warps: 31 registers, 44 with the predicated form), as
        # do tensor-core epilogues, where the accumulators already fill the registers —
        # unless the values come read back from a layout change, with nothing left to
        # compute: there a branch per vector cost a convergence barrier (BSSY / BSYNC) each
        # (a 128 x 256 GEMM's epilogue: 16 a tile)
        read_back = value.owner is not None and value.owner.kind == "convert"
        predicated = (self.ctx.target.predicated_narrow_stores and value.dtype.itemsize < 4
                      and (self.ctx.memory_bound or read_back))
        self.out.line(self.ctx.macros.vector_store(
            regs=layout.regs, vec=vec, ctype=c_type(value.dtype),
            lane_value=self.exprs.text(value, "v + k"), ptr=self.exprs.text(ptr, "v"), guard=guard,
            mask_mode=plan.mask_mode,
            mask_last=self.exprs.text(mask, f"v + {vec - 1}") if mask is not None else "",
            lane_mask=self.exprs.text(mask, "v + k") if mask is not None else "",
            lane_ptr=self.exprs.element(ptr, "v + k"), predicated=predicated))

    def op_device_assert(self, op: Op) -> None:  # present in debug builds only (passes.dce)
        cond = op.operands[0]
        self.out.line(self.ctx.macros.device_assert(
            self.exprs.text(cond), op.attrs["msg"],
            os.path.basename(op.loc.file), op.loc.line,
            regs=cond.layout.regs if cond.type.is_block else None))

    def op_print(self, op: Op) -> None:
        """tl.device_print: printf, one line per element, by the thread that owns it."""
        from tilecc.transpiler import print_format as F

        prefix = op.attrs["prefix"]
        if not op.operands:
            self.out.line(self.ctx.macros.device_print(F.NO_VALUES_FORMAT, prefix))
        for n, v in enumerate(op.operands):
            fmt = F.line_format(v.type.shape, v.dtype, op.attrs["hex"], n, len(op.operands))
            value = self._printf_value(v, op.attrs["hex"])
            if not v.type.is_block:
                self.out.line(self.ctx.macros.device_print(fmt, prefix, value))
                continue
            layout = self.exprs.lname(v.layout)
            coords = [f"{layout}::coord{i}(r)" for i in range(len(v.type.shape))]
            owner = f"{layout}::owner()" if v.layout.owner_expr() != "true" else None
            self.out.line(self.ctx.macros.device_print(fmt, prefix, value, coords,
                                                       v.layout.regs, owner))

    def _printf_value(self, v: Value, hex: bool) -> str:
        """`v`'s element r as printf's variadic argument for `print_format.value_format`."""
        text = self.exprs.text(v, "r")
        d = v.dtype
        if hex:
            bits = {8: "uint8_t", 16: "uint16_t", 32: "uint32_t", 64: "unsigned long long"}
            word = bits.get(d.bits, "uint32_t")
            return f"static_cast<unsigned{' long long' if d.bits > 32 else ''}>(" \
                f"tc::bitcast<{word}>({text}))" if d.is_floating() else \
                f"static_cast<unsigned{' long long' if d.bits > 32 else ''}>({text})"
        if d.is_floating():
            return f"static_cast<double>(tc::cast<float>({text}))" if d.bits < 32 else \
                f"static_cast<double>({text})"
        if d.bits == 64:
            return f"static_cast<{'long long' if d.is_int_signed() else 'unsigned long long'}>" \
                f"({text})"
        return f"static_cast<{'int' if d.is_int_signed() else 'unsigned'}>({text})"

    def assign_yields(self, targets: list[Value], values: list[Value]) -> None:
        pairs = [(t, v) for t, v in zip(targets, values) if self.ctx.root(v) != self.ctx.root(t)]
        if self._needs_staging(pairs):  # a later value reads a variable assigned before it
            staged = []
            for t, v in pairs:
                tmp = Value(v.type, None)
                tmp.layout = v.layout
                self.names.fresh_for(tmp, f"{self.names.name(t)}_next")
                self._assign_into(tmp, v, declare=True)
                staged.append((t, tmp))
            pairs = staged
        for t, v in pairs:
            if v.owner is not None:
                self.comment_for(v.owner)
            self._assign_into(t, v, declare=False)

    def _needs_staging(self, pairs: list[tuple[Value, Value]]) -> bool:
        assigned: list[str] = []
        for t, v in pairs:
            text = self.exprs.text(v)
            if any(re.search(rf"\b{re.escape(name)}\b", text) for name in assigned):
                return True
            assigned.append(self.names.name(t))
        return False

    def _assign_into(self, target: Value, v: Value, declare: bool) -> None:
        if target.type.is_block:
            if declare:
                self.declare(target)
            def write() -> None:
                with self.exprs.overwriting(set() if declare else {self.ctx.root(target)}):
                    value = self.exprs.text(v, "r")
                self.out.line(self.ctx.macros.register_assignments(
                    target.layout.regs, [(self.names.name(target), value)]))
            self._selects_tested([v], write)
        elif declare:
            self.declare(target, self.exprs.text(v), const=True)
        else:
            self.out.line(self.ctx.macros.assignment(self.names.name(target), self.exprs.text(v)))

    def declare_slots(self, results: list[Value], inits: list[Value] | None) -> None:
        for i, res in enumerate(results):
            if self.ctx.root(res) != res.id:
                continue  # reuses the initial value's variable
            if inits is None:
                self.declare(res)
            elif res.type.is_block:
                self.declare(res)
                self.out.line(self.ctx.macros.register_assignments(
                    res.layout.regs, [(self.names.name(res), self.exprs.text(inits[i], "r"))]))
            else:
                self.declare(res, self.exprs.text(inits[i]))

    def op_for(self, op: Op) -> None:
        if self.only is None:  # (the producer stages no operands)
            self.dots.hoist_invariant_operands(op)
        if "pipeline" in op.attrs:
            return self.dots.pipelined_for(op)
        lo, hi, step = op.operands[:3]
        self.declare_slots(op.results, op.operands[3:])
        body = op.regions[0]
        iv = body.args[0]
        step_text = self.exprs.text(step)
        index, start, stop = self.names.name(iv), self.exprs.text(lo), self.exprs.text(hi)
        self.out.line(self.ctx.macros.for_loop(
            c_type(iv.dtype), index, start, ">" if op.attrs["step_sign"] < 0 else "<", stop,
            step_text, self.nested(body, op.results, body.args[1:])))

    def op_while(self, op: Op) -> None:
        self.declare_slots(op.results, op.operands)
        before, body = op.regions
        emitted = [o for o in before.ops
                   if not (o.results and o.results[0].id in self.exprs.inline)]
        before_lines = None  # the condition's own statements, where it has any
        if emitted:
            with self.out.captured() as before_lines:
                self.region(before)
        cond = self.exprs.text(before.yields[0])
        self.out.line(self.ctx.macros.while_loop(cond, before_lines,
                                                 self.nested(body, op.results, body.args)))

    def op_if(self, op: Op) -> None:
        self.declare_slots(op.results, None)
        cond = self.exprs.text(op.operands[0])
        then = self.nested(op.regions[0], op.results)
        els, otherwise = op.regions[1], None
        if els.yields or any(not (o.results and o.results[0].id in self.exprs.inline)
                             for o in els.ops):
            otherwise = self.nested(els, op.results)
        self.out.line(self.ctx.macros.branch(cond, then, otherwise))

    def nested(self, region: Region, targets: list[Value], carried: list[Value] = ()
               ) -> list[str]:
        """The region's statements, then what it yields assigned to `targets` (`carried`:
        a loop's variables, which may be updated early): lines for a template to place
        one level in."""
        with self.out.same_last_statement(), self.out.captured() as lines:
            early = self._early_updates(region, targets, list(carried))
            self.early.update(early)
            self.region(region)
            self.assign_yields([t for t, y in zip(targets, region.yields) if y.id not in early],
                               [y for y in region.yields if y.id not in early])
        return lines

    def _early_updates(self, region: Region, targets: list[Value], carried: list[Value]
                       ) -> dict[int, Value]:
        """Loop-carried updates (`acc += x`) written where the statement is, not at the end
        of the body: the operands then die early, which keeps register pressure down.  Only
        when nothing later in the body reads the old value."""
        if not carried:
            return {}
        position = {id(op): i for i, op in enumerate(region.ops)}
        early: dict[int, Value] = {}
        for target, y, old in zip(targets, region.yields, carried):
            op = y.owner
            if op is None or id(op) not in position or y.id not in self.exprs.inline or \
                    self.ctx.root(y) == self.ctx.root(target):
                continue
            at = position[id(op)]
            later = [o for o in region.ops[at + 1:]]
            reads_later = any(old.id in {v.id for v in o.operands} or
                              any(old.id in {v.id for v in x.operands}
                                  for r in o.regions for x in ir.walk(r)) for o in later)
            other_yields = any(old in self.exprs.read_values(v)
                               for v in region.yields if v is not y)
            if not reads_later and not other_yields:
                early[y.id] = target
        return early


@dataclass(frozen=True)
class Rendered:
    """What rendering a kernel produces: the source, and what the runtime needs besides it.
    The IR kernel is left as the passes left it."""
    source: str
    shared_bytes: int  # dynamic shared memory the launch must give
    static_shared_bytes: int  # `__shared__` arrays (the pool)
    # what takes shared memory, one line each (the resource check lists them when a
    # program needs more than the target has)
    shared_uses: tuple[str, ...]
    min_programs: int | None  # programs per SM asked of ptxas
    # every name the renderer gave a value or derived from one (names.unique)
    c_names: frozenset[str]
    threads: int = 0  # a program's threads: num_warps', and a producer's (passes.warp_roles)


def _plan_notes(kernel: Kernel) -> tuple[list[str], list[str]]:
    """The header's notes: each memory access's plan, each product's and pipeline's."""
    memory, dots = [], []
    for op in kernel.walk():
        if op.kind == "dot":
            dots.append(f"L{op.loc.line}: {op.attrs['plan'].description}")
        if op.kind == "for" and "pipeline" in op.attrs:
            dots.append(op.attrs["pipeline"].note)
        if op.kind in ("load", "store") and "plan" in op.attrs:
            what = op.kind + (f" {op.results[0].name}" if op.results and op.results[0].name else "")
            memory.append(f"L{op.loc.line} {what}: {op.attrs['plan'].reason}")
    return memory, dots


def _parameters(kernel: Kernel, r: Renderer) -> list[tuple[str, str]]:
    """(C parameter, the Python name where it differs): the kernel's, then the tensor maps
    (by value, in the constant bank: what TMA copies read)."""
    params = []
    for p in kernel.params:
        if p.value is not None:
            c_name = r.names.name(p.value)
            params.append((f"{r.exprs.ctype(p.value)} {c_name}",
                           p.name if c_name != p.name else ""))
    for m in kernel.tensor_maps:
        what = m.param if m.args is None else f"{m.param}'s blocks" if m.pointers else \
            f"{m.param}'s descriptor"
        params.append((f"const __grid_constant__ tc::TensorMap {r.names.map_names[m.key]}",
                       f"{what}, {list(m.box)} boxes"))
    return params


def render(kernel: Kernel, target: CompileTarget, conversions: list[str], *,
           specialization: list[str], line_directives: bool = False,
           occupancy: bool = True) -> Rendered:
    """The kernel's source and its products (`Rendered`).  `occupancy`: ask ptxas for
    programs_per_sm() programs per SM (the runtime renders again without it when ptxas
    spills registers to meet it).  Rendering only reads the IR."""
    from tilecc.version import __version__

    # TILECC_CHECK_IR=1 (the test suite sets it): verify the IR the passes left, and check
    # that rendering only read it
    check = os.environ.get("TILECC_CHECK_IR", "0") == "1"
    if check:
        ir.verify(kernel)
        before = ir.fingerprint(kernel)
    r = Renderer(kernel, target, line_directives)
    r.names.name_user_values(kernel)
    if kernel.warp_roles is None:
        r.core.region(kernel.body)
    else:  # a producer warpgroup's branch, then the consumers' (passes.warp_roles)
        r.dots.warp_roles(kernel.warp_roles)
    if tma_store_tile(kernel) is not None:
        r.out.line("if (threadIdx.x == 0) tc::tma_store_wait_read<0>();  // the TMA stores "
                   "have read their tile")
    body = r.blocks.finish_pool(r.out.lines)
    declarations, shared = r.blocks.shared_memory_declarations()
    body = declarations + body
    # clang's contraction, off: the pragma must open the kernel's body
    no_contract = not kernel.fp_fusion and target.no_contract_pragma
    params = _parameters(kernel, r)
    renamed = [f"{py} -> {c}" for py, c in r.names.renamed.items()]
    if kernel.symbol != kernel.name:
        renamed.insert(0, f"{kernel.name} -> {kernel.symbol} (the kernel)")
    memory, dots = _plan_notes(kernel)
    producers = kernel.warp_roles.producer_warps if kernel.warp_roles else 0
    threads = (kernel.num_warps + producers) * target.warp_size
    held = {v.id for op in kernel.walk() for v in op.results
            if v.id not in r.exprs.inline and v.id not in r.ctx.recomputed}
    # a register limit the user set replaces the occupancy tilecc would ask for
    maxnreg = kernel.maxnreg if target.register_limit_flag else None
    min_programs = programs_per_sm(kernel, target, held) if occupancy and not maxnreg else None
    source = f"{os.path.basename(kernel.loc.file)}:{kernel.loc.line}"
    layouts = []
    for p, name in r.exprs.layout_names.items():
        layouts.append({"name": name, "regs": p.regs, "description": p.describe(),
                        "coords": [p.coord_expr(i, "r") for i in range(len(p.shape))],
                        "owner": joined(p.owner_terms(), " && ") or "true"})
    text = environment().get_template("c_like/kernel.j2").render(
        name=kernel.name, symbol=kernel.symbol, renamed=renamed, version=__version__,
        source=source, target=target.describe(),
        num_warps=kernel.num_warps, warp_size=target.warp_size, threads=threads,
        producer_warps=producers,
        specialization=specialization, memory=memory, params=params, body=body,
        no_contract=no_contract,
        layouts=layouts, conversions=conversions, dots=dots, min_programs=min_programs,
        maxnreg=maxnreg)
    text = lay_out(text)  # lines of at most 100 columns, broken where they were marked
    if check:
        assert ir.fingerprint(kernel) == before, (
            f"rendering {kernel.name} changed its IR: a decision the renderer took belongs "
            "in a pass (passes.settle)")
    return Rendered(text, shared.dynamic, shared.static, tuple(shared.uses), min_programs,
                    r.names.given(), threads)
