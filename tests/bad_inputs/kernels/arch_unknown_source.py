# raises: builtins.ValueError
# requires: nvrtc
# error: arch sm_999: this NVRTC does not compile for it; it compiles for sm_

import tilecc
import tilecc.language as tl


@tilecc.jit
def copy(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


def run():
    copy.source("*fp32,*fp32", arch="sm_999", BLOCK=16)
