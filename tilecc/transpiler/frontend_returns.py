"""Early `return`: how the frontend lowers a `return` that not every program reaches.

Structured IR has no jump out of an `if`: an `if` with a `return` in it takes the
statements after it into its branches (a branch that returns stops there), and its
results are the returned values; a `tl.static_range` loop with a `return` in it is
unrolled into one list of statements first, so that a `return` also ends the iterations
after it.  Inside `for` and `while` loops a `return` is refused, as Triton refuses it.

`EarlyReturns` is a mixin of the frontend's `FunctionTracer`: it uses the tracer's
`eval`, `run_body`, `error`, `scope` and `b` (the emitter), and its hooks
`scalar_condition`, `is_static_range`, `wrap_item` and `describe`.
"""

from __future__ import annotations

import builtins as pybuiltins
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import libcst as cst

from tilecc.errors import CompilationError, UnsupportedLanguageConstruct
from tilecc.language import dtypes as D
from tilecc.transpiler import semantic as S
from tilecc.transpiler.frontend_source import descendants
from tilecc.transpiler.ir import Op, Region, Value
from tilecc.transpiler.semantic import Const


@dataclass(frozen=True)
class Bind:
    """`name = value` between the iterations of an unrolled static loop."""

    name: str
    value: int


class Return(Exception):
    """A `return` being traced: its value, and where a kernel's `return value` is reported."""

    def __init__(self, value: Any, node: cst.Return | None = None):
        self.value = value
        self.node = node


# What a branch that ends without a `return` gives (its function's end reached): where the
# other branch returns a value, Triton returns an undefined value (poison) on this path.
FELL_OFF = Const(None)


@lru_cache(maxsize=8192)
def contains_return(node: cst.CSTNode) -> bool:
    """Whether a `return` lies anywhere inside `node` (kept per node, as `assigned_names`)."""
    return any(isinstance(n, cst.Return) for n in descendants(node))


_INVERSE = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt", "eq": "ne", "ne": "eq"}


def _negated(b, cond: Value) -> Value:
    """`not cond`; an integer comparison as its inverse (`pid != 0`), which reads better
    (floats keep `!(a < b)`: with a NaN, `a >= b` is not its negation)."""
    op = cond.owner
    if op is not None and op.kind == "cmp" and all(
            v.dtype.is_int() or v.dtype.is_ptr() for v in op.operands):
        return S.compare(b, _INVERSE[op.attrs["pred"]], *op.operands)
    return S.unary(b, "not", cond)


class EarlyReturns:
    def unroll_returning_static_loop(self, node: cst.For) -> list | None:
        """A `tl.static_range` loop with a `return` in it, as the list of its iterations'
        statements (so that a `return` ends the later iterations and what follows the
        loop, as in Triton); None for other loops."""
        it = node.iter
        if not (isinstance(it, cst.Call) and isinstance(node.target, cst.Name)) or \
                not self.is_static_range(self.eval(it.func)):
            return None
        self.stmt_line = self.pf.loc(node).line
        self._record_statement(node)
        args = [self.eval(a.value) for a in it.args]
        if not all(isinstance(x, Const) and isinstance(x.value, int) for x in args) or \
                any(a.keyword is not None for a in it.args) or not 1 <= len(args) <= 3:
            return None  # visit_for reports it
        out: list = []
        for i in pybuiltins.range(*(a.value for a in args)):
            out += [Bind(node.target.value, i), *node.body.body]
        return out

    def _return_in_loop(self, node: cst.CSTNode) -> CompilationError:
        return UnsupportedLanguageConstruct(
            "Cannot have `return` statements inside `while` or `for` statements (as in "
            "Triton); compute the result in a variable and return it after the loop",
            self.pf.loc(node, self.stmt_line))

    def visit_returning_if(self, node: cst.If, rest: list) -> list:
        """An `if` with a `return` somewhere in it; `rest`, the statements after it.  A
        run-time test becomes an `if` op whose branches are each branch followed by `rest`
        (a branch stops at its `return`); its results are the returned values, and the
        function ends there.  A constexpr test gives the statements to run instead."""
        self.stmt_line = self.pf.loc(node).line
        self._record_statement(node)
        test = self._at(node.test, lambda: self.eval(node.test))
        cond = self._at(node.test, lambda: S.truthy(self.b, test))
        orelse = node.orelse
        else_body = [] if orelse is None else (
            [orelse] if isinstance(orelse, cst.If) else list(orelse.body.body))
        if isinstance(cond, Const) and not self.run_time_in_triton(test):
            return list(node.body.body if cond.value else else_body) + list(rest)
        if isinstance(cond, Const):  # a number bound by assignment: Triton's `if` is run-time
            cond = S.to_value(self.b, cond)
        if self.loop_depth:
            raise self._return_in_loop(node)
        cond = self.scalar_condition(node.test, cond)
        before = dict(self.scope)
        branches = []
        for body in (list(node.body.body) + rest, else_body + rest):
            self.scope = dict(before)
            region = Region()
            self.b.regions.append(region)
            try:
                self.run_body(body)
                value = FELL_OFF
            except Return as r:
                value = r.value
            finally:
                self.b.regions.pop()
            branches.append((region, value))
        self.scope = before
        (then_region, a), (else_region, c) = branches
        value, results = self._merge_returns(node, a, c, then_region, else_region)
        if not then_region.ops and not then_region.yields:  # `if c: return`: run the rest
            cond = self._at(node.test, lambda: _negated(self.b, cond))
            then_region, else_region = else_region, then_region
        self.b.emit_op(Op("if", [cond], results, self.pf.loc(node), {},
                          [then_region, else_region]))
        raise Return(value, node)

    def _undefined_beside(self, node, x: Any, y: Any, then_region: Region,
                          else_region: Region) -> tuple[Any, Any]:
        """(x, y) with the one that fell off the function's end replaced by an undefined
        value of the other's type (zeros: Triton's poison may be anything)."""
        other, region = (y, then_region) if x is FELL_OFF else (x, else_region)
        if not (isinstance(other, Value) or S.is_number(other)):
            return x, y  # nothing to stand in for: reported as different values
        self.b.regions.append(region)
        try:
            t = other.type if isinstance(other, Value) else S.to_value(self.b, other).type
            if t.dtype.is_ptr():
                zero = S.cast(self.b, S.constant(self.b, 0, D.int64), t.dtype)
            else:
                zero = S.constant(self.b, 0, t.dtype)
            undefined = S.splat(self.b, zero, t.shape)
        finally:
            self.b.regions.pop()
        return (undefined, y) if x is FELL_OFF else (x, undefined)

    def _inconsistent_returns(self, node, a, c) -> CompilationError:
        return self.error(node, f"Inconsistent return types: the branches of this `if` return "
                                f"{a} and {c}; cast one of them")  # Triton's words first

    def _merge_returns(self, node, a: Any, c: Any, then_region: Region,
                       else_region: Region) -> Any:
        """The value a returning `if` gives: equal constants stay constants; kernel values
        (and numbers) become the `if` op's results, yielded by each branch."""
        if (a is FELL_OFF) != (c is FELL_OFF) and isinstance(a if c is FELL_OFF else c, Const) \
                and isinstance((a if c is FELL_OFF else c).value, tuple):
            other = a if c is FELL_OFF else c  # each item undefined on the path that fell off
            a, c = [Const((FELL_OFF,) * len(other.value)) if v is FELL_OFF else v for v in (a, c)]
        pair = (a, c)
        if all(isinstance(v, Const) and isinstance(v.value, tuple) for v in pair) and \
                len(a.value) == len(c.value):
            pair_items = list(zip(*(tuple(self.wrap_item(x) for x in v.value) for v in pair)))
        else:
            pair_items = [pair]
        fixed, merged = [], []
        for x, y in pair_items:
            if isinstance(x, Const) and isinstance(y, Const) and type(x.value) is \
                    type(y.value) and x.value == y.value:
                fixed.append(x)
                continue
            if x is FELL_OFF or y is FELL_OFF:
                x, y = self._undefined_beside(node, x, y, then_region, else_region)
            for v in (x, y):
                if _is_none(v):  # a bare `return` beside a value
                    raise self._inconsistent_returns(node, _shown_type(x), _shown_type(y))
                if not (isinstance(v, Value) or S.is_number(v)):
                    raise self.error(node, "the branches of this `if` return different "
                                           f"values ({self.describe(x)} and {self.describe(y)}); "
                                           "return kernel values of one type from both")
            types_ = {v.type for v in (x, y) if isinstance(v, Value)}
            if len(types_) > 1:
                raise self._inconsistent_returns(node, x.type, y.type)
            ys = []
            for v, region in ((x, then_region), (y, else_region)):
                if isinstance(v, Const):
                    self.b.regions.append(region)
                    try:
                        v = S.constant(self.b, v.value, next(iter(types_)).dtype) if types_ \
                            else S.to_value(self.b, v)
                    finally:
                        self.b.regions.pop()
                ys.append(v)
            if ys[0].type != ys[1].type:
                raise self._inconsistent_returns(node, ys[0].type, ys[1].type)
            then_region.yields.append(ys[0])
            else_region.yields.append(ys[1])
            result = Value(ys[0].type)
            merged.append(result)
            fixed.append(result)
        value = Const(tuple(v.value if isinstance(v, Const) else v for v in fixed)) if len(pair_items) > 1 or \
            pair_items[0] is not pair else fixed[0]
        return value, merged


def _is_none(x: Any) -> bool:
    return isinstance(x, Const) and x.value is None


def _shown_type(x: Any) -> str:
    """A returned thing's type, as the mismatch message names it (Triton: void for none)."""
    if isinstance(x, Value):
        return str(x.type)
    if _is_none(x):
        return "void"
    if S.is_number(x):
        return D.literal_dtype(x.value).short
    return type(x.value).__name__ if isinstance(x, Const) else type(x).__name__
