"""What a writer of the renderer is: the base of the writers of each family of ops
(`render.CoreWriter`, `render_expr.ExprWriter`, `render_blocks.BlockWriter`, ...)."""

from __future__ import annotations

from tilecc.transpiler.emitter import Emitter
from tilecc.transpiler.render_context import RenderContext
from tilecc.transpiler.render_names import Names


class Writer:
    """The writer of one family of ops (render.Renderer makes one of each).  It reads
    `ctx`, writes C through `out`, names values through `names`, and keeps the state of
    its family in attributes of its own, set up in its `__init__` and written only by its
    own methods.  Another family is reached by name (`self.exprs.text(v)`,
    `self.blocks.pool_step(n)`), never by inheritance."""

    def __init__(self, renderer):
        self.ctx: RenderContext = renderer.ctx
        self.out: Emitter = renderer.out
        self.names: Names = renderer.names
        self._family = renderer

    # the other families' writers
    core = property(lambda self: self._family.core)  # regions, memory, control flow
    exprs = property(lambda self: self._family.exprs)  # values as C expressions
    blocks = property(lambda self: self._family.blocks)  # reductions, the shared pool
    dots = property(lambda self: self._family.dots)  # tl.dot, pipelined loops
