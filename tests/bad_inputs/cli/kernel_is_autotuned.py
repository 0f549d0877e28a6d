# args: emit {file}:tuned -s '*fp32,i32,256'
# error: `tuned` in {file} is wrapped in @autotune / @heuristics (Autotuner)
# error: give the @jit function under it a name of its own and name that

import tilecc
import tilecc.language as tl


@tilecc.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


@tilecc.autotune(configs=[tilecc.Config({"BLOCK": 256})], key=["n"])
@tilecc.jit
def tuned(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)
