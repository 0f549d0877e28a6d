# raises: InterpreterError
# error: {file}:18:9 in shift:
# error:     x = tl.load(x_ptr + offs + 1)
# error:         ^
# error: out-of-bounds load: element 16 of `x_ptr`, which has 16 elements (lane 15 of the block), in program (0, 0, 0); mask the access or fix the offsets

import os

import numpy as np

import tilecc
import tilecc.language as tl


@tilecc.jit
def shift(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs + 1)
    tl.store(out_ptr + offs, x)


def run():
    # kernel[grid](...) under TILECC_INTERPRET=1, as a test suite runs it without a GPU
    os.environ["TILECC_INTERPRET"] = "1"
    x = np.ones(16, np.float32)
    shift[(1,)](x, np.zeros_like(x), BLOCK=16)
