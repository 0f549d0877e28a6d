# args: emit {file}:scale -s '*fp32:16,*fp32:16,i32,1024' --num-warps 3
# exit: 2
# error: argument --num-warps: '3' is not a power of 2 from 1 to 32

import tilecc
import tilecc.language as tl


@tilecc.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
