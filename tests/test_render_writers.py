"""The renderer's shape: one writer per family of ops, each op kind written by exactly
one of them (`render.Renderer.ops`), and no writer's state written from outside its own
class (the figure scripts/renderer_figures.py reports)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from test_render_pure import _lower
from tilecc.interpreter.evaluate import Program
from tilecc.transpiler.passes.dce import PURE
from tilecc.transpiler.render import Renderer, _op_table
from tilecc.transpiler.render_blocks import BlockWriter
from tilecc.transpiler.target import resolve_target

FIGURES = Path(__file__).resolve().parents[1] / "scripts" / "renderer_figures.py"


def test_every_statement_op_has_one_writer() -> None:
    """Each op kind the interpreter runs is written by one writer's `op_<kind>`, except the
    element-wise ones, which are expressions (written where they are read)."""
    r = Renderer(*_lower("softmax")[:1], resolve_target("cuda"), False)
    kinds = {name[len("op_"):] for name in dir(Program) if name.startswith("op_")}
    assert kinds - PURE <= set(r.ops)
    assert not set(r.ops) & PURE
    assert r.ops["reduce"].__self__ is r.blocks and r.ops["for"].__self__ is r.core


def test_an_op_with_two_writers_is_refused() -> None:
    class Rival(BlockWriter):  # writes reductions too
        pass

    with pytest.raises(ValueError, match="op [a-z_]+ has two writers"):
        _op_table([BlockWriter, Rival])


def test_no_writer_state_is_written_from_outside_its_class() -> None:
    spec = importlib.util.spec_from_file_location("renderer_figures", FIGURES)
    figures = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = figures
    spec.loader.exec_module(figures)
    state, outside, _ = figures.writer_state()
    assert {"CoreWriter", "ExprWriter", "BlockWriter", "DotWriter"} <= set(state)
    assert outside == []
