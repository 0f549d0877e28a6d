"""Comparing a kernel's output with the reference: which elements differ, and the worst one.

`compare` returns a `Comparison` (nothing raised); `assert_close` raises a `Mismatch` — an
AssertionError that names the worst element, its index, both values and the tolerance, and
keeps them as attributes for tests that want to look.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilecc.testing.tolerances import Tolerance, tolerance

__all__ = ["Comparison", "Mismatch", "compare", "assert_close", "is_floating", "format_array"]


def is_floating(dtype) -> bool:
    """NumPy floats and the ml_dtypes ones (bfloat16, float8_*)."""
    dt = np.dtype(dtype)
    if dt.isbuiltin != 2:  # NumPy's own dtypes (ml_dtypes' are user-defined: isbuiltin 2)
        return dt.kind == "f"
    if True:
        try:
            import ml_dtypes

            ml_dtypes.finfo(dt)
            return True
        except (ImportError, ValueError, TypeError):
            return False
    return False


@dataclass
class Comparison:
    """The outcome of comparing one output; `ok` when every element is close."""

    bad: int  # elements out of tolerance
    total: int
    tolerance: Tolerance
    index: tuple[int, ...] | None = None  # the worst element
    actual: object = None
    expected: object = None
    diff: float | None = None
    allowed: float | None = None
    first_bad: tuple[tuple[int, ...], ...] = ()
    shape_error: str | None = None

    @property
    def ok(self) -> bool:
        return self.bad == 0 and self.shape_error is None

    def describe(self) -> str:
        if self.shape_error:
            return self.shape_error
        if self.ok:
            return f"all {self.total} elements close ({self.tolerance})"
        lines = [f"{self.bad} of {self.total} elements differ ({self.tolerance})",
                 f"worst at index {self.index}: got {self.actual!r}, expected {self.expected!r}"]
        if self.diff is not None:
            lines[-1] += f" (|difference| {self.diff:.6g}, allowed {self.allowed:.6g})"
        if self.bad > 1:
            more = ", ".join(str(i) for i in self.first_bad)
            lines.append(f"first differing indices: {more}{', ...' if self.bad > len(self.first_bad) else ''}")
        return "\n".join(lines)


class Mismatch(AssertionError):
    """A kernel's output is not close to the reference.  Attributes: `comparison` (the worst
    element and counts), `output` (which output), `backend`, and `inputs` (the inputs the
    kernel ran on — after shrinking, the smallest failing ones Hypothesis found)."""

    def __init__(self, message: str, comparison: Comparison | None = None, output: str = "",
                 backend: str = "", inputs: dict | None = None):
        super().__init__(message)
        self.comparison = comparison
        self.output = output
        self.backend = backend
        self.inputs = inputs or {}


def _scalar(x):
    return x.item() if hasattr(x, "item") else x


def compare(actual, expected, tol: Tolerance | None = None) -> Comparison:
    """Compare element by element; `expected` is rounded to `actual`'s dtype first (so an
    overflow to inf, or an integer wrap, is what both sides mean).  0-d `expected`
    broadcasts; other shapes must match exactly."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    if tol is None:
        tol = tolerance(actual.dtype)
    if expected.shape != actual.shape:
        if expected.ndim:
            return Comparison(1, actual.size, tol, shape_error=(
                f"shape {actual.shape} but the reference returned shape {expected.shape}"))
        expected = np.broadcast_to(expected, actual.shape)
    with np.errstate(all="ignore"):
        expected = expected.astype(actual.dtype)
        if is_floating(actual.dtype):
            a, e = actual.astype(np.float64), expected.astype(np.float64)
            diff = np.abs(a - e)
            allowed = tol.atol + tol.rtol * np.abs(e)
            # an infinity matches only itself (inf - inf is NaN, and |e| = inf allows anything)
            same = (a == e) | ((diff <= allowed) & np.isfinite(a) & np.isfinite(e))
            if tol.equal_nan:
                same |= np.isnan(a) & np.isnan(e)
            # how bad: diff / allowed; NaN or inf on one side only is as bad as it gets
            badness = np.where(np.isfinite(diff), diff / np.maximum(allowed, 1e-300), np.inf)
        else:
            same = actual == expected
            a, e = actual, expected
            if actual.dtype.kind in "iu":
                diff = np.abs(a.astype(np.float64) - e.astype(np.float64))
                badness = diff
            else:
                diff, badness = None, (~same).astype(np.float64)
    bad = ~same
    n_bad = int(bad.sum())
    if n_bad == 0:
        return Comparison(0, actual.size, tol)
    flat = np.where(bad.reshape(-1), badness.reshape(-1), -1.0)
    worst = np.unravel_index(int(np.argmax(flat)), actual.shape)
    worst = tuple(int(i) for i in worst)
    first = tuple(tuple(int(i) for i in ix) for ix in np.argwhere(bad)[:8])
    d = float(diff[worst]) if diff is not None else None
    allowed_w = (float(tol.atol + tol.rtol * abs(float(e[worst])))
                 if is_floating(actual.dtype) else 0.0)
    return Comparison(n_bad, actual.size, tol, worst, _scalar(actual[worst]),
                      _scalar(expected[worst]), d, allowed_w if d is not None else None, first)


def assert_close(actual, expected, tol: Tolerance | tuple[float, float] | None = None,
                 what: str = "output") -> None:
    """Raise `Mismatch` (an AssertionError) naming the worst element unless every element of
    `actual` is within `tol` of `expected` (default: `tolerance(actual.dtype)`)."""
    if isinstance(tol, tuple):
        tol = Tolerance(*tol)
    c = compare(actual, expected, tol)
    if not c.ok:
        raise Mismatch(f"{what}: {c.describe()}", c, what)


def format_array(a) -> str:
    """A short description of an array argument: dtype, shape, layout and (small) values."""
    if not isinstance(a, np.ndarray):
        return repr(a)
    desc = f"{a.dtype.name}{list(a.shape)}"
    if a.ndim and not a.flags.c_contiguous:
        desc += f" strides {tuple(s // a.itemsize for s in a.strides)} (elements)"
    misaligned = a.ctypes.data % 16
    if misaligned:
        desc += f", {misaligned} bytes past 16-byte alignment"
    with np.printoptions(threshold=64, edgeitems=4, linewidth=96, precision=8):
        body = np.array2string(a.astype(np.float64) if a.dtype.isbuiltin == 2 else a,
                               separator=", ")
    return f"{desc} {body}"
