"""`tl.extra.cuda`: the libdevice functions under Triton's `extra.cuda` spelling."""

from tilecc.language.extra.cuda import libdevice  # noqa: F401
