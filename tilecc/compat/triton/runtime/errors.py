"""`triton.runtime.errors` under the compatibility mode."""

from tilecc.errors import (AutotunerError, InterpreterError, OutOfResources,  # noqa: F401
                           PTXASError)
