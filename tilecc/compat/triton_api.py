"""What `import triton` is under the compatibility mode (`tilecc.compat`): Triton's
top-level names, served by tilecc."""

from tilecc import cdiv, language, next_power_of_2  # noqa: F401
from tilecc.compat import runtime, testing  # noqa: F401
from tilecc.compat.runtime import (Autotuner, Config, Heuristics, JITFunction,  # noqa: F401
                                   KernelInterface, autotune, heuristics, jit)
from tilecc.errors import CompilationError, InterpreterError, OutOfResources  # noqa: F401

# a package to the import system, so that `import triton.<anything else>` reaches
# tilecc.compat's finder, which says what that part of Triton is and what to use instead
__path__: list[str] = []
__version__ = "3.6.0"  # the Triton release whose language tilecc implements
TritonError = Exception  # Triton's base of its errors; tilecc's derive from Exception


def set_allocator(allocator) -> None:
    """Triton's scratch-memory allocator for descriptors made in kernels: accepted, never
    called (tilecc's descriptors are block pointers and need no scratch memory)."""
    if not callable(allocator):
        raise TypeError("set_allocator takes a function (size, alignment, stream) -> tensor")


_MISSING = {
    "compile": "Triton's compiler entry; tilecc compiles with kernel.compile() "
               "(or `tilecc compile`)",
    "compiler": "Triton's compiler (IR, PTX, cubins); read tilecc's CUDA/HIP with "
                "kernel.source() or `tilecc emit`",
    "backends": "Triton's backends; tilecc renders CUDA/HIP and compiles with NVRTC/hiprtc",
    "tools": "triton.tools (tensor descriptors, AOT); `tilecc export` writes C++ with a "
             "host launcher",
    "knobs": "Triton's compiler settings; tilecc takes launch options and TILECC_* variables",
    "reinterpret": "reinterpreting a tensor's dtype: pass `tensor.view(dtype)` instead",
}


def __getattr__(name: str):
    why = _MISSING.get(name)
    raise AttributeError(f"triton.{name} is not provided by tilecc's compatibility mode"
                         + (f": {why}" if why else ""))
