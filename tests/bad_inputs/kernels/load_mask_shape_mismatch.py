# raises: CompilationError
# error: {file}:16:51 in row_sums:
# error:     x = tl.load(x_ptr + rows * BLOCK + cols, mask=offs < n)
# error:                                                   ^
# error: tl.load: the mask's shape [16] does not match the pointers' shape [16, 16]: give a mask of the pointers' shape (or one that broadcasts to it along size-1 axes)

import tilecc
import tilecc.language as tl


@tilecc.jit
def row_sums(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    rows, cols = offs[:, None], offs[None, :]
    # the mask should be `cols < n` ([1, BLOCK], which broadcasts); `offs` is 1-D
    x = tl.load(x_ptr + rows * BLOCK + cols, mask=offs < n)
    tl.store(out_ptr + offs, tl.sum(x, axis=1), mask=offs < n)


def run():
    row_sums.source("*fp32,*fp32,i32", BLOCK=16)
