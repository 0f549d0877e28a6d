"""A 16-bit block loaded into a product's accumulator layout (it meets the product's result
element by element) is read in 16-byte vectors from a blocked layout and converted through
the pool, its pointers and mask computed again in that layout (`passes.coalesce.
coalesce_loads`); `ldmatrix` reads the fragments back.  Before, such a load read 4 bytes a
lane in the accumulator's column pairs (fla's WY-representation backward: 196 four-byte
loads against Triton's 56 of 16 bytes).  Checked in the IR, in the source, on the
interpreter against NumPy, compiled by NVRTC, and on the GPU."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tilecc
import tilecc.language as tl

try:
    from conftest_compilers import require_cuda_compiler
    from test_coalesce import _swizzled_chunk, stmatrix_lands
    from test_compile_kernels import assert_clean_compile
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import require_cuda_compiler
    from tests.test_coalesce import _swizzled_chunk, stmatrix_lands
    from tests.test_compile_kernels import assert_clean_compile


@tilecc.jit
def weighted_rows(a_ptr, u_ptr, v_ptr, p_ptr, s_ptr, T, V, BT: tl.constexpr,
                  BV: tl.constexpr):
    """Per block of BT rows and chunk of BV columns: p = a @ u (a: the block's BT x BT
    matrix), stored in bf16; s = the row sums of p * v over every chunk.  v meets the
    product's result element by element: it is loaded into the accumulator's layout."""
    o_t = tl.program_id(0) * BT + tl.arange(0, BT)
    m_t = o_t < T
    o_a = tl.arange(0, BT)
    a = tl.load(a_ptr + o_t[:, None] * BT + o_a[None, :], mask=m_t[:, None], other=0.0)
    s = tl.zeros([BT], dtype=tl.float32)
    for i_v in range(tl.cdiv(V, BV)):
        o_v = i_v * BV + tl.arange(0, BV)
        m = m_t[:, None] & (o_v[None, :] < V)
        u = tl.load(u_ptr + o_t[:, None] * V + o_v[None, :], mask=m, other=0.0)
        v = tl.load(v_ptr + o_t[:, None] * V + o_v[None, :], mask=m, other=0.0)
        p = tl.dot(a, u)
        s += tl.sum(p * v, 1)
        tl.store(p_ptr + o_t[:, None] * V + o_v[None, :], p.to(p_ptr.dtype.element_ty), mask=m)
    tl.store(s_ptr + o_t, s, mask=m_t)


def _signature(dtype: str = "bf16", aligned: bool = True, bt: int = 64, bv: int = 64) -> str:
    return f"*{dtype}:16,*{dtype}:16,*{dtype}:16,*{dtype}:16,*fp32:16,i32," \
           f"i32{':16' if aligned else ''},{bt},{bv}"


def _lowered(sig: str, target: str = "cuda", arch: str = "sm_90a", warps: int = 4):
    kernel, notes = weighted_rows.lower(weighted_rows._specs(sig, {}), target, warps,
                                        num_stages=2, arch=arch)
    [loop] = [op for op in kernel.body.ops if op.kind == "for"]
    return kernel, loop.regions[0], notes


@pytest.mark.parametrize("arch,warps", [("sm_90a", 2), ("sm_90a", 8), ("sm_80", 4)])
def test_a_block_met_by_a_product_is_loaded_in_16_byte_vectors(arch, warps) -> None:
    """v is read 16 bytes a thread, then converted to the product's layout right before
    the product's result meets it: not where it is loaded, so that its latency stays
    under the product.  (With one warpgroup on sm_90 the pipeline copies v ahead with
    the product's operand and each thread reads its own elements back: no conversion.)"""
    kernel, body, notes = _lowered(_signature(), arch=arch, warps=warps)
    [v_load] = [op for op in body.ops if op.kind == "load" and op.result.name == "v"]
    [convert] = [op for op in body.ops if op.kind == "convert" and
                 op.operands[0].owner.kind == "load"]
    assert v_load.attrs["plan"].vec == 8 and convert.operands[0] is v_load.result
    assert not convert.result.layout == v_load.result.layout
    assert convert.result.layout.matrix_fragments
    at = body.ops.index(convert)
    assert [op.kind for op in body.ops].index("dot") < at
    assert convert.result in body.ops[at + 1].operands  # (its first reader, p * v)
    assert any("v (bf16[64, 64]), loaded in 16-byte vectors" in n for n in notes)
    src = weighted_rows.source(_signature(), arch=arch, num_warps=warps, num_stages=2)
    assert "layout conversion, in 16-byte chunks swizzled by row (ldmatrix)" in src
    assert "tc::ldmatrix_x4(packed, tc::smem_address(" in src
    assert re.search(r"L\d+ load v: 8 x bf16 \(16 B\) along axis 1", src)


def test_no_conversion_where_the_load_would_be_no_wider() -> None:
    """Rows of unknown alignment (V not known to be a multiple of 8): a blocked layout
    reads no wider vectors than the accumulator's, so v stays where it was."""
    kernel, body, notes = _lowered(_signature(aligned=False))
    assert not [op for op in kernel.walk() if op.kind == "convert" and
                op.operands[0].owner.kind == "load"]
    assert not any("loaded in 16-byte vectors" in n for n in notes)


def test_no_conversion_for_fp32_or_on_amd() -> None:
    """fp32 pairs are 8 bytes a lane already; on AMD (not measured there) nothing changes."""
    for sig, target, arch in ((_signature("fp32"), "cuda", "sm_90a"),
                              (_signature(), "hip", "gfx90a")):
        _, _, notes = _lowered(sig, target, arch)
        assert not any("loaded in 16-byte vectors" in n for n in notes), (sig, target)


@pytest.mark.parametrize("warps", [2, 4, 8])
def test_ldmatrix_reads_each_element_from_where_the_writes_put_it(warps) -> None:
    """The conversion's reads (render_blocks.fragment_rows with ldmatrix), evaluated with
    the accumulator layout's own coordinates: every element is read from where the
    16-byte writes of the blocked layout put it (`swizzled`), each 8 x 8 block's rows in
    8 different bank groups."""
    kernel, body, _ = _lowered(_signature(), arch="sm_80", warps=warps)
    [convert] = [op for op in body.ops if op.kind == "convert" and
                 op.operands[0].owner.kind == "load"]
    x, y = convert.operands[0], convert.result
    rows, cols = y.type.shape

    def place(row: int, col: int) -> int:
        return _swizzled_chunk(cols // 8, row, col // 8) * 8 + col % 8

    written = set()
    for t in range(warps * 32):
        for r in range(0, x.layout.regs, 8):
            row, col = x.layout.coords(t, r, 32)
            assert place(row, col) % 8 == 0
            written |= {place(row, col + k) for k in range(8)}
    assert written == set(range(rows * cols))
    assert len(stmatrix_lands(y.layout, warps, place)) == rows * cols


def _case(T: int, V: int, BT: int, seed: int, dtype=np.float16):
    rng = np.random.default_rng(seed)
    nt = -(-T // BT)
    a = (rng.integers(-1, 2, (nt * BT, BT)) / 4).astype(dtype)
    u, v = ((rng.integers(-3, 4, (T, V)) / 2).astype(dtype) for _ in range(2))
    return a, u, v


def _reference(a, u, v, T: int, BT: int):
    """float64: every product and sum here is exact in fp32 and in the stored precision."""
    p = np.zeros(u.shape)
    for r0 in range(0, T, BT):
        rows = slice(r0, min(r0 + BT, T))
        p[rows] = a[rows, :rows.stop - r0].astype(np.float64) @ u[rows].astype(np.float64)
    return p, (p * v.astype(np.float64)).sum(1)


CASES = [(100, 64, 64, 64, 4), (64, 96, 64, 32, 2), (37, 40, 32, 16, 2)]  # T, V, BT, BV, warps


@pytest.mark.parametrize("T,V,BT,BV,warps", CASES)
def test_interpreter_weighted_rows(T, V, BT, BV, warps) -> None:
    """The interpreter runs the IR the passes leave, the conversion included: ragged rows
    and chunks give NumPy's answer."""
    a, u, v = _case(T, V, BT, seed=T + V)
    p = np.full((T, V), 7, np.float16)
    s = np.full(T, 7, np.float32)
    weighted_rows.interpret[(tilecc.cdiv(T, BT),)](a, u, v, p, s, T, V, BT=BT, BV=BV)
    ref_p, ref_s = _reference(a, u, v, T, BT)
    np.testing.assert_array_equal(p.astype(np.float64), ref_p)
    np.testing.assert_array_equal(s.astype(np.float64), ref_s)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_weighted_rows_compiles_cleanly(arch) -> None:
    require_cuda_compiler()
    for dtype in ("fp16", "bf16"):
        for _, _, BT, BV, warps in CASES:
            assert_clean_compile(weighted_rows, _signature(dtype, bt=BT, bv=BV), "cuda", arch,
                                 num_warps=warps, num_stages=2)


@pytest.mark.gpu
@pytest.mark.parametrize("T,V,BT,BV,warps", CASES)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_gpu_weighted_rows(T, V, BT, BV, warps, dtype) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    a, u, v = _case(T, V, BT, seed=T + V)
    dt = getattr(torch, dtype)
    args = [torch.from_numpy(x).cuda().to(dt) for x in (a, u, v)]
    p = torch.full((T, V), 7.0, device="cuda", dtype=dt)
    s = torch.full((T,), 7.0, device="cuda")
    weighted_rows[(tilecc.cdiv(T, BT),)](*args, p, s, T, V, BT=BT, BV=BV, num_warps=warps,
                                         num_stages=2)
    ref_p, ref_s = _reference(a, u, v, T, BT)
    np.testing.assert_array_equal(p.float().cpu().numpy().astype(np.float64), ref_p)
    np.testing.assert_array_equal(s.cpu().numpy().astype(np.float64), ref_s)
