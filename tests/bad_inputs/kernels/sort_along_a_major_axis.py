# raises: CompilationError
# error: {file}:17:30 in sort_columns:
# error:     tl.store(out_ptr + offs, tl.sort(x, dim=0))
# error:                              ^
# error: only minor dimension is currently supported

import numpy as np

import tilecc
import tilecc.language as tl


@tilecc.jit
def sort_columns(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)[:, None] * BLOCK + tl.arange(0, BLOCK)[None, :]
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.sort(x, dim=0))


def run():
    sort_columns.source("*fp32,*fp32", BLOCK=16)
