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
                    "dot", "flip", "cat", "gather", "histogram"}


def eliminate_dead_code(kernel: Kernel) -> None:
    if not kernel.debug:
        _drop_asserts(kernel.body)
    while True:
        uses = ir.uses(kernel)
        if not _sweep(kernel.body, uses):
            return


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
