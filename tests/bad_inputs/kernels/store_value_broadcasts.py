# result: ok
# A stored value broadcasts to the pointers' shape along its size-1 axes (as in Triton):
# a row [1, N] stored into every row of an [M, N] block.

import numpy as np

import tilecc
import tilecc.language as tl


@tilecc.jit
def repeat_row(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    row = tl.load(x_ptr + cols)
    tl.store(out_ptr + rows * N + cols, row)


def run():
    x = np.arange(8, dtype=np.float32)
    out = np.zeros((4, 8), np.float32)
    repeat_row.interpret[(1,)](x, out, M=4, N=8)
    assert (out == x[None, :]).all(), out
    repeat_row.source("*fp32,*fp32", M=4, N=8)
