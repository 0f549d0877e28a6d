"""fp16 / bf16 atomic adds two elements at a time: a thread's two consecutive registers
whose addresses are consecutive (the first 4-byte aligned) go to one packed instruction
(f16x2 / bf16x2), where one element alone is a compare-and-swap loop on its 32-bit word.
The kernel class: split-K GEMVs, each program reducing a block over K with tl.sum and
adding its partial row into the fp16 output (low-bit weight GEMVs)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tilecc
import tilecc.language as tl

try:
    from conftest_compilers import assert_compiles_together
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import assert_compiles_together

BF16 = np.dtype(ml_dtypes.bfloat16)


@tilecc.jit
def split_k_gemv_kernel(A, B, C, N: tl.constexpr, K: tl.constexpr, BLOCK_N: tl.constexpr,
                        BLOCK_K: tl.constexpr, MASKED: tl.constexpr):
    """C[n] += sum over this program's K block of A[k] * B[k, n] (C zeroed before)."""
    pid_n, pid_k = tl.program_id(0), tl.program_id(1)
    offs_k = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    a = tl.load(A + offs_k)
    b = tl.load(B + offs_k[:, None] * N + offs_n[None, :])
    acc = tl.sum(a.reshape((BLOCK_K, 1)).to(tl.float32) * b.to(tl.float32), axis=0,
                 keep_dims=True)
    c_ptrs = C + offs_n[None, :]
    if MASKED:  # a bound on pairs: one value over each aligned pair
        tl.atomic_add(c_ptrs, acc.to(C.dtype.element_ty), mask=(offs_n[None, :] // 2) < N // 2)
    else:
        tl.atomic_add(c_ptrs, acc.to(C.dtype.element_ty))


@tilecc.jit
def pair_add_kernel(P, X, OLD, n, BLOCK: tl.constexpr, MASK: tl.constexpr,
                    SCOPE: tl.constexpr):
    """OLD = atomic_add(P, X), its old values used; MASK 0: none, 1: offs // 2 < n (one
    value per pair), 2: offs < n (varies within a pair)."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    if MASK == 0:
        old = tl.atomic_add(P + offs, x, scope=SCOPE)
    elif MASK == 1:
        old = tl.atomic_add(P + offs, x, mask=offs // 2 < n, scope=SCOPE)
    else:
        old = tl.atomic_add(P + offs, x, mask=offs < n, scope=SCOPE)
    tl.store(OLD + offs, old)


def _gemv_signature(dt: str, masked: bool = False, block_n: int = 256) -> str:
    return f"*fp16:16,*fp16:16,*{dt}:16,512,512,{block_n},32,{masked}"


@pytest.mark.parametrize("dt", ["fp16", "bf16"])
def test_split_k_gemv_adds_pairs_with_red(dt) -> None:
    src = split_k_gemv_kernel.source(_gemv_signature(dt), num_warps=4)
    assert "tc::reduce_add_pair(C + " in src, src
    assert "tc::atomic_add(" not in src


def test_mask_uniform_over_pairs_is_checked_once_per_pair() -> None:
    src = split_k_gemv_kernel.source(_gemv_signature("fp16", masked=True), num_warps=4)
    body = src[src.index("tl.atomic_add"):]
    assert "v += 2" in body and "tc::reduce_add_pair(C + " in body, body


@pytest.mark.parametrize("mask,paired", [(0, True), (1, True), (2, False)])
def test_used_results_take_the_pair_old_values(mask, paired) -> None:
    src = pair_add_kernel.source(f"*fp16:16,*fp16:16,*fp16:16,i32,64,{mask},'gpu'",
                                 num_warps=1)
    assert ("tc::atomic_add_pair(old[v], old[v + 1], P + " in src) == paired, src
    assert ("tc::atomic_add(P + " in src) == (not paired), src


def test_unaligned_or_32_bit_adds_stay_per_element() -> None:
    # no divisibility: the pair's first element may sit in the middle of a word
    src = pair_add_kernel.source("*fp16,*fp16:16,*fp16:16,i32,64,0,'gpu'", num_warps=1)
    assert "tc::atomic_add(P + " in src and "_pair" not in src
    # fp32 before sm_90, which has no vector reduction
    src = split_k_gemv_kernel.source(_gemv_signature("fp32"), arch="sm_80", num_warps=4)
    assert "tc::atomic_add(C + " in src and "_pair" not in src and "_vec" not in src


def test_fp32_adds_of_unused_results_go_16_bytes_at_a_time_on_sm_90() -> None:
    """fp32 adds whose old values go unused: one vector reduction (red .v2 / .v4 .f32) for
    each run of consecutive, aligned elements a thread holds (here 2), on sm_90 (an
    embedding's backward ran at 0.26x Triton's speed an element at a time); still one by
    one for unaligned pointers."""
    src = split_k_gemv_kernel.source(_gemv_signature("fp32"), arch="sm_90", num_warps=4)
    assert "tc::reduce_add_vec(C + " in src and "tc::Vec<float, 2>" in src
    assert "tc::atomic_add(C + " not in src
    unaligned = split_k_gemv_kernel.source("*fp16:16,*fp16:16,*fp32,512,512,256,32,False",
                                           arch="sm_90", num_warps=4)
    assert "tc::atomic_add(C + " in unaligned and "_vec" not in unaligned


@tilecc.jit
def rows_added_kernel(IDS, DY, DW, n, D, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # an embedding's backward: bf16 gradient rows added into fp32 rows picked by id
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    ok = offs_m[:, None] < n
    ids = tl.load(IDS + offs_m, mask=offs_m < n, other=0)
    dy = tl.load(DY + offs_m[:, None] * D + offs_n[None, :], mask=ok, other=0.0)
    tl.atomic_add(DW + ids[:, None] * D + offs_n[None, :], dy.to(tl.float32), mask=ok)


def test_vector_atomics_set_the_width_of_their_block() -> None:
    """A block loaded 16 bytes a thread (8 bf16) and added as fp32 takes the vector
    reduction's width (4 fp32, 16 bytes): a warp's reductions then cover whole sectors,
    where 8 elements a thread split each sector between two instructions (0.94x Triton's
    speed; 1.28x at 4).  Where adds go one at a time (sm_80), the loads keep 16 bytes."""
    sig = "*i64:16,*bf16:16,*fp32:16,i32:16,i32:16,64,128"
    src = rows_added_kernel.source(sig, arch="sm_90", num_warps=4)
    assert "load dy: 4 x bf16 (8 B)" in src and "tc::Vec<float, 4>" in src
    src = rows_added_kernel.source(sig, arch="sm_80", num_warps=4)
    assert "load dy: 8 x bf16 (16 B)" in src and "tc::atomic_add(DW + " in src


@pytest.mark.gpu
def test_rows_added_on_gpu() -> None:
    torch = pytest.importorskip("torch")
    g = torch.Generator(device="cuda").manual_seed(5)
    n, d, vocab = 45, 128, 7
    ids = torch.randint(0, vocab, (n,), device="cuda", generator=g)
    dy = torch.randint(-4, 5, (n, d), device="cuda", generator=g).to(torch.bfloat16)
    dw = torch.zeros((vocab, d), device="cuda")
    rows_added_kernel[(tilecc.cdiv(n, 16),)](ids, dy, dw, n, d, BLOCK_M=16, BLOCK_N=128)
    want = torch.zeros((vocab, d), device="cuda", dtype=torch.float64)
    want.index_add_(0, ids, dy.double())
    assert torch.equal(dw, want.float())  # small integers: exact


def test_reduction_result_is_not_converted_to_its_own_layout() -> None:
    """A reduction's result also expanded (keep_dims) into the atomic's layout was converted
    twice through shared memory, the first time to the placement it already had."""
    src = split_k_gemv_kernel.source(_gemv_signature("fp16"), num_warps=4)
    header = src[:src.index("#include")]
    assert "result of the reduction" not in header, header
    assert src.count("__syncthreads()") <= 3, src


@pytest.mark.parametrize("target,arch", [("cuda", "sm_80"), ("cuda", "sm_90"), ("hip", "gfx90a")])
def test_pairs_compile(target, arch) -> None:
    assert_compiles_together(target, arch, [
        *[(pair_add_kernel, f"*{dt}:16,*{dt}:16,*{dt}:16,i32,64,1,'{scope}'", dict(num_warps=1))
          for dt in ("fp16", "bf16") for scope in ("gpu", "sys", "cta")],
        *[(split_k_gemv_kernel, _gemv_signature(dt), dict(num_warps=4))
          for dt in ("fp16", "bf16")]])


def _gemv_inputs(dtype, N=512, K=512):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(K) * 0.5).astype(np.float16)
    b = (rng.standard_normal((K, N)) * 0.05).astype(np.float16)
    want = a.astype(np.float64) @ b.astype(np.float64)
    return a, b, np.zeros(N, dtype), want


@pytest.mark.parametrize("dtype", [np.float16, BF16])
def test_split_k_gemv_on_the_interpreter(dtype) -> None:
    a, b, c, want = _gemv_inputs(dtype, N=64, K=64)
    split_k_gemv_kernel.interpret[(2, 4)](a, b, c, N=64, K=64, BLOCK_N=32, BLOCK_K=16,
                                          MASKED=True)
    np.testing.assert_allclose(c.astype(np.float64), want, rtol=2e-2, atol=2e-2)


def test_pair_add_old_values_on_the_interpreter() -> None:
    p = np.arange(64, dtype=np.float16)
    x = np.full(64, 0.5, np.float16)
    old = np.zeros(64, np.float16)
    pair_add_kernel.interpret[(1,)](p, x, old, 20, BLOCK=64, MASK=1, SCOPE="gpu")
    np.testing.assert_array_equal(p[:40], np.arange(40, dtype=np.float16) + 0.5)
    np.testing.assert_array_equal(p[40:], np.arange(40, 64, dtype=np.float16))
    np.testing.assert_array_equal(old[:40], np.arange(40, dtype=np.float16))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("masked", [False, True])
def test_split_k_gemv_on_gpu(dtype, masked) -> None:
    torch = pytest.importorskip("torch")
    a, b, _, want = _gemv_inputs(np.float16)
    c = torch.zeros(512, device="cuda", dtype=getattr(torch, dtype))
    split_k_gemv_kernel[(2, 16)](torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), c,
                                 N=512, K=512, BLOCK_N=256, BLOCK_K=32, MASKED=masked,
                                 num_warps=4)
    # 16 partial sums rounded to the output type
    tol = {"float16": 2e-2, "bfloat16": 1e-1, "float32": 1e-3}[dtype]
    np.testing.assert_allclose(c.float().cpu().numpy(), want, rtol=tol, atol=tol)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("scope", ["gpu", "sys"])
def test_pair_add_old_values_on_gpu(dtype, scope) -> None:
    torch = pytest.importorskip("torch")
    t = getattr(torch, dtype)
    p = torch.arange(64, device="cuda", dtype=t)
    x = torch.full((64,), 0.5, device="cuda", dtype=t)
    old = torch.zeros(64, device="cuda", dtype=t)
    pair_add_kernel[(1,)](p, x, old, 20, BLOCK=64, MASK=1, SCOPE=scope, num_warps=1)
    ref = torch.arange(64, dtype=torch.float32)
    assert torch.equal(p.float().cpu()[:40], ref[:40] + 0.5)
    assert torch.equal(p.float().cpu()[40:], ref[40:])
    assert torch.equal(old.float().cpu()[:40], ref[:40])


@pytest.mark.gpu
def test_contended_pairs_on_gpu() -> None:
    """16 programs along K adding into each of 512 fp16 outputs: every add lands."""
    torch = pytest.importorskip("torch")
    a = torch.ones(512, device="cuda", dtype=torch.float16)
    b = torch.ones(512, 512, device="cuda", dtype=torch.float16)
    c = torch.zeros(512, device="cuda", dtype=torch.float16)
    split_k_gemv_kernel[(2, 16)](a, b, c, N=512, K=512, BLOCK_N=256, BLOCK_K=32,
                                 MASKED=False, num_warps=4)
    assert torch.equal(c.float().cpu(), torch.full((512,), 512.0))


@pytest.mark.parametrize("dt,ctype", [("fp16", "tc::half"), ("bf16", "tc::bfloat16")])
def test_sm90_adds_16_bytes_when_old_values_are_unused(dt, ctype) -> None:
    """2 warps over 256 columns: 4 consecutive outputs a thread, one vector red on sm_90
    (.v2.f16x2), pairs before it; old values used stay pairs."""
    src = split_k_gemv_kernel.source(_gemv_signature(dt), num_warps=2, arch="sm_90")
    assert f"tc::reduce_add_vec(C + " in src and f"tc::Vec<{ctype}, 4>{{{{" in src, src
    src = split_k_gemv_kernel.source(_gemv_signature(dt), num_warps=2, arch="sm_80")
    assert "tc::reduce_add_pair(C + " in src and "reduce_add_vec" not in src, src
    src = pair_add_kernel.source(f"*{dt}:16,*{dt}:16,*{dt}:16,i32,64,0,'gpu'", num_warps=1,
                                 arch="sm_90")
    assert "tc::atomic_add_pair(old[v], old[v + 1], P + " in src, src


@pytest.mark.parametrize("target,arch", [("cuda", "sm_80"), ("cuda", "sm_90"), ("hip", "gfx90a")])
def test_vector_reds_compile(target, arch) -> None:
    assert_compiles_together(target, arch, [  # 8 and 4 outputs a thread
        (split_k_gemv_kernel, _gemv_signature(dt, block_n=256), dict(num_warps=warps))
        for dt in ("fp16", "bf16") for warps in (1, 2)])


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("warps", [1, 2])
def test_vector_reds_on_gpu(dtype, warps) -> None:
    torch = pytest.importorskip("torch")
    a, b, _, want = _gemv_inputs(np.float16)
    c = torch.zeros(512, device="cuda", dtype=getattr(torch, dtype))
    split_k_gemv_kernel[(2, 16)](torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), c,
                                 N=512, K=512, BLOCK_N=256, BLOCK_K=32, MASKED=False,
                                 num_warps=warps)
    tol = 2e-2 if dtype == "float16" else 1e-1
    np.testing.assert_allclose(c.float().cpu().numpy(), want, rtol=tol, atol=tol)
