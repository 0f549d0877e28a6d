"""A product's operand held as tensor-core fragments — an earlier product's result, cast,
or its `tl.trans` — goes to its shared-memory tile by `stmatrix` on sm_90 (16 bytes a lane
per four register pairs) where it went a register pair (4 bytes) at a time
(`render_dot.DotWriter.fragment_staging`).  fla's WY-representation backward stages four
such operands per loop iteration: 392 shared stores against Triton's 124.  Checked in the
source, by evaluating the stores with the layouts' own coordinates, on the interpreter
against NumPy, compiled by NVRTC, and on the GPU."""

from __future__ import annotations

import numpy as np
import pytest

import tilecc
import tilecc.language as tl

try:
    from conftest_compilers import require_cuda_compiler
    from test_coalesce import stmatrix_lands
    from test_compile_kernels import assert_clean_compile
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import require_cuda_compiler
    from tests.test_coalesce import stmatrix_lands
    from tests.test_compile_kernels import assert_clean_compile


@tilecc.jit
def chained(a_ptr, b_ptr, c_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr,
            K: tl.constexpr, D: tl.constexpr):
    """p = a @ b (M x N) cast to a's type, then three products that read it: c @ p (B as it
    is), e @ p^T (B transposed) and p^T @ f (A transposed), stored one after another."""
    m, n, k, d = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K), tl.arange(0, D)
    a = tl.load(a_ptr + m[:, None] * K + k[None, :])
    b = tl.load(b_ptr + k[:, None] * N + n[None, :])
    p = tl.dot(a, b).to(a.dtype)
    c = tl.load(c_ptr + d[:, None] * M + m[None, :])
    o1 = tl.dot(c, p)
    e = tl.load(c_ptr + d[:, None] * N + n[None, :])
    o2 = tl.dot(e, tl.trans(p))
    f = tl.load(c_ptr + m[:, None] * D + d[None, :])
    o3 = tl.dot(tl.trans(p), f)
    tl.store(out_ptr + d[:, None] * N + n[None, :], o1)
    tl.store(out_ptr + D * N + d[:, None] * M + m[None, :], o2)
    tl.store(out_ptr + D * N + D * M + n[:, None] * D + d[None, :], o3)


SHAPES = [(64, 64, 32, 64), (128, 64, 16, 32), (64, 128, 32, 64)]  # M, N, K, D
CASES = [(shape, warps) for shape in SHAPES for warps in (2, 4, 8)]
STAGED = {"o1_b": 0, "o2_b": 1, "o3_a": 1}  # each product's tile of p: p's fragment rows' axis


def _signature(shape, dtype: str = "fp16") -> str:
    return f"*{dtype},*{dtype},*{dtype},*fp32," + ",".join(map(str, shape))


def _case(shape, seed: int):
    """Small integers: every product exact in fp16, bf16 and fp32."""
    M, N, K, D = shape
    rng = np.random.default_rng(seed)
    a, b = rng.integers(-1, 2, (M, K)), rng.integers(-1, 2, (K, N))
    c = rng.integers(-1, 2, max(D * M, D * N))
    return a, b, c


def _reference(shape, a, b, c) -> np.ndarray:
    M, N, K, D = shape
    p = a @ b
    o1 = c[:D * M].reshape(D, M) @ p
    o2 = c[:D * N].reshape(D, N) @ p.T
    o3 = p.T @ c[:M * D].reshape(M, D)
    return np.concatenate([o1.ravel(), o2.ravel(), o3.ravel()]).astype(np.float64)


@pytest.mark.parametrize("shape,warps", CASES)
def test_fragments_are_staged_by_stmatrix_on_sm_90(shape, warps) -> None:
    """Each of the three tiles of p is written by stmatrix (mma.sync at 2 warps, wgmma or
    mma.sync at 4 and 8); the loaded operands are not; sm_80 has no stmatrix."""
    src = chained.source(_signature(shape), arch="sm_90a", num_warps=warps)
    for tile in STAGED:
        assert f"tc::stmatrix_x4(tc::smem_address({tile} +" in src, tile
    assert src.count("tc::stmatrix_x4(") == len(STAGED)
    assert "stmatrix" not in chained.source(_signature(shape), arch="sm_80",
                                            num_warps=warps).split("#include")[-1]


class _Transposed:
    """A 2-D placement's coordinates with its axes swapped (`stmatrix_lands` walks the
    fragments' rows along axis 0)."""

    def __init__(self, p) -> None:
        self.p, self.regs = p, p.regs

    def coords(self, thread: int, r: int, warp_size: int) -> tuple[int, int]:
        row, col = self.p.coords(thread, r, warp_size)
        return col, row


@pytest.mark.parametrize("shape,warps", CASES)
def test_every_element_of_p_lands_where_the_product_reads_it(shape, warps) -> None:
    """stmatrix's stores of each staged operand, evaluated with its layout's own coordinates
    (`stmatrix_lands`, written apart from the renderer's check): every element of the tile
    lands where `operand_place` (what the products read) puts it, each block's rows in 8
    bank groups."""
    from tilecc.transpiler.ir import walk
    from tilecc.transpiler.passes.dot import operand_place

    kernel, _ = chained.lower(chained._specs(_signature(shape), {}), "cuda", warps,
                              arch="sm_90a")
    dots = [op for op in walk(kernel.body) if op.kind == "dot"]
    assert len(dots) == 4
    for dot, (which, axis) in zip(dots[1:], [(1, 0), (1, 1), (0, 1)]):
        x = dot.operands[which]
        rows, cols = x.type.shape
        if axis == 0:
            p = x.layout

            def place(row: int, col: int) -> int:
                return operand_place(dot, which, row, col)
        else:
            p = _Transposed(x.layout)

            def place(row: int, col: int) -> int:
                return operand_place(dot, which, col, row)
        assert len(stmatrix_lands(p, warps, place)) == rows * cols


def test_interpreter_chained() -> None:
    for shape in SHAPES:
        a, b, c = _case(shape, seed=sum(shape))
        M, N, K, D = shape
        out = np.zeros(D * N + D * M + N * D, np.float32)
        chained.interpret[(1,)](a.astype(np.float16), b.astype(np.float16),
                                c.astype(np.float16), out, *shape)
        np.testing.assert_array_equal(out, _reference(shape, a, b, c))


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_chained_compiles_cleanly(dtype) -> None:
    """From 4 warps (at 2, a thread holds every product's accumulators, up to 128
    registers each: they spill on sm_80, and at N 128 on sm_90 too, whatever the stores)."""
    require_cuda_compiler()
    for shape, warps in CASES:
        for arch in ("sm_90a", "sm_80") if warps > 2 else ():
            assert_clean_compile(chained, _signature(shape, dtype), "cuda", arch,
                                 num_warps=warps)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("shape,warps", CASES)
def test_gpu_chained(shape, warps, dtype) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    a, b, c = _case(shape, seed=sum(shape) + warps)
    M, N, K, D = shape
    dt = getattr(torch, dtype)
    args = [torch.from_numpy(x).cuda().to(dt) for x in (a, b, c)]
    out = torch.full((D * N + D * M + N * D,), 7.0, device="cuda")
    chained[(1,)](*args, out, *shape, num_warps=warps)
    np.testing.assert_array_equal(out.cpu().numpy().astype(np.float64),
                                  _reference(shape, a, b, c))
