"""Matrix units: the instructions `tl.dot` can run on, one row of data per unit.

A target lists its units in order of preference (`Target.matrix_units`); `passes.dot`
plans a product on the first unit that has an instruction for its input type and whose
warps can split its tile, and the passes and the renderer ask the row what they need
(`unit.operands_from_shared`, `unit.async_proxy`, ...) instead of comparing names.  The
instructions themselves are functions of the device header (`include/tilecc.h`), named
here.  A new unit is a new row, its header intrinsics, its warp split, and the
renderer's loop over K named by `main_loop`.  `FMA` is the row every target falls back
on: no instructions, the portable loop.  AMD's MFMA rows live in `matrix_units_amd.py`,
their lane layouts as data (`Instruction.m`, `n`, `k_per_lane`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class Instruction:
    shape: str  # PTX shape: "m16n8k16"; "m64nNk16" (N: the tile's N)
    k: int  # K per instruction
    types: str  # PTX types, accumulator first: "f32.f16.f16.f32"
    # the header function issuing it (tc::<intrinsic>; "N" in it: the tile's N, for
    # instructions whose register list depends on it)
    intrinsic: str = ""
    opcode: str = "mma.sync.aligned"  # the PTX opcode, before the shape and types
    # A may come from registers (units with `a_from_registers`); B may be read N-major
    # (transposed by the instruction).  wgmma's 8-bit types read both K-major from shared
    # memory only.
    a_from_registers: bool = True
    b_n_major: bool = True
    # AMD MFMA (wave64): the instruction's M x N tile, and the K elements one lane holds
    # of each operand; the lane layouts follow from them (`a_element`, `b_element`,
    # `accumulator_element`).  0 for NVIDIA's instructions (their fragments are ldmatrix's).
    m: int = 0
    n: int = 0
    k_per_lane: int = 0
    mnemonic: str = ""  # the ISA's name of the instruction (v_mfma_...), for comments

    def ptx(self, n: int) -> str:
        """The instruction's full PTX name, for a tile N wide (comments, the header)."""
        return f"{self.opcode}.{self.shape.replace('N', str(n))}.{self.types}"

    def intrinsic_for(self, n: int) -> str:
        """The header function for a tile N wide."""
        return self.intrinsic.replace("N", str(n))

    # --- MFMA lane layouts (AMD's matrix instruction calculator; CDNA2 / CDNA3 ISA,
    # "dependent arithmetic" / matrix core sections).  A wave of 64 lanes: A's row i and
    # B's column j are held by lanes i, i + M, i + 2M, ... (j, j + N, ...), each with its
    # own run of `k_per_lane` consecutive K elements; the accumulator is blocked rows of 4.
    @property
    def accumulator_slots(self) -> int:
        """Accumulator registers per lane (M N / 64)."""
        return self.m * self.n // 64

    def a_element(self, lane: int, slot: int) -> tuple[int, int]:
        """(row, k) of A held by `lane` in operand slot `slot` (< k_per_lane)."""
        return lane % self.m, self.k_per_lane * (lane // self.m) + slot

    def b_element(self, lane: int, slot: int) -> tuple[int, int]:
        """(k, column) of B held by `lane` in operand slot `slot`."""
        return self.k_per_lane * (lane // self.n) + slot, lane % self.n

    def accumulator_element(self, lane: int, slot: int) -> tuple[int, int]:
        """(row, column) of the accumulator held by `lane` in register `slot`: lanes
        N apart hold 4 consecutive rows each, `64 / N` groups of lanes cover
        `4 * 64 / N` rows, and registers 4 apart repeat that over the M rows."""
        groups = 64 // self.n  # lane groups along M
        return (4 * groups * (slot // 4) + 4 * (lane // self.n) + slot % 4, lane % self.n)


def _whole_tiles(m: int, n: int, k: int, num_warps: int, k_step: int) -> tuple[int, int] | None:
    """How `num_warps` warps split an m × n accumulator into per-warp tiles of whole 16 × 8
    mma tiles: the split with the least shared-memory traffic (each warp reads m/wm rows of
    A and n/wn columns of B per K step), more warps along M on a tie."""
    return whole_tiles_of(16, 8, m, n, k, num_warps, k_step)


def whole_tiles_of(tm: int, tn: int, m: int, n: int, k: int, num_warps: int,
                   k_step: int) -> tuple[int, int] | None:
    """`_whole_tiles` for instruction tiles of tm × tn."""
    best = None
    wm = 1
    while wm <= num_warps:
        wn = num_warps // wm
        if m % (tm * wm) == 0 and n % (tn * wn) == 0:
            cost = (m // wm + n // wn, -wm)
            if best is None or cost < best[0]:
                best = (cost, (wm, wn))
        wm *= 2
    if best is None or k % k_step:
        return None
    return best[1]


# The tile widths wgmma runs at (B in 64-column swizzle atoms, at most 256 columns, or one
# 32-column row of 64 bytes: a K step of head dim 32, `BV = 32` blocks): `tilecc.h` holds
# an intrinsic for each (scripts/generate_wgmma.py writes them).
WGMMA_WIDTHS = (32, 64, 128, 192, 256)


def _warpgroups(m: int, n: int, k: int, num_warps: int, k_step: int) -> tuple[int, int] | None:
    """Hopper's warpgroup MMA as tilecc stages it: warpgroups (4 warps) split M into
    m64 instructions, each instruction spans all of N (B in swizzle atoms of 128 bytes
    a row), and a row of A is 64 bytes (two instructions' K: K = 32 for 16-bit inputs,
    64 for 8-bit ones) or whole 128-byte swizzle atoms.  All warps along M."""
    groups = num_warps // 4
    fits = (num_warps in (4, 8) and m % (64 * groups) == 0 and n in WGMMA_WIDTHS
            and (k == 2 * k_step or k % (4 * k_step) == 0))
    return (num_warps, 1) if fits else None


def _describe_warps(m: int, n: int, num_warps: int, warps: tuple[int, int],
                    ins: Instruction, dtype: str) -> str:
    wm, wn = warps
    return (f"mma.sync.{ins.shape} ({ins.types.split('.')[1]}), {wm} x {wn} warps, "
            f"{m // wm} x {n // wn} outputs per warp")


def _describe_warpgroups(m: int, n: int, num_warps: int, warps: tuple[int, int],
                         ins: Instruction, dtype: str) -> str:
    groups = num_warps // 4
    per = m // (64 * groups)
    return (f"wgmma.{ins.shape.replace('N', str(n))} ({dtype}, Hopper), {groups} warpgroup"
            f"{'s' if groups > 1 else ''} x {per} instruction{'s' if per > 1 else ''} "
            "per K step")


@dataclass(frozen=True, eq=False)  # a row is itself: compared and hashed by identity
class MatrixUnit:
    name: str  # as the kernel's header and the IR dump say it: "mma.sync", "wgmma"
    # architectures it runs on, as prefixes of the arch name; () every arch of its target
    archs: tuple[str, ...]
    # (input type, input precision) → its instruction
    instructions: dict[tuple[str, str], Instruction]
    # how num_warps warps split an m × n × k tile: warps along (M, N), or None when they
    # cannot; and the plan's description for the kernel's header
    split: Callable[[int, int, int, int, int], tuple[int, int] | None] | None = \
        field(default=None, repr=False)
    describe: Callable[..., str] | None = field(default=None, repr=False)
    tiles: str = ""  # what `split` cuts the tile into, for the header when it cannot
    warps_per_instruction: int = 1  # warps that issue one instruction together
    # A and B read by the unit itself from swizzled shared-memory tiles (matrix
    # descriptors); else the threads load fragments into registers (ldmatrix)
    operands_from_shared: bool = False
    # A may come from the registers of a product's accumulator (of the same warps), with
    # no trip through shared memory
    a_from_registers: bool = False
    # B may be read K-major (untransposed) when that is how its layout runs
    b_k_major: bool = False
    # 16-bit A and B tiles read by ldmatrix with or without `.trans`: each staged with its
    # rows along the axis its layout runs (A M-major, B K-major where they run along axis
    # 0), so that its stores are vectors (passes.dot.a_m_major, b_k_major)
    ldmatrix_either_way: bool = False
    # the threads' shared-memory writes must be fenced (fence.proxy.async) before the
    # unit reads them
    async_proxy: bool = False
    # issued in groups committed and waited for: one group may stay in flight across the
    # iterations of a loop that only accumulates
    async_groups: bool = False
    arch_specific: bool = False  # needs the arch-specific target (sm_90a)
    # the accumulator as a blocked layout: per instruction tile, elements per thread and
    # lanes along (M, N); the warps are the plan's split, the order row-major
    accumulator_spt: tuple[int, int] = (1, 2)
    accumulator_tpw: tuple[int, int] = (8, 4)
    # its loop over K: the renderer's method (render_dot.DotWriter) and c_like/dot.j2's macro
    main_loop: str = ""

    def __repr__(self) -> str:  # in IR dumps and the target's repr: the row's name
        return f"MatrixUnit({self.name!r})"

    def available(self, arch: str) -> bool:
        return not self.archs or arch.startswith(self.archs)

    @property
    def is_matrix(self) -> bool:
        """A matrix unit, not the portable loop (FMA)."""
        return bool(self.instructions)


# every target's fallback: each thread sums its own outputs over K from plain shared-memory
# tiles with fused multiply-adds
FMA = MatrixUnit("fma", (), {}, main_loop="fma_loop")


MMA_SYNC = MatrixUnit(
    "mma.sync", (),
    {("fp16", "ieee"): Instruction("m16n8k16", 16, "f32.f16.f16.f32", "mma_m16n8k16_f16"),
     ("bf16", "ieee"): Instruction("m16n8k16", 16, "f32.bf16.bf16.f32", "mma_m16n8k16_bf16"),
     # (A's fragment of tf32 and int8 is not an accumulator's pairs)
     ("fp32", "tf32"): Instruction("m16n8k8", 8, "f32.tf32.tf32.f32", "mma_m16n8k8_tf32",
                                   a_from_registers=False),
     ("i8", "ieee"): Instruction("m16n8k32", 32, "s32.s8.s8.s32", "mma_m16n8k32_s8",
                                 a_from_registers=False)},
    split=_whole_tiles, describe=_describe_warps, tiles="16 x 8 mma tiles", main_loop="mma_loop",
    a_from_registers=True, ldmatrix_either_way=True)

WGMMA = MatrixUnit(
    "wgmma", ("sm_90",),
    {("fp16", "ieee"): Instruction("m64nNk16", 16, "f32.f16.f16", "wgmma_m64nNk16_f16",
                                   opcode="wgmma.mma_async.sync.aligned"),
     ("bf16", "ieee"): Instruction("m64nNk16", 16, "f32.bf16.bf16", "wgmma_m64nNk16_bf16",
                                   opcode="wgmma.mma_async.sync.aligned"),
     # fp8 products accumulate at the tensor cores' reduced precision, as Triton's do on
     # sm_90 (`max_num_imprecise_acc` adds them into fp32 more often: render_dot)
     ("fp8e4nv", "ieee"): Instruction("m64nNk32", 32, "f32.e4m3.e4m3", "wgmma_m64nNk32_e4m3",
                                      opcode="wgmma.mma_async.sync.aligned",
                                      a_from_registers=False, b_n_major=False),
     ("fp8e5", "ieee"): Instruction("m64nNk32", 32, "f32.e5m2.e5m2", "wgmma_m64nNk32_e5m2",
                                    opcode="wgmma.mma_async.sync.aligned",
                                    a_from_registers=False, b_n_major=False),
     # fp32 at tf32 precision (Triton's default): both operands K-major fp32 in shared
     # memory, of which the tensor cores read a tf32's bits, as Triton's products on sm_90
     ("fp32", "tf32"): Instruction("m64nNk8", 8, "f32.tf32.tf32", "wgmma_m64nNk8_tf32",
                                   opcode="wgmma.mma_async.sync.aligned",
                                   a_from_registers=False, b_n_major=False)},
    split=_warpgroups, describe=_describe_warpgroups, tiles="m64 tiles per warpgroup",
    warps_per_instruction=4,
    operands_from_shared=True, a_from_registers=True, b_k_major=True, async_proxy=True,
    async_groups=True, arch_specific=True, main_loop="wgmma_loop")
