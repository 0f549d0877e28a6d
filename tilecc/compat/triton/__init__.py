"""What `import triton` is under the compatibility mode (`tilecc.compat`): Triton's
top-level names, served by tilecc.  The package's modules mirror Triton's
(`triton.runtime.jit` is `tilecc.compat.triton.runtime.jit`, ...); `triton.language` is
`tilecc.language`."""

from tilecc import cdiv, language, next_power_of_2  # noqa: F401
from tilecc.compat.triton import errors, runtime, testing, tools  # noqa: F401
from tilecc.compat.triton.errors import TritonError  # noqa: F401
from tilecc.compat.triton.runtime.autotuner import Config, autotune, heuristics  # noqa: F401
from tilecc.compat.triton.runtime.jit import (JITFunction, KernelInterface,  # noqa: F401
                                              MockTensor, TensorWrapper, constexpr_function,
                                              jit, reinterpret)
from tilecc.errors import CompilationError, InterpreterError, OutOfResources  # noqa: F401
from tilecc.language.core import must_use_result  # noqa: F401

__version__ = "3.6.0"  # the Triton release whose language tilecc implements


def set_allocator(allocator) -> None:
    """Triton's scratch-memory allocator for descriptors made in kernels: accepted, never
    called (tilecc's descriptors are block pointers and need no scratch memory)."""
    if not callable(allocator):
        raise TypeError("set_allocator takes a function (size, alignment, stream) -> tensor")
