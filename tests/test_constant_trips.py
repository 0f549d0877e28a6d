"""K loops of a constant trip count (`range(tl.cdiv(K, BK))` over constexprs, as libraries
write loops over head dims of one or two blocks): stages past the loop's iterations would
never be filled, so a pipeline takes at most as many (`passes.pipeline.loop_stages`), and
a loop of one iteration none.  The stores after products whose tiles then stay in the
pool go through the pool to be stored 16 bytes a lane (`passes.coalesce`), in what the
products' tiles take of it already.  Checked in the source, on the interpreter against
NumPy, compiled by NVRTC, and on the GPU."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tilecc
import tilecc.language as tl

try:
    from conftest_compilers import require_cuda_compiler
    from test_compile_kernels import assert_clean_compile
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import require_cuda_compiler
    from tests.test_compile_kernels import assert_clean_compile


@tilecc.jit
def short_k(a_ptr, b_ptr, c_ptr, M, K: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
            BK: tl.constexpr):
    """c (M x BN) = a (M x K) @ b (K x BN), over K in tl.cdiv(K, BK) blocks."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for i in range(tl.cdiv(K, BK)):
        rk = i * BK + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :],
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :], mask=rk[:, None] < K, other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=rm[:, None] < M)


def _sig(K: int, BK: int) -> str:
    return f"*fp16:16,*fp16:16,*fp16:16,i32,{K},64,64,{BK}"


# (K, BK, num_stages, the stages the loop takes: 0 none)
TRIPS = [(64, 64, 3, 0), (128, 64, 4, 2), (100, 32, 3, 3), (256, 64, 3, 3)]


def _note(src: str, words: str) -> str | None:
    return next((line for line in src.split("#include")[0].splitlines() if words in line), None)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("K,BK,stages,taken", TRIPS)
def test_stages_at_most_the_iterations(arch, K, BK, stages, taken) -> None:
    src = short_k.source(_sig(K, BK), arch=arch, num_warps=4, num_stages=stages)
    note = _note(src, "copied into shared memory")
    if taken:
        assert note is not None and f"({taken} stages" in note, note
    else:
        assert note is None and "dynamic_smem" not in src, note


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_one_iteration_stores_16_bytes_through_the_pool(arch) -> None:
    src = short_k.source(_sig(64, 64), arch=arch, num_warps=4, num_stages=3)
    assert "tiles' pool)" in src.split("#include")[0]  # (the header's conversion note)
    store = _note(src, " store: ")
    assert re.search(r"store: 8 x fp16 \(16 B\)", store), store


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_the_stores_conversion_takes_no_more_shared_memory(arch, monkeypatch) -> None:
    """The conversion goes where the products' tiles were: the program's shared memory is
    what it is without it (ptxas's report)."""
    require_cuda_compiler()
    from tilecc.transpiler.passes import coalesce

    def smem() -> list[str]:
        binary = short_k.compile(_sig(64, 64), arch=arch, num_warps=4, num_stages=3)
        return re.findall(r"(\d+) bytes smem", binary.log or "")

    converted = smem()
    monkeypatch.setattr(coalesce, "_coalesce_in_pool", lambda kernel, warp_size: [])
    assert converted and converted == smem()


def test_interpreter_short_k() -> None:
    rng = np.random.default_rng(0)
    for K, BK, _, _ in TRIPS:
        a = rng.integers(-2, 3, (100, K)).astype(np.float16)
        b = rng.integers(-2, 3, (K, 64)).astype(np.float16)
        c = np.zeros((100, 64), np.float16)
        short_k.interpret[(2,)](a, b, c, 100, K=K, BM=64, BN=64, BK=BK)
        np.testing.assert_array_equal(c, a.astype(np.float64) @ b.astype(np.float64))


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_short_k_compiles_cleanly(arch) -> None:
    require_cuda_compiler()
    for K, BK, stages, _ in TRIPS:
        assert_clean_compile(short_k, _sig(K, BK), "cuda", arch, num_warps=4,
                             num_stages=stages)


@pytest.mark.gpu
@pytest.mark.parametrize("warps", [4, 8])
@pytest.mark.parametrize("K,BK,stages,taken", TRIPS)
def test_gpu_short_k(K, BK, stages, taken, warps) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    rng = np.random.default_rng(K)
    a = rng.integers(-2, 3, (100, K)).astype(np.float16)
    b = rng.integers(-2, 3, (K, 64)).astype(np.float16)
    c = torch.full((100, 64), 7.0, device="cuda", dtype=torch.float16)
    short_k[(2,)](torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), c, 100, K=K, BM=64,
                  BN=64, BK=BK, num_warps=warps, num_stages=stages)
    np.testing.assert_array_equal(c.cpu().numpy(), a.astype(np.float64) @ b.astype(np.float64))
