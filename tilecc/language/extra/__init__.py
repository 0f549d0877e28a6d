"""`tl.extra`: the vendor libraries' math, as Triton's `triton.language.extra`
(`libdevice`, `cuda.libdevice`, `hip.libdevice`)."""

from tilecc.language.extra import libdevice  # noqa: F401
from tilecc.language.extra import cuda, hip  # noqa: F401,E402
