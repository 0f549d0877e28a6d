# args: emit {file}:scale -s '*fp32:16,*fp32:16,i32,1024' --num-stages -1
# exit: 2
# error: argument --num-stages: num_stages must be a non-negative integer (0 or 1: tl.dot's operands not pipelined), got -1

import tilecc
import tilecc.language as tl


@tilecc.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
