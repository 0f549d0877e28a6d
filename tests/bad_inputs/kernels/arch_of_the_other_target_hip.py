# raises: builtins.ValueError
# error: arch 'sm_90' is not a hip architecture (sm_90 is a cuda architecture: use target="cuda"); give one such as gfx90a, gfx942, gfx1100, ...

import tilecc
import tilecc.language as tl


@tilecc.jit
def copy(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


def run():
    copy.source("*fp32,*fp32", target="hip", arch="sm_90", BLOCK=16)
