# raises: CompilationError
# error: kernel `add` has 5 parameters (x_ptr, y_ptr, out_ptr, n, BLOCK), the signature gives 4: read as the 4 that are not constexpr, `n` (entry 4) would be '1024', a value, not a type; give one entry per parameter

import tilecc
import tilecc.language as tl


@tilecc.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr = 128):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


def run():
    add.source("*fp32,*fp32,i32,1024")
