"""AMD's matrix units: MFMA on CDNA2 (gfx90a) and CDNA3 (gfx94x), one row per instruction
tile (32 x 32 and 16 x 16), each row an instruction per input type.

A wave is 64 lanes.  The lane layouts are data (`Instruction.m`, `n`, `k_per_lane`; see
`Instruction.a_element`, `b_element`, `accumulator_element`), taken from AMD's matrix
instruction calculator and the CDNA2 / CDNA3 instruction set references (the MFMA
operand and result layouts): lane l holds A's row l % M and B's column l % N, with the
`k_per_lane` consecutive K elements starting at `k_per_lane * (l // M)` (resp. N); the
result (M N / 64 registers a lane) is column l % N, 4 consecutive rows from
`4 (l // N)`, repeated every `4 * 64 / N` rows.  That result is a blocked layout —
4 x 1 elements per thread, (64 / N) x N lanes — so tilecc's accumulator is an ordinary
block, the instruction tile repeated over each warp's share of the product.

The instructions are `__builtin_amdgcn_mfma_*` builtins wrapped by `tilecc.h`
(`tc::mfma_*`).  CDNA3 dropped CDNA2's 4-wide int8 instructions for 8-wide ones and adds
fp8 (its FNUZ formats: fp8e4b8 / fp8e5b16) and xf32; bf16 keeps the `_1k` instructions.
"""

from __future__ import annotations

from tilecc.transpiler.matrix_units import Instruction, MatrixUnit, whole_tiles_of


def _mfma(m: int, n: int, k: int, kpl: int, types: str, name: str) -> Instruction:
    """An MFMA instruction: `name` is both the ISA's (v_mfma_<name>) and, with the
    tile's shape, the header's (tc::mfma_<name>)."""
    return Instruction(f"{m}x{n}x{k}", k, types, f"mfma_{name}", opcode="v_mfma",
                       b_n_major=False, a_from_registers=False, m=m, n=n, k_per_lane=kpl,
                       mnemonic=f"v_mfma_{name}")


def _describe(m: int, n: int, num_warps: int, warps: tuple[int, int], ins: Instruction,
              dtype: str) -> str:
    wm, wn = warps
    copies = max(1, ins.m * wm // m) * max(1, ins.n * wn // n)
    return (f"{ins.mnemonic} ({dtype}), {wm} x {wn} warps, {max(ins.m, m // wm)} x "
            f"{max(ins.n, n // wn)} outputs per warp" +
            (f", each held by {copies} warps" if copies > 1 else ""))


def _mfma_split(tile: int, m: int, n: int, k: int, num_warps: int,
                k_step: int) -> tuple[int, int] | None:
    """Warps along (M, N) for MFMA tiles of tile x tile: whole tiles per warp where the
    warps can split the product (`whole_tiles_of`); else, on 16 x 16 tiles (the last
    row tried), for a product smaller than the warps' tiles, warps beyond the tiles hold
    copies: the accumulator's blocked layout wraps, replicated warps compute the same
    outputs and only the first stores them.  (An instruction's 16 rows are one register
    set of 4 lane groups, so its rows never straddle warps.)"""
    whole = whole_tiles_of(tile, tile, m, n, k, num_warps, k_step)
    if whole is not None or tile != 16 or m % tile or n % tile or k % k_step:
        return whole
    best = None
    wm = 1
    while wm <= num_warps:
        wn = num_warps // wm
        # the fewest copies, then the least shared-memory traffic
        copies = max(1, tile * wm // m) * max(1, tile * wn // n)
        cost = (copies, max(tile, m // wm) + max(tile, n // wn), -wm)
        if best is None or cost < best[0]:
            best = (cost, (wm, wn))
        wm *= 2
    return None if best is None else best[1]


def _unit(name: str, archs: tuple[str, ...], tile: int,
          instructions: dict[tuple[str, str], Instruction]) -> MatrixUnit:
    assert all(i.m == tile and i.n == tile for i in instructions.values())
    return MatrixUnit(
        name, archs, instructions,
        split=lambda m, n, k, w, ks: _mfma_split(tile, m, n, k, w, ks),
        describe=_describe, tiles=f"{tile} x {tile} MFMA tiles", b_k_major=True,
        accumulator_spt=(4, 1), accumulator_tpw=(64 // tile, tile), main_loop="mfma_loop")


# fp32 in full (one K element a lane): input_precision="ieee", and tf32 where there is no
# xf32 (CDNA2), more precise than tf32 as Triton's AMD back end computes it
_FP32 = {tile: {("fp32", p): _mfma(tile, tile, 64 // tile, 1, "f32.f32.f32",
                                   f"f32_{tile}x{tile}x{64 // tile}f32")
                for p in ("tf32", "ieee")} for tile in (32, 16)}

# CDNA2 (gfx90a): fp16, bf16 (the 4-wide `_1k` forms) and int8, 4 K elements a lane
MFMA32_CDNA2 = _unit("mfma 32x32", ("gfx90a",), 32, {
    ("fp16", "ieee"): _mfma(32, 32, 8, 4, "f32.f16.f16", "f32_32x32x8f16"),
    ("bf16", "ieee"): _mfma(32, 32, 8, 4, "f32.bf16.bf16", "f32_32x32x8bf16_1k"),
    ("i8", "ieee"): _mfma(32, 32, 8, 4, "i32.i8.i8", "i32_32x32x8i8"),
    **_FP32[32]})
MFMA16_CDNA2 = _unit("mfma 16x16", ("gfx90a",), 16, {
    ("fp16", "ieee"): _mfma(16, 16, 16, 4, "f32.f16.f16", "f32_16x16x16f16"),
    ("bf16", "ieee"): _mfma(16, 16, 16, 4, "f32.bf16.bf16", "f32_16x16x16bf16_1k"),
    ("i8", "ieee"): _mfma(16, 16, 16, 4, "i32.i8.i8", "i32_16x16x16i8"),
    **_FP32[16]})

# CDNA3 (gfx940, gfx941, gfx942): int8 8 a lane, fp8 (FNUZ) and xf32 (tf32's role)
MFMA32_CDNA3 = _unit("mfma 32x32", ("gfx94",), 32, {
    ("fp16", "ieee"): _mfma(32, 32, 8, 4, "f32.f16.f16", "f32_32x32x8f16"),
    ("bf16", "ieee"): _mfma(32, 32, 8, 4, "f32.bf16.bf16", "f32_32x32x8bf16_1k"),
    ("i8", "ieee"): _mfma(32, 32, 16, 8, "i32.i8.i8", "i32_32x32x16_i8"),
    ("fp8e4b8", "ieee"): _mfma(32, 32, 16, 8, "f32.fp8.fp8", "f32_32x32x16_fp8_fp8"),
    ("fp8e5b16", "ieee"): _mfma(32, 32, 16, 8, "f32.bf8.bf8", "f32_32x32x16_bf8_bf8"),
    ("fp32", "tf32"): _mfma(32, 32, 4, 2, "f32.xf32.xf32", "f32_32x32x4_xf32"),
    ("fp32", "ieee"): _FP32[32][("fp32", "ieee")]})
MFMA16_CDNA3 = _unit("mfma 16x16", ("gfx94",), 16, {
    ("fp16", "ieee"): _mfma(16, 16, 16, 4, "f32.f16.f16", "f32_16x16x16f16"),
    ("bf16", "ieee"): _mfma(16, 16, 16, 4, "f32.bf16.bf16", "f32_16x16x16bf16_1k"),
    ("i8", "ieee"): _mfma(16, 16, 32, 8, "i32.i8.i8", "i32_16x16x32_i8"),
    ("fp8e4b8", "ieee"): _mfma(16, 16, 32, 8, "f32.fp8.fp8", "f32_16x16x32_fp8_fp8"),
    ("fp8e5b16", "ieee"): _mfma(16, 16, 32, 8, "f32.bf8.bf8", "f32_16x16x32_bf8_bf8"),
    ("fp32", "tf32"): _mfma(16, 16, 8, 2, "f32.xf32.xf32", "f32_16x16x8_xf32"),
    ("fp32", "ieee"): _FP32[16][("fp32", "ieee")]})

# in the HIP target's order of preference: an architecture's 32 x 32 tiles first
AMD_UNITS = (MFMA32_CDNA3, MFMA16_CDNA3, MFMA32_CDNA2, MFMA16_CDNA2)
