"""tilecc: block-level GPU kernels in Python (Triton's programming model), transpiled to
readable CUDA C++ and HIP, compiled at run time, launched — or interpreted on NumPy."""

__version__ = "0.1.0"

from tilecc.errors import (CompilationError, InterpreterError, NoDeviceError,  # noqa: E402
                           OutOfRegisters, OutOfResources)
from tilecc.runtime.autotune import Config, autotune, heuristics  # noqa: E402
from tilecc.runtime.jit import JITFunction, jit  # noqa: E402


def cdiv(x: int, div: int) -> int:
    """Ceiling division, for grids: cdiv(10, 4) == 3."""
    return (x + div - 1) // div


def next_power_of_2(n: int) -> int:
    """The smallest power of 2 >= n (1 for n <= 1)."""
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


__all__ = ["CompilationError", "Config", "InterpreterError", "JITFunction", "NoDeviceError",
           "OutOfRegisters", "OutOfResources", "autotune", "cdiv", "heuristics", "jit",
           "next_power_of_2", "__version__"]
