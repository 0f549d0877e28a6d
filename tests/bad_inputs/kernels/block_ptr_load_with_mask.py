# raises: CompilationError
# error: {file}:16:9 in tile_copy:
# error:     x = tl.load(block, mask=rows < M, other=0.0)
# error:         ^
# error: `mask` and `other` arguments cannot be specified for loading block pointers; use boundary_check and padding_option

import tilecc
import tilecc.language as tl


@tilecc.jit
def tile_copy(x_ptr, out_ptr, M, N, BLOCK: tl.constexpr):
    block = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (0, 0), (BLOCK, BLOCK), (1, 0))
    rows = tl.arange(0, BLOCK)[:, None]
    # block pointers take boundary_check, not a mask
    x = tl.load(block, mask=rows < M, other=0.0)
    tl.store(out_ptr + rows * BLOCK + tl.arange(0, BLOCK)[None, :], x)


def run():
    tile_copy.source("*fp32,*fp32,i32,i32", BLOCK=16)
