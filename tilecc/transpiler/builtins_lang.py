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
from tilecc.transpiler.builtin_registry import HANDLERS, did_you_mean, handles, kernel_value
from tilecc.transpiler.ir import Value
from tilecc.transpiler.semantic import Const

# Triton 3.6's `tensor` members made from `tl` functions (its `_tensor_member_fn`), and
# `to`, its alias of `cast`.
TENSOR_METHODS = frozenset((
    "abs", "advance", "argmax", "argmin", "associative_scan", "atomic_add", "atomic_and",
    "atomic_cas", "atomic_max", "atomic_min", "atomic_or", "atomic_xchg", "atomic_xor",
    "broadcast_to", "cast", "cdiv", "ceil", "cos", "cumprod", "cumsum", "erf", "exp", "exp2",
    "expand_dims", "flip", "floor", "gather", "histogram", "item", "log", "log2",
    "logical_and", "logical_or", "max", "min", "permute", "ravel", "reduce", "reduce_or",
    "reshape", "rsqrt", "sigmoid", "sin", "softmax", "sort", "split", "sqrt", "sqrt_rn",
    "store", "sum", "trans", "view", "xor_sum"))

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
    known = sorted(n for n in TENSOR_METHODS if n in HANDLERS)
    raise tracer.error(node, f"method `.{name}()` is not supported on kernel values"
                       f"{did_you_mean(name, [*known, 'to'], '.', '()')}")


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
    if isinstance(x, Value):
        return f"{x.name or 'value'}: {x.type}"
    return str(x)


@handles("assume")
def _assume(tracer, name, cond):
    c = kernel_value(tracer, cond, "cond")
    if isinstance(c, Const) and not c.value:
        raise ValueError("tl.assume: the condition is always false")
    return Const(None)  # a promise to the optimizer: tilecc's generated code uses none


@handles("device_print")
def _device_print(tracer, name, prefix, args, hex):
    raise NotImplementedError(
        "tl.device_print (and print(), which is tl.device_print in a kernel) is not yet "
        "implemented by tilecc; print compile-time values with tl.static_print, or store the "
        "values to an output array and print them on the host")
