# args: export {file}:scale -s '*fp32:16,*fp32:16,i32,1024' --grid 'ceil(n / BLOCK)' -o {tmp}
# error: --grid for scale: `ceil` is not a parameter of the kernel

import tilecc
import tilecc.language as tl


@tilecc.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
