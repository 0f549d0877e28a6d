"""`tilecc.language.extra.cuda.libdevice`: the same functions as
`tilecc.language.extra.libdevice` (calls are checked against the target when compiled)."""

from tilecc.language.extra.libdevice import *  # noqa: F401,F403
from tilecc.language.extra.libdevice import __all__  # noqa: F401
