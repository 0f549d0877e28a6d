"""Loops of two products in attention's form (`Pipeline.overlapped`): each block's first
product issued before the previous block's second, the ops between them computed under
it.  The bodies vary what `settle.overlap_parts` sorts: the second product's accumulator
rescaled or not (then it only accumulates: overlapped where warp roles are taken, else
deferred as before), its A converted from fp32 for it alone (`tc::cast_pair_ordered`) or
worked on in fp16 first (`tc::pack2_ordered`), values carried beside the accumulator and
updated after the second product.  Every value is exact (quarters and small sums), so the
interpreter matches NumPy and the GPU matches the interpreter to the bit; on the CPU each
form compiles cleanly for sm_90a (no spills, no products serialized by ptxas)."""

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

FORMS = ["rescaled", "plain", "fp16_operand", "carried_after"]
D, BM, BN = 128, 128, 128


@tilecc.jit
def two_products(Q, K, V, Out, Extra, N, D: tl.constexpr, BM: tl.constexpr,
                 BN: tl.constexpr, FORM: tl.constexpr):
    # Q: rows x D; K and V: N x D (K read transposed); Out: rows x D; Extra: rows
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_d = tl.arange(0, D)
    q = tl.load(Q + offs_m[:, None] * D + offs_d[None, :])
    acc = tl.zeros([BM, D], dtype=tl.float32)
    extra = tl.zeros([BM], dtype=tl.float32)
    for start in range(0, N, BN):
        cols = start + offs_n
        kt = tl.load(K + cols[None, :] * D + offs_d[:, None], mask=cols[None, :] < N, other=0.0)
        s = tl.dot(q, kt)
        p = tl.where((s > 0) & (cols[None, :] < N), 1.0, 0.5)
        v = tl.load(V + cols[:, None] * D + offs_d[None, :], mask=cols[:, None] < N, other=0.0)
        if FORM == "rescaled":
            acc = acc * 0.5
            acc = tl.dot(p.to(tl.float16), v, acc)
        elif FORM == "plain":
            acc = tl.dot(p.to(tl.float16), v, acc)
        elif FORM == "fp16_operand":
            ph = p.to(tl.float16) * 2.0
            acc = tl.dot(ph.to(tl.float16), v, acc * 0.5)
        else:  # carried_after
            acc = tl.dot(p.to(tl.float16), v, acc * 0.5)
            extra = extra + tl.sum(p, 1) + tl.max(s, 1)
    tl.store(Out + offs_m[:, None] * D + offs_d[None, :], acc)
    tl.store(Extra + offs_m, extra)


def _inputs(rows: int, n: int, seed: int):
    rng = np.random.default_rng(seed)
    q = (rng.integers(-4, 5, (rows, D)) / 4).astype(np.float16)
    k = (rng.integers(-4, 5, (max(n, 1), D)) / 4).astype(np.float16)
    v = (rng.integers(-4, 5, (max(n, 1), D)) / 4).astype(np.float16)
    return q, k, v


def _reference(q, k, v, n: int, form: str):
    """The loop in NumPy, block by block (float64: every value here is exact)."""
    rows = q.shape[0]
    acc = np.zeros((rows, D))
    extra = np.zeros(rows)
    q64 = q.astype(np.float64)
    for start in range(0, n, BN):
        kb = k[start:start + BN].astype(np.float64)
        vb = v[start:start + BN].astype(np.float64)
        width = kb.shape[0]
        s = np.zeros((rows, BN))
        s[:, :width] = q64 @ kb.T
        p = np.where((s > 0) & (np.arange(BN) < width)[None, :], 1.0, 0.5)
        pv = p[:, :width] @ vb
        if form == "rescaled":
            acc = acc * 0.5 + pv
        elif form == "plain":
            acc = acc + pv
        elif form == "fp16_operand":
            acc = acc * 0.5 + 2 * pv
        else:
            acc = acc * 0.5 + pv
            extra = extra + p.sum(1) + s.max(1)
    return acc.astype(np.float32), extra.astype(np.float32)


def _signature(form: str) -> str:
    return f"*fp16:16,*fp16:16,*fp16:16,*fp32:16,*fp32:16,i32,{D},{BM},{BN},'{form}'"


@pytest.mark.parametrize("form", FORMS)
def test_each_form_is_overlapped_and_compiles_cleanly(form: str) -> None:
    src = two_products.source(_signature(form), arch="sm_90a", num_warps=8, num_stages=3)
    assert "producer warpgroup" in " ".join(src.split())
    assert "tc::wgmma_wait<1>();" in src
    packing = "tc::pack2_ordered(" if form == "fp16_operand" else "tc::cast_pair_ordered<"
    assert packing in src
    require_cuda_compiler()
    assert_clean_compile(two_products, _signature(form), "cuda", "sm_90a", num_warps=8,
                         num_stages=3)


def test_a_product_that_only_accumulates_is_deferred_where_roles_are_not_taken() -> None:
    """Its stages' releases pay through the overlap alone: products too short for warp
    roles (64-wide blocks of keys, head dim 64) keep the wait of the product that only
    accumulates for the next product's (`Pipeline.deferred`), with one role."""
    sig = "*fp16:16,*fp16:16,*fp16:16,*fp32:16,*fp32:16,i32,64,128,64,'plain'"
    src = " ".join(two_products.source(sig, arch="sm_90a", num_warps=8,
                                       num_stages=3).split())
    assert "retired by the next product's wait" in src
    assert "producer warpgroup" not in src and "_ordered" not in src
    assert "released it" not in src


@pytest.mark.parametrize("form", FORMS)
def test_each_form_on_the_interpreter(form: str) -> None:
    rows, n = 128, 300
    q, k, v = _inputs(rows, n, 0)
    out = np.zeros((rows, D), np.float32)
    extra = np.zeros(rows, np.float32)
    two_products.interpret[(1,)](q, k, v, out, extra, n, D=D, BM=BM, BN=BN, FORM=form)
    want, want_extra = _reference(q, k, v, n, form)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(extra, want_extra)


@pytest.mark.gpu
@pytest.mark.parametrize("n", [1, 128, 300, 1000])
@pytest.mark.parametrize("form", FORMS)
def test_each_form_on_the_gpu_matches_the_interpreter(form: str, n: int) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    rows = 256
    q, k, v = _inputs(rows, n, n)
    want = np.zeros((rows, D), np.float32)
    want_extra = np.zeros(rows, np.float32)
    two_products.interpret[(rows // BM,)](q, k, v, want, want_extra, n, D=D, BM=BM, BN=BN,
                                          FORM=form)
    dev = [torch.from_numpy(x).cuda() for x in (q, k, v)]
    out = torch.full((rows, D), float("nan"), device="cuda")
    extra = torch.full((rows,), float("nan"), device="cuda")
    two_products[(rows // BM,)](*dev, out, extra, n, D=D, BM=BM, BN=BN, FORM=form,
                                num_warps=8, num_stages=3)
    np.testing.assert_array_equal(out.cpu().numpy(), want)
    np.testing.assert_array_equal(extra.cpu().numpy(), want_extra)
