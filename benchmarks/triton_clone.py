"""The same kernel source through Triton: a tilecc kernel's Python function, with `tl`
bound to `triton.language` and the @tilecc.jit helpers it calls cloned the same way, handed
to `triton.jit`.  Used by the benchmarks to compare the two compilers on one source."""

from __future__ import annotations

import types

import triton
import triton.language as triton_language

import tilecc
import tilecc.language

_clones: dict[int, object] = {}


def as_triton(kernel):
    """`kernel` (a tilecc JITFunction) as a Triton JITFunction of the same source."""
    if id(kernel) in _clones:
        return _clones[id(kernel)]
    fn = kernel.fn
    glob = dict(fn.__globals__, tl=triton_language)
    clone = types.FunctionType(fn.__code__, glob, fn.__name__, fn.__defaults__, fn.__closure__)
    clone.__qualname__, clone.__module__ = fn.__qualname__, fn.__module__
    clone.__annotations__ = {k: triton_language.constexpr if v is tilecc.language.constexpr
                             else v for k, v in fn.__annotations__.items()}
    _clones[id(kernel)] = triton.jit(clone)
    for name in fn.__code__.co_names:  # the helpers it calls (after registering: cycles)
        value = fn.__globals__.get(name)
        if isinstance(value, tilecc.JITFunction):
            glob[name] = as_triton(value)
    return _clones[id(kernel)]
