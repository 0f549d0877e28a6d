# raises: builtins.ValueError
# error: arch 'gfx90a' is not a cuda architecture (gfx90a is a hip architecture: use target="hip"); give one such as sm_80, sm_90, sm_90a, sm_100, ...

import tilecc
import tilecc.language as tl


@tilecc.jit
def copy(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


def run():
    copy.compile("*fp32,*fp32", target="cuda", arch="gfx90a", BLOCK=16)
