"""The fused-attention example (examples/attention.py): the interpreter against a float64
NumPy reference (Hypothesis over sequence lengths, head dimensions, blocks and both masks),
NVRTC and hiprtc compiles of the benchmark's configurations, and the GPU against torch's
scaled_dot_product_attention in fp32."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

try:
    from conftest_compilers import require_cuda_compiler, require_hip_compiler
    from test_blocks import load_example
    from test_compile_kernels import assert_clean_compile
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import require_cuda_compiler, require_hip_compiler
    from tests.test_blocks import load_example
    from tests.test_compile_kernels import assert_clean_compile


A = load_example("attention")


def _inputs(rng, shape, dtype):
    return tuple(rng.standard_normal(shape).astype(dtype) for _ in range(3))


def _check(out, lse, q, k, v, causal, scale=None, atol=2e-2):
    want, want_lse = A.reference(q, k, v, causal, scale)
    np.testing.assert_allclose(np.asarray(out, np.float64), want, atol=atol, rtol=atol)
    np.testing.assert_allclose(np.asarray(lse), want_lse, atol=1e-2, rtol=1e-3)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(1, 150), d=st.sampled_from([16, 32, 64]), causal=st.booleans(),
       blocks=st.sampled_from([(16, 16), (32, 16), (16, 32)]), heads=st.integers(1, 2),
       seed=st.integers(0, 2**16))
def test_interpreter_matches_numpy(n, d, causal, blocks, heads, seed) -> None:
    """Sequence lengths that are and are not multiples of either block, both masks."""
    rng = np.random.default_rng(seed)
    q, k, v = _inputs(rng, (1, heads, n, d), np.float16)
    bm, bn = blocks
    out, lse = A.attention(q, k, v, causal, BLOCK_M=bm, BLOCK_N=bn, num_warps=4)
    _check(out, lse, q, k, v, causal)


def test_interpreter_batches_fp32_and_scale() -> None:
    """Two batches (the batch stride reaches the kernel), fp32 inputs, a custom scale.  The
    products take tf32's 10 mantissa bits of each operand, the rest truncated (as the
    tensor cores read fp32): up to 2^-10 of each, biased toward zero."""
    rng = np.random.default_rng(1)
    q, k, v = _inputs(rng, (2, 2, 40, 32), np.float32)
    out, lse = A.attention(q, k, v, False, sm_scale=0.3, BLOCK_M=16, BLOCK_N=16,
                           num_warps=4)
    _check(out, lse, q, k, v, False, 0.3, atol=4e-3)


@pytest.mark.parametrize("target,arch", [("cuda", "sm_80"), ("cuda", "sm_90"),
                                         ("hip", "gfx90a")])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_benchmark_configurations_compile(d: int, causal: bool, target: str, arch: str):
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    cfg = A.config(d, causal, arch)
    sig = ("*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp32:16,fp32,i32:16,i32:16,i32:16,i32,i32,"
           f"{d},{cfg['BLOCK_M']},{cfg['BLOCK_N']},{causal}")
    assert_clean_compile(A.attention_fwd, sig, target, arch, num_warps=cfg["num_warps"],
                         num_stages=cfg["num_stages"])


@pytest.mark.parametrize("d,blocks", [(d, c) for d in A.CONFIGS for c in A.CONFIGS[d]])
def test_benchmark_configurations_compile_for_hopper(d: int, blocks) -> None:
    """Every configuration the benchmark tries: no spills, no ptxas serialization."""
    require_cuda_compiler()
    bm, bn, warps, stages = blocks
    for causal in (False, True):
        sig = ("*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp32:16,fp32,i32:16,i32:16,i32:16,i32,"
               f"i32,{d},{bm},{bn},{causal}")
        assert_clean_compile(A.attention_fwd, sig, "cuda", "sm_90", num_warps=warps,
                             num_stages=stages)


def test_hopper_source_keeps_operands_where_they_are() -> None:
    """On sm_90: Q is staged in shared memory once, before the loop; K^T is loaded along
    its contiguous axis and copied K-major by TMA (wgmma reads B untransposed); the
    probabilities reach the second product from registers; no layout conversion but the
    output's, after the loop, in the tiles' shared memory, for 16-byte stores."""
    sig = ("*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp32:16,fp32,i32:16,i32:16,i32:16,i32,i32,"
           "64,128,64,True")
    src = A.attention_fwd.source(sig, arch="sm_90", num_warps=8, num_stages=3)
    header, body = src.split("#include")
    loop = body.index("for (int start_n = 0;")
    assert "q of tl.dot does not change in the loop" in body[:loop]
    assert "q_tile" in body[loop:] and "q[" not in body[loop:]
    notes = " ".join(line.lstrip("/ ") for line in header.splitlines())  # wrapped lines joined
    assert "load kt: 8 x fp16 (16 B) along axis 0" in notes
    assert "kt, v of tl.dot copied into shared memory with TMA" in notes
    assert "A from registers (held in the accumulator layout)" in notes
    assert "B from shared memory (K-major)" in notes
    conversions = header.split("Layout conversions (through shared memory):")[1]
    conversions = conversions.split("Matrix products")[0]
    assert conversions.count("//   L") == 1 and "for 16-byte stores" in conversions
    assert "__shared__ unsigned char smem" not in body  # no staging through the pool
    assert body.count("_ss<0>(") == 1  # Q K^T: B K-major, not transposed
    assert body.count("_rs<1>(") == 1  # P V: A from registers, B transposed
    assert "tc::pack2(" in body


def _hopper_loop(sig: str, warps: int, stages: int = 3, kernel=None,
                 cp_async: bool = False) -> tuple[str, str]:
    """The sm_90 source and its K loop; `cp_async`: the build a launch falls back to where
    its strides break what TMA needs (pointer blocks copied by cp.async)."""
    kernel = kernel or A.attention_fwd
    src = kernel.source(sig, options=kernel.options(
        arch="sm_90", num_warps=warps, num_stages=stages, made_descriptor_tma=not cp_async))
    body = src.split("#include")[1]
    start = body.index("for (int start_n = 0;")
    return body, body[start:body.index("\n  }\n", start)]  # (the loop's closing brace)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d,bn", [(64, 64), (64, 128), (128, 128)])
def test_hopper_warpgroups_release_the_stages_they_read(d: int, bn: int, causal: bool) -> None:
    """Two warpgroups, products waited for in the iteration, K and V by cp.async (the
    build for strides TMA cannot read): no barrier ends the iteration.  Each thread's
    copies arrive on the stage's mbarrier as they land and each thread waits on it where
    the iteration starts; each warp, once its products retired, arrives on the stage's
    second mbarrier, which the copies refilling that stage wait on (the stage the previous
    iteration read: phase `phase ^ (stage == 0)`)."""
    sig = ("*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp32:16,fp32,i32:16,i32:16,i32:16,i32,i32,"
           f"{d},128,{bn},{causal}")
    body, loop = _hopper_loop(sig, 8, cp_async=True)
    assert "__syncthreads()" not in loop
    assert "cp_async_commit" not in body and "cp_async_wait<1>" not in body
    top = loop.index("tc::mbarrier_wait(tc::smem_address(start_n_landed + start_n_stage), "
                     "start_n_phase);")
    first_product = loop.index("tc::wgmma_commit();")
    released = loop.index("tc::mbarrier_wait(tc::smem_address(start_n_released + "
                          "(start_n_stage + 2) % 3),")
    assert "start_n_phase ^ (start_n_stage == 0));" in loop[released:]
    refill = loop.index("tc::cp_async<16>(")
    arrive = loop.index("tc::cp_async_arrive(tc::smem_address(start_n_landed + "
                        "(start_n_stage + 2) % 3));")
    last_wait = loop.rindex("tc::wgmma_wait<0>();")
    release = loop.index("tc::mbarrier_arrive(tc::smem_address(start_n_released + "
                         "start_n_stage));")
    assert top < first_product < released < refill < arrive < last_wait < release
    assert loop.count("tc::mbarrier_arrive(") == 1 and "__syncwarp();" in loop[last_wait:]
    assert "tc::mbarrier_init(tc::smem_address(start_n_landed + s), 256);" in body
    assert "tc::mbarrier_init(tc::smem_address(start_n_released + s), 8);" in body
    assert "a stage refilled once its readers' warps released it" in \
        " ".join(line.lstrip("/ ") for line in A.attention_fwd.source(
            sig, arch="sm_90", num_warps=8, num_stages=3).split("#include")[0].splitlines())
    # one warpgroup keeps the closing barrier (nothing to overlap with in the program)
    _, one = _hopper_loop(sig, 4, cp_async=True)
    assert "__syncthreads();  // the next stage is everyone's" in one
    assert "mbarrier" not in one
    # neither sm_80 nor AMD has the mbarriers (where the blocks fit their shared memory)
    for target, arch in (("cuda", "sm_80"), ("hip", "gfx90a")) if d == 64 else ():
        other = A.attention_fwd.source(sig, target=target, arch=arch, num_warps=8,
                                       num_stages=3).split("#include")[1]
        assert "mbarrier" not in other and "released" not in other
    require_cuda_compiler()
    assert_clean_compile(A.attention_fwd, sig, "cuda", "sm_90", num_warps=8, num_stages=3)


# K and V through tensor descriptors made from the arguments (tutorial 06's Hopper form)
desc_attention_fwd = load_example("attention_descriptor",
                                  "benchmarks").attention_fwd_descriptors


def _desc_signature(d: int, bm: int = 128, bn: int = 128, causal: bool = False) -> str:
    return f"*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp32:16,fp32,i32,i32:16,{d},{bm},{bn},{causal}"


def test_desc_attention_on_the_interpreter() -> None:
    rng = np.random.default_rng(3)
    q, k, v = _inputs(rng, (1, 2, 64, 32), np.float16)
    for causal in (False, True):
        out, lse = np.zeros_like(q), np.zeros((2, 64), np.float32)
        desc_attention_fwd.interpret[(2, 2)](q, k, v, out, lse, 32 ** -0.5, 128, 64,
                                             HEAD_DIM=32, BLOCK_M=32, BLOCK_N=16,
                                             CAUSAL=causal, num_warps=4)
        _check(out, lse, q, k, v, causal)


@pytest.mark.parametrize("d", [64])
def test_hopper_copy_engine_stages_released_by_the_warps(d: int) -> None:
    """K and V by TMA on two warpgroups: the thread that issues a stage's copies waits,
    alone, until every warp released it; no barrier ends the iteration.  (Head dim 128,
    a longer product, gives the copies to a producer warpgroup: test_warp_roles.py.)"""
    body, loop = _hopper_loop(_desc_signature(d), 8, kernel=desc_attention_fwd)
    assert "tc::tma_load_2d(" in loop and "cp_async" not in loop
    assert "__syncthreads()" not in loop
    one = loop.index("if (threadIdx.x == 0) {  // the copy engine's copies")
    released = loop.index("tc::mbarrier_wait(tc::smem_address(start_n_released + "
                          "(start_n_stage + 2) % 3),")
    assert one < released < loop.index("tc::mbarrier_expect_bytes(") < \
        loop.index("tc::tma_load_2d(") < loop.index("tc::mbarrier_arrive(")
    assert "tc::mbarrier_init(tc::smem_address(start_n_landed + s), 1);" in body
    assert "tc::mbarrier_init(tc::smem_address(start_n_released + s), 8);" in body
    _, four = _hopper_loop(_desc_signature(d), 4, kernel=desc_attention_fwd)
    assert "__syncthreads();  // the next stage is everyone's" in four
    assert "released" not in four
    require_cuda_compiler()
    assert_clean_compile(desc_attention_fwd, _desc_signature(d), "cuda", "sm_90",
                         num_warps=8, num_stages=3)


@pytest.mark.parametrize("stages", [2, 4])
@pytest.mark.parametrize("cp_async", [False, True])
def test_stages_released_by_the_warps_compile_at_any_depth(stages: int, cp_async: bool) -> None:
    """A refill waits for the release of the stage the previous iteration read: with two
    stages `stage ^ 1`, which the barrier's address takes whole (it once read
    `released + stage ^ 1`, a pointer xor that NVRTC refused).  By the copy engine and by
    cp.async (the build for strides TMA cannot read)."""
    sig = _desc_signature(64)
    _, loop = _hopper_loop(sig, 8, stages, kernel=desc_attention_fwd, cp_async=cp_async)
    previous = "(start_n_stage ^ 1)" if stages == 2 else "(start_n_stage + 3) % 4"
    assert f"tc::mbarrier_wait(tc::smem_address(start_n_released + {previous})," in loop
    require_cuda_compiler()
    assert_clean_compile(desc_attention_fwd, sig, "cuda", "sm_90", options=desc_attention_fwd.options(
        arch="sm_90", num_warps=8, num_stages=stages, made_descriptor_tma=not cp_async))


def _cuda_qkv(shape, seed: int, dtype: str = "float16"):
    """torch, its functional module and random q, k, v of `shape` on the GPU (the test
    skips without one)."""
    torch = pytest.importorskip("torch")
    import torch.nn.functional as F

    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    torch.manual_seed(seed)
    return (torch, F, *(torch.randn(shape, device="cuda", dtype=getattr(torch, dtype))
                        for _ in range(3)))


@pytest.mark.gpu
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d,stages", [(64, 3), (128, 3), (64, 2), (128, 2)])
def test_gpu_copy_engine_stages_released_by_the_warps(d: int, stages: int,
                                                      causal: bool) -> None:
    z, h, n = 2, 3, 1024  # 8 key blocks: each stage's barriers through several phases
    torch, F, q, k, v = _cuda_qkv((z, h, n, d), 4)
    want = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
    lse = torch.empty((z * h, n), device="cuda", dtype=torch.float32)
    for _ in range(3):
        out = torch.full_like(q, float("nan"))
        desc_attention_fwd[(n // 128, z * h)](q, k, v, out, lse, d ** -0.5, z * h * n, n,
                                              HEAD_DIM=d, BLOCK_M=128, BLOCK_N=128,
                                              CAUSAL=causal, num_warps=8, num_stages=stages)
        torch.testing.assert_close(out.float(), want, atol=2e-2, rtol=2e-2)


@pytest.mark.gpu
@pytest.mark.parametrize("d,bn", [(64, 64), (128, 128), (128, 32)])
@pytest.mark.parametrize("causal", [False, True])
def test_gpu_stages_released_by_warps_over_many_iterations(d: int, bn: int,
                                                           causal: bool) -> None:
    """Two warpgroups releasing their stages through mbarriers: enough key blocks for each
    stage's barriers to go through many phases, a length no block divides."""
    z, h, n = 2, 3, 1000
    torch, F, q, k, v = _cuda_qkv((z, h, n, d), 2)
    want = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
    lse = torch.empty((z * h, n), device="cuda", dtype=torch.float32)
    for _ in range(3):  # the barriers are initialized afresh by every program
        out = torch.full_like(q, float("nan"))
        A.attention_fwd[(-(-n // 128), z * h)](
            q, k, v, out, lse, 1 / d ** 0.5, q.stride(0), q.stride(1), q.stride(2), h, n,
            HEAD_DIM=d, CAUSAL=causal, BLOCK_M=128, BLOCK_N=bn, num_warps=8, num_stages=3)
        torch.testing.assert_close(out.float(), want, atol=2e-2, rtol=2e-2)


def _check_output_and_lse(q, k, v, out, lse, causal: bool, dtype: str) -> None:
    """The output against SDPA in float32, the base-2 log-sum-exp against torch's."""
    import torch
    import torch.nn.functional as F

    z, h, n, d = q.shape
    want = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
    tol = 2e-2 if dtype == "float16" else 6e-2
    torch.testing.assert_close(out.float(), want, atol=tol, rtol=tol)
    s = (q.float() @ k.float().transpose(-1, -2)) / d ** 0.5
    if causal:
        s = s.masked_fill(torch.ones(n, n, device="cuda", dtype=torch.bool).triu(1), -float("inf"))
    want_lse = torch.logsumexp(s, dim=-1).reshape(z * h, n) / np.log(2)
    torch.testing.assert_close(lse, want_lse, atol=2e-2, rtol=1e-3)


@pytest.mark.gpu
@pytest.mark.parametrize("n", [1, 100, 128, 129, 256, 385])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_gpu_overlapped_products_at_every_count_of_key_blocks(n: int, causal: bool,
                                                               dtype: str) -> None:
    """Head dim 128, 128 x 128 blocks on 8 warps: the loop whose scores' product of a block
    is issued before the previous block's P V (Pipeline.overlapped), over one key block
    (the first block and the last P V only), one whole, and several with a ragged last;
    the output and the log-sum-exp against the float32 reference."""
    z, h, d = 1, 3, 128
    torch, _, q, k, v = _cuda_qkv((z, h, n, d), 3, dtype)
    out = torch.full_like(q, float("nan"))
    lse = torch.full((z * h, n), float("nan"), device="cuda", dtype=torch.float32)
    A.attention_fwd[(-(-n // 128), z * h)](
        q, k, v, out, lse, 1 / d ** 0.5, q.stride(0), q.stride(1), q.stride(2), h, n,
        HEAD_DIM=d, CAUSAL=causal, BLOCK_M=128, BLOCK_N=128, num_warps=8, num_stages=3)
    _check_output_and_lse(q, k, v, out, lse, causal, dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("d,blocks", [(d, c) for d in A.CONFIGS for c in A.CONFIGS[d]])
@pytest.mark.parametrize("causal", [False, True])
def test_gpu_configurations_match_sdpa(d: int, blocks, causal: bool) -> None:
    """Every benchmark configuration, on a length no block divides."""
    z, h, n = 1, 2, 300
    torch, F, q, k, v = _cuda_qkv((z, h, n, d), 1)
    out = torch.empty_like(q)
    lse = torch.empty((z * h, n), device="cuda", dtype=torch.float32)
    bm, bn, warps, stages = blocks
    A.attention_fwd[(-(-n // bm), z * h)](
        q, k, v, out, lse, 1 / d ** 0.5, q.stride(0), q.stride(1), q.stride(2), h, n,
        HEAD_DIM=d, CAUSAL=causal, BLOCK_M=bm, BLOCK_N=bn, num_warps=warps, num_stages=stages)
    want = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
    torch.testing.assert_close(out.float(), want, atol=2e-2, rtol=2e-2)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("shape", [(2, 3, 200, 64), (1, 2, 256, 128), (1, 1, 77, 64)])
@pytest.mark.parametrize("causal", [False, True])
def test_gpu_matches_sdpa(shape, causal: bool, dtype: str) -> None:
    torch, _, q, k, v = _cuda_qkv(shape, 0, dtype)
    out = torch.empty_like(q)
    z, h, n, d = shape
    lse = torch.empty((z * h, n), device="cuda", dtype=torch.float32)
    cfg = A.config(d, causal, "sm_{}{}".format(*torch.cuda.get_device_capability()))
    A.attention_fwd[(-(-n // cfg["BLOCK_M"]), z * h)](
        q, k, v, out, lse, 1 / d ** 0.5, q.stride(0), q.stride(1), q.stride(2), h, n,
        HEAD_DIM=d, CAUSAL=causal, **cfg)
    _check_output_and_lse(q, k, v, out, lse, causal, dtype)
