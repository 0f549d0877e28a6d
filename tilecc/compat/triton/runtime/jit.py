"""`triton.runtime.jit` under the compatibility mode: the kernel class and decorator, its
parameters, the tensor stand-ins, and constexpr functions."""

from tilecc.language.core import (BoundConstexprFunction, ConstexprFunction,  # noqa: F401
                                  KernelFunction, constexpr_function)
from tilecc.runtime.jit import JITFunction, KernelInterface, KernelParam, jit  # noqa: F401
from tilecc.runtime.tensor_wrappers import MockTensor, TensorWrapper, reinterpret  # noqa: F401

JITCallable = KernelFunction  # the base of kernels and of the language's own functions
TRITON_MODULE = "triton.language"
GLUON_MODULE = "triton.experimental.gluon.language"


def get_full_name(fn) -> str:
    return f"{fn.__module__}.{fn.__qualname__}"


def get_jit_fn_file_line(fn) -> tuple[str, int]:
    """The file of a kernel (under autotuners and heuristics too) and the line of its
    `def`."""
    base = fn
    while not isinstance(base, JITFunction):
        base = base.fn
    line = base.starting_line_number
    for i, text in enumerate(base.raw_src):
        if text.strip().startswith("def "):
            line += i
            break
    return base.fn.__code__.co_filename, line
