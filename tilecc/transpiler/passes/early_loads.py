"""Loads first: in a pipelined loop's body (passes.pipeline), the loads the pipeline does
not copy — a row's statistics, a group's scales, read into registers every iteration —
move to the top of the body, ahead of the products.

Written where the kernel reads them, such a load is issued after the products before it
have been waited for, and the next one stalls on it: in attention's backward pass the
log-sum-exp and delta rows, loaded beside four warpgroup MMAs that each wait, cost the
dK/dV kernel a sixth of its time on an H100-class GPU (measured with the loads removed).
At the top of the body their latency overlaps the products.

A load moves with the index arithmetic it reads (pure values written as expressions where
they are read, never kept in a variable, and scalars: moving them costs a register at
most), only when all it
reads is ready at the top (defined before the loop, or the loop's own arguments), and
never past an op with side effects (an atomic, a barrier, a branch or loop) but a store
through another pointer argument than its own (`pipeline.Origins`; arguments are taken not
to overlap, as the pipeline's copies take them): a chunked attention stores its state
first in each iteration, and the decays it loads after it waited out their latency.
Scalar loads move too.  Run by passes.settle, which knows which values are written as
expressions.  The interpreter runs the same order; nothing a moved load reads is written
in between.
"""

from __future__ import annotations

from tilecc.transpiler.ir import Kernel, Op
from tilecc.transpiler.passes.dce import REMOVABLE
from tilecc.transpiler.passes.emission import Emission
from tilecc.transpiler.passes.pipeline import Origins


def loads_first(kernel: Kernel, emission: Emission) -> None:
    origins = Origins(kernel)
    for op in kernel.walk():
        p = op.attrs.get("pipeline") if op.kind == "for" else None
        if p is not None:
            _reorder(op, {id(ld) for ld in p.loads} | p.slice_ops, emission, origins)


def _reorder(loop: Op, pipelined: set[int], emission: Emission, origins: Origins) -> None:
    body = loop.regions[0]
    defined = {r.id: o for o in body.ops for r in o.results}  # values made in the body
    expressions = emission.inline | emission.recomputed
    moved: set[int] = set()  # id() of the ops that move

    def slice_of(v, into: list[Op]) -> bool:
        """Whether `v` is ready at the top; the body ops it needs, added to `into`."""
        o = defined.get(v.id)
        if o is None or id(o) in moved:
            return True
        if o.kind not in REMOVABLE or len(o.regions) or \
                (v.id not in expressions and v.type.is_block):
            return False  # (a scalar's variable moves with it: a register at most)
        into.append(o)
        return all(slice_of(x, into) for x in o.operands)

    stored: set[int] = set()  # id() of the arguments the stores passed write through
    for o in body.ops:
        if o.kind == "load" and id(o) not in pipelined and o.results:
            source = origins.argument(o.operands[0]) if stored else None
            needed: list[Op] = []
            if (not stored or (source is not None and id(source) not in stored)) and \
                    all(slice_of(x, needed) for x in o.operands):
                moved |= {id(x) for x in needed} | {id(o)}
        elif o.kind == "store" and origins.argument(o.operands[0]) is not None:
            stored.add(id(origins.argument(o.operands[0])))
        elif o.kind not in REMOVABLE and o.kind != "load":
            break  # side effects: nothing after them moves above them
    if moved and any(id(o) not in moved for o in body.ops[:len(moved)]):
        body.ops[:] = [o for o in body.ops if id(o) in moved] + \
            [o for o in body.ops if id(o) not in moved]
