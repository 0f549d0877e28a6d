"""The value language beyond arithmetic: tensor methods and attributes, dtype objects,
early `return` in run-time `if`s, `None` arguments, rank broadcasting and indexing,
compile-time Python builtins — on the interpreter against NumPy, and compiled by NVRTC and
hiprtc."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tilecc
import tilecc.language as tl
from conftest_compilers import require_cuda_compiler, require_hip_compiler  # noqa: F401
from tilecc.language import dtypes as D


# --- tensor methods ---------------------------------------------------------------------------

@tilecc.jit
def methods_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x.abs().exp().cumsum(0))
    tl.store(out_ptr + BLOCK + 0, x.sum())
    tl.store(out_ptr + BLOCK + 1, x.max() + x.min(axis=0))
    tl.store(out_ptr + BLOCK + 2, x.argmax(0).to(tl.float32))
    tl.store(out_ptr + BLOCK + 3, x.cast(tl.int32, bitcast=True).to(tl.float32, bitcast=True)
             .sum(-1))
    m = x.reshape(2, BLOCK // 2)
    tl.store(out_ptr + 2 * BLOCK + offs, m.T.permute(1, 0).trans().ravel())


@settings(max_examples=20, deadline=None)
@given(st.lists(st.floats(-3, 3, width=32), min_size=16, max_size=16))
def test_tensor_methods_match_numpy(values) -> None:
    x = np.array(values, np.float32)
    out = np.zeros(48, np.float32)
    methods_kernel.interpret[(1,)](x, out, 16)
    np.testing.assert_allclose(out[:16], np.cumsum(np.exp(np.abs(x))), rtol=1e-5)
    np.testing.assert_allclose(out[16], x.sum(), rtol=1e-5, atol=1e-5)
    assert out[17] == x.max() + x.min()
    assert out[18] == np.argmax(x)
    np.testing.assert_allclose(out[19], x.sum(), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(out[32:], x.reshape(2, 8).T.T.T.ravel())


@tilecc.jit
def attributes_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.static_assert(x.dtype.primitive_bitwidth == 32 and x.dtype.fp_mantissa_width == 23)
    tl.static_assert(x.dtype.exponent_bias == 127 and x.dtype.is_fp32())
    tl.static_assert(x.type.is_block() and x.type.element_ty == tl.float32)
    tl.static_assert(x.type.is_floating() and x.numel == BLOCK and x.shape[0] == BLOCK)
    tl.static_assert(tl.int8.int_bitwidth == 8 and tl.int8.is_int8() and not tl.int8.is_uint8())
    tl.static_assert(tl.program_id(0).type == tl.int32)
    tl.static_assert(getattr(tl, "float16").is_fp16() and hasattr(x, "dtype"))
    tl.static_assert(hasattr(x, "sum") and not hasattr(x, "frob") and not hasattr(tl, "frob"))
    tl.static_assert(getattr(x, "dtype") == tl.float32 and getattr(x, "frob", 3) == 3)
    # as Triton: a constexpr is unwrapped before isinstance sees it
    tl.static_assert(isinstance(x, tl.tensor) and not isinstance(BLOCK, tl.constexpr))
    tl.static_assert(isinstance(BLOCK, int) and len(x) == BLOCK)
    tl.static_assert(BLOCK ** 2 == BLOCK * BLOCK)
    tl.store(out_ptr + tl.arange(0, BLOCK), x)


def test_attributes_and_dtype_objects_fold_at_compile_time() -> None:
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(16, np.float32)
    attributes_kernel.interpret[(1,)](x, out, 16)
    np.testing.assert_array_equal(out, x)


@tilecc.jit
def constexpr_python_kernel(x_ptr, ACT: tl.constexpr, N: tl.constexpr):
    # as Triton: a constexpr's Python attributes and methods, at compile time
    if ACT.upper() == "RELU" and N.bit_length() == 5:
        tl.store(x_ptr + tl.arange(0, N), 1.0)
    else:
        tl.store(x_ptr + tl.arange(0, N), 2.0)


@pytest.mark.parametrize("act,expect", [("relu", 1.0), ("gelu", 2.0)])
def test_python_methods_of_constexprs_fold(act, expect) -> None:
    x = np.zeros(16, np.float32)
    constexpr_python_kernel.interpret[(1,)](x, act, 16)
    np.testing.assert_array_equal(x, np.full(16, expect, np.float32))
    assert "cmp" not in [op.kind for op in constexpr_python_kernel.ir("*fp32", ACT=act, N=16)
                         .walk()]


def test_dtype_repr_evaluates_to_the_dtype() -> None:
    # tilecc.language.int8 (triton.language.int8 where `import triton` resolves to tilecc in
    # this process, as the suite's Triton-style kernels make it): either evaluates
    names = {"tilecc": tilecc, "triton": sys.modules.get("triton")}
    for d in (tl.int1, tl.int8, tl.uint32, tl.float16, tl.bfloat16, tl.float64, tl.float8e5,
              tl.pointer_type(tl.int32), D.block_type(tl.float32, (4, 8))):
        assert repr(d).startswith(D.REPR_MODULE[0] + ".") and eval(repr(d), names) == d
    assert repr(tl.int8) in ("tilecc.language.int8", "triton.language.int8")
    assert str(tl.int8) == "int8"


def test_dtype_objects_read_as_triton_s() -> None:
    assert [str(d) for d in (tl.float16, tl.bfloat16, tl.float32, tl.int32, tl.uint8, tl.int1)] \
        == ["fp16", "bf16", "fp32", "int32", "uint8", "int1"]
    assert str(tl.pointer_type(tl.float32)) == "pointer<fp32>"
    assert str(D.block_type(tl.float32, (4, 8))) == "<['4', '8'], fp32>"
    assert tl.float16.fp_mantissa_width == 10 and tl.bfloat16.exponent_bias == 127
    assert tl.float64.fp_mantissa_width == 52 and tl.float64.exponent_bias == 1023
    # the fp8 formats' biases (e4m3: 7, Triton's e4b15 and AMD's fnuz e4b8: 15 and 8; e5m2:
    # 15, fnuz e5b16: 16), which code decoding their bits reads
    assert [(d.fp_mantissa_width, d.exponent_bias) for d in (
        tl.float8e4nv, tl.float8e4b15, tl.float8e4b8, tl.float8e5, tl.float8e5b16)] == \
        [(3, 7), (3, 15), (3, 8), (2, 15), (2, 16)]
    assert tl.int16.get_int_max_value() == 32767 and tl.uint8.get_int_min_value() == 0
    assert not hasattr(tl.int32, "fp_mantissa_width") and not hasattr(tl.float32, "int_bitwidth")
    assert D.block_type(tl.float32, (4, 8)).numel == 32


# Triton 3.6's `dtype.name` of every scalar type (its str() is the same): the specification.
TRITON_DTYPE_NAMES = {
    "int1": "int1", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
    "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
    "float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64",
    "float8e4nv": "fp8e4nv", "float8e5": "fp8e5", "float8e4b15": "fp8e4b15",
    "float8e4b8": "fp8e4b8", "float8e5b16": "fp8e5b16",
}


@pytest.mark.parametrize("attr", sorted(TRITON_DTYPE_NAMES))
def test_dtype_name_and_str_are_triton_s(attr) -> None:
    dt = getattr(tl, attr)
    assert dt.name == TRITON_DTYPE_NAMES[attr] and str(dt) == dt.name
    assert tl.dtype(dt.name) == dt  # Triton's constructor takes its own names back
    if dt.is_int() and dt != tl.int1:  # Triton's test helpers: getattr(np, dtype.name)
        assert getattr(np, dt.name) == dt.to_numpy().type


def test_short_type_names_stay_the_signature_spelling() -> None:
    assert [d.short for d in (tl.int32, tl.uint16, tl.int1, tl.float32, tl.bfloat16)] == \
        ["i32", "u16", "i1", "fp32", "bf16"]
    assert tl.dtype("int32") == tl.int32 and tl.dtype("bf16") == tl.bfloat16
    ir = copy_named_kernel.ir("*u16, *u16", NAME="uint16", BLOCK=8)  # signatures: short names
    assert [p.value.dtype.element_ty for p in ir.params if p.value is not None] == \
        [tl.uint16, tl.uint16]
    x = np.arange(8, dtype=np.uint16)
    out = np.zeros_like(x)
    copy_named_kernel.interpret[(1,)](x, out, "uint16", 8)  # x.dtype.name in a kernel
    np.testing.assert_array_equal(out, x)


@tilecc.jit
def copy_named_kernel(x_ptr, out_ptr, NAME: tl.constexpr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.static_assert(x.dtype.name == NAME)
    tl.store(out_ptr + tl.arange(0, BLOCK), x)


def test_trans_without_dims_swaps_the_last_two_axes_as_triton() -> None:
    @tilecc.jit
    def trans3(x_ptr, out_ptr):
        i = tl.arange(0, 2)[:, None, None] * 12 + tl.arange(0, 2)[None, :, None] * 4 + \
            tl.arange(0, 4)[None, None, :]
        x = tl.load(x_ptr + i)
        y = tl.trans(x)  # (2, 4, 2)
        j = tl.arange(0, 2)[:, None, None] * 8 + tl.arange(0, 4)[None, :, None] * 2 + \
            tl.arange(0, 2)[None, None, :]
        tl.store(out_ptr + j, y)

    x = np.arange(24, dtype=np.float32)
    out = np.zeros(16, np.float32)
    trans3.interpret[(1,)](x, out)
    ref = x.reshape(2, 3, 4)[:, :2, :].transpose(0, 2, 1).ravel()
    np.testing.assert_array_equal(out, ref)


# --- early return ---------------------------------------------------------------------------

@tilecc.jit
def sign_of(x):
    if x > 0:
        return 1.0
    elif x < 0:
        return -1.0
    return 0.0


@tilecc.jit
def early_return_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if pid % 3 == 0:
        tl.store(y_ptr + offs, x * 0 + 100, mask=offs < n)
        if pid == 0:
            return
        tl.store(y_ptr + offs, x * 0 + 200, mask=offs < n)
        return
    if pid % 3 == 1:
        if n > 1000:
            return
    v = sign_of(tl.load(x_ptr + pid))
    tl.store(y_ptr + offs, x + v, mask=offs < n)


def _early_return_reference(x: np.ndarray, n: int, block: int) -> np.ndarray:
    ref = np.zeros_like(x)
    for pid in range(len(x) // block):
        s = slice(pid * block, pid * block + block)
        if pid % 3 == 0:
            ref[s] = 100 if pid == 0 else 200
        elif pid % 3 == 1 and n > 1000:
            continue
        else:
            ref[s] = x[s] + np.sign(x[pid])
    return ref


@settings(max_examples=15, deadline=None)
@given(st.lists(st.floats(-2, 2, width=32), min_size=64, max_size=64), st.booleans())
def test_early_return_skips_the_rest_for_returning_programs(values, big_n) -> None:
    x = np.array(values, np.float32)
    y = np.zeros(64, np.float32)
    n = 64
    if big_n:  # n > 1000 makes programs with pid % 3 == 1 return early
        x = np.resize(x, 1088)
        y = np.zeros(1088, np.float32)
        n = 1088
    early_return_kernel.interpret[(8,)](x, y, n, 8)
    ref = _early_return_reference(x, n, 8)
    np.testing.assert_array_equal(y[:64], ref[:64])


def test_early_return_compiles_for_cuda_and_hip() -> None:
    for target in ("cuda", "hip"):
        src = early_return_kernel.source("*fp32,*fp32,i32,8", target=target)
        # `if pid == 0: return` runs the rest where pid != 0: no empty branch
        assert "if (pid != 0) {" in src and "{\n    } else" not in src


@tilecc.jit
def larger_returning(a, b):
    if a > b:
        return a
    return b


@tilecc.jit
def larger_assigning(a, b):
    if a > b:
        r = a
    else:
        r = b
    return r


@tilecc.jit
def combine_with_if_kernel(x_ptr, y_ptr, RETURNING: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 4)[:, None] * 16 + tl.arange(0, 16)[None, :])
    if RETURNING:
        m = tl.reduce(x, 1, larger_returning)
    else:
        m = tl.reduce(x, 1, larger_assigning)
    tl.store(y_ptr + tl.arange(0, 4), m)


@settings(max_examples=10, deadline=None)
@given(st.lists(st.floats(-100, 100, width=32), min_size=64, max_size=64), st.booleans())
def test_combine_functions_with_a_runtime_if(values, returning) -> None:
    # the interpreter applies a combine to arrays: an `if` in it selects element-wise
    x = np.array(values, np.float32)
    y = np.zeros(4, np.float32)
    combine_with_if_kernel.interpret[(1,)](x, y, returning)
    np.testing.assert_array_equal(y, x.reshape(4, 16).max(1))


# --- None, broadcasting, indexing ------------------------------------------------------------

@tilecc.jit
def optional_bias_kernel(x_ptr, b_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if b_ptr is not None:
        x += tl.load(b_ptr + offs)
    tl.store(y_ptr + offs, x)


def test_none_argument_specializes_like_a_constexpr() -> None:
    x = np.arange(16, dtype=np.float32)
    b = np.full(16, 10, np.float32)
    y = np.zeros(16, np.float32)
    optional_bias_kernel.interpret[(1,)](x, None, y, 16)
    np.testing.assert_array_equal(y, x)
    optional_bias_kernel.interpret[(1,)](x, b, y, 16)
    np.testing.assert_array_equal(y, x + b)


@tilecc.jit
def rank_broadcast_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    row = tl.load(x_ptr + tl.arange(0, BLOCK))  # [BLOCK]
    grid = tl.arange(0, 4)[:, None] + tl.zeros((4, BLOCK), tl.float32)  # [4, BLOCK]
    both = grid + row  # rank 1 gains a leading axis, as NumPy
    tl.store(out_ptr + tl.arange(0, 4)[:, None] * BLOCK + tl.arange(0, BLOCK)[None, :], both)
    tl.store(out_ptr + 4 * BLOCK + tl.arange(0, BLOCK), tl.sum(both[:, :, None], axis=-3)
             .sum(-1))


@settings(max_examples=15, deadline=None)
@given(st.lists(st.floats(-100, 100, width=32), min_size=8, max_size=8))
def test_blocks_of_different_rank_broadcast_as_numpy(values) -> None:
    x = np.array(values, np.float32)
    out = np.zeros(40, np.float32)
    rank_broadcast_kernel.interpret[(1,)](x, out, 8)
    both = np.arange(4, dtype=np.float32)[:, None] + x
    np.testing.assert_array_equal(out[:32], both.ravel())
    np.testing.assert_allclose(out[32:], both.sum(0), rtol=1e-6)


@tilecc.jit
def rank_broadcast_memory_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    rows, cols = offs[:, None], offs[None, :]
    # a mask of rank 1 with BLOCK x BLOCK pointers reads as [1, BLOCK] (as in Triton)
    x = tl.load(x_ptr + rows * BLOCK + cols, mask=offs < n, other=-1.0)
    tl.store(y_ptr + rows * BLOCK + cols, x)
    # a value of rank 1 stored through BLOCK x BLOCK pointers fills every row
    tl.store(y_ptr + BLOCK * BLOCK + rows * BLOCK + cols, tl.sum(x, axis=0), mask=offs < n)


@pytest.mark.parametrize("n", [0, 5, 8])
def test_load_mask_and_store_value_of_lower_rank_broadcast(n) -> None:
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(128, np.float32)
    rank_broadcast_memory_kernel.interpret[(1,)](x, y, n, 8)
    m = np.where(np.arange(8)[None, :] < n, x.reshape(8, 8), -1.0)
    np.testing.assert_array_equal(y[:64].reshape(8, 8), m)
    stored = np.where(np.arange(8)[None, :] < n, np.broadcast_to(m.sum(0), (8, 8)), 0)
    np.testing.assert_array_equal(y[64:].reshape(8, 8), stored)


@tilecc.jit
def static_loop_return_kernel(y_ptr, n):
    for i in tl.static_range(4):
        if n > i:
            tl.store(y_ptr + i, 1.0)
        else:
            return
        tl.store(y_ptr + 4 + i, 2.0)
    tl.store(y_ptr + 8, 3.0)


@pytest.mark.parametrize("n", range(6))
def test_return_inside_a_static_range_ends_the_later_iterations(n) -> None:
    y = np.zeros(9, np.float32)
    static_loop_return_kernel.interpret[(1,)](y, n)
    ref = np.zeros(9, np.float32)
    for i in range(4):
        if n <= i:
            break
        ref[i], ref[4 + i] = 1, 2
    else:
        ref[8] = 3
    np.testing.assert_array_equal(y, ref)


@tilecc.jit
def false_mask_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(x_ptr + offs, mask=False, other=7.0)
    c = tl.load(x_ptr + offs, mask=False)
    tl.store(y_ptr + offs, a + c)


def test_load_with_an_all_false_mask_gives_other() -> None:
    x = np.arange(8, dtype=np.float32)
    y = np.zeros(8, np.float32)
    false_mask_kernel.interpret[(1,)](x, y, 8)
    np.testing.assert_array_equal(y, np.full(8, 7.0, np.float32))


@tilecc.jit
def one_element_if_kernel(x_ptr, y_ptr):
    x = tl.load(x_ptr + tl.arange(0, 1))
    if x > 0:
        x = x * 10
    tl.store(y_ptr + tl.arange(0, 1), x)
    tl.store(y_ptr + 1, x.item() + 1)


@pytest.mark.parametrize("v", [-2.0, 3.0])
def test_if_on_a_one_element_block_and_item(v) -> None:
    y = np.zeros(2, np.float32)
    one_element_if_kernel.interpret[(1,)](np.array([v], np.float32), y)
    expect = v * 10 if v > 0 else v
    np.testing.assert_array_equal(y, [expect, expect + 1])


@tilecc.jit
def double(x):
    return x * 2


@tilecc.jit
def apply_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr, FN: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, FN(tl.load(x_ptr + offs)))


def test_jit_function_passed_as_constexpr_is_called() -> None:
    x = np.arange(8, dtype=np.float32)
    y = np.zeros(8, np.float32)
    apply_kernel.interpret[(1,)](x, y, 8, double)
    np.testing.assert_array_equal(y, 2 * x)


@tilecc.jit
def static_print_kernel(x_ptr, BLOCK: tl.constexpr):
    tl.static_print("BLOCK is", BLOCK, tl.arange(0, BLOCK).to(tl.float32), tl.float16)
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)


def test_static_print_prints_while_compiling(capsys) -> None:
    static_print_kernel.source("*fp32,16")
    assert "BLOCK is 16 fp32[constexpr[16]] fp16" in capsys.readouterr().out  # as Triton


@pytest.mark.parametrize("kernel,sig", [
    (early_return_kernel, "*fp32,*fp32,i32,8"), (methods_kernel, "*fp32,*fp32,16"),
    (rank_broadcast_kernel, "*fp32,*fp32,8"), (one_element_if_kernel, "*fp32,*fp32"),
    (optional_bias_kernel, "*fp32,None,*fp32,16"), (static_loop_return_kernel, "*fp32,i32"),
    (rank_broadcast_memory_kernel, "*fp32,*fp32,i32,8"),
    (combine_with_if_kernel, "*fp32,*fp32,True")])
@pytest.mark.parametrize("target", ["cuda", "hip"])
def test_compiles_with_nvrtc_and_hiprtc(kernel, sig, target) -> None:
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    kernel.compile(sig, target=target)


@tilecc.jit
def add_combine(a, b):
    return a + b


@tilecc.jit
def negative_axes_kernel(x_ptr, o_ptr):
    i = tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :]
    x = tl.load(x_ptr + i)
    o = tl.arange(0, 4)
    tl.store(o_ptr + o, tl.sum(x, axis=-1))
    tl.store(o_ptr + 4 + o, tl.argmax(x, -1).to(tl.float32))
    v, ix = tl.max(x, -1, return_indices=True)
    tl.store(o_ptr + 8 + o, v)
    tl.store(o_ptr + 12 + o, tl.reduce(x, -1, add_combine))
    tl.store(o_ptr + 16 + i, tl.cumsum(x, -1))
    tl.store(o_ptr + 48 + i, tl.associative_scan(x, -2, add_combine))
    e = tl.expand_dims(tl.sum(x, -1, keep_dims=True), -1)  # (4, 1, 1)
    tl.store(o_ptr + 80 + o, tl.reshape(e, (4,)))


@settings(max_examples=10, deadline=None)
@given(st.lists(st.floats(-10, 10, width=32), min_size=32, max_size=32))
def test_negative_axes_count_from_the_last(values) -> None:
    x = np.array(values, np.float32)
    o = np.zeros(84, np.float32)
    negative_axes_kernel.interpret[(1,)](x, o)
    m = x.reshape(4, 8)
    np.testing.assert_allclose(o[:4], m.sum(-1), rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(o[4:8], m.argmax(-1))
    np.testing.assert_array_equal(o[8:12], m.max(-1))
    np.testing.assert_allclose(o[12:16], m.sum(-1), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(o[16:48], np.cumsum(m, -1).ravel(), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(o[48:80], np.cumsum(m, 0).ravel(), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(o[80:84], m.sum(-1), rtol=1e-5, atol=1e-4)


def test_constexpr_objects_combine_and_hash_as_triton_s() -> None:
    c = tl.constexpr(3)
    assert isinstance(c + 1, tl.constexpr) and (c + 1).value == 4 and (2 ** c).value == 8
    assert bool(c == 3) and not bool(c == 4) and (c < 4).value is True
    assert hash(c) == hash(tl.constexpr(3)) and {c: "x"}[tl.constexpr(3)] == "x"
    assert list(range(c)) == [0, 1, 2] and (-c).value == -3


# --- tl.device_print -------------------------------------------------------------------------

@tilecc.jit
def device_print_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.device_print("x", x)
    tl.device_print("pid and bits", tl.program_id(0), x.to(tl.int32), hex=True)
    print("grid", (x[:, None] + x[None, :]).to(tl.float16))  # print is tl.device_print
    tl.device_print("done")


def device_print_lines(x: np.ndarray, programs: int) -> list[str]:
    """The lines Triton's GPU back end prints for device_print_kernel (its format)."""
    out = []
    n = len(x)
    w = len(str(n - 1)) if n > 1 else 0
    for pid in range(programs):
        head = f"pid ({pid}, 0, 0)"
        out += [f"{head} idx ({i:{w}d}) x: {v:f}" for i, v in enumerate(x)]
        out.append(f"{head} idx () pid and bits: (operand 0) 0x{pid:08x}")
        out += [f"{head} idx ({i:{w}d}) pid and bits: (operand 1) 0x{int(v) & 0xffffffff:08x}"
                for i, v in enumerate(x)]
        g = (x[:, None] + x[None, :]).astype(np.float16)
        out += [f"{head} idx ({i:{w}d}, {j:{w}d}) grid: {float(g[i, j]):f}"
                for i in range(n) for j in range(n)]
        out.append(f"{head} done")
    return out


def test_device_print_lines_are_triton_s_format(capsys) -> None:
    x = np.array([-2.5, 0, 3, 7.25], np.float32)
    device_print_kernel.interpret[(2,)](x, 4)
    assert capsys.readouterr().out.splitlines() == device_print_lines(x, 2)


@pytest.mark.parametrize("target", ["cuda", "hip"])
def test_device_print_compiles(target) -> None:
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    src = device_print_kernel.source("*fp32,4", target=target)
    assert 'printf("pid (%u, %u, %u) idx (%1u)%s%f\\n"' in src.replace("\n", " ") or \
        "idx (%1u)%s%f" in src
    device_print_kernel.compile("*fp32,4", target=target)


def test_device_print_refuses_a_prefix_that_is_not_a_string() -> None:
    @tilecc.jit
    def bad(x_ptr):
        tl.device_print(tl.load(x_ptr))

    with pytest.raises(tilecc.CompilationError, match="prefix must be a string literal"):
        bad.source("*fp32")


def test_a_jit_function_passed_as_constexpr_enters_the_cache_key_by_its_code() -> None:
    from tilecc.runtime import cache
    from tilecc.transpiler.specs import ArgSpec

    @tilecc.jit
    def fn(x):
        return x * 2

    first = fn

    @tilecc.jit
    def fn(x):  # noqa: F811  (the same name, other code: an edit between two runs)
        return x * 3

    assert repr(first) == repr(fn)
    keys = [cache.spec_key([ArgSpec("FN", constexpr=f, is_constexpr=True)]) for f in (first, fn)]
    assert keys[0] != keys[1]


@tilecc.jit
def downcast_kernel(x_ptr, y_ptr, MODE: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 4))
    tl.store(y_ptr + tl.arange(0, 4), x.to(tl.float16, fp_downcast_rounding=MODE))


def _toward_zero(x: np.ndarray, to) -> np.ndarray:
    """The reference: round to nearest, then the next value toward zero if it went past."""
    with np.errstate(over="ignore"):  # beyond the target's range: inf, then its largest
        y = x.astype(to)
    past = np.abs(y.astype(np.float64)) > np.abs(x.astype(np.float64))
    return np.where(past, np.nextafter(y, to(0)), y)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.floats(-7e4, 7e4, width=32), min_size=4, max_size=4))
def test_fp_downcast_rounding(values) -> None:
    x = np.array(values, np.float32)
    x[0] = 1 / 3 if values[0] == 0 else x[0]
    y = np.zeros(4, np.float16)
    downcast_kernel.interpret[(1,)](x, y, "rtne")
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(y, x.astype(np.float16))
    downcast_kernel.interpret[(1,)](x, y, "rtz")
    np.testing.assert_array_equal(y, _toward_zero(x, np.float16))
    assert abs(float(y[0])) <= abs(float(x[0]))
    with pytest.raises(tilecc.CompilationError, match="must be 'rtne' or 'rtz'"):
        downcast_kernel.interpret[(1,)](x, y, "up")


@tilecc.jit
def downcast64_kernel(x_ptr, y_ptr):
    offs = tl.arange(0, 8)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs).to(tl.float32, fp_downcast_rounding="rtz"))


def test_fp64_to_fp32_toward_zero_and_overflow_to_the_largest_finite() -> None:
    x = np.array([1 / 3, -1 / 3, 1e300, -1e300, 0.0, np.nan, 2.0, 1e-320], np.float64)
    y = np.zeros(8, np.float32)
    downcast64_kernel.interpret[(1,)](x, y)
    ref = _toward_zero(x, np.float32)
    ref[2:4] = [np.finfo(np.float32).max, -np.finfo(np.float32).max]
    np.testing.assert_array_equal(y, ref)


@pytest.mark.parametrize("target", ["cuda", "hip"])
def test_rounding_toward_zero_compiles(target) -> None:
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    assert "tc::cast_rz<tc::half>" in downcast_kernel.source("*fp32,*fp16,'rtz'", target=target)
    downcast_kernel.compile("*fp32,*fp16,'rtz'", target=target)
    downcast64_kernel.compile("*fp64,*fp32", target=target)


def test_fp_downcast_rounding_only_for_truncating_casts() -> None:
    @tilecc.jit
    def widening(x_ptr):
        tl.store(x_ptr, tl.load(x_ptr).to(tl.float64, fp_downcast_rounding="rtne").to(tl.float32))

    with pytest.raises(tilecc.CompilationError, match="only for truncating fp conversions"):
        widening.source("*fp32")


@tilecc.jit
def ordered(a, b):
    if a < b:
        return a, b, 1
    return b, a, 1


@tilecc.jit
def ordered_pair_kernel(x_ptr, y_ptr):
    lo, hi, one = ordered(tl.load(x_ptr), tl.load(x_ptr + 1))
    tl.static_assert(one == 1)  # equal constants returned from both branches stay constants
    tl.store(y_ptr, lo)
    tl.store(y_ptr + 1, hi)


@settings(max_examples=10, deadline=None)
@given(st.floats(-1e3, 1e3, width=32), st.floats(-1e3, 1e3, width=32))
def test_helper_returns_tuples_from_inside_an_if(a, b) -> None:
    y = np.zeros(2, np.float32)
    ordered_pair_kernel.interpret[(1,)](np.array([a, b], np.float32), y)
    np.testing.assert_array_equal(y, sorted([np.float32(a), np.float32(b)]))
