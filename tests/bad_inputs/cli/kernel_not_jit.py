# args: emit {file}:double -s '*fp32'
# error: `double` in {file} is a plain function: decorate it with @tilecc.jit (or @triton.jit)

import tilecc
import tilecc.language as tl


@tilecc.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def double(x):
    return x * 2
