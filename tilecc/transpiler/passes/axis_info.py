"""Contiguity, divisibility and constancy of integer and pointer values (Triton's AxisInfo).

For a one-dimensional block, `contiguity` is the length of the runs of consecutive
values (runs start at multiples of it), `divisibility` the largest power of two dividing
the first value of every run (in bytes for pointers), and `constancy` the length of the
runs of equal values.  Scalars are constant over any block.  Memory accesses read these
facts to choose vector widths and to check masks once per vector.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import gcd

from tilecc.transpiler.ir import Kernel, Op, Region, Value

HUGE = 1 << 30


@dataclass(frozen=True)
class AxisInfo:
    contiguity: int = 1
    divisibility: int = 1
    constancy: int = 1

    def clamp(self, n: int) -> "AxisInfo":
        return AxisInfo(min(self.contiguity, n), self.divisibility, min(self.constancy, n))


def _pow2_factor(v: int) -> int:
    return HUGE if v == 0 else min(HUGE, v & -v)


def info(v: Value) -> AxisInfo:
    if v.info is None:
        v.info = _default(v)
    return v.info


def _default(v: Value) -> AxisInfo:
    if not v.type.is_block:
        return AxisInfo(1, 1, HUGE)
    return AxisInfo(1, 1, 1)


def _rule(op: Op) -> AxisInfo:
    k, ops = op.kind, op.operands
    a = info(ops[0]) if ops else None
    c = info(ops[1]) if len(ops) > 1 else None
    if k == "const":
        v = op.attrs["value"]
        div = _pow2_factor(int(v)) if isinstance(v, (int, bool)) else 1
        return AxisInfo(1, div, HUGE)
    if k == "arange":
        return AxisInfo(op.attrs["end"] - op.attrs["start"], _pow2_factor(op.attrs["start"]), 1)
    if k == "splat":
        return AxisInfo(1, a.divisibility, HUGE)
    if k == "assume":
        hint = op.attrs
        return AxisInfo(hint.get("max_contiguous", a.contiguity),
                        hint.get("multiple_of", a.divisibility),
                        hint.get("max_constancy", a.constancy))
    if k == "cast" and ops[0].dtype.is_int() and op.result.dtype.is_int() \
            and not op.attrs.get("bitcast"):
        return a
    if k == "addptr":
        esize = ops[0].dtype.element_ty.itemsize
        return AxisInfo(max(gcd(a.contiguity, c.constancy), gcd(a.constancy, c.contiguity)),
                        gcd(a.divisibility, min(HUGE, c.divisibility * esize)),
                        gcd(a.constancy, c.constancy))
    if k == "binary":
        fn = op.attrs["fn"]
        const = gcd(a.constancy, c.constancy)
        if fn == "add":
            contig = max(gcd(a.contiguity, c.constancy), gcd(a.constancy, c.contiguity))
            return AxisInfo(contig, gcd(a.divisibility, c.divisibility), const)
        if fn == "sub":
            return AxisInfo(gcd(a.contiguity, c.constancy), gcd(a.divisibility, c.divisibility),
                            const)
        if fn == "mul":
            return AxisInfo(1, min(HUGE, a.divisibility * c.divisibility), const)
        return AxisInfo(1, 1, const)
    if k == "cmp":
        const = gcd(a.constancy, c.constancy)
        pred = op.attrs["pred"]
        # offs < n with offs contiguous and n constant over the run: the mask can change
        # only where a multiple of gcd(div(offs), div(n)) is crossed.
        if pred in ("lt", "le", "gt", "ge"):
            if c.constancy >= a.contiguity > 1:
                const = max(const, gcd(a.contiguity, gcd(a.divisibility, c.divisibility)))
            if a.constancy >= c.contiguity > 1:
                const = max(const, gcd(c.contiguity, gcd(a.divisibility, c.divisibility)))
        return AxisInfo(1, 1, const)
    if k in ("where", "fma", "unary", "cast", "load"):
        const = HUGE
        for v in ops:
            const = gcd(const, info(v).constancy)
        return AxisInfo(1, 1, const)
    return AxisInfo(1, 1, 1)


def analyze(kernel: Kernel) -> None:
    """Set `Value.info` on every value of the kernel."""
    for p in kernel.params:
        if p.value is None:
            continue
        t = p.value.dtype
        if t.is_ptr():
            div = 16 if p.divisible_by_16 else t.element_ty.itemsize
        else:
            div = 16 if p.divisible_by_16 else 1
        p.value.info = AxisInfo(1, div, HUGE)
    _region(kernel.body)


def _region(region: Region) -> None:
    for op in region.ops:
        for r in op.regions:
            for a in r.args:  # loop-carried values: nothing is known across iterations
                a.info = _default(a)
            _region(r)
        for res in op.results:
            res.info = _rule(op).clamp(res.type.shape[0]) if (
                op.kind not in ("for", "if", "while") and res.type.is_block) else (
                _rule(op) if op.kind not in ("for", "if", "while") else _default(res))
