# raises: NoDeviceError
# error: no usable CUDA driver or GPU was found (
# error: ): run the kernel on the NumPy interpreter instead, with kernel.interpret[grid](...) or TILECC_INTERPRET=1 (kernel.source and kernel.compile need no GPU)
# A GPU launch where no GPU can be used (here: none is visible, so the case means the
# same on a GPU machine).  The kernel takes no arrays: the launch asks the CUDA runtime
# which device is current, which is where a missing or old driver shows.

import os

os.environ["CUDA_VISIBLE_DEVICES"] = ""  # before anything loads CUDA

import tilecc  # noqa: E402
import tilecc.language as tl  # noqa: E402


@tilecc.jit
def nothing(n, BLOCK: tl.constexpr):
    tl.device_assert(n > 0)


def run():
    nothing[(1,)](5, BLOCK=16)
