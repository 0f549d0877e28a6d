"""`tl.extra.hip`: Triton's HIP extras — libdevice and the real-time counter."""

from tilecc.language.core import builtin
from tilecc.language.extra.hip import libdevice  # noqa: F401
from tilecc.language.extra.hip.utils import memrealtime  # noqa: F401

__all__ = ["libdevice", "memrealtime"]
