# args: export {file}:scale_by -s '*fp32,*fp32,fp32,i32,1024' --grid 'cdiv(n, BLOCK) * factor' -o {tmp}
# error: tilecc: error: --grid for scale_by: 'cdiv(n, BLOCK) * factor' is a floating-point value (in signature '*fp32,*fp32,fp32,i32,1024'); a grid dimension is an integer

import tilecc
import tilecc.language as tl


@tilecc.jit
def scale_by(x_ptr, out_ptr, factor, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * factor, mask=offs < n)
