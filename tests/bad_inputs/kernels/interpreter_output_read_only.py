# raises: InterpreterError
# error: {file}:17:5 in copy:
# error:     tl.store(out_ptr + offs, tl.load(x_ptr + offs))
# error:     ^
# error: store into `out_ptr`, a read-only NumPy array (a kernel writes its outputs in place): pass a writable array, e.g. a copy (np.array(x))

import numpy as np

import tilecc
import tilecc.language as tl


@tilecc.jit
def copy(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    # an input may be read-only (a memory map, a frozen array): the output may not
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


def run():
    x = np.ones(16, np.float32)
    x.setflags(write=False)
    out = np.zeros(16, np.float32)
    out.setflags(write=False)
    copy.interpret[(1,)](x, out, BLOCK=16)
