# raises: InterpreterError
# error: {file}:16:12 in lanes:
# error:     lane = tl.inline_asm_elementwise("mov.u32 $0, %laneid;", "=r,r", [offs], dtype=tl.int32,
# error:            ^
# error: tl.inline_asm_elementwise runs the target's own assembly (PTX, GCN), which the interpreter cannot execute: run this kernel on a GPU, or write the computation in tl operations

import numpy as np

import tilecc
import tilecc.language as tl


@tilecc.jit
def lanes(out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    lane = tl.inline_asm_elementwise("mov.u32 $0, %laneid;", "=r,r", [offs], dtype=tl.int32,
                                     is_pure=False, pack=1)
    tl.store(out + offs, lane)


def run():
    lanes.interpret[(1,)](np.zeros(32, np.int32), BLOCK=32)
