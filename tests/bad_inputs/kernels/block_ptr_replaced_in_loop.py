# raises: CompilationError
# error: {file}:15:5 in row_sums:
# error:     for k in range(0, N, BLOCK):
# error:     ^
# error: block pointer `block` is carried through the loop, so its body may only move it with tl.advance (not make a new one); make it before the loop

import tilecc
import tilecc.language as tl


@tilecc.jit
def row_sums(x_ptr, out_ptr, M, N, BLOCK: tl.constexpr):
    block = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (0, 0), (BLOCK, BLOCK), (1, 0))
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for k in range(0, N, BLOCK):
        acc += tl.sum(tl.load(block, boundary_check=(0, 1), padding_option="zero"), axis=1)
        # a new block pointer each step: only tl.advance may move a carried one
        block = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (0, k + BLOCK), (BLOCK, BLOCK), (1, 0))
    tl.store(out_ptr + tl.arange(0, BLOCK), acc)


def run():
    row_sums.source("*fp32,*fp32,i32,i32", BLOCK=16)
