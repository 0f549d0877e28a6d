"""Dead-code elimination: drop pure ops whose results nothing reads.

Tracing keeps every value the Python computed; a value that feeds nothing (or feeds only
other dead values) would otherwise become a variable the C compiler warns about.  Outside
debug mode `tl.device_assert`s go first, and with them what only they read.  Loads are
kept, so the interpreter still bounds-checks them, as are stores and control flow.
"""

from __future__ import annotations

from tilecc.transpiler import ir
from tilecc.transpiler.ir import Kernel, Region

PURE = {"const", "splat", "arange", "program_id", "num_programs", "cast", "unary",
        "binary", "cmp", "where", "fma", "extern", "addptr", "broadcast", "expand_dims"}
# also free of side effects, but not inlined as expressions by the renderer
REMOVABLE = PURE | {"counter", "reduce", "scan", "reshape", "permute", "join", "split", "convert",
                    "unstack", "stack",
                    "dot", "flip", "cat", "gather", "histogram"}


def eliminate_dead_code(kernel: Kernel) -> None:
    if not kernel.debug:
        _drop_asserts(kernel.body)
    while True:
        uses = ir.uses(kernel)
        if not _sweep(kernel.body, uses) and not _drop_unread_carried(kernel.body, uses):
            return


def _drop_unread_carried(region: Region, uses: dict[int, int]) -> bool:
    """Drop the values a `for` loop carries that nothing reads but their own update: the
    loop's result unread, the value passed on unchanged or through one pure op of its own
    (a block pointer's offset along a dim no mask checks, advanced or not), which would
    otherwise be a variable the C compiler warns is never read."""
    changed = False
    for op in region.ops:
        for r in op.regions:
            changed |= _drop_unread_carried(r, uses)
        if op.kind != "for":
            continue
        body = op.regions[0]
        for j in reversed(range(len(op.results))):
            arg, y, res = body.args[1 + j], body.yields[j], op.results[j]
            if uses.get(res.id, 0) or uses.get(y.id, 0) != 1:
                continue
            update = None
            if y is not arg:
                update = y.owner
                if update is None or update not in body.ops or update.kind not in PURE or \
                        len(update.results) != 1 or \
                        sum(v is arg for v in update.operands) != uses.get(arg.id, 0):
                    continue
            elif uses.get(arg.id, 0) != 1:
                continue
            if update is not None:
                body.ops.remove(update)
            del op.operands[3 + j], body.args[1 + j], body.yields[j], op.results[j]
            changed = True
    return changed


def _sweep(region: Region, uses: dict[int, int]) -> bool:
    changed = False
    kept = []
    for op in region.ops:
        for r in op.regions:
            changed |= _sweep(r, uses)
        if op.kind in REMOVABLE and all(uses.get(v.id, 0) == 0 for v in op.results):
            changed = True
            continue
        kept.append(op)
    region.ops = kept
    return changed


def _drop_asserts(region: Region) -> None:
    region.ops = [op for op in region.ops if op.kind != "device_assert"]
    for op in region.ops:
        for r in op.regions:
            _drop_asserts(r)
