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


def test_every_case_has_triton_s_result_and_a_gist() -> None:
    names = [k.__name__ for k in C.CASES]
    assert len(names) >= 25 and len(set(names)) == len(names)
    assert set(names) == set(C.TRITON) == set(C.GIST)


@pytest.mark.parametrize("kernel", C.CASES, ids=lambda k: k.__name__)
def test_error_kind_matches_triton(kernel) -> None:
    triton_class, _wrapped = C.TRITON[kernel.__name__]
    with pytest.raises(tilecc.CompilationError) as info:
        kernel.source(SIG)
    err = info.value
    assert type(err) is getattr(E, triton_class), str(err)
    text = str(err)
    assert C.GIST[kernel.__name__] in text, text
    header, _line, caret, *_ = text.split("\n")
    assert header.startswith(f"{C.__file__}:") and caret.strip() == "^", text
    assert err.__cause__ is None and err.__context__ is None or err.__suppress_context__
