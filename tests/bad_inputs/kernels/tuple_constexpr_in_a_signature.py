# result: ok
# A tuple constexpr used as a shape, given in a signature (as text, and as a value in a
# list) and at launch: all three compile the same kernel, and it runs.

import numpy as np

import tilecc
import tilecc.language as tl


@tilecc.jit
def fill(out_ptr, value, SHAPE: tl.constexpr):
    rows = tl.arange(0, SHAPE[0])[:, None]
    cols = tl.arange(0, SHAPE[1])[None, :]
    tl.store(out_ptr + rows * SHAPE[1] + cols, tl.full(SHAPE, value, tl.float32))


def run():
    text = fill.source("*fp32,fp32,(16, 32)")
    assert text == fill.source(["*fp32", "fp32", (16, 32)])
    assert text == fill.source("*fp32,fp32", SHAPE=(16, 32))
    out = np.zeros(16 * 32 + 1, np.float32)
    fill.interpret[(1,)](out, 2.5, (16, 32))
    assert (out[:-1] == 2.5).all() and out[-1] == 0, out
