# args: emit {file}:scale -s '*fp32:16,*fp32:16,i32,1024' --target ptx
# exit: 2
# error: tilecc: error: argument --target: unknown target 'ptx'; choose one of ['cuda', 'hip'] (`tilecc emit --help` shows the usage)

import tilecc
import tilecc.language as tl


@tilecc.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
