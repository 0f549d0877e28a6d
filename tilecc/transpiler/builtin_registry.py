"""The table of `tl` builtins' handlers, and the argument checks they share.

`builtins.py`, `builtins_blocks.py` and `builtins_dot.py` each register their handlers
here with `@handles("name", ...)`; `builtins.call_builtin` looks them up.  Keeping the
table apart lets the handler modules import it without importing one another.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import types
from typing import Any, Callable, Iterable

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


# Triton names tilecc does not implement yet, with what to write instead (the error says it)
NOT_YET: dict[str, str] = {}

# Names kernels reach for that Triton 3.6's language does not have either (NumPy's and
# torch's spellings), with Triton's way to say them
NOT_IN_TRITON: dict[str, str] = {
    "squeeze": "drop an axis of size 1 with tl.reshape (tl.reshape(x, (N,)) of a [1, N] "
               "block)",
    "unsqueeze": "add an axis of size 1 with tl.expand_dims(x, axis) or by indexing "
                 "(x[None, :], x[:, None])",
}


def not_in_triton(name: str, spelt: str) -> str:
    """The message for `spelt` (`tl.squeeze`, `.squeeze()`), a name in NOT_IN_TRITON."""
    return f"`{spelt}` is not in Triton 3.6's language (nor tilecc's): {NOT_IN_TRITON[name]}"


def not_supported(name: str) -> str:
    """The message for `tl.<name>` that tilecc lacks: what to use instead where known,
    else the closest names."""
    if name in NOT_YET:
        return f"`tl.{name}` is not supported by tilecc: {NOT_YET[name]}"
    if name in NOT_IN_TRITON:
        return not_in_triton(name, f"tl.{name}")
    return f"`tl.{name}` is not supported by tilecc{did_you_mean(name, tl_names(), 'tl.')}"


def did_you_mean(name: str, candidates: Iterable[str], prefix: str = "",
                 suffix: str = "") -> str:
    """"; did you mean `tl.cumsum`?" for the closest candidates to `name`, else ""."""
    # (a name that is there but not usable where it was written is not its own suggestion)
    close = difflib.get_close_matches(name, sorted(set(candidates) - {name}), n=2, cutoff=0.6)
    spelt = " or ".join(f"`{prefix}{c}{suffix}`" for c in close)
    return f"; did you mean {spelt}?" if close else ""


def tl_names() -> list[str]:
    """What a kernel may name under `tl.`: the functions and dtypes `tilecc.language`
    defines (not its submodules)."""
    import tilecc.language as tl

    return [n for n, v in vars(tl).items() if not n.startswith("_")
            and not isinstance(v, types.ModuleType) and not
            (isinstance(v, type) and issubclass(v, BaseException))]


@functools.lru_cache(maxsize=1024)  # (a builtin's signature is read at each call site)
def _cached_signature(fn: Callable) -> inspect.Signature:
    return inspect.signature(fn)


def _signature(fn: Callable) -> inspect.Signature:
    try:
        return _cached_signature(fn)
    except TypeError:  # unhashable (a bound method of an unhashable object)
        return inspect.signature(fn)


def bind(fn: Callable, args: list, kwargs: dict, what: str) -> inspect.BoundArguments:
    """`fn`'s signature bound to a call's arguments; TypeError as Python words it, headed
    by `what` ("tl.sum()"), a misspelt keyword first with the closest parameter."""
    signature = _signature(fn)
    params = signature.parameters
    if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        for k in kwargs:
            if k not in params or params[k].kind is inspect.Parameter.POSITIONAL_ONLY:
                raise TypeError(f"{what}: got an unexpected keyword argument '{k}'"
                                f"{did_you_mean(k, params)}")
    try:
        return signature.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{what}: {e}") from None


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
