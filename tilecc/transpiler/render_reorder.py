"""Rendering of the ops that reorder a block's elements: flip, cat, gather, histogram.

Written by `ReorderWriter`, which asks the block writer (`render_blocks.BlockWriter`)
for its shared-memory `exchange` and pool steps.  Each moves data once through shared memory: the
threads write what they hold, wait at a barrier, and read what their result needs.
(Sort, topk and bitonic_merge need nothing here: they are built from reshapes, xor
reductions and element-wise ops, `builtins_sort`.)
"""

from __future__ import annotations

from math import prod

from tilecc.transpiler.ir import Op
from tilecc.transpiler.passes.layouts import Placement
from tilecc.transpiler.render_places import _row_major
from tilecc.transpiler.render_writer import Writer
from tilecc.transpiler.target import c_type


class ReorderWriter(Writer):
    """flip, cat, gather, histogram (each through the block writer's pool) and
    map_elementwise (a lambda of the mapped function).  It keeps no state of its own."""

    def _position(self, p: Placement, idx: str, shape: tuple[int, ...],
                  coord: dict[int, str] | None = None) -> str:
        """Row-major position in a block of `shape` of register `idx`'s element of `p`,
        with the coordinates along the axes in `coord` replaced by those expressions."""
        coord = coord or {}
        terms = []
        for axis, stride in enumerate(_row_major(shape)):
            if axis in coord:
                c = coord[axis]
            elif p.shape[axis] == 1:
                continue
            else:
                c = f"{self.exprs.lname(p)}::coord{axis}({idx})"
            terms.append(c if stride == 1 else f"({c}) * {stride}" if " " in c
                         else f"{c} * {stride}")
        return " + ".join(terms) or "0"

    def op_flip(self, op: Op) -> None:
        x, y, axis = op.operands[0], op.result, op.attrs["axis"]
        shape = x.type.shape
        last = shape[axis] - 1
        mirrored = f"{last} - {self.exprs.lname(y.layout)}::coord{axis}(r)"
        self.blocks.exchange(op, [(x, self._position(x.layout, "r", shape))],
                             [(y, self._position(y.layout, "r", shape, {axis: mirrored}))],
                             f"flip axis {axis}")

    def op_cat(self, op: Op) -> None:
        a, b = op.operands
        n = a.type.shape[0]
        writes = [(a, self._position(a.layout, "r", a.type.shape)),
                  (b, f"{n} + {self._position(b.layout, 'r', b.type.shape)}")]
        reads = [(op.result, self._position(op.result.layout, "r", op.result.type.shape))]
        self.blocks.exchange(op, writes, reads, "concatenate")

    def op_gather(self, op: Op) -> None:
        src, index, res = op.operands[0], op.operands[1], op.result
        axis = op.attrs["axis"]
        n = src.type.shape[axis]
        # the layouts pass gives the indices the result's placement: each thread reads
        # the elements its result registers need, by the indices in the same registers
        assert index.layout == res.layout, "gather: index and result placed apart"
        self.core.declare(res)
        with self.out.captured() as wait:
            base = self.blocks.pool_step(prod(src.type.shape) * src.dtype.itemsize)
        write = dict(regs=src.layout.regs, pos=self._position(src.layout, "r", src.type.shape),
                     value=self.exprs.text(src, "r"))
        # an index outside the axis reads another element of it (Triton leaves the
        # result undefined), never outside the buffer
        at = self._position(res.layout, "r", src.type.shape,
                            {axis: f"(static_cast<int>({self.exprs.text(index, 'r')}) & {n - 1})"})
        self.out.line(self.ctx.block_macros.exchange(dict(
            comment=f"gather along axis {axis}: the source through shared memory", wait=wait,
            base=base, ctype=c_type(src.dtype), writes=[write],
            reads=[dict(regs=res.layout.regs, pos=at, name=self.names.name(res))])))

    def op_histogram(self, op: Op) -> None:
        x, res, bins = op.operands[0], op.result, op.attrs["num_bins"]
        mask = op.operands[1] if len(op.operands) > 1 else None
        assert mask is None or mask.layout == x.layout, "histogram: mask placed apart"
        p: Placement = x.layout
        self.core.declare(res)
        with self.out.captured() as wait:
            base = self.blocks.pool_step(bins * 4)
        # each element counted once (by the thread and register that own it); values
        # outside 0 .. num_bins-1 are not counted (as unsigned, a negative one is huge)
        conds = [c for c in (
            f"{self.exprs.lname(p)}::owner()" if p.owner_expr() != "true" else "",
            f"(r & {p.reg_owner_mask}) == r" if p.replicated_registers else "",
            self.exprs.text(mask, "r") if mask is not None else "",
            f"static_cast<unsigned long long>({self.exprs.text(x, 'r')}) < {bins}ull") if c]
        self.out.line(self.ctx.block_macros.histogram(dict(
            bins=bins, wait=wait, base=base,
            threads=self.ctx.kernel.num_warps * self.ctx.target.warp_size,
            regs=p.regs, conds=conds, value=self.exprs.text(x, "r"), res_regs=res.layout.regs,
            at=self._position(res.layout, "r", res.type.shape), name=self.names.name(res))))

    # --- map_elementwise ----------------------------------------------------------------------
    def op_map(self, op: Op) -> None:
        """A lambda of the mapped function, called on `pack` registers at a time: its
        results through reference parameters (`out0`, ...), one per result and element."""
        region, k = op.regions[0], op.attrs["pack"]
        results = op.results
        assert all(r.layout == results[0].layout for r in results[1:]), \
            "map_elementwise: results placed apart"
        regs = results[0].layout.regs
        for res in results:
            self.core.declare(res)
        with self.out.block():
            self.out.line(f"// {op.attrs['fn']} on each element"
                          + (f", {k} at a time" if k > 1 else "") + ": its branches per element")
            with self.names.own_names():
                with self.out.lambda_body() as body:
                    self.core.region(region)
                    outs = [f"out{i} = {self.exprs.text(y)};" for i, y in enumerate(region.yields)]
                params = [f"{c_type(a.dtype)} {self.names.name(a)}" for a in region.args]
                params += [f"{c_type(y.dtype)}& out{i}" for i, y in enumerate(region.yields)]
            fn = self.names.fresh((op.attrs["fn"].lstrip("_") or "mapped") + "_fn")
            with self.out.block(f"auto {fn} = []({', '.join(params)}) {{", "};"):
                self.out.extend(body)
                for line in outs:
                    self.out.line(line)
            self._map_calls(op, fn, regs, k)

    def _map_calls(self, op: Op, fn: str, regs: int, k: int) -> None:
        """The mapped lambda `fn` called on registers r .. r+k-1 of the operands; past the
        last register, the last again (its results dropped into spares)."""
        results = op.results
        spares = []
        if regs % k:
            for res in results:
                spares.append(self.names.fresh("spare"))
                self.out.line(f"{c_type(res.dtype)} {spares[-1]}[{k}];")

        def reg(j: int) -> str:
            return "r" if j == 0 else f"r + {j}" if regs % k == 0 else \
                f"(r + {j} < {regs} ? r + {j} : {regs - 1})"

        args = [self.exprs.text(v, reg(j)) for v in op.operands for j in range(k)]
        outs_at = []
        for i, res in enumerate(results):
            for j in range(k):
                outs_at.append(f"{self.names.name(res)}[{reg(j)}]" if j == 0 or not spares
                               else f"*(r + {j} < {regs} ? &{self.names.name(res)}[r + {j}] : "
                                    f"&{spares[i]}[{j}])")
        self.out.line("#pragma unroll")
        self.out.line(f"for (int r = 0; r < {regs}; r += {k}) {fn}({', '.join(args + outs_at)});")
