# raises: LaunchError
# error: {file}:24:5 in run:
# error:     scale[(1,)](out, [1.0, 2.0, 3.0], 3, BLOCK=4)
# error:     ^
# error: argument `out_ptr` is a Python list; kernels take arrays (
# A list in a GPU launch: refused while the arguments are specialized, before any device
# is asked (the case means the same with or without a GPU).

import numpy as np

import tilecc
import tilecc.language as tl


@tilecc.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, 2 * tl.load(x_ptr + offs, mask=mask), mask=mask)


def run():
    out = np.zeros(3, np.float32)
    scale[(1,)](out, [1.0, 2.0, 3.0], 3, BLOCK=4)
