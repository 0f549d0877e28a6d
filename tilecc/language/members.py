"""The methods and attributes of kernel values (`tl.tensor`) and tensor descriptors
(`tl.tensor_descriptor`), declared on those classes with Triton's signatures.

In a kernel `x.sum(axis=0)` is `tl.sum(x, axis=0)`: the frontend calls the `tl` function
(`TENSOR_METHODS`, which it reads from here).  On the classes themselves the members are
declarations, as the `tl` stubs are: reached outside a kernel they raise.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

from tilecc.language import core
from tilecc.language.core import OutsideKernelError

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

# Members whose first parameter keeps the function's name (Triton writes these functions
# in the language itself and sets them on the class as they are); the others call it
# `self`.
_FIRST_PARAMETER_KEPT = frozenset((
    "argmax", "argmin", "cdiv", "cumprod", "cumsum", "flip", "max", "min", "ravel",
    "reduce_or", "sigmoid", "softmax", "sum", "xor_sum"))

# what a tensor descriptor's methods take after `self`
_DESCRIPTOR_METHODS = {
    "load": "offsets", "store": "offsets, value", "atomic_add": "offsets, value",
    "atomic_and": "offsets, value", "atomic_max": "offsets, value",
    "atomic_min": "offsets, value", "atomic_or": "offsets, value",
    "atomic_xor": "offsets, value", "gather": "*args", "scatter": "value, *args"}


def _declared(owner: str, name: str, signature: inspect.Signature, doc: str) -> Callable:
    def member(*args: Any, **kwargs: Any):
        raise OutsideKernelError(f"{owner}.{name}() can only be called inside a @tilecc.jit "
                                 "kernel, on a kernel value")
    member.__name__ = member.__qualname__ = name
    member.__signature__ = signature
    member.__doc__ = doc
    return member


def _tensor_member(name: str, stub: Callable) -> Callable:
    signature = inspect.signature(stub)
    params = list(signature.parameters.values())
    if name not in _FIRST_PARAMETER_KEPT:
        params[0] = params[0].replace(name="self")
    return _declared("x", name, signature.replace(parameters=params),
                     f"`x.{name}(...)` is `tl.{stub.__name__}(x, ...)`.")


def _value_property(name: str) -> property:
    def read(self):
        raise OutsideKernelError(f"x.{name} is read inside a @tilecc.jit kernel")
    return property(read, doc=f"The kernel value's `{name}` (in kernels).")


def _descriptor_method(name: str, params: str) -> Callable:
    namespace: dict[str, Any] = {}
    exec(f"def {name}(self, {params}):\n    pass", namespace)  # Triton's parameter names
    return _declared("desc", name, inspect.signature(namespace[name]),
                     f"`desc.{name}(...)`, in kernels (see tl.make_tensor_descriptor).")


def install(tl: dict[str, Any]) -> None:
    """Declare the members on `core.tensor` and `core.tensor_descriptor`; `tl`: the names
    of `tilecc.language` (where the standard library's functions are)."""
    for name in sorted(TENSOR_METHODS - {"logical_and", "logical_or"}):
        stub = tl.get(name) or getattr(core, name)
        setattr(core.tensor, name, _tensor_member(name, stub))
    setattr(core.tensor, "to", _tensor_member("to", core.cast))
    for name in ("logical_and", "logical_or"):
        setattr(core.tensor, name, _descriptor_method(name, "other"))
    for name in ("dtype", "shape", "type", "numel", "T"):
        setattr(core.tensor, name, _value_property(name))
    for name, params in _DESCRIPTOR_METHODS.items():
        setattr(core.tensor_descriptor, name, _descriptor_method(name, params))
    for name in ("shape", "strides", "type", "dtype", "block_shape", "block_type"):
        setattr(core.tensor_descriptor, name, _value_property(name))
