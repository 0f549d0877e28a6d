# raises: CompilationError
# error: {file}:20:30 in kernel:
# error:     tl.store(out_ptr + offs, helper(x, scal=2.0))
# error:                              ^
# error: helper(): got an unexpected keyword argument 'scal'; did you mean `scale`?

import tilecc
import tilecc.language as tl


@tilecc.jit
def helper(x, scale):
    return x * scale


@tilecc.jit
def kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, helper(x, scal=2.0))


def run():
    kernel.source("*fp32,*fp32", BLOCK=16)
