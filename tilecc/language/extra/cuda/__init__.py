"""`tl.extra.cuda`: Triton's CUDA extras — libdevice, the hardware's timer and SM id, the
launch's size as constexprs, grid dependency control, and the fp8e4b15 conversions."""

from tilecc.language.core import builtin
from tilecc.language.extra.cuda import libdevice  # noqa: F401
from tilecc.language.extra.cuda.gdc import gdc_launch_dependents, gdc_wait  # noqa: F401
from tilecc.language.extra.cuda.utils import (  # noqa: F401
    convert_custom_float8_sm70, convert_custom_float8_sm80, globaltimer, num_threads, num_warps,
    smid)

__all__ = ["libdevice", "globaltimer", "num_threads", "num_warps", "smid",
           "convert_custom_float8_sm70", "convert_custom_float8_sm80", "gdc_launch_dependents",
           "gdc_wait"]
