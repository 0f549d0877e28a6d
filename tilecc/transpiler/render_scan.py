"""Rendering of scans (tl.cumsum, tl.cumprod, tl.associative_scan): `Scans`, owned by
the block family's writer (`render_blocks.BlockWriter`), whose shared-memory pool, combine
lambda, register and line-slot arithmetic it shares with reductions.

A scan runs in registers where the operands' placement allows (`RegisterScan`): the
elements of a line along the axis sit, in scan order, in runs of a thread's registers
(`chunk` of them per run, `reps` runs: the axis' tile repeats), across the lanes along the
axis and across the warps along it.  Each thread scans its runs; the lanes along the axis
scan their run totals by shuffles (up; down for reverse=True); the warps along the axis
exchange their totals through a small shared array; each element then takes the prefix of
what comes before its run.  The combine function may be any, of several values: it is
applied only in scan order, never on a made-up identity.

The block goes through shared memory instead (`scan_in_shared`) where the operands and
results are not all in one placement (their registers would not line up; the layout pass
gives a scan's operands and results one placement, so that is a safeguard), and where a
thread holds too many of the operands' values to keep them all in registers
(`REGISTER_SCAN_VALUES`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from math import prod

from tilecc.transpiler.ir import Op
from tilecc.transpiler.passes.placement import Placement, Slice
from tilecc.transpiler.render_places import _packed_arrays, _reduced_register, _row_major
from tilecc.transpiler.target import c_type


@dataclass(frozen=True)
class RegisterScan:
    """Where the lines of a scan along `axis` of `src` live, in scan order (reverse=True:
    from the axis' end); the C index expressions the kernel uses, and their parts."""
    src: Placement
    axis: int
    reverse: bool

    @cached_property
    def e(self) -> int:  # the axis, in the base encoding's terms
        return self.src.kept[self.axis]

    @cached_property
    def spt(self) -> int:  # consecutive elements of a run
        return self.src.base.spt[self.e]

    @cached_property
    def chunk(self) -> int:  # of which distinct (an axis shorter than a run repeats)
        return min(self.spt, self.src.full[self.e])

    @cached_property
    def reps(self) -> int:  # runs of each thread along the axis (the tile repeats)
        return self.src.reg_sizes[self.e] // self.spt

    @cached_property
    def lanes(self) -> int:  # distinct lanes along the axis (more hold copies)
        return self.src.unique_lanes(self.e)

    @cached_property
    def lane_stride(self) -> int:
        return self.src.lstride(self.e)

    @cached_property
    def warps(self) -> int:  # distinct warps along the axis (more hold copies)
        return self.src.unique_warps(self.e)

    @cached_property
    def n_out(self) -> int:  # lines a thread holds
        return self.src.regs // self.src.reg_sizes[self.e]

    @cached_property
    def lines(self) -> Placement | None:
        """The placement of one value per line (the axis dropped); None for a 1-D block."""
        shape = self.src.shape
        if len(shape) == 1:
            return None
        return Placement(Slice(self.src.enc, self.axis), shape[:self.axis] + shape[self.axis + 1:])

    def register(self, o: str, q: str, j: str) -> str:
        """The register holding line `o`'s element `j` of run `q`, both counted in scan
        order (each "0" or a C variable)."""
        step, last = self.spt, (self.reps - 1) * self.spt + self.chunk - 1
        terms = [f"{q} * {step}" if step > 1 else q] if q != "0" else []
        terms += [j] if j != "0" else []
        if self.reverse:
            at = f"{last} - {' - '.join(terms)}" if terms else str(last)
        else:
            at = " + ".join(terms) or "0"
        return self.at(o, at)

    def at(self, o: str, along: str) -> str:
        """The register holding line `o`'s element at register position `along` of the axis."""
        base = _reduced_register(self.src, self.e, self.lines, o, "0")
        stride = self.src.rstride(self.e)
        if along == "0":
            return base
        if along.isdigit():
            along = str(int(along) * stride)
        elif stride > 1:
            along = f"{along} * {stride}" if along.isidentifier() else f"({along}) * {stride}"
        return along if base == "0" else f"{base} + {along}"

    def _place(self, along: str, count: int, held: int) -> str:
        """The place in scan order among `count` distinct lanes (or warps) along the axis,
        of the one whose component is `along` (of `held`: beyond `count`, copies)."""
        own = along if along == "0" or held == count else f"{along} % {count}"
        return f"{count - 1} - {own}" if self.reverse else own

    @property
    def lane_pos(self) -> str:
        return self._place(self.src.lane_along(self.e), self.lanes, self.src.base.tpw[self.e])

    @property
    def warp_pos(self) -> str:
        return self._place(self.src.warp_along(self.e), self.warps, self.src.base.wpc[self.e])

    @property
    def last_lane(self) -> str:
        """The lane holding the run total of this lane's line (the last place)."""
        sign = "-" if self.reverse else "+"
        step = f" * {self.lane_stride}" if self.lane_stride > 1 else ""
        return f"tc::lane_id() {sign} ({self.lanes - 1} - lane_pos){step}"

    @cached_property
    def lane_exclusive(self) -> bool:
        """Whether a run's elements take the lanes' prefix before theirs (a run of one
        element is its lane's inclusive scan already)."""
        return self.lanes > 1 and self.chunk > 1

    def line_run(self, o: str, q: str) -> str:
        """Run `q` of line `o`, counted over the thread's lines and runs."""
        terms = ([f"{o} * {self.reps}" if self.reps > 1 else o] if o != "0" else []) + \
            ([q] if q != "0" else [])
        return " + ".join(terms) or "0"

    def run_totals(self, accs: list[str]) -> list[str]:
        """The total of the run across the lanes along the axis, from their scanned `accs`."""
        return [f"tc::shfl({a}, {self.last_lane})" if self.lanes > 1 else a for a in accs]

    @property
    def shuffle(self) -> str:
        """The shuffle that brings the value of the lane before in scan order."""
        return "tc::shfl_down" if self.reverse else "tc::shfl_up"


def _into(outs: list[str], firsts: list[str], seconds: list[str]) -> str:
    """`outs` = combine(firsts, seconds), in one statement."""
    if len(outs) == 1:
        return f"{outs[0]} = combine({firsts[0]}, {seconds[0]});"
    return f"combine({', '.join(firsts + seconds + outs)});"


def _assign(outs: list[str], values: list[str]) -> str:
    return " ".join(f"{o} = {v};" for o, v in zip(outs, values))


# The most values a thread may hold of a scan's operands for it to run in registers: the
# operands and results stay in registers from the first run's scan to the last run's
# prefix, which past this crowds out the kernel's other values (a 64 x 256 block on 4
# warps, 128 values a thread: 166 registers for one tl.cumsum, spills for two operands);
# through shared memory a thread holds a few values at a time.
REGISTER_SCAN_VALUES = 64

# The most shared-memory reads a thread may make for its runs' prefixes straight after the
# warps write their run totals (one barrier): each run reads the entries before it in its
# line one at a time (a 64 x 16 fp32 cumsum on 4 warps: 4 lines x 2 runs x 7 entries, as
# Triton's exchange reads them).  Past this, one thread per entry combines its exclusive
# prefix once into a second array, and each run reads one (a second barrier).
DIRECT_PREFIX_READS = 64


class Scans:
    """The scans of the block family, written for its writer (`blocks`): through its
    pool, combine lambda and slot arithmetic, and its emitter, names and context.  No
    state of their own."""

    def __init__(self, blocks):
        self.blocks = blocks

    # the parts the block writer shares with every writer
    ctx = property(lambda self: self.blocks.ctx)
    out = property(lambda self: self.blocks.out)
    names = property(lambda self: self.blocks.names)

    def write(self, op: Op) -> None:
        """In registers, except (through shared memory) where the operands and results are
        not all in one placement (their registers would not line up; the layout pass does
        not make that today) or where a thread holds more than REGISTER_SCAN_VALUES."""
        layouts = {v.layout for v in op.operands + op.results}
        held = op.operands[0].layout.regs * len(op.operands)
        if len(layouts) == 1 and held <= REGISTER_SCAN_VALUES:
            self.scan_in_registers(op)
        else:
            self.scan_in_shared(op)

    def scan_in_registers(self, op: Op) -> None:
        xs, results = op.operands, op.results
        plan = RegisterScan(xs[0].layout, op.attrs["axis"], op.attrs["reverse"])
        carried = plan.reps > 1 or plan.warps > 1
        # each result is scanned in place: one read by none is kept only where the prefix
        # step reads it (a combine of several values needs them all)
        kept = [res for res in results if self.ctx.uses.get(res.id, 0) > 0
                or carried or plan.lane_exclusive]
        for res in kept:
            self.blocks.core.declare(res)
        with self.out.captured() as combine:
            self.blocks.combine_lambda(op.regions[0], len(xs))
        sfx = [""] if len(xs) == 1 else [str(i) for i in range(len(xs))]
        names = lambda base: [f"{base}{s}" for s in sfx]  # noqa: E731
        o, q = "o" if plan.n_out > 1 else "0", "chunk" if plan.reps > 1 else "0"
        j = "j" if plan.chunk > 1 else "0"
        fused = plan.warps == 1  # no barrier: each run's prefix is known at once
        prevs, run_totals = names("lane_prev"), names("run_total")
        accs, prefixes, carries = names("acc"), names("run_prefix"), names("run_carry")
        ys, text = [self.names.name(res) for res in results], self.blocks.exprs.text
        reg0, applied = plan.register(o, q, "0"), [f"{y}[{plan.register(o, q, j)}]" for y in ys]
        with self.out.captured() as wait:
            warps = None if fused else self._scan_warps(plan, xs, o, q, names)
        stored = [(self.names.name(res), acc) for res, acc in zip(results, accs) if res in kept]
        at_j = [f"{y}[{plan.register(o, q, j)}]" for y, _ in stored]
        self.out.line(self.ctx.block_macros.scan_registers(dict(
            combine=combine, wait=wait, plan=plan, fused=fused, carried=carried,
            later=f"{q} > 0" if q != "0" else "false", comment=self._scan_comment(op, plan),
            prefix_needed=carried or plan.lane_exclusive, lane_exclusive=plan.lane_exclusive,
            lanes_final=plan.lanes > 1 and not plan.lane_exclusive,
            arrays=[dict(ctype=c_type(x.dtype), acc=a, x0=text(x, reg0), prev=p,
                         prefix=pf, carry=c, other=f"{a}_other", run_total=rt,
                         run_total_value=rv, **(warps["arrays"][i] if warps else {}))
                    for i, (x, a, p, pf, c, rt, rv) in enumerate(zip(
                        xs, accs, prevs, prefixes, carries, run_totals,
                        plan.run_totals(accs)))],
            warps=warps,
            first_stores=_assign([f"{y}[{reg0}]" for y, _ in stored], [a for _, a in stored]),
            step=_into(accs, accs, [text(x, plan.register(o, q, j)) for x in xs]),
            step_stores=_assign(at_j, [a for _, a in stored]),
            lane_step=_into(accs, [f"{a}_other" for a in accs], accs),
            fold_lane=(_into(prefixes, prefixes, prevs), _assign(prefixes, prevs)),
            apply_lane=_into(applied, prevs, applied),
            grow_carry=(_into(carries, carries, run_totals), _assign(carries, run_totals)),
            apply=_into(applied, prefixes if carried else prevs, applied),
            copies=[f"{y}[{plan.at(o, 'j')}] = {y}[{plan.at(o, f'j % {plan.chunk}')}];"
                    for y, _ in stored] if plan.chunk < plan.spt else [])))

    def _scan_warps(self, plan: RegisterScan, xs, o: str, q: str, names) -> dict:
        """The warps along the axis exchange their run totals through a shared array per
        operand, [line][run][warp] (in scan order), written by the last lane of each as each
        run is scanned.  After a barrier, where that makes at most DIRECT_PREFIX_READS
        reads a thread (`direct`), each run reads the entries before it in its line one at
        a time, under the condition that it is before it (a 64 x 16 fp32 cumsum on 4 warps:
        32 registers and 28 reads, as Triton's; reading the line once for all the runs
        vectorizes the reads and keeps it all in registers: 34 registers, and at 42 two
        waves of programs where one had done).  Otherwise the entries' exclusive prefixes go
        into a second array: where lines hold 8 entries or more and there are no more lines
        than threads (`by_line`), a thread a line folds its entries in order; else one
        thread per entry combines those before it in its line.  After another barrier each
        thread reads one prefix per run it holds."""
        lines = prod(plan.lines.shape) if plan.lines is not None else 1
        per_line = plan.reps * plan.warps
        entries = lines * per_line
        # lines an odd number of entries apart: the lanes of a warp reading (or writing) the
        # same entry of different lines touch different banks (8 entries apart, the 4 lines
        # a 64 x 16 cumsum's warp holds fell in one bank: 4-way conflicts, 30% slower)
        stride = per_line | 1
        direct = plan.n_out * plan.reps * (per_line - 1) <= DIRECT_PREFIX_READS
        threads = self.ctx.kernel.num_warps * self.ctx.target.warp_size
        # long lines, no more than the threads: a thread a line folds its entries in order
        # (per_line - 1 combines a line, where a thread an entry does up to per_line - 2 an
        # entry: a scan of pairs over 64 x 64 on 4 warps, 16 entries a line, 0.81x Triton's
        # speed that way)
        by_line = not direct and per_line >= 8 and lines <= threads
        offsets, total = _packed_arrays([(lines * stride, x.dtype.itemsize) for x in xs]
                                        * (1 if direct else 2))
        base = self.blocks.pool_step(total)
        slot = self.blocks.linear(plan.lines, o, _row_major(plan.lines.shape)) \
            if plan.lines is not None else "0"
        at = (f"({slot}) * {stride} + " if slot != "0" else "") + \
            (f"{q} * {plan.warps} + " if q != "0" else "")
        totals, befores = names("warp_totals"), names("runs_before")
        sums, prefixes = names("before"), names("run_prefix")
        entry_values = names("entry")
        run_before = [f"{m}[{q}]" for m in sums]
        return dict(
            base=base, entries=entries, per_line=per_line, threads=threads, direct=direct,
            lines=lines, by_line=by_line,
            line_start=f"({slot}) * {stride}" if slot != "0" else "0", stride=stride,
            place=f"{q} * {plan.warps} + warp_pos" if q != "0" else "warp_pos",
            read_entry=" ".join(f"const {c_type(x.dtype)} {e} = {t}[line_start + earlier];"
                                for x, e, t in zip(xs, entry_values, totals)),
            first_entry=_assign(run_before, entry_values),
            fold_entry=_into(run_before, run_before, entry_values),
            take_direct=" ".join(f"const {c_type(x.dtype)} {p} = {r};"
                                 for x, p, r in zip(xs, prefixes, run_before)),
            write=(f"if (lane_pos == {plan.lanes - 1}) " if plan.lanes > 1 else "") + "{ " +
            " ".join(f"{t}[{at}warp_pos] = {a};" for t, a in zip(totals, names("acc"))) + " }",
            arrays=[dict(totals=t, offset=off, befores=b, before=m,
                         before_offset=None if direct else offsets[len(xs) + k])
                    for k, (t, off, b, m) in enumerate(zip(totals, offsets, befores, sums))],
            fold=_into(sums, sums, [f"{t}[line_start + earlier]" for t in totals]),
            fold_in_order=_into(sums, sums, [f"{t}[line_start + place]" for t in totals]),
            keep=" ".join(f"{b}[line_start + place] = {m};" for b, m in zip(befores, sums)),
            take=" ".join(f"const {c_type(x.dtype)} {p} = {b}[{at}warp_pos];"
                          for x, p, b in zip(xs, prefixes, befores)))

    def scan_in_shared(self, op: Op) -> None:
        """The block through shared memory: one thread scans each line, or several each a
        chunk of it (then the chunks before theirs are added)."""
        xs, results = op.operands, op.results
        # every result is read back with the first one's layout
        assert all(r.layout == results[0].layout for r in results[1:]), \
            "scan: results placed apart"
        axis, reverse = op.attrs["axis"], op.attrs["reverse"]
        shape = xs[0].type.shape
        strides = _row_major(shape)
        n, inner = shape[axis], strides[axis]
        for res in results:
            if self.ctx.uses.get(res.id, 0) > 0:
                self.blocks.core.declare(res)
        with self.out.captured() as combine:
            self.blocks.combine_lambda(op.regions[0], len(xs))
        lines, threads = prod(shape) // n, self.ctx.kernel.num_warps * self.ctx.target.warp_size
        # threads sharing a line: each scans a chunk of at least 2, in parallel
        parts = min(threads // lines, n // 2) if lines < threads else 1
        parts = 1 << (parts.bit_length() - 1) if parts >= 2 else 1
        sizes = [(prod(shape), x.dtype.itemsize) for x in xs]
        if parts > 1:  # and each chunk's total
            sizes += [(lines * parts, x.dtype.itemsize) for x in xs]
        offs, total = _packed_arrays(sizes)
        with self.out.captured() as wait:
            base = self.blocks.pool_step(total)
        step = f" * {inner}" if inner > 1 else ""
        pos = (lambda i: f"first + ({n - 1} - {i}){step}") if reverse else \
            (lambda i: f"first + {i}{step}")  # noqa: E731
        if parts > 1:
            pos = (lambda at: lambda i: at(f"(part * {n // parts} + {i})"))(pos)
        accs = ["acc"] if len(xs) == 1 else [f"acc{k}" for k in range(len(xs))]
        carries = ["carry"] if len(xs) == 1 else [f"carry{k}" for k in range(len(xs))]
        src_lin = self.blocks.linear(xs[0].layout, "r", strides)
        dst_lin = self.blocks.linear(results[0].layout, "r", strides)
        macros = self.ctx.block_macros
        macro = macros.scan_chunked if parts > 1 else macros.scan
        self.out.line(macro(dict(
            combine=combine, wait=wait, base=base, n=n, axis=axis, lines=lines,
            threads=threads, parts=parts, chunk=n // parts, pos0=pos("0"), pos_part0=pos("0"),
            first=f"line / {inner} * {n * inner} + line % {inner}" if inner > 1
            else f"line * {n}",
            arrays=[dict(ctype=c_type(x.dtype), offset=offs[k], acc=accs[k], carry=carries[k],
                         total_offset=offs[len(xs) + k] if parts > 1 else 0)
                    for k, x in enumerate(xs)],
            src_regs=xs[0].layout.regs,
            writes=[f"line{k}[{src_lin}] = {self.blocks.exprs.text(x, 'r')};"
                    for k, x in enumerate(xs)],
            combine_call=self.blocks.combine_call(accs, [f"line{k}[{pos('step')}]"
                                                         for k in range(len(xs))]),
            stores=[f"line{k}[{pos('step')}] = {a};" for k, a in enumerate(accs)],
            carry_call=self.blocks.combine_call(carries, [f"total{k}[line * {parts} + j]"
                                                          for k in range(len(xs))]),
            dst_regs=results[0].layout.regs,
            reads=[f"{self.names.name(res)}[r] = line{k}[{dst_lin}];"
                   for k, res in enumerate(results) if self.ctx.uses.get(res.id, 0) > 0])))

    @staticmethod
    def _scan_comment(op: Op, plan: RegisterScan) -> str:
        shape = " x ".join(map(str, op.operands[0].type.shape))
        steps = [f"in registers along axis {plan.axis} of a {shape} block"
                 + (" (from its end)" if plan.reverse else "")
                 + f": each thread scans its {plan.chunk} consecutive element"
                 + ("s" if plan.chunk > 1 else "")
                 + (f" in each of {plan.reps} runs" if plan.reps > 1 else "")]
        if plan.lanes > 1:
            steps.append(f"the {plan.lanes} lanes along the axis scan their totals by "
                         "shuffles")
        if plan.warps > 1:
            steps.append(f"the {plan.warps} warps along the axis exchange theirs through "
                         "shared memory")
        steps.append("each element takes the prefix of what comes before")
        return "; ".join(f"{i}. {s}" for i, s in enumerate(steps, 1))
