"""Compiler hints (`tl.multiple_of`, `tl.max_contiguous`, `tl.max_constancy`) as Triton 3.6
takes them: one value per axis (a list or a tuple, or an int for a scalar or a 1-D block),
attached to the value itself, so that a hint written as a statement holds too; what they
promise reaches the axis analysis, and so the vector widths of loads and stores."""

from __future__ import annotations

import numpy as np
import pytest

import tilecc
import tilecc.language as tl
from tilecc.transpiler.passes.axis_info import info

try:
    from conftest_compilers import require_cuda_compiler, require_hip_compiler
    from test_compile_kernels import assert_clean_compile
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import require_cuda_compiler, require_hip_compiler
    from tests.test_compile_kernels import assert_clean_compile


@tilecc.jit
def tile_copy_kernel(src, dst, stride, n_cols, BM: tl.constexpr, BN: tl.constexpr,
                     HINT: tl.constexpr):
    # rows `stride` elements apart: without a promise nothing says a row starts aligned
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    src_ptrs = src + rows[:, None] * stride + cols[None, :]
    dst_ptrs = dst + rows[:, None] * n_cols + cols[None, :]
    if HINT == "statement":  # as grouped GEMM writes it: the result is not used
        tl.multiple_of(src_ptrs, [16, 16])
        tl.max_contiguous(src_ptrs, (1, BN))
        tl.multiple_of(dst_ptrs, [16, 16])
    elif HINT == "assigned":
        src_ptrs = tl.max_contiguous(tl.multiple_of(src_ptrs, (16, 16)), [1, BN])
        dst_ptrs = tl.multiple_of(dst_ptrs, [16, 16])
    tl.store(dst_ptrs, tl.load(src_ptrs) * 2.0)


SIG = "*fp32:16,*fp32:16,i32,i32,16,32,"


def _ptr_plans(hint: str, target: str = "cuda"):
    ir = tile_copy_kernel.ir(SIG + repr(hint), target=target)
    (load,) = [op for op in ir.walk() if op.kind == "load"]
    (store,) = [op for op in ir.walk() if op.kind == "store"]
    return load, store


@pytest.mark.parametrize("hint", ["statement", "assigned"])
def test_per_axis_hints_reach_the_axis_analysis(hint) -> None:
    load, store = _ptr_plans(hint)
    ptrs = info(load.operands[0])
    assert ptrs.divisibility == (16, 16) and ptrs.contiguity == (1, 32)
    assert info(store.operands[0]).divisibility == (16, 16)
    # fp32 rows promised 16-byte aligned: 4-wide vectors, loads and stores alike
    assert load.attrs["plan"].vec == 4 and store.attrs["plan"].vec == 4


def test_without_hints_rows_of_unknown_stride_are_read_element_by_element() -> None:
    load, store = _ptr_plans("none")
    assert load.attrs["plan"].vec == 1 and store.attrs["plan"].vec == 1


@pytest.mark.parametrize("hint", ["statement", "assigned", "none"])
def test_hinted_kernel_copies_on_the_interpreter(hint) -> None:
    rng = np.random.default_rng(0)
    src = rng.standard_normal((32, 48)).astype(np.float32)
    dst = np.zeros((32, 32), np.float32)
    tile_copy_kernel.interpret[(2,)](src, dst, 48, 32, BM=16, BN=32, HINT=hint)
    np.testing.assert_array_equal(dst, src[:, :32] * 2)


@pytest.mark.parametrize("target, arch", [("cuda", "sm_80"), ("hip", "gfx90a")])
def test_hinted_kernel_compiles(target, arch) -> None:
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    assert_clean_compile(tile_copy_kernel, SIG + "'statement'", target, arch)


@tilecc.jit
def hinted_loop_kernel(a, out, n, stride, BLOCK: tl.constexpr):
    # a loop-carried pointer block hinted inside the loop (`stride` has no promise)
    ptrs = a + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for _ in range(n):
        tl.multiple_of(ptrs, 16)
        tl.max_constancy(stride, (1,))  # a scalar: one value, in a tuple or not
        acc += tl.load(ptrs)
        ptrs += stride
    tl.store(out + tl.arange(0, BLOCK), acc)


def test_hints_on_loop_carried_values_and_scalars() -> None:
    ir = hinted_loop_kernel.ir("*fp32:16,*fp32:16,i32,i32,512")
    (load,) = [op for op in ir.walk() if op.kind == "load"]
    assert load.operands[0].hints == {"multiple_of": (16,)}
    assert info(load.operands[0]).divisibility == (16,) and load.attrs["plan"].vec == 4
    a = np.arange(64 * 3, dtype=np.float32)
    out = np.zeros(64, np.float32)
    hinted_loop_kernel.interpret[(1,)](a, out, 3, 64, BLOCK=64)
    np.testing.assert_array_equal(out, a.reshape(3, 64).sum(axis=0))


@tilecc.jit
def bad_hint_kernel(x, BLOCK: tl.constexpr, CASE: tl.constexpr):
    rows = tl.arange(0, BLOCK)
    ptrs = x + rows[:, None] * BLOCK + rows[None, :]
    if CASE == "one for two axes":
        ptrs = tl.multiple_of(ptrs, 16)
    elif CASE == "three for two axes":
        ptrs = tl.max_contiguous(ptrs, [1, 16, 16])
    elif CASE == "not an int":
        ptrs = tl.max_constancy(ptrs, [1, 2.0])
    elif CASE == "run-time value":
        ptrs = tl.multiple_of(ptrs, [16, tl.program_id(0)])
    tl.store(ptrs, 1.0)


@pytest.mark.parametrize("case, kind, words", [
    ("one for two axes", "ValueError", "tl.multiple_of: 1 value for a 2-D block: give one per "
                                       "axis (2), e.g. tl.multiple_of(x, [16, 16])"),
    ("three for two axes", "ValueError", "3 values for a 2-D block"),
    ("not an int", "TypeError", "values element 1 must be a constexpr int, got 2.0"),
    ("run-time value", "TypeError", "not a value known only at run time"),
])
def test_hint_values_are_checked_as_triton_checks_them(case, kind, words) -> None:
    with pytest.raises(tilecc.CompilationError) as e:
        bad_hint_kernel.source(f"*fp32:16,16,{case!r}")
    assert words in str(e.value) and e.value.python_error == kind


@pytest.mark.gpu
@pytest.mark.parametrize("hint", ["statement", "assigned"])
def test_hinted_kernel_on_gpu(hint) -> None:
    torch = pytest.importorskip("torch")
    src = torch.randn(32, 48, device="cuda")  # rows 48 floats apart: 16-byte aligned
    dst = torch.zeros(32, 32, device="cuda")
    tile_copy_kernel[(2,)](src, dst, 48, 32, BM=16, BN=32, HINT=hint)
    assert torch.equal(dst, src[:, :32] * 2)
