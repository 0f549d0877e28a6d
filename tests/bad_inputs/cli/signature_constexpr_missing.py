# args: emit {file}:scale -s '*fp32,*fp32,i32'
# error: {file}:9: kernel `scale` has 4 parameters (x_ptr, out_ptr, n, BLOCK), the signature gives 3: constexpr `BLOCK` has no default, give its value as entry 4

import tilecc
import tilecc.language as tl


@tilecc.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
