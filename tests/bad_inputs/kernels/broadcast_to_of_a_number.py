# result: ok
# tl.broadcast_to of a Python number: a block of that number (Triton types 1.5 as fp32).

import numpy as np

import tilecc
import tilecc.language as tl


@tilecc.jit
def fill(out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.broadcast_to(1.5, (BLOCK,)) + tl.broadcast_to(2, (BLOCK,)))


def run():
    out = np.zeros(16, np.float32)
    fill.interpret[(1,)](out, BLOCK=16)
    assert (out == 3.5).all(), out
    assert "3.5f" in fill.source("*fp32", BLOCK=16) or "1.5f" in fill.source("*fp32", BLOCK=16)
