# raises: InterpreterError
# error: {file}:17:5 in shift:
# error:     tl.store(out_ptr + offs + 1, x)
# error:     ^
# error: out-of-bounds store: element 16 of `out_ptr`, which has 16 elements (lane 15 of the block), in program (0, 0, 0); mask the access or fix the offsets

import numpy as np

import tilecc
import tilecc.language as tl


@tilecc.jit
def shift(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs + 1, x)


def run():
    x = np.ones(16, np.float32)
    shift.interpret[(1,)](x, np.zeros_like(x), BLOCK=16)
