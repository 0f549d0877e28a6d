# raises: CompilationError
# error: kernel `add` has 5 parameters (x_ptr, y_ptr, out_ptr, n, BLOCK), the signature gives 4: constexpr `BLOCK` has no default, give its value as entry 5

import tilecc
import tilecc.language as tl


@tilecc.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


def run():
    add.source("*fp32,*fp32,i32,1024")
