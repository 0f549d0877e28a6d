# args: emit {file}:SIZE -s '*fp32'
# error: `SIZE` in {file} is not a @jit kernel (a value of type int) (the kernels in {file}: scale)

import tilecc
import tilecc.language as tl


@tilecc.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


SIZE = 1024
