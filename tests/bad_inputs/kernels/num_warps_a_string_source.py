# raises: OptionError
# error: num_warps must be a power of 2 between 1 and 32 (an int), got '4'

import tilecc
import tilecc.language as tl


@tilecc.jit
def copy(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


def run():
    copy.source("*fp32,*fp32", BLOCK=16, num_warps="4")
