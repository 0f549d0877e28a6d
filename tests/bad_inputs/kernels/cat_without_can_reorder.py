# raises: CompilationError
# error: {file}:17:28 in concat:
# error:     tl.store(out_ptr + o2, tl.cat(x, x))
# error:                            ^
# error: current implementation of `cat` always may reorder elements: pass can_reorder=True

import numpy as np

import tilecc
import tilecc.language as tl


@tilecc.jit
def concat(x_ptr, out_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    o2 = tl.arange(0, 2 * BLOCK)
    tl.store(out_ptr + o2, tl.cat(x, x))


def run():
    concat.interpret[(1,)](np.zeros(16, np.float32), np.zeros(32, np.float32), BLOCK=16)
