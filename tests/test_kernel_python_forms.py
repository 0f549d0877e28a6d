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
from tilecc.language.core import constexpr_type


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


@tilecc.jit
def fill_kernel(x_ptr, BLOCK: tl.constexpr): tl.store(x_ptr + tl.arange(0, BLOCK), 1.5); return


def test_a_kernel_on_one_line() -> None:
    x = np.zeros(4, np.float32)
    fill_kernel.interpret[(1,)](x, 4)
    np.testing.assert_array_equal(x, np.full(4, 1.5, np.float32))
    assert ": tl.store(x_ptr + tl.arange(0, BLOCK), 1.5); return\n" in fill_kernel.source("*fp32,4")


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


# --- `and` / `or` with compile-time and run-time operands ---------------------------------------

@tilecc.jit
def mixed_conditions_kernel(x_ptr, out_ptr, FLAG: tl.constexpr, FORM: tl.constexpr):
    v = tl.load(x_ptr)
    if FORM == "flag and v":
        hit = FLAG and v > 42
    elif FORM == "v and flag":
        hit = v > 42 and FLAG
    elif FORM == "flag or v":
        hit = FLAG or v > 42
    else:
        hit = v > 42 or FLAG
    if hit:
        tl.store(out_ptr, 1)
    else:
        tl.store(out_ptr, 2)


@pytest.mark.parametrize("form", ["flag and v", "v and flag", "flag or v", "v or flag"])
@pytest.mark.parametrize("flag", [False, True])
@pytest.mark.parametrize("v", [7, 100])
def test_and_or_mixing_constexprs_and_kernel_values(form, flag, v) -> None:
    out = np.zeros(1, np.int32)
    mixed_conditions_kernel.interpret[(1,)](np.array([v], np.int32), out, flag, form)
    big = v > 42
    want = {"flag and v": flag and big, "v and flag": big and flag,
            "flag or v": flag or big, "v or flag": big or flag}[form]
    assert out[0] == (1 if want else 2)
    # a constexpr that decides the result decides it at compile time, where it stands
    decided = (form.endswith("and v") or form.endswith("and flag")) and not flag or \
        ("or" in form and flag)
    kinds = [op.kind for op in mixed_conditions_kernel.ir("*i32,*i32", FLAG=flag, FORM=form)
             .walk()]
    assert ("if" not in kinds) == decided


@tilecc.jit
def never_traced_kernel(x_ptr, GUARD: tl.constexpr):
    v = tl.load(x_ptr)
    if v > 42 and GUARD:  # a false GUARD decides: the body is not traced, as in Triton
        tl.static_assert(GUARD, "traced a branch a constexpr ruled out")
    if v < 0 or not GUARD:  # a true `not GUARD` decides: the else is not traced
        tl.store(x_ptr, v + 1)
    else:
        tl.static_assert(GUARD, "traced a branch a constexpr ruled out")


def test_a_constexpr_after_a_kernel_value_folds_the_condition() -> None:
    x = np.array([5], np.int32)
    never_traced_kernel.interpret[(1,)](x, False)
    assert x[0] == 6


@tilecc.jit
def and_keeps_the_value_kernel(x_ptr, out_ptr, FLAG: tl.constexpr):
    v = tl.load(x_ptr)
    tl.store(out_ptr, (v and FLAG) + (FLAG and v) + (v or (not FLAG)))


def test_a_constexpr_that_does_not_decide_is_dropped() -> None:
    # as Triton: `v and True` is v itself (an int32), not a truth value
    out = np.zeros(1, np.int32)
    and_keeps_the_value_kernel.interpret[(1,)](np.array([7], np.int32), out, True)
    assert out[0] == 21


@pytest.mark.parametrize("target", ["cuda", "hip"])
def test_mixed_conditions_compile(target) -> None:
    for form in ("flag and v", "v or flag"):
        _compiles(mixed_conditions_kernel, f"*i32,*i32,True,'{form}'", target)


# --- isinstance, hasattr, `is None` -------------------------------------------------------------

@tilecc.jit
def clamp_int32_kernel(x):
    if (x is not None) and hasattr(x, "dtype") and isinstance(x.dtype, tl.pointer_type) and \
            (x.dtype.element_ty == tl.int32) and (tl.load(x) > 42):
        tl.store(x, 42)


@pytest.mark.parametrize("value,want", [(100, 42), (7, 7)])
def test_guard_chain_of_compile_time_tests_then_a_load(value, want) -> None:
    x = np.array([value], np.int32)
    clamp_int32_kernel.interpret[(1,)](x)
    assert x[0] == want
    f = np.array([100.0], np.float32)
    clamp_int32_kernel.interpret[(1,)](f)  # not an int32 pointer: nothing happens
    assert f[0] == 100.0
    clamp_int32_kernel.interpret[(1,)](None)
    assert [op.kind for op in clamp_int32_kernel.ir("None").walk()] == []


@pytest.mark.parametrize("sig", ["*i32", "*fp32", "None"])
@pytest.mark.parametrize("target", ["cuda", "hip"])
def test_guard_chain_compiles(sig, target) -> None:
    _compiles(clamp_int32_kernel, sig, target)


@tilecc.jit
def class_tests_kernel(x, n, out_ptr, B: tl.constexpr):
    v = tl.load(x + tl.arange(0, B))
    d = tl.make_tensor_descriptor(x, [n], [1], [B])
    p = tl.make_block_ptr(x, (n,), (1,), (0,), (B,), (0,))
    # Triton's answers (its code generator unwraps constexprs before calling isinstance)
    tl.static_assert(isinstance(x, tl.tensor) and isinstance(n, tl.tensor))
    tl.static_assert(isinstance(v, tl.tensor) and isinstance(p, tl.tensor))
    tl.static_assert(not isinstance(B, tl.tensor) and not isinstance(d, tl.tensor))
    tl.static_assert(not isinstance(B, tl.constexpr) and not isinstance(x, tl.constexpr))
    tl.static_assert(isinstance(x.dtype, tl.dtype) and isinstance(v.type, tl.dtype))
    tl.static_assert(isinstance(x.dtype, tl.pointer_type) and isinstance(x.type, tl.dtype))
    tl.static_assert(not isinstance(v.dtype, tl.pointer_type) and not isinstance(x, tl.dtype))
    tl.static_assert(isinstance(v.type, tl.block_type) and not isinstance(x.type, tl.block_type))
    tl.static_assert(isinstance(d, tl.tensor_descriptor) and not isinstance(x, tl.tensor_descriptor))
    tl.static_assert(isinstance(d, tl.core.tensor_descriptor_base) and isinstance(d, tl.core.base_value))
    tl.static_assert(isinstance(B, int) and not isinstance(x, int) and not isinstance(B, float))
    tl.static_assert(isinstance((B, B), tl.tuple) and isinstance(v.shape, tl.tuple))
    tl.static_assert(isinstance(x.dtype, tl.core.base_type) and not isinstance(B, tl.core.base_value))
    tl.static_assert(d is not None and p is not None and not (x is None))
    tl.static_assert(hasattr(d, "load") and hasattr(d, "dtype") and not hasattr(d, "frob"))
    tl.store(x + tl.arange(0, B), v + 1)


def test_isinstance_answers_as_triton_for_every_kind_of_value() -> None:
    x = np.zeros(16, np.float32)
    class_tests_kernel.interpret[(1,)](x, 16, x, 16)
    np.testing.assert_array_equal(x, np.ones(16, np.float32))


def test_isinstance_against_something_that_is_not_a_class_is_an_error() -> None:
    @tilecc.jit
    def k(x):
        tl.static_assert(isinstance(x, tl.load))

    with pytest.raises(CompilationError, match="must be a type"):
        k.source("*fp32")


# --- descriptors: a helper that takes either a descriptor or a pointer --------------------------

@tilecc.jit
def descriptor_of(desc_or_ptr, n, BLOCK: tl.constexpr):
    if isinstance(desc_or_ptr, tl.tensor_descriptor):
        return desc_or_ptr
    return tl.make_tensor_descriptor(desc_or_ptr, [n], [1], [BLOCK])


@tilecc.jit
def scaled_copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    s = descriptor_of(src, n, BLOCK)
    d = descriptor_of(dst, n, BLOCK)
    start = tl.program_id(0) * BLOCK
    d.store([start], s.load([start]) * 3.0)


@pytest.mark.parametrize("host_src,host_dst", [(True, False), (False, True), (False, False)])
def test_helper_returns_a_descriptor_argument_or_makes_one(host_src, host_dst) -> None:
    x = np.arange(32, dtype=np.float32)
    y = np.zeros(32, np.float32)
    src = tilecc.TensorDescriptor.from_tensor(x, [16]) if host_src else x
    dst = tilecc.TensorDescriptor.from_tensor(y, [16]) if host_dst else y
    scaled_copy_kernel.interpret[(2,)](src, dst, 32, 16)
    np.testing.assert_array_equal(y, 3 * x)


@pytest.mark.parametrize("target", ["cuda", "hip"])
def test_descriptor_helper_compiles(target) -> None:
    _compiles(scaled_copy_kernel, "tensordesc<fp32[16]>,*fp32:16,i32,16", target)


# --- a constexpr's .value, .type and .dtype -----------------------------------------------------

@tilecc.jit
def constexpr_members_kernel(x_ptr, N: tl.constexpr, ACT: tl.constexpr):
    tl.static_assert(N.value == N and N.type == constexpr_type(N))
    tl.static_assert(N.type != constexpr_type(N + 1) and ACT.type == constexpr_type("relu"))
    tl.static_assert(tl.constexpr(3).type == constexpr_type(3))
    tl.static_assert(not hasattr(N, "dtype") and not hasattr(N, "value"))  # as Triton's
    tl.store(x_ptr + tl.arange(0, N), N)


def test_constexpr_value_and_type_as_triton() -> None:
    x = np.zeros(8, np.float32)
    constexpr_members_kernel.interpret[(1,)](x, 8, "relu")
    np.testing.assert_array_equal(x, np.full(8, 8, np.float32))
    assert tl.constexpr(3).type == constexpr_type(3) != constexpr_type(4)


@tilecc.jit
def not_of_constexprs_kernel(x_ptr, res_ptr, ACT: tl.constexpr):
    if not res_ptr and not ACT:  # `not` of any constexpr, None and strings too
        tl.store(x_ptr, 1.0)
    else:
        tl.store(x_ptr, 2.0)


@pytest.mark.parametrize("act,want", [("", 1.0), ("relu", 2.0)])
def test_not_of_none_and_strings(act, want) -> None:
    x = np.zeros(1, np.float32)
    not_of_constexprs_kernel.interpret[(1,)](x, None, act)
    assert x[0] == want


@pytest.mark.parametrize("expr", ["N.dtype", "tl.constexpr(3).dtype", "N.frob"])
def test_a_constexpr_has_no_dtype(tmp_path, expr) -> None:
    path = tmp_path / "dtype_kernel.py"
    path.write_text("import tilecc\nimport tilecc.language as tl\n\n\n@tilecc.jit\n"
                    f"def k(x_ptr, N: tl.constexpr):\n    tl.store(x_ptr, {expr})\n")
    from tilecc.cli_input import load_kernel

    attr = expr.rsplit(".", 1)[1]
    with pytest.raises(CompilationError, match=f"'int' object has no attribute '{attr}'"):
        load_kernel(f"{path}:k").source("*fp32,4")


# --- scans and reductions: combine functions from anywhere -------------------------------------

@tilecc.jit
def recurrence(a1, b1, a2, b2):  # x_i = a_i * x_{i-1} + b_i
    return a1 * a2, b1 * a2 + b2


@tilecc.jit
def twice(a):
    return a * 2


@tilecc.jit
def sum_via_helper(a, b):
    return twice(a) + b - a


@tilecc.jit
def scan_through_helper(x, AXIS: tl.constexpr, fn=sum_via_helper):
    return tl.associative_scan(x, AXIS, fn, reverse=True)


@tilecc.jit
def combine_forms_kernel(x_ptr, y_ptr, out_ptr, N: tl.constexpr, REV: tl.constexpr,
                         COMBINE: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    _, rec = tl.associative_scan((x, y), 0, recurrence, reverse=REV)
    tl.store(out_ptr + offs, rec)
    tl.store(out_ptr + N + offs, tl.associative_scan(x, 0, COMBINE, reverse=REV))
    tl.store(out_ptr + 2 * N + offs, scan_through_helper(x, 0))
    tl.store(out_ptr + 3 * N, tl.reduce(x, 0, COMBINE))
    tl.store(out_ptr + 3 * N + 1, x.reduce(0, (COMBINE, recurrence)[0]))


def _recurrence(a, b, reverse):
    a, b = (a[::-1], b[::-1]) if reverse else (a, b)
    out, acc = [], 0.0
    for ai, bi in zip(a, b):
        acc = ai * acc + bi
        out.append(acc)
    out = np.array(out, np.float32)
    return out[::-1] if reverse else out


@pytest.mark.parametrize("reverse", [False, True])
def test_combine_functions_from_globals_arguments_defaults_and_closures(reverse) -> None:
    @tilecc.jit
    def add(a, b):  # a closure's @jit, passed as a constexpr argument
        return a + b

    rng = np.random.default_rng(3)
    x = rng.integers(-2, 3, 8).astype(np.float32)
    y = rng.integers(-2, 3, 8).astype(np.float32)
    out = np.zeros(26, np.float32)
    combine_forms_kernel.interpret[(1,)](x, y, out, 8, reverse, add)
    np.testing.assert_array_equal(out[:8], _recurrence(x, y, reverse))
    cum = np.cumsum(x[::-1])[::-1] if reverse else np.cumsum(x)
    np.testing.assert_array_equal(out[8:16], cum)
    np.testing.assert_array_equal(out[16:24], np.cumsum(x[::-1])[::-1])
    assert out[24] == out[25] == x.sum()


@pytest.mark.parametrize("target", ["cuda", "hip"])
def test_combine_forms_compile(target) -> None:
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    combine_forms_kernel.compile("*fp32,*fp32,*fp32", N=8, REV=True, COMBINE=sum_via_helper,
                                 target=target)


# --- a Python number bound by assignment ---------------------------------------------------------
# Triton makes `one = 1` a scalar kernel value: `one.dtype` is the literal's type.

@tilecc.jit
def assigned_numbers_kernel(out_ptr, N: tl.constexpr):
    one = 1
    big = 2**40
    half = 0.5
    flag = True
    tl.static_assert(one.dtype == tl.int32 and big.dtype == tl.int64)
    tl.static_assert(half.dtype == tl.float32 and flag.dtype == tl.int1)
    tl.store(out_ptr + tl.arange(0, N), tl.full([N], one, dtype=one.dtype) + half)


@tilecc.jit
def constexpr_dtype_kernel(out_ptr, N: tl.constexpr):
    tl.store(out_ptr, N.dtype)


def test_an_assigned_number_has_the_dtype_triton_gives_it():
    out = np.zeros(4, np.float32)
    assigned_numbers_kernel.interpret[(1,)](out, 4)
    np.testing.assert_array_equal(out, np.full(4, 1.5, np.float32))
    with pytest.raises(CompilationError, match="has no attribute 'dtype'"):
        constexpr_dtype_kernel.interpret[(1,)](out, 4)  # a constexpr has none, as in Triton


# --- the language by its full module path --------------------------------------------------------

@tilecc.jit
def full_path_kernel(x_ptr, out_ptr, N: tl.constexpr):
    offs = tilecc.language.arange(0, N)  # `triton.language.store(...)` under the mode
    tilecc.language.store(out_ptr + offs, tilecc.language.load(x_ptr + offs) * 2)


def test_language_reached_through_its_package():
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    full_path_kernel.interpret[(1,)](x, out, 8)
    np.testing.assert_array_equal(out, 2 * x)


# --- expand_dims over several axes ---------------------------------------------------------------
# Triton counts every axis in the result's rank (negative ones from its end), each once.

@tilecc.jit
def expand_many_kernel(x_ptr, out_ptr, N: tl.constexpr):
    v = tl.load(x_ptr + tl.arange(0, N))
    a = tl.expand_dims(v, (-4, 2, -1))  # [1, N, 1, 1]
    tl.static_assert(a.shape == [1, N, 1, 1])
    b = tl.expand_dims(v, (3, 1, 2))  # [N, 1, 1, 1]
    tl.static_assert(b.shape == [N, 1, 1, 1])
    tl.store(out_ptr + tl.arange(0, N), tl.reshape(a, (N,)) + tl.reshape(b, (N,)))


@tilecc.jit
def expand_twice_kernel(x_ptr, N: tl.constexpr):
    t = tl.expand_dims(tl.arange(0, N), (0, -3))


def test_expand_dims_normalizes_axes_against_the_result():
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    expand_many_kernel.interpret[(1,)](x, out, 8)
    np.testing.assert_array_equal(out, 2 * x)
    with pytest.raises(CompilationError, match=r"duplicate axes, normalized axes = \[0, 0\]"):
        expand_twice_kernel.interpret[(1,)](x, 8)


# --- kernels whose text is made at run time ------------------------------------------------------
# A template kernel with a placeholder, its text edited before it compiles: through Triton's
# `JITFunction._unsafe_update_src`, or by exec'ing the edited text (the form Triton's
# interpreter runs).

def _scaled_template():
    @tilecc.jit
    def scaled(out_ptr, x_ptr, N: tl.constexpr):
        offs = tl.arange(0, N)
        x = tl.load(x_ptr + offs)
        tl.store(out_ptr + offs, PLACEHOLDER)
    return scaled


def test_updated_source_compiles_instead_of_the_files():
    template = _scaled_template()
    x = np.arange(8, dtype=np.float32)
    edited = tilecc.jit(template.fn)
    edited._unsafe_update_src(edited.src.replace("PLACEHOLDER", "x * 3 + 1"))
    out = np.zeros(8, np.float32)
    edited.interpret[(1,)](out, x, 8)
    np.testing.assert_array_equal(out, x * 3 + 1)
    assert "x * 3 + 1" in edited.src and "PLACEHOLDER" in template.src
    again = tilecc.jit(template.fn)  # the template itself is unchanged
    again._unsafe_update_src(again.src.replace("PLACEHOLDER", "x - 2"))
    again.interpret[(1,)](out, x, 8)
    np.testing.assert_array_equal(out, x - 2)


def _exec_kernel(text: str):
    namespace = {}
    exec(text, {"tilecc": tilecc, "tl": tl}, namespace)
    return namespace["shifted"]


def test_kernel_defined_by_exec_of_a_string():
    source = ("@tilecc.jit\n"
              "def shifted(out_ptr, x_ptr, N: tl.constexpr, K: tl.constexpr):\n"
              "    offs = tl.arange(0, N)\n"
              "    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + K)\n")
    kernel = _exec_kernel(source)
    x = np.arange(16, dtype=np.int32)
    out = np.zeros(16, np.int32)
    kernel.interpret[(1,)](out, x, 16, 5)
    np.testing.assert_array_equal(out, x + 5)
    other = _exec_kernel(source.replace("+ K", "* K"))  # one text each, same name
    other.interpret[(1,)](out, x, 16, 3)
    np.testing.assert_array_equal(out, x * 3)


# --- on the GPU ---------------------------------------------------------------------------------

@pytest.mark.gpu
def test_guard_chain_and_combine_forms_on_the_gpu() -> None:
    torch = pytest.importorskip("torch")
    x = torch.tensor([100, 7], dtype=torch.int32, device="cuda")
    clamp_int32_kernel[(1,)](x)  # the store the isinstance chain guards runs
    assert x.tolist() == [42, 7]
    rng = np.random.default_rng(5)
    a = rng.integers(-2, 3, 8).astype(np.float32)
    b = rng.integers(-2, 3, 8).astype(np.float32)
    want = np.zeros(26, np.float32)
    combine_forms_kernel.interpret[(1,)](a, b, want, 8, True, sum_via_helper)
    out = torch.zeros(26, device="cuda")
    combine_forms_kernel[(1,)](torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), out, 8,
                               True, sum_via_helper)
    np.testing.assert_array_equal(out.cpu().numpy(), want)
    y = torch.zeros(4, device="cuda")
    optional_residual_kernel[(1,)](torch.arange(12.0, device="cuda"), None, y, 3, 4, 4, False)
    assert y.tolist() == [12.0, 15.0, 18.0, 21.0]
