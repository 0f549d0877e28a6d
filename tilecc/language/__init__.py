"""`import tilecc.language as tl`: the kernel language, Triton's surface.

Everything here is a declaration: dtypes, `constexpr`, and stubs whose calls the
transpiler turns into tile IR.  Called outside a kernel, a stub raises
`OutsideKernelError`.
"""

from tilecc.language import math
from tilecc.language.core import (
    OutsideKernelError, abs, arange, cast, cdiv, ceil, constexpr, cos, device_assert, erf,
    exp, exp2, floor, fma, load, log, log2, max_constancy, max_contiguous, maximum,
    minimum, multiple_of, num_programs, program_id, range, rsqrt, sigmoid, sin, sqrt,
    static_assert, static_range, store, where)
from tilecc.language.dtypes import (
    bfloat16, dtype, float16, float32, float64, int1, int8, int16, int32, int64,
    pointer_type, uint8, uint16, uint32, uint64)

__all__ = [
    "OutsideKernelError", "abs", "arange", "bfloat16", "cast", "cdiv", "ceil", "constexpr",
    "cos", "device_assert", "dtype", "erf", "exp", "exp2", "float16", "float32", "float64",
    "floor", "fma", "int1", "int8", "int16", "int32", "int64", "load", "log", "log2", "math",
    "max_constancy", "max_contiguous", "maximum", "minimum", "multiple_of", "num_programs",
    "pointer_type", "program_id", "range", "rsqrt", "sigmoid", "sin", "sqrt",
    "static_assert", "static_range", "store", "uint8", "uint16", "uint32", "uint64", "where",
]
