# args: emit {file}:scale -s '*fp32:16,*fp32:16,i32,1024' --num-stages 9
# exit: 2
# error: argument --num-stages: num_stages must be an integer from 1 to 8, got 9

import tilecc
import tilecc.language as tl


@tilecc.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
