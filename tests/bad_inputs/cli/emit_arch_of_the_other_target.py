# args: emit {file}:scale -s '*fp32:16,*fp32:16,i32,1024' --arch gfx90a
# error: tilecc: error: --arch 'gfx90a' is not a cuda architecture (gfx90a is a hip architecture: use --target hip)


import tilecc
import tilecc.language as tl


@tilecc.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
