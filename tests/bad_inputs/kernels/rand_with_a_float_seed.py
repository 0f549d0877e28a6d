# raises: CompilationError
# error: {file}:17:12 in dropout:
# error:     keep = tl.rand(p, offs) > p
# error:            ^
# error: tl.rand(): static assertion failed: the seed of Philox must be an integer

import tilecc
import tilecc.language as tl


@tilecc.jit
def dropout(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    # the seed and the probability swapped: Philox's seed is an integer
    keep = tl.rand(p, offs) > p
    tl.store(out_ptr + offs, tl.where(keep, x / (1 - p), 0.0), mask=mask)


def run():
    dropout.source("*fp32,*fp32,i32,fp32,i32", BLOCK=256)
