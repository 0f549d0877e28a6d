"""`tl.math.*`: the math functions under their Triton spellings (same builtins as `tl.*`)."""

from tilecc.language.core import (  # noqa: F401
    abs, ceil, cos, div_rn, erf, exp, exp2, fdiv, floor, fma, log, log2, rsqrt, sigmoid, sin,
    sqrt, sqrt_rn, umulhi)
