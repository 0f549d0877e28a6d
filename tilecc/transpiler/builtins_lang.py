"""Tensor methods (`x.sum()`, `x.abs()`, `x.T`...) and the compile-time builtins of the
value language (`tl.static_print`, `tl.assume`).

A method is the `tl` function of the same name with the value as its first argument, for
the names Triton attaches to its tensors: a `tl` function tilecc implements is a method
as soon as it is registered.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

import libcst as cst

from tilecc.transpiler import semantic as S
from tilecc.transpiler.builtin_registry import (HANDLERS, NOT_IN_TRITON, did_you_mean, handles,
                                                kernel_value, not_in_triton)
from tilecc.transpiler.ir import Value
from tilecc.transpiler.semantic import Const
from tilecc.language.members import TENSOR_METHODS  # noqa: F401  (the frontend reads it here)

# what Triton's `constexpr` itself answers as methods
CONSTEXPR_METHODS = frozenset(("logical_and", "logical_or"))


def call_method(tracer, value: Value | Const, name: str, args: list, kwargs: dict,
                node: cst.CSTNode, call_builtin: Callable) -> Any:
    """`value.name(*args, **kwargs)`; `call_builtin` is `builtins.call_builtin`."""
    if name == "item":
        if args or kwargs:
            raise tracer.error(node, ".item() takes no arguments")
        return _item(tracer, value)
    if name in ("logical_and", "logical_or"):
        if len(args) != 1 or kwargs:
            raise tracer.error(node, f".{name}() takes one argument")
        return S.logical(tracer.b, "land" if name == "logical_and" else "lor", value, args[0])
    if name in TENSOR_METHODS:
        if name not in HANDLERS:
            raise tracer.error(node, f"`.{name}()` (tl.{name}) is not supported by tilecc")
        return call_builtin(tracer, "tl." + name, [value, *args], kwargs, node)
    if name in NOT_IN_TRITON:
        raise tracer.error(node, not_in_triton(name, f".{name}()"), "AttributeError")
    known = sorted(n for n in TENSOR_METHODS if n in HANDLERS)
    raise tracer.error(node, f"method `.{name}()` is not supported on kernel values"
                       f"{did_you_mean(name, [*known, 'to'], '.', '()')}", "AttributeError")


def _item(tracer, x: Value | Const) -> Value | Const:
    """The element of a block of one, as a scalar (Triton's `tensor.item()`)."""
    from tilecc.transpiler.builtins_blocks import _only_element, reshape

    if isinstance(x, Const) or not x.type.is_block:
        return x
    if x.type.numel != 1:
        raise ValueError(f".item() needs a block of one element, got shape {list(x.type.shape)}")
    return _only_element(tracer.b, reshape(tracer.b, x, (1,)))


@handles("static_print")
def _static_print(tracer, name, values, sep, end, file, flush):
    """Prints while compiling, as Triton does (constexprs by value, kernel values by type)."""
    text = sep.value.join(_compile_time_text(v) for v in values.value)
    print(text, end=end.value, file=sys.stdout if file.value is None else file.value,
          flush=bool(flush.value))
    return Const(None)


def _compile_time_text(x: Any) -> str:
    if isinstance(x, Const):
        return str(x.value)
    if isinstance(x, Value):  # as Triton prints a tensor: fp32[constexpr[16]]
        return f"{x.dtype}[{', '.join(f'constexpr[{n}]' for n in x.type.shape)}]"
    return str(x)


@handles("condition")
def _condition(tracer, name, arg1, disable_licm):
    return kernel_value(tracer, arg1, "the condition")


@handles("add", "sub", "mul")  # tl.add(x, y) is x + y
def _arithmetic(tracer, name, x, y, sanitize_overflow):
    return S.binary(tracer.b, name, kernel_value(tracer, x, "x"), kernel_value(tracer, y, "y"))


@handles("item")  # tl.core.item(x) is x.item()
def _item_builtin(tracer, name, input):
    return _item(tracer, kernel_value(tracer, input, "input"))


@handles("assume")
def _assume(tracer, name, cond):
    c = kernel_value(tracer, cond, "cond")
    if isinstance(c, Const) and not c.value:
        raise ValueError("tl.assume: the condition is always false")
    return Const(None)  # a promise to the optimizer: tilecc's generated code uses none


@handles("device_print")
def _device_print(tracer, name, prefix, args, hex):
    """Prints at run time, one line per element, in Triton's format
    (`transpiler/print_format.py`)."""
    import string

    from tilecc.transpiler.print_format import munge_prefix

    text = prefix.value if isinstance(prefix, Const) else None
    if not isinstance(text, str):
        raise TypeError(f"tl.device_print: the prefix must be a string literal, got "
                        f"{prefix.value!r}" if isinstance(prefix, Const) else
                        "tl.device_print: the prefix must be a string literal")
    if any(ch not in string.printable for ch in text):
        raise ValueError(f"tl.device_print: the prefix {text!r} is not an ascii string")
    values = []
    for i, arg in enumerate(args.value):
        v = S.to_value(tracer.b, kernel_value(tracer, arg, f"argument {i + 1}"))
        if v.dtype.is_ptr():
            raise TypeError("tl.device_print of pointers is not supported; print the offsets")
        values.append(v)
    tracer.b.emit("print", values, None, prefix=munge_prefix(text, bool(values)),
                  hex=bool(hex.value))
    return Const(None)
