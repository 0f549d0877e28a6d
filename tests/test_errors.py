"""User errors: a `tilecc.CompilationError` that quotes the user's line with a caret under
the offending code, names the file, line and column, and carries no tilecc frames.
"""

from __future__ import annotations

import inspect
import os
import traceback

import numpy as np
import pytest

import tilecc
import tilecc.language as tl
from tilecc.language import OutsideKernelError
from tilecc.language import dtypes as D

THIS_FILE = os.path.abspath(__file__)


def _locate(fn, snippet: str, occurrence: int = 0) -> tuple[int, int, str]:
    """(line, 1-based column, source line) of `snippet` in `fn`'s source."""
    lines, first = inspect.getsourcelines(fn)
    hits = [(first + i, line.index(snippet) + 1, line.rstrip("\n"))
            for i, line in enumerate(lines) if snippet in line]
    assert hits, snippet
    return hits[occurrence]


def assert_user_facing(excinfo) -> None:
    frames = traceback.extract_tb(excinfo.tb)
    internal = [f for f in frames if os.sep.join(("tilecc", "transpiler")) in f.filename]
    assert not internal, f"tilecc frames in the traceback: {internal}"


def expect_error(kernel, signature: str, snippet: str, message: str, *, fn=None,
                 occurrence: int = 0, launch=None, **constexprs) -> str:
    """Build `kernel` and check the CompilationError points at `snippet` in `fn`
    (default: the kernel itself) and contains `message`."""
    with pytest.raises(tilecc.CompilationError) as excinfo:
        if launch is None:
            kernel.source(signature, **constexprs)
        else:
            launch()
    assert_user_facing(excinfo)
    err = excinfo.value
    text = str(err)
    fn = fn or kernel.fn
    line, col, source_line = _locate(fn, snippet, occurrence)
    header, quoted, caret, *rest = text.split("\n")
    assert header == f"{THIS_FILE}:{line}:{col} in {fn.__name__}:", text
    assert quoted == "    " + source_line.strip(), text
    indent = len(source_line) - len(source_line.lstrip())
    assert caret == " " * (4 + col - 1 - indent) + "^", text
    assert message in "\n".join(rest), text
    assert err.loc.file == THIS_FILE and err.loc.line == line and err.loc.col == col - 1
    return text


SIG = "*fp32,*fp32,i32,64"


# --- unsupported syntax -----------------------------------------------------------------------

@tilecc.jit
def with_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    with open("log.txt") as f:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs))


def test_with_statement() -> None:
    expect_error(with_kernel, SIG, 'with open("log.txt") as f:',
                 "With statements are not supported in kernels")


@tilecc.jit
def break_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = 0
    while i < n:
        if tl.load(x_ptr + i) < 0:
            break
        i += 1
    tl.store(out_ptr, i)


def test_break() -> None:
    expect_error(break_kernel, SIG, "break", "`break` is not supported in kernels",
                 occurrence=1)  # (0 is `def break_kernel`)


@tilecc.jit
def lambda_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    square = lambda t: t * t  # noqa: E731
    tl.store(out_ptr + offs, square(tl.load(x_ptr + offs)))


def test_lambda() -> None:
    expect_error(lambda_kernel, SIG, "lambda t: t * t", "Lambda expressions are not supported")


@tilecc.jit
def list_comprehension_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    ptrs = [x_ptr + i for i in range(4)]
    tl.store(out_ptr, tl.load(ptrs[0]))


def test_list_comprehension() -> None:
    expect_error(list_comprehension_kernel, SIG, "[x_ptr + i for i in range(4)]",
                 "ListComp expressions are not supported")


@tilecc.jit
def return_in_loop_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    for i in range(n):
        if i > 4:
            return
        tl.store(out_ptr + i, tl.load(x_ptr + i))


def test_return_inside_a_loop_is_refused_as_in_triton() -> None:
    # Triton: "Cannot have `return` statements inside `while` or `for` statements"
    expect_error(return_in_loop_kernel, SIG, "if i > 4:",
                 "Cannot have `return` statements inside `while` or `for` statements")
    with pytest.raises(tilecc.errors.UnsupportedLanguageConstruct):
        return_in_loop_kernel.source(SIG)


# --- names and builtins ----------------------------------------------------------------------

@tilecc.jit
def unknown_name_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x * scale_factor, mask=offs < n)


def test_unknown_name() -> None:
    expect_error(unknown_name_kernel, SIG, "scale_factor", "name `scale_factor` is not defined")


@tilecc.jit
def unknown_tl_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.dot_scale(tl.load(x_ptr + offs)))


def test_unknown_tl_function() -> None:
    expect_error(unknown_tl_kernel, SIG, "tl.dot_scale",
                 "`tl.dot_scale` is not supported by tilecc; did you mean `tl.dot_scaled`?")


def test_a_did_you_mean_never_names_the_name_itself() -> None:
    from tilecc.transpiler.builtin_registry import did_you_mean

    assert did_you_mean("pi32_t", ["pi32_t", "int32"], "tl.") == ""
    assert did_you_mean("cumsun", ["cumsum", "cumprod"], "tl.") == "; did you mean `tl.cumsum`?"


@tilecc.jit
def load_bad_keyword_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, foo=1)
    tl.store(out_ptr + offs, x)


def test_wrong_builtin_keyword() -> None:
    expect_error(load_bad_keyword_kernel, SIG, "tl.load(x_ptr + offs, foo=1)",
                 "tl.load(): got an unexpected keyword argument 'foo'")


@tilecc.jit
def where_missing_argument_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.where(x > 0, x))


def test_missing_builtin_argument() -> None:
    expect_error(where_missing_argument_kernel, SIG, "tl.where(x > 0, x)",
                 "tl.where(): missing a required argument: 'y'")


@tilecc.jit
def load_scalar_not_pointer_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    tl.store(out_ptr, tl.load(n))


def test_load_from_a_non_pointer() -> None:
    expect_error(load_scalar_not_pointer_kernel, SIG, "tl.load(n)",
                 "tl.load needs a pointer or a block of pointers")


# --- type errors -----------------------------------------------------------------------------

@tilecc.jit
def binop_kernel(x_ptr, y_ptr, out_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    if OP == "and":
        z = x & y
    elif OP == "floordiv":
        z = x // y
    elif OP == "div":
        z = x / y
    else:
        z = ~x
    tl.store(out_ptr + offs, z)


@pytest.mark.parametrize("op,sig,snippet,message", [
    ("and", "*fp32,*fp32,*fp32,i32", "x & y",
     "invalid operands of type {tl}.float32 and {tl}.float32: bitwise operators need integer"),
    ("floordiv", "*fp16,*fp16,*fp16,i32", "x // y", "// is only defined on integers"),
    ("div", "*i32,*u32,*fp32,i32", "x / y",
     "Cannot use /, //, or % with {tl}.int32 and {tl}.uint32 because they have different "
     "signedness"),
    ("invert", "*fp64,*fp64,*fp64,i32", "~x", "~ needs an integer operand, got {tl}.float64"),
])
def test_type_errors(op, sig, snippet, message) -> None:
    # dtypes as their repr names them: tilecc.language.int32, or triton.language.int32 where
    # `import triton` resolves to tilecc in this process
    expect_error(binop_kernel, f"{sig},'{op}',64", snippet, message.format(tl=D.REPR_MODULE[0]))


@tilecc.jit
def math_on_int_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.exp(tl.load(x_ptr + offs)))


def test_float_math_on_integers() -> None:
    expect_error(math_on_int_kernel, "*i32,*fp32,i32,64", "tl.exp(tl.load(x_ptr + offs))",
                 "tl.exp: expected dtype ['fp32', 'fp64'] but got int32")


@tilecc.jit
def block_condition_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if x > 0:
        x = -x
    tl.store(out_ptr + offs, x)


def test_if_on_a_block() -> None:
    expect_error(block_condition_kernel, SIG, "x > 0", "an `if` condition must be a scalar")


@tilecc.jit
def unsigned_negative_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + -1)


def test_unsigned_with_negative_literal() -> None:
    expect_error(unsigned_negative_kernel, "*u32,*u32,i32,64", "tl.load(x_ptr + offs) + -1",
                 "cannot combine an unsigned value with a negative constant (-1)")


# --- constexpr misuse ------------------------------------------------------------------------

@tilecc.jit
def arange_runtime_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, n)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


def test_arange_with_a_runtime_size() -> None:
    expect_error(arange_runtime_kernel, SIG, "tl.arange(0, n)",
                 "tl.arange end must be a compile-time constant (constexpr)")


@tilecc.jit
def arange_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def test_arange_not_a_power_of_2() -> None:
    expect_error(arange_kernel, "*fp32,*fp32,i32,100", "tl.arange(0, BLOCK)",
                 "needs end - start to be a positive power of 2, got 100")


@tilecc.jit
def static_assert_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK >= 128, "BLOCK must be at least 128")
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


def test_static_assert_fails() -> None:
    expect_error(static_assert_kernel, SIG, "tl.static_assert(BLOCK >= 128",
                 "static assertion failed: BLOCK must be at least 128")
    static_assert_kernel.source("*fp32,*fp32,i32,128")  # and passes when it holds


@tilecc.jit
def static_assert_runtime_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    tl.static_assert(n > 0)
    tl.store(out_ptr, tl.load(x_ptr))


def test_static_assert_on_a_runtime_value() -> None:
    expect_error(static_assert_runtime_kernel, SIG, "tl.static_assert(n > 0)",
                 "tl.static_assert needs a compile-time condition")


@tilecc.jit
def static_range_runtime_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = 0.0
    for i in tl.static_range(n):
        acc += tl.load(x_ptr + i)
    tl.store(out_ptr, acc)


def test_static_range_with_runtime_bounds() -> None:
    expect_error(static_range_runtime_kernel, SIG, "tl.static_range(n)",
                 "tl.static_range bounds must be constexpr integers")


# --- loops -----------------------------------------------------------------------------------

@tilecc.jit
def carried_type_change_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    total = 0
    for i in range(n):
        total += tl.load(x_ptr + i)
    tl.store(out_ptr, total)


def test_loop_carried_type_change() -> None:
    expect_error(carried_type_change_kernel, SIG, "for i in range(n):",
                 "loop-carried variable `total` has type i32 before the loop but fp32 at the "
                 "end of its body")


@tilecc.jit
def while_true_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    while True:
        n -= 1
    tl.store(out_ptr, n)


def test_while_true() -> None:
    expect_error(while_true_kernel, SIG, "True", "`while True` needs `break`")


# --- errors in helpers, and through the other entry points -----------------------------------

@tilecc.jit
def bad_helper(x):
    return x << 2


@tilecc.jit
def calls_bad_helper_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, bad_helper(tl.load(x_ptr + offs)))


def test_error_in_a_helper_points_into_the_helper() -> None:
    expect_error(calls_bad_helper_kernel, SIG, "x << 2", "shifts need integer operands",
                 fn=bad_helper.fn)


def test_error_through_the_interpreter() -> None:
    x = np.zeros(64, np.float32)
    out = np.zeros(64, np.float32)
    expect_error(unknown_name_kernel, None, "scale_factor", "name `scale_factor` is not defined",
                 launch=lambda: unknown_name_kernel.interpret[(1,)](x, out, 64, 64))


def test_error_through_interpret_env_launch(monkeypatch) -> None:
    monkeypatch.setenv("TILECC_INTERPRET", "1")
    x = np.zeros(64, np.float32)
    expect_error(arange_kernel, None, "tl.arange(0, BLOCK)", "positive power of 2, got 48",
                 launch=lambda: arange_kernel[(1,)](x, x, 64, BLOCK=48))


@tilecc.jit
def axis_out_of_range_kernel(x_ptr, BLOCK: tl.constexpr, AXIS: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.sum(tl.expand_dims(tl.load(x_ptr + offs), AXIS), 0))


@pytest.mark.parametrize("launch", ["interpret", "env"])
def test_a_wrapped_python_error_is_the_cause_as_in_triton(launch, monkeypatch) -> None:
    """A frontend check's ValueError reaches the program as the CompilationError's
    __cause__, with Triton's message (programs read it there), and without frames."""
    x = np.zeros(16, np.float32)
    if launch == "env":
        monkeypatch.setenv("TILECC_INTERPRET", "1")
        run = lambda: axis_out_of_range_kernel[(1,)](x, 16, -3)  # noqa: E731
    else:
        run = lambda: axis_out_of_range_kernel.interpret[(1,)](x, 16, -3)  # noqa: E731
    with pytest.raises(tilecc.CompilationError) as excinfo:
        run()
    assert_user_facing(excinfo)
    cause = excinfo.value.__cause__
    assert isinstance(cause, ValueError) and cause.__traceback__ is None
    assert str(cause) == "invalid axis -3. Expected -2 <= axis < 2"


def test_error_through_compile() -> None:
    pytest.importorskip("cupy")
    expect_error(lambda_kernel, None, "lambda t: t * t", "Lambda expressions are not supported",
                 launch=lambda: lambda_kernel.compile(SIG, target="cuda", arch="sm_90"))


# --- tl outside a kernel ----------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: tl.program_id(0),
    lambda: tl.load(None),
    lambda: tl.math.exp(1.0),
    lambda: tl.arange(0, 16),
])
def test_tl_function_outside_a_kernel(call) -> None:
    with pytest.raises(OutsideKernelError) as excinfo:
        call()
    msg = str(excinfo.value)
    assert "can only be called inside a @tilecc.jit kernel" in msg
    assert "kernel.interpret[grid]" in msg
    assert_user_facing(excinfo)


def test_calling_a_kernel_directly() -> None:
    with pytest.raises(TypeError, match=r"launch it with with_kernel\[grid\]"):
        with_kernel(1, 2, 3, 4)


@tilecc.jit
def float_of_value_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    tl.store(out_ptr, float(n))


def test_python_float_of_a_runtime_value() -> None:
    expect_error(float_of_value_kernel, SIG, "float(n)",
                 "float() takes one compile-time value in kernels; convert kernel values "
                 "with x.to(tl.float32)")


@tilecc.jit
def in_runtime_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    if n in (1, 2):
        tl.store(out_ptr, tl.load(x_ptr))


def test_in_on_a_runtime_value() -> None:
    expect_error(in_runtime_kernel, SIG, "n in (1, 2)", "`in` tests constexprs only")
