"""Planning `tl.dot`: which instructions compute it, how warps split the output tile, and
how the operands are staged in shared memory.

The instructions are the target's matrix units (`transpiler/matrix_units.py`), tried in
its order.  On Hopper (sm_90) fp16 / bf16 products run as warpgroup MMA
(`wgmma.mma_async`), both operands read by the tensor cores straight from swizzled shared
memory; elsewhere on NVIDIA they run with `mma.sync` (m16n8k16 for fp16 / bf16, m16n8k8
for tf32, m16n8k32 for int8).  Its accumulator is a blocked layout in Triton's
terms — 2 consecutive columns per thread, 8 × 4 lanes, `wm × wn` warps — which is exactly
the register layout of mma's C fragment, repeated; so the epilogue (casts, activations,
masked stores) runs on it like on any other block.  Operands are written to swizzled
shared-memory tiles and read with `ldmatrix` into A / B fragments.  On AMD CDNA the
MFMA rows (`matrix_units_amd.py`) do the same with a blocked accumulator of their own,
both operands K-major.  Everywhere else (fp32 with `input_precision="ieee"`, fp64, tiles
the warps cannot split) each thread sums its own outputs over K from the shared-memory
tiles with fused multiply-adds.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilecc.language import dtypes as D
from tilecc.transpiler.ir import Kernel, Op, Region, Value
from tilecc.transpiler.matrix_units import FMA, Instruction, MatrixUnit
from tilecc.transpiler.passes.placement import Blocked, Placement


@dataclass(frozen=True)
class DotPlan:
    unit: MatrixUnit  # the matrix unit that runs it (FMA: the portable loop)
    warps: tuple[int, int]  # warps along M and N (matrix units only)
    k_step: int  # K per instruction (matrix units only)
    reason: str  # what runs it, for the kernel's header
    # where its operands come from (units reading them from shared memory: settled by
    # passes.settle once pipelines are known)
    sources: str = ""
    a_from_registers: bool = False  # A goes to the unit from registers (passes.settle)

    @property
    def description(self) -> str:
        return f"{self.reason}, {self.sources}" if self.sources else self.reason

    @property
    def matrix(self) -> bool:
        """Runs on a matrix unit, not the portable loop."""
        return self.unit.is_matrix

    @property
    def swizzled(self) -> bool:
        """Operands staged in swizzled tiles (for a matrix unit), not plain rows."""
        return self.unit.is_matrix


def accumulator(unit: MatrixUnit, warps: tuple[int, int]) -> Blocked:
    """A product's accumulator as a blocked layout: the unit's instruction tile (mma's C
    fragment: per 16 x 8 tile a lane holds 2 adjacent columns of row lane/4 and of row
    lane/4 + 8), repeated over each warp's share."""
    return Blocked(unit.accumulator_spt, unit.accumulator_tpw, warps, (1, 0))


def instruction(op: Op) -> Instruction | None:
    """The instruction `op`'s plan runs it with (None: the portable loop)."""
    return op.attrs["plan"].unit.instructions.get((op.operands[0].dtype.short,
                                                   op.attrs["precision"]))


def b_k_major(op: Op) -> bool:
    """B is staged K-major (each column's K elements contiguous, as A's rows are) when its
    layout runs along K — a block of K^T loaded from a row-major K — so its loads and
    copies stay 16-byte vectors; a unit that can (wgmma) then reads it untransposed.  An
    instruction that cannot read B N-major (wgmma's 8-bit ones) has it staged K-major
    whatever its layout (its stores then transpose it, an element at a time)."""
    b = op.operands[1]
    unit = op.attrs["plan"].unit
    if _ldmatrix_along_axis_0(op, b):
        return True
    if not unit.b_k_major:
        return False
    ins = instruction(op)
    return (ins is not None and not ins.b_n_major) or \
        (b.layout is not None and b.layout.fast_axis == 0)


def _ldmatrix_along_axis_0(op: Op, x) -> bool:
    """A 16-bit operand read by ldmatrix (`unit.ldmatrix_either_way`) whose layout runs
    along axis 0 (A along M, B along K): staged with its rows along that axis, read with
    the other `.trans` than its usual.  Each thread's run of the axis is then one vector
    store; staged the usual way, at 2 warps a 64 x 64 block transposed took 64 scalar
    stores and their swizzled addresses a thread (chunked linear attention's backward)."""
    plan = op.attrs["plan"]
    return (plan.unit.ldmatrix_either_way and plan.swizzled and x.dtype.itemsize == 2
            and x.layout is not None and x.layout.fast_axis == 0 and x.layout.vec > 1)


def a_m_major(op: Op) -> bool:
    """A is staged M-major (each K row of its tile holding 64 consecutive rows of M, as an
    N-major B's holds 64 columns) when its layout runs along M — a block of A^T loaded
    from a row-major A^T, as chunk-parallel kernels load K^T — and the instruction reads
    it so (wgmma's 16-bit ones, A from shared memory): its loads and copies stay 16-byte
    vectors, where staged K-major each element went to the tile on its own."""
    plan = op.attrs["plan"]
    a = op.operands[0]
    if not plan.a_from_registers and not a_in_registers(op) and _ldmatrix_along_axis_0(op, a):
        return True
    ins = instruction(op)
    return (plan.unit.operands_from_shared and not plan.a_from_registers
            and ins is not None and ins.b_n_major and not a_in_registers(op)
            and a.layout is not None and a.layout.fast_axis == 0
            and a.type.shape[0] % 64 == 0)


def swizzled_chunk(chunks: int, row: int, chunk: int) -> int:
    """The 16-byte chunk of a tile of rows `chunks` chunks long that holds chunk `chunk`
    of row `row`: what `tc::swizzled_chunk<chunks>` computes in the generated code."""
    span = min(chunks, 8)
    rows_per_128b = 8 // chunks if chunks < 8 else 1
    return row * chunks + (chunk ^ (row // rows_per_128b % span))


def wgmma_a_place(row: int, warps: int, rows_per_group: int) -> int:
    """The row of A's shared-memory tile that holds the accumulator's row `row`, for a
    product of `warps` warps along M, `rows_per_group` rows per warpgroup: what
    `tc::wgmma_a_row<warps, rows_per_group>` computes in the generated code."""
    g, warp, rep = row % 8, row // 8 % warps, row // (8 * warps)
    return (warp // 4 * rows_per_group + 64 * (rep // 2) + 16 * (warp % 4) + 8 * (rep % 2)
            + g)


def operand_place(dot: Op, which: int, row: int, col: int) -> int:
    """The element offset of (row, col) in operand `which` (0: A, 1: B) of `dot`'s tile in
    shared memory, in the layout its plan reads: what `render_dot.operand_offset` writes as
    C, for one element."""
    plan: DotPlan = dot.attrs["plan"]
    x = dot.operands[which]
    rows, cols = x.type.shape
    esize = x.dtype.itemsize
    epc, atom = 16 // esize, 128 // esize

    def plain(row: int, col: int, row_len: int) -> int:
        if not plan.swizzled:
            return row * row_len + col
        return swizzled_chunk(row_len // epc, row, col // epc) * epc + col % epc

    if not plan.unit.operands_from_shared:
        if which == 1 and b_k_major(dot) or which == 0 and a_m_major(dot):
            return plain(col, row, rows)
        return plain(row, col, cols)
    if which == 0 and a_m_major(dot):
        warps = plan.warps[0]
        place = wgmma_a_place(row, warps, rows // (warps // 4))
        row, col, rows, cols = col, place, cols, rows
    if which == 0 and a_m_major(dot) or which == 1 and not b_k_major(dot):
        if cols * esize == 64:
            return swizzled_chunk(4, row, col // epc) * epc + col % epc
        return (col // atom * rows * atom + swizzled_chunk(8, row, col % atom // epc) * epc
                + col % epc)
    if which == 1:
        row, col, rows, cols = col, row, cols, rows
        place = row
    else:
        warps = plan.warps[0]
        place = wgmma_a_place(row, warps, rows // (warps // 4))
    if cols * esize == 64:
        return swizzled_chunk(4, place, col // epc) * epc + col % epc
    return (col // atom * rows * atom + swizzled_chunk(8, place, col % atom // epc) * epc
            + col % epc)


def a_in_registers(op: Op) -> bool:
    """A can go to the unit from registers, with no trip through shared memory, when it is
    held in the accumulator layout of a product of the same warps, all along M
    (attention's probabilities, the first product's result cast to fp16, feeding the
    second): a thread then holds exactly the elements of A that the instruction's register
    fragment asks of it (wgmma's, and mma.sync's m16n8k16: two 16 x 8 accumulator tiles
    side by side are one 16 x 16 A fragment).
    (Whether it does also depends on pipelining: `DotPlan.a_from_registers`.)"""
    plan: DotPlan = op.attrs["plan"]
    a = op.operands[0]
    ins = instruction(op)
    return (plan.unit.a_from_registers and ins is not None and ins.a_from_registers
            and plan.warps[1] == 1 and a.layout is not None
            and a.layout == Placement(accumulator(plan.unit, plan.warps), a.type.shape))


def promotion_steps(op: Op) -> int | None:
    """For fp8 products on a unit that accumulates them at reduced precision: after how
    many instructions the partial sum is added into the fp32 accumulator, or None when
    it is not (the tensor cores' own accumulation, Triton's default on sm_90).  Triton's
    rule: with `max_num_imprecise_acc` at most K, a partial accumulator is flushed once
    that many elements of K have been summed in it, and at the end of the product."""
    limit = op.attrs.get("imprecise_acc")
    plan: DotPlan = op.attrs["plan"]
    k = op.operands[0].type.shape[1]
    if limit is None or not plan.matrix or not op.operands[0].dtype.is_fp8() or \
            op.attrs["acc_dtype"] != D.float32 or limit > k:
        return None
    return max(1, -(-limit // plan.k_step))


def convert_unplanned_fp8(kernel: Kernel, num_warps: int, units: tuple[MatrixUnit, ...],
                          arch: str) -> None:
    """fp8 products (kept fp8 by the frontend: two e4m3 or two e5m2 blocks) that no unit
    of the target multiplies as they are — no fp8 instruction (AMD, Ampere, mma.sync), or
    a tile its warps cannot split — get their operands converted to fp16 first, exactly,
    as Triton does where the GPU has no fp8 instruction.  Runs before the layouts."""
    def visit(region: Region) -> None:
        ops: list[Op] = []
        for op in region.ops:
            for r in op.regions:
                visit(r)
            if op.kind == "dot" and op.operands[0].dtype.is_fp8() and \
                    not plan(op, num_warps, units, arch).matrix:
                for i in (0, 1):
                    x = op.operands[i]
                    y = Value(x.type.with_dtype(D.float16), x.name)
                    ops.append(Op("cast", [x], [y], op.loc, {"bitcast": False}))
                    op.operands[i] = y
                op.attrs.pop("imprecise_acc", None)
            ops.append(op)
        region.ops = ops

    visit(kernel.body)


def fma_plan(why: str) -> DotPlan:
    """The portable loop of fused multiply-adds, and why the matrix units are not used."""
    return DotPlan(FMA, (1, 1), 1, f"fused multiply-adds ({why})")


def plan(op: Op, num_warps: int, units: tuple[MatrixUnit, ...], arch: str = "") -> DotPlan:
    """The first of the target's `units` (in its order of preference) that runs on `arch`,
    has an instruction for the inputs and whose warps can split the tile; else the
    fused multiply-adds, saying why the last unit tried could not."""
    a = op.operands[0]
    (m, k), n = a.type.shape, op.result.type.shape[1]
    key = (a.dtype.short, op.attrs["precision"])
    if m < 16 or n < 16:  # skinny products (Triton pads them to tensor-core tiles)
        return fma_plan(f"M = {m}, N = {n}: below a 16 x 16 tile")
    why = "no matrix instructions on this target yet"
    for unit in units:
        if not unit.available(arch):
            continue
        ins = unit.instructions.get(key)
        if ins is None:
            why = "fp32 with input_precision='ieee'" if key[0] == "fp32" else f"{key[0]} inputs"
            why += ": no tensor-core instruction"
            continue
        warps = unit.split(m, n, k, num_warps, ins.k)
        if warps is None:
            why = f"{num_warps} warps cannot split {m} x {n} into {unit.tiles}"
            continue
        return DotPlan(unit, warps, ins.k, unit.describe(m, n, num_warps, warps, ins, key[0]),
                       "operands read from shared memory" if unit.operands_from_shared else "")
    return fma_plan(why)
