"""A pipelined loop whose loads' index arithmetic the rest of the body reads too: attention's
diagonal block masks its scores with the same key offsets (`o_k`, `m_k`) its loads of K
and V are masked with (fla's parallel attention, Triton's causal stage).  The copies
compute those offsets for the iteration ahead at the issue point, the body for its own
(`passes.pipeline._kept_in_body`); the loop was left unpipelined before.  Checked in the
source, on the interpreter against NumPy, compiled by NVRTC, and on the GPU."""

from __future__ import annotations

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
def diagonal_block(q_ptr, k_ptr, v_ptr, out_ptr, N, D: tl.constexpr, BM: tl.constexpr,
                   BN: tl.constexpr):
    """q, k, v and out are N x D: per block of BM rows, out = (q @ k^T masked to the
    columns at or before each row, within the block's own columns) @ v."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    d = tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * D + d[None, :], mask=rm[:, None] < N, other=0.0)
    acc = tl.zeros([BM, D], dtype=tl.float32)
    for n0 in range(tl.program_id(0) * BM, min((tl.program_id(0) + 1) * BM, N), BN):
        cols = n0 + tl.arange(0, BN)
        live = cols < N
        kt = tl.load(k_ptr + d[:, None] + cols[None, :] * D, mask=live[None, :], other=0.0)
        v = tl.load(v_ptr + cols[:, None] * D + d[None, :], mask=live[:, None], other=0.0)
        s = tl.dot(q, kt)
        s = tl.where((rm[:, None] >= cols[None, :]) & live[None, :], s, 0.0)
        acc = tl.dot(s.to(q.dtype), v, acc)
    tl.store(out_ptr + rm[:, None] * D + d[None, :], acc, mask=rm[:, None] < N)


def _case(N: int, D: int, seed: int):
    rng = np.random.default_rng(seed)
    return [(rng.integers(-2, 3, (N, D)) / 2).astype(np.float16) for _ in range(3)]


def _reference(q, k, v, BM: int) -> np.ndarray:
    """float64, the scores rounded to fp16 as the kernel casts them (exact before)."""
    N = q.shape[0]
    q64, k64, v64 = (x.astype(np.float64) for x in (q, k, v))
    out = np.zeros(q.shape)
    for r0 in range(0, N, BM):
        rows = np.arange(r0, min(r0 + BM, N))
        s = q64[rows] @ k64[rows].T
        s = np.where(rows[:, None] >= rows[None, :], s, 0).astype(np.float16)
        out[rows] = s.astype(np.float64) @ v64[rows]
    return out


SIG = "*fp16:16,*fp16:16,*fp16:16,*fp32:16,i32,64,{bm},{bn}"
CASES = [(200, 128, 64, 8, 2), (150, 64, 32, 4, 3)]  # (N, BM, BN, warps, stages)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("N,BM,BN,warps,stages", CASES)
def test_loop_masked_by_its_loads_offsets_is_pipelined(arch, N, BM, BN, warps, stages) -> None:
    src = diagonal_block.source(SIG.format(bm=BM, bn=BN), arch=arch, num_warps=warps,
                                num_stages=stages)
    assert "kt, v of tl.dot copied into shared memory" in src.split("#include")[0]


def test_interpreter_diagonal_block() -> None:
    for N, BM, BN, _, _ in CASES:
        q, k, v = _case(N, 64, seed=N)
        out = np.zeros((N, 64), np.float32)
        diagonal_block.interpret[(tilecc.cdiv(N, BM),)](q, k, v, out, N, D=64, BM=BM, BN=BN)
        np.testing.assert_array_equal(out, _reference(q, k, v, BM))


def test_diagonal_block_compiles_cleanly_for_sm_80() -> None:
    require_cuda_compiler()
    for N, BM, BN, warps, stages in CASES:
        assert_clean_compile(diagonal_block, SIG.format(bm=BM, bn=BN), "cuda", "sm_80",
                             num_warps=warps, num_stages=stages)


def test_diagonal_block_compiles_cleanly_for_sm_90a() -> None:
    """ptxas serializes the warpgroup products (C7515) of this pipelined loop when its
    second product, accumulating only, is left in flight into the next iteration (its wait
    deferred to the first product's, `Pipeline.deferred`), where the first product's
    result, masked by its row and column indices, is the second's A from registers; the
    compile then builds it with every product waited for where it is issued
    (`tests/test_serialized_products.py`): clean."""
    require_cuda_compiler()
    for N, BM, BN, warps, stages in CASES:
        assert_clean_compile(diagonal_block, SIG.format(bm=BM, bn=BN), "cuda", "sm_90a",
                             num_warps=warps, num_stages=stages)


@pytest.mark.gpu
@pytest.mark.parametrize("N,BM,BN,warps,stages", CASES)
def test_gpu_diagonal_block(N, BM, BN, warps, stages) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    q, k, v = _case(N, 64, seed=N)
    out = torch.full((N, 64), 7.0, device="cuda")
    diagonal_block[(tilecc.cdiv(N, BM),)](*(torch.from_numpy(x).cuda() for x in (q, k, v)),
                                          out, N, D=64, BM=BM, BN=BN, num_warps=warps,
                                          num_stages=stages)
    np.testing.assert_array_equal(out.cpu().numpy(), _reference(q, k, v, BM))
