"""Bad kernels raise the kind of error Triton 3.6 raises for them (tests/error_kinds_cases.py:
Triton's results recorded by scripts/error_kinds_vs_triton.py), with a message that says the
same thing, at the user's line with a caret."""

from __future__ import annotations

import pytest

import tilecc
import tilecc.errors as E

try:
    import error_kinds_cases as C
except ImportError:
    from tests import error_kinds_cases as C

SIG = "*fp32,*fp32,i32,16"

# Where the Python exception Triton wraps differs from the one tilecc names, and why.
WRAPPED_DIFFERENTLY = {
    # Triton's own class for operand types; tilecc's TypeError says the same
    "float_shift": "TypeError", "float_bitwise_and": "TypeError",
    "pointer_plus_float": "TypeError", "pointer_times_int": "TypeError",
    # tilecc's check of a constexpr argument is a TypeError everywhere
    "arange_runtime_bound": "TypeError",
    # Triton re-wraps its own CompilationError; tilecc raises the ValueError once
    "sum_axis_out_of_range": "ValueError",
    # Triton: "'tensor' object has no attribute '__pow__'" (AttributeError); tilecc says
    # `**` takes constexprs, its own check
    "power_of_a_block": None,
    # Triton asserts (AssertionError); tilecc checks the types itself
    "dot_of_1d_blocks": "TypeError", "mismatched_if_types": None,
    "loop_carried_type_change": None,
    # Triton fails reading `3.scalar` (AttributeError); tilecc says a dtype is expected
    "cast_to_a_non_dtype": "TypeError",
    # Triton asserts on these (AssertionError); tilecc's checks raise the natural kind
    "device_print_prefix_not_a_string": "TypeError", "item_of_a_block": "ValueError",
    "static_range_runtime_bound": None, "cat_without_reorder": "ValueError",
}


def test_every_case_has_triton_s_result_and_a_gist() -> None:
    names = [k.__name__ for k in C.CASES]
    assert len(names) >= 25 and len(set(names)) == len(names)
    assert set(names) == set(C.TRITON) == set(C.GIST)


@pytest.mark.parametrize("kernel", C.CASES, ids=lambda k: k.__name__)
def test_error_kind_matches_triton(kernel) -> None:
    triton_class, wrapped = C.TRITON[kernel.__name__]
    with pytest.raises(tilecc.CompilationError) as info:
        kernel.source(SIG)
    err = info.value
    assert type(err) is getattr(E, triton_class), str(err)
    assert err.python_error == WRAPPED_DIFFERENTLY.get(kernel.__name__, wrapped), str(err)
    text = str(err)
    assert C.GIST[kernel.__name__] in text, text
    header, _line, caret, *_ = text.split("\n")
    assert header.startswith(f"{C.__file__}:") and caret.strip() == "^", text
    assert err.__cause__ is None and err.__context__ is None or err.__suppress_context__
