"""`tl.device_print`'s lines, as Triton's GPU back end writes them:

    pid (<x>, <y>, <z>) idx (<i0>, <i1>, ...)<prefix><value>

one line per element (`(operand <n>) ` before the value when several are printed), the
index padded to the digits of each axis' size, the prefix made to start with " " and end
with ": ".  The renderer passes these printf formats to CUDA / HIP printf; the
interpreter prints the same lines through `python_format`.
"""

from __future__ import annotations

import math
import re

from tilecc.language import dtypes as D


def munge_prefix(prefix: str, has_args: bool) -> str:
    """Triton's rule: with values to print, the prefix ends in ": "; a prefix of more than
    two characters starts with " "."""
    if has_args and not prefix.endswith(" "):
        prefix += " "
    if has_args and not prefix.endswith(": "):
        prefix = prefix[:-1] + ": "
    if len(prefix) > 2 and not prefix.startswith(" "):
        prefix = " " + prefix
    return prefix


def value_format(dtype: D.dtype, hex: bool) -> str:
    if hex:  # the value's bits, zero-padded to the type's hex digits
        return f"0x%0{max(1, dtype.bits // 4)}{'ll' if dtype.bits > 32 else ''}x"
    if dtype.is_floating():
        return "%f"
    if dtype.is_int_signed():
        return "%lli" if dtype.bits == 64 else "%i"
    return "%llu" if dtype.bits == 64 else "%u"


def line_format(shape: tuple[int, ...], dtype: D.dtype, hex: bool, operand: int,
                operands: int) -> str:
    """The printf format of one element's line (without the newline): its arguments are
    the three program ids, the element's index, the prefix and the value."""
    widths = [math.ceil(math.log10(n)) if n > 0 else 0 for n in shape]
    index = ", ".join(f"%{w}u" for w in widths)
    which = f"(operand {operand}) " if operands > 1 else ""
    return f"pid (%u, %u, %u) idx ({index})%s{which}{value_format(dtype, hex)}"


NO_VALUES_FORMAT = "pid (%u, %u, %u)%s"


def python_format(c_format: str) -> str:
    """A printf format as Python's `%` operator takes it (the same text for the same
    values)."""
    return re.sub(r"%(0?\d*)(?:ll)?[uid]", r"%\1d", c_format.replace("llx", "x"))
