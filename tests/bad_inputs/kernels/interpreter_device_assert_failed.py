# raises: InterpreterError
# error: {file}:17:5 in clamp:
# error:     tl.device_assert(x < 1, "x must be below 1")
# error:     ^
# error: device assertion failed: x must be below 1 (program (0, 0, 0))

import numpy as np

import tilecc
import tilecc.language as tl


@tilecc.jit
def clamp(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.device_assert(x < 1, "x must be below 1")
    tl.store(out_ptr + offs, x)


def run():
    x = np.ones(16, np.float32)
    clamp.interpret[(1,)](x, np.zeros_like(x), BLOCK=16)
