"""Planning `tl.dot`: which instructions compute it, how warps split the output tile, and
how the operands are staged in shared memory.

On Hopper (sm_90) fp16 / bf16 products run as warpgroup MMA (`wgmma.mma_async`), both
operands read by the tensor cores straight from swizzled shared memory; elsewhere on
NVIDIA they run with `mma.sync` (m16n8k16 for fp16 / bf16, m16n8k8 for tf32, m16n8k32 for
int8).  Its accumulator is a blocked layout in Triton's
terms — 2 consecutive columns per thread, 8 × 4 lanes, `wm × wn` warps — which is exactly
the register layout of mma's C fragment, repeated; so the epilogue (casts, activations,
masked stores) runs on it like on any other block.  Operands are written to swizzled
shared-memory tiles and read with `ldmatrix` into A / B fragments.  Everywhere else
(AMD, fp32 with `input_precision="ieee"`, fp64, tiles the warps cannot split) each thread
sums its own outputs over K from the shared-memory tiles with fused multiply-adds.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilecc.transpiler.ir import Op

# input type (and precision) → (mma shape name, K per instruction, PTX types)
MMA = {("fp16", "ieee"): ("m16n8k16", 16, "f32.f16.f16.f32"),
       ("bf16", "ieee"): ("m16n8k16", 16, "f32.bf16.bf16.f32"),
       ("fp32", "tf32"): ("m16n8k8", 8, "f32.tf32.tf32.f32"),
       ("i8", "ieee"): ("m16n8k32", 32, "s32.s8.s8.s32")}


@dataclass(frozen=True)
class DotPlan:
    engine: str  # "wgmma", "mma" or "fma"
    warps: tuple[int, int]  # warps along M and N (mma only)
    k_step: int  # K per mma instruction (mma only)
    reason: str  # what runs it, for the kernel's header
    sources: str = ""  # where its operands come from (wgmma: set when rendered)

    @property
    def description(self) -> str:
        return f"{self.reason}, {self.sources}" if self.sources else self.reason

    @property
    def swizzled(self) -> bool:
        return self.engine in ("mma", "wgmma")


def b_k_major(op: Op) -> bool:
    """B is staged K-major (each column's K elements contiguous, as A's rows are) when its
    layout runs along K — a block of K^T loaded from a row-major K — so its loads and
    copies stay 16-byte vectors; wgmma then reads it untransposed."""
    b = op.operands[1]
    return (op.attrs["plan"].engine == "wgmma" and b.layout is not None
            and b.layout.fast_axis == 0)


def a_in_registers(op: Op) -> bool:
    """A goes to wgmma from registers, with no trip through shared memory, when it is held
    in the accumulator layout of a product of the same warps (attention's probabilities,
    the first product's result cast to fp16, feeding the second): a thread then holds
    exactly the elements of A that wgmma's register fragment asks of it."""
    from tilecc.transpiler.passes.layouts import Placement, mma_accumulator

    plan: DotPlan = op.attrs["plan"]
    a = op.operands[0]
    return (plan.engine == "wgmma" and a.layout is not None and
            a.layout == Placement(mma_accumulator(plan.warps), a.type.shape))


def fma_plan(why: str) -> DotPlan:
    """The portable loop of fused multiply-adds, and why the tensor cores are not used."""
    return DotPlan("fma", (1, 1), 1, f"fused multiply-adds ({why})")


def wgmma_fits(m: int, n: int, k: int, num_warps: int) -> bool:
    """Hopper's warpgroup MMA as tilecc stages it: warpgroups (4 warps) split M into
    m64 instructions, each instruction spans all of N (B in 64-column swizzle atoms), and
    a row of A is 64 B (K = 32) or whole 128-byte swizzle atoms (K a multiple of 64)."""
    groups = num_warps // 4
    return (num_warps in (4, 8) and m % (64 * groups) == 0 and n % 64 == 0 and n <= 256
            and (k == 32 or k % 64 == 0))


def mma_warps(m: int, n: int, num_warps: int) -> tuple[int, int] | None:
    """How `num_warps` warps split an m × n accumulator into per-warp tiles of whole 16 × 8
    mma tiles: the split with the least shared-memory traffic (each warp reads m/wm rows of
    A and n/wn columns of B per K step), more warps along M on a tie."""
    best = None
    wm = 1
    while wm <= num_warps:
        wn = num_warps // wm
        if m % (16 * wm) == 0 and n % (8 * wn) == 0:
            cost = (m // wm + n // wn, -wm)
            if best is None or cost < best[0]:
                best = (cost, (wm, wn))
        wm *= 2
    return best[1] if best else None


def plan(op: Op, num_warps: int, matrix_unit: str, arch: str = "") -> DotPlan:
    a = op.operands[0]
    (m, k), n = a.type.shape, op.result.type.shape[1]
    key = (a.dtype.name, op.attrs["precision"])
    if matrix_unit == "mma.sync" and arch.startswith("sm_90") and \
            a.dtype.name in ("fp16", "bf16") and wgmma_fits(m, n, k, num_warps):
        groups = num_warps // 4
        return DotPlan("wgmma", (num_warps, 1), 16,
                       f"wgmma.m64n{n}k16 ({a.dtype.name}, Hopper), {groups} warpgroup"
                       f"{'s' if groups > 1 else ''} x {m // (64 * groups)} instruction"
                       f"{'s' if m // (64 * groups) > 1 else ''} per K step",
                       "operands read from shared memory")
    if matrix_unit != "mma.sync":
        return fma_plan("no matrix instructions on this target yet")
    if key not in MMA:
        why = "fp32 with input_precision='ieee'" if key[0] == "fp32" else f"{key[0]} inputs"
        return fma_plan(f"{why}: no tensor-core instruction")
    shape, k_step, types = MMA[key]
    warps = mma_warps(m, n, num_warps)
    if warps is None or k % k_step:
        return fma_plan(f"{num_warps} warps cannot split {m} x {n} into 16 x 8 mma tiles")
    wm, wn = warps
    return DotPlan("mma", warps, k_step,
                   f"mma.sync.{shape} ({types.split('.')[1]}), {wm} x {wn} warps, "
                   f"{m // wm} x {n // wn} outputs per warp")
