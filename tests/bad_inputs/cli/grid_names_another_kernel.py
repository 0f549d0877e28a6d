# args: export {file}:scale -s '*fp32:16,*fp32:16,i32,1024' --grid 'other=n,1,1' -o {tmp}
# error: --grid 'other=n,1,1' names `other`, which is not a kernel being exported (scale): give KERNEL=... with one of those

import tilecc
import tilecc.language as tl


@tilecc.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
