"""Combine functions of the built-in reductions and scans, written in the kernel language
itself (as Triton's standard library is): `tl.sum` is `tl.reduce(x, axis, _sum_combine)`.
The frontend traces them like any user `combine_fn`, so the interpreter and both back ends
share one definition of each.  They are marked `@kernel_function` (the language's own mark,
which `@tilecc.jit` functions carry too), not `@tilecc.jit`: the language imports nothing
of the runtime."""

import tilecc.language as tl
from tilecc.language.core import kernel_function


@kernel_function
def _sum_combine(a, b):
    return a + b


@kernel_function
def _prod_combine(a, b):
    return a * b


@kernel_function
def _max_combine(a, b):
    return tl.maximum(a, b)


@kernel_function
def _min_combine(a, b):
    return tl.minimum(a, b)


# NaN counts as above every number in argmax and below every number in argmin, as in
# NumPy and Triton's interpreter (np.argmax / np.argmin): the first NaN's index wins. A
# NaN that loses every comparison instead would leave the answer to the order the
# combines run in, which differs between the GPU's tree and a sequential fold.
@kernel_function
def _argmax_combine(value1, index1, value2, index2, TIE_BREAK_LEFT: tl.constexpr):
    take_first = value1 > value2
    tie = value1 == value2
    if value1.dtype.is_floating():
        nan1 = value1 != value1
        nan2 = value2 != value2
        take_first = take_first | (nan1 & ~nan2)
        tie = tie | (nan1 & nan2)
    if TIE_BREAK_LEFT:
        take_first = take_first | (tie & (index1 < index2))
    return tl.where(take_first, value1, value2), tl.where(take_first, index1, index2)


@kernel_function
def _argmin_combine(value1, index1, value2, index2, TIE_BREAK_LEFT: tl.constexpr):
    take_first = value1 < value2
    tie = value1 == value2
    if value1.dtype.is_floating():
        nan1 = value1 != value1
        nan2 = value2 != value2
        take_first = take_first | (nan1 & ~nan2)
        tie = tie | (nan1 & nan2)
    if TIE_BREAK_LEFT:
        take_first = take_first | (tie & (index1 < index2))
    return tl.where(take_first, value1, value2), tl.where(take_first, index1, index2)


# The same where every element on the left comes before every one on the right along
# the axis (a thread folding its own elements in order; the interpreter's tree): a tie
# or a NaN on the left then keeps the left, and two comparisons decide where the
# general combine takes four (a router's top-2 of 64: 0.85x Triton's speed, whose
# combine leaves NaN to the order of the combines).
@kernel_function
def _argmax_combine_in_order(value1, index1, value2, index2, TIE_BREAK_LEFT: tl.constexpr):
    take_first = value2 <= value1
    if value1.dtype.is_floating():
        take_first = take_first | (value1 != value1)
    return tl.where(take_first, value1, value2), tl.where(take_first, index1, index2)


@kernel_function
def _argmin_combine_in_order(value1, index1, value2, index2, TIE_BREAK_LEFT: tl.constexpr):
    take_first = value1 <= value2
    if value1.dtype.is_floating():
        take_first = take_first | (value1 != value1)
    return tl.where(take_first, value1, value2), tl.where(take_first, index1, index2)


@kernel_function
def _xor_combine(a, b):
    return a ^ b


@kernel_function
def _or_combine(a, b):
    return a | b


# Triton's `triton.language.standard` holds the library functions themselves: under the
# compatibility mode this module is that one, so it offers them under their names too.
from tilecc.language.core import (  # noqa: E402,F401
    argmax, argmin, bitonic_merge, cdiv, cumprod, cumsum, flip, interleave, max, min, ravel,
    reduce_or, sigmoid, softmax, sort, sum, swizzle2d, topk, xor_sum, zeros, zeros_like)
