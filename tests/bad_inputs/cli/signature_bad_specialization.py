# args: emit {file}:scale -s '*fp32,*fp32,i32:4,1024'
# error: {file}:9: kernel `scale`: parameter `n` (entry 3, 'i32:4'): unknown specialization ':4' (use :16, :8 or :1)

import tilecc
import tilecc.language as tl


@tilecc.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
