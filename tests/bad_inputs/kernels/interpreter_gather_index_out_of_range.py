# raises: InterpreterError
# error: {file}:18:30 in shift:
# error:     tl.store(out_ptr + offs, tl.gather(x, offs + 1, 0))
# error:                              ^
# error: tl.gather: an index is out of range for an axis of 16 (got 1 .. 16)

import numpy as np

import tilecc
import tilecc.language as tl


@tilecc.jit
def shift(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    # the last index is one past the block: Triton leaves the result undefined
    tl.store(out_ptr + offs, tl.gather(x, offs + 1, 0))


def run():
    shift.interpret[(1,)](np.zeros(16, np.float32), np.zeros(16, np.float32), BLOCK=16)
