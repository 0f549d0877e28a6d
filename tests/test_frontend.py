"""Unit tests of the tile IR the frontend produces, of Triton's promotion table, and of
the axis-info analysis that decides vector widths and mask checks."""

from __future__ import annotations

import pytest

import tilecc
import tilecc.language as tl
from tilecc.language import dtypes as D
from tilecc.runtime.options import CompileOptions
from tilecc.transpiler.frontend import ArgSpec, canonical_name, parse
from tilecc.transpiler.ir import verify
from tilecc.transpiler.passes.axis_info import HUGE, info

try:
    import kernels as K
except ImportError:
    from tests import kernels as K


def kinds(kernel) -> list[str]:
    return [op.kind for op in kernel.walk()]


def ops_of(kernel, kind: str, **attrs) -> list:
    return [op for op in kernel.walk() if op.kind == kind and
            all(op.attrs.get(k) == v for k, v in attrs.items())]


# --- constexpr folding, unrolling, inlining --------------------------------------------------

def test_constexpr_if_elif_chain_folds_to_one_branch() -> None:
    ir = K.unary_math_kernel.ir("*fp32:16,*fp32:16,i32,'log2',1024,False")
    assert "if" not in kinds(ir)
    unary = [op.attrs["fn"] for op in ops_of(ir, "unary")]
    assert unary == ["log2"]
    assert not ops_of(ir, "cmp", pred="eq")  # the FN == "..." tests left nothing behind


def test_constexpr_mask_free_branch_has_no_masks() -> None:
    even = K.add_kernel.ir("*fp32:16,*fp32:16,*fp32:16,i32,1024,True")
    assert "if" not in kinds(even) and "cmp" not in kinds(even)
    assert all(len(op.operands) == 1 for op in ops_of(even, "load"))
    masked = K.add_kernel.ir("*fp32:16,*fp32:16,*fp32:16,i32,1024,False")
    assert all(len(op.operands) == 2 for op in ops_of(masked, "load"))


def test_runtime_if_becomes_an_if_op_with_merged_results() -> None:
    ir = K.select_op_kernel.ir("*fp32,*fp32,i32,i32,i1,64")
    top_ifs = [op for op in ir.body.ops if op.kind == "if"]
    assert len(top_ifs) == 2  # if/elif/else (the elif nested in the else region), and the +100
    first = top_ifs[0]
    assert [r.name for r in first.results] == ["y"]
    assert [op.kind for op in first.regions[1].ops if op.kind == "if"] == ["if"]  # the elif
    assert first.operands[0].dtype == D.int1 and not first.operands[0].type.is_block
    verify(ir)


def test_integer_argument_equal_to_one_is_specialized() -> None:
    # Triton specializes integer arguments equal to 1; `mode == 1` then folds
    ir = K.select_op_kernel.ir("*fp32,*fp32,i32,i32:1,i1,64")
    assert "mode" not in [p.name for p in ir.params if not p.is_constexpr]
    top_ifs = [op for op in ir.body.ops if op.kind == "if"]
    assert len(top_ifs) == 1  # only the run-time `flag` condition is left
    # y = x * 2 was chosen at compile time
    assert [op for op in ops_of(ir, "binary", fn="mul") if op.result.type.is_block]


def test_static_range_unrolls() -> None:
    ir = K.horner_static_kernel.ir("*fp32:16,*fp32,*fp32:16,i32,3,1024")
    assert "for" not in kinds(ir)
    scalar_loads = [op for op in ops_of(ir, "load") if not op.result.type.is_block]
    assert len(scalar_loads) == 4  # coef[3] then coef[2], coef[1], coef[0]
    offsets = [op.operands[0].owner.operands[1].owner.attrs["value"] for op in scalar_loads]
    assert offsets == [3, 2, 1, 0]


def test_runtime_range_is_a_for_op_with_carried_values() -> None:
    ir = K.horner_kernel.ir("*fp32:16,*fp32,*fp32:16,i32,i32,1024")
    (loop,) = ops_of(ir, "for")
    assert loop.attrs["step_sign"] == -1
    body = loop.regions[0]
    assert body.args[0].name == "i" and body.args[0].dtype == D.int32
    assert [a.name for a in body.args[1:]] == ["acc"]
    assert [r.name for r in loop.results] == ["acc"]
    assert body.yields[0].type == loop.results[0].type == body.args[1].type


def test_for_loop_carries_block_and_scalar() -> None:
    ir = K.col_sum_kernel.ir("*fp32:16,*fp32:16,*i32,i32,i32,fp32,1024")
    (loop,) = ops_of(ir, "for")
    carried = {a.name: a.type for a in loop.regions[0].args[1:]}
    assert set(carried) == {"acc", "rows_seen"}
    assert carried["acc"].shape == (1024,) and carried["acc"].dtype == D.float32
    assert carried["rows_seen"].shape == () and carried["rows_seen"].dtype == D.int32


def test_while_loop_has_before_and_body_regions() -> None:
    ir = K.while_copy_kernel.ir("*fp32:16,*fp32:16,*i32,i32,1024")
    (loop,) = ops_of(ir, "while")
    before, body = loop.regions
    assert [a.name for a in before.args] == ["start", "iters"]
    (cond,) = before.yields
    assert cond.owner.kind == "cmp" and cond.owner.attrs["pred"] == "lt"
    assert len(body.yields) == 2


def test_helpers_are_inlined() -> None:
    ir = K.silu_kernel.ir("*fp32:16,*fp32:16,i32,1024")
    functions = {op.loc.function for op in ir.walk()}
    assert functions == {"silu_kernel", "block_offsets", "silu"}
    assert "call" not in kinds(ir)
    (exp,) = ops_of(ir, "unary", fn="exp")
    assert exp.loc.function == "silu"  # tl.sigmoid inside the helper
    # the tuple the helper returned was unpacked into the kernel's names
    names = {op.result.name for op in ir.walk() if op.results}
    assert {"offs", "mask", "x"} <= names


def test_hints_attach_to_the_values_they_promise_about() -> None:
    # as Triton sets them on the op defining the value: no op of their own
    ir = K.strided_copy_kernel.ir("*fp32:16,*fp32:16,i32,i64,1024")
    hinted = {v.name: v.hints for op in ir.walk() for v in (*op.operands, *op.results)
              if v.hints}
    assert hinted["stride"] == {"multiple_of": (16,)}
    assert hinted["cols"] == {"multiple_of": (1024,), "max_contiguous": (1024,)}


def test_triton_language_names_resolve_to_tilecc_builtins() -> None:
    assert canonical_name("triton.language.math.exp") == "tl.exp"
    assert canonical_name("triton.language.extra.cuda.libdevice.rsqrt") == "tl.libdevice.rsqrt"
    assert canonical_name("triton.cdiv") == "tl.cdiv"
    assert canonical_name("numpy.exp") is None
    ir = K.softplus_kernel.ir("*fp32:16,*fp32:16,i32,1024")
    assert {op.attrs["fn"] for op in ops_of(ir, "unary")} >= {"exp", "log", "abs", "neg"}


def test_parse_directly_from_arg_specs() -> None:
    specs = [ArgSpec("x_ptr", type=D.pointer_type(D.float16)),
             ArgSpec("y_ptr", type=D.pointer_type(D.float16)),
             ArgSpec("out_ptr", type=D.pointer_type(D.float16)),
             ArgSpec("n_elements", type=D.int32),
             ArgSpec("BLOCK_SIZE", constexpr=128, is_constexpr=True),
             ArgSpec("EVEN", constexpr=False, is_constexpr=True)]
    ir = parse(K.add_kernel.fn, specs, CompileOptions())
    verify(ir)
    (add,) = [op for op in ops_of(ir, "binary", fn="add") if op.result.dtype == D.float16]
    assert add.result.type.shape == (128,) and add.result.dtype == D.float16
    assert [p.name for p in ir.params] == [s.name for s in specs]
    assert ir.params[4].is_constexpr and ir.params[4].constexpr == 128


# --- Triton's promotion rules ----------------------------------------------------------------

# (a, a is a Python literal, b, b is a literal, div_or_mod) -> Triton's computation type,
# as triton/language/semantic.py::computation_type_impl gives it.
PROMOTIONS = [
    (D.float16, False, D.float32, True, False, D.float16),   # fp16 block * 2.0 stays fp16
    (D.bfloat16, False, D.float32, True, False, D.bfloat16),
    (D.int8, False, D.int32, True, False, D.int8),           # int8 block + 1 stays int8
    (D.uint8, False, D.int32, True, False, D.uint8),
    (D.int8, False, D.float32, True, False, D.float32),      # int block * 2.0 is fp32
    (D.float16, False, D.float32, True, True, D.float32),    # fp16 / 2.0 is done in fp32
    (D.float16, False, D.float16, False, True, D.float32),   # fp16 / fp16 is fp32
    (D.bfloat16, False, D.bfloat16, False, True, D.float32),
    (D.float16, False, D.float16, False, False, D.float16),
    (D.bfloat16, False, D.bfloat16, False, False, D.bfloat16),
    (D.float16, False, D.bfloat16, False, False, D.float16),  # half wins over bf16
    (D.bfloat16, False, D.int32, False, False, D.float32),
    (D.int64, False, D.float16, False, False, D.float16),
    (D.float32, False, D.float64, False, False, D.float64),
    (D.float16, False, D.float32, False, False, D.float32),  # fp32 scalar argument widens
    (D.int32, False, D.int32, False, True, D.int32),          # (then `/` casts to fp32)
    (D.int8, False, D.int16, False, False, D.int16),
    (D.int8, False, D.uint8, False, False, D.uint8),          # same width: unsigned wins
    (D.int32, False, D.uint16, False, False, D.int32),        # wider signed wins
    (D.int64, False, D.uint32, False, False, D.int64),
    (D.uint32, False, D.int32, False, False, D.uint32),
    (D.int1, False, D.int8, False, False, D.int8),
    (D.int1, False, D.int32, True, False, D.int32),           # bool block + 1 is int32
    (D.uint64, False, D.int64, False, False, D.uint64),
]


@pytest.mark.parametrize("a,a_lit,b,b_lit,div,expected", PROMOTIONS,
                         ids=[f"{a.short}{'(lit)' * al}-{b.short}{'(lit)' * bl}{'-div' * d}"
                              for a, al, b, bl, d, _ in PROMOTIONS])
def test_computation_type_matches_triton(a, a_lit, b, b_lit, div, expected) -> None:
    assert D.computation_type(a, a_lit, b, b_lit, div) == expected
    assert D.computation_type(b, b_lit, a, a_lit, div) == expected  # symmetric


@pytest.mark.parametrize("a,b", [(D.int32, D.uint32), (D.int8, D.uint64), (D.uint16, D.int16)])
def test_division_of_mixed_signedness_is_rejected(a, b) -> None:
    with pytest.raises(TypeError, match="signedness"):
        D.computation_type(a, False, b, False, div_or_mod=True)
    assert D.computation_type(a, False, b, False, div_or_mod=False) == D.integer_promote(a, b)


@pytest.mark.parametrize("value,expected", [
    (True, D.int1), (7, D.int32), (-2**31, D.int32), (2**31, D.uint32), (2**32 - 1, D.uint32),
    (2**32, D.int64), (-2**31 - 1, D.int64), (-2**63, D.int64), (2**63, D.uint64),
    (1.5, D.float32), (0.0, D.float32), (float("inf"), D.float32), (float("nan"), D.float32),
    (2.0**-126, D.float32), (1e-40, D.float64), (1e300, D.float64), (-1e39, D.float64)])
def test_literal_types(value, expected) -> None:
    assert D.literal_dtype(value) == expected


@tilecc.jit
def result_type_kernel(x_ptr, y_ptr, EXPR: tl.constexpr, EXPECTED: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    y = tl.load(y_ptr + tl.arange(0, 16))
    if EXPR == "x * 2.0":
        z = x * 2.0
    elif EXPR == "x + 1":
        z = x + 1
    elif EXPR == "x / y":
        z = x / y
    elif EXPR == "x // y":
        z = x // y
    elif EXPR == "x % y":
        z = x % y
    elif EXPR == "x < y":
        z = x < y
    elif EXPR == "tl.sigmoid(x)":
        z = tl.sigmoid(x)
    elif EXPR == "tl.exp(x)":
        z = tl.exp(x)
    elif EXPR == "tl.where(x < y, x, 1)":
        z = tl.where(x < y, x, 1)
    else:
        z = tl.maximum(x, y)
    tl.static_assert(z.dtype == EXPECTED, "unexpected result type")
    tl.static_assert(z.shape == (16,))


@pytest.mark.parametrize("x,y,expr,expected", [
    ("fp16", "fp16", "x * 2.0", "fp16"),
    ("i8", "i8", "x + 1", "i8"),
    ("u16", "u16", "x + 1", "u16"),
    ("i32", "i32", "x / y", "fp32"),
    ("u8", "u8", "x / y", "fp32"),
    ("fp16", "fp16", "x / y", "fp32"),
    ("fp64", "fp32", "x / y", "fp64"),
    ("i8", "i8", "x // y", "i8"),
    ("i16", "i32", "x % y", "i32"),
    ("fp16", "fp16", "x % y", "fp32"),
    ("fp16", "fp32", "x < y", "i1"),
    ("fp16", "fp16", "tl.sigmoid(x)", "fp32"),
    ("bf16", "bf16", "tl.exp(x)", "bf16"),
    ("i8", "i8", "tl.where(x < y, x, 1)", "i8"),
    ("i8", "u32", "tl.maximum(x, y)", "u32"),
])
def test_result_types_in_kernels(x, y, expr, expected) -> None:
    """`z.dtype == EXPECTED` checked by tl.static_assert at compile time (a wrong type
    is a CompilationError)."""
    result_type_kernel.ir(f"*{x},*{y}", EXPR=expr, EXPECTED=D.BY_NAME[expected])
    wrong = D.float64 if expected != "fp64" else D.float32
    with pytest.raises(tilecc.CompilationError, match="unexpected result type"):
        result_type_kernel.ir(f"*{x},*{y}", EXPR=expr, EXPECTED=wrong)


def test_constexpr_comparisons_of_strings_and_dtypes_fold() -> None:
    ir = result_type_kernel.ir("*fp32,*fp32", EXPR="x / y", EXPECTED=tl.float32)
    assert "if" not in kinds(ir) and "cmp" not in kinds(ir)


# --- axis info and memory plans --------------------------------------------------------------

def plans(kernel, signature: str, kind: str, target: str = "cuda"):
    ir = kernel.ir(signature, target=target)
    return [op for op in ops_of(ir, kind) if op.operands[0].type.is_block]


def test_aligned_contiguous_fp32_load_is_a_4_wide_vector() -> None:
    loads = plans(K.add_kernel, "*fp32:16,*fp32:16,*fp32:16,i32,1024,False", "load")
    assert len(loads) == 2
    for op in loads:
        assert op.attrs["plan"].vec == 4
        ptr_info = info(op.operands[0])
        assert ptr_info.contiguity == (1024,) and ptr_info.divisibility[0] >= 16


def test_fp16_aligned_load_is_8_wide_and_unaligned_is_scalar() -> None:
    (load, _) = plans(K.add_kernel, "*fp16:16,*fp16,*fp16,i32,1024,False", "load")
    assert load.attrs["plan"].vec == 8
    (_, unaligned) = plans(K.add_kernel, "*fp16:16,*fp16,*fp16,i32,1024,False", "load")
    assert unaligned.attrs["plan"].vec == 1 and unaligned.attrs["plan"].mask_mode == "element"


def test_mask_with_n_divisible_by_16_is_checked_once_per_vector() -> None:
    (load, _) = plans(K.add_kernel, "*fp32:16,*fp32:16,*fp32:16,i32:16,1024,False", "load")
    mask = load.operands[1]
    assert mask.owner.kind == "cmp"
    m = info(mask)
    assert m.constancy[0] >= 4  # offs < n cannot change inside a run of 16 aligned offsets
    assert load.attrs["plan"].vec == 4 and load.attrs["plan"].mask_mode == "vector"
    (store,) = plans(K.add_kernel, "*fp32:16,*fp32:16,*fp32:16,i32:16,1024,False", "store")
    assert store.attrs["plan"].mask_mode == "vector"


def test_mask_with_arbitrary_n_is_a_prefix_check() -> None:
    (load, _) = plans(K.add_kernel, "*fp32:16,*fp32:16,*fp32:16,i32,1024,False", "load")
    assert info(load.operands[1]).constancy == (1,)
    assert load.attrs["plan"].mask_mode == "prefix"


def test_arange_and_offsets_axis_info() -> None:
    ir = K.add_kernel.ir("*fp32:16,*fp32:16,*fp32:16,i32,1024,False")
    (arange,) = ops_of(ir, "arange")
    assert info(arange.result).contiguity == (1024,)
    assert info(arange.result).divisibility == (HUGE,)  # starts at 0
    offsets = next(op.result for op in ir.walk() if op.results and
                   op.result.name == "offsets")
    i = info(offsets)
    assert i.contiguity == (1024,) and i.divisibility == (1024,) and i.constancy == (1,)


def test_multiple_of_hint_enables_vectorization() -> None:
    # the stride is only promised (tl.multiple_of), not specialized (i64 without :16)
    (load,) = plans(K.strided_copy_kernel, "*fp32:16,*fp32:16,i32,i64,1024", "load")
    assert load.attrs["plan"].vec == 4
    # the output row offset row * n_cols has no such promise
    (store,) = plans(K.strided_copy_kernel, "*fp32:16,*fp32:16,i32,i64,1024", "store")
    assert store.attrs["plan"].vec == 1
    (store,) = plans(K.strided_copy_kernel, "*fp32:16,*fp32:16,i32:16,i64,1024", "store")
    assert store.attrs["plan"].vec == 4


def test_small_block_on_many_threads_is_not_vectorized() -> None:
    (load, _) = plans(K.add_kernel, "*fp32:16,*fp32:16,*fp32:16,i32,64,False", "load")
    assert load.attrs["plan"].vec == 1
    assert load.operands[0].layout.owner_expr() != "true"  # 128 threads hold 64 elements


def test_hip_layout_uses_64_thread_warps() -> None:
    (load, _) = plans(K.add_kernel, "*fp32:16,*fp32:16,*fp32:16,i32,1024,False", "load",
                      target="hip")
    base = load.operands[0].layout.base
    assert base.tpw == (64,) and base.wpc == (4,) and load.attrs["plan"].vec == 4


@tilecc.jit
def tuple_hint_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    n = tl.multiple_of(n, (16,))  # Triton also accepts the values as a tuple
    tl.static_assert(offs.shape == (BLOCK,))
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def test_constexpr_tuples_compare_and_feed_hints() -> None:
    (load,) = plans(tuple_hint_kernel, "*fp32:16,*fp32:16,i32,256", "load")
    assert load.attrs["plan"].mask_mode == "vector"  # n is promised a multiple of 16


HALF_BLOCK = tl.constexpr(32)


@tilecc.jit
def python_conversions_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    tl.static_assert(int(BLOCK / 2) == HALF_BLOCK)  # a tl.constexpr global
    tl.static_assert(float("inf") > 1e38 and bool(BLOCK))
    tl.static_assert(x_ptr.dtype.element_ty.is_fp16() != x_ptr.dtype.element_ty.is_fp32())
    tl.static_assert(x_ptr.dtype.element_ty.primitive_bitwidth in (16, 32))
    tl.static_assert(BLOCK not in (16, 32))
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=-float("inf"))
    if x.dtype.is_floating():
        x = tl.maximum(x, 0.0)
    tl.store(out_ptr + offs, x, mask=offs < n)


@pytest.mark.parametrize("elem", ["fp16", "fp32"])
def test_python_conversions_and_dtype_methods_fold(elem) -> None:
    ir = python_conversions_kernel.ir(f"*{elem},*{elem},i32,64")
    (load,) = ops_of(ir, "load")
    other = load.operands[2].owner.operands[0].owner
    assert other.kind == "const" and other.attrs["value"] == float("-inf")
    assert "if" not in kinds(ir) and ops_of(ir, "binary", fn="fmax")


def test_constexpr_annotation_the_function_cannot_resolve(tmp_path, monkeypatch):
    """Under `from __future__ import annotations` annotations are text; a `tl` imported in
    the enclosing function that the kernel's body never uses is not in its scope.  As in
    Triton, which reads the text, `BLOCK: tl.constexpr` still declares a constexpr (it was
    taken for a run-time integer)."""
    import importlib

    (tmp_path / "future_annotations_kernel.py").write_text(
        "from __future__ import annotations\n"
        "import tilecc\n\n\n"
        "def make():\n"
        "    import tilecc.language as tl  # noqa: F401 - only the annotation names it\n\n"
        "    @tilecc.jit\n"
        "    def scale(x_ptr, BLOCK: tl.constexpr, ROWS: 'tl.constexpr', n):\n"
        "        pass\n"
        "    return scale\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    kernel = importlib.import_module("future_annotations_kernel").make()
    assert [p.is_constexpr for p in kernel.params] == [False, True, True, False]
