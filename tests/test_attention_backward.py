"""The fused-attention backward (examples/attention.py: attention_bwd_preprocess,
attention_bwd_dkdv, attention_bwd_dq and the autograd Function flash_attention): the
interpreter against a float64 NumPy reference of softmax attention's gradients (itself
checked by finite differences), clean NVRTC / hiprtc compiles of the configurations the
example and the benchmark use, and the GPU against float64 torch autograd."""

from __future__ import annotations

import sys

import numpy as np
import pytest

try:
    from conftest_compilers import (compile_cleanly_together, require_cuda_compiler,
                                    require_hip_compiler)
    from test_blocks import load_example
    from test_compile_kernels import assert_clean_compile
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import (compile_cleanly_together, require_cuda_compiler,
                                          require_hip_compiler)
    from tests.test_blocks import load_example
    from tests.test_compile_kernels import assert_clean_compile


A = load_example("attention")

# small blocks for the interpreter: a streamed block narrower than the wide one, so that
# causal loops start part-way through a block
SMALL = {"dkdv": {"BLOCK_M": 16, "BLOCK_N": 32, "num_warps": 4},
         "dq": {"BLOCK_M": 32, "BLOCK_N": 16, "num_warps": 4},
         "delta": {"BLOCK_M": 16}}


def _inputs(rng, shape, dtype):
    return tuple(rng.standard_normal(shape).astype(dtype) for _ in range(4))


def _assert_gradients_close(got, want, tol):
    for name, g, w in zip(("dq", "dk", "dv"), got, want):
        scale = np.abs(w).max()
        np.testing.assert_allclose(np.asarray(g, np.float64), w, atol=tol * scale, rtol=tol,
                                   err_msg=name)


def test_reference_backward_matches_finite_differences() -> None:
    """The float64 reference is the gradient of `reference`'s output: central differences
    of sum(out * do) for every input element (a tiny shape; causal masks one triangle)."""
    rng = np.random.default_rng(3)
    q, k, v, do = (rng.standard_normal((1, 1, 5, 3)) for _ in range(4))
    for causal in (False, True):
        got = A.reference_backward(q, k, v, do, causal, sm_scale=0.7)
        for x, g in zip((q, k, v), got):
            numeric = np.zeros_like(x)
            for i in np.ndindex(x.shape):
                old = x[i]
                x[i] = old + 1e-6
                hi = (A.reference(q, k, v, causal, 0.7)[0] * do).sum()
                x[i] = old - 1e-6
                lo = (A.reference(q, k, v, causal, 0.7)[0] * do).sum()
                x[i] = old
                numeric[i] = (hi - lo) / 2e-6
            np.testing.assert_allclose(g, numeric, atol=1e-7, rtol=1e-6)


@pytest.mark.parametrize("shape,causal,dtype,scale", [
    ((1, 2, 40, 16), False, np.float16, None),   # 40: no block divides it
    ((1, 2, 40, 16), True, np.float16, None),
    ((2, 1, 64, 32), True, np.float16, None),    # two batches: the batch stride
    ((2, 2, 16, 32), False, np.float32, 0.3),    # one block, fp32, a custom scale
    ((1, 1, 37, 16), True, np.float32, None),
])
def test_interpreter_gradients_match_numpy(shape, causal, dtype, scale) -> None:
    rng = np.random.default_rng(sum(shape) + causal)
    q, k, v, do = _inputs(rng, shape, dtype)
    out, lse = A.attention(q, k, v, causal, scale, BLOCK_M=16, BLOCK_N=16, num_warps=4)
    got = A.attention_backward(q, k, v, out, lse, do, causal, scale, cfg=SMALL)
    assert all(g.dtype == dtype and g.shape == shape for g in got)
    _assert_gradients_close(got, A.reference_backward(q, k, v, do, causal, scale), 1e-2)


def test_interpreter_gradients_with_large_negative_scores() -> None:
    """Rows whose scores are all far below zero (a log-sum-exp near -300 in base 2): a
    key past the end, loaded as zero, must not turn exp2(0 - lse) into inf and dQ into
    NaN."""
    rng = np.random.default_rng(7)
    q, k, v, do = _inputs(rng, (1, 1, 24, 16), np.float32)
    q = np.abs(q) * 4
    k = -np.abs(k) * 4 - 8  # every score q.k clearly negative
    out, lse = A.attention(q, k, v, False, 1.0, BLOCK_M=16, BLOCK_N=16, num_warps=4)
    assert lse.max() < -128
    got = A.attention_backward(q, k, v, out, lse, do, False, 1.0, cfg=SMALL)
    assert all(np.isfinite(g).all() for g in got)
    # scores near -300 from tf32 products, each operand's bits past tf32's 10 truncated
    # (as the tensor cores read fp32): up to 2^-10 of a score, a few tenths, in exp2
    _assert_gradients_close(got, A.reference_backward(q, k, v, do, False, 1.0), 4e-2)


def test_backward_refuses_mismatched_strides() -> None:
    q, k, v, do = _inputs(np.random.default_rng(0), (1, 1, 16, 16), np.float32)
    out, lse = A.attention(q, k, v, False, BLOCK_M=16, BLOCK_N=16, num_warps=4)
    with pytest.raises(ValueError, match="share their strides"):
        A.attention_backward(q, k, v, out, lse, np.asfortranarray(do), False)


def test_example_imports_without_torch(monkeypatch) -> None:
    """torch is imported when the autograd Function is first used, not before."""
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now raises
    module = load_example("attention")
    with pytest.raises(ImportError):
        module.flash_attention(None, None, None)


def test_autograd_function_on_cpu_tensors() -> None:
    """The Function's wiring (saved tensors, gradients in argument order, None for causal
    and scale) on CPU tensors, which run on the interpreter, against float64 autograd."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 2, 24, 16, requires_grad=True) for _ in range(3))
    out = A.flash_attention(q, k, v, True, 0.5)
    do = torch.randn_like(out)
    out.backward(do)
    ref = [t.detach().double().requires_grad_() for t in (q, k, v)]
    s = ref[0] @ ref[1].transpose(-1, -2) * 0.5
    s = s.masked_fill(torch.ones(24, 24, dtype=torch.bool).triu(1), -float("inf"))
    want = torch.softmax(s, dim=-1) @ ref[2]
    want.backward(do.double())
    torch.testing.assert_close(out.double(), want, atol=1e-2, rtol=1e-2)
    for got, r in zip((q, k, v), ref):
        torch.testing.assert_close(got.grad.double(), r.grad, atol=1e-2, rtol=1e-2)


# --- compiles ----------------------------------------------------------------------------

def _signature(kernel_name: str, d: int, part: dict, causal: bool) -> str:
    """fp16 tensors, fp32 log-sum-exp and delta, contiguous strides."""
    fp16 = {"preprocess": 2, "dkdv": 6, "dq": 5}[kernel_name]
    strides = f"i32:16,i32:16,i32:16,i32,i32,{d},{part['BLOCK_M']}"
    if kernel_name == "preprocess":
        return "*fp16:16," * fp16 + "*fp32:16," + strides
    return ("*fp16:16," * fp16 + "*fp32:16,*fp32:16,fp32," + strides
            + f",{part['BLOCK_N']},{causal}")


KERNELS = {"preprocess": A.attention_bwd_preprocess, "dkdv": A.attention_bwd_dkdv,
           "dq": A.attention_bwd_dq}


def _default_cases(arch: str):
    for d in (64, 128):
        for causal in (False, True):
            cfg = A.backward_config(d, causal, arch)
            names = [("dkdv", "dkdv"), ("dq", "dq")] + [("preprocess", "delta")] * causal
            for name, part_name in names:  # the preprocess has no mask: once per d
                part = cfg[part_name]
                options = {k: v for k, v in part.items() if k.startswith("num_")}
                yield KERNELS[name], _signature(name, d, part, causal), options


@pytest.mark.parametrize("target,arch", [("cuda", "sm_80"), ("cuda", "sm_90"),
                                         ("hip", "gfx90a")])
def test_default_configurations_compile_cleanly(target: str, arch: str) -> None:
    """The blocks backward_config picks, both head dimensions, both masks: no warnings, no
    spills, no ptxas serialization (sm_90 builds as sm_90a where wgmma is used)."""
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    cases = lambda: list(_default_cases(arch))  # noqa: E731
    if not compile_cleanly_together("attention_bwd", target, arch, cases):
        for kernel, sig, options in cases():
            assert_clean_compile(kernel, sig, target, arch, **options)


# --- GPU ---------------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_gpu_gradients_match_float64_autograd(d: int, causal: bool) -> None:
    """flash_attention's output and dQ, dK, dV in fp16 (the example's configuration for
    this GPU) against torch autograd of softmax attention in float64."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    torch.manual_seed(0)
    z, h, n = 2, 4, 512
    q, k, v = (torch.randn((z, h, n, d), device="cuda", dtype=torch.float16,
                           requires_grad=True) for _ in range(3))
    out = A.flash_attention(q, k, v, causal)
    do = torch.randn_like(out)
    out.backward(do)
    ref = [t.detach().double().requires_grad_() for t in (q, k, v)]
    s = ref[0] @ ref[1].transpose(-1, -2) / d ** 0.5
    if causal:
        s = s.masked_fill(torch.ones(n, n, device="cuda", dtype=torch.bool).triu(1),
                          -float("inf"))
    want = torch.softmax(s, dim=-1) @ ref[2]
    want.backward(do.double())
    torch.testing.assert_close(out.double(), want, atol=2e-2, rtol=2e-2)
    for name, got, r in zip(("dq", "dk", "dv"), (q, k, v), ref):
        assert torch.isfinite(got.grad).all(), name
        torch.testing.assert_close(got.grad.double(), r.grad, atol=3e-2, rtol=3e-2,
                                   msg=lambda m, name=name: f"{name}: {m}")


def test_hopper_stages_the_operands_made_before_the_loop_in_shared_memory() -> None:
    """dQ's loop multiplies Q and dO, both loaded before it, on every key block: on sm_90
    they are staged in shared memory once (wgmma reads them there), and only the product
    made in the iteration (dS) goes to the tensor cores from registers.  Read from
    registers across the loop's back edge, Q's fragments were overwritten by dS's in the
    code ptxas 13.0 made (wrong gradients at head dim 64 on an H200)."""
    cfg = A.backward_config(64, False, "sm_90")["dq"]
    sig = ("*fp16:16, *fp16:16, *fp16:16, *fp16:16, *fp16:16, *fp32:16, *fp32:16, fp32, "
           f"i32:16, i32:16, i32:16, i32, i32, 64, {cfg['BLOCK_M']}, {cfg['BLOCK_N']}, False")
    src = A.attention_bwd_dq.source(sig, arch="sm_90a", num_warps=cfg["num_warps"],
                                    num_stages=cfg["num_stages"])
    body = src.split("#include")[1]
    loop = body.index("for (int start_n = 0;")
    assert "q of tl.dot does not change in the loop" in body[:loop]
    assert "do of tl.dot does not change in the loop" in body[:loop]
    assert body[loop:].count("_ss<0>(") == 2  # Q K^T and dO V^T: A from shared memory
    assert body[loop:].count("_rs<1>(") == 1  # dS K: A from registers, made in the loop


@pytest.mark.parametrize("d", [64, 128])
def test_hopper_dkdv_runs_every_product_on_wgmma(d: int) -> None:
    """dK/dV's configuration on sm_90 puts all four products on warpgroup MMA: at head
    dim 128 it used to take 32 x 64 blocks on 8 warps, which wgmma cannot split, and ran
    on mma.sync at a third of the speed."""
    cfg = A.backward_config(d, False, "sm_90")["dkdv"]
    src = A.attention_bwd_dkdv.source(_signature("dkdv", d, cfg, False), arch="sm_90a",
                                      num_warps=cfg["num_warps"],
                                      num_stages=cfg["num_stages"])
    body = src.split("#include")[1]
    assert body.count("tc::wgmma_m64n") == 4 and "tc::mma_" not in body


@pytest.mark.parametrize("causal", [False, True])
def test_hopper_accumulating_products_retire_at_the_next_wait(causal: bool) -> None:
    """dK/dV's loop has four products; dV and dK only update their accumulators, which the
    next iteration reads: they are not waited for where they are issued, but retired by
    the next product's wait (groups complete in order).  The copies that refill the stage
    they read wait for them first (all groups but the one just committed), then for every
    warp (each warp's wait retires its own part: its rows, on its own tensor core, read
    the whole stage), and the loop's end waits for the last ones before dK and dV are
    stored.  Measured on an H200 at head dims 64 / 128: the dK/dV kernel 3% / 11% faster."""
    cfg = A.backward_config(64, causal, "sm_90")["dkdv"]
    # (the build for strides TMA cannot read: Q and dO by cp.async)
    src = A.attention_bwd_dkdv.source(_signature("dkdv", 64, cfg, causal), options=(
        A.attention_bwd_dkdv.options(arch="sm_90a", num_warps=cfg["num_warps"],
                                     num_stages=cfg["num_stages"], made_descriptor_tma=False)))
    body = src.split("#include")[1]
    start = body.index("for (int start_m = ")
    end = body.index("tc::wgmma_wait<0>();  // the last iteration's deferred products")
    loop = body[start:end]
    assert loop.count("tc::wgmma_commit();") == 4
    assert loop.count("tc::wgmma_wait<0>();  // the accumulator is back") == 2  # P^T, dP^T
    assert loop.count("not waited for here") == 2  # dV, dK
    # the copies come after the first product's commit, behind a wait for the older ones
    first = loop.index("tc::wgmma_commit();")
    retire = loop.index("tc::wgmma_wait<1>();  // earlier products retired")
    barrier = loop.index("__syncthreads();  // ... by every warp")
    assert cfg["num_warps"] == 4  # one warpgroup: its warps wait for their parts alone
    assert first < retire < barrier < loop.index("tc::cp_async<16>(")
    after = body[end:]
    assert after.index("fence_operand(dv[r])") < after.index("tl.store(DV")
