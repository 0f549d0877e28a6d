"""passes.early_loads: in a pipelined loop, the loads the pipeline does not copy move ahead
of the products (with the index arithmetic they read), never above a side effect; the
interpreter runs the same order, so a load of what the body stores still sees it."""

from __future__ import annotations

import re

import numpy as np

import tilecc
import tilecc.language as tl

try:
    from test_blocks import load_example
except ImportError:  # tests/ imported as a package
    from tests.test_blocks import load_example

A = load_example("attention")


@tilecc.jit
def scaled_products(X, W, S, O, K, BM: tl.constexpr, BK: tl.constexpr, STORE: tl.constexpr):
    rm = tl.arange(0, BM)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BM), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(X + rm[:, None] * K + (k + rk)[None, :])
        w = tl.load(W + (k + rk)[:, None] * BM + rm[None, :])
        p = tl.dot(x, w)
        if STORE:  # written, then read back by the load below
            tl.store(S + k // BK * BM + rm, (rm + k).to(tl.float32))
        s = tl.load(S + k // BK * BM + rm)  # written after the product
        acc = p * s[:, None] + acc
    tl.store(O + rm[:, None] * BM + rm[None, :], acc)


SIG = "*fp16:16,*fp16:16,*fp32:16,*fp32:16,i32:16,64,32,{}"


def _loop(src: str) -> str:
    body = src.split("#include")[1]
    return body[re.search(r"for \(int k\w* = 0;", body).start():]


def test_a_load_beside_the_products_moves_ahead_of_them() -> None:
    loop = _loop(scaled_products.source(SIG.format(False), arch="sm_80", num_stages=3))
    assert loop.index("s = tl.load(") < loop.index("tc::mma_")


def test_a_load_after_a_store_stays_after_it() -> None:
    loop = _loop(scaled_products.source(SIG.format(True), arch="sm_80", num_stages=3))
    assert loop.index("tl.store(S") < loop.index("s = tl.load(")


def test_the_interpreter_reads_back_what_the_body_stored() -> None:
    rng = np.random.default_rng(0)
    K, BM, BK = 96, 64, 32
    x = (rng.integers(-2, 3, (BM, K)) * 0.5).astype(np.float16)
    w = (rng.integers(-2, 3, (K, BM)) * 0.5).astype(np.float16)
    s = np.zeros(K // BK * BM, np.float32)
    out = np.zeros((BM, BM), np.float32)
    scaled_products.interpret[(1,)](x, w, s, out, K, BM=BM, BK=BK, STORE=True, num_stages=3)
    want = np.zeros((BM, BM))
    for k in range(0, K, BK):
        part = x[:, k:k + BK].astype(np.float64) @ w[k:k + BK].astype(np.float64)
        want += part * (np.arange(BM) + k)[:, None]
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_attention_backward_loads_its_rows_before_the_products() -> None:
    """dK/dV's log-sum-exp and delta rows: issued before the first product, not after the
    second's wait (Hopper)."""
    cfg = A.backward_config(64, False, "sm_90")["dkdv"]
    sig = ("*fp16:16," * 6 + "*fp32:16,*fp32:16,fp32,i32:16,i32:16,i32:16,i32,i32:16,"
           f"64,{cfg['BLOCK_M']},{cfg['BLOCK_N']},False")
    src = A.attention_bwd_dkdv.source(sig, arch="sm_90a", num_warps=cfg["num_warps"],
                                      num_stages=cfg["num_stages"])
    loop = src[src.index("for (int start_m = 0;"):]
    first = loop.index("tc::wgmma_m64n")
    assert loop.index("lse = tl.load(") < first and loop.index("delta = tl.load(") < first


@tilecc.jit
def stored_then_scaled(X, W, S, O, LOG, K, BM: tl.constexpr, BK: tl.constexpr):
    # each iteration first logs the running sum (through LOG), then loads its scales
    rm = tl.arange(0, BM)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BM), dtype=tl.float32)
    for k in range(0, K, BK):
        tl.store(LOG + k // BK * BM + rm, tl.sum(acc, 1))
        x = tl.load(X + rm[:, None] * K + (k + rk)[None, :])
        w = tl.load(W + (k + rk)[:, None] * BM + rm[None, :])
        last = tl.minimum(k + BK, K) - 1
        top = tl.load(S + last)  # a scalar, through a named index
        s = tl.load(S + k + rm % BK)
        acc = tl.dot(x, w) * s[:, None] * top + acc
    tl.store(O + rm[:, None] * BM + rm[None, :], acc)


def test_loads_move_above_a_store_through_another_argument() -> None:
    """The scales (a block and a scalar read through a named index) move above the store
    of the log, which writes another argument; before, the store kept both below it."""
    sig = "*fp16:16,*fp16:16,*fp32:16,*fp32:16,*fp32:16,i32:16,64,32"
    loop = _loop(stored_then_scaled.source(sig, arch="sm_90a", num_stages=3))
    store = loop.index("tl.store(LOG")
    assert loop.index("s = tl.load(") < store and loop.index("top = tl.load(") < store
    assert loop.index("const int last =") < loop.index("top = tl.load(")


def test_the_interpreter_runs_the_moved_loads() -> None:
    rng = np.random.default_rng(1)
    K, BM, BK = 96, 64, 32
    x = (rng.integers(-2, 3, (BM, K)) * 0.5).astype(np.float16)
    w = (rng.integers(-2, 3, (K, BM)) * 0.5).astype(np.float16)
    s = rng.integers(1, 4, K).astype(np.float32)
    log = np.zeros(K // BK * BM, np.float32)
    out = np.zeros((BM, BM), np.float32)
    stored_then_scaled.interpret[(1,)](x, w, s, out, log, K, BM=BM, BK=BK, num_stages=3)
    want, logs = np.zeros((BM, BM)), []
    for k in range(0, K, BK):
        logs.append(want.sum(1))
        part = x[:, k:k + BK].astype(np.float64) @ w[k:k + BK].astype(np.float64)
        want += part * s[k + np.arange(BM) % BK][:, None] * s[min(k + BK, K) - 1]
    np.testing.assert_allclose(out, want, rtol=1e-6)
    np.testing.assert_allclose(log, np.concatenate(logs), rtol=1e-6)
