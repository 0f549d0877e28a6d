# raises: CompilationError
# error: {file}:17:18 in gelu:
# error:     y = x * (1 + libdevice.tanh(x))
# error:                  ^
# error: libdevice.tanh has no implementation for argument types (float16); it takes (float32), (float64); cast 16-bit floats to tl.float32 first
# libdevice takes the dtypes of Triton's table only: fp16 is refused, as in Triton.

import tilecc
import tilecc.language as tl
from tilecc.language.extra import libdevice


@tilecc.jit
def gelu(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = x * (1 + libdevice.tanh(x))
    tl.store(out_ptr + offs, y)


def run():
    gelu.source("*fp16, *fp16", BLOCK=64)
