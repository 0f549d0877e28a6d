"""One load, two products: a block read as it is by one `tl.dot` and through `tl.trans` by
another, as attention's backward kernels read their keys and queries (Triton's tutorial:
`qkT = tl.dot(k, qT)`, then `dk += tl.dot(dsT, tl.trans(qT))`; fla's dQ kernel the same
with its keys).  The pipeline copies such a block once into stages that both products
read, one with the other major-ness (`passes.pipeline._shared_stage`), where each
product's tile places every element alike; elsewhere the block is read back into
registers and staged for each product, as before.  Checked on the interpreter against
NumPy, in the generated source, compiled by NVRTC, and on the GPU."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tilecc
import tilecc.language as tl

try:
    from conftest_compilers import clean_log_problem, require_cuda_compiler
    from test_compile_kernels import assert_clean_compile
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import clean_log_problem, require_cuda_compiler
    from tests.test_compile_kernels import assert_clean_compile


@tilecc.jit
def both_ways(q_ptr, k_ptr, v_ptr, out_ptr, N, D: tl.constexpr, BM: tl.constexpr,
              BN: tl.constexpr):
    """q, k, v and out are N x D.  Per block of BM rows of q, over blocks of BN rows of k
    and v: kt = k's block transposed (D x BN, contiguous along D), s = q @ kt and
    t = q @ v^T, then out = sum of s @ v + t @ kt^T: kt and v each feed one product as
    they are loaded and another transposed."""
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    d = tl.arange(0, D)
    q = tl.load(q_ptr + rows[:, None] * D + d[None, :], mask=rows[:, None] < N, other=0.0)
    acc = tl.zeros([BM, D], dtype=tl.float32)
    for n0 in range(0, N, BN):
        cols = n0 + tl.arange(0, BN)
        kt = tl.load(k_ptr + d[:, None] + cols[None, :] * D, mask=cols[None, :] < N,
                     other=0.0)
        v = tl.load(v_ptr + cols[:, None] * D + d[None, :], mask=cols[:, None] < N,
                    other=0.0)
        s = tl.dot(q, kt)
        t = tl.dot(q, tl.trans(v))
        acc = tl.dot(s.to(q.dtype), v, acc)
        acc = tl.dot(t.to(q.dtype), tl.trans(kt), acc)
    tl.store(out_ptr + rows[:, None] * D + d[None, :], acc, mask=rows[:, None] < N)


def _np_type(dtype: str):
    import ml_dtypes
    return ml_dtypes.bfloat16 if dtype == "bf16" else np.float16


def _case(N: int, D: int, seed: int):
    rng = np.random.default_rng(seed)
    # halves in [-1, 1]: exact in fp16 / bf16 and every fp32 sum exact, so the products'
    # roundings of s and t to the input type are all that differs from float64
    return [(rng.integers(-2, 3, (N, D)) / 2).astype(np.float32) for _ in range(3)]


def _reference(q, k, v, BM: int, BN: int, dtype: str):
    """`both_ways` in float64, s and t rounded to `dtype` per block as the kernel does."""
    t_ = _np_type(dtype)
    N, D = q.shape
    q64, k64, v64 = (x.astype(np.float64) for x in (q, k, v))
    out = np.zeros((N, D))
    for n0 in range(0, N, BN):
        kb, vb = k64[n0:n0 + BN], v64[n0:n0 + BN]
        s = (q64 @ kb.T).astype(t_).astype(np.float64)
        t = (q64 @ vb.T).astype(t_).astype(np.float64)
        out += s @ vb + t @ kb
    return out


def _sig(dtype: str, D: int, BM: int, BN: int) -> str:
    return f"*{dtype}:16,*{dtype}:16,*{dtype}:16,*fp32:16,i32,{D},{BM},{BN}"


# (N, D, BM, BN, warps, stages): ragged N, one and two 128-byte rows of D, 64-byte rows
CASES = [(100, 64, 64, 32, 4, 2), (200, 64, 128, 64, 8, 3), (130, 128, 64, 64, 4, 3),
         (96, 32, 64, 32, 4, 2)]


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("N,D,BM,BN", [c[:4] for c in CASES[::2]])
def test_interpreter_both_ways(N, D, BM, BN, dtype) -> None:
    q, k, v = _case(N, D, seed=N + D)
    t = _np_type(dtype)
    out = np.full((N, D), 7, np.float32)
    both_ways.interpret[(tilecc.cdiv(N, BM),)](q.astype(t), k.astype(t), v.astype(t), out, N,
                                               D=D, BM=BM, BN=BN)
    np.testing.assert_array_equal(out, _reference(q, k, v, BM, BN, dtype))


def _header(src: str) -> str:
    return src.split("#include")[0]


@pytest.mark.parametrize("arch,case", [("sm_80", c) for c in CASES] +
                         [("sm_90a", c) for c in CASES[1:]])
def test_one_stage_serves_both_products(arch, case) -> None:
    """kt and v stream into stages of their own once, read back by no thread: no register
    copy of either block, nothing staged for a product in the body."""
    N, D, BM, BN, warps, stages = case
    src = both_ways.source(_sig("fp16", D, BM, BN), arch=arch, num_warps=warps,
                           num_stages=stages)
    note = next(line for line in _header(src).splitlines() if "copied into shared" in line)
    assert "kt, v of tl.dot copied" in note and "read back" not in note, note
    assert len(re.findall(r"\bkt_stages =", src)) == 1 and \
        len(re.findall(r"\bv_stages =", src)) == 1
    assert not re.search(r"\b(kt|v)_?\[\d+\];", src)  # (no registers hold either block)


@tilecc.jit
def as_a_and_b(x_ptr, w_ptr, p_ptr, y_ptr, out_ptr, N, D: tl.constexpr, BM: tl.constexpr,
               BN: tl.constexpr):
    """x and y are N x D, w is D x D, p is BM x N, out is BM x D: per block of BN rows of
    x, y = x @ w, and out = sum of p's block @ x: x is A of one product and B of the
    other, as it is loaded."""
    d = tl.arange(0, D)
    m = tl.arange(0, BM)
    w = tl.load(w_ptr + d[:, None] * D + d[None, :])
    acc = tl.zeros([BM, D], dtype=tl.float32)
    for n0 in range(0, N, BN):
        rows = n0 + tl.arange(0, BN)
        x = tl.load(x_ptr + rows[:, None] * D + d[None, :], mask=rows[:, None] < N, other=0.0)
        p = tl.load(p_ptr + m[:, None] * N + rows[None, :], mask=rows[None, :] < N, other=0.0)
        tl.store(y_ptr + rows[:, None] * D + d[None, :], tl.dot(x, w), mask=rows[:, None] < N)
        acc = tl.dot(p, x, acc)
    tl.store(out_ptr + m[:, None] * D + d[None, :], acc)


AB_SIG = "*fp16:16,*fp16:16,*fp16:16,*fp32:16,*fp32:16,i32,64,64,64"


@pytest.mark.parametrize("arch,shared", [("sm_80", True), ("sm_90a", False)])
def test_a_tile_placed_otherwise_is_staged_for_each_product(arch, shared) -> None:
    """mma.sync's tiles of A and of an N-major B both hold x's rows as they are: one stage
    serves both.  wgmma places A's rows where each warp's instruction computes them
    (`wgmma_a_place`), unlike B's: x is read back into registers and staged for each."""
    src = as_a_and_b.source(AB_SIG, arch=arch, num_warps=4, num_stages=2)
    note = next(line for line in _header(src).splitlines() if "copied into shared" in line)
    assert ("read back" not in note) == shared, note


def test_interpreter_as_a_and_b() -> None:
    N, D, BM = 150, 64, 64
    rng = np.random.default_rng(3)
    x, w, p = ((rng.integers(-2, 3, s) / 2).astype(np.float16)
               for s in ((N, D), (D, D), (BM, N)))
    y, out = np.zeros((N, D), np.float32), np.zeros((BM, D), np.float32)
    as_a_and_b.interpret[(1,)](x, w, p, y, out, N, D=D, BM=BM, BN=64)
    np.testing.assert_array_equal(y, x.astype(np.float64) @ w.astype(np.float64))
    np.testing.assert_array_equal(out, p.astype(np.float64) @ x.astype(np.float64))


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_both_ways_compiles_cleanly(arch) -> None:
    require_cuda_compiler()
    for N, D, BM, BN, warps, stages in CASES:
        if arch == "sm_80" and D == 128:
            continue  # (below: 64 x 128 sums of fp32 on 4 warps)
        for dtype in ("fp16", "bf16"):
            assert_clean_compile(both_ways, _sig(dtype, D, BM, BN), "cuda", arch,
                                 num_warps=warps, num_stages=stages)
    assert_clean_compile(as_a_and_b, AB_SIG, "cuda", arch, num_warps=4, num_stages=2)
    if arch == "sm_80":  # 64 accumulator registers and mma.sync's fragments: a few bytes
        # spill (212 bytes with each block read back and staged per product)
        binary = both_ways.compile(_sig("fp16", 128, 64, 64), arch=arch, num_warps=4,
                                   num_stages=3)
        assert clean_log_problem(binary.log or "", "cuda", spills_ok=True) is None


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("N,D,BM,BN,warps,stages", CASES)
def test_gpu_both_ways(N, D, BM, BN, warps, stages, dtype) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    q, k, v = _case(N, D, seed=N + D)
    t = torch.bfloat16 if dtype == "bf16" else torch.float16
    out = torch.full((N, D), 7.0, device="cuda")
    both_ways[(tilecc.cdiv(N, BM),)](*(torch.from_numpy(x).cuda().to(t) for x in (q, k, v)),
                                     out, N, D=D, BM=BM, BN=BN, num_warps=warps,
                                     num_stages=stages)
    np.testing.assert_array_equal(out.cpu().numpy(), _reference(q, k, v, BM, BN, dtype))


@pytest.mark.gpu
def test_gpu_as_a_and_b() -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    N, D, BM = 150, 64, 64
    rng = np.random.default_rng(3)
    x, w, p = ((rng.integers(-2, 3, s) / 2).astype(np.float16)
               for s in ((N, D), (D, D), (BM, N)))
    y = torch.zeros((N, D), device="cuda")
    out = torch.zeros((BM, D), device="cuda")
    as_a_and_b[(1,)](*(torch.from_numpy(v).cuda() for v in (x, w, p)), y, out, N, D=D, BM=BM,
                     BN=64, num_warps=4, num_stages=2)
    np.testing.assert_array_equal(y.cpu().numpy(), x.astype(np.float64) @ w.astype(np.float64))
    np.testing.assert_array_equal(out.cpu().numpy(), p.astype(np.float64) @ x.astype(np.float64))
