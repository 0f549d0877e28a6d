"""Blocks of pointers copied by the copy engine on sm_90 (passes.pointer_tiles).

A `tl.load` of `base + coordinate * stride + ...` feeding a product in a pipelined loop,
masked by `coordinate < bound` tests, is read through a tensor map the launch encodes from
the arguments.  On CPU: which loads match (and which stay cp.async, each for its reason),
the maps' arguments and requirements, the source and its NVRTC compile, the launch going
to the cp.async build where the arguments break what the maps need.  On the GPU: products
and attention equal torch's over ragged shapes, through TMA and through that other build.
"""

from __future__ import annotations

import numpy as np
import pytest

import tilecc
import tilecc.language as tl
from tilecc.runtime import compiler
from tilecc.runtime.launch import cuda as launch_cuda
from tilecc.transpiler.passes import run as pass_order
from tilecc.transpiler.passes.pointer_tiles import UNBOUNDED
from tilecc.transpiler.specs import TensorMap

from conftest_compilers import require_cuda_compiler
import kernels_ptr as KP
from test_blocks import load_example
from test_compile_kernels import assert_clean_compile
from test_tma import _Recorder  # (a kernel stand-in: what cuLaunchKernel was given)


@tilecc.jit
def matmul_index(A, B, C, M, N, K, stride_am, stride_bk, stride_cm, BM: tl.constexpr,
                 BN: tl.constexpr, BK: tl.constexpr, FORM: tl.constexpr):
    # offsets along K from the loop index; FORM: how the loads are written (0: plainly)
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        rk = k * BK + tl.arange(0, BK)
        a_mask = (rm[:, None] < M) & (rk[None, :] < K)
        if FORM == 1:  # a bound on what the pointers' coordinate is not: rk + 1 < K
            a_mask = (rm[:, None] < M) & (rk[None, :] + 1 < K)
        if FORM == 4:  # the same bound as FORM 0, written otherwise: rk + 1 < K + 1
            a_mask = (rm[:, None] < M) & (rk[None, :] + 1 < K + 1)
        if FORM == 2:  # a lower bound past 0
            a_mask = a_mask & (rk[None, :] >= 1)
        if FORM == 3:  # a lower bound of 0, which every coordinate is known to meet
            a_mask = a_mask & (rk[None, :] >= 0)
        a = tl.load(A + rm[:, None] * stride_am + rk[None, :], mask=a_mask, other=0.0)
        b = tl.load(B + rk[:, None] * stride_bk + rn[None, :],
                    mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(C + rm[:, None] * stride_cm + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@tilecc.jit
def matmul_shifted(A, B, C, K, stride_am, stride_bk, stride_cm, BM: tl.constexpr,
                   BN: tl.constexpr, BK: tl.constexpr):
    # K from 1: `(k - 1) * BK` is not known non-negative as the copy engine needs
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(1, K // BK + 1):
        rk = (k - 1) * BK + tl.arange(0, BK)
        a = tl.load(A + rm[:, None] * stride_am + rk[None, :])
        b = tl.load(B + rk[:, None] * stride_bk + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(C + rm[:, None] * stride_cm + rn[None, :], acc)


@tilecc.jit
def matmul_loaded_rows(A, B, C, Rows, K, stride_am, stride_bk, stride_cm, BM: tl.constexpr,
                       BN: tl.constexpr, BK: tl.constexpr):
    # A's first row read from memory: any int32, negative too
    rm = tl.load(Rows + tl.program_id(0)) + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K // BK):
        rk = k * BK + tl.arange(0, BK)
        a = tl.load(A + rm[:, None] * stride_am + rk[None, :])
        b = tl.load(B + rk[:, None] * stride_bk + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(C + rm[:, None] * stride_cm + rn[None, :], acc)


@tilecc.jit
def matmul_from(A, B, C, M, N, K, LO, stride_am, stride_bk, stride_cm, BM: tl.constexpr,
                BN: tl.constexpr, BK: tl.constexpr):
    # A[:, LO:] @ B[LO:, :]: block pointers moved to LO, then a loop from LO (the form of
    # the inner loop over keys of Triton's earlier fused-attention tutorial)
    a_blk = tl.make_block_ptr(A, (M, K), (stride_am, 1), (tl.program_id(0) * BM, 0),
                              (BM, BK), (1, 0))
    b_blk = tl.make_block_ptr(B, (K, N), (stride_bk, 1), (0, tl.program_id(1) * BN),
                              (BK, BN), (1, 0))
    a_blk = tl.advance(a_blk, (0, LO))
    b_blk = tl.advance(b_blk, (LO, 0))
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(LO, K, BK):
        a = tl.load(a_blk, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(b_blk, boundary_check=(0, 1), padding_option="zero")
        acc = tl.dot(a, b, acc)
        a_blk = tl.advance(a_blk, (0, BK))
        b_blk = tl.advance(b_blk, (BK, 0))
    c_blk = tl.make_block_ptr(C, (M, N), (stride_cm, 1),
                              (tl.program_id(0) * BM, tl.program_id(1) * BN), (BM, BN), (1, 0))
    tl.store(c_blk, acc, boundary_check=(0, 1))


@tilecc.jit
def matmul_stepped(A, B, C, M, N, K, stride_am, stride_bk, stride_bn, stride_cm,
                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # pointers the loop advances, the loop counting K itself (a step of BK)
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = A + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = B + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < K - k), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < K - k) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    tl.store(C + rm[:, None] * stride_cm + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


STEPPED = "*fp16:16,*fp16:16,*fp32:16,i32,i32,i32,i32:16,i32:16,i32:1,i32:16,{bm},{bn},{bk}"
FROM = "*fp16:16,*fp16:16,*fp32:16,i32,i32,i32,i32,i32:16,i32:16,i32:16,{bm},{bn},{bk}"
SIG = "*fp16:16,*fp16:16,*fp32:16,i32,i32,i32,i32:16,i32:16,i32:16,{bm},{bn},{bk},{form}"
# Triton's tutorial loop: pointers the loop advances, the last K step masked
matmul_carried = KP.ptr_matmul_kernel
CARRIED = KP.MATMUL_SIGNATURE
ATT = ("*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp32:16,fp32,i32:16,i32:16,i32:16,i32,i32,"
       "64,128,64,False")
attention = load_example("attention")


def _build(kernel, sig: str, warps: int = 4, stages: int = 3, **more):
    return compiler.transpile(kernel, kernel._specs(sig, {}), "cuda", kernel.options(
        num_warps=warps, num_stages=stages, arch="sm_90", **more))


def test_pointer_blocks_read_through_maps_of_their_arguments() -> None:
    art = _build(matmul_index, SIG.format(bm=128, bn=128, bk=64, form=0))
    maps = {m.param: m for m in art.kernel.tensor_maps if m.rows_split is None}
    # A: rows bounded by M, columns (stride 1) by K; its rows in one box where wgmma reads
    # them (a second map, 8 rows a box, for the last partial slab)
    split = [m for m in art.kernel.tensor_maps if m.rows_split is not None]
    assert [m.args for m in split] == [("A", "M", "K", "stride_am", 1)]
    assert maps["A"].box == (8, 64) and maps["B"].box == (64, 64)
    assert maps["B"].args == ("B", "K", "N", "stride_bk", 1)
    assert all(m.pointers and m.requires == () for m in art.kernel.tensor_maps)
    assert "a, b of tl.dot copied into shared memory with TMA" in art.source
    assert "cp_async" not in art.source
    # attention: K^T and V over (batch, head, key, dim), the batch and head one element each
    art = _build(attention.attention_fwd, ATT, warps=8)
    maps = {m.param: m for m in art.kernel.tensor_maps}
    assert maps["K"].args == ("K", UNBOUNDED, UNBOUNDED, "N_CTX", UNBOUNDED,
                              "stride_z", "stride_h", "stride_m", 1)
    assert maps["K"].box == (1, 1, 64, 64) and maps["V"].box == (1, 1, 64, 64)
    assert maps["K"].requires == (("H", 1),)  # `off_hz // H`, `off_hz % H`: H positive
    body = art.source.split("#include")[1]
    assert "const int z_index = off_hz / H;" in body
    assert "K_map, 0 + r, start_n_next + col, h_index, z_index, landed);" in body
    assert "V_map, 0 + col, start_n_next + r, h_index, z_index, landed);" in body
    assert "K's blocks, [1, 1, 64, 64] boxes" in body


def test_pointers_a_loop_advances_are_read_where_each_iteration_reads() -> None:
    """`a_ptrs += BK * stride_ak` from `a_ptr + ...`: the K coordinate is the index times
    the step (the index counts from 0); `offs_k < K - k * BK` bounds it by K."""
    art = _build(matmul_carried, CARRIED.format(bm=128, bn=128, bk=64))
    assert sorted((m.param, m.args) for m in art.kernel.tensor_maps) == [
        ("a_ptr", ("a_ptr", "M", "K", "stride_am", 1)),
        ("a_ptr", ("a_ptr", "M", "K", "stride_am", 1)),
        ("b_ptr", ("b_ptr", "K", "N", "stride_bk", 1))]
    body = art.source.split("#include")[1]
    assert "k_ahead * 64 + col" in body
    # a loop from LO over block pointers moved to LO first: the K coordinate is the index
    # (LO cancels), LO must not be negative
    art = _build(matmul_from, FROM.format(bm=128, bn=128, bk=64))
    assert sorted(m.param for m in art.kernel.tensor_maps) == ["A", "A", "B"]
    assert all(m.requires == (("LO", 0),) for m in art.kernel.tensor_maps)
    # the block pointers of attention's tutorial kernel, advanced along the keys
    bp = load_example("attention_block_ptr", "benchmarks").attention_fwd_block_ptr
    art = _build(bp, ATT, warps=8)
    assert sorted(m.param for m in art.kernel.tensor_maps) == ["K", "V"]


def test_advanced_pointers_a_map_reads_are_not_carried() -> None:
    """A load the copy engine may read, of pointers the loop advances, reads its start
    advanced by the iterations before instead (`_Matcher.from_index`): the loop carries
    the accumulator alone, and no block of pointers is kept or advanced in the source.
    Where the copy engine cannot take the block after all (BK = 16: rows of 32 bytes),
    cp.async reads those addresses, the iterations counted in 64 bits."""
    for kernel, sig in ((matmul_carried, CARRIED.format(bm=128, bn=128, bk=64)),
                        (matmul_stepped, STEPPED.format(bm=64, bn=64, bk=64)),
                        (matmul_stepped, STEPPED.format(bm=64, bn=64, bk=16))):
        art = _build(kernel, sig)
        loop = next(o for o in art.kernel.walk() if o.kind == "for")
        assert [v.type.dtype.short for v in loop.results] == ["fp32"]
        body = art.source.split("#include")[1]
        assert "a_ptrs[" not in body and "b_ptrs[" not in body
    assert "cp_async" not in _build(matmul_stepped, STEPPED.format(bm=64, bn=64, bk=64)).source
    assert "tc::cast<long long>(k_next / 16) * tc::cast<long long>(16 * stride_bk)," in body
    # the build for launches the copy engine cannot serve carries them as written
    art = _build(matmul_stepped, STEPPED.format(bm=64, bn=64, bk=64), made_descriptor_tma=False)
    loop = next(o for o in art.kernel.walk() if o.kind == "for")
    assert len(loop.results) == 3


@pytest.mark.parametrize("bk", [16, 32])
def test_advanced_pointers_on_the_interpreter_equal_numpy(bk) -> None:
    """The pointers from the loop's index read what the advanced ones read: small
    integers, so that every product and sum is exact."""
    rng = np.random.default_rng(bk)
    for m, n, k in ((70, 40, 100), (64, 64, 64), (33, 65, 31), (5, 7, 200)):
        a = rng.integers(-3, 4, (m, k)).astype(np.float16)
        b = rng.integers(-3, 4, (k, n)).astype(np.float16)
        c = np.zeros((m, n), np.float32)
        matmul_stepped.interpret[(tilecc.cdiv(m, 32), tilecc.cdiv(n, 32))](
            a, b, c, m, n, k, k, n, 1, n, BM=32, BN=32, BK=bk)
        np.testing.assert_array_equal(c, a.astype(np.float32) @ b.astype(np.float32))


@pytest.mark.parametrize("form,reason", [(1, "a bound on another coordinate"),
                                         (2, "a lower bound past 0")])
def test_masks_the_copy_engine_cannot_bound_stay_cp_async(form, reason) -> None:
    art = _build(matmul_index, SIG.format(bm=64, bn=64, bk=64, form=form))
    assert "A" not in [m.param for m in art.kernel.tensor_maps], reason
    # `x >= 0` where x is a coordinate known non-negative: the copy engine's bound too; and
    # `x + 1 < K + 1` is `x < K`
    for same in (3, 4):
        art = _build(matmul_index, SIG.format(bm=64, bn=64, bk=64, form=same))
        assert sorted(m.param for m in art.kernel.tensor_maps) == ["A", "A", "B"], same


def test_coordinates_not_known_non_negative_stay_cp_async() -> None:
    """The copy engine reads nothing below a dim's 0, where the pointers would read."""
    sig = "*fp16:16,*fp16:16,*fp32:16,i32,i32:16,i32:16,i32:16,64,64,64"
    art = _build(matmul_shifted, sig)
    assert art.kernel.tensor_maps == [] and "tc::cp_async<16>(" in art.source
    art = _build(matmul_loaded_rows,
                 "*fp16:16,*fp16:16,*fp32:16,*i32:16,i32,i32:16,i32:16,i32:16,64,64,64")
    assert [m.param for m in art.kernel.tensor_maps] == ["B"]


def test_what_else_keeps_pointer_blocks_off_the_copy_engine(monkeypatch) -> None:
    sig = SIG.format(bm=64, bn=64, bk=64, form=0)
    # a base not known 16-byte aligned (here nothing is pipelined: A, read a vector of
    # one element at a time, shares its K offsets with B)
    art = _build(matmul_index, sig.replace("*fp16:16,*fp16:16", "*fp16,*fp16:16", 1))
    assert "A" not in [m.param for m in art.kernel.tensor_maps]
    # before Hopper, or built for arguments TMA cannot read
    assert _build(matmul_index, sig, made_descriptor_tma=False).kernel.tensor_maps == []
    art = compiler.transpile(matmul_index, matmul_index._specs(sig, {}), "cuda",
                             matmul_index.options(arch="sm_80", num_stages=3))
    assert art.kernel.tensor_maps == [] and "tc::cp_async<16>(" in art.source
    # rows of 32 bytes, which no swizzle of the copy engine writes as wgmma reads them:
    # marked, then left to cp.async, the mark and its coordinates' ops dropped again
    sig = SIG.format(bm=64, bn=64, bk=16, form=0)
    kept = _build(matmul_index, sig).kernel
    # (a build never marked holds the pointers from before the loop, which a block still
    # marked when that pass ran does not: compared without that pass)
    monkeypatch.setattr(pass_order, "hoist_offsets", lambda kernel: False)
    plain = _build(matmul_index, sig, made_descriptor_tma=False).kernel
    monkeypatch.undo()
    assert kept.tensor_maps == [] and all("descriptor" not in op.attrs for op in kept.walk())
    assert [op.kind for op in kept.walk()] == [op.kind for op in plain.walk()]


def test_pointer_tiles_on_the_interpreter_match_numpy() -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((70, 100)).astype(np.float16)
    b = rng.standard_normal((100, 40)).astype(np.float16)
    c = np.zeros((70, 40), np.float32)
    matmul_from.interpret[(3, 2)](a, b, c, 70, 40, 100, 32, 100, 40, 40, BM=32, BN=32, BK=32)
    np.testing.assert_allclose(c, a[:, 32:].astype(np.float32) @ b[32:].astype(np.float32),
                               rtol=1e-2, atol=1e-2)
    for m, n, k in ((70, 40, 100), (64, 64, 64)):
        a = rng.standard_normal((m, k)).astype(np.float16)
        b = rng.standard_normal((k, n)).astype(np.float16)
        c = np.zeros((m, n), np.float32)
        matmul_index.interpret[(tilecc.cdiv(m, 32), tilecc.cdiv(n, 32))](
            a, b, c, m, n, k, k, n, n, BM=32, BN=32, BK=32, FORM=0)
        np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32),
                                   rtol=1e-2, atol=1e-2)


def test_pointer_tile_sources_compile() -> None:
    require_cuda_compiler()
    for sig, warps in ((SIG.format(bm=128, bn=128, bk=64, form=0), 4),
                       (SIG.format(bm=128, bn=256, bk=64, form=0), 8)):
        assert_clean_compile(matmul_index, sig, "cuda", "sm_90", num_warps=warps,
                             num_stages=3)
    assert_clean_compile(attention.attention_fwd, ATT, "cuda", "sm_90", num_warps=8,
                         num_stages=3)
    # block pointers: the carried offsets the masks read are what the copies read; those
    # of dims no mask checks are carried no more (passes.dce), on any target
    bp = load_example("attention_block_ptr", "benchmarks").attention_fwd_block_ptr
    for arch in ("sm_80", "sm_90"):
        assert "kt_block_offset0" not in bp.source(ATT, arch=arch, num_warps=8, num_stages=3)
    assert_clean_compile(bp, ATT, "cuda", "sm_90", num_warps=8, num_stages=3)
    assert_clean_compile(matmul_carried, CARRIED.format(bm=128, bn=128, bk=64), "cuda",
                         "sm_90", num_warps=4, num_stages=4)


def test_a_launch_breaking_a_maps_requirement_goes_to_the_cp_async_build(
        monkeypatch) -> None:
    from tilecc.runtime import cuda_driver

    encoded = []
    monkeypatch.setattr(cuda_driver, "tensorMapEncodeTiled",
                        lambda address, **args: encoded.append(args["dims"]) or (0,) * 16)
    m = TensorMap("K", "fp16", (1, 64, 64), 128, "zero", ("K", UNBOUNDED, "N", UNBOUNDED,
                                                           "stride_h", "stride_m", 1),
                  requires=(("H", 1),), pointers=True)
    # values: K, N, stride_h, stride_m, H
    slots = ((0, None), (None, UNBOUNDED), (1, None), (None, UNBOUNDED), (2, None), (3, None),
             (None, 1), (4, None))
    kernel = _Recorder([(slots, 3, m)])
    launcher = launch_cuda.launcher(kernel, ("Qiiii", (True,) * 5), set())
    launcher.stream_of = lambda device: 0
    fallen = []
    launcher.fallback = lambda: lambda grid, values: fallen.append(values)
    launcher((1, 1, 1), [1 << 20, 1000, 64000, 64, 8])  # H = 8: TMA
    launcher((1, 1, 1), [1 << 20, 1000, 64000, 64, 0])  # H = 0: the other build
    launcher((1, 1, 1), [1 << 20, 1000, 64000, 60, 8])  # rows of 120 bytes: the other build
    assert encoded == [[UNBOUNDED, 1000, UNBOUNDED]] and len(kernel.launches) == 1
    assert [v[-1] for v in fallen] == [0, 8]
    launcher.fallback = None  # no build to fall back on: an error, not a wrong copy
    with pytest.raises(ValueError, match="the blocks loaded from `K`: its TMA copies were "
                                         "compiled for H >= 1"):
        launcher((1, 1, 1), [1 << 20, 1000, 64000, 64, -1])


# --- the GPU -------------------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("bm,bn,bk,warps,stages", [(64, 64, 32, 4, 3), (128, 128, 64, 4, 4),
                                                   (128, 128, 64, 8, 3), (128, 256, 64, 8, 3)])
@pytest.mark.parametrize("m,n,k,pad", [(300, 264, 200, 0), (129, 72, 48, 0), (256, 256, 256, 0),
                                       (200, 136, 120, 4)])
def test_gpu_pointer_tiles_match_torch(dtype, bm, bn, bk, warps, stages, m, n, k, pad) -> None:
    """`pad`: rows 8 bytes longer than the block, so not multiples of 16 bytes: the launch
    runs the build that copies them by cp.async."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    torch.manual_seed(m + n + k)
    t = getattr(torch, dtype)
    a = torch.randn(m, k + pad, device="cuda").to(t)[:, :k]
    b = torch.randn(k, n + pad, device="cuda").to(t)[:, :n]
    c = torch.full((m, n), -1.0, device="cuda")
    matmul_index[(tilecc.cdiv(m, bm), tilecc.cdiv(n, bn))](
        a, b, c, m, n, k, a.stride(0), b.stride(0), c.stride(0), BM=bm, BN=bn, BK=bk, FORM=0,
        num_warps=warps, num_stages=stages)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-2, atol=0.05 * k ** 0.5)


@pytest.mark.gpu
@pytest.mark.parametrize("bm,bn,bk,warps,stages", [(128, 128, 64, 4, 4), (128, 256, 64, 8, 3)])
@pytest.mark.parametrize("m,n,k", [(300, 264, 200), (129, 72, 48), (4097, 256, 128)])
def test_gpu_rows_ending_inside_a_box_through_the_8_row_maps_match_torch(
        monkeypatch, bm, bn, bk, warps, stages, m, n, k) -> None:
    """A launch whose rows end inside a box runs the cp.async build
    (launch_cuda.ragged_boxes); the TMA build's own way with them (the last programs copy
    8-row boxes) is checked here, with that choice turned off, in a kernel of its own (the
    launch remembers what it chose)."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    monkeypatch.setattr(launch_cuda, "ragged_boxes", lambda m, shape: False)
    torch.manual_seed(m + n + k)
    a = torch.randn(m, k, device="cuda").half()
    b = torch.randn(k, n, device="cuda").half()
    c = torch.full((m, n), -1.0, device="cuda")
    fresh = tilecc.jit(matmul_index.fn)
    fresh[(tilecc.cdiv(m, bm), tilecc.cdiv(n, bn))](
        a, b, c, m, n, k, a.stride(0), b.stride(0), c.stride(0), BM=bm, BN=bn, BK=bk, FORM=0,
        num_warps=warps, num_stages=stages)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-2, atol=0.05 * k ** 0.5)


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k,pad", [(300, 264, 200, 0), (129, 72, 48, 0), (200, 136, 120, 4)])
def test_gpu_advanced_pointers_through_maps_match_torch(m, n, k, pad) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    torch.manual_seed(m + n + k)
    a = torch.randn(m, k + pad, device="cuda").half()[:, :k]
    b = torch.randn(k, n + pad, device="cuda").half()[:, :n]
    c = torch.full((m, n), -1.0, device="cuda").half()
    for bm, bn, bk, warps, stages in ((64, 64, 32, 4, 3), (128, 128, 64, 4, 4),
                                      (128, 256, 64, 8, 3)):
        c.fill_(-1.0)
        matmul_carried[(tilecc.cdiv(m, bm), tilecc.cdiv(n, bn))](
            a, b, c, m, n, k, a.stride(0), 1, b.stride(0), 1, c.stride(0), 1,
            BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, num_warps=warps,
            num_stages=stages)
        torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=1e-2,
                                   atol=0.05 * k ** 0.5)


@pytest.mark.gpu
@pytest.mark.parametrize("bk", [16, 64])
@pytest.mark.parametrize("m,n,k", [(300, 264, 200), (129, 72, 48), (64, 64, 1000)])
def test_gpu_pointers_from_the_loop_index_match_torch(bk, m, n, k) -> None:
    """BK 64: the copy engine reads the blocks; BK 16: cp.async reads them at the
    addresses worked out from the loop's index (`_Matcher.from_index`)."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    torch.manual_seed(m + n + k + bk)
    a = torch.randint(-3, 4, (m, k), device="cuda").half()
    b = torch.randint(-3, 4, (k, n), device="cuda").half()
    c = torch.full((m, n), -1.0, device="cuda")
    matmul_stepped[(tilecc.cdiv(m, 64), tilecc.cdiv(n, 64))](
        a, b, c, m, n, k, a.stride(0), b.stride(0), 1, c.stride(0), BM=64, BN=64, BK=bk,
        num_warps=4, num_stages=3)
    assert torch.equal(c, a.float() @ b.float())


@pytest.mark.gpu
@pytest.mark.parametrize("lo", [0, 64, 128])
def test_gpu_a_loop_from_lo_through_maps_matches_torch(lo) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    torch.manual_seed(lo)
    m, n, k = 300, 264, 200
    a = torch.randn(m, k, device="cuda").half()
    b = torch.randn(k, n, device="cuda").half()
    c = torch.full((m, n), -1.0, device="cuda")
    matmul_from[(tilecc.cdiv(m, 128), tilecc.cdiv(n, 128))](
        a, b, c, m, n, k, lo, a.stride(0), b.stride(0), c.stride(0), BM=128, BN=128, BK=64,
        num_warps=4, num_stages=3)
    want = a[:, lo:].float() @ b[lo:].float()
    torch.testing.assert_close(c, want, rtol=1e-2, atol=0.05 * k ** 0.5)


@pytest.mark.gpu
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d,pad", [(64, 0), (128, 0), (64, 4)])
def test_gpu_attention_through_pointer_maps_matches_torch(d, pad, causal) -> None:
    """Batch and head as dims of one element; keys past N_CTX filled by the copy engine
    (N_CTX not a multiple of the block); `pad`: rows TMA cannot read, the other build."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    import torch.nn.functional as F

    z, h, n = 2, 3, 1000
    torch.manual_seed(d + pad)
    q, k, v = (torch.randn((z, h, n, d + pad), device="cuda", dtype=torch.float16)[..., :d]
               for _ in range(3))
    out = torch.empty((z, h, n, d + pad), device="cuda", dtype=torch.float16)[..., :d]
    lse = torch.empty((z * h, n), device="cuda")
    bm, bn, warps = (128, 64, 4) if d == 64 else (128, 128, 8)
    attention.attention_fwd[(tilecc.cdiv(n, bm), z * h)](
        q, k, v, out, lse, d ** -0.5, q.stride(0), q.stride(1), q.stride(2), h, n,
        HEAD_DIM=d, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=causal, num_warps=warps, num_stages=3)
    want = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
    torch.testing.assert_close(out.float(), want, atol=2e-2, rtol=2e-2)
