"""`tl.extra.cuda.globaltimer()`, `smid()`, `num_threads()`, `num_warps()` and Triton's
fp8e4b15 conversions: declarations (`tilecc.transpiler.builtins_vendor` implements them)."""

from __future__ import annotations

import functools

from tilecc.language.core import builtin

cuda_builtin = functools.partial(builtin, vendor="cuda")


@cuda_builtin
def globaltimer():
    """The GPU's global timer in nanoseconds (int64; PTX `%globaltimer`).  On HIP: an error
    that names tl.extra.hip.memrealtime(); in the interpreter: the host's time.time_ns()."""


@cuda_builtin
def smid():
    """The id of the streaming multiprocessor running this program (int32; PTX `%smid`; on
    HIP the compute unit's, `__smid()`; 0 in the interpreter)."""


@cuda_builtin
def num_threads():
    """Threads per program, a constexpr: num_warps x 32 (x 64, the wavefront, on HIP)."""


@cuda_builtin
def num_warps():
    """Warps per program (the launch's num_warps), a constexpr."""


@cuda_builtin
def convert_custom_float8_sm80(arg, dst_ty, fp_downcast_rounding=None):
    """Triton's conversions to and from tl.float8e4b15, which tilecc does not support."""


@cuda_builtin
def convert_custom_float8_sm70(arg, dst_ty, fp_downcast_rounding=None):
    """Triton's conversions to and from tl.float8e4b15, which tilecc does not support."""
