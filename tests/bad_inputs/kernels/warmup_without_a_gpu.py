# raises: NoDeviceError
# error: no usable CUDA driver or GPU was found (
# error: ): run the kernel on the NumPy interpreter instead, with kernel.interpret[grid](...) or TILECC_INTERPRET=1 (kernel.source and kernel.compile need no GPU)
# kernel.run(..., warmup=True) compiles for the current GPU: where none can be used, the
# same message as a launch.

import os

os.environ["CUDA_VISIBLE_DEVICES"] = ""  # before anything loads CUDA

import tilecc  # noqa: E402
import tilecc.language as tl  # noqa: E402


@tilecc.jit
def nothing(n, BLOCK: tl.constexpr):
    tl.device_assert(n > 0)


def run():
    nothing.run(5, BLOCK=16, grid=(1,), warmup=True)
