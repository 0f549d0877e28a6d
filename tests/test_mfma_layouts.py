"""AMD's MFMA rows, proven without the hardware: from a row's lane-layout data alone, A and
B are distributed to the registers of a wave's 64 lanes, the instruction is emulated
(every lane's accumulator element is the sum over K of the A and B elements the wave
holds for its row and column, as the hardware's cross-lane dot product is), and the
accumulator gathered back from the lanes must be A @ B — for every AMD instruction.  The
renderer's staged operands and accumulator blocks are checked against the same data."""

from __future__ import annotations

import numpy as np
import pytest

from tilecc.transpiler.matrix_units_amd import AMD_UNITS
from tilecc.transpiler.passes.dot import accumulator
from tilecc.transpiler.passes.placement import Placement

WAVE = 64
ROWS = [(unit, key, ins) for unit in AMD_UNITS for key, ins in unit.instructions.items()]


def _ids(row) -> str:
    unit, key, ins = row
    return f"{ins.mnemonic}-{'.'.join(unit.archs)}"


def _distribute(ins, a: np.ndarray, b: np.ndarray):
    """Each lane's operand registers, read from A (M x K) and B (K x N) by the layout."""
    a_regs = np.zeros((WAVE, ins.k_per_lane), a.dtype)
    b_regs = np.zeros((WAVE, ins.k_per_lane), b.dtype)
    for lane in range(WAVE):
        for s in range(ins.k_per_lane):
            a_regs[lane, s] = a[ins.a_element(lane, s)]
            b_regs[lane, s] = b[ins.b_element(lane, s)]
    return a_regs, b_regs


def _emulate(ins, a_regs: np.ndarray, b_regs: np.ndarray) -> np.ndarray:
    """The instruction on the wave's registers: who holds (row, k) of A and (k, column) of
    B is known only through the layout; each accumulator register gets its dot product."""
    a_at = {ins.a_element(l, s): a_regs[l, s] for l in range(WAVE) for s in range(ins.k_per_lane)}
    b_at = {ins.b_element(l, s): b_regs[l, s] for l in range(WAVE) for s in range(ins.k_per_lane)}
    acc = np.zeros((WAVE, ins.accumulator_slots), np.float64)
    for lane in range(WAVE):
        for s in range(ins.accumulator_slots):
            i, j = ins.accumulator_element(lane, s)
            acc[lane, s] = sum(float(a_at[(i, kk)]) * float(b_at[(kk, j)]) for kk in range(ins.k))
    return acc


@pytest.mark.parametrize("row", ROWS, ids=_ids)
def test_lane_layouts_compute_a_times_b(row) -> None:
    unit, key, ins = row
    rng = np.random.default_rng(len(ins.mnemonic))
    a = rng.integers(-8, 8, (ins.m, ins.k)).astype(np.float64)
    b = rng.integers(-8, 8, (ins.k, ins.n)).astype(np.float64)
    # every element of A and B is held by exactly one (lane, slot): a wave's operands
    # cover the instruction's tiles
    cells_a = {ins.a_element(l, s) for l in range(WAVE) for s in range(ins.k_per_lane)}
    cells_b = {ins.b_element(l, s) for l in range(WAVE) for s in range(ins.k_per_lane)}
    assert len(cells_a) == WAVE * ins.k_per_lane == ins.m * ins.k
    assert len(cells_b) == WAVE * ins.k_per_lane == ins.k * ins.n
    acc = _emulate(ins, *_distribute(ins, a, b))
    d = np.full((ins.m, ins.n), np.nan)
    for lane in range(WAVE):
        for s in range(ins.accumulator_slots):
            i, j = ins.accumulator_element(lane, s)
            assert np.isnan(d[i, j]), "two lanes hold one accumulator element"
            d[i, j] = acc[lane, s]
    np.testing.assert_array_equal(d, a @ b)


@pytest.mark.parametrize("row", ROWS, ids=_ids)
def test_the_accumulator_is_the_units_blocked_layout(row) -> None:
    """The block tilecc keeps the product in (the unit's accumulator layout, one warp, one
    instruction tile) puts register `s` of lane `l` where the instruction writes it."""
    unit, key, ins = row
    p = Placement(accumulator(unit, (1, 1)), (ins.m, ins.n))
    assert p.regs == ins.accumulator_slots
    for lane in range(WAVE):
        for s in range(ins.accumulator_slots):
            assert p.coords(lane, s, WAVE) == ins.accumulator_element(lane, s)


def test_instruction_k_is_what_the_lanes_hold() -> None:
    for unit, key, ins in ROWS:
        assert ins.k == ins.k_per_lane * WAVE // ins.m == ins.k_per_lane * WAVE // ins.n
        assert ins.mnemonic.startswith("v_mfma_") and ins.intrinsic == "mfma_" + ins.mnemonic[7:]


_COMPILED: dict[str, object] = {}


def _eval(expr: str, **names: int) -> int:
    """A C index expression of the renderer, in Python (/ of non-negative ints: //)."""
    code = _COMPILED.get(expr)
    if code is None:
        text = expr.replace("tc::lane_id()", "lane").replace("tc::warp_id()", "warp")
        code = _COMPILED[expr] = compile(text.replace("/", "//"), expr, "eval")
    return eval(code, {}, names)


# the loop's indices depend on the instruction's tile and K run only
SHAPES = list({(ins.m, ins.n, ins.k_per_lane): row for row in ROWS
               for ins in [row[2]]}.values())


@pytest.mark.parametrize("warps,tiles", [((1, 1), (2, 2)), ((2, 1), (2, 2)), ((1, 2), (2, 2)),
                                         ((2, 2), (0, 0)), ((1, 4), (1, 0))])
@pytest.mark.parametrize("row", SHAPES, ids=_ids)
def test_the_loops_indices_feed_each_accumulator_register_its_row_and_column(row, warps,
                                                                             tiles) -> None:
    """The MFMA loop's C indices (render_dot.mfma_indices): instruction (mi, ni) of warp w
    reads for its row i the A row, and for its column j the B column, that the
    accumulator block holds in the register it writes slot q of (i, j) to — also where
    warps hold copies of a product smaller than their tiles (`tiles` 0: one instruction
    tile along that axis, shared by the warps: 16 x 16 instructions only)."""
    from tilecc.transpiler.render_dot import mfma_indices

    unit, key, ins = row
    wm_count, wn_count = warps
    m, n = ins.m * wm_count * tiles[0] or ins.m, ins.n * wn_count * tiles[1] or ins.n
    if ins.m == 32 and 0 in tiles:  # copies only on 16 x 16 tiles, the last row tried
        assert unit.split(m, n, ins.k, wm_count * wn_count, ins.k) is None
        return
    assert unit.split(m, n, ins.k, wm_count * wn_count, ins.k) is not None
    mt, nt = max(1, m // (ins.m * wm_count)), max(1, n // (ins.n * wn_count))
    acc = Placement(accumulator(unit, warps), (m, n))
    x = mfma_indices(ins, warps, nt, (m, n))
    for lane in range(WAVE):  # each lane's operands: the K elements the layout says
        for s in range(ins.k_per_lane):
            assert _eval(x["a_k"], lane=lane) + s == ins.a_element(lane, s)[1]
            assert _eval(x["b_k"], lane=lane) + s == ins.b_element(lane, s)[0]
    for warp in range(wm_count * wn_count):
        wm, wn = _eval(x["warp_m"], warp=warp), _eval(x["warp_n"], warp=warp)
        names = dict(warp=warp, wm=wm, wn=wn)
        # the block row (column) of instruction row i (column j): every lane holding it agrees
        row_of: dict[int, int] = {}
        col_of: dict[int, int] = {}
        for lane in range(WAVE):
            r = _eval(x["a_row"], lane=lane, **names)
            assert row_of.setdefault(ins.a_element(lane, 0)[0], r) == r
            c = _eval(x["b_col"], lane=lane, **names)
            assert col_of.setdefault(ins.b_element(lane, 0)[1], c) == c
        for mi in range(mt):
            rows = {i: _eval(x["row"], a_row=r, mi=mi) for i, r in row_of.items()}
            for ni in range(nt):
                cols = {j: _eval(x["col"], b_col=c, ni=ni) for j, c in col_of.items()}
                slot0 = _eval(x["slot0"], mi=mi, ni=ni)
                for lane in range(WAVE):
                    for q in range(ins.accumulator_slots):
                        i, j = ins.accumulator_element(lane, q)
                        assert acc.coords(warp * WAVE + lane, slot0 + q * nt, WAVE) == \
                            (rows[i], cols[j])
