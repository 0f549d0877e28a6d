"""Hypothesis strategies for kernel inputs: sizes relative to block sizes, dtypes, values
(NaN, infinities, subnormals, ranges) and memory layouts (offset and strided views).

Every strategy shrinks toward the simplest failing input: small sizes, float32, zeros,
contiguous arrays — so a bug is reported on the smallest example that shows it.
"""

from __future__ import annotations

import functools
import math
from typing import Sequence

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from hypothesis.strategies import SearchStrategy

from tilecc.testing.compare import is_floating
from tilecc.testing.profiles import register_profiles

__all__ = ["sizes", "shapes", "float_dtypes", "integer_dtypes", "kernel_dtypes",
           "float8_dtypes", "FLOAT8", "elements", "arrays", "LAYOUTS", "element_strides"]

register_profiles()  # "tilecc" & co. can be loaded by whoever draws kernel inputs from here


# --- sizes --------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=32)
def _primes_upto(n: int) -> tuple[int, ...]:
    n = min(n, 1 << 17)
    if n < 2:
        return ()
    sieve = np.ones(n + 1, bool)
    sieve[:2] = False
    for p in range(2, int(n ** 0.5) + 1):
        if sieve[p]:
            sieve[p * p::p] = False
    return tuple(int(p) for p in np.flatnonzero(sieve))


def sizes(block: int | Sequence[int], *, max_blocks: int = 4, min_size: int = 1,
          max_size: int | None = None) -> SearchStrategy[int]:
    """Problem sizes for a kernel tiled by `block` (or by any of several block sizes):
    anything from `min_size` to `max_size` (default `max_blocks` blocks and one), with extra
    weight on the sizes where tiling bugs live — tiny (1 to 4), whole multiples of a block,
    one less and one more than a multiple, and primes (never a multiple of anything)."""
    blocks = (block,) if isinstance(block, int) else tuple(block)
    if not blocks or min(blocks) < 1:
        raise ValueError(f"block sizes must be positive, got {block!r}")
    if max_size is None:
        max_size = max_blocks * max(blocks) + 1
    if max_size < min_size:
        raise ValueError(f"max_size {max_size} < min_size {min_size}")
    ok = lambda n: min_size <= n <= max_size  # noqa: E731
    tiny = [n for n in range(min_size, 5) if ok(n)]
    near = sorted({k * b + d for b in blocks for k in range(1, max(max_blocks, max_size // b) + 2)
                   for d in (0, -1, 1) if ok(k * b + d)})
    primes = [p for p in _primes_upto(max_size) if p >= min_size]
    parts = [st.integers(min_size, max_size)]  # first: shrinking goes toward min_size
    parts += [st.sampled_from(xs) for xs in (tiny, near, primes) if xs]
    return st.one_of(parts)


def shapes(blocks: Sequence[int | Sequence[int]], *, max_blocks: int = 4, min_size: int = 1,
           max_sizes: Sequence[int | None] | None = None) -> SearchStrategy[tuple[int, ...]]:
    """Shapes whose dimension i is drawn by `sizes(blocks[i], ...)` — e.g. (M, N) for a
    kernel tiled by (BLOCK_M, BLOCK_N)."""
    max_sizes = list(max_sizes) if max_sizes is not None else [None] * len(blocks)
    return st.tuples(*(sizes(b, max_blocks=max_blocks, min_size=min_size, max_size=m)
                       for b, m in zip(blocks, max_sizes)))


# --- dtypes -------------------------------------------------------------------------------------

def _ml(name: str) -> np.dtype:
    import ml_dtypes

    return np.dtype(getattr(ml_dtypes, name))


# Triton's float8 types and their ml_dtypes equivalents.  Triton's fp8e4b15 (exponent bias 15)
# has none in ml_dtypes, so it is left out.
FLOAT8 = {"fp8e4nv": "float8_e4m3fn", "fp8e5": "float8_e5m2",
          "fp8e4b8": "float8_e4m3fnuz", "fp8e5b16": "float8_e5m2fnuz"}


def float_dtypes(*, float16: bool = True, bfloat16: bool = True, float32: bool = True,
                 float64: bool = True) -> SearchStrategy[np.dtype]:
    """Floating dtypes that kernels take (bfloat16 through ml_dtypes); shrinks to float32."""
    out = [np.dtype(np.float32)] if float32 else []
    if float16:
        out.append(np.dtype(np.float16))
    if bfloat16:
        out.append(_ml("bfloat16"))
    if float64:
        out.append(np.dtype(np.float64))
    return st.sampled_from(out)


def integer_dtypes(*, signed: bool = True, unsigned: bool = True,
                   bits: Sequence[int] = (8, 16, 32, 64)) -> SearchStrategy[np.dtype]:
    """Integer dtypes that kernels take; shrinks to int32 (or the first one asked for)."""
    order = sorted(bits, key=lambda b: (b != 32, b))
    out = [np.dtype(f"{p}{b}") for b in order for p, on in (("int", signed), ("uint", unsigned))
           if on]
    return st.sampled_from(out)


def kernel_dtypes() -> SearchStrategy[np.dtype]:
    """Every dtype a tilecc kernel takes: bool, (u)int8-64, float16, bfloat16, float32, float64."""
    return st.one_of(float_dtypes(), integer_dtypes(), st.just(np.dtype(bool)))


def float8_dtypes(*names: str) -> SearchStrategy[np.dtype]:
    """The float8 types Triton knows (`FLOAT8`: fp8e4nv, fp8e5, fp8e4b8, fp8e5b16), as
    ml_dtypes dtypes — for references and for inputs converted before a launch: tilecc
    kernels do not take float8 arrays yet."""
    picked = names or tuple(FLOAT8)
    unknown = [n for n in picked if n not in FLOAT8 and n not in FLOAT8.values()]
    if unknown:
        raise ValueError(f"unknown float8 type(s) {unknown}; known: {', '.join(FLOAT8)}")
    return st.sampled_from([_ml(FLOAT8.get(n, n)) for n in picked])


# --- values -------------------------------------------------------------------------------------

def _native(dt: np.dtype) -> bool:
    """A NumPy float (not one of ml_dtypes' bfloat16 / float8 types)."""
    return dt.isbuiltin != 2 and dt.kind == "f"


def _finfo(dt: np.dtype):
    if _native(dt):
        return np.finfo(dt)
    import ml_dtypes

    return ml_dtypes.finfo(dt)


def _has_inf(dt: np.dtype) -> bool:
    with np.errstate(all="ignore"):
        return bool(np.isinf(np.array([np.inf], np.float32).astype(dt).astype(np.float32))[0])


def elements(dtype, *, min_value: float | None = None, max_value: float | None = None,
             nan: bool = False, inf: bool = False, subnormal: bool = True) -> SearchStrategy:
    """Scalars of `dtype` (as Python numbers, or float32 ones for bfloat16 / float8 to be
    converted): integers in the dtype's range, floats finite in [min_value, max_value]
    (default: the dtype's whole finite range), plus NaN and ±inf when asked for (and the
    dtype has them).  `subnormal` allows subnormal values of `dtype` itself; the smallest
    and largest subnormals, the smallest normal and the largest finite value in range are
    drawn on purpose (for bfloat16 and float8, drawn as float32, they would be rare)."""
    dt = np.dtype(dtype)
    if dt.kind == "b" and dt.isbuiltin != 2:
        return st.booleans()
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo = info.min if min_value is None else max(info.min, math.ceil(min_value))
        hi = info.max if max_value is None else min(info.max, math.floor(max_value))
        return st.integers(lo, hi)
    if not is_floating(dt):
        raise TypeError(f"no element strategy for dtype {dt}")
    fi = _finfo(dt)
    big = float(fi.max)
    lo = -big if min_value is None else max(-big, float(min_value))
    hi = big if max_value is None else min(big, float(max_value))
    native = _native(dt)
    width = dt.itemsize * 8 if native else 32
    finite = st.floats(lo, hi, allow_nan=False, allow_infinity=False, width=width,
                       allow_subnormal=None if subnormal else False)
    specials = []
    tiny = float(fi.smallest_normal)
    if subnormal:
        sub = float(fi.smallest_subnormal)
        specials += [v for v in (sub, -sub, tiny - sub, -(tiny - sub)) if lo <= v <= hi]
    elif not native:  # float32 draws that are subnormal in dt: flush them to zero
        finite = finite.map(lambda v: 0.0 * v if abs(v) < tiny else v)
    specials += [v for v in (tiny, -tiny, big, -big) if lo <= v <= hi]
    if nan:
        specials.append(math.nan)
    if inf and _has_inf(dt):
        specials += [math.inf, -math.inf]
    return st.one_of(finite, st.sampled_from(specials)) if specials else finite


# --- arrays and layouts -------------------------------------------------------------------------

LAYOUTS = ("contiguous", "offset", "padded", "strided", "any")


def element_strides(x: np.ndarray) -> tuple[int, ...]:
    """An array's strides in elements, as a kernel taking strides wants them."""
    return tuple(s // x.itemsize for s in x.strides)


def _poison(dt: np.dtype):
    """What fills the gaps of a strided view: a value no correct kernel reads."""
    if dt.kind == "b":
        return True
    if dt.kind in "iu":
        return np.iinfo(dt).max
    return np.nan


def _placed(values: np.ndarray, offset: int, steps: tuple[int, ...],
            perm: tuple[int, ...], pads: tuple[int, ...] | None = None) -> np.ndarray:
    """`values` copied into a view of a larger buffer: starting `offset` elements past a
    64-byte aligned address, with step `steps[i]` along axis i, `pads[i]` unused elements
    at the end of axis i, and axes laid out in memory in the order `perm` (outermost first)."""
    from tilecc.testing.devices import _aligned_empty

    dt, shape = values.dtype, values.shape
    pads = pads or (0,) * len(shape)
    used = {a: (shape[a] - 1) * steps[a] + 1 if shape[a] else 0 for a in perm}
    base_shape = tuple(used[a] + pads[a] for a in perm)
    total = int(np.prod(base_shape)) if base_shape else 1
    raw = _aligned_empty(offset + total, dt)
    raw[...] = _poison(dt)
    base = raw[offset:offset + total].reshape(base_shape)
    view = base[tuple(slice(0, used[a], steps[a]) for a in perm)]
    view = view.transpose(np.argsort(perm))
    view[...] = values
    return view


@st.composite
def _layout_of(draw, values: np.ndarray, layout: str) -> np.ndarray:
    if layout == "any":
        layout = draw(st.sampled_from(("contiguous", "offset", "strided", "padded")))
    nd, itemsize = values.ndim, values.itemsize
    max_off = max(1, 16 // itemsize - 1)
    if layout == "contiguous" or nd == 0:
        return values
    if layout == "offset":
        return _placed(values, draw(st.integers(1, max_off)), (1,) * nd, tuple(range(nd)))
    if layout == "padded":  # rows (and planes) padded; the last axis contiguous
        if nd == 1:
            return _placed(values, draw(st.integers(1, max_off)), (1,), (0,))
        # padding at the end of axes 1..nd-1: the padding of the last axis pads the rows
        pads = tuple(draw(st.lists(st.integers(0, 5), min_size=nd - 1, max_size=nd - 1)))
        if not any(pads):
            pads = pads[:-1] + (1,)
        return _placed(values, draw(st.integers(0, max_off)), (1,) * nd, tuple(range(nd)),
                       (0,) + pads)
    if layout != "strided":
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
    offset = draw(st.integers(0, max_off))
    steps = tuple(draw(st.lists(st.integers(1, 3), min_size=nd, max_size=nd)))
    perm = tuple(draw(st.permutations(range(nd)))) if nd > 1 else (0,)
    if all(s == 1 for s in steps) and perm == tuple(range(nd)):
        steps = steps[:-1] + (2,)  # strided means not contiguous
    return _placed(values, offset, steps, perm)


@st.composite
def arrays(draw, dtype, shape, *, min_value: float | None = None,
           max_value: float | None = None, nan: bool = False, inf: bool = False,
           subnormal: bool = True, layout: str = "contiguous") -> np.ndarray:
    """NumPy arrays for kernel arguments.  `dtype` and `shape` are values or strategies (an
    int shape is 1-D; share one between arguments with `st.shared(..., key=...)`).  Values as
    in `elements`.  `layout`: "contiguous"; "offset" (contiguous, starting a few elements
    past 16-byte alignment: the unaligned specialization); "padded" (the last axis
    contiguous, rows — and planes — padded: for kernels taking a row stride, like a
    row-wise softmax; 1-D: as "offset"); "strided" (a non-contiguous view
    — steps of 1 to 3 elements, axes possibly transposed, gaps filled with NaN or the
    integer maximum — for kernels that take strides); "any" (one of those four)."""
    dt = np.dtype(draw(dtype) if isinstance(dtype, SearchStrategy) else dtype)
    shp = draw(shape) if isinstance(shape, SearchStrategy) else shape
    shp = (int(shp),) if np.ndim(shp) == 0 else tuple(int(s) for s in shp)
    elems = elements(dt, min_value=min_value, max_value=max_value, nan=nan, inf=inf,
                     subnormal=subnormal)
    if not _native(dt) and is_floating(dt):  # ml_dtypes: draw float32, round once
        with np.errstate(all="ignore"):
            values = draw(hnp.arrays(np.float32, shp, elements=elems)).astype(dt)
    else:
        values = draw(hnp.arrays(dt, shp, elements=elems))
    return draw(_layout_of(values, layout))
