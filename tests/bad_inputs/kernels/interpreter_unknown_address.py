# raises: InterpreterError
# error: {file}:17:26 in gather:
# error:     tl.store(out + offs, tl.load(src + offs))
# error:                          ^
# error: load through a pointer made from an integer that is inside no array the interpreter knows (address 0x1000): pass the array to the kernel, or keep it referenced by the calling code

import numpy as np

import tilecc
import tilecc.language as tl


@tilecc.jit
def gather(table, out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    src = tl.load(table).to(tl.pointer_type(tl.float32))
    tl.store(out + offs, tl.load(src + offs))


def run():
    # an address that is no array's: a made-up number
    table = np.array([0x1000], np.int64)
    gather.interpret[(1,)](table, np.zeros(16, np.float32), BLOCK=16)
