# args: emit {file}:scale -s '*fp32,*fp32,i32,1024'
# error: tilecc: error: {file}:9: loading it raised ZeroDivisionError: integer division or modulo by zero; fix the file (TILECC_TRACEBACK=1 shows the traceback)

import tilecc
import tilecc.language as tl


def block_size(elements, programs):
    return elements // programs


BLOCK_SIZE = block_size(1024, 0)


@tilecc.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
