"""Descriptor stores the copy engine writes on sm_90 (passes.settle.TmaStore): which
stores, the tile their blocks pass through, the source, the fallback where the tile does
not fit, and on the GPU the blocks written at any offset, clipped to the tensor."""

from __future__ import annotations

import os
import runpy

import numpy as np
import pytest

import tilecc
import tilecc.language as tl
from tilecc.runtime import compiler

try:
    from conftest_compilers import require_cuda_compiler
    from test_coalesce import stmatrix_lands
    from test_compile_kernels import assert_clean_compile
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import require_cuda_compiler
    from tests.test_coalesce import stmatrix_lands
    from tests.test_compile_kernels import assert_clean_compile

PERSISTENT = runpy.run_path(os.path.join(os.path.dirname(__file__), "..", "examples",
                                         "persistent_matmul.py"), run_name="not_main")
KERNEL = PERSISTENT["persistent_matmul_kernel"]


def _signature(bm: int, bn: int, bk: int) -> str:
    return (f"tensordesc<fp16[{bm}, {bk}]>:16, tensordesc<fp16[{bk}, {bn}]>:16, "
            f"tensordesc<fp16[{bm}, {bn}]>:16, i32:16, i32:16, i32:16, {bm}, {bn}, {bk}, 8, 132")


def _lowered(signature: str, arch: str = "sm_90a", num_warps: int = 8, num_stages: int = 3,
             target: str = "cuda"):
    kernel, _ = KERNEL.lower(KERNEL._specs(signature, {}), target, num_warps,
                             num_stages=num_stages, arch=arch)
    return kernel, [op for op in kernel.walk() if op.kind == "store"]


def test_a_persistent_kernels_output_tiles_go_out_by_the_copy_engine() -> None:
    kernel, stores = _lowered(_signature(128, 256, 64))
    (store,) = stores
    t = store.attrs["tma_store"]
    assert (t.map.param, t.map.box, t.map.swizzle, t.map.store) == ("c_desc", (128, 64), 128,
                                                                      True)
    assert t.map in kernel.tensor_maps
    # a tile of its own, 1024-byte aligned, after the stages and their mbarriers
    from tilecc.transpiler.passes.settle import dynamic_tiles
    others = [x for x in dynamic_tiles(kernel) if x is not t.buffer]
    assert t.buffer.offset % 1024 == 0 and t.buffer.nbytes == 128 * 256 * 2
    assert t.buffer.offset >= max(x.offset + x.nbytes for x in others)
    assert not [op for op in kernel.walk() if op.kind == "convert"]  # no coalescing too
    src = KERNEL.source(_signature(128, 256, 64), num_warps=8, num_stages=3, arch="sm_90a")
    epilogue = src[src.index("// L59: c_desc.store"):]
    # a corner outside the tensor (which the copy engine faults on) goes the threads' way
    steps = ["if (", ">= 0 &&", "< c_desc_shape0 &&", "< c_desc_shape1) {",
             "tc::tma_store_wait_read<0>();  // the last copies have read it",
             "tc::swizzled_chunk<8>(", "tc::fence_proxy_async();  // the tile, visible",
             "for (int col = 0; col < 256; col += 64)", "tc::tma_store_2d(c_desc_map, "
             "tc::smem_address(buffer + col * 128)", "tc::tma_store_commit();", "} else {",
             "tc::store<2>(c_desc_base",
             "tc::tma_store_wait_read<0>();  // the TMA stores have read their tile"]
    at = [epilogue.index(s) for s in steps]
    assert at == sorted(at)
    assert epilogue.count("tc::store<2>(c_desc_base") == 1


@pytest.mark.parametrize("bm,bn,warps", [(128, 256, 8), (128, 128, 4), (64, 128, 4)])
def test_the_tile_is_written_by_stmatrix_where_the_copy_engine_reads(bm, bn, warps) -> None:
    """The accumulator goes into the copy engine's tile as stmatrix's 8 x 8 blocks (sm_90):
    every element lands (`stmatrix_lands`) where TMA's 128-byte swizzle reads it: box
    col / 64, 16-byte chunk (col % 64 / 8) ^ (row % 8) of its row."""
    _, (store,) = _lowered(_signature(bm, bn, 64), num_warps=warps)
    t, x = store.attrs["tma_store"], store.operands[1]
    box_cols, p = t.map.box[1], x.layout
    assert box_cols == 64 and p.matrix_fragments
    src = KERNEL.source(_signature(bm, bn, 64), num_warps=warps, num_stages=3, arch="sm_90a")
    assert src.count("tc::stmatrix_x4(") == 1 and "tc::store<2>(\n" not in src

    def tma_place(row: int, col: int) -> int:
        chunk = (col % box_cols // 8) ^ (row % 8)
        return col // box_cols * bm * box_cols + row * box_cols + chunk * 8 + col % 8

    assert len(stmatrix_lands(p, warps, tma_place)) == bm * bn


def test_no_copy_engine_stores_where_their_tile_does_not_fit() -> None:
    """128 x 256 x 64 in 4 stages takes 192 KiB: with the 64 KiB tile it would pass what a
    program may have; the build stores those blocks from the threads (through the tl.dot
    tiles, coalesced) and fits."""
    sig = _signature(128, 256, 64)
    art = compiler.transpile(KERNEL, KERNEL._specs(sig, {}), "cuda", KERNEL.options(
        arch="sm_90a", num_warps=8, num_stages=4))
    assert "tc::tma_store_2d" not in art.source and "tc::store_if<8>(" in art.source
    assert art.products.shared_bytes <= 232448
    assert [m.param for m in art.kernel.tensor_maps] == ["a_desc", "a_desc", "b_desc"]


@pytest.mark.parametrize("target,arch", [("cuda", "sm_80"), ("hip", "gfx90a")])
def test_no_copy_engine_stores_without_one(target, arch) -> None:
    _, stores = _lowered(_signature(128, 128, 64), arch=arch, target=target)
    assert not [s for s in stores if "tma_store" in s.attrs]


@tilecc.jit
def store_at_kernel(a_ptr, b_ptr, c_desc, K, r, c, BM: tl.constexpr, BN: tl.constexpr,
                    BK: tl.constexpr):
    """C's block at (r, c) = A @ B, A BM x K and B K x BN row-major (a pipelined K
    loop: the kernel a copy engine's store is for).  The corner's names are those the
    copies' loops might take (the loop over a block's boxes was once `c` and read
    `c + c`)."""
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc = tl.dot(a, b, acc)
    c_desc.store([r, c], acc.to(c_desc.dtype))


def _store_at_signature(dtype: str, bm: int, bn: int) -> str:
    return f"*fp16:16, *fp16:16, tensordesc<{dtype}[{bm}, {bn}]>:16, i32:16, i32, i32, " \
           f"{bm}, {bn}, 32"


@pytest.mark.parametrize("dtype,bm,bn", [("fp16", 64, 64), ("fp32", 64, 64),
                                         ("fp16", 128, 128), ("bf16", 64, 128)])
def test_blocks_of_any_16_and_32_bit_type_are_stored_in_128_byte_boxes(dtype, bm, bn) -> None:
    require_cuda_compiler()
    sig = _store_at_signature(dtype, bm, bn)
    kernel, _ = store_at_kernel.lower(store_at_kernel._specs(sig, {}), "cuda", 4,
                                      num_stages=3, arch="sm_90a")
    (store,) = [op for op in kernel.walk() if op.kind == "store"]
    inner = 128 // (4 if dtype == "fp32" else 2)
    assert store.attrs["tma_store"].map.box == (bm, inner)
    # each box at the user's column plus its own (the loop's index never hides `c`)
    src = store_at_kernel.source(sig, num_warps=4, num_stages=3, arch="sm_90a")
    assert f"for (int col = 0; col < {bn}; col += {inner})" in src
    assert ",c+col,r_);" in "".join(src.split("tc::tma_store_2d(")[1].split())
    assert_clean_compile(store_at_kernel, sig, "cuda", "sm_90a", num_warps=4, num_stages=3)


def test_the_interpreter_stores_the_block_clipped() -> None:
    """The IR keeps the store's bounds mask for the interpreter: what lies outside the
    tensor is not written, as the copy engine clips its boxes."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 64)).astype(np.float16)
    b = rng.standard_normal((64, 64)).astype(np.float16)
    want_block = a.astype(np.float32) @ b.astype(np.float32)
    for om, on in [(-10, 5), (40, -33), (100, 100), (0, 0)]:
        c = np.full((90, 80), 7, np.float32)
        store_at_kernel.interpret[(1,)](a, b, tilecc.TensorDescriptor.from_tensor(c, [64, 64]),
                                        64, om, on, BM=64, BN=64, BK=32)
        want = np.full((90, 80), 7, np.float32)
        rows, cols = np.arange(om, om + 64), np.arange(on, on + 64)
        ri, ci = (rows >= 0) & (rows < 90), (cols >= 0) & (cols < 80)
        want[np.ix_(rows[ri], cols[ci])] = want_block[np.ix_(ri, ci)]
        np.testing.assert_allclose(c, want, rtol=1e-3, atol=1e-3)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype,bn", [("float16", 64), ("float32", 64), ("float16", 128)])
def test_gpu_blocks_stored_at_any_offset_are_clipped_to_the_tensor(dtype, bn) -> None:
    """(fp32 at 64 columns and fp16 at 128: two boxes a row of the block; 184 columns,
    rows 16-byte multiples apart as a descriptor's strides must be.)"""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    torch.manual_seed(0)
    a = torch.randn(64, 128, device="cuda", dtype=torch.float16)
    b = torch.randn(128, bn, device="cuda", dtype=torch.float16)
    block = (a.float() @ b.float()).to(getattr(torch, dtype))
    for om, on in [(-10, 5), (40, -33), (100, 100), (0, 0), (26, 16), (-64, 0), (3, 40)]:
        c = torch.full((90, 184), 7.0, device="cuda", dtype=getattr(torch, dtype))
        store_at_kernel[(1,)](a, b, tilecc.TensorDescriptor.from_tensor(c, [64, bn]), 128, om,
                              on, BM=64, BN=bn, BK=32, num_warps=4, num_stages=3)
        want = torch.full((90, 184), 7.0, device="cuda", dtype=getattr(torch, dtype))
        r0, r1, c0, c1 = max(om, 0), min(om + 64, 90), max(on, 0), min(on + bn, 184)
        if r0 < r1 and c0 < c1:
            want[r0:r1, c0:c1] = block[r0 - om:r1 - om, c0 - on:c1 - on]
        torch.testing.assert_close(c, want, rtol=1e-2, atol=1e-2, msg=f"at ({om}, {on})")


@tilecc.jit
def load_and_store_kernel(a_desc, b_ptr, K, BM: tl.constexpr, BK: tl.constexpr):
    """A's rows times B, stored back over A's first block: one descriptor read by the copy
    engine (A's operand boxes) and written."""
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BK), dtype=tl.float32)
    for k in range(0, K, BK):
        a = a_desc.load([0, k])
        b = tl.load(b_ptr + (k + rk)[:, None] * BK + rk[None, :])
        acc = tl.dot(a, b, acc)
    a_desc.store([0, 0], acc.to(tl.float16))


def test_a_descriptor_copied_in_keeps_its_one_map() -> None:
    """A kernel's descriptor has one tensor map: where its loads' boxes are not the
    store's, the store stays the threads'."""
    sig = "tensordesc<fp16[64, 64]>:16, *fp16:16, i32:16, 64, 64"
    kernel, _ = load_and_store_kernel.lower(load_and_store_kernel._specs(sig, {}), "cuda", 4,
                                            num_stages=3, arch="sm_90a")
    (store,) = [op for op in kernel.walk() if op.kind == "store"]
    assert "tma_store" not in store.attrs
    assert [(m.param, m.box, m.store, m.rows_split is not None)
            for m in kernel.tensor_maps if m.param == "a_desc"] == [
                ("a_desc", (64, 64), False, True), ("a_desc", (8, 64), False, False)]
