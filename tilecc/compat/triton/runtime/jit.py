"""`triton.runtime.jit` under the compatibility mode: the kernel class and decorator, its
parameters, the tensor stand-ins, and constexpr functions.

`TRITON_INTERPRET=1` is read where Triton reads it, when `triton.jit` decorates a kernel
(and when the mode is installed): it turns on tilecc's own switch, `TILECC_INTERPRET=1`,
so that launches run on tilecc's NumPy interpreter, with NumPy arrays or CPU torch
tensors, the results written into them."""

import functools
import os

from tilecc.language.core import (BoundConstexprFunction, ConstexprFunction,  # noqa: F401
                                  KernelFunction, constexpr_function)
from tilecc.runtime import jit as _tilecc
from tilecc.runtime.jit import JITFunction, KernelInterface, KernelParam  # noqa: F401
from tilecc.runtime.options import env_switch as _env_switch
from tilecc.runtime.tensor_wrappers import MockTensor, TensorWrapper, reinterpret  # noqa: F401


def follow_triton_interpret() -> None:
    """TRITON_INTERPRET=1 (or true / on / y / yes): launches run on the interpreter, as
    TILECC_INTERPRET=1 makes them."""
    if _env_switch("TRITON_INTERPRET"):
        os.environ["TILECC_INTERPRET"] = "1"


@functools.wraps(_tilecc.jit)
def jit(*args, **kwargs):
    """`triton.jit`: tilecc's, with TRITON_INTERPRET read as Triton reads it, at
    decoration."""
    follow_triton_interpret()
    return _tilecc.jit(*args, **kwargs)


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
