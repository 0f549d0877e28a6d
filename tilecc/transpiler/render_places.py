"""Where a block's values sit, as the block family's writers compute it
(`render_blocks.BlockWriter`, its scans in `render_scan`, `render_reorder`): row-major
strides, shared arrays packed one after another, and the register holding an element
along a reduced or scanned axis."""

from __future__ import annotations

from tilecc.transpiler.passes.layouts import Placement


def _row_major(shape: tuple[int, ...]) -> list[int]:
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= n
    return list(reversed(strides))


def _packed_arrays(arrays: list[tuple[int, int]]) -> tuple[list[int], int]:
    """Byte offsets for consecutive shared arrays of (elements, element size), each aligned
    to its element size (a u8 array then an i32 one: the i32 one starts at a multiple of 4),
    and the bytes they take."""
    offsets, total = [], 0
    for count, size in arrays:
        total = -(-total // size) * size
        offsets.append(total)
        total += count * size
    return offsets, total


def _reduced_register(src: Placement, e: int, dst: Placement | None, s: str, j: str) -> str:
    """The register of `src` holding element `j` along the reduced axis `e` of the row
    that output register `s` of `dst` gathers."""
    terms = []
    for e2 in src.kept:
        if e2 == e or src.reg_sizes[e2] == 1:
            continue
        comp = dst.reg_component(e2, s) if dst is not None else "0"
        stride = src.rstride(e2)
        terms.append(comp if stride == 1 else f"({comp}) * {stride}")
    if j != "0":
        stride = src.rstride(e)
        if j.isdigit():
            terms.append(str(int(j) * stride))
        else:
            terms.append(j if stride == 1 else f"{j} * {stride}")
    return " + ".join(terms) or "0"
