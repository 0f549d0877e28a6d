"""Kernels and references for the libdevice tests (tests/test_libdevice.py, the GPU cases).

Every libdevice signature is exercised by one kernel per signature group (the functions
that share argument and result dtypes): the group's kernel loads one block per argument
and stores each function's result in its own block of the output, so a whole group
compiles (NVRTC, hiprtc) and runs (interpreter, GPU) at once.  The kernels are generated
as a Python file, which the frontend reads like any other.

REFERENCE gives each float function its high-precision definition (mpmath) and the error
bounds the tests hold it to: `interp` for the interpreter (fp32 computed in float64 and
rounded, so within about an ulp; fp64 NumPy's float64 functions, within NUMPY_FP64_ULP
whichever implementation NumPy picks for the CPU), `cuda` for the GPU, from the CUDA Math
API's documented maximum ulp errors.  A bound is (ulp, abs): a result passes within `ulp` units in the last place
of the exact value, or within `abs` absolutely (the Bessel functions and lgamma near
their zeros, where relative error is unbounded for every implementation).
"""

from __future__ import annotations

import importlib.util
import math
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from tilecc.language.extra.libdevice_table import TABLE

NP = {"fp32": np.float32, "fp64": np.float64, "i32": np.int32, "i64": np.int64,
      "u32": np.uint32, "u64": np.uint64}
TL = {"fp32": "fp32", "fp64": "fp64", "i32": "i32", "i64": "i64", "u32": "u32", "u64": "u64"}
BLOCK = 256


def groups(target: str | None = None) -> dict[tuple, list[str]]:
    """(argument dtypes, result dtype) → the functions with that signature (on `target`:
    those it does not refuse; every one where target is None)."""
    out: dict[tuple, list[str]] = defaultdict(list)
    for fn in TABLE.values():
        for s in fn.signatures:
            if target == "hip" and s.hip is None:
                continue
            out[(s.args, s.result)].append(fn.name)
    return dict(out)


def group_id(key: tuple) -> str:
    args, result = key
    return f"{'_'.join(args)}__{result}"


def kernel_source(key: tuple, names: list[str], package: str = "tilecc") -> str:
    """The group's kernel, written against `package` (tilecc, or triton for the same
    kernel through Triton)."""
    args, _ = key
    params = ", ".join(f"a{i}_ptr" for i in range(len(args)))
    lines = [f"import {package}", f"import {package}.language as tl",
             f"from {package}.language.extra import libdevice", "", "", f"@{package}.jit",
             f"def {group_id(key)}(out_ptr, {params}, BLOCK: tl.constexpr):",
             "    offs = tl.arange(0, BLOCK)"]
    lines += [f"    a{i} = tl.load(a{i}_ptr + offs)" for i in range(len(args))]
    call_args = ", ".join(f"a{i}" for i in range(len(args)))
    lines += [f"    tl.store(out_ptr + {k} * BLOCK + offs, libdevice.{n}({call_args}))"
              for k, n in enumerate(names)]
    return "\n".join(lines) + "\n"


def load_kernel(directory: Path, key: tuple, names: list[str], package: str = "tilecc"):
    """The group's @tilecc.jit (or @triton.jit) kernel, from a module written under
    `directory`."""
    name = f"libdevice_group_{group_id(key)}_{len(names)}_{package}"
    path = directory / f"{name}.py"
    path.write_text(kernel_source(key, names, package))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return getattr(module, group_id(key))


def signature_string(key: tuple) -> str:
    args, result = key
    return ", ".join([f"*{TL[result]}"] + [f"*{TL[a]}" for a in args])


# --- inputs ---------------------------------------------------------------------------

def special_floats(t) -> np.ndarray:
    fi = np.finfo(t)
    return np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 1.5, -2.5, 3.0, np.inf, -np.inf,
                     np.nan, fi.tiny, -fi.tiny, fi.smallest_subnormal, -fi.smallest_subnormal,
                     fi.max, -fi.max, fi.eps, 100.0, -100.0, 1e-3, 0.75, 10.0, -7.0],
                    dtype=t)


def group_inputs(key: tuple, rng: np.random.Generator, n: int = BLOCK) -> list[np.ndarray]:
    """One block per argument of the group's signature; the int32 orders of jn / yn
    (the only (i32, float) signatures) kept small."""
    args = [inputs(a, n, rng, i) for i, a in enumerate(key[0])]
    if len(key[0]) == 2 and key[0][0] == "i32" and key[0][1].startswith("fp"):
        args[0] = rng.integers(0, 12, n).astype(np.int32)
    return args


def inputs(dtype: str, n: int, rng: np.random.Generator, position: int = 0) -> np.ndarray:
    """n values of `dtype`: special values first, then a spread of magnitudes and signs."""
    t = NP[dtype]
    if dtype.startswith("fp"):
        special = np.roll(special_floats(t), 3 * position)  # other pairings per argument
        mags = np.exp(rng.uniform(-12, 12, n)) * rng.choice([-1, 1], n)
        small = rng.uniform(-4, 4, n)
        pool = np.where(rng.random(n) < 0.5, mags, small).astype(t)
        return np.concatenate([special, pool])[:n]
    info = np.iinfo(t)
    special = np.array([0, 1, 2, 3, 31, 32, 63, 64, info.max, info.min,
                        info.min + 1 if info.min else 5], dtype=t)
    bits = rng.integers(0, 2 ** 63, n, dtype=np.int64).astype(np.uint64)
    pool = bits.astype(np.uint64).view(np.int64).astype(t) if dtype != "u64" else bits
    small = rng.integers(-40, 40, n).astype(t)
    mixed = np.where(rng.random(n) < 0.4, small, pool.astype(t)).astype(t)
    return np.concatenate([special, mixed])[:n]


# --- references ---------------------------------------------------------------------------

def _mp():
    import mpmath

    return mpmath


def _pow(x, y):
    mp = _mp()
    if x < 0 and y != int(y):
        return math.nan
    if x == 0:
        return math.inf if y < 0 else (0.0 if y > 0 else 1.0)
    return mp.power(x, y)


def _cbrt(x):
    mp = _mp()
    return -mp.cbrt(-x) if x < 0 else mp.cbrt(x)


def _lgamma(x):
    mp = _mp()
    if x <= 0 and x == int(x):
        return math.inf
    return mp.log(abs(mp.gamma(x)))


def _tgamma(x):
    mp = _mp()
    if x <= 0 and x == int(x):
        return math.nan if x < 0 else math.copysign(math.inf, x)
    return mp.gamma(x)


def _r(f):
    def g(*a):
        v = f(*a)
        if v == 0:  # 1 / ±0: the sign of the operand (+inf for norms)
            return math.copysign(math.inf, a[0]) if len(a) == 1 else math.inf
        return 1 / v
    return g


def _hyp(*xs):
    mp = _mp()
    return mp.sqrt(mp.fsum(mp.mpf(x) ** 2 for x in xs))


def _atan2(y, x):
    if y == 0:  # C99's signed zeros, which mpmath does not have
        return math.copysign(math.pi if math.copysign(1, x) < 0 else 0.0, y)
    return _mp().atan2(y, x)


def _div(x, y):
    if y == 0:
        return math.nan if x == 0 else math.copysign(math.inf, x) * math.copysign(1, y)
    return _mp().mpf(x) / y


def _domain(f, lo=None, hi=None):
    def g(x):
        if (lo is not None and x < lo) or (hi is not None and x > hi):
            return math.nan
        return f(x)
    return g


def _wide(f):
    """f evaluated with enough bits that 1 - x and 2p - 1 stay exact for subnormal x."""
    def g(x):
        mp = _mp()
        with mp.workprec(2300):
            return +f(mp.mpf(x))
    return g


# NumPy picks its float64 elementary functions by CPU when it is imported (SVML on AVX-512,
# its own SIMD loops, or the C library, whose cbrt reaches 3 ulp): the interpreter's fp64
# bound for the functions computed by them is one that holds for every machine
NUMPY_FP64_ULP = 4
NUMPY_ELEMENTARY = {"exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p", "cbrt",
                    "rcbrt", "pow", "sin", "cos", "tan", "asin", "acos", "atan", "atan2",
                    "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sinpi", "cospi"}


def references() -> dict:
    """name → (exact function of Python numbers, interpreter bound fp32, fp64, GPU bound
    fp32, fp64: CUDA's documented maximum ulp error; None where FAST applies)."""
    return {name: (f, i32, max(i64, NUMPY_FP64_ULP) if name in NUMPY_ELEMENTARY else i64,
                   c32, c64)
            for name, (f, i32, i64, c32, c64) in _references().items()}


def _references() -> dict:
    mp = _mp()
    exp10 = lambda x: mp.power(10, x)  # noqa: E731
    log2 = _domain(lambda x: mp.log(x, 2), 0)
    return {
        "exp": (mp.exp, 1, 1, 2, 1), "exp2": (lambda x: mp.power(2, x), 1, 1, 2, 1),
        "exp10": (exp10, 1, 2, 2, 1), "expm1": (mp.expm1, 1, 1, 1, 1),
        "log": (_domain(mp.log, 0), 1, 1, 1, 1), "log2": (log2, 1, 1, 1, 1),
        "log10": (_domain(mp.log10, 0), 1, 1, 2, 1),
        "log1p": (_domain(mp.log1p, -1), 1, 1, 1, 1),
        "sqrt": (_domain(mp.sqrt, 0), 0.5, 0.5, 0.5, 0.5),
        "rsqrt": (_domain(_r(mp.sqrt), 0), 1, 2, 2, 1),
        "cbrt": (_cbrt, 1, 1, 1, 1), "rcbrt": (_r(_cbrt), 1, 5, 1, 1),
        "hypot": (_hyp, 1, 1, 3, 2), "rhypot": (_r(_hyp), 1, 2, 2, 1),
        "norm3d": (_hyp, 1, 2, 3, 2), "rnorm3d": (_r(_hyp), 1, 2, 2, 1),
        "norm4d": (_hyp, 1, 2, 3, 2), "rnorm4d": (_r(_hyp), 1, 2, 2, 1),
        "pow": (_pow, 1, 2, 4, 2), "sin": (mp.sin, 1, 1, 2, 2), "cos": (mp.cos, 1, 1, 2, 2),
        "tan": (mp.tan, 1, 1, 4, 2), "asin": (_domain(mp.asin, -1, 1), 1, 1, 2, 2),
        "acos": (_domain(mp.acos, -1, 1), 1, 1, 2, 2), "atan": (mp.atan, 1, 1, 2, 2),
        "atan2": (_atan2, 1, 1, 3, 2), "sinh": (mp.sinh, 1, 1, 3, 2),
        "cosh": (mp.cosh, 1, 1, 2, 1), "tanh": (mp.tanh, 1, 1, 2, 1),
        "asinh": (mp.asinh, 1, 1, 3, 3), "acosh": (_domain(mp.acosh, 1), 1, 1, 4, 3),
        "atanh": (_domain(mp.atanh, -1, 1), 1, 1, 3, 2),
        "sinpi": (mp.sinpi, 1, 2, 1, 2), "cospi": (mp.cospi, 1, 2, 1, 2),
        "erf": (mp.erf, 1, 2, 2, 2), "erfc": (mp.erfc, 1, 64, 4, 5),
        "erfinv": (_domain(mp.erfinv, -1, 1), 1, 4, 2, 5),
        "erfcinv": (_domain(_wide(lambda x: _mp().erfinv(1 - x)), 0, 2), 1, 8, 4, 6),
        "erfcx": (lambda x: mp.exp(mp.mpf(x) ** 2) * mp.erfc(x), 1, 64, 4, 4),
        "normcdf": (mp.ncdf, 1, 8, 5, 5),
        "normcdfinv": (_domain(_wide(lambda p: _mp().sqrt(2) * _mp().erfinv(2 * p - 1)), 0, 1),
                       1, 8, 5, 8),
        "lgamma": (_lgamma, 1, 4, 6, 4), "tgamma": (_tgamma, 1, 16, 5, 10),
        "j0": (lambda x: mp.besselj(0, x), 1, 4, 9, 7),
        "j1": (lambda x: mp.besselj(1, x), 1, 4, 9, 7),
        "y0": (_domain(lambda x: mp.bessely(0, x), 0), 1, 4, 9, 7),
        "y1": (_domain(lambda x: mp.bessely(1, x), 0), 1, 4, 9, 7),
        "cyl_bessel_i0": (lambda x: mp.besseli(0, x), 1, 8, 6, 6),
        "cyl_bessel_i1": (lambda x: mp.besseli(1, x), 1, 8, 6, 6),
        "jn": (lambda n, x: mp.besselj(n, x), 1, 4, 9, 7),
        "yn": (lambda n, x: mp.bessely(n, x) if x > 0 else -math.inf if x == 0 else math.nan,
               1, 8, 9, 7),
        "fast_sinf": (mp.sin, 1, None, None, None), "fast_cosf": (mp.cos, 1, None, None, None),
        "fast_tanf": (mp.tan, 1, None, None, None), "fast_expf": (mp.exp, 1, None, None, None),
        "fast_exp10f": (exp10, 1, None, None, None),
        "fast_logf": (_domain(mp.log, 0), 1, None, None, None),
        "fast_log2f": (log2, 1, None, None, None),
        "fast_log10f": (_domain(mp.log10, 0), 1, None, None, None),
        "fast_powf": (_pow, 1, None, None, None), "fast_dividef": (_div, 1, None, None, None),
        "fast_tanhf": (mp.tanh, 1, None, None, None),
    }


# Relative error is unbounded near a function's zeros, for every implementation: there
# an absolute bound (fp32, fp64) applies as well (CUDA documents the Bessel functions so)
ABSOLUTE = {**{n: (2.2e-6, 5e-12) for n in ("j0", "j1", "y0", "y1", "jn", "yn")},
            "lgamma": (2e-6, 1e-13), "sinpi": (1e-7, 1e-16), "cospi": (1e-7, 1e-16)}
# Where CUDA states the fast approximations' bounds: the arguments the GPU test checks
FAST_DOMAIN = {
    "fast_sinf": lambda x: abs(x) <= math.pi, "fast_cosf": lambda x: abs(x) <= math.pi,
    "fast_tanf": lambda x: abs(x) <= math.pi / 4, "fast_expf": lambda x: abs(x) <= 10,
    "fast_exp10f": lambda x: abs(x) <= 4, "fast_logf": lambda x: 1e-3 <= x <= 1e3,
    "fast_log2f": lambda x: 1e-3 <= x <= 1e3, "fast_log10f": lambda x: 1e-3 <= x <= 1e3,
    "fast_powf": lambda x, y: 0.1 <= x <= 10 and abs(y) <= 4,
    "fast_dividef": lambda x, y: 2.0 ** -100 <= abs(y) <= 2.0 ** 100 and abs(x) < 2.0 ** 100,
    "fast_tanhf": lambda x: True,
}
# The fast approximations on the GPU, CUDA's documented bounds (relative, absolute) on the
# arguments the GPU test draws (|x| <= pi for the trigonometric ones)
FAST = {"fast_sinf": (0, 2 ** -21.41), "fast_cosf": (0, 2 ** -21.41),
        "fast_tanf": (2 ** -20, 2 ** -21), "fast_expf": (2 ** -19, 0),
        "fast_exp10f": (2 ** -18, 0), "fast_logf": (2 ** -20, 2 ** -21.41),
        "fast_log2f": (2 ** -20, 2 ** -22), "fast_log10f": (2 ** -20, 2 ** -21),
        "fast_powf": (2 ** -16, 0), "fast_dividef": (2 ** -22, 0), "fast_tanhf": (2 ** -10, 0)}


def ulp_error(got: float, exact, dtype: str) -> float:
    """|got - exact| in units in the last place of `exact` in `dtype` (subnormals: the
    smallest subnormal)."""
    t = NP[dtype]
    e = float(exact)
    if math.isinf(e) or abs(e) > float(np.finfo(t).max):
        return 0.0 if got == math.copysign(math.inf, e) else math.inf
    fi = np.finfo(t)
    mag = max(abs(e), float(fi.tiny))
    ulp = 2.0 ** (math.frexp(mag)[1] - 1) * float(fi.eps)
    return float(abs(_mp().mpf(got) - exact) / ulp)
