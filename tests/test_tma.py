"""TMA copies of tensor descriptors on sm_90 (passes.pipeline.TmaCopy).

A load through a descriptor argument, or through one the kernel makes from its arguments
alone, that feeds a warpgroup product in a pipelined loop is copied by the copy engine
from a tensor map the launch encodes.  On CPU: which loads get
copies, the source and its NVRTC compile, what the launch encodes and passes, the disk
cache keeping the maps.  On the GPU: products equal torch's over awkward shapes (bounds
filled by the copy engine), NaN padding, mixed TMA / cp.async stages, and Triton's result.
"""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest

import tilecc
import tilecc.language as tl
from tilecc.runtime import compiler
from tilecc.runtime.launch import cuda as launch_cuda
from tilecc.transpiler.specs import TensorMap

from conftest_compilers import require_cuda_compiler


@tilecc.jit
def host_desc_matmul(a_desc, b_desc, c_ptr, M, N, K, stride_cm, BM: tl.constexpr,
                     BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = a_desc.load([pid_m * BM, k * BK])
        b = b_desc.load([k * BK, pid_n * BN])
        acc = tl.dot(a, b, acc)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@tilecc.jit
def desc_a_ptr_b_matmul(a_desc, b_ptr, c_ptr, M, N, K, stride_bk, stride_cm,
                        BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = a_desc.load([pid_m * BM, k * BK])
        kk = k * BK + rk
        b = tl.load(b_ptr + kk[:, None] * stride_bk + rn[None, :],
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    rm = pid_m * BM + tl.arange(0, BM)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


MIXED = "tensordesc<fp16[64, 64]>, *fp16:16, *fp32:16, i32, i32, i32, i32:16, i32, 64, 64, 64"


def _signature(dtype: str, bm: int, bn: int, bk: int, nan: bool = False) -> str:
    pad = ", nan" if nan else ""
    return (f"tensordesc<{dtype}[{bm}, {bk}]{pad}>, tensordesc<{dtype}[{bk}, {bn}]>, "
            f"*fp32:16, i32, i32, i32, i32, {bm}, {bn}, {bk}")


def _artifact(signature: str, arch: str = "sm_90", num_warps: int = 4, num_stages: int = 3,
              kernel=host_desc_matmul, pointer_tma: bool = True):
    """`pointer_tma` False: the build for strides TMA cannot read, which copies blocks of
    pointers (and descriptors made in the kernel) by cp.async."""
    return compiler.transpile(kernel, kernel._specs(signature, {}), "cuda", kernel.options(
        num_warps=num_warps, num_stages=num_stages, arch=arch, made_descriptor_tma=pointer_tma))


# --- the plan -------------------------------------------------------------------------------------

def test_descriptor_operands_of_a_warpgroup_product_are_copied_by_tma() -> None:
    art = _artifact(_signature("fp16", 128, 128, 64))
    # A's 128 rows in one box: 4 warps place rows g + 8 w + 32 r at 64 (r / 2) + 16 w +
    # 8 (r % 2) + g (tc::wgmma_a_row), which the map's dims (8, 2, 4, 2 of 1, 32, 8, 64
    # rows) lay out in that order; the slabs of 64 rows step over the tensor
    split = ((8, 1), (2, 32), (4, 8), (2, 64))
    assert art.kernel.tensor_maps == [
        TensorMap("a_desc", "fp16", (128, 64), 128, "zero", rows_split=split),
        # the blocks that reach past the tensor's last whole slab of rows: 8 rows a copy
        TensorMap("a_desc", "fp16", (8, 64), 128, "zero"),
        TensorMap("b_desc", "fp16", (64, 64), 128, "zero")]
    src = art.source
    assert "copied into shared memory with TMA, 2 iterations ahead" in src
    assert src.count("tc::tma_load_5d(") == 2  # A in the prologue and the loop: one box
    assert src.count("tc::tma_load_2d(") == 4  # B, and A's blocks past the whole slabs
    assert "const __grid_constant__ tc::TensorMap a_desc_map" in src
    assert "const __grid_constant__ tc::TensorMap a_desc_8rows_map" in src
    assert "if (pid_m * 128 + 128 <= a_desc_shape0 / 64 * 64) {" in src  # whole slabs
    # 2 x 128 x 64 x 2 bytes, less A's boxes wholly past the rows (not copied)
    assert "tc::mbarrier_expect_bytes(landed, 32768 - a_stages_skipped)" in src
    assert "cp_async" not in src


def test_a_loop_of_tma_stages_waits_for_its_stage_where_it_reads_it() -> None:
    """Every stage the copy engine's, one product in flight behind a refill barrier: each
    thread waits for the stage it reads at the top of the iteration, the refill goes out
    right after the barrier, and no barrier ends the iteration (Triton's order).  So for
    products too short to hide a barrier on one warpgroup, and for any stages on several:
    the barrier ending the iteration ran such loops at 0.69-0.92x (settle.DEEP_PRODUCT)."""
    for warps, stages, bm, bn, bk in ((4, 4, 128, 128, 64), (8, 3, 128, 128, 64),
                                      (8, 4, 128, 128, 64), (4, 4, 128, 64, 32),
                                      (4, 4, 64, 128, 32), (8, 5, 128, 256, 32)):
        src = _artifact(_signature("fp16", bm, bn, bk), num_warps=warps,
                        num_stages=stages).source
        loop = src[src.index("for (int k_ = 0;"):]
        top = loop.index("// the TMA copies for this stage")
        assert top < loop.index("tc::wgmma_m64n")
        barrier = loop.index("__syncthreads();  // ... by every warp: its stage can be refilled")
        assert loop.index("tc::mbarrier_expect_bytes(") > barrier
        assert "the TMA copies for the next stage" not in loop
        assert "the next stage is everyone's" not in loop
    # A through a descriptor, B through pointers: cp.async stages need the barrier that
    # makes a stage everyone's, after each thread waited for its own copies
    src = _artifact(MIXED, kernel=desc_a_ptr_b_matmul, num_warps=4, num_stages=3,
                    pointer_tma=False).source
    assert "the TMA copies for this stage" not in src


@pytest.mark.parametrize("warps,rows,outer,split", [
    (4, 64, 0, ((8, 1), (2, 32), (4, 8))),
    (4, 128, 0, ((8, 1), (2, 32), (4, 8), (2, 64))),
    (8, 128, 0, ((8, 1), (2, 64), (8, 8))),  # warps 8 apart continue the 4 below: merged
    (4, 256, 0, ((8, 1), (2, 32), (4, 8), (4, 64))),
    # five dims of rows, one more than the copy engine's with the columns: the last (2 of
    # 32 rows) taken by two copies, each 4 boxes along the dim of 8-row steps
    (8, 256, 0, ((8, 1), (2, 64), (4, 8, 2), (2, 128))),
    # a map with a dim past the block's (a batch: passes.unit_dims) has one fewer for the
    # rows: 128 rows on 4 warps take two copies along the slab dim, 2 slabs apart
    (4, 64, 1, ((8, 1), (2, 32), (4, 8))),
    (4, 128, 1, ((8, 1), (2, 32, 2), (4, 8))),
    (8, 128, 1, ((8, 1), (2, 64), (8, 8))),
    (4, 64, 2, ((8, 1, 4), (2, 32))),
    (8, 256, 1, None),
])
def test_a_rows_split_lays_out_rows_where_wgmma_a_row_places_them(warps, rows, outer,
                                                                  split) -> None:
    from types import SimpleNamespace

    from tilecc.transpiler.passes.dot import wgmma_a_place
    from tilecc.transpiler.passes.pipeline import a_rows_split

    dot = SimpleNamespace(attrs={"plan": SimpleNamespace(warps=(warps, 1))})
    assert a_rows_split(dot, rows, 0, outer) == split
    if split is None:
        return
    slab = max(d[1] for d in split)
    assert a_rows_split(dot, rows, slab // 2, outer) is None  # not known to start a slab
    # the box fills shared memory in the order of its dims, the first fastest, and copy j
    # (of a dim whose boxes are copies: specs.row_copies) the j-th box's worth of rows
    # after the others': the row of each position is what wgmma_a_row puts there
    order = [0]
    for d in split:
        order = [o + i * d[1] for i in range(d[0]) for o in order]
    for d in split:
        if len(d) > 2:
            order = [o + j * d[0] * d[1] for j in range(d[2]) for o in order]
    placed = {wgmma_a_place(row, warps, rows // (warps // 4)): row for row in range(rows)}
    assert order == [placed[at] for at in range(rows)]


def test_256_rows_on_8_warps_take_two_boxes_not_32_copies() -> None:
    """A's 256 rows on 8 warps lie in shared memory as five dims of rows: one more than the
    copy engine has beside the columns.  The last (the second warpgroup's rows, 32 rows
    on) is taken by a second copy, 4 steps of 8 rows along the dim of 8-row steps: two
    5-d copies a stage where there were 32 copies of 8 rows (0.41x the K loop's speed)."""
    art = _artifact(_signature("fp16", 256, 128, 64), num_warps=8, num_stages=4)
    split = ((8, 1), (2, 64), (4, 8, 2), (2, 128))
    assert [m.rows_split for m in art.kernel.tensor_maps if m.param == "a_desc"] == [split, None]
    src = art.source
    assert "256 x 64 a copy, placed where each warp's wgmma reads those rows: 2 boxes" in src
    assert src.count("tc::tma_load_5d(") == 4  # two a stage, in the prologue and the loop
    calls = re.findall(r"tc::tma_load_5d\((.*?), landed\)", src, re.S)
    # copy j: its coordinate 4 j along the 8-row steps, landing at block row 32 j's place
    for j, call in enumerate(calls):  # (the prologue's two, then the loop's)
        assert f"wgmma_a_row<8, 128>({32 * (j % 2)})" in call
        # (the slab dim's coordinate the block's own: no copy steps along it)
        assert call.endswith(f", 0, 0, {4 * (j % 2)}, pid_m * 256 / 128")


def test_tma_copies_only_where_the_copy_engine_can_write_the_tile() -> None:
    # before Hopper: no wgmma, no TMA (cp.async as before)
    art = _artifact(_signature("fp16", 128, 128, 64), arch="sm_80")
    assert art.kernel.tensor_maps == [] and "tma_load" not in art.source
    assert "tc::cp_async<16>(" in art.source
    # A's rows of 64 bytes: 64-byte swizzle
    art = _artifact(_signature("fp16", 64, 64, 32))
    assert [(m.box, m.swizzle) for m in art.kernel.tensor_maps] == [
        ((64, 32), 64), ((8, 32), 64), ((32, 64), 128)]
    # A through a descriptor, B through pointers by cp.async: both in one stage
    art = _artifact(MIXED, kernel=desc_a_ptr_b_matmul, pointer_tma=False)
    assert [m.param for m in art.kernel.tensor_maps] == ["a_desc", "a_desc"]
    assert "copied into shared memory with TMA and cp.async" in art.source
    assert "tc::cp_async<16>(" in art.source and "tc::cp_async_wait<1>()" in art.source
    assert "tc::mbarrier_wait(" in art.source
    # NaN padding: TMA fills NaN for floats
    art = _artifact(_signature("fp16", 64, 64, 64, nan=True))
    assert art.kernel.tensor_maps[0].padding == "nan"
    # tf32 products run on wgmma, which reads B K-major only: A by TMA (128-byte rows of
    # fp32), the row-major B by cp.async into the threads' own stages, staged K-major
    art = _artifact(_signature("fp32", 64, 64, 32))
    assert [(m.param, m.box) for m in art.kernel.tensor_maps] == [("a_desc", (64, 32)),
                                                                  ("a_desc", (8, 32))]
    assert "b (read back for the product's operands)" in art.source


def test_a_descriptor_loaded_outside_a_pipelined_product_is_not_mapped() -> None:
    # one stage: nothing is pipelined, the loads stay bounds-checked loads
    art = _artifact(_signature("fp16", 128, 128, 64), num_stages=1)
    assert art.kernel.tensor_maps == [] and "tma_load" not in art.source


@pytest.mark.parametrize("rows,bk", [("i32:1", 64), ("i32", 64), ("i32:16", 64), ("i32", 128)])
def test_made_descriptor_tail_blocks_compile_for_every_row_specialization(rows, bk) -> None:
    """The bytes a tail block's copies bring, computed from the rows however the kernel
    is specialized on them (== 1: a constant of another type); 128 columns of K: two
    boxes a row of boxes, which the zeroing walks as well."""
    require_cuda_compiler()
    from kernels_ptr import desc_matmul_kernel
    from test_compile_kernels import assert_clean_compile

    assert_clean_compile(desc_matmul_kernel, f"*fp16:16, *fp16:16, *fp16:16, {rows}, i32:16, "
                         f"i32:16, 128, 128, {bk}", "cuda", "sm_90a", num_warps=4,
                         num_stages=4 if bk == 64 else 2)


@pytest.mark.parametrize("dtype,bm,bn,bk,warps,stages", [
    ("fp16", 128, 128, 64, 4, 4), ("fp16", 128, 128, 64, 8, 3), ("bf16", 64, 128, 128, 4, 2),
    ("fp16", 64, 64, 32, 4, 3), ("fp32", 64, 64, 32, 4, 3), ("fp16", 128, 256, 64, 8, 3),
    ("fp16", 256, 128, 64, 8, 4)])
def test_tma_kernels_compile_cleanly_for_sm_90a(dtype, bm, bn, bk, warps, stages) -> None:
    require_cuda_compiler()
    from test_compile_kernels import assert_clean_compile

    assert_clean_compile(host_desc_matmul, _signature(dtype, bm, bn, bk), "cuda", "sm_90a",
                         num_warps=warps, num_stages=stages)


def test_mixed_tma_and_cp_async_stages_compile_cleanly() -> None:
    require_cuda_compiler()
    from test_compile_kernels import assert_clean_compile

    assert_clean_compile(desc_a_ptr_b_matmul, MIXED, "cuda", "sm_90a", num_stages=4)


def test_the_persistent_example_copies_by_tma_and_compiles() -> None:
    require_cuda_compiler()
    import os
    import runpy

    path = os.path.join(os.path.dirname(__file__), "..", "examples", "persistent_matmul.py")
    example = runpy.run_path(path, run_name="not_main")
    kernel, signature = example["persistent_matmul_kernel"], example["SIGNATURE"]
    binary = kernel.compile(signature, arch="sm_90a", num_warps=8, num_stages=4)
    # A and B copied in, C's output tiles copied out (passes.settle.TmaStore)
    assert [(m.param, m.store) for m in binary.tensor_maps] == \
        [("a_desc", False), ("a_desc", False), ("b_desc", False), ("c_desc", True)]
    # the barriers are initialized and invalidated around each tile's loop over K
    source = kernel.source(signature, num_warps=8, num_stages=4)
    assert source.count("tc::mbarrier_init(") == source.count("tc::mbarrier_inval(") == 1


@tilecc.jit
def column_sums_of_product(a_desc, b_desc, out_ptr, N, K, BM: tl.constexpr,
                           BN: tl.constexpr, BK: tl.constexpr):
    """Each block's column sums of A @ B, over all its rows: rows past A's read as zeros
    (the descriptor's padding), so they add nothing, as Triton's do."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        acc = tl.dot(a_desc.load([pid_m * BM, k * BK]), b_desc.load([k * BK, pid_n * BN]), acc)
    rn = pid_n * BN + tl.arange(0, BN)
    tl.store(out_ptr + pid_m * N + rn, tl.sum(acc, axis=0), mask=rn < N)


@tilecc.jit
def rows_named_like_the_zeroing(a_desc, b_desc, out_ptr, N, K, BM: tl.constexpr,
                                BN: tl.constexpr, BK: tl.constexpr):
    """column_sums_of_product with the block's first row held in user variables named as
    the zeroing's own (each read twice: kept in a variable of its own)."""
    b = tl.program_id(0) * BM
    box = b + 0
    i = box + 0
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        acc = tl.dot(a_desc.load([b, k * BK]), b_desc.load([k * BK, 0]), acc)
    rn = tl.arange(0, BN)
    tl.store(out_ptr + (b + box + i) // BM * N + rn, tl.sum(acc, axis=0), mask=rn < N)


def test_zeroing_before_the_loop_reads_the_users_rows_not_its_own_names() -> None:
    """The zeroing of the boxes past the rows tests each box against the block's first
    row, a user value: no name the zeroing declares (its box index, place, coordinates)
    may hide the user's (a loop index `b` once hid a user's `b`, so the boxes zeroed were
    chosen by the wrong row)."""
    sig = ("tensordesc<fp16[128, 64]>, tensordesc<fp16[64, 128]>, *fp32:16, i32, i32, "
           "128, 128, 64")
    source = rows_named_like_the_zeroing.source(sig, arch="sm_90", num_warps=4)
    start = source.index("never copied, read zeros")
    block = source[start:source.index("tc::fence_proxy_async();", start)]
    declared = set(re.findall(r"\b(?:int|unsigned char\*)\s+(?:const\s+)?(\w+)\s*=", block))
    declared |= set(re.findall(r"\b(?:int|const int)\s+\w+\s*=[^;]*?,\s*(\w+)\s*=", block))
    declared |= set(re.findall(r",\s*(\w+)\s*=", block))
    assert {"r", "s", "col", "box", "chunk"} <= declared, declared
    tests = re.findall(r"if \((.*?)\)(?: \{|\s*//|\n)", source[source.rindex("\n", 0, start):
                                                               start + len(block)])
    assert len(tests) == 2, tests  # the block's slab test, each box's rows test
    for test in tests:
        read = set(re.findall(r"\b[A-Za-z_]\w*\b", test)) - {"r"}
        assert not read & declared, (test, read & declared)


def test_blocks_past_the_last_whole_slab_copy_only_boxes_holding_rows() -> None:
    """A's rows in one box (a split map): a block past the tensor's last whole slab
    copies only the 8-row boxes that hold rows of the tensor, the others' places zeroed
    in every stage before the loop — where the loop runs once per program.  The loop
    over K of a persistent kernel (inside its loop over tiles) copies every box."""
    source = _artifact(_signature("fp16", 128, 128, 64), num_warps=8).source
    assert "tc::mbarrier_expect_bytes(landed, 32768 - a_stages_skipped);" in source
    assert "1024u*(16-tc::min<int>(tc::max<int>((a_desc_shape0-pid_m*128+7)/8,0),16))" in \
        "".join(source.split())  # (the boxes holding rows: the first ceil(rows left / 8))
    assert "if (pid_m * 128 + r >= a_desc_shape0)" in source and \
        source.count("tc::zero_16_bytes(") == 1
    # a warp a box (3 stages of 16 boxes over 8 warps), its place computed once, the
    # lanes zeroing its 64 chunks of 16 bytes two apiece
    assert "for (int i = tc::warp_id(); i < 48; i += 8) {" in source
    assert "for (int chunk = tc::lane_id(); chunk < 64; chunk += 32)" in source
    zeroing = source.index("tc::zero_16_bytes(")
    assert source.index("tc::fence_mbarrier_init();") < zeroing < \
        source.index("__syncthreads();  // the barriers, initialized for every thread")
    nan = _artifact(_signature("fp16", 128, 128, 64, nan=True), num_warps=8).source
    assert "_skipped" not in nan and "zero_16_bytes" not in nan  # (NaN: copied)
    import os
    import runpy

    path = os.path.join(os.path.dirname(__file__), "..", "examples", "persistent_matmul.py")
    example = runpy.run_path(path, run_name="not_main")
    kernel, signature = example["persistent_matmul_kernel"], example["SIGNATURE"]
    persistent = kernel.source(signature, num_warps=8, num_stages=4)
    assert "past the tensor's last whole slab" in persistent
    assert "_skipped" not in persistent and "zero_16_bytes" not in persistent


# --- descriptors made in the kernel -----------------------------------------------------------

@tilecc.jit
def offset_desc_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                       BK: tl.constexpr):
    """desc_matmul_kernel whose A descriptor starts at a row computed in the kernel."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_desc = tl.make_tensor_descriptor(a_ptr + pid_m * BM * K, [BM, K], [K, 1], [BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, [K, N], [N, 1], [BK, BN])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        acc = tl.dot(a_desc.load([0, k * BK]), b_desc.load([k * BK, pid_n * BN]), acc)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def _desc_artifact(signature: str, kernel=None, **options):
    from kernels_ptr import desc_matmul_kernel

    kernel = kernel or desc_matmul_kernel
    return compiler.transpile(kernel, kernel._specs(signature, {}), "cuda", kernel.options(
        arch="sm_90", num_warps=4, num_stages=3, **options))


def test_descriptors_made_from_arguments_are_copied_by_tma() -> None:
    from kernels_ptr import DESC_MATMUL_SIGNATURE

    art = _desc_artifact(DESC_MATMUL_SIGNATURE.format(bm=128, bn=128, bk=64))
    assert art.kernel.tensor_maps == [
        TensorMap("a_ptr", "fp16", (128, 64), 128, "zero", ("a_ptr", "M", "K", "K", 1),
                  rows_split=((8, 1), (2, 32), (4, 8), (2, 64))),
        TensorMap("a_ptr", "fp16", (8, 64), 128, "zero", ("a_ptr", "M", "K", "K", 1)),
        TensorMap("b_ptr", "fp16", (64, 64), 128, "zero", ("b_ptr", "K", "N", "N", 1)),
        # C's block, written by the copy engine (passes.settle.TmaStore)
        TensorMap("c_ptr", "fp16", (128, 64), 128, "zero", ("c_ptr", "M", "N", "N", 1),
                  store=True)]
    src = art.source
    assert "const __grid_constant__ tc::TensorMap a_ptr_map" in src
    assert "a_ptr_map /* a_ptr's descriptor, [128, 64] boxes */" in src
    assert src.count("tc::tma_load_2d(") == 4 and src.count("tc::tma_load_5d(") == 2
    assert "cp_async" not in src


def test_a_made_descriptor_over_an_unaligned_base_keeps_its_loads() -> None:
    # the specialization says the base is not 16-byte aligned: no copy engine for A
    art = _desc_artifact("*fp16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, 128, 128, 64")
    assert [m.param for m in art.kernel.tensor_maps] == ["b_ptr", "c_ptr"]  # (C: stored)
    assert art.source.count("tc::tma_load_2d(") == 2
    # strides not known to be multiples of 16 elements: Triton's rule promises 16 bytes
    # (checked at launch), so B is copied all the same
    art = _desc_artifact("*fp16:16, *fp16:16, *fp16:16, i32:16, i32, i32, 128, 128, 64")
    assert [m.args for m in art.kernel.tensor_maps] == [("a_ptr", "M", "K", "K", 1),
                                                        ("a_ptr", "M", "K", "K", 1),
                                                        ("b_ptr", "K", "N", "N", 1),
                                                        ("c_ptr", "M", "N", "N", 1)]


def test_a_descriptor_over_a_computed_base_is_not_mapped() -> None:
    art = _desc_artifact("*fp16:16, *fp16:16, *fp16:16, i32, i32:16, i32:16, 128, 128, 64",
                         kernel=offset_desc_matmul)
    assert [m.param for m in art.kernel.tensor_maps] == ["b_ptr"]


def test_the_launch_finds_a_made_descriptors_arguments() -> None:
    from kernels_ptr import DESC_MATMUL_SIGNATURE, desc_matmul_kernel

    specs = desc_matmul_kernel._specs(DESC_MATMUL_SIGNATURE.format(bm=128, bn=128, bk=64), {})
    art = _desc_artifact(DESC_MATMUL_SIGNATURE.format(bm=128, bn=128, bk=64))
    slots = launch_cuda.map_slots(art.kernel.tensor_maps, specs)
    # a_ptr, M, K, K, 1 (copied in, twice: rows in one box, and 8 at a time) and b_ptr, K,
    # N, N, 1 (copied in), c_ptr, M, N, N, 1 (out) among (a_ptr, b_ptr, c_ptr, M, N, K)
    assert [picks for picks, _, _ in slots] == [
        ((0, None), (3, None), (5, None), (5, None), (None, 1)),
        ((0, None), (3, None), (5, None), (5, None), (None, 1)),
        ((1, None), (5, None), (4, None), (4, None), (None, 1)),
        ((2, None), (3, None), (4, None), (4, None), (None, 1))]


def test_made_descriptor_kernels_compile_cleanly_and_keep_their_maps_on_disk(
        tmp_path, monkeypatch) -> None:
    require_cuda_compiler()
    from kernels_ptr import DESC_MATMUL_SIGNATURE, desc_matmul_kernel
    from test_compile_kernels import assert_clean_compile

    signature = DESC_MATMUL_SIGNATURE.format(bm=128, bn=128, bk=64)
    assert_clean_compile(desc_matmul_kernel, signature, "cuda", "sm_90a", num_warps=8,
                         num_stages=4)
    monkeypatch.setenv("TILECC_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(compiler, "_compiled", {})
    first = desc_matmul_kernel.compile(signature, arch="sm_90a")
    monkeypatch.setattr(compiler, "_compiled", {})
    again = desc_matmul_kernel.compile(signature, arch="sm_90a")
    assert again.tensor_maps == first.tensor_maps and first.tensor_maps[0].args is not None


# --- the launch -----------------------------------------------------------------------------------

def test_tensor_map_arguments_are_innermost_first_in_bytes() -> None:
    m = TensorMap("a", "bf16", (8, 64), 128, "nan")
    got = launch_cuda.tensor_map_arguments(m, 1 << 20, (300, 200), (208, 1))
    assert got == dict(data_type=9, dims=[200, 300], strides=[416], box=[64, 8], swizzle=3,
                       fill_nan=True)
    got = launch_cuda.tensor_map_arguments(TensorMap("b", "fp8e4nv", (16, 64), 64, "zero"),
                                           1 << 20, (5, 7, 64), (1024, 64, 1))
    assert got["data_type"] == 0 and got["strides"] == [64, 1024] and got["swizzle"] == 2
    # a tensor without elements: no map of it, one of a single padding element instead
    assert launch_cuda.tensor_map_arguments(m, 0, (0, 200), (1, 1)) is None
    word, got = launch_cuda.padding_map_arguments(m)
    assert word == 0x7FC07FC0 and got["dims"] == [1, 1] and got["box"] == [64, 8]
    assert launch_cuda.padding_map_arguments(TensorMap("a", "fp16", (8, 64), 128,
                                                       "zero"))[0] == 0
    # Triton's rule for any descriptor: what a kernel's own descriptors did not promise
    made = TensorMap("a_ptr", "fp16", (8, 64), 128, "zero", ("a_ptr", "M", "K", "K", 1))
    for address, strides in ((1 << 20, (-208, 1)), (1 << 20, (100, 1)), (8, (208, 1))):
        assert launch_cuda.breaks_tma_rule(made, address, strides)
        with pytest.raises(ValueError, match="the tensor descriptor over `a_ptr`: .* 16"):
            launch_cuda.tensor_map_arguments(made, address, (10, 200), strides)
    assert not launch_cuda.breaks_tma_rule(made, 1 << 20, (104, 1))  # 208 bytes


class _Recorder:
    """A kernel stand-in: what cuLaunchKernel was given."""

    def __init__(self, maps):
        self.handle, self.threads, self.device_id, self.shared_bytes = 1, 128, 0, 0
        self.tensor_maps = maps
        self.launches: list = []

    def launch_kernel(self, handle, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        import ctypes

        pointers = ctypes.cast(params, ctypes.POINTER(ctypes.c_void_p))
        self.launches.append([pointers[i] for i in range(3)])


def test_the_launch_encodes_each_map_once_per_descriptor_and_passes_it_last(
        monkeypatch) -> None:
    import ctypes

    encoded = []

    def encode(address, **args):
        encoded.append((address, args["dims"]))
        return tuple(range(address, address + 16))

    from tilecc.runtime import cuda_driver

    monkeypatch.setattr(cuda_driver, "tensorMapEncodeTiled", encode)
    m = TensorMap("a", "fp16", (8, 64), 128, "zero")
    # the descriptor's values start at slot 1
    kernel = _Recorder([(tuple((i, None) for i in range(1, 6)), 2, m)])
    # slots: an int, the descriptor (base, 2 dims, 2 strides: the last 1, not taken)
    layout = ("iQiiqq", (True, True, True, True, True, False))
    launcher = launch_cuda.launcher(kernel, layout, set())
    assert isinstance(launcher, launch_cuda.TensorMapLauncher)
    launcher.stream_of = lambda device: 0
    for base in (4096, 4096, 8192):
        launcher((1, 1, 1), [7, base, 64, 32, 48, 1])
    assert encoded == [(4096, [32, 64]), (8192, [32, 64])]  # again only when it changed
    params = kernel.launches[-1]
    # after the int, the base, two dims and a stride: the map's 128 bytes
    buf = launcher._thread_buffer()
    values = buf.unpack()
    assert values[:5] == (7, 8192, 64, 32, 48) and values[6:22] == tuple(range(8192, 8208))
    assert len(buf.kernel_params()) == 6  # 5 taken values and one pointer to the map
    assert buf.kernel_params()[5] == ctypes.addressof(buf.storage) + buf.offsets[6]
    assert params[0] == buf.kernel_params()[0]
    # an empty tensor: the map reads one padding element, allocated once per device
    filled = []
    monkeypatch.setattr(cuda_driver, "memAllocFilled",
                        lambda nbytes, word: filled.append(word) or 1 << 20)
    launcher((1, 1, 1), [7, 8192, 0, 32, 48, 1])
    launcher((1, 1, 1), [7, 4096, 64, 0, 48, 1])
    assert filled == [0] and encoded[-2:] == [(1 << 20, [1, 1]), (1 << 20, [1, 1])]


def test_a_split_map_views_the_rows_as_its_dims_over_the_whole_slabs() -> None:
    split = ((8, 1), (2, 32), (4, 8), (2, 64))
    m = TensorMap("a", "fp16", (128, 64), 128, "zero", rows_split=split)
    # rows of 512 elements (1024 bytes): the dims' steps are 1, 32, 8 and 64 of them; the
    # slabs of 64 rows span the tensor's whole ones (4096 rows: 64; 1000 rows: 15, the
    # last 40 rows copied through the descriptor's 8-row map)
    got = launch_cuda.tensor_map_arguments(m, 1 << 20, (4096, 300), (512, 1))
    assert got == dict(data_type=6, dims=[300, 8, 2, 4, 4096 // 64],
                       strides=[1024, 32 * 1024, 8 * 1024, 64 * 1024],
                       box=[64, 8, 2, 4, 2], swizzle=3, fill_nan=False)
    got = launch_cuda.tensor_map_arguments(m, 1 << 20, (1000, 300), (512, 1))
    assert got["dims"] == [300, 8, 2, 4, 15]
    # fewer rows than a slab: no block reads this map, which reads the padding alone
    assert launch_cuda.tensor_map_arguments(m, 1 << 20, (40, 300), (512, 1)) is None
    assert launch_cuda.padding_map_arguments(m)[1]["box"] == [64, 8, 2, 4, 2]
    # 256 rows on 8 warps: the dim of 8-row steps spans the two copies' boxes (8 steps),
    # a box 4 of them; rows of 64 elements (128 bytes), slabs of 128 rows
    m = TensorMap("a", "fp16", (256, 64), 128, "zero",
                  rows_split=((8, 1), (2, 64), (4, 8, 2), (2, 128)))
    got = launch_cuda.tensor_map_arguments(m, 1 << 20, (4096, 64), (64, 1))
    assert got == dict(data_type=6, dims=[64, 8, 2, 8, 4096 // 128],
                       strides=[128, 64 * 128, 8 * 128, 128 * 128], box=[64, 8, 2, 4, 2],
                       swizzle=3, fill_nan=False)


def test_a_split_map_of_a_batched_descriptor_has_the_batch_after_the_rows() -> None:
    """A map whose box is 1 along a batch (passes.unit_dims): the rows' dims as in a 2-D
    map, then the batch, outermost; the slab dim spans each batch's whole slabs."""
    m = TensorMap("x", "fp16", (1, 128, 64), 128, "zero",
                  rows_split=((8, 1), (2, 32, 2), (4, 8)))
    got = launch_cuda.tensor_map_arguments(m, 1 << 20, (3, 1000, 96), (1000 * 96, 96, 1))
    assert got == dict(data_type=6, dims=[96, 8, 1000 // 32, 4, 3],
                       strides=[192, 32 * 192, 8 * 192, 1000 * 192], box=[64, 8, 2, 4, 1],
                       swizzle=3, fill_nan=False)
    # fewer rows in a batch than a slab: every block takes the 8-row map
    assert launch_cuda.tensor_map_arguments(m, 1 << 20, (3, 20, 96), (20 * 96, 96, 1)) is None
    assert launch_cuda.tail_copies(m, (3, 1000, 96)) == 13  # (1000 % 128: 104 rows past)
    assert launch_cuda.padding_map_arguments(m)[1]["box"] == [64, 8, 2, 4, 1]


def test_a_made_descriptor_off_the_rule_launches_the_fallback(monkeypatch) -> None:
    from tilecc.runtime import cuda_driver

    encoded = []
    monkeypatch.setattr(cuda_driver, "tensorMapEncodeTiled",
                        lambda address, **args: encoded.append(address) or (0,) * 16)
    m = TensorMap("a_ptr", "fp16", (8, 64), 128, "zero", ("a_ptr", "M", "K", "K", 1))
    kernel = _Recorder([(((0, None), (1, None), (2, None), (2, None), (None, 1)), 2, m)])
    launcher = launch_cuda.launcher(kernel, ("Qii", (True, True, True)), set())
    launcher.stream_of = lambda device: 0
    fallen = []
    launcher.fallback = lambda: lambda grid, values: fallen.append(values)
    launcher((1, 1, 1), [1 << 20, 64, 200])  # rows of 400 bytes: TMA
    launcher((1, 1, 1), [1 << 20, 64, 100])  # rows of 200 bytes: the other build
    launcher((1, 1, 1), [1 << 20, 64, 100])
    assert encoded == [1 << 20] and len(kernel.launches) == 1
    assert fallen == [[1 << 20, 64, 100]] * 2
    launcher.fallback = None  # no build to fall back on: Triton's rule, as an error
    with pytest.raises(ValueError, match="multiples of 16 bytes"):
        launcher((1, 1, 1), [1 << 20, 64, 36])


def test_rows_ending_inside_a_split_box_launch_the_fallback(monkeypatch) -> None:
    """Blocks of pointers whose A rows are copied in one box (`rows_split`): a launch whose
    rows end inside a box (programs there would copy 8-row boxes, slowly) runs the
    cp.async build, and the next launch with the same values goes there at once; whole
    boxes, a descriptor made in the kernel (whose other build is no faster there) or a
    host-side descriptor (no other build) are copied by TMA."""
    from tilecc.runtime import cuda_driver

    encoded = []
    monkeypatch.setattr(cuda_driver, "tensorMapEncodeTiled",
                        lambda address, **args: encoded.append(args["dims"]) or (0,) * 16)
    split = ((8, 1), (2, 64), (8, 8))
    checked = []
    ragged = launch_cuda.ragged_boxes
    monkeypatch.setattr(launch_cuda, "ragged_boxes",
                        lambda m, shape: checked.append(shape[0]) or ragged(m, shape))
    slots = ((0, None), (1, None), (2, None), (2, None), (None, 1))
    args = ("a_ptr", "M", "K", "K", 1)

    def launcher_of(m):
        kernel = _Recorder([(slots, 2, m)])
        launcher = launch_cuda.launcher(kernel, ("Qii", (True, True, True)), set())
        launcher.stream_of = lambda device: 0
        launcher.fallback = lambda: lambda grid, values: fallen.append(values[1])
        return kernel, launcher

    fallen = []
    kernel, launcher = launcher_of(TensorMap("a_ptr", "fp16", (128, 64), 128, "zero", args,
                                             rows_split=split, pointers=True))
    for rows in (4096, 4097, 4097, 4224):
        launcher((1, 1, 1), [1 << 20, rows, 4096])
    assert fallen == [4097, 4097] and len(kernel.launches) == 2
    assert [d[2] for d in encoded] == [4096 // 64, 4224 // 64]  # (its whole slabs)
    assert checked == [4096, 4097, 4224]  # (the second 4097: declined as before)
    for m in (TensorMap("a_ptr", "fp16", (128, 64), 128, "zero", args, rows_split=split),
              TensorMap("a", "fp16", (128, 64), 128, "zero", rows_split=split)):
        kernel, launcher = launcher_of(m)
        launcher((1, 1, 1), [1 << 20, 4097, 4096])
        assert len(kernel.launches) == 1 and encoded[-1][2] == 4097 // 64
    assert fallen == [4097, 4097]


def test_one_wave_of_programs_with_a_tail_of_several_copies_launches_the_fallback(
        monkeypatch) -> None:
    """A descriptor made in the kernel whose last block of rows takes several 8-row copies
    (`tail_copies`): a grid whose programs all run at once waits for that block, and runs
    the other build; a grid of more programs than SMs, a tail of one copy, whole blocks
    and a host-side descriptor (no other build) stay on TMA."""
    from tilecc.runtime import cuda_driver

    monkeypatch.setattr(cuda_driver, "tensorMapEncodeTiled", lambda address, **args: (0,) * 16)
    monkeypatch.setattr(cuda_driver, "deviceGetAttribute", lambda attribute, ordinal: 132)
    split = ((8, 1), (2, 64), (8, 8))
    slots = ((0, None), (1, None), (2, None), (2, None), (None, 1))
    made = TensorMap("a_ptr", "fp16", (128, 64), 128, "zero", ("a_ptr", "M", "K", "K", 1),
                     rows_split=split)
    assert [launch_cuda.tail_copies(made, (rows, 64)) for rows in (4096, 4097, 1000, 960)] \
        == [0, 1, 13, 8]
    fallen = []
    kernel = _Recorder([(slots, 2, made)])
    launcher = launch_cuda.launcher(kernel, ("Qii", (True, True, True)), set())
    launcher.stream_of = lambda device: 0
    launcher.fallback = lambda: lambda grid, values: fallen.append((grid, values[1]))
    for grid, rows in (((8, 8, 1), 1000), ((8, 8, 1), 1000), ((32, 8, 1), 1000),
                       ((8, 8, 1), 4097), ((8, 8, 1), 4096), ((8, 8, 1), 960)):
        launcher(grid, [1 << 20, rows, 1024])
    assert fallen == [((8, 8, 1), 1000)] * 2 + [((8, 8, 1), 960)]
    assert len(kernel.launches) == 3
    host = TensorMap("a", "fp16", (128, 64), 128, "zero", rows_split=split)
    kernel = _Recorder([(tuple((i, None) for i in range(5)), 2, host)])
    launcher = launch_cuda.launcher(kernel, ("Qiiqq", (True,) * 4 + (False,)), set())
    launcher.stream_of = lambda device: 0
    launcher((8, 8, 1), [1 << 20, 1000, 1024, 1024, 1])
    assert len(kernel.launches) == 1


def test_the_fallback_build_reads_made_descriptors_without_tma() -> None:
    from kernels_ptr import DESC_MATMUL_SIGNATURE, desc_matmul_kernel

    signature = DESC_MATMUL_SIGNATURE.format(bm=128, bn=128, bk=64)
    art = compiler.transpile(desc_matmul_kernel, desc_matmul_kernel._specs(signature, {}),
                             "cuda", compiler.resolve_options(
                                 desc_matmul_kernel, arch="sm_90", made_descriptor_tma=False))
    assert art.kernel.tensor_maps == [] and "tc::cp_async<16>(" in art.source
    signature = _signature("fp16", 128, 128, 64)  # host-side descriptors: still TMA
    art = compiler.transpile(host_desc_matmul, host_desc_matmul._specs(signature, {}), "cuda",
                             compiler.resolve_options(host_desc_matmul, arch="sm_90",
                                                      made_descriptor_tma=False))
    assert len(art.kernel.tensor_maps) == 3  # (A's: its rows in one box, and 8 at a time)


def test_the_disk_cache_keeps_the_tensor_maps(tmp_path, monkeypatch) -> None:
    require_cuda_compiler()
    monkeypatch.setenv("TILECC_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(compiler, "_compiled", {})
    signature = _signature("fp16", 64, 64, 64)
    first = host_desc_matmul.compile(signature, arch="sm_90a")
    monkeypatch.setattr(compiler, "_compiled", {})
    again = host_desc_matmul.compile(signature, arch="sm_90a")
    assert again.tensor_maps == first.tensor_maps and len(first.tensor_maps) == 3
    assert again.data == first.data


# --- the GPU -------------------------------------------------------------------------------------

def _torch_matmul(dtype: str, m: int, n: int, k: int, bm: int, bn: int, bk: int, warps: int,
                  stages: int, nan: bool = False, descriptor=None):
    torch = pytest.importorskip("torch")
    tdtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[dtype]
    torch.manual_seed(m * 7 + n + k)
    a = torch.randn(m, k, device="cuda").to(tdtype)
    b = torch.randn(k, n, device="cuda").to(tdtype)
    c = torch.full((m, n), -1.0, device="cuda")
    cls = descriptor or tilecc.TensorDescriptor
    grid = (tilecc.cdiv(m, bm), tilecc.cdiv(n, bn))
    host_desc_matmul[grid](cls.from_tensor(a, [bm, bk], padding="nan" if nan else "zero"),
                           cls.from_tensor(b, [bk, bn]), c, m, n, k, c.stride(0), BM=bm,
                           BN=bn, BK=bk, num_warps=warps, num_stages=stages)
    return a, b, c


@pytest.mark.gpu
@pytest.mark.parametrize("dtype,bm,bn,bk,warps,stages", [
    ("fp16", 128, 128, 64, 4, 4), ("fp16", 128, 128, 64, 8, 3), ("bf16", 64, 128, 128, 4, 2),
    ("fp16", 64, 64, 32, 4, 3), ("fp32", 64, 64, 32, 4, 3), ("fp16", 128, 256, 64, 8, 3)])
@pytest.mark.parametrize("m,n,k", [(256, 256, 256), (300, 264, 200), (129, 72, 48)])
def test_tma_products_on_gpu_match_torch(dtype, bm, bn, bk, warps, stages, m, n, k) -> None:
    torch = pytest.importorskip("torch")
    if dtype == "fp32" and (n * 4) % 16:
        pytest.skip("rows of a descriptor are multiples of 16 bytes")
    a, b, c = _torch_matmul(dtype, m, n, k, bm, bn, bk, warps, stages)
    ref = a.float() @ b.float()
    tol = 2e-2 if dtype == "fp32" else 1e-2  # fp32: tf32 products, as Triton's default
    torch.testing.assert_close(c, ref, rtol=tol, atol=tol * k ** 0.5)


@pytest.mark.gpu
@pytest.mark.parametrize("stages", [3, 4])
@pytest.mark.parametrize("pad", [0, 4])
def test_mixed_tma_and_cp_async_stages_on_gpu_match_torch(stages, pad) -> None:
    """B's rows `pad` elements longer: 552 bytes, which TMA cannot read: the launch runs
    the build that copies B by cp.async beside A's TMA copies."""
    torch = pytest.importorskip("torch")
    m, n, k = 300, 272, 200
    torch.manual_seed(1)
    a = torch.randn(m, k, device="cuda").half()
    b = torch.randn(k, n + pad, device="cuda").half()[:, :n]
    c = torch.full((m, n), -1.0, device="cuda")
    desc_a_ptr_b_matmul[(tilecc.cdiv(m, 64), tilecc.cdiv(n, 64))](
        tilecc.TensorDescriptor.from_tensor(a, [64, 64]), b, c, m, n, k, b.stride(0),
        c.stride(0), BM=64, BN=64, BK=64, num_stages=stages)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-2, atol=0.2)


@pytest.mark.gpu
def test_tma_nan_padding_on_gpu() -> None:
    torch = pytest.importorskip("torch")
    # K a multiple of BK: the NaN rows past M are never stored
    a, b, c = _torch_matmul("fp16", 200, 128, 128, 128, 128, 64, 4, 3, nan=True)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-2, atol=1e-1)
    # a K tail: A's NaN columns meet B's zero rows, every sum is NaN, as Triton's
    a, b, c = _torch_matmul("fp16", 200, 128, 96, 128, 128, 64, 4, 3, nan=True)
    assert torch.isnan(c).all()


@pytest.mark.gpu
@pytest.mark.parametrize("bm,bn,bk,warps,slab", [(128, 128, 64, 8, 64), (64, 64, 32, 4, 32),
                                                 (256, 128, 64, 8, 128)])
def test_a_in_one_box_on_gpu_over_whole_and_partial_slabs(bm, bn, bk, warps, slab) -> None:
    """A's rows in one box over the tensor's whole slabs of rows, 8 at a time past them:
    the products, and NaN padding past K (as Triton's), at rows of whole slabs, rows
    past the last whole slab, and fewer rows than one slab."""
    torch = pytest.importorskip("torch")
    for m in (4 * slab, 3 * slab + 8, slab - 8):
        a, b, c = _torch_matmul("fp16", m, 96, 2 * bk, bm, bn, bk, warps, 3, nan=True)
        torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-2, atol=1e-1)
        a, b, c = _torch_matmul("fp16", m, 96, bk + 8, bm, bn, bk, warps, 3, nan=True)
        assert torch.isnan(c).all()  # A's NaN columns past K meet B's zero rows


@pytest.mark.gpu
@pytest.mark.parametrize("bm,bn,bk,warps,stages", [(128, 128, 64, 8, 3), (128, 256, 64, 8, 3),
                                                   (128, 128, 64, 4, 4), (64, 64, 32, 4, 3),
                                                   (128, 128, 128, 4, 2), (256, 128, 64, 8, 4)])
@pytest.mark.parametrize("m", [1, 9, 64 + 8, 127, 129, 1000, 4097])
def test_rows_past_the_tensor_read_zeros_on_gpu(bm, bn, bk, warps, stages, m) -> None:
    """Blocks past the last whole slab copy only the boxes holding rows: the column sums
    over each block's rows, those past the tensor's included, are the tensor's alone."""
    torch = pytest.importorskip("torch")
    n, k = 96, 3 * bk + 16
    torch.manual_seed(m)
    a = torch.randn(m, k, device="cuda").half()
    b = torch.randn(k, n, device="cuda").half()
    blocks = tilecc.cdiv(m, bm)
    out = torch.full((blocks, n), float("nan"), device="cuda")
    D = tilecc.TensorDescriptor
    column_sums_of_product[(blocks, tilecc.cdiv(n, bn))](
        D.from_tensor(a, [bm, bk]), D.from_tensor(b, [bk, bn]), out, n, k, BM=bm, BN=bn,
        BK=bk, num_warps=warps, num_stages=stages)
    full = torch.zeros(blocks * bm, n, device="cuda")
    full[:m] = a.float() @ b.float()
    ref = full.view(blocks, bm, n).sum(1)
    torch.testing.assert_close(out, ref, rtol=1e-2, atol=0.05 * (bm * k) ** 0.5)
    a, b, c = _made_desc_matmul(m, n, k, bm, bn, bk, warps, stages)  # and the products
    torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=1e-2, atol=0.1)


@pytest.mark.gpu
def test_tma_products_equal_tritons_on_gpu() -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("triton")
    import os
    import sys

    from triton.tools.tensor_descriptor import TensorDescriptor as TritonDescriptor

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
    from triton_clone import as_triton

    global host_desc_matmul
    ours = _torch_matmul("fp16", 300, 264, 200, 128, 128, 64, 4, 3)[2]
    saved = host_desc_matmul
    try:
        host_desc_matmul = as_triton(saved)
        theirs = _torch_matmul("fp16", 300, 264, 200, 128, 128, 64, 4, 3,
                               descriptor=TritonDescriptor)[2]
    finally:
        host_desc_matmul = saved
    torch.testing.assert_close(ours, theirs, rtol=1e-3, atol=1e-3)
    assert np.isfinite(ours.cpu().numpy()).all()


def _made_desc_matmul(m: int, n: int, k: int, bm: int, bn: int, bk: int, warps: int,
                      stages: int):
    torch = pytest.importorskip("torch")
    from kernels_ptr import desc_matmul_kernel

    torch.manual_seed(m + 3 * n + k)
    a = torch.randn(m, k, device="cuda").half()
    b = torch.randn(k, n, device="cuda").half()
    c = torch.full((m, n), -1.0, device="cuda").half()
    desc_matmul_kernel[(tilecc.cdiv(m, bm), tilecc.cdiv(n, bn))](
        a, b, c, m, n, k, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk,
        num_warps=warps, num_stages=stages)
    return a, b, c


@pytest.mark.gpu
@pytest.mark.parametrize("bm,bn,bk,warps,stages", [(128, 128, 64, 4, 4), (128, 256, 64, 8, 3),
                                                   (64, 64, 32, 4, 3)])
@pytest.mark.parametrize("m,n,k", [(256, 256, 256), (300, 264, 200), (129, 80, 48),
                                   (64, 64, 0), (1000, 1000, 1000)])
def test_made_descriptor_products_on_gpu_match_torch(bm, bn, bk, warps, stages, m, n,
                                                      k) -> None:
    torch = pytest.importorskip("torch")
    a, b, c = _made_desc_matmul(m, n, k, bm, bn, bk, warps, stages)
    torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=1e-2,
                               atol=1e-2 * max(k, 1) ** 0.5)


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k", [(128, 100, 64), (129, 67, 48), (64, 64, 36)])
def test_made_descriptor_rows_off_16_bytes_take_the_bounds_checked_build(m, n, k) -> None:
    # N = 100 halves: B's rows are 200 bytes, off Triton's rule, which the TMA build of a
    # kernel specialized on N not a multiple of 16 assumed; the launch runs a build with
    # bounds-checked loads instead (Triton would copy wrong rows)
    torch = pytest.importorskip("torch")
    a, b, c = _made_desc_matmul(m, n, k, 128, 128, 64, 4, 3)
    torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=1e-2, atol=1e-1)
