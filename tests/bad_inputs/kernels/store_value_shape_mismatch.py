# raises: CompilationError
# error: {file}:17:9 in copy_rows:
# error:     x,
# error:     ^
# error: tl.store: the value's shape [16, 16] does not match the pointers' shape [16]: store a value of the pointers' shape (or one that broadcasts to it), or build pointers of the value's shape

import tilecc
import tilecc.language as tl


@tilecc.jit
def copy_rows(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs[:, None] * BLOCK + offs[None, :])
    tl.store(
        out_ptr + offs,
        x,
        mask=offs < BLOCK,
    )


def run():
    copy_rows.source("*fp32,*fp32", BLOCK=16)
