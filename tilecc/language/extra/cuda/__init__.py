"""`tl.extra.cuda`: the libdevice functions under Triton's `extra.cuda` spelling, and
Triton's NVIDIA-only helpers: the launch's warps and threads, the global timer and the
multiprocessor's id (PTX special registers), and grid dependency control."""

from tilecc.language.core import builtin
from tilecc.language.extra.cuda import libdevice  # noqa: F401


@builtin
def num_warps():
    """The program's warps (the launch's `num_warps`), a constexpr."""


@builtin
def num_threads():
    """The program's threads (num_warps × 32), a constexpr."""


@builtin
def globaltimer():
    """The GPU's global nanosecond timer (int64, `%globaltimer`)."""


@builtin
def smid():
    """The id of the multiprocessor the program runs on (int32, `%smid`)."""


@builtin
def gdc_wait():
    """Wait for the grid this one depends on under programmatic dependent launch.  tilecc
    does not launch with it, so the previous grid has finished: nothing to wait for."""


@builtin
def gdc_launch_dependents():
    """Let a dependent grid start (programmatic dependent launch, which tilecc does not
    use: nothing to do)."""
