"""`import tilecc.language as tl`: the kernel language, Triton's surface.

Everything here is a declaration: dtypes, `constexpr`, and stubs whose calls the
transpiler turns into tile IR.  Called outside a kernel, a stub raises
`OutsideKernelError`.
"""

from tilecc.language import math
from tilecc.language.core import (
    OutsideKernelError, TRITON_MAX_TENSOR_NUMEL, abs, add, arange, argmax, assume, argmin, associative_scan, atomic_add, atomic_and,
    atomic_cas, atomic_max, atomic_min, atomic_or, atomic_xchg, atomic_xor, broadcast,
    broadcast_to, cast, cdiv, ceil, condition, constexpr, cos, cumprod, cumsum, debug_barrier,
    device_assert, device_print, dot, erf, exp, exp2, expand_dims, floor, fma, full, join, load, log, log2, max,
    max_constancy, max_contiguous, maximum, min, minimum, mul, multiple_of, num_programs, permute,
    program_id, range, ravel, reduce, reshape, rsqrt, sigmoid, sin, split, sqrt, sqrt_rn,
    static_assert, static_print, static_range, store, sub, tensor, tensor_descriptor, sum, to_tensor, trans, umulhi, view, where, zeros,
    zeros_like)
from tilecc.language.dtypes import (
    bfloat16, block_type, dtype, float16, float32, float64, int1, int8, int16, int32, int64,
    pointer_type, uint8, uint16, uint32, uint64)
from tilecc.language.dtypes import (  # Triton's fp8 types
    float8e4b8, float8e4b15, float8e4nv, float8e5, float8e5b16)
from tilecc.language import random  # noqa: E402  (after the names its functions call)
from tilecc.language.random import (  # noqa: E402
    pair_uniform_to_normal, philox, philox_impl, rand, rand4x, randint, randint4x, randn,
    randn4x, uint_to_uniform_float)
from tilecc.language.microscaling import dot_scaled  # noqa: E402
from tilecc.language.core import (  # noqa: E402  (block reordering)
    bitonic_merge, cat, flip, gather, histogram, interleave, map_elementwise, reduce_or, sort,
    swizzle2d, topk, xor_sum)

__all__ = [
    "OutsideKernelError", "abs", "arange", "argmax", "argmin", "associative_scan",
    "atomic_add", "atomic_and", "atomic_cas", "atomic_max", "atomic_min", "atomic_or",
    "atomic_xchg", "atomic_xor", "broadcast", "broadcast_to", "cumprod", "cumsum",
    "debug_barrier", "dot", "dot_scaled", "expand_dims", "full", "join", "max", "min", "permute", "ravel",
    "reduce", "reshape", "split", "sum", "trans", "view", "zeros", "zeros_like", "bfloat16", "cast", "cdiv", "ceil", "constexpr",
    "cos", "device_assert", "dtype", "erf", "exp", "exp2", "float16", "float32", "float64",
    "floor", "fma", "int1", "int8", "int16", "int32", "int64", "load", "log", "log2", "math",
    "max_constancy", "max_contiguous", "maximum", "minimum", "multiple_of", "num_programs",
    "pointer_type", "program_id", "range", "rsqrt", "sigmoid", "sin", "sqrt", "sqrt_rn",
    "static_assert", "static_range", "store", "uint8", "uint16", "uint32", "uint64", "where",
    "to_tensor", "umulhi", "random", "pair_uniform_to_normal", "philox", "philox_impl", "rand",
    "rand4x", "randint", "randint4x", "randn", "randn4x", "uint_to_uniform_float",
    "bitonic_merge", "cat", "flip", "gather", "histogram", "interleave", "map_elementwise",
    "reduce_or", "sort", "swizzle2d", "topk", "xor_sum",
    "float8e4nv", "float8e5", "float8e4b15", "float8e4b8", "float8e5b16",
    "assume", "block_type", "condition", "device_print", "static_print", "tensor",
    "tensor_descriptor", "add", "sub", "mul", "TRITON_MAX_TENSOR_NUMEL",
]

# memory and assembly (block pointers, tensor descriptors, inline assembly)
from tilecc.language.core import (  # noqa: E402
    advance, inline_asm_elementwise, load_tensor_descriptor, make_block_ptr,
    make_tensor_descriptor, store_tensor_descriptor)

__all__ += ["advance", "inline_asm_elementwise", "load_tensor_descriptor", "make_block_ptr",
            "make_tensor_descriptor", "store_tensor_descriptor"]
# math beyond the element-wise core; the vendor libraries (tl.extra.cuda.libdevice...) load
# on first use (`__getattr__` below): their table brings NumPy, which a launch from a warm
# cache does not otherwise import
from tilecc.language.core import PropagateNan, clamp, div_rn, fdiv, softmax  # noqa: E402

__all__ += ["PropagateNan", "clamp", "div_rn", "extra", "fdiv", "softmax"]


# Triton's other names of the language: its arithmetic builtins, types and constants
from tilecc.language import core  # noqa: E402
from tilecc.language.core import (  # noqa: E402
    CONSTEXPR_0, TRITON_MAX_TENSOR_NUMEL, add, const, constexpr_type, mul, sub,
    tensor_descriptor)
from tilecc.language.dtypes import pi32_t  # noqa: E402
from tilecc.language import members  # noqa: E402

core.dot_scaled = dot_scaled  # where Triton's is (it is written in the language here)

members.install(globals())

__all__ += ["TRITON_MAX_TENSOR_NUMEL", "add", "const", "constexpr_type", "mul", "pi32_t",
            "sub", "tensor_descriptor"]


def __getattr__(name: str):
    if name == "extra":
        import importlib

        return importlib.import_module("tilecc.language.extra")
    raise AttributeError(f"module 'tilecc.language' has no attribute {name!r}")
