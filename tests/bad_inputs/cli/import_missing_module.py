# args: emit {file}:scale -s '*fp32,*fp32,i32,1024'
# error: tilecc: error: {file}:6: loading it raised ModuleNotFoundError: No module named 'tilecc_no_such_helpers'; install `tilecc_no_such_helpers` or fix the import

import tilecc
import tilecc.language as tl
import tilecc_no_such_helpers


@tilecc.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
