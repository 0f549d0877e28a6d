# args: emit {dir}:scale -s '*fp32:16,*fp32:16,i32,1024'
# error: expected FILE.py:KERNEL, got '{dir}:scale' (e.g. examples/vector_add.py:add_kernel)

import tilecc
import tilecc.language as tl


@tilecc.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
