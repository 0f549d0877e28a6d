# raises: CompilationError
# error: {file}:17:9 in scale:
# error:     y = libdevice.mul_rd(x, x)
# error:         ^
# error: libdevice.mul_rd of (fp32, fp32) is not available on AMD GPUs (target hip): AMD GPUs have no instruction rounding in this direction
# A directed rounding on HIP is refused, never rounded to nearest silently.

import tilecc
import tilecc.language as tl
from tilecc.language.extra import libdevice


@tilecc.jit
def scale(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = libdevice.mul_rd(x, x)
    tl.store(out_ptr + offs, y)


def run():
    scale.source("*fp32, *fp32", target="hip", BLOCK=64)
