"""Per-dtype tolerances for comparing kernel results with a NumPy reference.

Element-wise results use `torch.testing.assert_close`'s defaults, so a kernel checked here
passes the same comparison a torch user would write.  Results that accumulate `k` terms
(reductions, `dot`) get tolerances scaled by sqrt(k): rounding errors of a sum of k terms
grow like sqrt(k) on average (a tree or blocked sum, as GPUs compute them) and like k in the
worst case; sqrt(k) with the element-wise margin on top catches real bugs (a missing term,
a wrong scale) while passing correct kernels.  A result is close when

    |actual - expected| <= atol + rtol * |expected|        (NaN equals NaN, inf equals inf)

Integers and bools compare exactly.  See docs/testing.md for the table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Tolerance", "tolerance", "ELEMENTWISE", "EXACT"]


@dataclass(frozen=True)
class Tolerance:
    """`|actual - expected| <= atol + rtol * |expected|`, element by element."""

    rtol: float
    atol: float
    equal_nan: bool = True

    def __str__(self) -> str:
        if self.rtol == 0 and self.atol == 0:
            return "exact"
        return f"rtol={self.rtol:.3g}, atol={self.atol:.3g}"


EXACT = Tolerance(0.0, 0.0)

# (rtol, atol) by dtype name.  fp16, bf16, fp32, fp64: torch.testing.assert_close's defaults.
# float8 (torch gives none): one rounding step of the format's mantissa, and the same atol.
ELEMENTWISE: dict[str, tuple[float, float]] = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "float8_e4m3fn": (1.25e-1, 1e-5),
    "float8_e4m3fnuz": (1.25e-1, 1e-5),
    "float8_e4m3b11fnuz": (1.25e-1, 1e-5),
    "float8_e5m2": (2.5e-1, 1e-5),
    "float8_e5m2fnuz": (2.5e-1, 1e-5),
}

# `dot` on fp32 inputs runs on tf32 tensor cores by default in Triton (10-bit mantissa):
# the float16 margin, not float32's.
_TF32 = ELEMENTWISE["float16"]

OPS = ("elementwise", "reduction", "dot")


def tolerance(dtype, op: str = "elementwise", k: int = 1, *, tf32: bool = False) -> Tolerance:
    """The tolerance for a result of `dtype` computed by `op`.

    op: "elementwise" — the torch defaults above;
        "reduction"   — a sum (mean, norm, softmax denominator, ...) over `k` terms:
                        rtol and atol times sqrt(k);
        "dot"         — like "reduction" with `k` the inner dimension; with `tf32=True` (fp32
                        inputs on tensor cores) the float16 margin is the base.
    Integer and bool results are exact whatever the op.
    """
    if op not in OPS:
        raise ValueError(f"op must be one of {', '.join(OPS)}, got {op!r}")
    dt = np.dtype(dtype)
    name = dt.name
    if name not in ELEMENTWISE:
        if dt.kind in "biu":
            return EXACT
        raise KeyError(f"no default tolerance for dtype {name}; pass tt.Tolerance(rtol, atol)")
    rtol, atol = ELEMENTWISE[name]
    if op == "elementwise":
        return Tolerance(rtol, atol)
    if op == "dot" and tf32 and name == "float32":
        rtol, atol = max(rtol, _TF32[0]), max(atol, _TF32[1])
    scale = math.sqrt(max(1, int(k)))
    return Tolerance(rtol * scale, atol * scale)
