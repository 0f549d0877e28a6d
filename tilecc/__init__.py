"""tilecc: block-level GPU kernels in Python (Triton's programming model), transpiled to
readable CUDA C++ and HIP, compiled at run time, launched — or interpreted on NumPy."""

from tilecc.errors import (CompilationError, InterpreterError, NoDeviceError, OutOfRegisters,
                           OutOfResources)
from tilecc.runtime.autotune import Config, autotune, heuristics
from tilecc.runtime.jit import JITFunction, jit
from tilecc.version import __version__


def cdiv(x: int, div: int) -> int:
    """Ceiling division, for grids: cdiv(10, 4) == 3."""
    return (x + div - 1) // div


def next_power_of_2(n: int) -> int:
    """The smallest power of 2 >= n (1 for n <= 1)."""
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


__all__ = ["CompilationError", "Config", "InterpreterError", "JITFunction", "NoDeviceError",
           "OutOfRegisters", "OutOfResources", "autotune", "cdiv", "heuristics", "jit",
           "next_power_of_2", "__version__"]
