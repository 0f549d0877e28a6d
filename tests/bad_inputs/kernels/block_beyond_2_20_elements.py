# raises: CompilationError
# error: {file}:17:9 in clear:
# error:     x = tl.zeros((M, N), tl.float32)
# error:         ^
# error: a block of 2097152 elements ([2048, 1024]) is larger than Triton allows (1048576, 2**20 elements): use smaller blocks and loop over the data
# Triton checks every block shape against 2**20 elements (TRITON_MAX_TENSOR_NUMEL), its
# interpreter included: so does tilecc's.

import numpy as np

import tilecc
import tilecc.language as tl


@tilecc.jit
def clear(out_ptr, M: tl.constexpr, N: tl.constexpr):
    x = tl.zeros((M, N), tl.float32)
    tl.store(out_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], x)


def run():
    clear.interpret[(1,)](np.ones(2048 * 1024, np.float32), M=2048, N=1024)
