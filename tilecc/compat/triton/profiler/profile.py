"""`triton.profiler.profile`: sessions.

    sid = proton.start("matmul", hook="triton")   # writes matmul.hatchet at finalize
    proton.deactivate(sid); ...; proton.activate(sid)
    proton.finalize()                               # every session, or finalize(sid)

A session records while active (from `start` on).  `hook="triton"` records each launch of
a tilecc kernel as a frame; without it a session records scopes only.  Triton's
`context`, `data`, `backend` and `mode` choose its C++ profiler's sources (CUPTI,
roctracer, instrumentation); tilecc has one way of timing (GPU events, or the wall clock
on the interpreter), so they are accepted and checked, and change nothing.
"""

from __future__ import annotations

import functools
from typing import Optional, Union

from tilecc.compat.triton.profiler.recorder import RECORDER

DEFAULT_PROFILE_NAME = "proton"
_CONTEXTS = ("shadow", "python")
_DATA = ("tree", "trace")
_BACKENDS = (None, "cupti", "roctracer", "instrumentation")
_HOOKS = (None, "launch", "triton")


def start(name: Optional[str] = None, *, context: Optional[str] = "shadow",
          data: Optional[str] = "tree", backend: Optional[str] = None,
          mode: Optional[Union[str, object]] = None, hook: Optional[str] = None):
    """Start a session that writes `<name>.hatchet` at finalize; its id."""
    for what, value, allowed in (("context", context, _CONTEXTS), ("data", data, _DATA),
                                 ("backend", backend, _BACKENDS), ("hook", hook, _HOOKS)):
        if value not in allowed:
            raise ValueError(f"proton.start: {what}={value!r} is not one of "
                             f"{', '.join(map(repr, allowed))}")
    if data == "trace":
        raise ValueError("proton.start: tilecc's profiler records trees (data='tree'), "
                         "not Chrome traces")
    return RECORDER.start(DEFAULT_PROFILE_NAME if name is None else name,
                          "triton" if hook in ("triton", "launch") else None)


def activate(session: Optional[int] = None) -> None:
    """Record in a session again (None: every session)."""
    RECORDER.set_active(session, True)


def deactivate(session: Optional[int] = None) -> None:
    """Stop recording in a session, keeping what it holds (None: every session)."""
    RECORDER.set_active(session, False)


def finalize(session: Optional[int] = None, output_format: Optional[str] = "") -> None:
    """Write a session's `<name>.hatchet` and end it (None: every session)."""
    if output_format not in ("", None, "hatchet"):
        raise ValueError(f"proton.finalize: output_format={output_format!r}: tilecc writes "
                         "the 'hatchet' format")
    RECORDER.finalize(session)


def profile(func=None, *, name: Optional[str] = None, context: Optional[str] = "shadow",
            data: Optional[str] = "tree", backend: Optional[str] = None,
            mode: Optional[str] = None, hook: Optional[str] = None):
    """A decorator: each call of the function starts a session, which is deactivated
    when it returns (finalize writes it)."""
    def decorate(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            sid = start(name, context=context, data=data, backend=backend, mode=mode,
                        hook=hook)
            result = f(*args, **kwargs)
            deactivate(sid)
            return result
        return wrapper
    return decorate if func is None else decorate(func)
