# raises: CompilationError
# error: {file}:16:41 in hist:
# error:     tl.store(out_ptr + tl.arange(0, 8), tl.histogram(x, 8))
# error:                                         ^
# error: histogram only supports integer input

import numpy as np

import tilecc
import tilecc.language as tl


@tilecc.jit
def hist(x_ptr, out_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(out_ptr + tl.arange(0, 8), tl.histogram(x, 8))


def run():
    hist.interpret[(1,)](np.zeros(16, np.float32), np.zeros(8, np.int32), BLOCK=16)
