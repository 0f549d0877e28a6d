# args: emit {file}:double -s '*fp32,*fp32,i32,1048576'
# lines: 4
# error: tilecc: error: {file}:15:39 in double:
# error:     offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
# error:                                       ^
# error: out of resource: registers: a block of 1048576 elements ([1048576]) on 128 threads (num_warps=4) gives each thread 8192 of them; tilecc compiles at most 1024

import tilecc
import tilecc.language as tl


@tilecc.jit
def double(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # a block of 2**20 on 4 warps: refused before rendering (it compiled for minutes)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x * 2, mask=offs < n)
