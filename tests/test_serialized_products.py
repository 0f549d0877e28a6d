"""A pipelined loop of two warpgroup products whose second, accumulating only, leaves its
wait to the next iteration's first (`Pipeline.deferred`), where the first product's result,
masked by its row and column indices, becomes the second's A from registers: ptxas
serializes every warpgroup MMA of the kernel for it (its note C7515).  The compile then
builds the kernel again with each product waited for where it is issued
(`CompileOptions.deferred_products`, `compiler.compile`).  On an H200 that build ran this
file's kernel 1.31–2.04x faster than the serialized one (N 16384, head dims 64 and 128,
five block configurations).  Checked in the compile's choice, the logs, on the interpreter
against NumPy, and on the GPU."""

from __future__ import annotations

import numpy as np
import pytest

import tilecc
import tilecc.language as tl
from tilecc.runtime import compiler

try:
    from conftest_compilers import clean_log_problem, require_cuda_compiler
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import clean_log_problem, require_cuda_compiler


@tilecc.jit
def causal_products(q_ptr, k_ptr, v_ptr, out_ptr, N, D: tl.constexpr, BM: tl.constexpr,
                    BN: tl.constexpr):
    """q, k, v and out are N x D: per block of BM rows, out = (q @ k^T, each row's columns
    after it masked) @ v, over every column up to the block's last row."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    d = tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * D + d[None, :], mask=rm[:, None] < N, other=0.0)
    acc = tl.zeros([BM, D], dtype=tl.float32)
    for n0 in range(0, min((tl.program_id(0) + 1) * BM, N), BN):
        cols = n0 + tl.arange(0, BN)
        live = cols < N
        kt = tl.load(k_ptr + d[:, None] + cols[None, :] * D, mask=live[None, :], other=0.0)
        v = tl.load(v_ptr + cols[:, None] * D + d[None, :], mask=live[:, None], other=0.0)
        s = tl.dot(q, kt)
        s = tl.where((rm[:, None] >= cols[None, :]) & live[None, :], s, 0.0)
        acc = tl.dot(s.to(q.dtype), v, acc)
    tl.store(out_ptr + rm[:, None] * D + d[None, :], acc, mask=rm[:, None] < N)


SIG = "*fp16:16,*fp16:16,*fp16:16,*fp32:16,i32,{d},{bm},{bn}"
CONFIGS = [(64, 128, 64, 8, 3), (64, 64, 32, 4, 4), (128, 64, 64, 4, 3)]  # D, BM, BN, w, s


def _specs(d: int, bm: int, bn: int):
    return causal_products._specs(SIG.format(d=d, bm=bm, bn=bn), {})


@pytest.mark.parametrize("d,bm,bn,warps,stages", CONFIGS)
def test_the_deferred_build_is_serialized_and_the_compile_takes_the_other(
        d, bm, bn, warps, stages) -> None:
    """As written the loop defers its second product's wait, and ptxas serializes that
    build (C7515); the compiled kernel is the build without deferred products, whose log
    is clean."""
    require_cuda_compiler()
    options = causal_products.options(num_warps=warps, num_stages=stages, arch="sm_90a")
    target = compiler.resolve_target("cuda", "sm_90a")
    deferred = compiler.transpile(causal_products, _specs(d, bm, bn), target, options)
    assert "retired by the next product's wait" in deferred.source
    assert "C7515" in compiler.compile_source(deferred, target).log
    art = compiler.compile(causal_products, _specs(d, bm, bn), target, options)
    assert "retired by the next product's wait" not in art.source
    assert clean_log_problem(art.binary.log, "cuda") is None, art.binary.log


def test_only_a_serialized_build_with_deferred_products_is_built_again(monkeypatch) -> None:
    """The compile builds again only where ptxas's log says it serialized the warpgroup
    products and the kernel defers one: once, without deferring; a log without the note,
    or a kernel deferring nothing, keeps its first build (the native compiler stood in for
    by a log)."""
    from tilecc.runtime.binary import Binary

    built = []

    def fake_compile(art, target, log):
        built.append(art.options.deferred_products)
        return Binary(target.name, target.arch, b"\0", log, 0, (), 0)

    target = compiler.resolve_target("cuda", "sm_90a")
    monkeypatch.setenv("TILECC_CACHE", "0")
    note = ("ptxas info    : (C7515) Potential Performance Loss: wgmma.mma_async "
            "instructions are serialized due to ...")
    cases = [(3, note, [True, False]), (3, "ptxas info    : Used 90 registers", [True]),
             (1, note, [True])]  # one stage: not pipelined, nothing deferred
    try:
        for stages, log, expected in cases:
            built.clear()
            monkeypatch.setattr(compiler, "compile_source",
                                lambda art, tgt, log=log: fake_compile(art, tgt, log))
            compiler._compiled.clear()
            options = causal_products.options(num_warps=8, num_stages=stages, arch="sm_90a")
            compiler.compile(causal_products, _specs(64, 128, 64), target, options)
            assert built == expected, (stages, log)
    finally:
        compiler._compiled.clear()  # (the stand-in builds)


def _case(N: int, D: int, seed: int):
    rng = np.random.default_rng(seed)
    return [(rng.integers(-2, 3, (N, D)) / 2).astype(np.float16) for _ in range(3)]


def _reference(q, k, v) -> np.ndarray:
    """float64, the masked scores rounded to fp16 as the kernel casts them (exact before)."""
    N = q.shape[0]
    s = q.astype(np.float64) @ k.astype(np.float64).T
    rows = np.arange(N)
    s = np.where(rows[:, None] >= rows[None, :], s, 0).astype(np.float16)
    return s.astype(np.float64) @ v.astype(np.float64)


def test_interpreter_causal_products() -> None:
    N, D, BM, BN = 150, 64, 64, 32
    q, k, v = _case(N, D, seed=3)
    out = np.zeros((N, D), np.float32)
    causal_products.interpret[(tilecc.cdiv(N, BM),)](q, k, v, out, N, D=D, BM=BM, BN=BN)
    np.testing.assert_array_equal(out, _reference(q, k, v))


@pytest.mark.gpu
@pytest.mark.parametrize("d,bm,bn,warps,stages", CONFIGS)
@pytest.mark.parametrize("N", [200, 1000])
def test_gpu_causal_products(N, d, bm, bn, warps, stages) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    q, k, v = _case(N, d, seed=N + d)
    out = torch.full((N, d), 7.0, device="cuda")
    causal_products[(tilecc.cdiv(N, bm),)](*(torch.from_numpy(x).cuda() for x in (q, k, v)),
                                           out, N, D=d, BM=bm, BN=bn, num_warps=warps,
                                           num_stages=stages)
    np.testing.assert_array_equal(out.cpu().numpy(), _reference(q, k, v))
