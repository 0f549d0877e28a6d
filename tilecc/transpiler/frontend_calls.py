"""Calls, as the frontend's `FunctionTracer` traces them: builtins and tensor methods (through
`builtins`), methods of constexprs and constexpr functions (run at compile time), Python's
compile-time builtins (getattr, hasattr, isinstance, len, print, int/float/bool, min/max),
and `@jit` helpers, inlined by a tracer of their own (the language's own functions written
in `tl` report their errors at the user's call).

`Calls` is a mixin of `FunctionTracer`: it uses the tracer's `eval`, `error`, `_at`,
`value_attribute`, `run_body`, `pf`, `b` (the emitter), `kernel` and `depth`.
"""

from __future__ import annotations

import builtins as pybuiltins
from typing import Any, Callable

import libcst as cst

from tilecc.errors import CompilationError
from tilecc.language import core as language_core
from tilecc.language import dtypes as D
from tilecc.language.core import constexpr as ConstexprClass
from tilecc.transpiler import builtins_descriptor as TD
from tilecc.transpiler import kernel_types as KT
from tilecc.transpiler import semantic as S
from tilecc.transpiler.builtin_registry import bind
from tilecc.transpiler.builtins_lang import TENSOR_METHODS
from tilecc.transpiler.frontend_names import (
    PLAIN_CONSTEXPRS, Method, OtherModule, PyBuiltin, TLRef, attribute_of_ref, describe,
    is_language, reference_for, tl_member, wrap_item)
from tilecc.transpiler.frontend_returns import Return
from tilecc.transpiler.frontend_source import CalledFrom, parse_function
from tilecc.transpiler.ir import Value
from tilecc.transpiler.semantic import Const, HelperRef


class Calls:
    """Calls (a mixin of `FunctionTracer`)."""

    def call(self, node: cst.Call) -> Any:
        func = self.eval(node.func)
        args, kwargs = [], {}
        for a in node.args:
            if a.star:
                raise self.error(a, "*args / **kwargs are not supported in kernel calls")
            v = self.eval(a.value)
            if a.keyword is not None:
                kwargs[a.keyword.value] = v
            else:
                args.append(v)
        from tilecc.transpiler import builtins as B
        self.current_call = node  # for errors raised while tracing a combine_fn
        if isinstance(func, TLRef):
            return B.call_builtin(self, func.name, args, kwargs, node)
        if isinstance(func, Method):
            return B.call_method(self, func.value, func.name, args, kwargs, node)
        if isinstance(func, Const) and isinstance(getattr(func.value, "__self__", None),
                                                  (D.dtype, D.pointer_type, D.block_type,
                                                   *PLAIN_CONSTEXPRS)):
            if not all(isinstance(a, Const) for a in [*args, *kwargs.values()]):
                raise self.error(node, f"`{self.pf.code(node.func)}` takes constexpr arguments")
            return wrap_item(func.value(*[a.value for a in args],
                                        **{k: v.value for k, v in kwargs.items()}))
        if isinstance(func, Const) and (isinstance(func.value, (
                language_core.ConstexprFunction, language_core.BoundConstexprFunction))
                or type(func.value).__name__ == "ConstexprFunction"):
            if not all(isinstance(a, Const) for a in [*args, *kwargs.values()]):
                raise self.error(node, f"`{self.pf.code(node.func)}` is a constexpr function: "
                                       "it takes constexpr arguments")
            return self._at(node, lambda: wrap_item(func.value(
                *[a.value for a in args], **{k: v.value for k, v in kwargs.items()})))
        if isinstance(func, PyBuiltin) and func.name in _COMPILE_TIME_BUILTINS:
            return self._at(node, lambda: self.compile_time_builtin(func.name, args, kwargs,
                                                                    node))
        if isinstance(func, Const) and callable(func.value) and \
                isinstance(reference_for(func.value), HelperRef):  # a @jit passed as constexpr
            return self.inline(reference_for(func.value).fn, args, kwargs, node)
        if isinstance(func, PyBuiltin) and func.name in ("float", "int", "bool"):
            # float("inf"), int(BLOCK / 2): conversions of compile-time values only
            if len(args) != 1 or kwargs or not isinstance(args[0], Const):
                to = {"float": "float32", "int": "int32", "bool": "int1"}[func.name]
                raise self.error(node, f"{func.name}() takes one compile-time value in kernels; "
                                       f"convert kernel values with x.to(tl.{to})")
            return Const(getattr(pybuiltins, func.name)(args[0].value))
        if isinstance(func, PyBuiltin):
            if func.name in ("min", "max") and len(args) >= 2 and not kwargs:
                out = args[0]
                for x in args[1:]:
                    out = S.min_max(self.b, func.name, out, x)
                return out
            raise self.error(node, f"{func.name}() is only supported as a loop range "
                             if func.name == "range" else f"{func.name}() takes two or more "
                                                          "scalars in kernels")
        if isinstance(func, HelperRef):
            return self.inline(func.fn, args, kwargs, node)
        raise self.error(node.func, f"`{self.pf.code(node.func)}` is not callable in a kernel")

    def compile_time_builtin(self, name: str, args: list, kwargs: dict, node: cst.Call) -> Any:
        """Python's getattr, hasattr, isinstance and len on compile-time values, and print,
        which is tl.device_print in a kernel (as in Triton)."""
        from tilecc.transpiler import builtins as B

        if name == "print":
            return B.call_builtin(self, "tl.device_print", args, kwargs, node)
        if name == "len":
            if len(args) != 1 or kwargs:
                raise TypeError("len() takes one argument")
            x = args[0]
            if isinstance(x, Value) and x.type.is_block:
                return Const(x.type.shape[0])
            if isinstance(x, Const) and isinstance(x.value, (tuple, list, str)):
                return Const(len(x.value))
            raise TypeError(f"len() of {describe(x)}, which has no length")
        if kwargs:
            raise TypeError(f"{name}() takes no keyword arguments")
        if name == "isinstance":
            if len(args) != 2 or not isinstance(args[1], (Const, TLRef, PyBuiltin)):
                raise TypeError("isinstance() takes a value and a class")
            return Const(KT.is_instance(args[0], _class_of(args[1])))
        if len(args) not in (2, 3) or not all(isinstance(a, Const) for a in args[1:]) or \
                not isinstance(args[1].value, str) or (name == "hasattr" and len(args) != 2):
            raise TypeError(f"{name}() takes an object and a constant attribute name")
        obj, attr = args[0], args[1].value
        try:
            if isinstance(obj, (TLRef, OtherModule)):
                found = attribute_of_ref(obj, attr)
                if isinstance(found, TLRef):
                    found = tl_member(found, node, self)
                if found is None:
                    raise AttributeError(attr)
            elif isinstance(obj, Value):
                found = self.value_attribute(obj, attr, node)
                if isinstance(found, Method) and attr not in _TENSOR_MEMBERS:
                    raise AttributeError(attr)
            elif isinstance(TD.unwrap(obj), TD.TensorDescriptor):
                desc = TD.unwrap(obj)
                found = TD.attribute(desc, attr) or (Method(desc, attr) if attr in TD.METHODS
                                                     else None)
                if found is None:
                    raise AttributeError(attr)
            elif isinstance(obj, Const):
                found = wrap_item(getattr(obj.value, attr))
            else:
                raise AttributeError(attr)
        except (AttributeError, CompilationError):
            if name == "hasattr":
                return Const(False)
            if len(args) == 3:
                return args[2]
            raise AttributeError(f"{describe(obj)} has no attribute {attr!r}") from None
        return Const(True) if name == "hasattr" else found

    def inline(self, fn: Callable, args: list, kwargs: dict, node: cst.Call) -> Any:
        if self.depth > 32:
            raise self.error(node, "helper calls nest too deeply (recursion is not supported)")
        try:
            bound = bind(fn, args, kwargs, f"{fn.__name__}()")
        except TypeError as e:
            raise self.error(node, str(e), "TypeError") from None
        bound.apply_defaults()
        pf = parse_function(fn)
        if isinstance(self.pf, CalledFrom):  # inside the language: still the user's call
            pf = CalledFrom.of(pf, self.pf.call)
        elif is_language(fn):
            pf = CalledFrom.of(pf, self.pf.loc(node))
        tracer = type(self)(pf, self.b, self.kernel, self.depth + 1)  # a FunctionTracer
        for name, v in bound.arguments.items():  # (a default may be a tl.constexpr)
            tracer.scope[name] = wrap_item(v.value if isinstance(v, ConstexprClass) else v)
        try:
            tracer.run_body(pf.funcdef.body.body)
        except Return as r:
            return r.value
        except CompilationError as e:
            # a misuse of the language's own functions (tl.rand's seed...) is reported at
            # the user's call, not at a line of tilecc's library
            if is_language(fn) and not is_language(self.pf.fn) and e.loc is not None:
                raise self.error(node, f"tl.{fn.__name__}(): {e.message}") from None
            raise
        return Const(None)



def call_method(tracer: Any, value: Value, name: str, args: list, kwargs: dict,
                node: cst.CSTNode) -> Any:
    from tilecc.transpiler import builtins as B

    return B.call_method(tracer, value, name, args, kwargs, node)


_TENSOR_MEMBERS = frozenset((*TENSOR_METHODS, "to"))  # hasattr(x, "sum") ...


_COMPILE_TIME_BUILTINS = ("getattr", "hasattr", "isinstance", "len", "print")


def _class_of(cls: Any) -> Any:
    """isinstance()'s second argument as `kernel_types.is_instance` takes it."""
    if isinstance(cls, TLRef):
        return cls.name
    if isinstance(cls, PyBuiltin) and cls.name in ("int", "float", "bool"):
        return getattr(pybuiltins, cls.name)
    if isinstance(cls, Const) and isinstance(cls.value, tuple):
        return tuple(_class_of(wrap_item(c)) for c in cls.value)
    return cls.value if isinstance(cls, Const) else cls
