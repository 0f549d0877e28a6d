# raises: CompilationError
# error: {file}:16:44 in copy_rows:
# error:     tl.store(pointer=out_ptr + offs, value=x)
# error:                                            ^
# error: tl.store: the value's shape [16, 16] does not match the pointers' shape [16]

import tilecc
import tilecc.language as tl


@tilecc.jit
def copy_rows(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs[:, None] * BLOCK + offs[None, :])
    # given by keyword: the caret is on the value still
    tl.store(pointer=out_ptr + offs, value=x)


def run():
    copy_rows.source("*fp32,*fp32", BLOCK=16)
