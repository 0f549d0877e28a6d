# raises: LaunchError
# error: {file}:24:5 in run:
# error:     scale.interpret[(1,)]([1.0, 2.0, 3.0], out, 3, BLOCK=4)
# error:     ^
# error: argument `x_ptr` is a Python list; kernels take arrays (NumPy arrays and CPU torch tensors on the interpreter; CuPy arrays, torch CUDA tensors and objects with __cuda_array_interface__ or DLPack on the GPU) and int, float or bool scalars: convert it with np.asarray(...) for the interpreter
# A Python list where the kernel reads an array: what kernels take, NumPy arrays named
# for the interpreter, and how to convert.

import numpy as np

import tilecc
import tilecc.language as tl


@tilecc.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, 2 * tl.load(x_ptr + offs, mask=mask), mask=mask)


def run():
    out = np.zeros(3, np.float32)
    scale.interpret[(1,)]([1.0, 2.0, 3.0], out, 3, BLOCK=4)
