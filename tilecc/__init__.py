"""tilecc: block-level GPU kernels in Python (Triton's programming model), transpiled to
readable CUDA C++ and HIP, compiled at run time, launched — or interpreted on NumPy."""

import os

from tilecc.errors import (CompilationError, InterpreterError, LaunchError, NoDeviceError,
                           OutOfRegisters, OutOfResources)
from tilecc.runtime.autotune import Config, autotune, heuristics
from tilecc.runtime.jit import JITFunction, jit
from tilecc.runtime.tensor_descriptor import TensorDescriptor
from tilecc.version import __version__


def get_include() -> str:
    """The folder of `tilecc.h`, the device header that emitted sources `#include`: give it
    to the device compiler (`nvcc -I"$(python -m tilecc --include-dir)" -c kernel.cu`), as
    NumPy's and pybind11's `get_include()` are used."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates", "include")


def cdiv(x: int, y: int) -> int:
    """Ceiling division, for grids: cdiv(10, 4) == 3."""
    return (x + y - 1) // y


def next_power_of_2(n: int) -> int:
    """The smallest power of 2 >= n (1 for n <= 1)."""
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


__all__ = ["CompilationError", "Config", "InterpreterError", "JITFunction", "LaunchError",
           "NoDeviceError", "OutOfRegisters", "OutOfResources", "TensorDescriptor", "autotune",
           "cdiv", "get_include", "heuristics", "jit", "next_power_of_2", "__version__"]
