# args: emit {file}:scale -s '*fp32,*fp32'
# error: tilecc: error: {file}:9: kernel `scale` has 4 parameters (x_ptr, out_ptr, n, BLOCK), the signature gives 2: give one entry per parameter

import tilecc
import tilecc.language as tl


@tilecc.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
