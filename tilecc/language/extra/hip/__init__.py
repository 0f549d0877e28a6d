"""`tl.extra.hip`: the libdevice functions under Triton's `extra.hip` spelling, and
Triton's AMD-only helper `memrealtime`."""

from tilecc.language.core import builtin
from tilecc.language.extra.hip import libdevice  # noqa: F401


@builtin
def memrealtime():
    """The GPU's constant-rate real-time counter (int64, `s_memrealtime`)."""
