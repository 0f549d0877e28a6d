# raises: CompilationError
# error: {file}:16:41 in top3:
# error:     tl.store(out_ptr + tl.arange(0, 4), tl.topk(x, 3))
# error:                                         ^
# error: k must be a power of 2, got 3

import numpy as np

import tilecc
import tilecc.language as tl


@tilecc.jit
def top3(x_ptr, out_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(out_ptr + tl.arange(0, 4), tl.topk(x, 3))


def run():
    top3.source("*fp32,*fp32", BLOCK=16)
