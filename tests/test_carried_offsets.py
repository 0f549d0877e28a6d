"""Blocks of pointers a K loop advances by a scalar: the block from before the loop plus one
carried int64 offset (passes.carried_offsets); and blocks a K loop computes from its index
at each step: the block from before the loop plus an offset the step computes
(`hoist_offsets`).

On CPU: which loops carry an offset instead of their pointers (and which keep them: the
block read after the loop, a step that is itself a block, loads the copy engine reads),
the source the copies are issued from, the interpreter against NumPy for each form, and
clean compiles.  On the GPU: products through the rewritten loops equal torch's.
"""

from __future__ import annotations

import numpy as np
import pytest

import tilecc
import tilecc.language as tl
from tilecc.language import dtypes as D
from tilecc.runtime import compiler
from tilecc.transpiler import ir

from conftest_compilers import require_cuda_compiler
import kernels_ptr as KP
from test_blocks import load_example
from test_compile_kernels import assert_clean_compile

matmul = load_example("matmul")
TUTORIAL = ("*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,"
            "i32:1,128,128,64,8,''")


@tilecc.jit
def advanced_kernel(A, B, C, M, N, K, stride_am, stride_bk, stride_cm, AFTER: tl.constexpr,
                    BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # A's pointers advanced by BK, B's by a step computed in the loop from an int64; with
    # AFTER, A's pointers are read once more after the loop (a column of A added to C)
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = A + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = B + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < K - k * BK), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < K - k * BK) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += stride_bk.to(tl.int64) * BK
    if AFTER:  # A's first row after the loop's last block: column K of a (K + BK)-wide A
        extra = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < 1), other=0.0)
        acc += tl.sum(extra.to(tl.float32), axis=1)[:, None]
    tl.store(C + rm[:, None] * stride_cm + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


SIG = "*fp16:16,*fp16:16,*fp32:16,i32,i32,i32,i32:16,i32:16,i32:16,{after},{bm},{bn},{bk}"


@tilecc.jit
def recomputed_kernel(A, B, C, M, N, K, stride_am, stride_bk, stride_cm, WIDE: tl.constexpr,
                      BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # Triton's persistent matmul tutorial's addressing: the pointers computed from the loop
    # index at each step, rows and columns wrapping around (% M, % N: runs of BM and BN, as
    # its hints say); with WIDE the K offsets are int64
    rm = (tl.program_id(0) * BM + tl.arange(0, BM)) % M
    rn = (tl.program_id(1) * BN + tl.arange(0, BN)) % N
    rm = tl.max_contiguous(tl.multiple_of(rm, BM), BM)
    rn = tl.max_contiguous(tl.multiple_of(rn, BN), BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for ki in range(0, tl.cdiv(K, BK)):
        rk = ki * BK + tl.arange(0, BK)
        if WIDE:
            rk = rk.to(tl.int64)
        a = tl.load(A + (rm[:, None] * stride_am + rk[None, :]), mask=rk[None, :] < K,
                    other=0.0)
        b = tl.load(B + rk[:, None] * stride_bk + rn[None, :], mask=rk[:, None] < K, other=0.0)
        acc = tl.dot(a, b, acc)
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    tl.store(C + rows[:, None] * stride_cm + cols[None, :], acc.to(C.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


@tilecc.jit
def indexed_kernel(A, B, C, M, N, K, stride_am, stride_bk, stride_cm, ORDER: tl.constexpr,
                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # K's blocks from an index that starts past 0 and steps by BK (ORDER 0: an offset the
    # loop can carry), in a permuted order (ORDER 1: block (7 i) % n, computed at each
    # step), from K down (ORDER 2: a negative step, the index subtracted), or an int64
    # index times a run-time stride (ORDER 3); K a multiple of BK
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    lo, hi, step = (K, 0, -BK) if ORDER == 2 else (BK, K + BK, BK)
    unit = stride_am // stride_am  # (1, known at run time)
    for kk in range(lo, hi, step):
        if ORDER == 0:
            rk = kk - BK + tl.arange(0, BK)
        elif ORDER == 1:
            rk = (kk // BK * 7 % (K // BK)) * BK + tl.arange(0, BK)
        elif ORDER == 2:
            rk = K - kk + tl.arange(0, BK)
        else:
            rk = (kk.to(tl.int64) - BK) * unit + tl.arange(0, BK)
        a = tl.load(A + rm[:, None] * stride_am + rk[None, :], mask=rm[:, None] < M, other=0.0)
        b = tl.load(B + rk[:, None] * stride_bk + rn[None, :], mask=rn[None, :] < N, other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(C + rm[:, None] * stride_cm + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


INDEXED = "*fp16:16,*fp16:16,*fp32:16,i32,i32,i32:16,i32:16,i32:16,i32:16,{order},64,64,32"


RECOMPUTED = "*fp16:16,*fp16:16,*fp16:16,i32,i32,i32,i32:16,i32:16,i32:16,{wide},{bm},{bn},{bk}"


def _loop(kernel) -> "object":
    [loop] = [op for op in kernel.walk() if op.kind == "for"]
    return loop


def _carried(art) -> list[str]:
    """The types the kernel's K loop carries, past its index."""
    return [str(a.type) for a in _loop(art.kernel).regions[0].args[1:]]


def _build(kernel, sig: str, arch: str = "sm_80", warps: int = 4, stages: int = 3, **more):
    return compiler.transpile(kernel, kernel._specs(sig, {}), "cuda", kernel.options(
        num_warps=warps, num_stages=stages, arch=arch, **more))


def test_the_tutorial_loop_carries_one_offset_per_block() -> None:
    """Triton's matmul tutorial: its two pointer blocks are each held from before the loop,
    and the copies read them plus one int64 offset the loop advances."""
    for arch in ("sm_80", "sm_90"):  # (rows that wrap around: cp.async on both)
        art = _build(matmul.matmul_kernel, TUTORIAL, arch, stages=4)
        assert _carried(art) == ["fp32[128, 128]", "i64", "i64"], arch
        body = art.source.split("#include")[1]
        assert "a_ptrs[v] + a_ptrs_offset" in body and "b_ptrs[v] + b_ptrs_offset" in body
        assert "a_ptrs_offset = a_ptrs_offset + 64ll;" in body
        assert "b_ptrs_offset = b_ptrs_offset + tc::cast<long long>(64 * stride_bk);" in body
        assert "a_ptrs[r] = a_ptrs[r] +" not in body  # (the block itself is not advanced)
        # the blocks are computed once, before the loop (not at each read)
        loop_at = body.index("for (int k_ = 0;")
        assert body.index("const tc::half* a_ptrs[") < loop_at
        assert body.count("% M * stride_am") == 1


def test_the_pointers_the_copies_read_are_pinned_before_the_loop() -> None:
    """The tutorial's held blocks: the registers its cp.async copies read (every 8th: a
    16-byte vector each) are pinned where the block is computed, before the loop, so that
    ptxas keeps them rather than rebuilding B's from one pointer at each K step (a chain
    of dependent multiply-adds the copies waited on: 0.78x Triton's speed)."""
    for arch in ("sm_80", "sm_90"):
        art = _build(matmul.matmul_kernel, TUTORIAL, arch, stages=4, made_descriptor_tma=False)
        body = art.source.split("#include")[1]
        loop_at = body.index("for (int k_ = 0;")
        for block in ("a_ptrs", "b_ptrs"):
            pin = f"for (int r = 0; r < 64; r += 8) tc::keep_in_register({block}[r]);"
            assert body.count(pin) == 1 and body.index(pin) < loop_at, (arch, block)


def test_blocks_no_copy_reads_are_not_pinned() -> None:
    """Where no cp.async copy reads the held block (no pipeline: one stage; HIP, which
    copies by the threads' own loads) its registers are left to the compiler: every one
    of them pinned, the block's pointers would outgrow the registers."""
    sig = SIG.format(after=False, bm=64, bn=64, bk=32)
    art = _build(advanced_kernel, sig, stages=1)
    assert "a_ptrs_offset" in art.source and "keep_in_register(" not in art.source
    art = compiler.transpile(advanced_kernel, advanced_kernel._specs(sig, {}), "hip",
                             advanced_kernel.options(num_warps=4, num_stages=3))
    assert "a_ptrs_offset" in art.source and "keep_in_register(" not in art.source


def test_what_keeps_its_pointers_carried() -> None:
    # read after the loop: rebuilding the block there is not done
    art = _build(advanced_kernel, SIG.format(after=True, bm=64, bn=64, bk=32))
    assert _carried(art) == ["fp32[64, 64]", "*fp16[64, 32]", "i64"]  # (B: an offset)
    # loads the copy engine reads (sm_90, strides TMA takes): they read no pointer at all
    art = _build(KP.ptr_matmul_kernel, KP.MATMUL_SIGNATURE.format(bm=128, bn=128, bk=64),
                 "sm_90", stages=4)
    assert art.kernel.tensor_maps and "i64" not in _carried(art)
    # ... whose build for other strides (cp.async) carries the offsets
    art = _build(KP.ptr_matmul_kernel, KP.MATMUL_SIGNATURE.format(bm=128, bn=128, bk=64),
                 "sm_90", stages=4, made_descriptor_tma=False)
    assert _carried(art).count("i64") == 2
    # a loop without a product (no K loop): left as written
    @tilecc.jit
    def running_sum(X, Y, N, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        ptrs = X + offs
        total = tl.zeros((BLOCK,), dtype=tl.float32)
        for i in range(0, tl.cdiv(N, BLOCK)):
            total += tl.load(ptrs, mask=offs < N - i * BLOCK, other=0.0)
            ptrs += BLOCK
        tl.store(Y + offs, total)

    art = _build(running_sum, "*fp32:16,*fp32:16,i32,128")
    assert _carried(art) == ["fp32[128]", "*fp32[128]"]


def test_advanced_blocks_on_the_interpreter_match_numpy() -> None:
    rng = np.random.default_rng(0)
    for m, n, k, after in ((70, 40, 100, False), (64, 64, 64, False), (50, 30, 90, True)):
        cols = k + 32 if after else k  # (the read after the loop: column k of A)
        a = rng.standard_normal((m, cols)).astype(np.float16)
        b = rng.standard_normal((k, n)).astype(np.float16)
        c = np.zeros((m, n), np.float32)
        advanced_kernel.interpret[(tilecc.cdiv(m, 32), tilecc.cdiv(n, 32))](
            a, b, c, m, n, k, cols, n, n, AFTER=after, BM=32, BN=32, BK=32)
        ref = a[:, :k].astype(np.float32) @ b.astype(np.float32)
        if after:
            ref += a[:, tilecc.cdiv(k, 32) * 32].astype(np.float32)[:, None]
        np.testing.assert_allclose(c, ref, rtol=1e-2, atol=1e-2)
    # the tutorial kernel, whose rows and columns wrap
    a = rng.standard_normal((100, 70)).astype(np.float16)
    b = rng.standard_normal((70, 60)).astype(np.float16)
    c = np.zeros((100, 60), np.float16)
    matmul.matmul_kernel.interpret[(tilecc.cdiv(100, 32) * tilecc.cdiv(60, 32),)](
        a, b, c, 100, 60, 70, 70, 1, 60, 1, 60, 1, BLOCK_SIZE_M=32, BLOCK_SIZE_N=32,
        BLOCK_SIZE_K=32, GROUP_SIZE_M=2, ACTIVATION="")
    np.testing.assert_allclose(c.astype(np.float32), a.astype(np.float32) @ b.astype(np.float32),
                               rtol=2e-2, atol=5e-2)


def test_blocks_computed_from_the_index_are_held_before_the_loop() -> None:
    """Pointers a K loop computes from its index: the part that does not change is held from
    before the loop (the rows' remainders by M and N computed there, once) and the copies
    add an offset the loop carries (the index times the step's stride); as the advanced
    blocks' registers, those the copies read are pinned.  Written as it stood, every copy
    recomputed `% M` at each step (0.66x Triton's speed at 4096³ on an H200)."""
    for arch in ("sm_80", "sm_90"):
        for wide in (False, True):
            art = _build(recomputed_kernel, RECOMPUTED.format(wide=wide, bm=128, bn=128, bk=64),
                         arch, stages=4)
            body = " ".join(line.strip() for line in art.source.split("#include")[1].splitlines()
                            if not line.lstrip().startswith("//"))  # (the code, one line)
            loop_at = body.index("for (int ki = 0;")
            assert body.count("% M") == 1 and body.index("% M") < loop_at, (arch, wide)
            assert body.count("% N") == 1 and body.index("% N") < loop_at, (arch, wide)
            for block in ("a_ptrs", "b_ptrs"):
                pin = f"for (int r = 0; r < 64; r += 8) tc::keep_in_register({block}[r]);"
                assert body.count(pin) == 1 and body.index(pin) < loop_at, (arch, wide, block)
            # the offsets carried from step to step, as an advanced block's
            assert body.count("a_ptrs[v] + a_ptrs_offset") == 2  # prologue and loop
            assert body.count("b_ptrs[v] + b_ptrs_offset") == 2
            assert _carried(art) == ["fp32[128, 128]", "i64", "i64"]
            # the K bound `rk < K` compared as the block from before the loop against
            # `K - ki * BK` (Triton's form), not rebuilt at each step
            bound = ("tc::cast<long long>(K) - tc::cast<long long>(ki_ahead * 64)" if wide
                     else "< K - ki_ahead * 64")
            assert body.count(bound) == 2, (arch, wide)  # (A's and B's)


def test_offsets_carried_where_they_step_with_the_index() -> None:
    """An index that starts past 0 and steps by BK (or down from K): the offset starts at
    its first value and the loop adds the step's stride; an index the loop permutes
    (`(7 i) % n`): the block is still held, its offset computed at each step from the
    index."""
    art = _build(indexed_kernel, INDEXED.format(order=0))
    assert _carried(art) == ["fp32[64, 64]", "i64", "i64"]
    body = art.source.split("#include")[1]
    assert "a_ptrs[v] + a_ptrs_offset" in body and "b_ptrs[v] + b_ptrs_offset" in body
    for order in (2, 3):  # a negative step; an int64 index times a run-time value
        art = _build(indexed_kernel, INDEXED.format(order=order))
        assert _carried(art) == ["fp32[64, 64]", "i64", "i64"], order
    art = _build(indexed_kernel, INDEXED.format(order=1))
    assert _carried(art) == ["fp32[64, 64]"]
    body = art.source.split("#include")[1]
    assert "a_ptrs[v] + tc::cast<long long>(" in body and "b_ptrs[v] + tc::cast<long long>(" in body


def test_what_stays_computed_in_the_loop() -> None:
    """A block whose changing part is not one scalar (`rk * ki`), a row's values spread over
    the tile rather than a product's operand, and a block read element by element keep
    their addresses computed where they are read."""
    @tilecc.jit
    def kept(A, B, S, C, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        rm = tl.arange(0, BM)
        rn = tl.arange(0, BN)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for ki in range(0, K // BK):
            rk = tl.arange(0, BK)
            a = tl.load(A + rm[:, None] * K + rk[None, :] * (ki + 1))  # a stride per step
            b = tl.load(B + (ki * BK + rk[:, None]) * BN + rn[None, :])
            scale = tl.load(S + ki * BM + rm)  # one value per row
            acc = tl.dot(a, b, acc) * scale[:, None]
        tl.store(C + rm[:, None] * BN + rn[None, :], acc)

    art = _build(kept, "*fp16:16,*fp16:16,*fp32:16,*fp32:16,i32:16,64,64,32")
    loads = {op.result.type.shape: op for op in ir.walk(_loop(art.kernel).regions[0])
             if op.kind == "load"}
    split = {shape for shape, op in loads.items()
             if op.operands[0].owner.attrs.get("carried_offset")}
    assert split == {(32, 64)}  # B alone
    # B's rows 2 bytes apart from any 16-byte boundary: read element by element, not split
    art = _build(kept, "*fp16:16,*fp16,*fp32:16,*fp32:16,i32:16,64,64,32")
    assert not any(op.attrs.get("carried_offset") for op in art.kernel.walk())


def test_blocks_computed_from_the_index_on_the_interpreter_match_numpy() -> None:
    rng = np.random.default_rng(1)

    def check(kernel, m, n, k, **constexprs):
        a = rng.standard_normal((m, k)).astype(np.float16)
        b = rng.standard_normal((k, n)).astype(np.float16)
        c = np.zeros((m, n), np.float32)
        kernel.interpret[(tilecc.cdiv(m, 32), tilecc.cdiv(n, 32))](
            a, b, c, m, n, k, k, n, n, BM=32, BN=32, BK=32, **constexprs)
        np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-2,
                                   atol=1e-2)

    for m, n, k, wide in ((70, 40, 100, False), (64, 64, 64, True), (33, 90, 47, False)):
        check(recomputed_kernel, m, n, k, WIDE=wide)
    for order in (0, 1, 2, 3):
        check(indexed_kernel, 50, 70, 96, ORDER=order)


def test_the_offset_is_int64_and_its_step_widened() -> None:
    """The offset sums the steps as the pointers would have (64-bit): an int32 step is
    widened before it is added, an int64 one added as it is."""
    art = _build(advanced_kernel, SIG.format(after=False, bm=64, bn=64, bk=32))
    loop = _loop(art.kernel)
    offsets = [a for a in loop.regions[0].args[1:] if a.dtype == D.int64]
    assert len(offsets) == 2
    body = art.source.split("#include")[1]
    assert "a_ptrs_offset = a_ptrs_offset + 32ll;" in body
    assert "b_ptrs_offset = b_ptrs_offset + " in body and "tc::cast<long long>(stride_bk)" in body


def test_rewritten_loops_compile_cleanly() -> None:
    require_cuda_compiler()
    assert_clean_compile(matmul.matmul_kernel, TUTORIAL, "cuda", "sm_90", num_warps=4,
                         num_stages=4)
    assert_clean_compile(matmul.matmul_kernel, TUTORIAL, "cuda", "sm_80", num_warps=4,
                         num_stages=3)
    for after in (False, True):
        assert_clean_compile(advanced_kernel, SIG.format(after=after, bm=64, bn=64, bk=32),
                             "cuda", "sm_80", num_warps=4, num_stages=3)
    for arch, warps, stages in (("sm_90", 4, 4), ("sm_90", 8, 3), ("sm_80", 4, 3)):
        assert_clean_compile(recomputed_kernel, RECOMPUTED.format(wide=False, bm=128, bn=128,
                                                                  bk=64),
                             "cuda", arch, num_warps=warps, num_stages=stages)


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k,after", [(1000, 1000, 1000, False), (257, 129, 300, True),
                                         (512, 512, 4096, False)])
def test_gpu_advanced_blocks_match_torch(m, n, k, after) -> None:
    import torch

    torch.manual_seed(0)
    cols = k + 32 if after else k
    a = torch.randn(m, cols, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    c = torch.zeros(m, n, device="cuda", dtype=torch.float32)
    advanced_kernel[(tilecc.cdiv(m, 64), tilecc.cdiv(n, 64))](
        a, b, c, m, n, k, cols, n, n, AFTER=after, BM=64, BN=64, BK=32, num_stages=3)
    ref = a[:, :k].float() @ b.float()
    if after:
        ref += a[:, tilecc.cdiv(k, 32) * 32].float()[:, None]
    torch.testing.assert_close(c, ref, rtol=1e-2, atol=5e-2)
    out = torch.empty(m, n, device="cuda", dtype=torch.float16)
    for w, s in ((4, 4), (8, 3)):
        matmul.matmul_kernel[(tilecc.cdiv(m, 128) * tilecc.cdiv(n, 128),)](
            a, b, out, m, n, k, a.stride(0), 1, b.stride(0), 1, n, 1, BLOCK_SIZE_M=128,
            BLOCK_SIZE_N=128, BLOCK_SIZE_K=64, GROUP_SIZE_M=8, ACTIVATION="", num_warps=w,
            num_stages=s)
        torch.testing.assert_close(out.float(), a[:, :k].float() @ b.float(), rtol=2e-2,
                                   atol=0.25)
    for wide, w, s in ((False, 4, 4), (True, 8, 3)):
        c.zero_()
        recomputed_kernel[(tilecc.cdiv(m, 128), tilecc.cdiv(n, 128))](
            a, b, c, m, n, k, cols, n, n, WIDE=wide, BM=128, BN=128, BK=64, num_warps=w,
            num_stages=s)
        torch.testing.assert_close(c, a[:, :k].float() @ b.float(), rtol=1e-2, atol=5e-2)


@pytest.mark.gpu
@pytest.mark.parametrize("order", [0, 1, 2, 3])
def test_gpu_blocks_computed_from_the_index_match_torch(order) -> None:
    import torch

    torch.manual_seed(order)
    m, n, k = 300, 200, 512
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    c = torch.zeros(m, n, device="cuda", dtype=torch.float32)
    for w, s in ((4, 3), (4, 4)):
        c.zero_()
        indexed_kernel[(tilecc.cdiv(m, 64), tilecc.cdiv(n, 64))](
            a, b, c, m, n, k, k, n, n, ORDER=order, BM=64, BN=64, BK=32, num_warps=w,
            num_stages=s)
        torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-2, atol=5e-2)
