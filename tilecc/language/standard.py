"""Combine functions of the built-in reductions and scans, written in the kernel language
itself (as Triton's standard library is): `tl.sum` is `tl.reduce(x, axis, _sum_combine)`.
The frontend traces them like any user `combine_fn`, so the interpreter and both back ends
share one definition of each."""

import tilecc.language as tl
from tilecc.runtime.jit import jit


@jit
def _sum_combine(a, b):
    return a + b


@jit
def _prod_combine(a, b):
    return a * b


@jit
def _max_combine(a, b):
    return tl.maximum(a, b)


@jit
def _min_combine(a, b):
    return tl.minimum(a, b)


@jit
def _argmax_combine(value1, index1, value2, index2, TIE_BREAK_LEFT: tl.constexpr):
    if TIE_BREAK_LEFT:
        take_first = (value1 > value2) | ((value1 == value2) & (index1 < index2))
    else:
        take_first = value1 > value2
    return tl.where(take_first, value1, value2), tl.where(take_first, index1, index2)


@jit
def _argmin_combine(value1, index1, value2, index2, TIE_BREAK_LEFT: tl.constexpr):
    if TIE_BREAK_LEFT:
        take_first = (value1 < value2) | ((value1 == value2) & (index1 < index2))
    else:
        take_first = value1 < value2
    return tl.where(take_first, value1, value2), tl.where(take_first, index1, index2)
