# raises: CompilationError
# error: {file}:15:9 in mix:
# error:     h = tl.umulhi(x, 40503)
# error:         ^
# error: tl.umulhi expects int32, int64, uint32 or uint64 operands, got tilecc.language.int16

import tilecc
import tilecc.language as tl


@tilecc.jit
def mix(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)  # int16: too narrow for tl.umulhi (Triton's rule)
    h = tl.umulhi(x, 40503)
    tl.store(out_ptr + offs, h)


def run():
    mix.source("*i16,*i16", BLOCK=64)
