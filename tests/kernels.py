"""The registry of test kernels: every feature of the one-dimensional kernel language.

Each `Case` is a small, realistic `@tilecc.jit` kernel (Triton-tutorial style) with

* `make_args(n, dtype, rng, masked=True)`: the launch arguments (NumPy arrays, scalars,
  constexpr values, in parameter order) for a problem of size `n`.  `dtype` is one of
  `case.dtypes` (a NumPy dtype, or a tuple of them where a case takes several).  With
  `masked=False` (only for cases with `unmasked=True`, and only for `n` a multiple of
  `case.block`) the kernel is specialized to skip its bounds masks.
* `reference(args)`: the expected final contents of the output arrays, in the order of
  `outputs`, computed with NumPy from copies of the arguments taken before the launch.
* `grid(n)`: the launch grid.
* `signatures`: AOT signatures (Triton's convention) for the native compile checks.

Expected results follow Triton's semantics: integers wrap, `//` and `%` round toward
zero, Python literals do not widen a block's type, `/` of integers or 16-bit floats is
done in float32.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable

import ml_dtypes
import numpy as np

import tilecc
import tilecc.language as tl
from tilecc.cli import load_kernel
from tilecc.language import dtypes as D

BF16 = np.dtype(ml_dtypes.bfloat16)
BOOL = np.dtype(np.bool_)
SINTS = tuple(np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
UINTS = tuple(np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
INTS = SINTS + UINTS
FLOATS = (np.dtype(np.float16), BF16, np.dtype(np.float32), np.dtype(np.float64))
NUMERIC = INTS + FLOATS
ALL = (BOOL,) + NUMERIC
F32 = np.dtype(np.float32)
I32 = np.dtype(np.int32)

# Default tolerances (rtol, atol) by dtype name; exact for integers and bools.
TOLERANCE = {"float16": (2e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2), "float32": (1e-5, 1e-6),
             "float64": (1e-12, 1e-12)}


def is_float(dtype) -> bool:
    return np.dtype(dtype).kind == "f" or np.dtype(dtype) == BF16


def tl_name(dtype) -> str:
    """'fp32', 'i8', 'bf16', ... for a NumPy dtype."""
    return D.from_numpy(dtype).short


@dataclass
class Case:
    name: str
    kernel: Any
    make_args: Callable[..., list]
    reference: Callable[[list], list]
    outputs: tuple[int, ...]
    dtypes: tuple
    signatures: tuple[str, ...]
    grid: Callable[[int], tuple]
    block: int = 64
    unmasked: bool = False  # has a mask-free specialization for n % block == 0
    max_n: int = 300
    tolerance: dict[str, tuple[float, float]] = field(default_factory=dict)

    def tol(self, dtype) -> tuple[float, float]:
        name = np.dtype(dtype).name
        return self.tolerance.get(name, TOLERANCE.get(name, (0.0, 0.0)))

    def __repr__(self) -> str:
        return f"Case({self.name})"


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def unfused(dtype) -> dict:
    """Launch options under which a case computes what its reference does.  The references
    round every operation in the case's type (NumPy); under fp fusion (the default) fp16 /
    bf16 `a * b + c` is one fused multiply-add rounded once, as Triton's compiler makes it
    (passes/contract.py, tested in tests/test_contract.py), which a sum of nearly opposite
    products tells apart from two roundings by more than any tolerance of the type."""
    types = dtype if isinstance(dtype, (tuple, list)) else (dtype,)  # a conversion's pair
    sixteen = any(np.dtype(t).name in ("float16", "bfloat16") for t in types)
    return {"enable_fp_fusion": False} if sixteen else {}


def grid_1d(block: int) -> Callable[[int], tuple]:
    return lambda n: (cdiv(n, block),)


# --- input generation -------------------------------------------------------------------

def rand(rng: np.random.Generator, n: int, dtype, lo: float | None = None,
         hi: float | None = None) -> np.ndarray:
    """`n` random values of `dtype`: the full range for integers unless bounded, and
    [lo, hi) (default [-4, 4)) for floats."""
    dtype = np.dtype(dtype)
    if dtype == BOOL:
        return rng.integers(0, 2, n).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo = info.min if lo is None else max(int(lo), info.min)
        hi = info.max if hi is None else min(int(hi), info.max)
        return rng.integers(lo, hi, n, dtype=dtype, endpoint=True)
    lo = -4.0 if lo is None else lo
    hi = 4.0 if hi is None else hi
    return rng.uniform(lo, hi, n).astype(dtype)


def junk(rng: np.random.Generator, n: int, dtype) -> np.ndarray:
    """An output buffer filled with random values, so that unwritten elements show."""
    return rand(rng, n, dtype)


def trunc_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C's integer division (rounds toward zero), wrapped into a's dtype."""
    return _wrap([_cdiv_int(int(x), int(y)) for x, y in zip(a, b)], a.dtype)


def _cdiv_int(x: int, y: int) -> int:
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


def _wrap(values, dtype) -> np.ndarray:
    """Python ints wrapped into an integer dtype (two's complement)."""
    bits = np.dtype(dtype).itemsize * 8
    out = [(int(v) & ((1 << bits) - 1)) for v in values]
    if np.dtype(dtype).kind == "i":
        out = [v - (1 << bits) if v >= 1 << (bits - 1) else v for v in out]
    return np.array(out, dtype=dtype)


def trunc_rem(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C's integer remainder (sign of the dividend)."""
    return _wrap([int(x) - _cdiv_int(int(x), int(y)) * int(y) for x, y in zip(a, b)], a.dtype)


# ========================================================================================
# 1. Vector add: pointers, an int scalar, constexprs, masked and mask-free variants.
# ========================================================================================

@tilecc.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr,
               EVEN: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    if EVEN:  # every block is full: no masks
        x = tl.load(x_ptr + offsets)
        y = tl.load(y_ptr + offsets)
        tl.store(out_ptr + offsets, x + y)
    else:
        mask = offsets < n_elements
        x = tl.load(x_ptr + offsets, mask=mask)
        y = tl.load(y_ptr + offsets, mask=mask)
        tl.store(out_ptr + offsets, x + y, mask=mask)


def _add_args(n, dt, rng, masked=True):
    return [rand(rng, n, dt), rand(rng, n, dt), junk(rng, n, dt), n, 64, not masked]


ADD = Case("add", add_kernel, _add_args, lambda a: [a[0] + a[1]], (2,), NUMERIC,
           ("*fp32:16,*fp32:16,*fp32:16,i32,1024,False",
            "*fp16:16,*fp16:16,*fp16:16,i32:16,1024,True",
            "*i8,*i8,*i8,i32,512,False"),
           grid_1d(64), unmasked=True)


# ========================================================================================
# 2. Element-wise arithmetic: + - * unary -, literals that keep the block's type.
# ========================================================================================

@tilecc.jit
def arith_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if EVEN:
        mask = None
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    out = -x * y + (x - y) * 3
    tl.store(out_ptr + offs, out, mask=mask)


def _arith_args(n, dt, rng, masked=True):
    return [rand(rng, n, dt), rand(rng, n, dt), junk(rng, n, dt), n, 64, not masked]


def _arith_ref(a):
    x, y = a[0], a[1]
    return [(-x) * y + (x - y) * x.dtype.type(3)]


ARITH = Case("arith", arith_kernel, _arith_args, _arith_ref, (2,), NUMERIC,
             ("*fp32:16,*fp32:16,*fp32:16,i32,1024,False", "*u16,*u16,*u16,i32,256,False",
              "*bf16:16,*bf16:16,*bf16:16,i32,1024,True"),
             grid_1d(64), unmasked=True)


# ========================================================================================
# 3. Integer // and %: round toward zero, as C and Triton do (not Python's floor).
# ========================================================================================

@tilecc.jit
def divmod_kernel(x_ptr, y_ptr, q_ptr, r_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask, other=1)  # masked lanes must not divide by 0
    tl.store(q_ptr + offs, x // y, mask=mask)
    tl.store(r_ptr + offs, x % y, mask=mask)


def _divmod_args(n, dt, rng, masked=True):
    info = np.iinfo(dt)
    x = rand(rng, n, dt, lo=info.min + 1)  # avoid MIN // -1, which overflows
    y = rand(rng, n, dt, lo=-9, hi=9)
    y[y == 0] = 7
    return [x, y, junk(rng, n, dt), junk(rng, n, dt), n, 64]


DIVMOD = Case("divmod", divmod_kernel, _divmod_args,
              lambda a: [trunc_div(a[0], a[1]), trunc_rem(a[0], a[1])], (2, 3), INTS,
              ("*i32:16,*i32:16,*i32:16,*i32:16,i32,1024", "*u8,*u8,*u8,*u8,i32,256",
               "*i64,*i64,*i64,*i64,i64,512"),
              grid_1d(64))


@tilecc.jit
def fmod_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask, other=1.0)
    # float % is C's fmod: the result has the sign of x
    tl.store(out_ptr + offs, x % y, mask=mask)


def _fmod_ref(a):
    x, y = a[0], a[1]
    if x.dtype in (np.float16, BF16):  # % of 16-bit floats is computed in float32
        return [np.fmod(x.astype(F32), y.astype(F32)).astype(x.dtype)]
    return [np.fmod(x, y)]


def _fmod_args(n, dt, rng, masked=True):
    y = rand(rng, n, dt, 0.5, 3.0) * np.where(rng.random(n) < 0.5, -1, 1).astype(dt)
    return [rand(rng, n, dt, -20, 20), y, junk(rng, n, dt), n, 64]


FMOD = Case("fmod", fmod_kernel, _fmod_args, _fmod_ref, (2,), FLOATS,
            ("*fp32:16,*fp32:16,*fp32:16,i32,1024", "*fp16,*fp16,*fp16,i32,256"),
            grid_1d(64))


# ========================================================================================
# 4. Bitwise operators and shifts.
# ========================================================================================

@tilecc.jit
def bitwise_kernel(x_ptr, y_ptr, s_ptr, mix_ptr, shift_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    s = tl.load(s_ptr + offs, mask=mask, other=0)  # shift amounts, 0 <= s < bits
    tl.store(mix_ptr + offs, (x & y) | (~x ^ y), mask=mask)
    tl.store(shift_ptr + offs, (x << s) ^ (y >> s), mask=mask)


def _bitwise_args(n, dt, rng, masked=True):
    bits = np.dtype(dt).itemsize * 8
    return [rand(rng, n, dt), rand(rng, n, dt), rand(rng, n, dt, 0, bits - 1),
            junk(rng, n, dt), junk(rng, n, dt), n, 64]


def _bitwise_ref(a):
    x, y, s = a[0], a[1], a[2]
    return [(x & y) | (~x ^ y), np.left_shift(x, s) ^ np.right_shift(y, s)]


BITWISE = Case("bitwise", bitwise_kernel, _bitwise_args, _bitwise_ref, (3, 4), INTS,
               ("*i32:16,*i32:16,*i32:16,*i32:16,*i32:16,i32,1024",
                "*u8,*u8,*u8,*u8,*u8,i32,256", "*i16,*i16,*i16,*i16,*i16,i32,512"),
               grid_1d(64))


# ========================================================================================
# 5. Comparisons, tl.where and int1 (bool) results.
# ========================================================================================

@tilecc.jit
def compare_kernel(x_ptr, y_ptr, code_ptr, min_ptr, eq_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    # one bit per comparison
    code = (x < y).to(tl.int32) + (x <= y) * 2 + (x > y) * 4 + (x >= y) * 8 \
        + (x == y) * 16 + (x != y) * 32
    tl.store(code_ptr + offs, code, mask=mask)
    tl.store(min_ptr + offs, tl.where(x < y, x, y), mask=mask)
    tl.store(eq_ptr + offs, x == y, mask=mask)


def _compare_args(n, dt, rng, masked=True):
    x = rand(rng, n, dt, -3, 3)
    y = np.where(rng.random(n) < 0.3, x, rand(rng, n, dt, -3, 3)).astype(dt)  # some ties
    return [x, y, junk(rng, n, I32), junk(rng, n, dt), junk(rng, n, BOOL), n, 64]


def _compare_ref(a):
    x, y = a[0], a[1]
    code = sum(f(x, y).astype(np.int32) << i for i, f in enumerate(
        (np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal)))
    return [code.astype(np.int32), np.where(x < y, x, y), x == y]


COMPARE = Case("compare", compare_kernel, _compare_args, _compare_ref, (2, 3, 4), ALL,
               ("*fp32:16,*fp32:16,*i32:16,*fp32:16,*i1,i32,1024",
                "*u64,*u64,*i32,*u64,*i1,i32,256", "*i1,*i1,*i32,*i1,*i1,i32,128"),
               grid_1d(64))


# ========================================================================================
# 6. tl.minimum / tl.maximum / tl.abs (a NaN operand of min/max yields the other).
# ========================================================================================

@tilecc.jit
def minmax_kernel(x_ptr, y_ptr, lo_ptr, hi_ptr, abs_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(lo_ptr + offs, tl.minimum(x, y), mask=mask)
    tl.store(hi_ptr + offs, tl.maximum(x, y), mask=mask)
    tl.store(abs_ptr + offs, tl.abs(x), mask=mask)


def _minmax_args(n, dt, rng, masked=True):
    x, y = rand(rng, n, dt), rand(rng, n, dt)
    if np.dtype(dt).kind == "f":
        x[rng.random(n) < 0.1] = np.nan
    return [x, y, junk(rng, n, dt), junk(rng, n, dt), junk(rng, n, dt), n, 64]


MINMAX = Case("minmax", minmax_kernel, _minmax_args,
              lambda a: [np.fmin(a[0], a[1]), np.fmax(a[0], a[1]), np.abs(a[0])], (2, 3, 4),
              NUMERIC, ("*fp32:16,*fp32:16,*fp32:16,*fp32:16,*fp32:16,i32,1024",
                        "*i8,*i8,*i8,*i8,*i8,i32,256", "*u32,*u32,*u32,*u32,*u32,i32,512"),
              grid_1d(64))


# ========================================================================================
# 7. Math functions: one kernel, the function picked by a constexpr (if/elif folds).
# ========================================================================================

@tilecc.jit
def unary_math_kernel(x_ptr, y_ptr, n, FN: tl.constexpr, BLOCK: tl.constexpr,
                      EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if EVEN:
        x = tl.load(x_ptr + offs)
    else:
        x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    if FN == "exp":
        y = tl.exp(x)
    elif FN == "exp2":
        y = tl.exp2(x)
    elif FN == "log":
        y = tl.log(x)
    elif FN == "log2":
        y = tl.log2(x)
    elif FN == "sqrt":
        y = tl.sqrt(x)
    elif FN == "sqrt_rn":
        y = tl.sqrt_rn(x)
    elif FN == "rsqrt":
        y = tl.rsqrt(x)
    elif FN == "sin":
        y = tl.sin(x)
    elif FN == "cos":
        y = tl.cos(x)
    elif FN == "sigmoid":
        y = tl.sigmoid(x)
    elif FN == "floor":
        y = tl.floor(x)
    elif FN == "ceil":
        y = tl.ceil(x)
    elif FN == "erf":
        y = tl.erf(x)
    else:
        y = tl.abs(x)
    if EVEN:
        tl.store(y_ptr + offs, y)
    else:
        tl.store(y_ptr + offs, y, mask=mask)


def _erf(x):
    import math

    return np.vectorize(math.erf, otypes=[np.float64])(x)


MATH_FUNCTIONS = {
    "exp": (np.exp, -4, 4), "exp2": (np.exp2, -4, 4), "log": (np.log, 0.01, 10),
    "log2": (np.log2, 0.01, 10), "sqrt": (np.sqrt, 0, 10), "sqrt_rn": (np.sqrt, 0, 10),
    "rsqrt": (lambda x: 1 / np.sqrt(x), 0.05, 10), "sin": (np.sin, -6, 6),
    "cos": (np.cos, -6, 6), "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), -8, 8),
    "floor": (np.floor, -10, 10), "ceil": (np.ceil, -10, 10), "erf": (_erf, -3, 3),
    "abs": (np.abs, -5, 5),
}


def _math_case(fn: str) -> Case:
    ref, lo, hi = MATH_FUNCTIONS[fn]

    def make_args(n, dt, rng, masked=True):
        return [rand(rng, n, dt, lo, hi), junk(rng, n, dt), n, fn, 64, not masked]

    def reference(a):
        x = a[0]
        return [ref(x.astype(np.float64)).astype(x.dtype)]

    return Case(f"math_{fn}", unary_math_kernel, make_args, reference, (1,), FLOATS,
                (f"*fp32:16,*fp32:16,i32,'{fn}',1024,False",
                 f"*fp16:16,*fp16:16,i32:16,'{fn}',1024,True"),
                grid_1d(64), unmasked=True,
                tolerance={"float16": (3e-3, 2e-3), "float32": (2e-6, 1e-6),
                           "float64": (1e-12, 1e-14)})


MATH = [_math_case(fn) for fn in MATH_FUNCTIONS]


# ========================================================================================
# 8. tl.math.* spellings and tl.fma: GELU (erf form) and a fused normalization.
# ========================================================================================

@tilecc.jit
def gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    # exact GELU: x * Phi(x)
    y = 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))
    tl.store(out_ptr + offs, y, mask=mask)


def _gelu_ref(a):
    x = a[0].astype(np.float32).astype(np.float64)
    return [(0.5 * x * (1 + _erf(x / np.sqrt(2)))).astype(a[1].dtype)]


GELU = Case("gelu_math_spelling", gelu_kernel,
            lambda n, dt, rng, masked=True: [rand(rng, n, dt), junk(rng, n, dt), n, 64],
            _gelu_ref, (1,), FLOATS,
            ("*fp32:16,*fp32:16,i32,1024", "*bf16:16,*bf16:16,i32,1024"), grid_1d(64),
            # computed in float32 whatever the storage type
            tolerance={"float32": (1e-5, 1e-6), "float64": (1e-5, 1e-6)})


@tilecc.jit
def scale_shift_kernel(x_ptr, w_ptr, b_ptr, out_ptr, mean, var, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    w = tl.load(w_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    inv_std = tl.math.rsqrt(var + 1e-5)
    y = tl.fma((x - mean) * inv_std, w, b)  # (x - mean) / std * w + b, rounded once
    z = tl.math.fma(y, 2.0, tl.math.sqrt(tl.math.abs(b)))
    tl.store(out_ptr + offs, z, mask=mask)


def _scale_shift_args(n, dt, rng, masked=True):
    return [rand(rng, n, dt), rand(rng, n, dt), rand(rng, n, dt), junk(rng, n, dt),
            float(rng.uniform(-1, 1)), float(rng.uniform(0.5, 2)), n, 64]


def _scale_shift_ref(a):
    x, w, b, _, mean, var = a[:6]
    ct = np.float64 if x.dtype == np.float64 else np.float32  # fp32 scalars widen 16-bit x
    inv_std = 1 / np.sqrt(np.float32(var) + np.float32(1e-5))
    h = ((x.astype(ct) - np.float32(mean)) * inv_std).astype(ct)
    y = (h.astype(np.float64) * w.astype(ct) + b.astype(ct)).astype(ct)
    z = y * 2 + np.sqrt(np.abs(b.astype(np.float32 if ct == np.float32 else ct)))
    return [z.astype(x.dtype)]


SCALE_SHIFT = Case("fma_scale_shift", scale_shift_kernel, _scale_shift_args, _scale_shift_ref,
                   (3,), FLOATS, ("*fp32:16,*fp32:16,*fp32:16,*fp32:16,fp32,fp32,i32,1024",
                                  "*fp64,*fp64,*fp64,*fp64,fp32,fp32,i32,256"),
                   grid_1d(64), tolerance={"float32": (1e-5, 1e-5), "float64": (1e-6, 1e-6)})


# ========================================================================================
# 9. Triton's promotion rules, observable through overflow and rounding.
# ========================================================================================

@tilecc.jit
def literal_promotion_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    # A Python float does not widen x: for fp16, x * 1000.0 * 1000.0 overflows to inf.
    big = x * 1000.0 * 1000.0
    # ... while `/` on 16-bit floats is done in float32.
    tl.store(out_ptr + offs, big / 1000.0 / 1000.0, mask=mask)


def _literal_promotion_ref(a):
    x = a[0]
    k = x.dtype.type(1000.0)
    big = x * k * k
    div_t = np.float64 if x.dtype == np.float64 else np.float32
    return [(big.astype(div_t) / div_t(1000.0) / div_t(1000.0)).astype(x.dtype)]


LITERAL_PROMOTION = Case(
    "literal_float_keeps_type", literal_promotion_kernel,
    lambda n, dt, rng, masked=True: [rand(rng, n, dt, -0.2, 0.2), junk(rng, n, dt), n, 64],
    _literal_promotion_ref, (1,), FLOATS,
    ("*fp16:16,*fp16:16,i32,1024", "*fp32:16,*fp32:16,i32,1024"), grid_1d(64))


@tilecc.jit
def int_literal_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    # `x + 1` keeps x's type: for int8, 127 + 1 wraps to -128 before the division
    tl.store(out_ptr + offs, (x + 1) // 2, mask=mask)


def _int_literal_ref(a):
    x = a[0]
    return [trunc_div(x + x.dtype.type(1), np.full_like(x, 2))]


def _int_literal_args(n, dt, rng, masked=True):
    x = rand(rng, n, dt)
    x[rng.random(n) < 0.2] = np.iinfo(dt).max  # exercise the wrap-around
    return [x, junk(rng, n, dt), n, 64]


INT_LITERAL = Case("literal_int_keeps_type", int_literal_kernel, _int_literal_args,
                   _int_literal_ref, (1,), INTS,
                   ("*i8,*i8,i32,1024", "*u32:16,*u32:16,i32,1024"), grid_1d(64))


@tilecc.jit
def ratio_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask, other=1)
    # int / int and fp16 / fp16 both divide in float32 (out is float32)
    tl.store(out_ptr + offs, x / y, mask=mask)


def _ratio_args(n, dt, rng, masked=True):
    y = rand(rng, n, dt, 1, 50)
    return [rand(rng, n, dt, -1000, 1000), y, junk(rng, n, F32), n, 64]


def _ratio_ref(a):
    x, y = a[0], a[1]
    if x.dtype == np.float64:
        return [(x / y).astype(np.float32)]
    return [x.astype(np.float32) / y.astype(np.float32)]


RATIO = Case("true_div_promotes", ratio_kernel, _ratio_args, _ratio_ref, (2,), NUMERIC,
             ("*i32:16,*i32:16,*fp32:16,i32,1024", "*fp16:16,*fp16:16,*fp32:16,i32,1024"),
             # float32 `/` is div.full.f32 on NVIDIA, as in Triton: within 2 ulp
             grid_1d(64), tolerance={"float16": (0, 0), "bfloat16": (0, 0),
                                     "float32": (2.5e-7, 0), "float64": (0, 0)})


@tilecc.jit
def axpby_kernel(x_ptr, y_ptr, out_ptr, alpha, beta, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    # alpha and beta are fp32 scalar arguments: they do take part in promotion
    tl.store(out_ptr + offs, alpha * x + beta * y, mask=mask)


def _axpby_ref(a):
    x, y, _, alpha, beta = a[:5]
    ct = np.float64 if x.dtype == np.float64 else np.float32
    return [(ct(np.float32(alpha)) * x.astype(ct) + ct(np.float32(beta)) * y.astype(ct))
            .astype(x.dtype)]


AXPBY = Case("axpby_float_scalars", axpby_kernel,
             lambda n, dt, rng, masked=True: [rand(rng, n, dt), rand(rng, n, dt),
                                              junk(rng, n, dt), float(rng.uniform(-2, 2)),
                                              float(rng.uniform(-2, 2)), n, 64],
             _axpby_ref, (2,), FLOATS,
             ("*fp32:16,*fp32:16,*fp32:16,fp32,fp32,i32,1024",
              "*fp16,*fp16,*fp16,fp32,fp32,i32,512"), grid_1d(64))


# ========================================================================================
# 10. Conversions: x.to(dtype) between every pair, tl.cast, bitcasts.
# ========================================================================================

@tilecc.jit
def convert_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x.to(y_ptr.dtype.element_ty), mask=mask)


def _convert_args(n, dts, rng, masked=True):
    src, dst = dts
    if is_float(src) and dst.kind in "iu":
        # out of range on purpose: float -> int truncates and saturates on the GPUs, and
        # NaN gives 0
        x = rand(rng, n, src, -1000, 1000)
        special = np.array([np.nan, np.inf, -np.inf])[:n].astype(src)
        x[rng.choice(n, len(special), replace=False)] = special
    elif src.kind == "f" or dst.kind == "f":
        # float -> int is undefined out of range: stay inside both types
        lo = 0 if dst.kind in "ub" or src.kind in "ub" else -100
        x = rand(rng, n, src, lo, 100)
        if src.kind == "f" and dst.kind in "iu":
            x = x.astype(np.float64).clip(lo, 99).astype(src)
    else:
        x = rand(rng, n, src)
    return [x, junk(rng, n, dst), n, 64]


def _convert_ref(a):
    x, y = a[0], a[1]
    if y.dtype == BOOL:
        return [x != 0]
    if (x.dtype.kind == "f" or x.dtype == BF16) and y.dtype.kind in "iu":
        # GPUs truncate and saturate (NaN → 0); C leaves out-of-range values undefined
        info = np.iinfo(y.dtype)
        f = np.trunc(np.nan_to_num(x.astype(np.float64), nan=0.0))
        return [np.array([info.max if v >= info.max else info.min if v <= info.min else int(v)
                          for v in f], dtype=y.dtype)]
    if x.dtype == BF16 or y.dtype == BF16:
        return [x.astype(np.float32).astype(y.dtype)]
    return [x.astype(y.dtype)]


CONVERT = Case("convert", convert_kernel, _convert_args, _convert_ref, (1,),
               tuple((s, d) for s in ALL for d in ALL),
               ("*fp32:16,*fp16:16,i32,1024", "*bf16,*i64,i32,512", "*u8,*fp64,i32,256",
                "*i1,*fp32,i32,256", "*fp64,*u16,i32,256"),
               grid_1d(64))


@tilecc.jit
def abs_by_bits_kernel(x_ptr, out_ptr, n, BITS: tl.constexpr, MAGNITUDE: tl.constexpr,
                       BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    # clear the sign bit through an integer view of the float
    bits = x.to(BITS, bitcast=True) & MAGNITUDE
    y = tl.cast(bits, x.dtype, bitcast=True)
    tl.store(out_ptr + offs, tl.cast(y, tl.float32), mask=mask)


_BITS = {"float16": (tl.int16, 0x7FFF), "bfloat16": (tl.int16, 0x7FFF),
         "float32": (tl.int32, 0x7FFFFFFF), "float64": (tl.int64, 0x7FFFFFFFFFFFFFFF)}

BITCAST = Case(
    "bitcast", abs_by_bits_kernel,
    lambda n, dt, rng, masked=True: [rand(rng, n, dt), junk(rng, n, F32), n,
                                     *_BITS[np.dtype(dt).name], 64],
    lambda a: [np.abs(a[0]).astype(np.float32)], (1,), FLOATS,
    ("*fp32:16,*fp32:16,i32,i32,2147483647,1024", "*fp16,*fp32,i32,i16,32767,512",
     "*fp64,*fp32,i32,i64,9223372036854775807,256"), grid_1d(64),
    tolerance={"float64": (1e-7, 0)})


# ========================================================================================
# 11. 2D and 3D grids: tl.program_id(0..2), tl.num_programs, scalar loads and stores.
# ========================================================================================

@tilecc.jit
def batched_bias_kernel(x_ptr, bias_ptr, out_ptr, ids_ptr, M, BLOCK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_b = tl.program_id(1)
    pid_h = tl.program_id(2)
    row = pid_h * tl.num_programs(1) + pid_b  # the (h, b) row this program works on
    offs = pid_m * BLOCK + tl.arange(0, BLOCK)
    mask = offs < M
    x = tl.load(x_ptr + row * M + offs, mask=mask)
    bias = tl.load(bias_ptr + row)  # one scalar per row
    tl.store(out_ptr + row * M + offs, x + bias, mask=mask)
    # record the program's geometry: 6 ints per program
    rec = ids_ptr + (row * tl.num_programs(0) + pid_m) * 6
    tl.store(rec, pid_m)
    tl.store(rec + 1, pid_b)
    tl.store(rec + 2, pid_h)
    tl.store(rec + 3, tl.num_programs(0))
    tl.store(rec + 4, tl.num_programs(1))
    tl.store(rec + 5, tl.num_programs(2))


def _batched_case(name: str, B: int, H: int, three_d: bool) -> Case:
    def make_args(n, dt, rng, masked=True):
        rows = B * H
        return [rand(rng, rows * n, dt), rand(rng, rows, dt), junk(rng, rows * n, dt),
                junk(rng, rows * cdiv(n, 64) * 6, I32), n, 64]

    def reference(a):
        x, bias, _, ids, M = a[:5]
        gm = cdiv(M, 64)
        out = (x.reshape(B * H, M) + bias[:, None]).reshape(-1)
        rec = np.array([[m, b, h, gm, B, H] for h in range(H) for b in range(B)
                        for m in range(gm)], dtype=np.int32)
        return [out, rec.reshape(-1)]

    grid = (lambda n: (cdiv(n, 64), B, H)) if three_d else (lambda n: (cdiv(n, 64), B))
    return Case(name, batched_bias_kernel, make_args, reference, (2, 3),
                (F32, np.dtype(np.float16), np.dtype(np.int32), np.dtype(np.uint8)),
                ("*fp32:16,*fp32,*fp32:16,*i32,i32,1024", "*i32,*i32,*i32,*i32,i32:16,256"),
                grid, max_n=200)


GRID_2D = _batched_case("grid_2d", 3, 1, three_d=False)
GRID_3D = _batched_case("grid_3d", 2, 3, three_d=True)


# ========================================================================================
# 12. Loops: run-time `for` with loop-carried values, a negative step, tl.range,
#     tl.static_range, `while`, a persistent (grid-stride) kernel, tl.cdiv, min/max.
# ========================================================================================

@tilecc.jit
def col_sum_kernel(x_ptr, out_ptr, rows_ptr, n_rows, n_cols, ACC: tl.constexpr,
                   BLOCK: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    acc = tl.load(x_ptr + cols, mask=mask, other=0).to(ACC)
    rows_seen = 1
    for row in range(1, n_rows):
        x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0)
        acc += x.to(ACC)
        rows_seen += 1
    tl.store(out_ptr + cols, acc, mask=mask)
    tl.store(rows_ptr + tl.program_id(0), rows_seen)


_ACC = {"i": tl.int64, "u": tl.uint64, "f": tl.float32}


def _col_sum_args(n, dt, rng, masked=True):
    rows = int(rng.integers(1, 6))
    return [rand(rng, rows * n, dt, -100, 100), junk(rng, n, dt), junk(rng, cdiv(n, 64), I32),
            rows, n, _ACC["f" if is_float(dt) else np.dtype(dt).kind], 64]


def _col_sum_ref(a):
    x, out, _, rows, n = a[:5]
    if is_float(x.dtype):  # accumulated in float32, row by row
        acc = x.reshape(rows, n).astype(np.float32)
        total = acc[0].copy()
        for r in range(1, rows):
            total = total + acc[r]
    else:
        total = x.reshape(rows, n).sum(axis=0, dtype=np.int64 if x.dtype.kind == "i"
                                       else np.uint64)
    return [total.astype(out.dtype), np.full(cdiv(n, 64), rows, np.int32)]


COL_SUM = Case("for_loop_carried", col_sum_kernel, _col_sum_args, _col_sum_ref, (1, 2),
               (F32, np.dtype(np.float16), BF16, np.dtype(np.int8), np.dtype(np.int32),
                np.dtype(np.uint16)),
               ("*fp32:16,*fp32:16,*i32,i32,i32,fp32,1024", "*i8,*i8,*i32,i32,i32:16,i64,512"),
               grid_1d(64), max_n=200)


@tilecc.jit
def horner_kernel(x_ptr, coef_ptr, out_ptr, n, degree, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    # p(x) = c[0] + c[1] x + ... + c[degree] x**degree, highest coefficient first
    acc = x * 0.0 + tl.load(coef_ptr + degree)
    for i in tl.range(degree - 1, -1, -1):
        acc = acc * x + tl.load(coef_ptr + i)
    tl.store(out_ptr + offs, acc, mask=mask)


def _horner_args(n, dt, rng, masked=True):
    degree = int(rng.integers(0, 6))
    return [rand(rng, n, dt, -1.5, 1.5), rand(rng, degree + 1, dt, -2, 2), junk(rng, n, dt),
            n, degree, 64]


def _horner_ref(a, static=False):
    x, c = a[0], a[1]
    acc = np.full_like(x, c[-1])
    for coef in c[-2::-1]:
        acc = acc * x + coef  # in x's type, rounded after every operation
    return [acc]


HORNER = Case("for_negative_step", horner_kernel, _horner_args, _horner_ref, (2,), FLOATS,
              ("*fp32:16,*fp32,*fp32:16,i32,i32,1024", "*fp64,*fp64,*fp64,i32,i32,256"),
              grid_1d(64))


@tilecc.jit
def horner_static_kernel(x_ptr, coef_ptr, out_ptr, n, DEGREE: tl.constexpr,
                         BLOCK: tl.constexpr):
    tl.static_assert(DEGREE >= 1, "need at least a linear polynomial")
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    acc = x * 0.0 + tl.load(coef_ptr + DEGREE)
    for i in tl.static_range(DEGREE - 1, -1, -1):  # unrolled: i is a constexpr
        acc = acc * x + tl.load(coef_ptr + i)
    tl.store(out_ptr + offs, acc, mask=mask)


def _horner_static_args(n, dt, rng, masked=True):
    degree = int(rng.integers(1, 5))
    return [rand(rng, n, dt, -1.5, 1.5), rand(rng, degree + 1, dt, -2, 2), junk(rng, n, dt),
            n, degree, 64]


HORNER_STATIC = Case("static_range", horner_static_kernel, _horner_static_args, _horner_ref,
                     (2,), FLOATS,
                     ("*fp32:16,*fp32,*fp32:16,i32,3,1024", "*fp16,*fp16,*fp16,i32,4,512"),
                     grid_1d(64))


@tilecc.jit
def persistent_scale_kernel(x_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    num_blocks = tl.cdiv(n, BLOCK)
    # each program walks the blocks pid, pid + P, pid + 2P, ...
    for block in range(pid, num_blocks, tl.num_programs(0)):
        offs = block * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, x * scale, mask=mask)


PERSISTENT = Case(
    "persistent_grid_stride", persistent_scale_kernel,
    lambda n, dt, rng, masked=True: [rand(rng, n, dt), junk(rng, n, dt), n,
                                     float(rng.uniform(-2, 2)), 64],
    lambda a: [(a[0].astype(np.float64 if a[0].dtype == np.float64 else np.float32)
                * np.float32(a[3])).astype(a[0].dtype)],
    (1,), FLOATS, ("*fp32:16,*fp32:16,i32,fp32,1024", "*bf16,*bf16,i32,fp32,256"),
    lambda n: (min(3, cdiv(n, 64)),), max_n=600)


@tilecc.jit
def chunked_copy_kernel(x_ptr, out_ptr, count_ptr, n, CHUNK: tl.constexpr,
                        BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    start = pid * CHUNK
    end = min(start + CHUNK, n)  # the last chunk may be short
    for off in range(start, end, BLOCK):
        offs = off + tl.arange(0, BLOCK)
        mask = offs < end
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)
    tl.store(count_ptr + pid, max(end - start, 0))


CHUNKED = Case(
    "python_min_max", chunked_copy_kernel,
    lambda n, dt, rng, masked=True: [rand(rng, n, dt), junk(rng, n, dt),
                                     junk(rng, cdiv(n, 160) + 1, I32), n, 160, 64],
    lambda a: [a[0].copy(), np.array([max(min(p * 160 + 160, a[3]) - p * 160, 0)
                                      for p in range(cdiv(a[3], 160) + 1)], np.int32)],
    (1, 2), (F32, np.dtype(np.int16)),
    ("*fp32:16,*fp32:16,*i32,i32,4096,1024", "*i16,*i16,*i32,i32,640,128"),
    # one program more than needed: it finds an empty chunk
    lambda n: (cdiv(n, 160) + 1,), max_n=600)


@tilecc.jit
def while_copy_kernel(x_ptr, out_ptr, iters_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    start = pid * BLOCK
    step = tl.num_programs(0) * BLOCK
    iters = 0
    while start < n:
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, x * 2, mask=mask)
        start += step
        iters += 1
    tl.store(iters_ptr + pid, iters)


def _while_ref(a):
    x, _, iters, n = a[:4]
    programs = iters.size
    return [x * x.dtype.type(2),
            np.array([len(range(p * 64, n, programs * 64)) for p in range(programs)], np.int32)]


WHILE = Case("while_loop", while_copy_kernel,
             lambda n, dt, rng, masked=True: [rand(rng, n, dt), junk(rng, n, dt),
                                              junk(rng, min(3, cdiv(n, 64)), I32), n, 64],
             _while_ref, (1, 2), (F32, np.dtype(np.int32), np.dtype(np.float16)),
             ("*fp32:16,*fp32:16,*i32,i32,1024", "*i32,*i32,*i32,i32,256"),
             lambda n: (min(3, cdiv(n, 64)),), max_n=600)


# ========================================================================================
# 13. Run-time if/elif/else on scalars; `and` / `or` / `not`; a conditional expression.
# ========================================================================================

@tilecc.jit
def select_op_kernel(x_ptr, out_ptr, n, mode, flag, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if mode == 0:
        y = x + 1
    elif mode == 1:
        y = x * 2
    else:
        y = -x
    if (pid % 2 == 0 and n > 2 * BLOCK) or not flag:
        y = y + 100
    sign = 1 if pid > 0 else -1
    tl.store(out_ptr + offs, y * sign, mask=mask)


def _select_args(n, dt, rng, masked=True):
    return [rand(rng, n, dt, -50, 50), junk(rng, n, dt), n, int(rng.integers(0, 3)),
            bool(rng.integers(0, 2)), 64]


def _select_ref(a):
    x, _, n, mode, flag = a[:5]
    t = x.dtype.type
    y = x + t(1) if mode == 0 else (x * t(2) if mode == 1 else -x)
    out = y.copy()
    for pid in range(cdiv(n, 64)):
        sl = slice(pid * 64, pid * 64 + 64)
        if (pid % 2 == 0 and n > 128) or not flag:
            out[sl] = out[sl] + t(100)
        if pid == 0:
            out[sl] = -out[sl]
    return [out]


SELECT = Case("if_elif_else", select_op_kernel, _select_args, _select_ref, (1,),
              (F32, np.dtype(np.float16), np.dtype(np.int8), np.dtype(np.int32),
               np.dtype(np.int64)),
              ("*fp32:16,*fp32:16,i32,i32,i1,1024", "*i8,*i8,i32,i32,i1,256"), grid_1d(64))


# ========================================================================================
# 14. @jit helpers (one returning a tuple), asserts, `other`, int1 loads, hints, int64.
# ========================================================================================

@tilecc.jit
def block_offsets(pid, n, BLOCK: tl.constexpr):
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    return offs, offs < n


@tilecc.jit
def silu(x):
    return x * tl.sigmoid(x)


@tilecc.jit
def silu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs, mask = block_offsets(tl.program_id(0), n, BLOCK)
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    tl.store(out_ptr + offs, silu(x), mask=mask)


def _silu_ref(a):
    x = a[0].astype(np.float32)
    return [(x / (1 + np.exp(-x))).astype(a[1].dtype)]


SILU = Case("jit_helpers", silu_kernel,
            lambda n, dt, rng, masked=True: [rand(rng, n, dt), junk(rng, n, dt), n, 64],
            _silu_ref, (1,), FLOATS,
            ("*fp32:16,*fp32:16,i32,1024", "*fp16:16,*fp16:16,i32,1024"), grid_1d(64),
            # computed in float32 whatever the storage type
            tolerance={"float32": (1e-5, 1e-6), "float64": (1e-5, 1e-6)})


@tilecc.jit
def checked_sqrt_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK % 32 == 0, "BLOCK must be a multiple of the warp size")
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    tl.device_assert(x >= 0, "sqrt of a negative number")
    assert n > 0, "empty input"
    tl.store(out_ptr + offs, tl.sqrt(x), mask=mask)


ASSERTS = Case("asserts", checked_sqrt_kernel,
               lambda n, dt, rng, masked=True: [rand(rng, n, dt, 0, 100), junk(rng, n, dt),
                                                n, 64],
               lambda a: [np.sqrt(a[0].astype(np.float64)).astype(a[0].dtype)], (1,), FLOATS,
               ("*fp32:16,*fp32:16,i32,1024", "*fp64,*fp64,i32,256"), grid_1d(64))


@tilecc.jit
def pad_kernel(x_ptr, out_ptr, n_in, n_out, value, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    # lanes past the input read `value`; all of the output is written
    x = tl.load(x_ptr + offs, mask=offs < n_in, other=value)
    tl.store(out_ptr + offs, x, mask=offs < n_out)


def _pad_args(n, dt, rng, masked=True):
    n_in = int(rng.integers(0, n + 1))
    value = float(rng.uniform(-5, 5)) if np.dtype(dt).kind == "f" else \
        int(rng.integers(0, 100))
    return [rand(rng, max(n_in, 1), dt)[:n_in].copy(), junk(rng, n, dt), n_in, n, value, 64]


def _pad_ref(a):
    x, out, n_in, n, value = a[:5]
    fill = np.array(value, dtype=np.float32 if isinstance(value, float) else np.int32)
    return [np.concatenate([x, np.full(n - n_in, fill).astype(out.dtype)])]


PAD = Case("load_other", pad_kernel, _pad_args, _pad_ref, (1,), NUMERIC,
           ("*fp32:16,*fp32:16,i32,i32,fp32,1024", "*u8,*u8,i32,i32,i32,256",
            "*bf16,*bf16,i32,i32,fp32,512"), grid_1d(64))


@tilecc.jit
def pad_max_kernel(x_ptr, out_ptr, n_in, n_out, floor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if x_ptr.dtype.element_ty.is_floating():
        lowest = -float("inf")  # padding never wins the maximum
    else:
        lowest = 0
    x = tl.load(x_ptr + offs, mask=offs < n_in, other=lowest)
    tl.store(out_ptr + offs, tl.maximum(x, floor), mask=offs < n_out)


def _pad_max_args(n, dt, rng, masked=True):
    n_in = int(rng.integers(0, n + 1))
    floor = float(rng.uniform(-2, 2)) if is_float(dt) else int(rng.integers(0, 50))
    return [rand(rng, max(n_in, 1), dt)[:n_in].copy(), junk(rng, n, dt), n_in, n, floor, 64]


def _pad_max_ref(a):
    x, out, n_in, n, floor = a[:5]
    if is_float(x.dtype):
        ct = np.float64 if x.dtype == np.float64 else np.float32
        padded = np.concatenate([x.astype(ct), np.full(n - n_in, -np.inf, ct)])
        return [np.maximum(padded, ct(np.float32(floor))).astype(out.dtype)]
    padded = np.concatenate([x, np.zeros(n - n_in, x.dtype)]).astype(object)
    return [np.array([max(int(v), floor) for v in padded], dtype=out.dtype)]


PAD_MAX = Case("dtype_methods_float_inf", pad_max_kernel, _pad_max_args, _pad_max_ref, (1,),
               NUMERIC, ("*fp32:16,*fp32:16,i32,i32,fp32,1024", "*i8,*i8,i32,i32,i32,256",
                         "*fp16,*fp16,i32,i32,fp32,512"), grid_1d(64))


@tilecc.jit
def masked_fill_kernel(x_ptr, keep_ptr, out_ptr, n, value, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    keep = tl.load(keep_ptr + offs, mask=mask, other=0)  # a block of int1
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.where(keep & mask, x, value), mask=mask)


def _masked_fill_args(n, dt, rng, masked=True):
    value = float(rng.uniform(-5, 5)) if np.dtype(dt).kind == "f" else \
        int(rng.integers(0, 100))
    return [rand(rng, n, dt), rand(rng, n, BOOL), junk(rng, n, dt), n, value, 64]


def _masked_fill_ref(a):
    x, keep, out, _, value = a[:5]
    fill = np.array(value, dtype=np.float32 if isinstance(value, float) else np.int32)
    return [np.where(keep, x, fill.astype(x.dtype) if x.dtype.kind != "f" else fill)
            .astype(out.dtype)]


MASKED_FILL = Case("int1_loads", masked_fill_kernel, _masked_fill_args, _masked_fill_ref, (2,),
                   NUMERIC, ("*fp32:16,*i1,*fp32:16,i32,fp32,1024", "*i16,*i1,*i16,i32,i32,256"),
                   grid_1d(64))


@tilecc.jit
def strided_copy_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    stride = tl.multiple_of(stride, 16)  # rows start 16-element aligned
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.max_contiguous(tl.multiple_of(cols, BLOCK), BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask)
    tl.store(out_ptr + row * n_cols + cols, x, mask=mask)


def _strided_args(n, dt, rng, masked=True):
    rows = 3
    stride = cdiv(n, 16) * 16 + 16 * int(rng.integers(0, 2))
    return [rand(rng, rows * stride, dt), junk(rng, rows * n, dt), n, np.int64(stride), 64]


STRIDED = Case("hints_int64_scalar", strided_copy_kernel, _strided_args,
               lambda a: [a[0].reshape(3, -1)[:, :a[2]].reshape(-1)], (1,),
               (F32, np.dtype(np.float16), np.dtype(np.uint8), np.dtype(np.int64)),
               ("*fp32:16,*fp32:16,i32,i64:16,1024", "*u8:16,*u8:16,i32:16,i64:16,512"),
               lambda n: (3, cdiv(n, 64)))


# ========================================================================================
# 15. Kernels written against `triton.language` (loaded as the CLI loads them).
# ========================================================================================

_TRITON_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "triton_kernels.py")
leaky_relu_kernel = load_kernel(f"{_TRITON_FILE}:leaky_relu_kernel")
softplus_kernel = load_kernel(f"{_TRITON_FILE}:softplus_kernel")


def _leaky_ref(a):
    x, slope = a[0], a[3]
    ct = np.float64 if x.dtype == np.float64 else np.float32
    return [np.where(x > 0, x, (x.astype(ct) * np.float32(slope)).astype(x.dtype))]


LEAKY_RELU = Case("triton_language", leaky_relu_kernel,
                  lambda n, dt, rng, masked=True: [rand(rng, n, dt), junk(rng, n, dt), n,
                                                   float(rng.uniform(0, 0.5)), 64],
                  _leaky_ref, (1,), FLOATS,
                  ("*fp32:16,*fp32:16,i32,fp32,1024", "*fp16,*fp16,i32,fp32,512"), grid_1d(64))


def _softplus_ref(a):
    x = a[0].astype(np.float32).astype(np.float64)
    return [np.logaddexp(0, x).astype(a[1].dtype)]


SOFTPLUS = Case("triton_math", softplus_kernel,
                lambda n, dt, rng, masked=True: [rand(rng, n, dt, -10, 10), junk(rng, n, dt),
                                                 n, 64],
                _softplus_ref, (1,), FLOATS,
                ("*fp32:16,*fp32:16,i32,1024", "*bf16,*bf16,i32,256"), grid_1d(64),
                tolerance={"float32": (1e-5, 1e-6), "float64": (1e-6, 1e-6)})


@tilecc.jit
def narrow_store_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # fp32 in, the output's (narrower) type out: the store converts and packs 16- or 8-bit
    # elements into words, under a mask that is uniform over each vector where n % 16 == 0
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, x * 2.0 - 1.0, mask=mask)


# ========================================================================================
# 16. Random numbers: Triton's Philox (tl.randint, tl.randint4x, tl.rand, tl.randn), against
#     Philox-4x32-10 written here in NumPy. Bit-exact for integers and uniform floats on
#     every path; tests/test_random.py checks the interpreter against Triton's own bits.
# ========================================================================================

PHILOX_ROUND = (0xD2511F53, 0xCD9E8D57)
PHILOX_KEY = (0x9E3779B9, 0xBB67AE85)


def philox_4x32(seed: int, offsets: np.ndarray, rounds: int = 10) -> list[np.ndarray]:
    """Triton's randint4x in NumPy: the counter is (offset's low word, its high word for
    64-bit offsets, 0, 0), the key the seed's two words."""
    u64 = np.uint64
    seed %= 1 << 64
    k0, k1 = u64(seed & 0xFFFFFFFF), u64(seed >> 32)
    wide = offsets.astype(np.int64).view(np.uint64)
    c0 = wide & u64(0xFFFFFFFF)
    c1 = (wide >> u64(32)) if offsets.dtype.itemsize == 8 else np.zeros_like(c0)
    c2, c3 = np.zeros_like(c0), np.zeros_like(c0)
    low = u64(0xFFFFFFFF)
    for _ in range(rounds):
        p0, p2 = u64(PHILOX_ROUND[0]) * c0, u64(PHILOX_ROUND[1]) * c2  # < 2**64: no wrap
        c0, c1, c2, c3 = ((p2 >> u64(32)) ^ c1 ^ k0, p2 & low, (p0 >> u64(32)) ^ c3 ^ k1,
                          p0 & low)
        k0, k1 = (k0 + u64(PHILOX_KEY[0])) & low, (k1 + u64(PHILOX_KEY[1])) & low
    return [c.astype(np.uint32) for c in (c0, c1, c2, c3)]


def uniform_of(bits: np.ndarray) -> np.ndarray:
    """Triton's uint_to_uniform_float for 32-bit words: [0, 1) in fp32."""
    signed = bits.view(np.int32)
    folded = np.where(signed < 0, ~signed, signed)
    return folded.astype(np.float32) * np.float32(4.6566127342e-10)


@tilecc.jit
def random_bits_kernel(ints_ptr, uniform_ptr, four_ptr, seed, base, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    idx = pid * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    offsets = base + idx  # int32 or int64, as `base` is
    tl.store(ints_ptr + idx, tl.randint(seed, offsets), mask=mask)
    tl.store(uniform_ptr + idx, tl.rand(seed, offsets), mask=mask)
    r0, r1, r2, r3 = tl.randint4x(seed, offsets)
    tl.store(four_ptr + idx, r0, mask=mask)
    tl.store(four_ptr + n + idx, r1, mask=mask)
    tl.store(four_ptr + 2 * n + idx, r2, mask=mask)
    tl.store(four_ptr + 3 * n + idx, r3, mask=mask)


def _random_offsets_base(dt, rng) -> Any:
    # int64 offsets from above 2**32 (their high word enters the counter); int32 ones of
    # either sign
    if np.dtype(dt) == np.int64:
        return np.int64(rng.integers(2**32, 2**40))
    return int(rng.integers(-2**30, 2**30))


def _random_seed(rng) -> int:
    return int(rng.choice([rng.integers(0, 2**31), rng.integers(2**32, 2**62)]))


def _random_bits_args(n, dt, rng, masked=True):
    return [junk(rng, n, np.uint32), junk(rng, n, F32), junk(rng, 4 * n, np.uint32),
            _random_seed(rng), _random_offsets_base(dt, rng), n, 64]


def _random_bits_ref(a):
    seed, base, n = a[3], a[4], a[5]
    offsets = (np.arange(n) + base).astype(np.dtype(type(base)) if isinstance(base, np.integer)
                                           else np.int32)
    four = philox_4x32(seed, offsets)
    return [four[0], uniform_of(four[0]), np.concatenate(four)]


RANDOM_BITS = Case("random_randint_rand", random_bits_kernel, _random_bits_args, _random_bits_ref,
                   (0, 1, 2), (I32, np.dtype(np.int64)),
                   ("*u32:16,*fp32:16,*u32:16,i32,i32,i32,1024",
                    "*u32:16,*fp32:16,*u32:16,i64,i64,i32:16,512"),
                   grid_1d(64), tolerance={"float32": (0.0, 0.0)})


@tilecc.jit
def random_normal_kernel(out_ptr, seed, n, BLOCK: tl.constexpr):
    idx = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + idx, tl.random.randn(seed, idx), mask=idx < n)


def _random_normal_ref(a):
    seed, n = a[1], a[2]
    four = philox_4x32(seed, np.arange(n, dtype=np.int32))
    u1, u2 = np.maximum(np.float32(1e-7), uniform_of(four[0])), uniform_of(four[1])
    radius = np.sqrt(np.float32(-2.0) * np.log(u1))
    return [radius * np.cos(np.float32(6.283185307179586) * u2)]


# The interpreter computes randn bit for bit as Triton's does (tests/test_random.py); the GPU
# takes log as lg2.approx (absolute error near 2**-22), which r = sqrt(-2 log u) magnifies
# where u is near 1 and r near 0: an absolute tolerance of 1e-3 there.
RANDOM_NORMAL = Case("random_randn", random_normal_kernel,
                     lambda n, dt, rng, masked=True: [junk(rng, n, F32), _random_seed(rng), n, 64],
                     _random_normal_ref, (0,), (F32,), ("*fp32:16,i64,i32,1024",), grid_1d(64),
                     tolerance={"float32": (1e-5, 1e-3)})


CASES: list[Case] = [
    ADD, ARITH, DIVMOD, FMOD, BITWISE, COMPARE, MINMAX, *MATH, GELU, SCALE_SHIFT,
    LITERAL_PROMOTION, INT_LITERAL, RATIO, AXPBY, CONVERT, BITCAST, GRID_2D, GRID_3D,
    COL_SUM, HORNER, HORNER_STATIC, PERSISTENT, CHUNKED, WHILE, SELECT, SILU, ASSERTS, PAD,
    PAD_MAX,
    MASKED_FILL, STRIDED, LEAKY_RELU, SOFTPLUS, RANDOM_BITS, RANDOM_NORMAL,
]
BY_NAME = {c.name: c for c in CASES}
assert len(BY_NAME) == len(CASES), "case names must be unique"
