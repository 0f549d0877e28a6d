# args: emit {file}:scale -s '*fp32,*fp32,i32,BLOKC'
# error: {file}:9: kernel `scale`: constexpr `BLOCK` (entry 4): 'BLOKC' is not a value: give a Python literal (1024, 0.5, True, 'name') or a type name (fp32)

import tilecc
import tilecc.language as tl


@tilecc.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
