"""`tl.extra.hip.memrealtime()`: a declaration (`tilecc.transpiler.builtins_vendor`
implements it)."""

from __future__ import annotations

from tilecc.language.core import builtin


def memrealtime():
    """AMD's 64-bit real-time counter (int64, 100 MHz on CDNA; HIP's `wall_clock64()`).  On
    CUDA: an error that names tl.extra.cuda.globaltimer(); in the interpreter: the host's
    time.time_ns() // 10."""


memrealtime = builtin(memrealtime, vendor="hip")
