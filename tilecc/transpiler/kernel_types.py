"""`isinstance(x, tl.<class>)` in a kernel, folded while tracing, with Triton's answers.

Triton calls Python's `isinstance` on its own objects, after unwrapping constexprs: a
kernel value (a block, a scalar, a block pointer) is a `tl.tensor`; a descriptor is a
`tl.tensor_descriptor`; a dtype is a `tl.dtype`, pointer and block types being dtypes too;
a constexpr is its plain Python value, so `isinstance(BLOCK, int)` holds and
`isinstance(BLOCK, tl.constexpr)` does not (in Triton 3.6, compiled or interpreted).
Every traced thing is one of tilecc's trace-time objects; this module says which of
Triton's classes each is an instance of.
"""

from __future__ import annotations

from typing import Any, Callable

from tilecc.language import core as L
from tilecc.language import dtypes as D
from tilecc.transpiler import builtins_block_ptr as BP
from tilecc.transpiler import builtins_descriptor as TD
from tilecc.transpiler.ir import Value
from tilecc.transpiler.semantic import Const


def _value(x: Any) -> Any:
    """What `x` is once constexprs are unwrapped (a descriptor may travel in a Const)."""
    return x.value if isinstance(x, Const) else x


def _is_tensor(x: Any) -> bool:
    return isinstance(x, (Value, BP.BlockPointer))  # a block pointer is a tensor in Triton


def _is_descriptor(x: Any) -> bool:
    return isinstance(_value(x), TD.TensorDescriptor)


def _is_dtype(x: Any) -> bool:
    return isinstance(x, Const) and isinstance(x.value, (D.dtype, D.pointer_type,
                                                          D.block_type))


# Triton's classes by their `tl` name: whether a traced thing is an instance
TL_CLASSES: dict[str, Callable[[Any], bool]] = {
    "tensor": _is_tensor,
    "tensor_descriptor": _is_descriptor,
    "tensor_descriptor_base": _is_descriptor,
    "base_value": lambda x: _is_tensor(x) or _is_descriptor(x) or (
        isinstance(x, Const) and isinstance(x.value, tuple)),
    "tuple": lambda x: isinstance(x, Const) and isinstance(x.value, tuple),
    "dtype": _is_dtype,
    "base_type": _is_dtype,
    "pointer_type": lambda x: isinstance(x, Const) and isinstance(x.value, D.pointer_type),
    "block_type": lambda x: isinstance(x, Const) and isinstance(x.value, D.block_type),
    "constexpr_type": lambda x: isinstance(x, Const) and isinstance(x.value,
                                                                    L.constexpr_type),
    # a constexpr is unwrapped before Triton's isinstance sees it; nothing a kernel traces
    # is a slice or a `const` qualifier either
    "constexpr": lambda x: False,
    "slice": lambda x: False,
    "const": lambda x: False,
}


def is_instance(x: Any, cls: Any) -> bool:
    """isinstance(x, cls); `cls` a class of the language by its canonical name
    ("tl.tensor"), a Python class, or a tuple of these."""
    if isinstance(cls, tuple):
        return any(is_instance(x, c) for c in cls)
    if isinstance(cls, str) and cls.startswith("tl.") and cls[3:] in TL_CLASSES:
        return TL_CLASSES[cls[3:]](x)
    if isinstance(cls, type):  # int, float, bool, a user's class: a constexpr's value
        value = _value(x)
        return not isinstance(value, (Value, BP.BlockPointer, TD.TensorDescriptor)) and \
            isinstance(value, cls)
    shown = f"`{cls}`" if isinstance(cls, str) else repr(cls)
    raise TypeError(f"isinstance() arg 2 must be a type: {shown} is not a class (the "
                    f"language's are tl.{', tl.'.join(sorted(TL_CLASSES))}; int, float, bool "
                    "and Python classes test a constexpr's value)")
