# args: emit {file}:scale -s '*fp32,*fp32,i32,1024'
# error: tilecc: error: {file}:12:
# error: : IndentationError: unexpected indent

import tilecc
import tilecc.language as tl


@tilecc.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
