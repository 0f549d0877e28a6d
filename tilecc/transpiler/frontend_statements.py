"""Statements, as the frontend's `FunctionTracer` traces them: a body statement by statement
(its text and comments recorded for the generated code), assignments and unpacking,
`if` (a constexpr test keeps one branch; a run-time one becomes an `if` op whose results
are the names both branches assign) and the run-time `a if c else b`.  Loops are in
`frontend_loops`, early returns in `frontend_returns`.

`Statements` is a mixin of `FunctionTracer`: it uses the tracer's `eval`, `error`,
`unsupported`, `_at`, `pf`, `b` (the emitter), `kernel` and `scope`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import libcst as cst

from tilecc.transpiler import builtins_block_ptr as BP
from tilecc.transpiler import semantic as S
from tilecc.transpiler.frontend_calls import call_method
from tilecc.transpiler.frontend_expressions import BINOPS
from tilecc.transpiler.frontend_names import AssignedNumber, TLRef, describe, is_none, wrap_item
from tilecc.transpiler.frontend_returns import Bind, Return, contains_return
from tilecc.transpiler.frontend_source import assigned_names, small_statements_text
from tilecc.transpiler.ir import Op, Region, Value
from tilecc.transpiler.semantic import Const


class Statements:
    """Statements, assignments and `if` (a mixin of `FunctionTracer`)."""

    # statements ----------------------------------------------------------------------------
    def run_body(self, statements) -> None:
        statements = list(statements)
        self._record_one_line_body(statements)
        i = 0
        while i < len(statements):
            stmt = statements[i]
            if isinstance(stmt, Bind):  # an unrolled static loop's next iteration
                self.scope[stmt.name] = Const(stmt.value)
                i += 1
                continue
            if isinstance(stmt, cst.For) and contains_return(stmt):
                unrolled = self.unroll_returning_static_loop(stmt)
                if unrolled is not None:  # its iterations, then the rest, in one list
                    statements, i = unrolled + statements[i + 1:], 0
                    continue
            if isinstance(stmt, cst.If) and contains_return(stmt):
                # the statements after it run only where it did not return: they are traced
                # into its branches (a constexpr test keeps one branch, then the rest)
                statements, i = self.visit_returning_if(stmt, statements[i + 1:]), 0
                continue
            self.visit_stmt(stmt)
            i += 1

    def run_nested(self, node: cst.CSTNode, statements) -> None:
        """A loop's body, where `return` cannot be honoured (as in Triton)."""
        self.loop_depth += 1
        try:
            self.run_body(statements)
        except Return as r:
            raise self._return_in_loop(r.node or node) from None
        finally:
            self.loop_depth -= 1

    def visit_stmt(self, stmt: cst.CSTNode) -> None:
        self.stmt_line = self.pf.loc(stmt).line
        self._record_statement(stmt)
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self._at(small, lambda s=small: self.visit_small(s))
        elif isinstance(stmt, cst.BaseSmallStatement):
            # the body of a one-line `def f(x): return x`, `if c: x = 1`, `for ...: acc += i`
            self._at(stmt, lambda: self.visit_small(stmt))
        elif isinstance(stmt, cst.If):
            self.visit_if(stmt)
        elif isinstance(stmt, cst.For):
            self.visit_for(stmt)
        elif isinstance(stmt, cst.While):
            self.visit_while(stmt)
        else:
            raise self.unsupported(stmt, f"{type(stmt).__name__} statements are not supported "
                                         "in kernels")

    def _record_statement(self, stmt: cst.CSTNode) -> None:
        comments = [line.comment.value for line in getattr(stmt, "leading_lines", ())
                    if line.comment is not None]
        if isinstance(stmt, cst.SimpleStatementLine):
            text = small_statements_text(self.pf, stmt.body)
            if stmt.trailing_whitespace.comment:
                comments.append(stmt.trailing_whitespace.comment.value)
        elif isinstance(stmt, cst.If):
            text = f"if {self.pf.code(stmt.test)}:"
        elif isinstance(stmt, cst.For):
            text = f"for {self.pf.code(stmt.target)} in {self.pf.code(stmt.iter)}:"
        elif isinstance(stmt, cst.While):
            text = f"while {self.pf.code(stmt.test)}:"
        else:
            return  # a one-line body's statements: its header's line shows them
        if isinstance(stmt.body, cst.SimpleStatementSuite):  # `if c: x = 1` on one line
            text += " " + small_statements_text(self.pf, stmt.body.body)
        self.kernel.statements[(self.pf.file, self.stmt_line)] = (text, comments)

    def _record_one_line_body(self, statements: list) -> None:
        """A body on its header's line (`def k(x): tl.store(x, 1.0)`) is that line's
        statement text, unless the header (`if c: x = 1`) has recorded the line."""
        small = []
        for stmt in statements:
            if not isinstance(stmt, cst.BaseSmallStatement) or \
                    (small and self.pf.loc(stmt).line != self.pf.loc(small[0]).line):
                break
            small.append(stmt)
        if small:
            key = (self.pf.file, self.pf.loc(small[0]).line)
            self.kernel.statements.setdefault(key, (small_statements_text(self.pf, small), []))

    def visit_small(self, s: cst.BaseSmallStatement) -> None:
        if isinstance(s, cst.Assign):
            value = self.eval(s.value)
            if type(value) is Const and isinstance(value.value, (bool, int, float)):
                value = AssignedNumber(value.value)
            for target in s.targets:
                self.assign(target.target, value)
        elif isinstance(s, cst.AnnAssign):
            if s.value is None:
                return
            self.assign(s.target, self.eval(s.value))
        elif isinstance(s, cst.AugAssign):
            fn = BINOPS.get(type(s.operator).__name__.replace("Assign", ""))
            if fn is None or not isinstance(s.target, cst.Name):
                raise self.error(s, "unsupported augmented assignment")
            current = self.lookup(s.target)
            self.assign(s.target, self.binop(fn, current, self.eval(s.value)))
        elif isinstance(s, cst.Expr):
            if not isinstance(s.value, (cst.SimpleString, cst.ConcatenatedString)):
                self.eval(s.value)
        elif isinstance(s, cst.Return):
            raise Return(self.eval(s.value) if s.value is not None else Const(None), s)
        elif isinstance(s, cst.Pass):
            pass
        elif isinstance(s, cst.Assert):
            msg = self.eval(s.msg) if s.msg is not None else Const("")
            from tilecc.transpiler.builtins import device_assert
            device_assert(self, "device_assert", self.eval(s.test), msg, Const(None))
        elif isinstance(s, (cst.Break, cst.Continue)):
            raise self.unsupported(s, f"`{type(s).__name__.lower()}` is not supported in kernels; "
                                "use a `while` loop with a condition")
        else:
            raise self.unsupported(s, f"{type(s).__name__} statements are not supported in "
                                      "kernels")

    def assign(self, target: cst.BaseAssignTargetExpression, value: Any) -> None:
        if isinstance(target, cst.Name):
            if isinstance(value, Value) and value.name is None:
                value.name = target.value
            self.scope[target.value] = value
        elif isinstance(target, (cst.Tuple, cst.List)):
            items = value.value if isinstance(value, Const) else value
            if not isinstance(items, tuple) or len(items) != len(target.elements):
                raise self.error(target, "cannot unpack this value into "
                                         f"{len(target.elements)} names")
            for el, item in zip(target.elements, items):
                self.assign(el.value, wrap_item(item))
        else:
            raise self.error(target, "only assignments to plain names are supported in kernels")

    # control flow ------------------------------------------------------------------------------
    def visit_if(self, node: cst.If) -> None:
        cond = self._at(node.test, lambda: S.truthy(self.b, self.eval(node.test)))
        orelse = node.orelse
        else_body = [] if orelse is None else (
            [orelse] if isinstance(orelse, cst.If) else list(orelse.body.body))
        if isinstance(cond, Const):  # constexpr condition: keep one branch, no code for the test
            self.run_body(node.body.body if cond.value else else_body)
            return
        cond = self.scalar_condition(node.test, cond)
        before = dict(self.scope)
        branches = []
        for body in (node.body.body, else_body):
            self.scope = dict(before)
            region = Region()
            self.b.regions.append(region)
            try:
                self.run_nested(node, body)
            finally:
                self.b.regions.pop()
            branches.append((region, self.scope))
        self.scope = before
        names = [n for n in assigned_names(node) if n in branches[0][1] and n in branches[1][1]
                 and (branches[0][1][n] is not before.get(n) or
                      branches[1][1][n] is not before.get(n))]
        block_pointers = {}  # name -> its value in the then-branch: merged by offsets
        for name in [n for n in names if isinstance(branches[0][1][n], BP.BlockPointer) or
                     isinstance(branches[1][1][n], BP.BlockPointer)]:
            a, c = branches[0][1][name], branches[1][1][name]
            if not (isinstance(a, BP.BlockPointer) and a.same_layout(c)):
                raise self.error(node, f"block pointer `{name}` must point into the same "
                                       "tensor the same way in both branches (only tl.advance "
                                       "may differ); make it before the `if`")
            names.remove(name)
            # merged by their offsets; the pointers are made again from them where read
            block_pointers[name] = replace(a, pointers=None)
            for key, _ in BP.offset_slots(name, a):
                i = BP.split_slot(key)[1]
                branches[0][1][key], branches[1][1][key] = a.offsets[i], c.offsets[i]
                names.append(key)
        merged = []
        for name in names:
            a, c = branches[0][1][name], branches[1][1][name]
            if isinstance(a, Const) and isinstance(c, Const) and a.value == c.value:
                self.scope[name] = a
                continue
            merged.append(name)
        yields = [[], []]
        for name in merged:
            pair = [branches[i][1][name] for i in (0, 1)]
            types_ = {v.type for v in pair if isinstance(v, Value)}
            if len(types_) > 1:
                # Triton's words first ("Mismatched type for x between then block...")
                raise self.error(node, f"Mismatched type for {name} between then block "
                                       f"({pair[0].type}) and else block ({pair[1].type}); "
                                       "cast one of them")
            for i, v in enumerate(pair):
                if not isinstance(v, (Value, Const)) or not (isinstance(v, Value) or S.is_number(v)):
                    raise self.error(node, f"`{name}` must be a kernel value to be assigned "
                                           "in a run-time `if`")
                if isinstance(v, Const):
                    self.b.regions.append(branches[i][0])
                    try:
                        v = S.constant(self.b, v.value, next(iter(types_)).dtype) if types_ \
                            else S.to_value(self.b, v)
                    finally:
                        self.b.regions.pop()
                yields[i].append(v)
        results = [Value(y.type, n) for y, n in zip(yields[0], merged)]
        branches[0][0].yields, branches[1][0].yields = yields
        self.b.emit_op(Op("if", [cond], results, self.pf.loc(node), {},
                          [branches[0][0], branches[1][0]]))
        self.scope.update(block_pointers)
        for name, r in zip(merged, results):
            if BP.split_slot(name) is not None:
                self._bind_carried([name], [r])
            else:
                self.scope[name] = r

    def run_time_ternary(self, node: cst.IfExp, cond: Value) -> Any:
        """`a if cond else b` on a run-time scalar: an `if` op, as Triton's, so that only
        the branch taken runs (its loads, its stores); both branches give values of one
        type (a number takes the other's type), or both give nothing (calls of void
        functions, run for their effects).  Branches that compute nothing are a select."""
        values, regions = [], []
        for branch in (node.body, node.orelse):
            region = Region()
            self.b.regions.append(region)
            try:
                values.append(self.eval(branch))
            finally:
                self.b.regions.pop()
            regions.append(region)
        if all(isinstance(v, Const) and v.value is None for v in values):
            self.b.emit_op(Op("if", [cond], [], self.pf.loc(node), {}, regions))
            return Const(None)
        types_ = {v.type for v in values if isinstance(v, Value)}
        if len(types_) > 1:
            a, c = values
            raise self.error(node, "Ternary expression with dynamic condition has inconsistent "
                                   f"types {a.type} and {c.type}; cast one of them")
        if not any(r.ops for r in regions) and not any(is_none(v) for v in values):
            return S.where(self.b, cond, *values)  # nothing to run: a select will do
        for i, v in enumerate(values):
            if not (isinstance(v, Value) or S.is_number(v)):
                raise self.error(node, "the branches of a run-time `... if ... else ...` must "
                                       "both give kernel values (or both nothing), got "
                                       f"{self.describe(values[0])} and "
                                       f"{self.describe(values[1])}")
            if isinstance(v, Const):
                self.b.regions.append(regions[i])
                try:
                    values[i] = S.constant(self.b, v.value, next(iter(types_)).dtype) \
                        if types_ else S.to_value(self.b, v)
                finally:
                    self.b.regions.pop()
        if values[0].type != values[1].type:  # two numbers of different kinds
            raise self.error(node, "Ternary expression with dynamic condition has inconsistent "
                                   f"types {values[0].type} and {values[1].type}; cast one of "
                                   "them")
        for region, v in zip(regions, values):
            region.yields.append(v)
        result = Value(values[0].type)
        self.b.emit_op(Op("if", [cond], [result], self.pf.loc(node), {}, regions))
        return result

    # hooks of EarlyReturns ------------------------------------------------------------------
    def scalar_condition(self, test: cst.CSTNode, cond: Value) -> Value:
        """A run-time `if` test as a scalar: a block of one element tests its element (as
        in Triton); a larger block is an error."""
        if cond.type.is_block and cond.type.numel == 1:
            cond = self._at(test, lambda: call_method(self, cond, "item", [], {}, test))
        if cond.type.is_block:
            raise self.unsupported(test, "an `if` condition must be a scalar (or a block of "
                                         "one element): the boolean value of a block of more "
                                         "is ambiguous; for blocks use tl.where or a mask")
        return cond

    @staticmethod
    def run_time_in_triton(test: Any) -> bool:
        """A condition tilecc folds that Triton's code generator does not: a number bound
        by assignment (`a = False`), which Triton makes a scalar kernel value."""
        return isinstance(test, AssignedNumber)

    @staticmethod
    def is_static_range(func: Any) -> bool:
        return func == TLRef("tl.static_range")

    @staticmethod
    def wrap_item(item: Any) -> Any:
        return wrap_item(item)

    @staticmethod
    def describe(x: Any) -> str:
        return describe(x)
