# raises: LaunchError
# error: {file}:25:5 in run:
# error:     add.interpret[(4,)](x, out, x.size, BLOCK_SIZE=32)
# error:     ^
# error: add[grid](...) got an unexpected keyword argument `BLOCK_SIZE`: did you mean `BLOCK`? (add takes x_ptr, out_ptr, n, BLOCK, and the launch options num_warps,
# A keyword misspelt at the launch (the kernel's parameter is BLOCK): the launch's line
# and the parameter meant, not the frames of tilecc's argument binding.

import numpy as np

import tilecc
import tilecc.language as tl


@tilecc.jit
def add(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1, mask=mask)


def run():
    x = np.ones(100, np.float32)
    out = np.zeros_like(x)
    add.interpret[(4,)](x, out, x.size, BLOCK_SIZE=32)
