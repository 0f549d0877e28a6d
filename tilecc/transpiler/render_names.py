"""The C names of a kernel's values (`Names`, one per rendering, handed to every writer):
each value's variable named after the Python variable it was bound to, or after the value
it feeds; fresh names for the code tilecc generates, distinct from every user name.  Its
state is its own and written only here: the name of each value (by the value whose
variable it lives in), the names taken, every name given out, the Python names respelled
and the tensor maps' parameters."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from tilecc.transpiler.ir import Kernel, Region, Value
from tilecc.transpiler.names import c_identifier, unique
from tilecc.transpiler.render_context import RenderContext


class Names:
    def __init__(self, ctx: RenderContext):
        self.ctx = ctx
        self.by_variable: dict[int, str] = {}  # the value whose C variable it is → name
        self.taken: set[str] = set()
        self.allocated: set[str] = set()  # every name taken, lambdas' included
        # Python name -> its C++ spelling, where that is more than a trailing `_` (the
        # kernel's header comment lists them)
        self.renamed: dict[str, str] = {}
        self.map_names: dict = {}  # a tensor map's key → its parameter

    def name(self, v: Value) -> str:
        vid = self.ctx.root(v)
        if vid in self.by_variable:
            return self.by_variable[vid]
        python = v.name or self._derived_name(v)
        base = c_identifier(python)
        if base in self.ctx.dot_names:
            base += "_"
        candidate = unique(base, self.taken)
        self.allocated.add(candidate)
        if v.name and base not in (v.name, v.name + "_"):  # not just a trailing `_`
            self.renamed.setdefault(v.name, candidate)
        self.by_variable[vid] = candidate
        return candidate

    def fresh(self, base: str, add: bool = True) -> str:
        """A new name for code tilecc generates from `base` (`acc_sum`, `x_tile`): distinct
        from every name of the kernel, user names included (`add=False`: for a block that
        declares it each time it is written, e.g. a pipeline's copies)."""
        name = unique(base, self.taken, add)
        self.allocated.add(name)
        return name

    def fresh_for(self, v: Value, base: str) -> str:
        """A fresh name (from `base`) for a value of tilecc's own making (a staged copy)."""
        self.by_variable[v.id] = name = self.fresh(base)
        return name

    def given(self) -> frozenset[str]:
        """Every name given out or derived from a value (`names.unique`)."""
        return frozenset(self.allocated | set(self.by_variable.values()))

    @contextmanager
    def own_names(self) -> Iterator[None]:
        """Names taken in the `with` are its own (a lambda captures nothing: its parameters
        and locals may reuse the kernel's names); the kernel's are back after it."""
        saved, self.taken = self.taken, set()
        try:
            yield
        finally:
            self.taken = saved

    @contextmanager
    def named_as(self, v: Value, text: str) -> Iterator[None]:
        """`v` written as `text` in the `with` (a pipeline's copies of a later iteration:
        the loop index as that iteration's)."""
        root = self.ctx.root(v)
        saved, self.by_variable[root] = self.by_variable[root], text
        try:
            yield
        finally:
            self.by_variable[root] = saved

    def name_user_values(self, kernel: Kernel) -> None:
        """Parameters first, then every named value the kernel declares, in program order:
        user names are all taken before generated code picks its own (see `fresh`)."""
        for p in kernel.params:
            if p.value is not None:
                self.name(p.value)
        # the tensor maps of descriptors that TMA copies read: parameters after these
        # (a descriptor copied as A's rows in one box has a second map, of 8-row boxes)
        split = {(m.param, m.args) for m in kernel.tensor_maps if m.rows_split}
        self.map_names = {m.key: self.fresh(
            f"{m.param}_8rows_map" if not m.rows_split and (m.param, m.args) in split
            else f"{m.param}_map") for m in kernel.tensor_maps}
        inline = self.ctx.emission.inline

        def visit(region: Region) -> None:
            for op in region.ops:
                for v in op.results:
                    if v.name and v.id not in inline:
                        self.name(v)
                if op.kind not in ("reduce", "scan", "map"):  # lambdas: names of their own
                    for r in op.regions:
                        visit(r)

        visit(kernel.body)

    def _derived_name(self, v: Value) -> str:
        """An unnamed value feeding a named one is named after it: the raw load behind
        `x = tl.load(...).to(tl.float32)` becomes `x_fp16`; `tl.max(x, 0)` is `x_max`."""
        if v.owner is not None and v.owner.kind in ("reduce", "scan"):
            what = v.owner.attrs.get("combine", v.owner.kind)
            src = v.owner.operands[0].name
            return f"{src}_{what}" if src else what
        if v.owner is not None and v.owner.kind == "load":
            user = self.ctx.consumers.get(v.id)
            if user is not None and user.name:
                return f"{user.name}_{v.dtype.short}"
            return "loaded"
        return "t"
