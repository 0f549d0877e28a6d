# raises: LaunchError
# error: {file}:26:5 in run:
# error:     add[(4,)](x, out, x.size, BLOKC=32, num_warp=2)
# error:     ^
# error: add[grid](...) got an unexpected keyword argument `BLOKC`: did you mean `BLOCK`?
# The same mistake in a GPU launch (arguments are bound before any device is asked, so
# the case means the same with or without a GPU), the first of two misspelt keywords.

import numpy as np

import tilecc
import tilecc.language as tl


@tilecc.jit
def add(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1, mask=mask)


def run():
    x = np.ones(100, np.float32)
    out = np.zeros_like(x)
    # a GPU launch with host arrays: the keywords are checked first
    add[(4,)](x, out, x.size, BLOKC=32, num_warp=2)
