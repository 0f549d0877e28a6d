"""Loops, as the frontend's `FunctionTracer` traces them: `tl.static_range` unrolled;
`range` / `tl.range` and `while` as `for` / `while` ops whose region arguments are the
names the body reassigns (block pointers carried as their offsets), each checked to keep
its type; a name the body cannot carry must in fact keep its value.

`Loops` is a mixin of `FunctionTracer`: it uses the tracer's `eval`, `error`, `_at`,
`run_nested`, `pf`, `b` (the emitter) and `scope`.
"""

from __future__ import annotations

import builtins as pybuiltins
from typing import Any

import libcst as cst

from tilecc.language import dtypes as D
from tilecc.transpiler import builtins_block_ptr as BP
from tilecc.transpiler import semantic as S
from tilecc.transpiler.frontend_names import PyBuiltin, TLRef, describe
from tilecc.transpiler.frontend_source import assigned_names
from tilecc.transpiler.ir import Op, Region, Type, Value
from tilecc.transpiler.semantic import Const


class Loops:
    """`for` and `while` loops (a mixin of `FunctionTracer`)."""

    def _carried(self, node: cst.CSTNode, names: list[str]) -> tuple[list[str], list[Value]]:
        """Names a loop's body assigns that exist before it, with their initial values.
        A name holding something that cannot be carried (None, a string, a descriptor) is
        left as it is: the body may assign it only under a constexpr test that is false here
        (`if HAS_RES: res_ptr += stride` with `res_ptr=None`), which
        `_check_loop_invariants` confirms once the body is traced."""
        carried, inits = [], []
        for name in names:
            if name not in self.scope:
                continue
            v = self.scope[name]
            if isinstance(v, Const):
                if not S.is_number(v):
                    continue
                v = self._at(node, lambda v=v: S.to_value(self.b, v))
            elif isinstance(v, BP.BlockPointer):  # carried as its offsets and pointers
                slots = self._at(node, lambda v=v, name=name: BP.loop_slots(self.b, name, v))
                for key, init in slots:
                    carried.append(key)
                    inits.append(init)
                continue
            elif not isinstance(v, Value):
                continue
            carried.append(name)
            inits.append(v)
        return carried, inits

    def _check_loop_invariants(self, node, carried: list[str], init_scope: dict) -> None:
        """The names the body assigns but the loop does not carry still hold their value
        from before the loop (the body did not in fact assign them)."""
        for name in assigned_names(node.body):
            if name in carried or name not in init_scope or \
                    isinstance(init_scope[name], BP.BlockPointer):
                continue
            before, now = init_scope[name], self.scope.get(name)
            if now is before or (isinstance(now, Const) and isinstance(before, Const) and
                                 type(now.value) is type(before.value) and
                                 now.value == before.value):
                continue
            if isinstance(before, Const):
                raise self.error(node, f"`{name}` is reassigned in the loop, but it holds "
                                       f"{before.value!r} before it, which is not a kernel "
                                       "value")
            raise self.error(node, f"`{name}` ({describe(before)}) cannot be reassigned "
                                   "inside a loop")

    def _bind_carried(self, carried: list[str], values: list[Value]) -> None:
        """Bind a loop's carried names (block pointers' offset slots included) to values."""
        for key, v in zip(carried, values):
            slot = BP.split_slot(key)
            if slot is None:
                self.scope[key] = v
                continue
            v.name = key.replace(".", "_")
            self.scope[slot[0]] = BP.rebind(self.scope[slot[0]], slot[1], v)

    def _carried_now(self, node, key: str, init_scope: dict) -> Any:
        slot = BP.split_slot(key)
        if slot is None:
            return self.scope[key]
        name, i = slot
        return self._at(node, lambda: BP.slot_value(self.b, name, i, init_scope[name],
                                                     self.scope.get(name)))

    def _close_loop_body(self, node, region: Region, carried: list[str], inits: list[Value],
                         init_scope: dict):
        self._check_loop_invariants(node, carried, init_scope)
        for name, init in zip(carried, inits):
            v = self._carried_now(node, name, init_scope)
            if isinstance(v, Const):
                v = self._at(node, lambda v=v, t=init.dtype: S.cast(self.b, v, t))
            if not isinstance(v, Value) or v.type != init.type:
                got = v.type if isinstance(v, Value) else v
                raise self.error(node, f"loop-carried variable `{name}` has type {init.type} "
                                       f"before the loop but {got} at the end of its body; "
                                       "give it its final type before the loop")
            region.yields.append(v)

    def visit_for(self, node: cst.For) -> None:
        if not isinstance(node.target, cst.Name):
            raise self.error(node.target, "the loop variable must be a plain name")
        it = node.iter
        func = self.eval(it.func) if isinstance(it, cst.Call) else None
        kind = {PyBuiltin("range"): "range", TLRef("tl.range"): "range",
                TLRef("tl.static_range"): "static"}.get(func) if func is not None else None
        if kind is None:
            raise self.error(it, "kernels can only loop over range(...), tl.range(...) "
                                 "or tl.static_range(...)")
        args = [self.eval(a.value) for a in it.args if a.keyword is None]
        kwargs = {a.keyword.value: self.eval(a.value) for a in it.args if a.keyword is not None}
        if not 1 <= len(args) <= 3:
            raise self.error(it, "range takes 1 to 3 arguments")
        lo, hi, step = (Const(0), args[0], Const(1)) if len(args) == 1 else \
            (args[0], args[1], args[2] if len(args) == 3 else Const(1))
        if "step" in kwargs:
            step = kwargs["step"]
        attrs = {}
        if kind == "range" and kwargs.get("num_stages") is not None:
            # this loop's own pipeline depth, which Triton takes over the launch's
            depth = kwargs["num_stages"]
            if not (isinstance(depth, Const) and type(depth.value) is int and depth.value >= 0):
                raise self.error(it, "tl.range's num_stages must be a non-negative constexpr "
                                     f"integer, got {getattr(depth, 'value', depth)!r}")
            attrs["num_stages"] = depth.value
        var = node.target.value
        if kind == "static":
            if not all(isinstance(x, Const) and isinstance(x.value, int) for x in (lo, hi, step)):
                raise self.error(it, "tl.static_range bounds must be constexpr integers")
            for i in pybuiltins.range(lo.value, hi.value, step.value):
                self.scope[var] = Const(i)
                self.run_nested(node, node.body.body)
            return
        if isinstance(step, Const) and step.value == 0:
            raise self.error(it, "range() step must not be zero")
        bounds = []
        for x in (lo, hi, step):
            v = self._at(it, lambda x=x: S.to_value(self.b, x))
            if not v.dtype.is_int() or v.type.is_block:
                raise self.error(it, f"range bounds must be integer scalars, got {v.type}")
            bounds.append(v)
        iv_type = D.int32
        for v in bounds:
            iv_type = D.integer_promote(iv_type, v.dtype)
        bounds = [self._at(it, lambda v=v: S.cast(self.b, v, iv_type)) for v in bounds]
        carried, inits = self._carried(node, assigned_names(node.body))
        iv = Value(Type(iv_type), var)
        region = Region([iv] + [Value(v.type, n) for v, n in zip(inits, carried)])
        outer = dict(self.scope)
        self.scope[var] = iv
        self._bind_carried(carried, region.args[1:])
        self.b.regions.append(region)
        try:
            self.run_nested(node, node.body.body)
            self._close_loop_body(node, region, carried, inits, outer)
        finally:
            self.b.regions.pop()
        results = [Value(v.type, n) for v, n in zip(inits, carried)]
        step_sign = (1 if step.value > 0 else -1) if isinstance(step, Const) else 1
        self.b.emit_op(Op("for", bounds + inits, results, self.pf.loc(node),
                          {"step_sign": step_sign, **attrs}, [region]))
        self.scope = outer
        self._bind_carried(carried, results)

    def visit_while(self, node: cst.While) -> None:
        if node.orelse is not None:
            raise self.error(node, "`while ... else` is not supported")
        carried, inits = self._carried(node, assigned_names(node.body))
        outer = dict(self.scope)
        before = Region([Value(v.type, n) for v, n in zip(inits, carried)])
        self._bind_carried(carried, before.args)
        self.b.regions.append(before)
        try:
            cond = self._at(node.test, lambda: S.truthy(self.b, self.eval(node.test)))
        finally:
            self.b.regions.pop()
        if isinstance(cond, Const):
            if cond.value:
                raise self.error(node.test, "`while True` needs `break`, which kernels do not "
                                            "support; loop on a run-time condition")
            self.scope = outer  # the loop never runs
            return
        if cond.type.is_block:
            raise self.error(node.test, "a `while` condition must be a scalar")
        before.yields = [cond]
        body = Region([Value(v.type, n) for v, n in zip(inits, carried)])
        self.scope = dict(outer)
        self._bind_carried(carried, body.args)
        self.b.regions.append(body)
        try:
            self.run_nested(node, node.body.body)
            self._close_loop_body(node, body, carried, inits, outer)
        finally:
            self.b.regions.pop()
        results = [Value(v.type, n) for v, n in zip(inits, carried)]
        self.b.emit_op(Op("while", inits, results, self.pf.loc(node), {},
                          [before, body]))
        self.scope = outer
        self._bind_carried(carried, results)
