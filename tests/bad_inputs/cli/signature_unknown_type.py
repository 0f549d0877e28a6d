# args: emit {file}:scale -s '*fp32,*f32x,i32,1024'
# error: {file}:9: kernel `scale`: parameter `out_ptr` (entry 2, '*f32x'): unknown type 'f32x' (did you mean fp32?); the types are bf16, fp16, fp32, fp64, fp8e4b15, fp8e4b8, fp8e4nv, fp8e5, fp8e5b16, i1, i16, i32, i64, i8, u16, u32, u64, u8

import tilecc
import tilecc.language as tl


@tilecc.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
