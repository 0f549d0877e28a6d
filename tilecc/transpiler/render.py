"""Render a kernel (after the passes) as CUDA C++ or HIP source: `render(kernel, target)`.

Block values become per-thread register arrays (`float x[8]`) filled by `#pragma unroll`
loops; scalars become plain variables.  Values are named after the Python variables they
were bound to; single-use temporaries, constants, broadcasts and index arithmetic are
inlined as expressions at their use.  Above the code each Python statement produced, the
statement and its author's comments appear as `//` comments (optionally with `#line`
directives back to the .py file).  Spellings live in the Jinja templates and the device
header.  The passes decide (plans, pipelines, dynamic shared memory); this module only
reads the IR they leave and writes it out (`TILECC_CHECK_IR=1` checks that it does).
"""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator

import jinja2

from tilecc.errors import Loc
from tilecc.transpiler import ir
from tilecc.transpiler.emitter import CEmitter
from tilecc.transpiler.ir import Kernel, Op, Region, Value
from tilecc.transpiler.line_breaks import BODY, BREAK, NOTE, SPACE, joined, lay_out, words
from tilecc.transpiler.names import c_identifier, unique
from tilecc.transpiler.passes.dce import PURE
from tilecc.transpiler.passes.emission import pairs_cast
from tilecc.transpiler.passes.layouts import MemoryPlan, Placement
from tilecc.transpiler.render_asm import AsmOps
from tilecc.transpiler.render_blocks import BlockOps
from tilecc.transpiler.render_context import RenderContext, programs_per_sm
from tilecc.transpiler.render_dot import DotOps
from tilecc.transpiler.render_expr import COND, EQ, LAND, ExprOps, literal
from tilecc.transpiler.render_reorder import ReorderOps
from tilecc.transpiler.render_scan import ScanOps
from tilecc.transpiler.target import CompileTarget, c_type

TEMPLATE_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "templates")
INCLUDE_DIR = os.path.join(TEMPLATE_DIR, "include")


@lru_cache(maxsize=None)
def environment() -> jinja2.Environment:
    """The one Jinja environment: a missing variable is an error, never an empty string.
    The runtime gives it a disk cache of compiled templates (`runtime/template_cache.py`)
    before it renders; the transpiler itself keeps nothing on disk."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATE_DIR),
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                             autoescape=False)
    env.filters["nest"] = nest
    env.filters["c_string"] = c_string
    env.filters["comment"] = words  # prose: its words may move to lines of their own
    env.filters["joined"] = joined  # parts, a line break allowed after each separator
    env.globals.update(BODY=BODY, BREAK=BREAK, NOTE=NOTE)  # where lines may break
    return env


def c_string(text: str) -> str:
    """`text` as a C string literal."""
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def nest(text: str | list[str], levels: int = 1) -> str:
    """C lines (a string of them, or a list) `levels` deeper, two spaces a level;
    preprocessor lines and empty lines stay at the margin (as the emitter writes them)."""
    lines = text if isinstance(text, list) else str(text).split("\n")
    pad = "  " * levels
    return "\n".join(pad + x if x and not x.startswith("#") else x for x in lines)


def _macros():
    return environment().get_template("c_like/ops.j2").module


def dot_macros():
    """The macros of tl.dot's C (c_like/dot.j2): its loops over K, its copies."""
    return environment().get_template("c_like/dot.j2").module


def block_macros():
    """The macros of scans and layout changes (c_like/blocks.j2)."""
    return environment().get_template("c_like/blocks.j2").module


# ops whose regions the renderer counts itself inside: Renderer.loop_depth, .branch_depth
_NESTING = {"for": "loop_depth", "while": "loop_depth", "if": "branch_depth"}


class Renderer(CEmitter, ExprOps, BlockOps, ScanOps, DotOps, ReorderOps, AsmOps):
    """The kernel's C, written op by op.  Each family of ops (the mixins: blocks, dots,
    reorders, inline asm; the emitter) keeps its state in its own object or attributes,
    set up and written by its own file; all of them read `ctx`."""

    def __init__(self, kernel: Kernel, target: CompileTarget, line_directives: bool):
        self.ctx = RenderContext.of(kernel, target, line_directives)
        self.start_output()  # the emitter's: lines, indentation, last statement commented
        # names: the C name of each value (by the value whose variable it lives in)
        self.names: dict[int, str] = {}
        self.taken: set[str] = set()
        self.allocated: set[str] = set()  # every name taken, lambdas' included
        # Python name -> its C++ spelling, where that is more than a trailing `_` (the
        # kernel's header comment lists them)
        self.renamed: dict[str, str] = {}
        self.start_expressions()  # render_expr: the placements' C structs
        # values written as expressions (the emission's; a pipeline's copies add theirs)
        self.inline = self.ctx.emission.inline
        self.early: dict[int, Value] = {}  # yielded value id → loop variable updated in place
        self.loop_depth = 0  # loops around the op being rendered (see _NESTING)
        self.branch_depth = 0  # ifs around it
        self.start_pool()  # render_blocks: the shared-memory pool's steps
        self.start_dots()  # render_dot: tiles, pipelines; the ops moved to issue points

    # the context's fields, as the mixins read them
    k = property(lambda self: self.ctx.kernel)
    target = property(lambda self: self.ctx.target)
    emission = property(lambda self: self.ctx.emission)
    uses = property(lambda self: self.ctx.emission.uses)
    mutable = property(lambda self: self.ctx.emission.mutable)
    recomputed = property(lambda self: self.ctx.emission.recomputed)
    memory_bound = property(lambda self: self.ctx.memory_bound)

    @property
    def macros(self):
        return _macros()

    @property
    def dot_macros(self):
        return dot_macros()

    @property
    def block_macros(self):
        return block_macros()

    def root(self, v: Value) -> int:
        """The value whose C variable `v` lives in (loop-carried slots reuse variables)."""
        return self.emission.root(v)

    # --- names ------------------------------------------------------------------------------
    def name(self, v: Value) -> str:
        vid = self.root(v)
        if vid in self.names:
            return self.names[vid]
        python = v.name or self._derived_name(v)
        base = c_identifier(python)
        if base in self.ctx.dot_names:
            base += "_"
        candidate = unique(base, self.taken)
        self.allocated.add(candidate)
        if v.name and base not in (v.name, v.name + "_"):  # not just a trailing `_`
            self.renamed.setdefault(v.name, candidate)
        self.names[vid] = candidate
        return candidate

    def fresh(self, base: str, add: bool = True) -> str:
        """A new name for code tilecc generates from `base` (`acc_sum`, `x_tile`): distinct
        from every name of the kernel, user names included (`add=False`: for a block that
        declares it each time it is written, e.g. a pipeline's copies)."""
        name = unique(base, self.taken, add)
        self.allocated.add(name)
        return name

    @contextmanager
    def own_names(self) -> Iterator[None]:
        """Names taken in the `with` are its own (a lambda captures nothing: its parameters
        and locals may reuse the kernel's names); the kernel's are back after it."""
        saved, self.taken = self.taken, set()
        try:
            yield
        finally:
            self.taken = saved

    @contextmanager
    def named_as(self, v: Value, text: str) -> Iterator[None]:
        """`v` written as `text` in the `with` (a pipeline's copies of a later iteration:
        the loop index as that iteration's)."""
        root = self.root(v)
        saved, self.names[root] = self.names[root], text
        try:
            yield
        finally:
            self.names[root] = saved

    @contextmanager
    def inlined(self, ids: set[int]) -> Iterator[None]:
        """The values of `ids` written as expressions in the `with`."""
        self.inline |= ids
        try:
            yield
        finally:
            self.inline -= ids

    def name_user_values(self, kernel: Kernel) -> None:
        """Parameters first, then every named value the kernel declares, in program order:
        user names are all taken before generated code picks its own (see `fresh`)."""
        for p in kernel.params:
            if p.value is not None:
                self.name(p.value)
        # the tensor maps of descriptors that TMA copies read: parameters after these
        self.map_names = {m.key: self.fresh(f"{m.param}_map") for m in kernel.tensor_maps}

        def visit(region: Region) -> None:
            for op in region.ops:
                for v in op.results:
                    if v.name and v.id not in self.inline:
                        self.name(v)
                if op.kind not in ("reduce", "scan", "map"):  # lambdas: names of their own
                    for r in op.regions:
                        visit(r)

        visit(kernel.body)

    def _derived_name(self, v: Value) -> str:
        """An unnamed value feeding a named one is named after it: the raw load behind
        `x = tl.load(...).to(tl.float32)` becomes `x_fp16`; `tl.max(x, 0)` is `x_max`."""
        if v.owner is not None and v.owner.kind in ("reduce", "scan"):
            what = v.owner.attrs.get("combine", v.owner.kind)
            src = v.owner.operands[0].name
            return f"{src}_{what}" if src else what
        if v.owner is not None and v.owner.kind == "load":
            user = self.ctx.consumers.get(v.id)
            if user is not None and user.name:
                return f"{user.name}_{v.dtype.short}"
            return "loaded"
        return "t"

    def comment_for(self, op: Op, note: str = "") -> None:
        loc: Loc | None = op.loc
        if loc is None:  # made outside any statement (a branch's constant yield): no comment
            return
        key = (loc.file, loc.stmt)
        if key not in self.k.statements or not self.new_statement(key):
            return
        text, comments = self.k.statements[key]
        for c in comments:
            self.line(words("// " + c.lstrip("#").strip()))
        where = f"L{loc.stmt}" if loc.function == self.k.name else f"{loc.function} L{loc.stmt}"
        self.line(words(f"// {where}: {text}{note}"))
        if self.ctx.line_directives:
            self.lines.append(f'#line {loc.stmt} "{loc.file}"')

    def region(self, region: Region) -> None:
        ops = []
        for op in region.ops:
            if id(op) in self.moved:
                continue
            if op.results and op.results[0].id in self.inline and op.kind in PURE:
                if (op.results[0].id in self.recomputed and not self.in_lambda) or \
                        op.results[0].id in self.early:
                    ops.append(op)  # only a comment, or an early loop-carried update
                continue
            ops.append(op)
        i = 0
        while i < len(ops):
            op = ops[i]
            if op.results and op.results[0].id in self.early:
                self.comment_for(op)
                self._assign_into(self.early[op.results[0].id], op.results[0], declare=False)
                i += 1
                continue
            if op.results and op.results[0].id in self.recomputed:
                self.comment_for(op, " (index arithmetic: recomputed where it is used)")
                i += 1
                continue
            self.comment_for(op)
            if op.kind in PURE and op.result.type.is_block:
                group = [op]
                while not pairs_cast(op) and i + 1 < len(ops) and ops[i + 1].kind in PURE and \
                        not pairs_cast(ops[i + 1]) and \
                        ops[i + 1].result.id not in self.recomputed and \
                        ops[i + 1].result.type.is_block and ops[i + 1].loc.stmt == op.loc.stmt \
                        and ops[i + 1].result.layout == op.result.layout:
                    i += 1
                    group.append(ops[i])
                self.block_values(group)
            else:
                counter = _NESTING.get(op.kind)  # what the pool's steps need to know
                if counter:
                    setattr(self, counter, getattr(self, counter) + 1)
                getattr(self, f"op_{op.kind}", self.op_scalar)(op)
                if counter:
                    setattr(self, counter, getattr(self, counter) - 1)
            i += 1

    def declare(self, v: Value, init: str | None = None, const: bool | None = None) -> None:
        """`v`'s variable: a register array, or a scalar (const where it is initialised and
        never assigned again, unless `const` says)."""
        if v.type.is_block:
            self.line(self.macros.declaration(self.ctype(v), self.name(v), regs=v.layout.regs))
            return
        if const is None:
            const = self.root(v) not in self.mutable and init is not None
        self.line(self.macros.declaration(self.ctype(v), self.name(v), init=init, const=const,
                                          pointer=v.dtype.is_ptr()))

    def block_values(self, group: list[Op]) -> None:
        for op in group:
            self.declare(op.result)
        if pairs_cast(group[0]):  # fp32 -> fp16 / bf16, two elements per instruction
            x, v = group[0].operands[0], group[0].result
            self.line(self.macros.cast_pairs(v.layout.regs, self.text(x, "r"),
                                             self.text(x, "r + 1"), self.name(v)))
            return
        assigns = [(self.name(op.result), self.op_text(op)) for op in group]
        self.line(self.macros.register_assignments(group[0].result.layout.regs, assigns))

    def op_text(self, op: Op, idx: str = "r") -> str:
        v = op.result
        self.inline.add(v.id)  # render the defining expression itself, not the variable
        try:
            return self.text(v, idx)
        finally:
            self.inline.discard(v.id)

    def op_scalar(self, op: Op) -> None:
        self.declare(op.result, self.op_text(op))

    def op_counter(self, op: Op) -> None:  # read once, where the kernel reads it
        self.declare(op.result, f"tc::{op.attrs['counter']}()")

    def op_load(self, op: Op) -> None:
        v, ptr = op.result, op.operands[0]
        mask = op.operands[1] if len(op.operands) > 1 else None
        other = op.operands[2] if len(op.operands) > 2 else None
        zero = literal(0, v.dtype)
        if not v.type.is_block:
            load = self.element(ptr, "r")
            if mask is not None:
                load = f"{self.wrap(mask, 'r', EQ)} ?{SPACE}{load} :{SPACE}" + \
                       (self.wrap(other, "r", COND) if other is not None else zero)
            self.declare(v, load)
            return
        plan: MemoryPlan = op.attrs["plan"]
        regs = v.layout.regs
        self.declare(v)
        if plan.vec == 1:
            value = self.element(ptr, plan.address_register("r"))
            if mask is not None and self.run_start(ptr, "r") != "r":
                # an address shared by a run of registers: computed outside the condition
                # (tc::load1_if), once for the run, not under each element's branch
                fill = self.text(other, "r") if other is not None else zero
                value = f"tc::load1_if({self.text(mask, 'r')}, {self.text(ptr, 'r')}, {fill})"
            elif mask is not None:
                fill = self.wrap(other, "r", COND) if other is not None else zero
                value = f"{self.wrap(mask, 'r', EQ)} ? {value} : {fill}"
            self.line(self.macros.register_assignments(regs, [(self.name(v), value)]))
            return
        vec = plan.vec
        if other is None:
            fill = f"tc::splat<{vec}>({zero})"
        elif not self._varies(other):
            fill = f"tc::splat<{vec}>({self.text(other, 'v')})"
        else:
            raise NotImplementedError("per-element `other` with vector loads")
        self.line(self.macros.vector_load(
            dst=self.name(v), regs=regs, vec=vec, ctype=c_type(v.dtype), fill=fill,
            ptr=self.text(ptr, plan.address_register("v")), mask_mode=plan.mask_mode,
            mask_first=self.text(mask, "v") if mask is not None else "",
            mask_last=self.text(mask, f"v + {vec - 1}") if mask is not None else "",
            lane_mask=self.text(mask, "v + k") if mask is not None else "",
            lane_ptr=self.element(ptr, "v + k")))

    def op_store(self, op: Op) -> None:
        ptr, value = op.operands[0], op.operands[1]
        mask = op.operands[2] if len(op.operands) > 2 else None
        if not ptr.type.is_block:
            guard = self.wrap(mask, "r", LAND) if mask else ""
            self.line(self.macros.scalar_store(self.element(ptr, "r"), self.text(value, "r"),
                                               guard))
            return
        plan: MemoryPlan = op.attrs["plan"]
        layout: Placement = ptr.layout
        owner = f"{self.lname(layout)}::owner()" if layout.owner_expr() != "true" else ""
        if plan.vec == 1:
            conds = [c for c in (owner, self.wrap(mask, "r", LAND) if mask else "") if c]
            self.line(self.macros.element_store(self.element(ptr, "r"), self.text(value, "r"),
                                                conds, regs=layout.regs))
            return
        vec = plan.vec
        guard = self.text(mask, "v") if mask is not None and plan.mask_mode == "vector" else ""
        # elements under 32 bits are packed into words: a predicated store keeps the packing
        # out from under the branch (layer norm at 1024 columns, 1 warp: +3%).  32-bit ones
        # keep the branch, which lets the compiler compute each vector just before its store
        # (softmax at 1024 columns, 2 warps: 31 registers, 44 with the predicated form), as
        # do tensor-core epilogues, where the accumulators already fill the registers
        predicated = (self.target.predicated_narrow_stores and value.dtype.itemsize < 4
                      and self.memory_bound)
        self.line(self.macros.vector_store(
            regs=layout.regs, vec=vec, ctype=c_type(value.dtype),
            lane_value=self.text(value, "v + k"), ptr=self.text(ptr, "v"), guard=guard,
            mask_mode=plan.mask_mode,
            mask_last=self.text(mask, f"v + {vec - 1}") if mask is not None else "",
            lane_mask=self.text(mask, "v + k") if mask is not None else "",
            lane_ptr=self.element(ptr, "v + k"), predicated=predicated))

    def op_device_assert(self, op: Op) -> None:  # present in debug builds only (passes.dce)
        cond = op.operands[0]
        self.line(self.macros.device_assert(
            self.text(cond), op.attrs["msg"],
            os.path.basename(op.loc.file), op.loc.line,
            regs=cond.layout.regs if cond.type.is_block else None))

    def op_print(self, op: Op) -> None:
        """tl.device_print: printf, one line per element, by the thread that owns it."""
        from tilecc.transpiler import print_format as F

        prefix = op.attrs["prefix"]
        if not op.operands:
            self.line(self.macros.device_print(F.NO_VALUES_FORMAT, prefix))
        for n, v in enumerate(op.operands):
            fmt = F.line_format(v.type.shape, v.dtype, op.attrs["hex"], n, len(op.operands))
            value = self._printf_value(v, op.attrs["hex"])
            if not v.type.is_block:
                self.line(self.macros.device_print(fmt, prefix, value))
                continue
            layout = self.lname(v.layout)
            coords = [f"{layout}::coord{i}(r)" for i in range(len(v.type.shape))]
            owner = f"{layout}::owner()" if v.layout.owner_expr() != "true" else None
            self.line(self.macros.device_print(fmt, prefix, value, coords, v.layout.regs, owner))

    def _printf_value(self, v: Value, hex: bool) -> str:
        """`v`'s element r as printf's variadic argument for `print_format.value_format`."""
        text = self.text(v, "r")
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
        pairs = [(t, v) for t, v in zip(targets, values) if self.root(v) != self.root(t)]
        if self._needs_staging(pairs):  # a later value reads a variable assigned before it
            staged = []
            for t, v in pairs:
                tmp = Value(v.type, None)
                tmp.layout = v.layout
                self.names[tmp.id] = self.fresh(f"{self.name(t)}_next")
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
            text = self.text(v)
            if any(re.search(rf"\b{re.escape(name)}\b", text) for name in assigned):
                return True
            assigned.append(self.name(t))
        return False

    def _assign_into(self, target: Value, v: Value, declare: bool) -> None:
        if target.type.is_block:
            if declare:
                self.declare(target)
            self.line(self.macros.register_assignments(
                target.layout.regs, [(self.name(target), self.text(v, "r"))]))
        elif declare:
            self.declare(target, self.text(v), const=True)
        else:
            self.line(self.macros.assignment(self.name(target), self.text(v)))

    def declare_slots(self, results: list[Value], inits: list[Value] | None) -> None:
        for i, res in enumerate(results):
            if self.root(res) != res.id:
                continue  # reuses the initial value's variable
            if inits is None:
                self.declare(res)
            elif res.type.is_block:
                self.declare(res)
                self.line(self.macros.register_assignments(
                    res.layout.regs, [(self.name(res), self.text(inits[i], "r"))]))
            else:
                self.declare(res, self.text(inits[i]))

    def op_for(self, op: Op) -> None:
        self.hoist_invariant_operands(op)
        if "pipeline" in op.attrs:
            return self.op_for_pipelined(op)
        lo, hi, step = op.operands[:3]
        self.declare_slots(op.results, op.operands[3:])
        body = op.regions[0]
        iv = body.args[0]
        step_text = self.text(step)
        index, start, stop = self.name(iv), self.text(lo), self.text(hi)
        self.line(self.macros.for_loop(
            c_type(iv.dtype), index, start, ">" if op.attrs["step_sign"] < 0 else "<", stop,
            step_text, self.nested(body, op.results, body.args[1:])))

    def op_while(self, op: Op) -> None:
        self.declare_slots(op.results, op.operands)
        before, body = op.regions
        emitted = [o for o in before.ops if not (o.results and o.results[0].id in self.inline)]
        before_lines = None  # the condition's own statements, where it has any
        if emitted:
            with self.captured() as before_lines:
                self.region(before)
        cond = self.text(before.yields[0])
        self.line(self.macros.while_loop(cond, before_lines,
                                         self.nested(body, op.results, body.args)))

    def op_if(self, op: Op) -> None:
        self.declare_slots(op.results, None)
        cond = self.text(op.operands[0])
        then = self.nested(op.regions[0], op.results)
        els, otherwise = op.regions[1], None
        if els.yields or any(not (o.results and o.results[0].id in self.inline) for o in els.ops):
            otherwise = self.nested(els, op.results)
        self.line(self.macros.branch(cond, then, otherwise))

    def nested(self, region: Region, targets: list[Value], carried: list[Value] = ()
               ) -> list[str]:
        """The region's statements, then what it yields assigned to `targets` (`carried`:
        a loop's variables, which may be updated early): lines for a template to place
        one level in."""
        with self.same_last_statement(), self.captured() as lines:
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
            if op is None or id(op) not in position or y.id not in self.inline or \
                    self.root(y) == self.root(target):
                continue
            at = position[id(op)]
            later = [o for o in region.ops[at + 1:]]
            reads_later = any(old.id in {v.id for v in o.operands} or
                              any(old.id in {v.id for v in x.operands}
                                  for r in o.regions for x in ir.walk(r)) for o in later)
            other_yields = any(old.id in self._reads(v) for v in region.yields if v is not y)
            if not reads_later and not other_yields:
                early[y.id] = target
        return early

    def _reads(self, v: Value) -> set[int]:
        """Ids of the values an inlined expression of `v` reads."""
        out, todo = set(), [v]
        while todo:
            x = todo.pop()
            out.add(x.id)
            if x.id in self.inline and x.owner is not None:
                todo.extend(x.owner.operands)
        return out


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
            c_name = r.name(p.value)
            params.append((f"{r.ctype(p.value)} {c_name}", p.name if c_name != p.name else ""))
    for m in kernel.tensor_maps:
        what = m.param if m.args is None else f"{m.param}'s descriptor"
        params.append((f"const __grid_constant__ tc::TensorMap {r.map_names[m.key]}",
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
    r.name_user_values(kernel)
    r.region(kernel.body)
    body = r.finish_pool(r.lines)
    declarations, shared = r.shared_memory_declarations()
    body = declarations + body
    if not kernel.fp_fusion and target.no_contract_pragma:  # clang's contraction, off
        body = ["  #pragma clang fp contract(off)"] + body
    params = _parameters(kernel, r)
    renamed = [f"{py} -> {c}" for py, c in r.renamed.items()]
    if kernel.symbol != kernel.name:
        renamed.insert(0, f"{kernel.name} -> {kernel.symbol} (the kernel)")
    memory, dots = _plan_notes(kernel)
    threads = kernel.num_warps * target.warp_size
    held = {v.id for op in kernel.walk() for v in op.results
            if v.id not in r.inline and v.id not in r.recomputed}
    # a register limit the user set replaces the occupancy tilecc would ask for
    maxnreg = kernel.maxnreg if target.register_limit_flag else None
    min_programs = programs_per_sm(kernel, target, held) if occupancy and not maxnreg else None
    source = f"{os.path.basename(kernel.loc.file)}:{kernel.loc.line}"
    layouts = []
    for p, name in r.layout_names.items():
        layouts.append({"name": name, "regs": p.regs, "description": p.describe(),
                        "coords": [p.coord_expr(i, "r") for i in range(len(p.shape))],
                        "owner": joined(p.owner_terms(), " && ") or "true"})
    text = environment().get_template("c_like/kernel.j2").render(
        name=kernel.name, symbol=kernel.symbol, renamed=renamed, version=__version__,
        source=source, target=target.describe(),
        num_warps=kernel.num_warps, warp_size=target.warp_size, threads=threads,
        specialization=specialization, memory=memory, params=params, body=body,
        layouts=layouts, conversions=conversions, dots=dots, min_programs=min_programs,
        maxnreg=maxnreg)
    text = lay_out(text)  # lines of at most 100 columns, broken where they were marked
    if check:
        assert ir.fingerprint(kernel) == before, (
            f"rendering {kernel.name} changed its IR: a decision the renderer took belongs "
            "in a pass (passes.settle)")
    return Rendered(text, shared.dynamic, shared.static, tuple(shared.uses), min_programs,
                    frozenset(r.allocated | set(r.names.values())))
