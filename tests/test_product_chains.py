"""Chains of small products over one chunk of rows, as linear-attention libraries write their
backward kernels: a square block read transposed from memory and used as either operand of
four products, a gradient accumulated over loops of `tl.dot(g, tl.trans(xs))`, masked to
its strict lower triangle and multiplied from both sides, then a second pass that reads
back what the first stored.  Every block is 64 x 64 or smaller, at 2, 4 and 8 warps
(libraries run these at 2 on Hopper).

Triton 3.6 computes a kernel of this form wrongly on an H100/H200 at 4 warps (errors of
the order of the results, at head dims of 32), which is why such libraries pin 2 warps
there; these tests hold tilecc to a float64 reference at every warp count.  Checked on the
interpreter, compiled by NVRTC and hiprtc, and on the GPU."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tilecc
import tilecc.language as tl

try:
    from conftest_compilers import (clean_log_problem, require_cuda_compiler,
                                    require_hip_compiler)
    from test_compile_kernels import assert_clean_compile
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import (clean_log_problem, require_cuda_compiler,
                                          require_hip_compiler)
    from tests.test_compile_kernels import assert_clean_compile


@tilecc.jit
def chunk_backward(a_ptr, x_ptr, dy_ptr, s_ptr, dx_ptr, ds_ptr, T, D: tl.constexpr,
                   BT: tl.constexpr, BD: tl.constexpr):
    """One chunk of BT rows a program: `a` is T x BT (a square block per chunk, read
    transposed), `x`, `dy` and `dx` are T x D, `s` and `ds` are T."""
    rows = tl.program_id(0) * BT + tl.arange(0, BT)
    live = rows < T
    s = tl.load(s_ptr + rows, mask=live, other=0.0)
    # at[i, j] = a[rows[j], i]: contiguous along axis 0
    at = tl.load(a_ptr + tl.arange(0, BT)[:, None] + rows[None, :] * BT, mask=live[None, :],
                 other=0.0)
    grad = tl.zeros([BT, BT], dtype=tl.float32)
    ds = tl.zeros([BT], dtype=tl.float32)
    for d0 in range(0, D, BD):
        cols = d0 + tl.arange(0, BD)
        ok = live[:, None] & (cols[None, :] < D)
        x = tl.load(x_ptr + rows[:, None] * D + cols[None, :], mask=ok, other=0.0)
        xs = (x * s[:, None]).to(x.dtype)
        g = tl.load(dy_ptr + rows[:, None] * D + cols[None, :], mask=ok, other=0.0)
        grad = tl.dot(g, tl.trans(xs), grad)
        back = tl.dot(at, g)
        ds += tl.sum(back * x, 1)
        tl.store(dx_ptr + rows[:, None] * D + cols[None, :],
                 (back * s[:, None]).to(dx_ptr.dtype.element_ty), mask=ok)
    below = tl.arange(0, BT)[:, None] > tl.arange(0, BT)[None, :]
    grad = tl.where(below, grad, 0)
    grad = tl.dot(grad.to(at.dtype), at)
    grad = tl.dot(at, grad.to(at.dtype))
    grad = tl.where(below, -grad, 0).to(at.dtype)
    for d0 in range(0, D, BD):
        cols = d0 + tl.arange(0, BD)
        ok = live[:, None] & (cols[None, :] < D)
        x = tl.load(x_ptr + rows[:, None] * D + cols[None, :], mask=ok, other=0.0)
        dx = tl.load(dx_ptr + rows[:, None] * D + cols[None, :], mask=ok, other=0.0)
        xs = (x * s[:, None]).to(x.dtype)
        t = tl.dot(grad, x)
        ds += tl.sum(t * x, 1)
        dx += tl.dot(tl.trans(grad), xs)
        dx += t * s[:, None]
        tl.store(dx_ptr + rows[:, None] * D + cols[None, :],
                 dx.to(dx_ptr.dtype.element_ty), mask=ok)
    tl.store(ds_ptr + rows, ds, mask=live)


SIG = "*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp32:16,i32,{d},64,{bd}"
BT = 64


def _inputs(T: int, D: int, seed: int):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal((T, BT)) * 0.1).astype(np.float16)
    x = (rng.standard_normal((T, D)) * 0.5).astype(np.float16)
    dy = (rng.standard_normal((T, D)) * 0.5).astype(np.float16)
    s = rng.uniform(0.1, 1.0, T).astype(np.float16)
    return a, x, dy, s


def _reference(a, x, dy, s):
    """(dx, ds) in float64, rounded to float16 where the kernel casts (a block of fp16
    times a row of fp16 is an fp16 product, as in Triton)."""
    T, D = x.shape
    h = np.float16
    dx_all, ds_all = np.zeros((T, D), h), np.zeros(T, np.float64)
    for c0 in range(0, T, BT):
        n = min(BT, T - c0)
        at = np.zeros((BT, BT))
        at[:, :n] = a[c0:c0 + n].T
        xc, gc, sc = (np.zeros((BT, D), h), np.zeros((BT, D), h), np.zeros(BT, h))
        xc[:n], gc[:n], sc[:n] = x[c0:c0 + n], dy[c0:c0 + n], s[c0:c0 + n]
        xs = (xc * sc[:, None]).astype(h).astype(np.float64)
        x64, g64, s64 = xc.astype(np.float64), gc.astype(np.float64), sc.astype(np.float64)
        grad = g64 @ xs.T
        back = at @ g64
        ds = (back * x64).sum(1)
        dx = (back * s64[:, None]).astype(h).astype(np.float64)
        below = np.tril(np.ones((BT, BT), bool), -1)
        grad = np.where(below, grad, 0).astype(h).astype(np.float64) @ at
        grad = at @ grad.astype(h).astype(np.float64)
        grad = np.where(below, -grad, 0).astype(h).astype(np.float64)
        t = grad @ x64
        ds += (t * x64).sum(1)
        dx = dx + grad.T @ xs + t * s64[:, None]
        dx_all[c0:c0 + n], ds_all[c0:c0 + n] = dx[:n].astype(h), ds[:n]
    return dx_all, ds_all


def _check(dx, ds, want_dx, want_ds) -> None:
    # fp32 sums beside float64 ones, rounded to fp16 at the casts: within a few fp16 ulps
    # of the largest element (an error of Triton's kind is of the order of the results)
    np.testing.assert_allclose(dx.astype(np.float64), want_dx.astype(np.float64),
                               rtol=2e-2, atol=1e-2 * np.abs(want_dx.astype(np.float64)).max())
    np.testing.assert_allclose(ds, want_ds, rtol=2e-2, atol=1e-2 * np.abs(want_ds).max())


SHAPES = [(100, 32, 32), (192, 64, 64), (130, 100, 32)]  # (T, D, BD): ragged rows and columns


@pytest.mark.parametrize("T,D,BD", SHAPES)
def test_interpreter_chunk_backward(T, D, BD) -> None:
    a, x, dy, s = _inputs(T, D, seed=T + D)
    dx, ds = np.full((T, D), 7, np.float16), np.full(T, 7, np.float32)
    chunk_backward.interpret[(tilecc.cdiv(T, BT),)](a, x, dy, s, dx, ds, T, D=D, BT=BT, BD=BD)
    _check(dx, ds, *_reference(a, x, dy, s))


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_operands_running_along_axis_0_are_staged_in_vectors(arch) -> None:
    """`at` (contiguous along M where it is A, along K where it is B) and `tl.trans(xs)`
    (along K) go to their tiles with their rows along that axis, a vector a thread's run,
    and ldmatrix reads them with the other `.trans`; no element of `at` is stored alone."""
    src = chunk_backward.source(SIG.format(d=32, bd=32), arch=arch, num_warps=2,
                                num_stages=2)
    assert "tc::ldmatrix_x4_trans(a_frag" in src  # A M-major
    assert re.search(r"tc::ldmatrix_x4\(b_frag\[\w+\]\[ni\]\[0\]", src)  # B K-major
    assert not re.search(r"\] = at\[r\];", src)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_chunk_backward_compiles_cleanly_for_cuda(arch) -> None:
    require_cuda_compiler()
    for warps in (4, 8):
        assert_clean_compile(chunk_backward, SIG.format(d=32, bd=32), "cuda", arch,
                             num_warps=warps, num_stages=2)
    # at 2 warps the 64 x 64 blocks take 64 fp32 registers a thread each: a few bytes may
    # spill (Triton's build spills none), and nothing else may be unclean
    binary = chunk_backward.compile(SIG.format(d=32, bd=32), arch=arch, num_warps=2,
                                    num_stages=2)
    assert clean_log_problem(binary.log or "", "cuda", spills_ok=True) is None
    assert re.search(r"bytes spill stores", binary.log or "")
    assert_clean_compile(chunk_backward, SIG.format(d=100, bd=32), "cuda", arch, num_warps=4,
                         num_stages=3)


def test_chunk_backward_compiles_cleanly_for_hip() -> None:
    require_hip_compiler()
    for warps in (2, 4):
        assert_clean_compile(chunk_backward, SIG.format(d=64, bd=64), "hip", "gfx90a",
                             num_warps=warps, num_stages=2)


@pytest.mark.gpu
@pytest.mark.parametrize("warps,stages", [(2, 2), (4, 2), (4, 3), (8, 2)])
@pytest.mark.parametrize("T,D,BD", SHAPES)
def test_gpu_chunk_backward(warps, stages, T, D, BD) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    a, x, dy, s = _inputs(T, D, seed=T + D)
    dx = torch.full((T, D), 7.0, device="cuda", dtype=torch.float16)
    ds = torch.full((T,), 7.0, device="cuda")
    chunk_backward[(tilecc.cdiv(T, BT),)](
        *(torch.from_numpy(v).cuda() for v in (a, x, dy, s)), dx, ds, T, D=D, BT=BT, BD=BD,
        num_warps=warps, num_stages=stages)
    _check(dx.cpu().numpy(), ds.cpu().numpy(), *_reference(a, x, dy, s))


# --- a product of a product: A straight from the first product's registers ----------------

@tilecc.jit
def product_of_product(a_ptr, b_ptr, c_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr,
                       K: tl.constexpr, L: tl.constexpr):
    """(a @ b) cast to a's type, then @ c: on mma.sync with the warps all along M the
    second product's A is the first's accumulator registers, paired (no shared memory)."""
    rm, rn, rk, rl = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K), tl.arange(0, L)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    p = tl.dot(a, b)
    c = tl.load(c_ptr + rn[:, None] * L + rl[None, :])
    tl.store(out_ptr + rm[:, None] * L + rl[None, :], tl.dot(p.to(a.dtype), c))


# (M, N, K, L, warps): the first four split the second product along M only (its A from
# registers), the last two along N too
CHAINS = [(16, 16, 16, 16, 1), (64, 64, 32, 32, 2), (128, 64, 64, 64, 4), (128, 32, 16, 16, 8),
          (32, 128, 16, 64, 2), (64, 32, 64, 128, 8)]


def _chain_case(M, N, K, L, seed):
    rng = np.random.default_rng(seed)
    # small integers and halves: exact in fp16 / bf16, sums exact in fp32, so only the
    # rounding of p to the input type differs from float64, and it is reproduced
    a, b, c = ((rng.integers(-4, 5, s) / 2).astype(np.float32) for s in ((M, K), (K, N), (N, L)))
    p = a.astype(np.float64) @ b.astype(np.float64)
    return a, b, c, p


def _np_type(dtype: str):
    import ml_dtypes
    return ml_dtypes.bfloat16 if dtype == "bf16" else np.float16


def _round(x, dtype):
    return x.astype(_np_type(dtype)).astype(np.float64)


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("M,N,K,L,warps", CHAINS[:3])
def test_interpreter_product_of_product(M, N, K, L, warps, dtype) -> None:
    a, b, c, p = _chain_case(M, N, K, L, seed=M + N + K)
    t = _np_type(dtype)
    out = np.zeros((M, L), np.float32)
    product_of_product.interpret[(1,)](a.astype(t), b.astype(t), c.astype(t), out, M=M, N=N,
                                       K=K, L=L)
    np.testing.assert_array_equal(out, _round(p, dtype) @ c.astype(np.float64))


@pytest.mark.parametrize("M,N,K,L,warps", CHAINS)
def test_second_product_takes_a_from_registers(M, N, K, L, warps) -> None:
    sig = f"*fp16:16,*fp16:16,*fp16:16,*fp32:16,{M},{N},{K},{L}"
    src = product_of_product.source(sig, arch="sm_80", num_warps=warps)
    header = src.split("#include")[0]
    second = [line for line in header.splitlines() if "mma.sync" in line][-1]
    split_along_m = re.search(r"(\d+) x 1 warps", second) is not None
    assert ("A from registers" in second) == split_along_m, second


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_product_of_product_compiles_cleanly(arch) -> None:
    require_cuda_compiler()
    for M, N, K, L, warps in CHAINS:
        for dtype in ("fp16", "bf16"):
            assert_clean_compile(product_of_product,
                                 f"*{dtype}:16,*{dtype}:16,*{dtype}:16,*fp32:16,{M},{N},{K},{L}",
                                 "cuda", arch, num_warps=warps)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("M,N,K,L,warps", CHAINS)
def test_gpu_product_of_product(M, N, K, L, warps, dtype) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    a, b, c, p = _chain_case(M, N, K, L, seed=M + N + K)
    t = torch.bfloat16 if dtype == "bf16" else torch.float16
    out = torch.full((M, L), 7.0, device="cuda")
    product_of_product[(1,)](*(torch.from_numpy(x).cuda().to(t) for x in (a, b, c)), out,
                             M=M, N=N, K=K, L=L, num_warps=warps)
    np.testing.assert_array_equal(out.cpu().numpy(), _round(p, dtype) @ c.astype(np.float64))


@pytest.mark.parametrize("M,N,K,L,warps", CHAINS[:4])
def test_a_register_fragments_are_the_instruction_fragments(M, N, K, L, warps) -> None:
    """Each register of mma.sync's A fragment, taken from the accumulator-layout registers
    (`render_dot.a_fragment_register`), holds the elements PTX's m16n8k16 fragment layout
    gives it: register j of lane l in tile mi, step kk is row 8 (j % 2) + l / 4 of the
    tile's rows, columns 16 kk + 8 (j / 2) + 2 (l % 4) + [0, 2)."""
    from tilecc.transpiler.render_dot import a_fragment_register
    from tilecc.transpiler.target import CUDA

    sig = f"*fp16:16,*fp16:16,*fp16:16,*fp32:16,{M},{N},{K},{L}"
    built = product_of_product.build(product_of_product._specs(sig, {}), CUDA, warps,
                                     arch="sm_80")
    second = [op for op in built.kernel.walk() if op.kind == "dot"][-1]
    plan = second.attrs["plan"]
    assert plan.a_from_registers
    a = second.operands[0]
    wm = plan.warps[0]
    for warp in range(warps):
        for lane in range(32):
            thread = warp * 32 + lane
            for mi in range(M // (16 * wm)):
                # the tile's rows: 8-row groups 2 mi and 2 mi + 1 of the warp (as the
                # product's C fragment and its ldmatrix'd A are placed)
                rows = [(2 * mi + h) * 8 * wm + warp * 8 + lane // 4 for h in (0, 1)]
                for kk in range(N // 16):
                    for j in range(4):
                        h, c = j % 2, j // 2
                        r = eval(a_fragment_register(mi, h, c, N, str(kk)))
                        for e in (0, 1):
                            assert a.layout.coords(thread, r + e, 32) == \
                                (rows[h], 16 * kk + 8 * c + 2 * (lane % 4) + e)
