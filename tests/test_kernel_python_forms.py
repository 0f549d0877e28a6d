"""Python forms that real Triton code uses, with Triton 3.6's answers: one-line bodies,
casts to the type a value has, `None` pointers advanced in loops under a constexpr guard,
`and` / `or` mixing compile-time and run-time operands, `isinstance` / `hasattr` / `is None`
on kernel values, dtypes and descriptors, a constexpr's `.value` / `.type` / `.dtype`, and
scans and reductions whose combine function comes from anywhere — on the interpreter
against NumPy, and compiled by NVRTC and hiprtc."""

from __future__ import annotations

import numpy as np
import pytest

import tilecc
import tilecc.language as tl
from conftest_compilers import require_cuda_compiler, require_hip_compiler
from tilecc.errors import CompilationError


def _compiles(kernel, signature: str, target: str) -> None:
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    kernel.compile(signature, target=target)


# --- one-line bodies ----------------------------------------------------------------------------

@tilecc.jit
def exp_fp32(x): return tl.exp(x.to(tl.float32))


@tilecc.jit
def at_least(x, lo):
    if lo > 0: return tl.maximum(x, lo)
    return x


@tilecc.jit
def one_line_bodies_kernel(x_ptr, out_ptr, n, lo, BLOCK: tl.constexpr, SHIFT: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    acc = 0.0
    for i in range(3): acc += i * 0.5
    if SHIFT: x = x + acc
    else: x = x - acc
    while acc < 4.0: acc += 1.0
    if n > 4: x = x * 2.0; acc = acc + 0.25
    tl.store(out_ptr + offs, exp_fp32(at_least(x, lo)) + acc, mask=offs < n)


@pytest.mark.parametrize("n,lo,shift", [(8, 0.0, True), (3, 0.5, False), (6, -1.0, False)])
def test_one_line_bodies_run_as_their_indented_forms(n, lo, shift) -> None:
    x = np.linspace(-1, 1, 8).astype(np.float32)
    out = np.zeros(8, np.float32)
    one_line_bodies_kernel.interpret[(1,)](x, out, n, lo, 8, shift)
    y = np.where(np.arange(8) < n, x, 0) + (1.5 if shift else -1.5)
    acc = 4.5
    if n > 4:
        y, acc = y * 2, acc + 0.25
    if lo > 0:
        y = np.maximum(y, lo)
    np.testing.assert_allclose(out[:n], (np.exp(y) + acc)[:n], rtol=1e-6)
    source = one_line_bodies_kernel.source("*fp32,*fp32,i32,fp32,8,True")
    for line in ("for i in range(3): acc += i * 0.5", "if n > 4: x = x * 2.0; acc = acc + 0.25"):
        assert f": {line}\n" in source  # the whole line, as written, above its code


@pytest.mark.parametrize("target", ["cuda", "hip"])
def test_one_line_bodies_compile(target) -> None:
    _compiles(one_line_bodies_kernel, "*fp32,*fp32,i32,fp32,8,False", target)


# --- casts: Triton's order of checks ------------------------------------------------------------

@tilecc.jit
def same_type_casts_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    # a cast to the type a value has returns it, before the rounding mode is looked at;
    # a bitcast never looks at it
    a = x.to(tl.float32, fp_downcast_rounding="rtne") + tl.cast(x, tl.float32,
                                                                 fp_downcast_rounding="rtz")
    b = x.to(tl.int32, bitcast=True, fp_downcast_rounding="rtz").to(tl.float32, bitcast=True)
    h = x.to(tl.float16, fp_downcast_rounding="rtz")
    c = h.to(tl.float16, fp_downcast_rounding="rtne").to(tl.float32)
    tl.store(out_ptr + offs, a + b + c)


def test_casts_to_the_same_type_ignore_the_rounding_mode() -> None:
    x = np.array([1.0, -2.5, 1 / 3, 1e4 + 0.7], np.float32)
    out = np.zeros(4, np.float32)
    same_type_casts_kernel.interpret[(1,)](x, out, 4)
    toward_zero = x.astype(np.float16)  # these round the same to nearest and toward zero
    np.testing.assert_array_equal(out, 3 * x + toward_zero.astype(np.float32))


@pytest.mark.parametrize("target", ["cuda", "hip"])
def test_same_type_casts_compile(target) -> None:
    _compiles(same_type_casts_kernel, "*fp32,*fp32,4", target)


@pytest.mark.parametrize("cast,message", [
    ("x.to(tl.float64, fp_downcast_rounding='rtne')", "only for truncating fp conversions"),
    ("x.to(tl.float16, fp_downcast_rounding='up')", "'rtne' or 'rtz'"),
    ("x.to(tl.int16, fp_downcast_rounding='rtz')", "only for truncating fp conversions"),
])
def test_rounding_modes_of_real_conversions_are_still_checked(tmp_path, cast, message) -> None:
    path = tmp_path / "cast_kernel.py"
    path.write_text("import tilecc\nimport tilecc.language as tl\n\n\n@tilecc.jit\n"
                    f"def k(x_ptr):\n    x = tl.load(x_ptr)\n    tl.store(x_ptr, {cast})\n")
    from tilecc.cli_input import load_kernel

    with pytest.raises(CompilationError, match=message):
        load_kernel(f"{path}:k").source("*fp32")


# --- None pointers advanced in loops ------------------------------------------------------------

@tilecc.jit
def optional_residual_kernel(x_ptr, res_ptr, out_ptr, rows, stride, BLOCK: tl.constexpr,
                             HAS_RES: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for i in range(rows):
        x = tl.load(x_ptr + offs)
        if HAS_RES:
            x += tl.load(res_ptr + offs)
            res_ptr += stride
        acc += x
        x_ptr += stride
    j = 0
    while j < rows:
        if HAS_RES:
            acc -= tl.load(res_ptr - stride + offs)
            res_ptr -= stride
        j += 1
    tl.store(out_ptr + offs, acc)


@pytest.mark.parametrize("has_res", [False, True])
def test_none_pointer_reassigned_under_a_false_guard_in_loops(has_res) -> None:
    x = np.arange(12, dtype=np.float32)
    res = np.arange(12, dtype=np.float32) * 10
    out = np.zeros(4, np.float32)
    optional_residual_kernel.interpret[(1,)](x, res if has_res else None, out, 3, 4, 4,
                                             has_res)
    # with the residual, the while loop takes back what the for loop added
    np.testing.assert_array_equal(out, x.reshape(3, 4).sum(0))


@pytest.mark.parametrize("sig", ["*fp32,None,*fp32,i32,i32,4,False",
                                 "*fp32,*fp32,*fp32,i32,i32,4,True"])
@pytest.mark.parametrize("target", ["cuda", "hip"])
def test_optional_residual_compiles(sig, target) -> None:
    _compiles(optional_residual_kernel, sig, target)


def test_a_loop_that_does_reassign_a_none_is_refused() -> None:
    @tilecc.jit
    def k(x_ptr, res_ptr, n):
        for i in range(n):
            res_ptr = x_ptr + i
        tl.store(x_ptr, 1.0)

    with pytest.raises(CompilationError, match="`res_ptr` is reassigned in the loop, but it "
                                               "holds None"):
        k.source("*fp32,None,i32")
