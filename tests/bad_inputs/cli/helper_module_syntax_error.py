# args: emit {file}:scale -s '*fp32,*fp32,i32,1024'
# error: tilecc: error: {dir}/_broken_helper.py:3:15: SyntaxError: expected ':' (imported at {file}:6)

import tilecc
import tilecc.language as tl
from _broken_helper import cdiv


@tilecc.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
