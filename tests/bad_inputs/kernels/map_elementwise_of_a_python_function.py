# raises: CompilationError
# error: {file}:21:49 in apply:
# error:     tl.store(out_ptr + offs, tl.map_elementwise(double, x))
# error:                                                 ^
# error: global `double` (function) cannot be used in a kernel

import numpy as np

import tilecc
import tilecc.language as tl


def double(x):  # not @tilecc.jit: the kernel cannot trace it
    return x * 2


@tilecc.jit
def apply(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.map_elementwise(double, x))


def run():
    apply.interpret[(1,)](np.zeros(16, np.float32), np.zeros(16, np.float32), BLOCK=16)
