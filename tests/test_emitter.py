"""The renderer's emitter: blocks pair their braces and indentation, a lambda's body is
captured apart and the writer's state comes back after it, even when rendering fails."""

from __future__ import annotations

import pytest

from tilecc.transpiler.emitter import CEmitter
from tilecc.transpiler.render import Renderer


class Writer(CEmitter):
    own_names = Renderer.own_names  # the renderer's names: a lambda's are its own

    def __init__(self):
        self.lines, self.depth, self.last_stmt, self.in_lambda = [], 1, None, False
        self.taken = {"x"}


def test_blocks_pair_braces_and_indentation():
    w = Writer()
    with w.block("for (int r = 0; r < 4; ++r) {"):
        w.line("#pragma unroll")
        with w.block("auto f = [](int a) {", "};"):
            w.line("return a;\n")
        with w.indented():
            w.line("x += 1;")
    assert w.lines == ["  for (int r = 0; r < 4; ++r) {", "#pragma unroll",
                       "    auto f = [](int a) {", "      return a;", "", "    };",
                       "      x += 1;", "  }"]
    assert w.depth == 1


def test_a_lambda_body_is_captured_and_the_state_restored():
    w = Writer()
    w.last_stmt = ("k.py", 3)
    with w.block():
        with w.own_names():
            with w.lambda_body() as body:
                assert w.in_lambda and w.taken == set()
                w.last_stmt = ("k.py", 9)
                w.taken.add("y")
                w.line("int y = 0;")
            assert w.taken == {"y"}  # the lambda's names, until its parameters are named
        assert w.taken == {"x"}
        w.lines.extend(body)
    assert body == ["      int y = 0;"]  # one level deeper than the block it is written in
    assert w.lines == ["  {", "      int y = 0;", "  }"]
    assert (w.depth, w.last_stmt, w.in_lambda) == (1, ("k.py", 3), False)


def test_the_state_comes_back_when_rendering_fails():
    w = Writer()
    with pytest.raises(RuntimeError):
        with w.own_names(), w.lambda_body():
            with w.block():
                raise RuntimeError("unsupported op")
    assert (w.lines, w.depth, w.taken, w.in_lambda) == ([], 1, {"x"}, False)
