# args: export {file}:scale -s '*fp32:16,*fp32:16,i32,1024' -s '*fp32,*bf61,i32,1024' -o {tmp}
# error: {file}:9: kernel `scale`: parameter `out_ptr` (entry 2, '*bf61'): unknown type 'bf61' (did you mean bf16?)

import tilecc
import tilecc.language as tl


@tilecc.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
