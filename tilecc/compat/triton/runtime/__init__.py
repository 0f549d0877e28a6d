"""`triton.runtime` under the compatibility mode: the kernel classes, the decorators and
`triton.runtime.driver` (its submodules `jit`, `autotuner`, `errors`, `driver` are this
package's)."""

from tilecc.compat.triton.runtime import autotuner, errors, jit  # noqa: F401
from tilecc.compat.triton.runtime.autotuner import (Autotuner, Config,  # noqa: F401
                                                    Heuristics, autotune, heuristics)
from tilecc.compat.triton.runtime.driver import driver  # noqa: F401
from tilecc.compat.triton.runtime.jit import (JITFunction, KernelInterface,  # noqa: F401
                                              MockTensor, TensorWrapper, reinterpret)
from tilecc.errors import InterpreterError, OutOfResources  # noqa: F401
