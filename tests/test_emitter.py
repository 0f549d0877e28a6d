"""The renderer's emitter: blocks pair their braces and indentation, a lambda's body is
captured apart and the emitter's state (and the names' own) comes back after it, even
when rendering fails."""

from __future__ import annotations

import pytest

from tilecc.transpiler.emitter import Emitter
from tilecc.transpiler.render_names import Names


def parts() -> tuple[Emitter, Names]:
    names = Names(ctx=None)  # own_names reads nothing of the kernel
    names.taken.add("x")
    return Emitter(), names


def test_blocks_pair_braces_and_indentation():
    out, _ = parts()
    with out.block("for (int r = 0; r < 4; ++r) {"):
        out.line("#pragma unroll")
        with out.block("auto f = [](int a) {", "};"):
            out.line("return a;\n")
        with out.indented():
            out.line("x += 1;")
    assert out.lines == ["  for (int r = 0; r < 4; ++r) {", "#pragma unroll",
                         "    auto f = [](int a) {", "      return a;", "", "    };",
                         "      x += 1;", "  }"]
    assert out.depth == 1


def test_a_lambda_body_is_captured_and_the_state_restored():
    out, names = parts()
    out.last_stmt = ("k.py", 3)
    with out.block():
        with names.own_names():
            with out.lambda_body() as body:
                assert out.in_lambda and names.taken == set()
                out.last_stmt = ("k.py", 9)
                names.taken.add("y")
                out.line("int y = 0;")
            assert names.taken == {"y"}  # the lambda's names, until its parameters are named
        assert names.taken == {"x"}
        out.extend(body)
    assert body == ["      int y = 0;"]  # one level deeper than the block it is written in
    assert out.lines == ["  {", "      int y = 0;", "  }"]
    assert (out.depth, out.last_stmt, out.in_lambda) == (1, ("k.py", 3), False)


def test_the_state_comes_back_when_rendering_fails():
    out, names = parts()
    with pytest.raises(RuntimeError):
        with names.own_names(), out.lambda_body():
            with out.block():
                raise RuntimeError("unsupported op")
    assert (out.lines, out.depth, names.taken, out.in_lambda) == ([], 1, {"x"}, False)
