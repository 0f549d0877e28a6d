"""`tl.const` parameters: pointers to data the kernel only reads.  A store through one
(or through a pointer computed from one) is a compile error, and a const pointer is a type
of its own: where a variable holds a const pointer on one path and a plain one on another,
the `if`, the run-time ternary or the helper's returns disagree (Triton's rules and
words).  Also the run-time ternary itself: an `if` that runs only the branch taken."""

from __future__ import annotations

import numpy as np
import pytest

import tilecc
import tilecc.language as tl
from tilecc.errors import CompilationError

try:
    from conftest_compilers import require_cuda_compiler
    from test_compile_kernels import assert_clean_compile
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import require_cuda_compiler
    from tests.test_compile_kernels import assert_clean_compile


@tilecc.jit
def _either(a, b, pick_b):
    if pick_b:
        return b
    return a


@tilecc.jit
def _copy_through_const(src: tl.const, dst, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n) * 2, mask=offs < n)


@tilecc.jit
def _store_to_const(src: tl.const, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(src + 1 + offs, 1.0, mask=offs < n)


@tilecc.jit
def _store_to_const_block_ptr(src: tl.const, n, BLOCK: tl.constexpr):
    p = tl.make_block_ptr(src, (n,), (1,), (0,), (BLOCK,), (0,))
    tl.store(p, tl.zeros((BLOCK,), tl.float32), boundary_check=(0,))


@tilecc.jit
def _store_via_helper(src: tl.const, dst, PICK_CONST: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    target = _either(dst, src, PICK_CONST)
    tl.store(target + offs, 3.0)


@tilecc.jit
def _store_via_static_ternary(src: tl.const, dst, PICK_CONST: tl.constexpr,
                              BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    target = src if PICK_CONST else dst
    tl.store(target + offs, 3.0)


@tilecc.jit
def _pointer_chosen_by_if(src: tl.const, dst, pick, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    if pick:
        target = src
    else:
        target = dst
    tl.store(target + offs, tl.load(src + offs))


@tilecc.jit
def _pointer_chosen_by_ternary(src: tl.const, dst, pick, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    target = src if pick else dst
    tl.store(target + offs, tl.load(src + offs))


@tilecc.jit
def _pointer_chosen_by_helper(src: tl.const, dst, pick, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(_either(dst, src, pick) + offs, tl.load(src + offs))


SIGNATURE = "*fp32, *fp32, i32, 16"


def _message(kernel, signature: str) -> str:
    with pytest.raises(CompilationError) as e:
        kernel.source(signature)
    # `error_message`: the message alone, as Triton's CompilationError has it
    assert e.value.error_message in str(e.value) and "\n" not in e.value.error_message.strip()
    return e.value.error_message


def test_loads_through_const_pointers_run() -> None:
    x = np.arange(10, dtype=np.float32)
    y = np.zeros(10, np.float32)
    _copy_through_const.interpret[(1,)](x, y, 10, BLOCK=16)
    np.testing.assert_array_equal(y, 2 * x)


@pytest.mark.parametrize("kernel,signature", [
    (_store_to_const, "*fp32, i32, 16"),
    (_store_to_const_block_ptr, "*fp32, i32, 16"),
    (_store_via_helper, "*fp32, *fp32, True, 16"),
    (_store_via_static_ternary, "*fp32, *fp32, True, 16"),
])
def test_store_through_a_const_pointer_is_refused(kernel, signature) -> None:
    assert "Cannot store to a constant pointer" in _message(kernel, signature)


@pytest.mark.parametrize("kernel", [_store_via_helper, _store_via_static_ternary])
def test_plain_pointer_chosen_at_compile_time_is_stored_to(kernel) -> None:
    x, y = np.ones(16, np.float32), np.zeros(16, np.float32)
    kernel.interpret[(1,)](x, y, PICK_CONST=False, BLOCK=16)
    np.testing.assert_array_equal(y, np.full(16, 3.0, np.float32))
    np.testing.assert_array_equal(x, np.ones(16, np.float32))


@pytest.mark.parametrize("kernel,words", [
    (_pointer_chosen_by_if, "Mismatched type for target"),
    (_pointer_chosen_by_ternary, "Ternary expression with dynamic condition has inconsistent type"),
    (_pointer_chosen_by_helper, "Inconsistent return types"),
])
def test_const_and_plain_pointer_in_one_variable_is_refused(kernel, words) -> None:
    assert words in _message(kernel, SIGNATURE)


def test_const_kernel_compiles_with_nvrtc() -> None:
    require_cuda_compiler()
    assert_clean_compile(_copy_through_const, "*fp32:16, *fp32:16, i32, 16", "cuda", "sm_80")


# --- the run-time ternary: only the branch taken runs ----------------------------------------

@tilecc.jit
def _ternary_values(x_ptr, out_ptr, n):
    i = tl.program_id(0)
    # the load past the end is on the branch not taken for the last programs
    v = tl.load(x_ptr + i + 1) if i + 1 < n else -1.0
    tl.store(out_ptr + i, v)


@tilecc.jit
def _ternary_of_stores(x_ptr, out_ptr):
    i = tl.program_id(0)
    tl.store(out_ptr + i, tl.load(x_ptr)) if i % 2 == 0 else tl.store(out_ptr + i, 7.0)


@tilecc.jit
def _ternary_of_two_types(x_ptr, out_ptr, n):
    i = tl.program_id(0)
    v = tl.load(x_ptr + i) if i < n else tl.load(x_ptr).to(tl.float16)
    tl.store(out_ptr + i, v)


def test_run_time_ternary_runs_only_the_branch_taken() -> None:
    x = np.arange(1, 5, dtype=np.float32)
    out = np.zeros(4, np.float32)
    _ternary_values.interpret[(4,)](x, out, 4)  # no out-of-bounds load at program 3
    np.testing.assert_array_equal(out, [2, 3, 4, -1])


def test_run_time_ternary_of_void_calls() -> None:
    x = np.array([5.0], np.float32)
    out = np.zeros(4, np.float32)
    _ternary_of_stores.interpret[(4,)](x, out)
    np.testing.assert_array_equal(out, [5, 7, 5, 7])


def test_run_time_ternary_of_two_types_is_refused() -> None:
    words = "Ternary expression with dynamic condition has inconsistent types"
    assert words in _message(_ternary_of_two_types, "*fp32, *fp32, i32")


@pytest.mark.parametrize("kernel,signature", [(_ternary_values, "*fp32, *fp32, i32"),
                                              (_ternary_of_stores, "*fp32, *fp32")])
def test_run_time_ternaries_compile_with_nvrtc(kernel, signature) -> None:
    require_cuda_compiler()
    assert_clean_compile(kernel, signature, "cuda", "sm_80")


@pytest.mark.gpu
def test_run_time_ternaries_on_gpu() -> None:
    torch = pytest.importorskip("torch")
    x = torch.arange(1, 5, device="cuda", dtype=torch.float32)
    out = torch.zeros(4, device="cuda")
    _ternary_values[(4,)](x, out, 4)
    assert out.tolist() == [2, 3, 4, -1]
    out.zero_()
    _ternary_of_stores[(4,)](torch.tensor([5.0], device="cuda"), out)
    assert out.tolist() == [5, 7, 5, 7]
    y = torch.zeros(4, device="cuda")
    _copy_through_const[(1,)](x, y, 4, BLOCK=16)
    assert torch.equal(y, 2 * x)
