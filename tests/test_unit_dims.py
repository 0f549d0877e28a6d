"""Unit dims of loads and stores (passes.unit_dims): a block of a 3-D descriptor or block
pointer with a box of 1 along the batch, reshaped to the 2-D block a product reads, is
loaded as that block — on sm_90 its copies go straight to the product's tile through the
map's third dim (TMA) — and a product's result reshaped back to the box is stored as the
2-D block (the copy engine's store).  The kernels are written as Liger's fused SwiGLU MLP
writes them."""

from __future__ import annotations

import numpy as np
import pytest

import tilecc
import tilecc.language as tl
from tilecc.transpiler.passes.unit_dims import dropped_dims

try:
    from conftest_compilers import require_cuda_compiler
    from test_compile_kernels import assert_clean_compile
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import require_cuda_compiler
    from tests.test_compile_kernels import assert_clean_compile


@tilecc.jit
def gate_up_kernel(x_desc, wg_desc, wu_desc, o_desc, K, BM: tl.constexpr, BN: tl.constexpr,
                   BK: tl.constexpr):
    """silu(x @ wg^T) * (x @ wu^T) per batch: x is (B, S, K), the weights (N, K), the output
    (B, S, N); one block of x feeds both products."""
    pid_m, pid_n, b = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    gate = tl.zeros((BM, BN), dtype=tl.float32)
    up = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.reshape(x_desc.load([b, pid_m * BM, k]), [BM, BK])
        gate = tl.dot(x, tl.trans(wg_desc.load([pid_n * BN, k])), acc=gate)
        up = tl.dot(x, tl.trans(wu_desc.load([pid_n * BN, k])), acc=up)
    out = gate * tl.sigmoid(gate) * up
    o_desc.store([b, pid_m * BM, pid_n * BN], tl.reshape(out, [1, BM, BN]).to(tl.float16))


@tilecc.jit
def block_ptr_kernel(x_ptr, w_ptr, o_ptr, S, K, N, BM: tl.constexpr, BN: tl.constexpr,
                     BK: tl.constexpr):
    """The same batched product through block pointers: x (B, S, K) contiguous, w (K, N)."""
    pid_m, pid_n, b = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    xp = tl.make_block_ptr(x_ptr, (b + 1, S, K), (S * K, K, 1), (b, pid_m * BM, 0),
                           (1, BM, BK), (2, 1, 0))
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(xp, boundary_check=(0, 1, 2)).reshape(BM, BK)
        w = tl.load(w_ptr + (k + tl.arange(0, BK))[:, None] * N + pid_n * BN +
                    tl.arange(0, BN)[None, :], mask=(k + tl.arange(0, BK))[:, None] < K,
                    other=0.0)
        acc = tl.dot(x, w, acc)
        xp = tl.advance(xp, (0, 0, BK))
    rows = pid_m * BM + tl.arange(0, BM)
    cols = pid_n * BN + tl.arange(0, BN)
    tl.store(o_ptr + b * S * N + rows[:, None] * N + cols[None, :], acc, mask=rows[:, None] < S)


@tilecc.jit
def middle_unit_kernel(x_desc, w_ptr, o_ptr, S, K, B, BM: tl.constexpr, BK: tl.constexpr):
    """x (S, B, K) read as [BM, 1, BK] blocks of one batch: the dropped dim is not the
    map's leading one, so the block is loaded by the threads."""
    pid_m, b = tl.program_id(0), tl.program_id(1)
    acc = tl.zeros((BM, BK), dtype=tl.float32)
    for k in range(0, K, BK):
        x = x_desc.load([pid_m * BM, b, k]).reshape(BM, BK)
        w = tl.load(w_ptr + (k + tl.arange(0, BK))[:, None] * BK + tl.arange(0, BK)[None, :])
        acc = tl.dot(x, w, acc)
    rows = pid_m * BM + tl.arange(0, BM)
    cols = tl.arange(0, BK)
    tl.store(o_ptr + rows[:, None] * (B * BK) + b * BK + cols[None, :], acc,
             mask=rows[:, None] < S)


@tilecc.jit
def roundtrip_kernel(X, Y, N: tl.constexpr):
    """A row loaded as [1, N], reshaped to [N] and back for its store: both folded, the
    store reading the folded load (a sort's network reshapes so)."""
    offs = tl.arange(0, 1)[:, None] * N + tl.arange(0, N)[None, :]
    row = tl.reshape(tl.load(X + offs), [N])
    tl.store(Y + offs, tl.reshape(row * 2, [1, N]))


def _gate_up_signature(bm: int, bn: int, bk: int) -> str:
    d3, d2 = f"tensordesc<fp16[1, {bm}, {bk}]>", f"tensordesc<fp16[{bn}, {bk}]>"
    return f"{d3}, {d2}, {d2}, tensordesc<fp16[1, {bm}, {bn}]>, i32, {bm}, {bn}, {bk}"


def _lowered(kernel, signature: str, num_warps: int = 4, arch: str = "sm_90a"):
    ir, _ = kernel.lower(kernel._specs(signature, {}), "cuda", num_warps, num_stages=3,
                         arch=arch)
    return ir


def test_dropped_dims_are_unit_dims_only() -> None:
    assert dropped_dims((1, 64, 32), (64, 32)) == (0,)
    assert dropped_dims((64, 1, 32), (64, 32)) == (1,)
    assert dropped_dims((1, 1, 64), (1, 64)) == (0,)  # (of several, the leading ones go)
    assert dropped_dims((1, 64, 1), (64,)) == (0, 2)
    assert dropped_dims((2, 32), (64,)) is None
    assert dropped_dims((64, 32), (64, 32)) is None
    assert dropped_dims((1, 64), (64, 1)) is None
    assert dropped_dims((1, 1), ()) is None  # (a scalar is not a block)


@pytest.mark.parametrize("warps,bm", [(4, 64), (4, 128), (8, 128)])
def test_a_batched_block_is_copied_to_both_products_tile(warps, bm) -> None:
    """The block of x is loaded as [BM, BK] (no reshape left), its descriptor's batch
    coordinate the copy's outer one, copied by TMA into one stage both products read; the
    result goes out through a 3-D map whose box is 1 along the batch."""
    ir = _lowered(gate_up_kernel, _gate_up_signature(bm, 128, 64), warps)
    assert not [op for op in ir.walk() if op.kind == "reshape"]
    (loop,) = [op for op in ir.walk() if op.kind == "for"]
    p = loop.attrs["pipeline"]
    (x_load,) = [ld for ld in p.loads if ld.result.name == "x"]
    copy = p.tma[p.loads.index(x_load)]
    assert x_load.result.type.shape == (bm, 64) and copy is not None
    assert [c.name for c in copy.outer] == ["b"] and copy.map_box[0] == 1
    assert copy.rows_split  # (A's rows in one box where the five dims hold them)
    (store,) = [op for op in ir.walk() if op.kind == "store"]
    t = store.attrs["tma_store"]
    assert t.map.box == (1, bm, 64) and [c.name for c in t.outer] == ["b"]
    src = gate_up_kernel.source(_gate_up_signature(bm, 128, 64), num_warps=warps,
                                num_stages=3, arch="sm_90a")
    assert "layout conversion" not in src and "read back" not in src
    assert "tc::tma_store_3d(o_desc_map" in src
    assert ", b, landed);" in src  # (the batch, the copies' outermost coordinate)
    if (warps, bm) == (4, 128):  # two copies along the slab dim (the map has one dim
        # fewer for the rows), the second two 32-row slabs on
        assert copy.rows_split == ((8, 1), (2, 32, 2), (4, 8))
        assert "0, pid_m * 128 / 32, 0, b, landed);" in src
        assert "0, pid_m * 128 / 32 + 2, 0, b, landed);" in src


def test_a_store_of_an_unshaped_value_keeps_its_rank() -> None:
    """Only a reshape that adds the unit dims is folded: the other loads and stores of the
    kernel, and a descriptor whose block has no unit dims, are as they were."""
    ir = _lowered(gate_up_kernel, _gate_up_signature(64, 128, 64))
    ranks = sorted(len(op.operands[0].type.shape) for op in ir.walk()
                   if op.kind in ("load", "store"))
    assert ranks == [2, 2, 2, 2]


def test_a_non_leading_unit_dim_leaves_the_copy_engine_out() -> None:
    sig = "tensordesc<fp16[64, 1, 32]>, *fp16, *fp32, i32, i32, i32, 64, 32"
    ir = _lowered(middle_unit_kernel, sig)
    (loop,) = [op for op in ir.walk() if op.kind == "for"]
    x_load = next(op for op in loop.regions[0].ops if op.kind == "load" and
                  op.result.name == "x")
    assert x_load.result.type.shape == (64, 32) and "descriptor" not in x_load.attrs


@pytest.mark.parametrize("n", [1, 2, 64])
def test_a_folded_store_of_a_folded_load(n) -> None:
    ir = _lowered(roundtrip_kernel, f"*fp32, *fp32, {n}")
    assert [len(op.operands[0].type.shape) for op in ir.walk()
            if op.kind in ("load", "store")] == [1, 1]
    x = np.random.default_rng(n).standard_normal((1, n)).astype(np.float32)
    y = np.zeros_like(x)
    roundtrip_kernel.interpret[(1,)](x, y, n)
    np.testing.assert_array_equal(y, 2 * x)


def _gate_up_reference(x, wg, wu):
    x, wg, wu = (a.astype(np.float64) for a in (x, wg, wu))
    gate, up = x @ wg.T, x @ wu.T
    return gate / (1 + np.exp(-gate)) * up


@pytest.mark.parametrize("b,s,k,n", [(2, 64, 64, 128), (3, 100, 96, 128), (1, 40, 128, 256)])
def test_interpreter_gate_up_against_numpy(b, s, k, n) -> None:
    """Ragged rows (100, 40: the copy engine's zeros past the batch's rows) and K (96)."""
    rng = np.random.default_rng(b * s + k)
    x = rng.standard_normal((b, s, k)).astype(np.float16)
    wg, wu = ((rng.standard_normal((n, k)) * 0.1).astype(np.float16) for _ in range(2))
    out = np.full((b, s, n), 7, np.float16)
    TD = tilecc.TensorDescriptor
    bm, bn, bk = 64, 128, 64
    grid = (tilecc.cdiv(s, bm), n // bn, b)
    gate_up_kernel.interpret[grid](TD.from_tensor(x, [1, bm, bk]), TD.from_tensor(wg, [bn, bk]),
                                   TD.from_tensor(wu, [bn, bk]), TD.from_tensor(out, [1, bm, bn]),
                                   k, BM=bm, BN=bn, BK=bk)
    np.testing.assert_allclose(out.astype(np.float64), _gate_up_reference(x, wg, wu),
                               rtol=2e-2, atol=2e-2)


def test_interpreter_block_pointers_and_middle_unit_dims_against_numpy() -> None:
    rng = np.random.default_rng(7)
    b, s, k, n = 2, 72, 64, 64
    x = rng.standard_normal((b, s, k)).astype(np.float16)
    w = (rng.standard_normal((k, n)) * 0.1).astype(np.float16)
    out = np.zeros((b, s, n), np.float32)
    block_ptr_kernel.interpret[(2, 1, b)](x, w, out, s, k, n, BM=64, BN=64, BK=32)
    want = x.astype(np.float64) @ w.astype(np.float64)
    np.testing.assert_allclose(out, want, rtol=1e-3, atol=1e-3)
    # x stored (S, B, K): each program reads one batch's rows
    xs = np.ascontiguousarray(x.transpose(1, 0, 2)[:, :, :32])
    w2 = (rng.standard_normal((32, 32)) * 0.1).astype(np.float16)
    out2 = np.zeros((s, b, 32), np.float32)
    middle_unit_kernel.interpret[(2, b)](tilecc.TensorDescriptor.from_tensor(xs, [64, 1, 32]),
                                         w2, out2, s, 32, b, BM=64, BK=32)
    want2 = xs.astype(np.float64) @ w2.astype(np.float64)
    np.testing.assert_allclose(out2, want2, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("warps,bm", [(4, 64), (8, 128)])
def test_generated_cuda_compiles(warps, bm) -> None:
    require_cuda_compiler()
    for arch in ("sm_90a", "sm_80"):
        assert_clean_compile(gate_up_kernel, _gate_up_signature(bm, 128, 64), "cuda", arch,
                             num_warps=warps, num_stages=3)
    assert_clean_compile(block_ptr_kernel, "*fp16, *fp16, *fp32, i32, i32, i32, 64, 64, 32",
                         "cuda", "sm_90a", num_warps=4, num_stages=3)


@pytest.mark.gpu
@pytest.mark.parametrize("warps,bm", [(4, 64), (4, 128), (8, 128)])
@pytest.mark.parametrize("s", [256, 200, 40])
def test_gpu_gate_up_against_numpy(warps, bm, s) -> None:
    """Rows past each batch's last (200, 40) read zeros and are not written; 40 rows are
    fewer than a slab of the split map's rows (the 8-row map copies every block)."""
    cp = pytest.importorskip("cupy")
    try:
        cp.cuda.runtime.getDeviceCount()
    except cp.cuda.runtime.CUDARuntimeError:
        pytest.skip("no CUDA device")
    rng = np.random.default_rng(s + bm)
    b, k, n = 3, 192, 256
    x = rng.standard_normal((b, s, k)).astype(np.float16)
    wg, wu = ((rng.standard_normal((n, k)) * 0.1).astype(np.float16) for _ in range(2))
    out = cp.full((b, s, n), 7, cp.float16)
    TD = tilecc.TensorDescriptor
    bn, bk = 128, 64
    gate_up_kernel[(tilecc.cdiv(s, bm), n // bn, b)](
        TD.from_tensor(cp.asarray(x), [1, bm, bk]), TD.from_tensor(cp.asarray(wg), [bn, bk]),
        TD.from_tensor(cp.asarray(wu), [bn, bk]), TD.from_tensor(out, [1, bm, bn]), k,
        BM=bm, BN=bn, BK=bk, num_warps=warps, num_stages=3)
    np.testing.assert_allclose(cp.asnumpy(out).astype(np.float64),
                               _gate_up_reference(x, wg, wu), rtol=2e-2, atol=2e-2)
