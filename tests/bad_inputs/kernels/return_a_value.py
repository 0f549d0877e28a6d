# raises: CompilationError
# error: {file}:16:5 in total:
# error:     return tl.sum(x, axis=0)
# error:     ^
# error: a kernel cannot return a value: store results through a pointer argument (tl.store(out_ptr + offsets, value)) and end with a bare `return`, or none

import tilecc
import tilecc.language as tl


@tilecc.jit
def total(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    # the caret belongs here, not on the `def`
    return tl.sum(x, axis=0)


def run():
    total.source("*fp32,*fp32", BLOCK=16)
