"""Expressions, as the frontend's `FunctionTracer` evaluates them: names (the kernel's scope,
then its globals), literals, operators (constexprs fold, kernel values go through
`semantic`), `and` / `or` as Triton evaluates them, comparisons, tuples, subscripts
(constexpr tuples; `x[None, :]` on blocks) and attributes (of `tl`, modules, kernel
values, descriptors and constexprs).  Calls are in `frontend_calls`.

`Expressions` is a mixin of `FunctionTracer`: it uses the tracer's `call`, `error`,
`unsupported`, `_at`, `run_time_ternary`, `scalar_condition`, `pf`, `b` (the emitter),
`globals` and `scope`.
"""

from __future__ import annotations

import enum
import warnings
from typing import Any

import libcst as cst

from tilecc.language import core as language_core
from tilecc.language import dtypes as D
from tilecc.transpiler import builtins_block_ptr as BP
from tilecc.transpiler import builtins_descriptor as TD
from tilecc.transpiler import semantic as S
from tilecc.transpiler.frontend_calls import call_method
from tilecc.transpiler.frontend_names import (
    PLAIN_CONSTEXPRS, PY_BUILTINS, AssignedNumber, Method, OtherModule, PyBuiltin, TLRef,
    attribute_of_ref, describe, is_none, reference_for, tl_member, wrap_item)
from tilecc.transpiler.ir import Value
from tilecc.transpiler.semantic import Const, HelperRef


class Expressions:
    """Expressions other than calls (a mixin of `FunctionTracer`)."""

    # expressions --------------------------------------------------------------------------------
    def eval(self, node: cst.BaseExpression) -> Any:
        return self._at(node, lambda: self._eval(node))

    def lookup(self, node: cst.Name) -> Any:
        name = node.value
        if name in self.scope:
            return self.scope[name]
        if name in ("True", "False", "None"):
            return Const({"True": True, "False": False, "None": None}[name])
        if name in self.globals:
            ref = reference_for(self.globals[name])
            if isinstance(ref, (Const, TLRef, OtherModule, HelperRef, PyBuiltin)):
                return ref
            raise self.error(node, f"global `{name}` ({type(ref).__name__}) cannot be used in a "
                                   "kernel; pass it as an argument or wrap it in tl.constexpr")
        if name in PY_BUILTINS:
            return PyBuiltin(name)
        raise self.error(node, f"name `{name}` is not defined", "NameError")

    def _eval(self, node: cst.BaseExpression) -> Any:
        if isinstance(node, cst.Name):
            return self.lookup(node)
        if isinstance(node, (cst.Integer, cst.Float)):
            return Const(node.evaluated_value)
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
            return Const(node.evaluated_value)
        if isinstance(node, cst.Attribute):
            return self.attribute(node)
        if isinstance(node, cst.Call):
            return self.call(node)
        if isinstance(node, cst.BinaryOperation):
            fn = BINOPS.get(type(node.operator).__name__)
            if isinstance(node.operator, cst.Power):
                return self.power(node)
            if fn is None:
                raise self.error(node, f"operator `{node.operator.__class__.__name__}` is not "
                                       "supported")
            return self.binop(fn, self.eval(node.left), self.eval(node.right))
        if isinstance(node, cst.UnaryOperation):
            x = self.eval(node.expression)
            op = type(node.operator).__name__
            if op == "Plus":
                return x
            if op == "Not" and isinstance(x, Const):  # any constexpr: `not None`, `not ACT`
                return Const(not x.value)
            return S.unary(self.b, {"Minus": "neg", "BitInvert": "invert", "Not": "not"}[op],
                           self._value_or_const(node.expression, x))
        if isinstance(node, cst.BooleanOperation):
            return self.boolean_operation(node)
        if isinstance(node, cst.Comparison):
            return self.compare(node)
        if isinstance(node, (cst.Tuple, cst.List)):
            # Constant items are stored as plain Python values, so that a tuple of
            # constexprs equals the same Python tuple (`x.shape == (BLOCK,)`) and
            # hints take `(16,)`; unpacking and indexing wrap them back in Const.
            items = []
            for e in node.elements:
                v = _unwrap_const(self.eval(e.value))
                if isinstance(e, cst.StarredElement):  # (*x.shape, 1)
                    if not isinstance(v, tuple):
                        raise self.error(e, "only constexpr tuples can be unpacked with `*`")
                    items.extend(v)
                else:
                    items.append(v)
            return Const(tuple(items))
        if isinstance(node, cst.IfExp):
            test = S.truthy(self.b, self.eval(node.test))
            if isinstance(test, Const):
                return self.eval(node.body if test.value else node.orelse)
            if test.type.is_block and test.type.numel > 1:  # elementwise, as tl.where
                return S.where(self.b, test, self.eval(node.body), self.eval(node.orelse))
            return self.run_time_ternary(node, self.scalar_condition(node.test, test))
        if isinstance(node, cst.Subscript):
            base = self.eval(node.value)
            if isinstance(base, Const) and isinstance(base.value, tuple) and \
                    len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
                idx = self.eval(node.slice[0].slice.value)
                if isinstance(idx, Const) and isinstance(idx.value, int):
                    item = base.value[idx.value]
                    return wrap_item(item)
            if isinstance(base, Const) and isinstance(base.value, tuple) and \
                    len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice):
                sl = node.slice[0].slice  # x.shape[:-1]: a constexpr tuple's slice
                parts = [None if p is None else self.eval(p) for p in (sl.lower, sl.upper,
                                                                        sl.step)]
                if all(p is None or is_none(p) or (isinstance(p, Const) and
                                                   isinstance(p.value, int)) for p in parts):
                    bounds = [None if p is None or is_none(p) else p.value for p in parts]
                    return Const(base.value[slice(*bounds)])
            if isinstance(base, Value):
                return self.index_block(node, base)
            raise self.error(node, "only blocks (x[None, :]) and constexpr tuples can be indexed")
        raise self.unsupported(node, f"{type(node).__name__} expressions are not supported in "
                                     "kernels")

    def boolean_operation(self, node: cst.BooleanOperation) -> Any:
        """`and` / `or` as Triton evaluates them: operands left to right; a constexpr that
        decides the result (False for `and`, True for `or`) is the result, whatever ran
        before it; one that does not is dropped; the kernel values left are combined."""
        is_and = isinstance(node.operator, cst.And)

        def decides(x: Const) -> bool:
            return bool(x.value) != is_and

        left = self.eval(node.left)
        if isinstance(left, Const):
            return left if decides(left) else self.eval(node.right)
        right = self.eval(node.right)
        if isinstance(right, Const):
            return right if decides(right) else left
        if any(isinstance(x, Value) and x.type.is_block for x in (left, right)):
            # Triton's warning, at the same place
            where = self.pf.loc(node)
            warnings.warn_explicit("Logical operators 'and' and 'or' are deprecated for "
                                   "non-scalar tensors; please use '&' or '|' instead",
                                   UserWarning, where.file, where.line)
        return S.logical(self.b, "land" if is_and else "lor", left, right)

    def power(self, node: cst.BinaryOperation) -> Const:
        """`**` of two constexprs (Triton's constexpr.__pow__); blocks have no `**`."""
        a, c = self.eval(node.left), self.eval(node.right)
        if isinstance(a, Const) and isinstance(c, Const):
            return Const(a.value ** c.value)
        raise self.error(node, "`**` takes constexpr operands only (as in Triton); for kernel "
                               "values use tl.exp2(y * tl.log2(x)), libdevice.pow, or x * x")

    def index_block(self, node: cst.Subscript, x: Value) -> Value:
        """x[None, :], x[:, None], x[None]: `None` adds an axis of size 1, `:` keeps one."""
        from tilecc.transpiler.builtins_blocks import expand_dims

        axis, kept = 0, 0
        for el in node.slice:
            sl = el.slice
            if isinstance(sl, cst.Index) and not isinstance(sl.value, cst.Ellipsis) and \
                    is_none(self.eval(sl.value)):
                x = expand_dims(self.b, x, axis)
            elif isinstance(sl, cst.Slice) and all(
                    part is None or is_none(self.eval(part))
                    for part in (sl.lower, sl.upper, sl.step)):
                kept += 1
            else:
                # as Triton (which has no `...` either): a ValueError at the index
                raise self.error(el, f"unsupported tensor index: `{self.pf.code(el)}`; blocks "
                                     "are indexed only with None and `:` (x[:, None], "
                                     "x[None, :])", "ValueError")
            axis += 1
        if kept > len(x.type.shape) - (axis - kept):
            raise self.error(node, f"too many `:` for a block of rank {len(x.type.shape)}")
        return x

    def _value_or_const(self, node, x):
        if isinstance(x, (Value,)) or S.is_number(x):
            return x
        raise self.error(node, f"expected a kernel value, got {describe(x)}")

    def binop(self, fn: str, a: Any, c: Any) -> Any:
        for x in (a, c):
            if not (isinstance(x, Value) or S.is_number(x)):
                raise TypeError(f"operator needs kernel values or numbers, got {describe(x)}")
        return S.binary(self.b, fn, a, c)

    def compare(self, node: cst.Comparison) -> Any:
        left = self.eval(node.left)
        result = None
        for target in node.comparisons:
            right = self.eval(target.comparator)
            op = type(target.operator).__name__
            if op in ("Is", "IsNot") and (is_none(left) or is_none(right)):
                # a kernel value, a descriptor, a function... is never None (`if b_ptr is
                # not None:` with an array)
                same = is_none(left) and is_none(right)
                r = Const(same == (op == "Is"))
            elif op in ("Is", "IsNot"):
                if not (isinstance(left, Const) and isinstance(right, Const)):
                    raise TypeError("`is` compares constexprs only (e.g. `other is None`)")
                r = Const((left.value is right.value) == (op == "Is"))
            elif op in ("In", "NotIn"):
                if not (isinstance(left, Const) and isinstance(right, Const)):
                    raise TypeError("`in` tests constexprs only (e.g. `ACT in (\"relu\", "
                                    "\"gelu\")`)")
                r = Const((left.value in right.value) == (op == "In"))
            elif op in _CMPOPS and isinstance(left, Const) and isinstance(right, Const):
                # constexprs of any kind (strings, dtypes, None) compare as in Python,
                # e.g. `if ACTIVATION == "relu":` or `if x.dtype == tl.float16:`
                r = Const(S.compare_constants(_CMPOPS[op], left.value, right.value))
            elif op in _CMPOPS:
                r = S.compare(self.b, _CMPOPS[op], self._value_or_const(node.left, left),
                              self._value_or_const(target.comparator, right))
            else:
                raise TypeError(f"comparison `{op}` is not supported in kernels")
            result = r if result is None else S.logical(self.b, "land", result, r)
            left = right
        return result

    def attribute(self, node: cst.Attribute) -> Any:
        base = self.eval(node.value)
        attr = node.attr.value
        if isinstance(base, (TLRef, OtherModule)):
            ref = attribute_of_ref(base, attr)
            if isinstance(ref, TLRef):
                return tl_member(ref, node, self)
            if isinstance(ref, (Const, HelperRef)):
                return ref
            raise self.error(node, f"`{self.pf.code(node)}` cannot be used in a kernel")
        if isinstance(base, Value):
            return self.value_attribute(base, attr, node)
        if isinstance(base, TD.TensorDescriptor):
            got = TD.attribute(base, attr)
            if got is not None:
                return got
            if attr in TD.METHODS:
                return Method(base, attr)
            raise self.error(node, f"a tensor descriptor has no attribute `{attr}`",
                             "AttributeError")
        if BP.is_block_pointer(base):
            got = BP.attribute(BP.unwrap(base), attr)
            if got is not None:
                return got
            raise self.error(node, f"a block pointer has no attribute `{attr}` in kernels",
                             "AttributeError")
        if isinstance(base, Const):
            if isinstance(base.value, (D.dtype, D.pointer_type, D.block_type)) and \
                    hasattr(base.value, attr):
                # Methods stay uncalled until the call: `x.dtype.is_floating()` as in
                # Triton (a bound method of a dtype is called in `call` below).
                return Const(getattr(base.value, attr))
            if isinstance(base.value, type) and issubclass(base.value, enum.Enum) and \
                    attr in base.value.__members__:  # tl.PropagateNan.ALL
                return Const(base.value[attr])
            if S.is_number(base) and attr in _CONSTEXPR_METHODS:  # `BLOCK.to(tl.float32)`
                return Method(S.to_value(self.b, base), attr)
            if isinstance(base.value, PLAIN_CONSTEXPRS) and not attr.startswith("_") and \
                    hasattr(base.value, attr):
                # as Triton, a constexpr's Python attributes (`ACT.upper()`, `N.bit_length()`)
                return Const(getattr(base.value, attr))
            if _is_scalar_constexpr(base) and attr in ("value", "type"):
                # Triton's constexpr object itself answers these two
                return base if attr == "value" else Const(language_core.constexpr_type(
                    base.value))
            if isinstance(base, AssignedNumber) and attr == "dtype":
                return Const(D.literal_dtype(base.value))
            if _is_scalar_constexpr(base):
                hint = (" (a constexpr is its Python value, which has no dtype; "
                        "tl.to_tensor(x).dtype is the dtype it takes as a kernel value)"
                        if attr == "dtype" else "")
                raise self.error(node, f"`{self.pf.code(node)}`: {type(base.value).__name__!r} "
                                       f"object has no attribute {attr!r}{hint}",
                                 "AttributeError")
        if isinstance(base, Const) and isinstance(base.value, (D.dtype, D.pointer_type,
                                                               D.block_type)):
            raise self.error(node, f"{base.value!r} has no attribute `{attr}`", "AttributeError")
        raise self.error(node, f"`{self.pf.code(node)}` is not supported in kernels",
                         "AttributeError")

    def value_attribute(self, base: Value, attr: str, node: cst.CSTNode) -> Any:
        """`x.dtype`, `x.shape`, `x.type`, `x.numel`, `x.T`, or a method to call."""
        if attr == "dtype":
            return Const(base.dtype)
        if attr == "shape":
            return Const(base.type.shape)
        if attr == "type":  # a block's block_type; a scalar's dtype, as in Triton
            return Const(D.block_type(base.dtype, base.type.shape) if base.type.is_block
                         else base.dtype)
        if attr == "numel":
            return Const(base.type.numel)
        if attr == "T":
            return call_method(self, base, "permute", [Const((1, 0))], {}, node)  # as Triton
        return Method(base, attr)


_CONSTEXPR_METHODS = ("to", "logical_and", "logical_or")


def _is_scalar_constexpr(x: Any) -> bool:
    """A constexpr Triton keeps in its `constexpr` wrapper (a number, string or None; not
    a dtype or a tuple, which are objects of their own)."""
    return isinstance(x, Const) and isinstance(x.value, (bool, int, float, str, type(None)))


def _unwrap_const(x: Any) -> Any:
    return x.value if isinstance(x, Const) else x


BINOPS = {"Add": "add", "Subtract": "sub", "Multiply": "mul", "Divide": "div",
          "FloorDivide": "floordiv", "Modulo": "rem", "BitAnd": "and", "BitOr": "or",
          "BitXor": "xor", "LeftShift": "shl", "RightShift": "shr"}


_CMPOPS = {"LessThan": "lt", "LessThanEqual": "le", "GreaterThan": "gt",
           "GreaterThanEqual": "ge", "Equal": "eq", "NotEqual": "ne"}
