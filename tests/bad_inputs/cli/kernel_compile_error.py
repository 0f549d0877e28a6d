# args: emit {file}:scale -s '*fp32,*fp32,i32,1024'
# lines: 4
# error: tilecc: error: {file}:16:30 in scale:
# error:     tl.store(out_ptr + offs, tl.sine(x), mask=offs < n)
# error:                              ^
# error: `tl.sine` is not supported by tilecc; did you mean `tl.sin`?

import tilecc
import tilecc.language as tl


@tilecc.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, tl.sine(x), mask=offs < n)
