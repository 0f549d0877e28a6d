# args: compile {file}:scale -s '*fp32:16,*fp32:16,i32,1024' --arch sm80 -o {tmp}/k.cubin
# error: --arch 'sm80' is not a cuda architecture; give one such as sm_80, sm_90, sm_90a, sm_100, ...

import tilecc
import tilecc.language as tl


@tilecc.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
