"""Loads a product's operands are computed from (weights cast or scaled before `tl.dot`,
`b.T` of a block), read ahead by the loop's pipeline (passes.pipeline.prologue_loads):
each thread's vectors copied by cp.async into stages of their own, read back where the
load was.  Checked in the source, on the interpreter against NumPy (ragged K: masked
vectors), compiled by NVRTC, and on the GPU."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tilecc
import tilecc.language as tl

try:
    from conftest_compilers import require_cuda_compiler
    from kernels_dot import int8_weights_kernel, upcast_bt_kernel
    from test_compile_kernels import assert_clean_compile
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import require_cuda_compiler
    from tests.kernels_dot import int8_weights_kernel, upcast_bt_kernel
    from tests.test_compile_kernels import assert_clean_compile


@tilecc.jit
def stores_in_loop_kernel(a_ptr, b_ptr, c_ptr, log_ptr, K, BM: tl.constexpr,
                          BN: tl.constexpr, BK: tl.constexpr):
    """A loop that stores through another argument than it loads (as Triton's pipeliner,
    arguments are taken not to overlap): the prologue is read ahead."""
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K // BK):
        a = tl.load(a_ptr + rm[:, None] * K + k * BK + rk[None, :])
        b = tl.load(b_ptr + (k * BK + rk[:, None]) * BN + rn[None, :])
        acc = tl.dot(a, b.to(tl.float16), acc)
        tl.store(log_ptr + k, tl.sum(tl.sum(acc, 1), 0))
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


@tilecc.jit
def stores_over_its_loads_kernel(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr,
                                 BK: tl.constexpr):
    """A loop that stores through the argument it loads from (the next iteration's rows of
    b): what it loads later may be what it wrote, so nothing of the prologue is read
    ahead; nor where a store's pointers are loaded from memory (`where_ptr`)."""
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K // BK):
        a = tl.load(a_ptr + rm[:, None] * K + k * BK + rk[None, :])
        b = tl.load(b_ptr + (k * BK + rk[:, None]) * BN + rn[None, :])
        acc = tl.dot(a, b.to(tl.float16), acc)
        tl.store(b_ptr + (k * BK + BK + rk[:, None]) * BN + rn[None, :], b + 1)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


@tilecc.jit
def stores_through_loaded_pointers_kernel(a_ptr, b_ptr, c_ptr, where_ptr, K,
                                          BM: tl.constexpr, BN: tl.constexpr,
                                          BK: tl.constexpr):
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    out = tl.load(where_ptr).to(tl.pointer_type(tl.float32))
    for k in range(0, K // BK):
        a = tl.load(a_ptr + rm[:, None] * K + k * BK + rk[None, :])
        b = tl.load(b_ptr + (k * BK + rk[:, None]) * BN + rn[None, :])
        acc = tl.dot(a, b.to(tl.float16), acc)
        tl.store(out + k, tl.sum(tl.sum(acc, 1), 0))
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


INT8_SIG = "*fp16:16,*i8:16,*fp16:16,*fp32:16,i32,i32:16,i32:16,{bm},{bn},{bk}"
UPCAST_SIG = "*fp8e4nv:16,*fp8e4nv:16,*fp32:16,i32,i32,i32:16,{bm},{bn},{bk}"


def _notes(src: str) -> str:
    return " ".join(src.split("#include")[0].replace("//", " ").split())


def _loop(src: str) -> str:
    start = src.index("for (int k_ = ")
    return src[start:src.index("tc::cp_async_wait<0>();", start)]


def test_cast_weights_are_read_ahead_beside_the_streamed_operand() -> None:
    src = int8_weights_kernel.source(INT8_SIG.format(bm=128, bn=128, bk=64), num_warps=4,
                                     num_stages=4, arch="sm_90a")
    assert "a of tl.dot and b (read back for the product's operands) copied into shared " \
        "memory with cp.async, 3 iterations ahead (4 stages)" in _notes(src)
    loop = _loop(src)
    read = loop.index("// read ahead: this thread's own copies")
    assert read < loop.index("tc::cast<tc::half>(b[")  # read back, then cast
    # its copies: cp.async of 16-byte vectors, placed by thread, zero-filled where masked
    assert "(v / 16 * 128 + threadIdx.x) * 16" in loop
    # the product's operand is made in the loop: it is waited for (not left in flight)
    assert "tc::wgmma_wait<0>();" in loop and "kept in flight" not in _notes(src)
    # the streamed operand's tiles are read by every warp: the iteration's barrier stays
    assert "__syncthreads();  // the next stage is everyone's" in loop or \
        "the next stage landed" in loop


def test_a_loop_reading_ahead_only_its_own_copies_has_no_barrier_for_them() -> None:
    """Every stage is read by the thread that copied it: the loop waits for its copies
    (cp.async.wait_group), with no barrier of the pipeline's own."""
    src = upcast_bt_kernel.source(UPCAST_SIG.format(bm=128, bn=128, bk=64), num_warps=8,
                                  num_stages=3, arch="sm_90a")
    assert "a, b (read back for the product's operands) copied into shared memory with " \
        "cp.async, 2 iterations ahead (3 stages)" in _notes(src)
    body = src.split("#include")[1]
    prologue = body[body.index("// prologue:"):body.index("for (int k_ = ")]
    assert "tc::cp_async_wait<1>();" in prologue and "__syncthreads" not in prologue
    loop = _loop(src)
    assert "tc::cp_async_wait<1>();  // this thread's copies for the next stage" in loop
    assert "the next stage is everyone's" not in loop
    # the product's own tiles: two barriers around the threads' stores, as before
    assert loop.count("__syncthreads()") == 2
    # descriptor bounds: a vector outside the tensor is zero-filled (source size 0)
    assert "? 16 : 0);" in loop


def _dynamic_bytes(src: str) -> int:
    return int(re.search(r"dynamic shared memory: .*?\((\d+) bytes", src).group(1))


def test_blocks_read_ahead_take_as_many_stages_as_the_copies_run_ahead() -> None:
    """A block read back into registers frees its stage before the iteration's refill,
    which writes that stage: 3 stages of int8 B for copies 3 ahead, beside 4 of A, whose
    stages the product reads (Triton's sizes: 72 KiB in all at 64 x 128 x 64, three
    programs an SM where 80 KiB allowed two)."""
    sig = INT8_SIG.format(bm=64, bn=128, bk=64)
    src = int8_weights_kernel.source(sig, num_warps=4, num_stages=4, arch="sm_90a")
    assert _dynamic_bytes(src) == 4 * 64 * 64 * 2 + 3 * 64 * 128
    loop = _loop(src)
    # B read back from, and refilled into, the stage of its own counter; A four ahead
    assert "b_stages + k_own_stage * 8192;" in loop
    assert "tc::smem_address(b_stages + (k_own_stage) * 8192)" in loop
    assert "tc::smem_address(a_stages + ((k_stage + 3) % 4) * 4096)" in loop
    assert "k_own_stage = k_own_stage + 1 == 3 ? 0 : k_own_stage + 1;" in loop
    # mma.sync (sm_80) keeps one stage per iteration in flight for both
    old = int8_weights_kernel.source(sig, num_warps=4, num_stages=4, arch="sm_80")
    assert _dynamic_bytes(old) == 4 * (64 * 64 * 2 + 64 * 128) and "own_stage" not in old


def test_a_loop_of_blocks_read_ahead_only_counts_their_stages() -> None:
    src = upcast_bt_kernel.source(UPCAST_SIG.format(bm=128, bn=128, bk=64), num_warps=8,
                                  num_stages=3, arch="sm_90a")
    assert _dynamic_bytes(src) == 2 * (128 * 64 + 128 * 64)  # fp8: a byte an element
    loop = src[src.index("for (int k_ = "):]
    assert "k_stage = k_stage + 1 == 2 ? 0 : k_stage + 1;" in loop
    assert "own_stage" not in src


def test_read_ahead_in_a_loop_that_stores_through_another_argument() -> None:
    """Before, any store in the loop kept the prologue from being read ahead."""
    src = stores_in_loop_kernel.source("*fp16:16,*i8:16,*fp32:16,*fp32:16,i32:16,64,64,64",
                                       num_warps=4, num_stages=3, arch="sm_90a")
    assert "b (read back for the product's operands) copied into shared memory" in src


def test_no_read_ahead_in_a_loop_that_may_store_over_its_loads() -> None:
    src = stores_over_its_loads_kernel.source("*fp16:16,*i8:16,*fp32:16,i32:16,64,64,64",
                                              num_warps=4, num_stages=3, arch="sm_90a")
    assert "read back" not in src
    src = stores_through_loaded_pointers_kernel.source(
        "*fp16:16,*i8:16,*fp32:16,*i64:16,i32:16,64,64,64", num_warps=4, num_stages=3,
        arch="sm_90a")
    assert "read back" not in src


def test_stores_over_its_loads_on_the_interpreter() -> None:
    """(What reading ahead would break: each iteration loads the rows the one before
    stored.)"""
    rng = np.random.default_rng(3)
    a = rng.integers(-3, 4, (64, 192)).astype(np.float16)
    b = rng.integers(-3, 4, (256, 64)).astype(np.int8)
    c = np.zeros((64, 64), np.float32)
    stores_over_its_loads_kernel.interpret[(1,)](a, b, c, 192, BM=64, BN=64, BK=64)
    want = np.zeros((64, 64), np.float64)
    rows = b.astype(np.float64)
    for k in range(3):
        blk = rows[k * 64:(k + 1) * 64].copy()
        want += a[:, k * 64:(k + 1) * 64].astype(np.float64) @ blk
        rows[(k + 1) * 64:(k + 2) * 64] = blk + 1
    np.testing.assert_allclose(c, want)


def test_stages_that_do_not_fit_are_left_out() -> None:
    """Read-ahead stages past the architecture's shared memory: built without them (the
    products' own pipeline stays), not refused."""
    sig = INT8_SIG.format(bm=128, bn=128, bk=64)  # stages: A 64 KiB, B 32 KiB (4 of each)
    src = int8_weights_kernel.source(sig, num_warps=4, num_stages=4, arch="sm_86")  # 99 KiB
    notes = _notes(src)
    assert "a of tl.dot copied into shared memory with cp.async" in notes
    assert "read back" not in notes
    fits = int8_weights_kernel.source(sig, num_warps=4, num_stages=4, arch="sm_80")
    assert "read back" in _notes(fits)


def _int8_case(m: int, n: int, k: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)
    b = rng.integers(-8, 8, (k, n)).astype(np.int8)
    s = rng.integers(1, 4, n).astype(np.float16)
    return a, b, s, (a.astype(np.float32) @ b.astype(np.float32)) * s.astype(np.float32)


@pytest.mark.parametrize("m,n,k", [(64, 64, 96), (37, 50, 40)])
def test_int8_weights_on_the_interpreter(m, n, k) -> None:
    a, b, s, ref = _int8_case(m, n, k)
    c = np.zeros((m, n), np.float32)
    int8_weights_kernel.interpret[(tilecc.cdiv(m, 32), tilecc.cdiv(n, 32))](
        a, b, s, c, m, n, k, BM=32, BN=32, BK=32)
    np.testing.assert_array_equal(c, ref)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_read_ahead_kernels_compile_cleanly(arch) -> None:
    require_cuda_compiler()
    for bm, bn, bk, warps, stages in ((128, 128, 64, 4, 4), (128, 256, 64, 8, 3),
                                      (64, 64, 32, 4, 3)):
        assert_clean_compile(int8_weights_kernel, INT8_SIG.format(bm=bm, bn=bn, bk=bk),
                             "cuda", arch, num_warps=warps, num_stages=stages)
    if arch != "sm_80":  # (fp8e4nv from sm_89 on)
        for bm, bn, bk, warps in ((128, 128, 64, 8), (128, 256, 64, 8), (64, 64, 64, 4)):
            assert_clean_compile(upcast_bt_kernel, UPCAST_SIG.format(bm=bm, bn=bn, bk=bk),
                                 "cuda", arch, num_warps=warps, num_stages=3)


def _cuda_torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    return torch


CONFIGS = [(128, 128, 64, 4, 4), (128, 256, 64, 8, 3), (64, 64, 32, 4, 3), (64, 128, 64, 4, 4)]
# (K 1040: 17 iterations, the stage counters wrap several times)
SHAPES = [(256, 256, 256), (300, 264, 200), (129, 80, 48), (96, 136, 1040)]


@pytest.mark.gpu
@pytest.mark.parametrize("bm,bn,bk,warps,stages", CONFIGS)
@pytest.mark.parametrize("m,n,k", SHAPES)
def test_gpu_int8_weights(bm, bn, bk, warps, stages, m, n, k) -> None:
    torch = _cuda_torch()
    a, b, s, ref = _int8_case(m, n, k, seed=m + k)
    c = torch.full((m, n), 7.0, device="cuda")
    int8_weights_kernel[(tilecc.cdiv(m, bm), tilecc.cdiv(n, bn))](
        torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), torch.from_numpy(s).cuda(), c,
        m, n, k, BM=bm, BN=bn, BK=bk, num_warps=warps, num_stages=stages)
    np.testing.assert_array_equal(c.cpu().numpy(), ref)


@pytest.mark.gpu
@pytest.mark.parametrize("bm,bn,bk,warps,stages", [(128, 128, 64, 8, 3), (64, 64, 64, 4, 4),
                                                   (128, 256, 64, 8, 3)])
@pytest.mark.parametrize("m,n,k", SHAPES)
def test_gpu_upcast_bt(bm, bn, bk, warps, stages, m, n, k) -> None:
    torch = _cuda_torch()
    if torch.cuda.get_device_capability() < (8, 9):
        pytest.skip("fp8e4nv needs sm_89")
    torch.manual_seed(m + n)
    a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)
    c = torch.full((m, n), 7.0, device="cuda")
    upcast_bt_kernel[(tilecc.cdiv(m, bm), tilecc.cdiv(n, bn))](
        a, b, c, m, n, k, BM=bm, BN=bn, BK=bk, num_warps=warps, num_stages=stages)
    torch.testing.assert_close(c, a.float() @ b.float().T, rtol=1e-4, atol=1e-3)


# --- every load of a loop whose copies go out at the top of the iteration ---------------------

@tilecc.jit
def decayed_products(x_ptr, w_ptr, g_ptr, b_ptr, o_ptr, log_ptr, K, KV, BM: tl.constexpr,
                     BK: tl.constexpr):
    """Each iteration logs its running sum (through another argument), then decays it by a
    masked scalar, adds a product scaled by a masked block of rows (held in copies by the
    lanes of each row, a block slice of the product's layout) and a whole block."""
    rm, rk = tl.arange(0, BM), tl.arange(0, BK)
    acc = tl.zeros((BM, BM), dtype=tl.float32)
    decays = g_ptr  # (advanced by the loop: read ahead from the pointer of the next step)
    for k in range(0, K, BK):
        tl.store(log_ptr + k // BK * BM + rm, tl.sum(acc, 1))
        x = tl.load(x_ptr + rm[:, None] * K + (k + rk)[None, :])
        w = tl.load(w_ptr + (k + rk)[:, None] * BM + rm[None, :])
        decay = tl.load(decays, mask=k < KV, other=0.0)
        rows = tl.load(g_ptr + k // BK + 1 + rm, mask=k + rm < KV, other=0.0)
        bias = tl.load(b_ptr + k // BK * BM * BM + rm[:, None] * BM + rm[None, :])
        acc = acc * decay + tl.dot(x, w) * rows[:, None] + bias
        decays += 1
    tl.store(o_ptr + rm[:, None] * BM + rm[None, :], acc)


DECAYED_SIG = "*fp16:16,*fp16:16,*fp32:16,*fp32:16,*fp32:16,*fp32:16,i32:16,i32,64,32"


def _decayed_case(K: int, KV: int, seed: int):
    rng = np.random.default_rng(seed)
    BM, BK = 64, 32
    x = (rng.integers(-2, 3, (BM, K)) * 0.5).astype(np.float16)
    w = (rng.integers(-2, 3, (K, BM)) * 0.5).astype(np.float16)
    g = rng.integers(1, 4, K // BK + BM + 1).astype(np.float32) * 0.5
    b = rng.integers(-2, 3, (K // BK, BM, BM)).astype(np.float32)
    want, logs = np.zeros((BM, BM)), []
    for k in range(0, K, BK):
        logs.append(want.sum(1))
        decay = g[k // BK] if k < KV else 0.0
        rows = np.where(k + np.arange(BM) < KV, g[k // BK + 1 + np.arange(BM)], 0.0)
        part = x[:, k:k + BK].astype(np.float64) @ w[k:k + BK].astype(np.float64)
        want = want * decay + part * rows[:, None] + b[k // BK]
    return (x, w, g, b), want, np.concatenate(logs)


@pytest.mark.parametrize("stages", [2, 3])
def test_every_load_is_read_ahead_where_the_copies_go_out_at_the_top(stages) -> None:
    """One warpgroup product, nothing kept in flight, one iteration ahead: the copies of
    the next stage go out at the top of the iteration, ahead of the store and the decay,
    and every other load is read ahead too: the masked scalar and the block of rows (a
    few registers) loaded one iteration ahead into registers, the whole block copied by
    cp.async into stages of its own and read back where it was loaded.  Before, the
    copies went out under the product, and the rest was loaded in the iteration that
    used it, as it still is two iterations ahead (3 stages)."""
    src = decayed_products.source(DECAYED_SIG, arch="sm_90a", num_warps=4, num_stages=stages)
    notes = _notes(src)
    loop = src[src.index("for (int k_ = 0;"):]
    store = loop.index("tl.store(log_ptr")
    if stages == 3:
        assert "x, w of tl.dot copied into shared memory with TMA, 2 iterations ahead " \
            "(3 stages)" in notes
        assert "decay_next" not in src and "bias_stages" not in src
        assert loop.index("tc::tma_load_2d(") > store
        return
    assert "x, w of tl.dot and bias (read back where loaded) copied into shared memory " \
        "with TMA and cp.async, 1 iteration ahead (2 stages; decay, rows loaded one " \
        "iteration ahead into registers; issued at the top of each iteration)" in notes
    assert loop.index("tc::tma_load_2d(") < store  # the product's operands, at the top
    assert loop.index("tc::smem_address(bias_stages") < store
    # this iteration's values taken from the registers, then the next iteration's loaded
    # (the scalar masked: zero past KV, as `other` says)
    assert loop.index("const float decay = decay_next;") < \
        loop.index("decay_next = decay_ahead") < store
    assert "k_ahead < KV ? *(decays) : 0.0f;" in loop  # (the pointer, not yet advanced)
    assert loop.index("rows[r] = rows_next[r];") < loop.index("rows_next[r] = rows_ahead")
    assert loop.index("// read ahead: this thread's own copies") > store
    # the next decay read through the carried pointer before the copies advance it
    assert loop.index("*(decays)") < loop.index("decays = decays + 1;")


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_every_load_read_ahead_compiles_cleanly(arch) -> None:
    require_cuda_compiler()
    for stages in (2, 3, 4):
        assert_clean_compile(decayed_products, DECAYED_SIG, "cuda", arch, num_warps=4,
                             num_stages=stages)


@pytest.mark.parametrize("K,KV", [(96, 96), (128, 70), (256, 33), (1024, 1000)])
def test_interpreter_decayed_products(K, KV) -> None:
    (x, w, g, b), want, logs = _decayed_case(K, KV, seed=K + KV)
    out = np.zeros((64, 64), np.float32)
    log = np.zeros(K // 32 * 64, np.float32)
    decayed_products.interpret[(1,)](x, w, g, b, out, log, K, KV, BM=64, BK=32, num_stages=2)
    # (fp32 sums beside float64 ones: an element that cancels is close in absolute terms)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6 * np.abs(want).max())
    np.testing.assert_allclose(log, logs, rtol=1e-5, atol=1e-6 * np.abs(logs).max())


@pytest.mark.gpu
@pytest.mark.parametrize("stages", [2, 3, 4])
@pytest.mark.parametrize("K,KV", [(96, 96), (128, 70), (256, 33), (1024, 1000)])
def test_gpu_decayed_products(stages, K, KV) -> None:
    torch = _cuda_torch()
    inputs, want, logs = _decayed_case(K, KV, seed=K + KV)
    out = torch.full((64, 64), 7.0, device="cuda")
    log = torch.full((K // 32 * 64,), 7.0, device="cuda")
    decayed_products[(1,)](*(torch.from_numpy(a).cuda() for a in inputs), out, log, K, KV,
                           BM=64, BK=32, num_warps=4, num_stages=stages)
    np.testing.assert_allclose(out.cpu().numpy(), want, rtol=1e-5,
                               atol=1e-6 * np.abs(want).max())
    np.testing.assert_allclose(log.cpu().numpy(), logs, rtol=1e-5,
                               atol=1e-6 * np.abs(logs).max())
