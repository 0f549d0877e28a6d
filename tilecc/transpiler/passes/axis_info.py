"""Contiguity, divisibility and constancy of integer and pointer values (Triton's AxisInfo).

For each axis of a block: `contiguity` is the length of the runs of consecutive values
along it (runs start at multiples of it), `divisibility` the largest power of two dividing
the first value of every run (in bytes for pointers), and `constancy` the length of the
runs of equal values.  Scalars are constant over any block.  Memory accesses read these
facts along the axis their layout vectorizes to choose vector widths and to check masks
once per vector.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import gcd

from tilecc.transpiler.ir import Kernel, Op, Region, Value

HUGE = 1 << 30


@dataclass(frozen=True)
class AxisInfo:
    contiguity: tuple[int, ...]
    divisibility: tuple[int, ...]
    constancy: tuple[int, ...]

    @staticmethod
    def uniform(rank: int, div: int = 1, const: int = 1) -> "AxisInfo":
        return AxisInfo((1,) * rank, (div,) * rank, (const,) * rank)

    def clamp(self, shape: tuple[int, ...]) -> "AxisInfo":
        return AxisInfo(tuple(min(c, n) for c, n in zip(self.contiguity, shape)),
                        self.divisibility,
                        tuple(min(c, n) for c, n in zip(self.constancy, shape)))


def _pow2_factor(v: int) -> int:
    return HUGE if v == 0 else min(HUGE, v & -v)


def info(v: Value) -> AxisInfo:
    if v.info is None:
        v.info = _hinted(v, _default(v))
    return v.info


_HINTED_FIELD = {"max_contiguous": "contiguity", "multiple_of": "divisibility",
                 "max_constancy": "constancy"}


def _hinted(v: Value, derived: AxisInfo) -> AxisInfo:
    """`derived` with what the kernel promised of `v` (tl.multiple_of, ...: one value per
    axis) in its place, as Triton's hints replace what its analysis finds."""
    if not v.hints:
        return derived
    got = replace(derived, **{_HINTED_FIELD[k]: t for k, t in v.hints.items()})
    return got.clamp(v.type.shape) if v.type.is_block else got


def _default(v: Value) -> AxisInfo:
    rank = max(1, len(v.type.shape))
    return AxisInfo.uniform(rank, 1, 1 if v.type.is_block else HUGE)


def _zip(f, *infos: AxisInfo, field: str) -> tuple[int, ...]:
    return tuple(f(*vals) for vals in zip(*(getattr(i, field) for i in infos)))


def _gcd_all(*xs: int) -> int:
    out = 0
    for x in xs:
        out = gcd(out, x)
    return out


def _expand(i: AxisInfo, rank: int) -> AxisInfo:
    """A scalar's info (rank 1) spread over `rank` axes."""
    if len(i.contiguity) == rank:
        return i
    return AxisInfo((1,) * rank, (i.divisibility[0],) * rank, (HUGE,) * rank)


def _rule(op: Op) -> AxisInfo:
    k, ops = op.kind, op.operands
    rank = max(1, len(op.result.type.shape))
    infos = [_expand(info(v), rank) if not v.type.is_block else info(v) for v in ops]
    a = infos[0] if infos else None
    c = infos[1] if len(infos) > 1 else None
    if k == "const":
        v = op.attrs["value"]
        div = _pow2_factor(int(v)) if isinstance(v, (int, bool)) else 1
        return AxisInfo.uniform(rank, div, HUGE)
    if k == "arange":
        return AxisInfo((op.attrs["end"] - op.attrs["start"],),
                        (_pow2_factor(op.attrs["start"]),), (1,))
    if k == "splat":
        return AxisInfo((1,) * rank, (a.divisibility[0],) * rank, (HUGE,) * rank)
    if k == "broadcast":
        src = ops[0].type.shape
        return AxisInfo(
            tuple(1 if s == 1 else x for s, x in zip(src, a.contiguity)), a.divisibility,
            tuple(HUGE if s == 1 else x for s, x in zip(src, a.constancy)))
    if k == "expand_dims":
        ax = op.attrs["axis"]
        ins = lambda t, x: t[:ax] + (x,) + t[ax:]  # noqa: E731
        # Along the new axis every element starts a run, so its divisibility is that of
        # all elements: 1 as soon as they count up along some axis (rows[:, None] is
        # 0, 1, 2, ...; only rows[:, None] * 16 is divisible by 16).
        new_div = 1 if any(c > 1 for c in a.contiguity) else min(a.divisibility)
        return AxisInfo(ins(a.contiguity, 1), ins(a.divisibility, new_div),
                        ins(a.constancy, HUGE))
    if k == "permute":  # axis i is the source's axis order[i] (a transposed mask's runs)
        order = op.attrs["order"]
        return AxisInfo(*(tuple(getattr(a, f)[o] for o in order)
                          for f in ("contiguity", "divisibility", "constancy")))
    if k == "unstack":  # each batch: the source's runs along the other axes
        return AxisInfo(a.contiguity[1:], a.divisibility[1:], a.constancy[1:])
    if k == "cast" and ops[0].dtype.is_int() and op.result.dtype.is_int() \
            and not op.attrs.get("bitcast"):
        return a
    const = _zip(gcd, a, c, field="constancy") if c else None
    if k == "addptr":
        esize = ops[0].dtype.element_ty.itemsize
        contig = tuple(max(gcd(x, y), gcd(p, q)) for x, y, p, q in
                       zip(a.contiguity, c.constancy, a.constancy, c.contiguity))
        div = tuple(gcd(x, min(HUGE, y * esize)) for x, y in zip(a.divisibility, c.divisibility))
        return AxisInfo(contig, div, const)
    if k == "binary":
        fn = op.attrs["fn"]
        div = _zip(gcd, a, c, field="divisibility")
        if fn == "add":
            contig = tuple(max(gcd(x, y), gcd(p, q)) for x, y, p, q in
                           zip(a.contiguity, c.constancy, a.constancy, c.contiguity))
            return _with_offsets_folded(op, AxisInfo(contig, div, const))
        if fn == "sub":
            return _with_offsets_folded(op, AxisInfo(
                tuple(gcd(x, y) for x, y in zip(a.contiguity, c.constancy)), div, const))
        if fn == "mul":
            for x, y in ((ops[0], a), (ops[1], c)):  # times one: the other side unchanged
                if _is_one(x):
                    return c if y is a else a
            return AxisInfo((1,) * rank, tuple(min(HUGE, x * y) for x, y in
                                               zip(a.divisibility, c.divisibility)), const)
        if fn == "div" and op.operands[0].dtype.is_int():  # `//` on integers
            # x // n by a constant n dividing x's divisor is exact: (128 k) // 2 = 64 k
            n = const_int(ops[1])
            if n is not None and n > 0:
                if n == 1:
                    return a
                return AxisInfo((1,) * rank, tuple(x // n if x % n == 0 else 1
                                                   for x in a.divisibility),
                                _quotient_runs(a, c, const))
            return AxisInfo((1,) * rank, (1,) * rank, _quotient_runs(a, c, const))
        if fn in ("max", "min") and op.operands[0].dtype.is_int():
            return AxisInfo((1,) * rank, div, const)  # one operand or the other: their divisor
        if fn == "rem" and op.operands[0].dtype.is_int():
            # x % n with n the same over a run: a run of x aligned to a divisor of n does
            # not wrap (offs % M keeps 16-element runs when M % 16 == 0)
            contig = tuple(gcd(x, y) if q >= x else 1 for x, y, q in
                           zip(a.contiguity, c.divisibility, c.constancy))
            return AxisInfo(contig, div, const)
        return AxisInfo((1,) * rank, (1,) * rank, const)
    if k == "cmp":
        pred = op.attrs["pred"]
        out = list(const)
        # offs < n (offs >= n, n > offs, n <= offs) with offs contiguous and n constant over
        # the run: the mask changes only where offs reaches n, a multiple of
        # gcd(div(offs), div(n)) past the run's start.  offs <= n and offs > n change at
        # n + 1 instead, which no divisibility places on a run boundary.
        if pred in ("lt", "le", "gt", "ge"):
            x, y = (a, c) if pred in ("lt", "ge") else (c, a)  # (offs, n)
            for d in range(rank):
                if y.constancy[d] >= x.contiguity[d] > 1:
                    out[d] = max(out[d], gcd(x.contiguity[d],
                                             gcd(x.divisibility[d], y.divisibility[d])))
        return AxisInfo((1,) * rank, (1,) * rank, tuple(out))
    if k == "unary" and op.attrs["fn"] == "neg" and ops[0].dtype.is_int():
        return AxisInfo((1,) * rank, a.divisibility, a.constancy)  # -x: x's divisors
    if k in ("where", "fma", "extern", "unary", "cast", "load"):
        return AxisInfo((1,) * rank, (1,) * rank,
                        tuple(_gcd_all(*col) for col in zip(*(i.constancy for i in infos))))
    return AxisInfo.uniform(rank)


def _quotient_runs(x: AxisInfo, n: AxisInfo, const: tuple[int, ...]) -> tuple[int, ...]:
    """Constancy of x // n: a run of x counting up from a multiple of L, with n a multiple
    of L and the same over it, crosses no multiple of n inside an aligned L-run, so the
    quotient holds still over L = gcd(run, divisor of its start, divisor of n) elements
    (`(start + arange(B)) // HW` is one channel over each 8 registers when HW % 8 == 0)."""
    return tuple(max(k, gcd(c, gcd(d, e)) if q >= c > 1 else k) for k, c, d, e, q in
                 zip(const, x.contiguity, x.divisibility, n.divisibility, n.constancy))


def analyze(kernel: Kernel) -> None:
    """Set `Value.info` on every value of the kernel."""
    for p in kernel.params:
        if p.value is None:
            continue
        t = p.value.dtype
        if t.is_ptr():
            div = 16 if p.divisible_by_16 else t.element_ty.itemsize
        else:
            div = 16 if p.divisible_by_16 else p.divisor
        p.value.info = _hinted(p.value, AxisInfo((1,), (div,), (HUGE,)))
    _region(kernel.body)


_NO_RULE = {"for", "if", "while", "reduce", "scan", "split", "reshape", "join", "stack",
            "atomic", "atomic_cas", "convert", "flip", "cat", "gather", "histogram", "map"}


def _with_offsets_folded(op: Op, found: AxisInfo) -> AxisInfo:
    """`found` for an integer sum or difference, bettered by what holds of it as a value
    plus the constants added and taken along the way folded into one: `t - 3 + 3` is `t`,
    whose 16-element runs `t - 3` had lost (a shifted load of a causal convolution, read
    8 bytes at a time where Triton's arithmetic folding let it read 16)."""
    if not op.result.dtype.is_int():
        return found
    base, total = op.result, 0
    while True:  # peel `x + k`, `k + x` and `x - k`
        o = base.owner
        if o is None or o.kind != "binary" or o.attrs["fn"] not in ("add", "sub"):
            break
        right, left = const_int(o.operands[1]), const_int(o.operands[0])
        if right is not None:
            total, base = total + (right if o.attrs["fn"] == "add" else -right), o.operands[0]
        elif left is not None and o.attrs["fn"] == "add":
            total, base = total + left, o.operands[1]
        else:
            break
    if base is op.result:
        return found
    rank = len(found.divisibility)
    b = _expand(info(base), rank) if not base.type.is_block else info(base)
    if len(b.divisibility) != rank:
        return found
    div = tuple(gcd(x, _pow2_factor(abs(total))) for x in b.divisibility)
    return AxisInfo(*(tuple(max(x, y) for x, y in zip(f, g)) for f, g in (
        (found.contiguity, b.contiguity), (found.divisibility, div),
        (found.constancy, b.constancy))))


def _is_one(v: Value) -> bool:
    return const_int(v) == 1


def const_int(v: Value) -> int | None:
    """The value of an integer constant (splat or broadcast too), else None."""
    op = v.owner
    while op is not None and op.kind in ("splat", "broadcast"):
        op = op.operands[0].owner
    if op is None or op.kind != "const" or isinstance(op.attrs["value"], bool) or \
            not isinstance(op.attrs["value"], int):
        return None
    return op.attrs["value"]


def _meet(x: AxisInfo, y: AxisInfo) -> AxisInfo:
    """What holds of a value that is sometimes x, sometimes y."""
    return AxisInfo(*(tuple(gcd(p, q) for p, q in zip(getattr(x, f), getattr(y, f)))
                      for f in ("contiguity", "divisibility", "constancy")))


def _region(region: Region) -> None:
    for op in region.ops:
        if op.kind == "for":
            _for(op)
            continue
        for r in op.regions:
            for a in r.args:  # while loops: nothing is known across iterations
                a.info = _hinted(a, _default(a))
            _region(r)
        for res in op.results:
            if op.kind in _NO_RULE:
                got = _default(res)
            else:
                got = _rule(op)
                got = got.clamp(res.type.shape) if res.type.is_block else got
            res.info = _hinted(res, got)


def _for(op: Op) -> None:
    """A loop-carried value (`a_ptrs += BLOCK_K * stride`) is its initial value or any
    update of it: iterate from the initial facts to a fixed point (facts only weaken, and
    each is a power of two, so this ends within a few rounds)."""
    body = op.regions[0]
    lo, step = info(op.operands[0]), info(op.operands[2])
    iv = body.args[0]
    iv.info = _hinted(iv, AxisInfo((1,), (gcd(lo.divisibility[0], step.divisibility[0]),),
                                   (HUGE,)))
    inits = op.operands[3:]
    for arg, init in zip(body.args[1:], inits):
        arg.info = _hinted(arg, info(init) if init.type.shape == arg.type.shape
                           else _default(arg))
    for _ in range(8):
        _region(body)
        changed = False
        for arg, y in zip(body.args[1:], body.yields):
            met = _hinted(arg, _meet(arg.info, info(y)))
            if met != arg.info:
                arg.info, changed = met, True
        if not changed:
            break
    else:  # not settled: assume nothing (but what the kernel promised)
        for arg in body.args[1:]:
            arg.info = _hinted(arg, _default(arg))
        _region(body)
    for res, arg in zip(op.results, body.args[1:]):
        res.info = _hinted(res, arg.info)
