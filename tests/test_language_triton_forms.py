"""Forms of the language that Triton's own tests use, with Triton's meaning: `and` / `or`
on blocks, a helper that returns a value on one path only, pointer dtypes as values
(`tl.pi32_t`, `.to(tl.pointer_type(...))`, `tl.where` between pointers), the repr of
dtypes."""

from __future__ import annotations

import warnings

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


# --- `and` / `or` on blocks: elementwise on boolean blocks, with Triton's warning ------------

@tilecc.jit
def _masks_by_keywords(x_ptr, out_ptr, n, step, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    mask = mask and (offs % step != 0)
    ends = (offs < 2) or (offs > n - 3)
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, x + tl.where(ends, 100, 0), mask=offs < n)


@tilecc.jit
def _and_of_integer_blocks(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) and offs)


def _expected_masks(x, n, step):
    offs = np.arange(len(x))
    mask = (offs < n) & (offs % step != 0)
    out = np.where(mask, x, 0) + np.where((offs < 2) | (offs > n - 3), 100, 0)
    return np.where(offs < n, out, -1).astype(np.float32)


@pytest.mark.parametrize("n,step", [(7, 3), (8, 1), (3, 2)])
def test_and_or_of_blocks_are_elementwise(n, step) -> None:
    x = np.arange(1, 9, dtype=np.float32)
    out = np.full(8, -1, np.float32)
    # the warning comes from tracing, once per specialization (as Triton's, from its
    # compile): a kernel of its own, traced here
    kernel = tilecc.jit(_masks_by_keywords.fn)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kernel.interpret[(1,)](x, out, n, step, BLOCK=8)
    np.testing.assert_array_equal(out, _expected_masks(x, n, step))
    deprecations = [w for w in caught if "'and' and 'or' are deprecated" in str(w.message)]
    assert deprecations and deprecations[0].filename == __file__


@pytest.mark.filterwarnings("ignore:Logical operators")
def test_and_of_non_boolean_blocks_is_triton_s_error() -> None:
    with pytest.raises(CompilationError) as e:
        _and_of_integer_blocks.source("*i32, *i32, 8")
    assert "Cannot bitcast data-type of size 32 to data-type of size 1" in e.value.error_message


@pytest.mark.filterwarnings("ignore:Logical operators")
def test_and_or_of_blocks_compile_with_nvrtc() -> None:
    require_cuda_compiler()
    assert_clean_compile(_masks_by_keywords, "*fp32, *fp32, i32, i32, 8", "cuda", "sm_80")


# --- a helper that returns a value on one path only: undefined on the others -----------------

@tilecc.jit
def _value_on_one_path(x):
    a = False  # a number bound by assignment: a run-time value for Triton's `if`
    if a:
        return x


@tilecc.jit
def _doubled_if_positive(x, c):
    if c > 0:
        return x * 2


@tilecc.jit
def _value_or_bare_return(x, c):
    if c > 0:
        return x
    return


@tilecc.jit
def _store_value_on_one_path(out_ptr):
    tl.store(out_ptr, _value_on_one_path(0))


@tilecc.jit
def _store_doubled(x_ptr, out_ptr, c):
    offs = tl.arange(0, 4)
    tl.store(out_ptr + offs, _doubled_if_positive(tl.load(x_ptr + offs), c))


@tilecc.jit
def _store_value_or_nothing(out_ptr, c):
    tl.store(out_ptr, _value_or_bare_return(1.0, c))


def test_helper_returning_on_one_path_gives_a_value() -> None:
    out = np.full((), -1, np.int32)
    _store_value_on_one_path.interpret[(1,)](out)  # Triton's poison: any int32 will do
    assert out.dtype == np.int32 and _store_value_on_one_path.source("*i32")
    x = np.arange(4, dtype=np.float32)
    got = np.full(4, -1, np.float32)
    _store_doubled.interpret[(1,)](x, got, 1)
    np.testing.assert_array_equal(got, 2 * x)
    _store_doubled.interpret[(1,)](x, got, 0)  # undefined values, stored (no error)


def test_bare_return_beside_a_value_is_inconsistent() -> None:
    with pytest.raises(CompilationError) as e:
        _store_value_or_nothing.source("*fp32, i32")
    assert "Inconsistent return types" in e.value.error_message
    assert "void" in e.value.error_message


def test_helpers_returning_on_one_path_compile_with_nvrtc() -> None:
    require_cuda_compiler()
    assert_clean_compile(_store_value_on_one_path, "*i32", "cuda", "sm_80")
    assert_clean_compile(_store_doubled, "*fp32, *fp32, i32", "cuda", "sm_80")


# --- pointer dtypes as values ---------------------------------------------------------------

@tilecc.jit
def _choose_addresses(cond_ptr, a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr,
                      SCALAR_CHOICE: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    if SCALAR_CHOICE:  # a pointer chosen by one condition, then read through
        p = tl.where(tl.load(cond_ptr), a_ptr, b_ptr)
        out = tl.load(p + offs, mask=mask)
    else:  # integers made pointers, chosen lane by lane, stored back as integers
        a = tl.load(a_ptr + offs, mask=mask).to(tl.pi32_t)
        b = tl.load(b_ptr + offs, mask=mask).to(tl.pointer_type(tl.int32))
        out = tl.where(tl.load(cond_ptr + offs, mask=mask), a, b)
    tl.store(out_ptr + offs, out, mask=mask)


def test_pointer_dtypes_are_values() -> None:
    assert tl.pointer_type(tl.float32).name == "pointer<fp32>"
    assert tl.pi32_t == tl.pointer_type(tl.int32)
    rng = np.random.default_rng(3)
    cond = rng.integers(0, 2, 50).astype(bool)
    a, b = (rng.integers(-2**40, 2**40, 50) for _ in range(2))
    out = np.zeros(50, np.int64)
    _choose_addresses.interpret[(1,)](cond, a, b, out, 50, BLOCK=64, SCALAR_CHOICE=False)
    np.testing.assert_array_equal(out, np.where(cond, a, b))
    for first in (True, False):
        out[:] = 0
        _choose_addresses.interpret[(1,)](np.array([first]), a, b, out, 50, BLOCK=64,
                                          SCALAR_CHOICE=True)
        np.testing.assert_array_equal(out, a if first else b)


def test_where_between_pointers_of_two_types_is_refused() -> None:
    with pytest.raises(CompilationError) as e:
        _choose_addresses.source("*i1, *i64, *i32, *i64, i32, 64, True")
    assert "pointers of one type" in e.value.error_message


@pytest.mark.parametrize("scalar", [False, True])
def test_pointer_values_compile_with_nvrtc(scalar) -> None:
    require_cuda_compiler()
    assert_clean_compile(_choose_addresses, f"*i1, *i64, *i64, *i64, i32, 64, {scalar}",
                         "cuda", "sm_80")


@pytest.mark.gpu
def test_language_forms_on_gpu() -> None:
    torch = pytest.importorskip("torch")
    x = torch.arange(1, 9, device="cuda", dtype=torch.float32)
    out = torch.full((8,), -1.0, device="cuda")
    _masks_by_keywords[(1,)](x, out, 7, 3, BLOCK=8)
    assert out.tolist() == _expected_masks(x.cpu().numpy(), 7, 3).tolist()
    cond = torch.rand(50, device="cuda") > 0.5
    a = torch.randint(-2**40, 2**40, (50,), device="cuda")
    b = torch.randint(-2**40, 2**40, (50,), device="cuda")
    got = torch.zeros(50, device="cuda", dtype=torch.int64)
    _choose_addresses[(1,)](cond, a, b, got, 50, BLOCK=64, SCALAR_CHOICE=False)
    assert torch.equal(got, torch.where(cond, a, b))
    _choose_addresses[(1,)](cond[:1], a, b, got, 50, BLOCK=64, SCALAR_CHOICE=True)
    assert torch.equal(got, a if cond[0] else b)
    y = torch.arange(4, device="cuda", dtype=torch.float32)
    twice = torch.zeros(4, device="cuda")
    _store_doubled[(1,)](y, twice, 1)
    assert torch.equal(twice, 2 * y)
