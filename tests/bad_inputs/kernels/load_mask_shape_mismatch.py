# raises: CompilationError
# error: {file}:17:51 in row_sums:
# error:     x = tl.load(x_ptr + rows * BLOCK + cols, mask=half < n)
# error:                                                   ^
# error: tl.load: the mask's shape [8] does not match the pointers' shape [16, 16]: give a mask of the pointers' shape (or one that broadcasts with it)

import tilecc
import tilecc.language as tl


@tilecc.jit
def row_sums(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    rows, cols = offs[:, None], offs[None, :]
    half = tl.arange(0, BLOCK // 2)
    # a mask of BLOCK // 2 elements cannot go with BLOCK x BLOCK pointers
    x = tl.load(x_ptr + rows * BLOCK + cols, mask=half < n)
    tl.store(out_ptr + offs, tl.sum(x, axis=1), mask=offs < n)


def run():
    row_sums.source("*fp32,*fp32,i32", BLOCK=16)
