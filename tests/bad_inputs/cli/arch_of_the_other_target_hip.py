# args: compile {file}:scale -s '*fp32:16,*fp32:16,i32,1024' --target hip --arch sm_90 -o {tmp}/k.hsaco
# error: --arch 'sm_90' is not a hip architecture (sm_90 is a cuda architecture: use --target cuda)

import tilecc
import tilecc.language as tl


@tilecc.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
