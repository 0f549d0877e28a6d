"""`tl.extra.hip`: the libdevice functions under Triton's `extra.hip` spelling."""

from tilecc.language.extra.hip import libdevice  # noqa: F401
