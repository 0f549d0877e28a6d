"""The table of `tl` builtins' handlers, and the argument checks they share.

`builtins.py`, `builtins_blocks.py` and `builtins_dot.py` each register their handlers
here with `@handles("name", ...)`; `builtins.call_builtin` looks them up.  Keeping the
table apart lets the handler modules import it without importing one another.
"""

from __future__ import annotations

from typing import Any, Callable

from tilecc.transpiler import semantic as S
from tilecc.transpiler.ir import Value
from tilecc.transpiler.semantic import Const

HANDLERS: dict[str, Callable] = {}


def handles(*names: str):
    """Register the decorated function as the handler of `tl.<name>` for each name."""
    def register(fn):
        for n in names:
            HANDLERS[n] = fn
        return fn
    return register


def constant(x: Any, what: str) -> Any:
    """The Python value of a compile-time argument; TypeError naming `what` otherwise."""
    if not isinstance(x, Const):
        raise TypeError(f"{what} must be a compile-time constant (constexpr)")
    return x.value


def kernel_value(tracer, x: Any, what: str) -> Value | Const:
    """A kernel value (or a number, which becomes one); TypeError naming `what` otherwise."""
    if isinstance(x, Value) or S.is_number(x):
        return x
    raise TypeError(f"{what} must be a kernel value, got {x.value!r}"
                    if isinstance(x, Const) else f"{what} must be a kernel value")
