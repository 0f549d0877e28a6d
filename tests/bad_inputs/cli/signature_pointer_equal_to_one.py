# args: emit {file}:scale -s '*fp32:1,*fp32,i32,1024'
# error: parameter `x_ptr` (entry 1, '*fp32:1'): a pointer cannot be specialized to :1 (use :16 for a 16-byte aligned one)

import tilecc
import tilecc.language as tl


@tilecc.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
