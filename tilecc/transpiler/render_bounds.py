"""Conditions that hold for a whole block, tested once: a register loop whose selects
(`tl.where(cond, x, y)`) have a condition of index arithmetic against scalars — `cols <
N`, `rows >= cols` — is written twice, its selects dropped in the copy that runs where
one test of scalars shows every element of the condition true.  Attention's masks hold
on every block but the last (and, causal, the diagonal ones); the select and the
comparisons behind it are most of the work between its two products there.

The test comes from the least and greatest value of each side of a comparison: linear
forms of the scalars the expression reads (`start + arange(0, n)` lies in [start, start +
n - 1]; sums, differences and products by constants combine them), written in 64 bits so
that the test itself cannot overflow.  Only expressions written inline at the loop are
read (their scalars are then in scope there) and only int32 comparisons; anything else
keeps the one loop with its selects."""

from __future__ import annotations

import operator
from dataclasses import dataclass

from tilecc.transpiler.ir import Value
from tilecc.transpiler.line_breaks import SPACE, inner, joined
from tilecc.transpiler.render_expr import ADD, MUL

# the comparisons a test covers, as C and Python spell them
_PREDICATES = {"lt": ("<", operator.lt), "le": ("<=", operator.le), "gt": (">", operator.gt),
               "ge": (">=", operator.ge)}


@dataclass(frozen=True)
class Linear:
    """sum(coefficient * scalar) + const: `terms` maps value ids to coefficients."""
    terms: tuple[tuple[int, int], ...]
    const: int

    def __add__(self, other: "Linear") -> "Linear":
        terms = dict(self.terms)
        for k, c in other.terms:
            terms[k] = terms.get(k, 0) + c
        return Linear(tuple(sorted((k, c) for k, c in terms.items() if c)),
                      self.const + other.const)

    def scaled(self, c: int) -> "Linear":
        return Linear(tuple((k, v * c) for k, v in self.terms if v * c), self.const * c)


class BlockBounds:
    """The test of a run of register statements: `test(values)` gives the C condition
    under which the selects their expressions compute can be dropped, and the select
    conditions that hold then; `exprs` (the ExprWriter) writes the scalars."""

    def __init__(self, exprs):
        self.exprs = exprs
        self.scalars: dict[int, Value] = {}

    def test(self, values: list[Value]) -> tuple[str, set[int]] | None:
        """(C condition, ids of the select conditions it proves) for the statements that
        compute `values` (their own expressions, and what those read inline), or None
        where no select among them has a condition to test."""
        facts: list[tuple[Linear, str]] = []
        proved: set[int] = set()
        for cond in self._select_conditions(values):
            got = self._all_true(cond)
            if got is not None:
                proved.add(cond.id)
                facts += [f for f in got if f not in facts]
        if not proved:
            return None
        return joined((inner(self._c_fact(f, p)) for f, p in facts), " && "), proved

    def _select_conditions(self, values: list[Value]) -> list[Value]:
        """The conditions of the selects that computing `values` evaluates, in order."""
        seen, out = set(), []
        for v in values:
            read = [v] + [x for a in (v.owner.operands if v.owner else ())
                          for x in self.exprs.read_values(a)]
            for x in read:
                o = x.owner
                if o is not None and o.kind == "where" and (x is v or x.id in self.exprs.inline):
                    cond = o.operands[0]
                    if cond.id not in seen:
                        seen.add(cond.id)
                        out.append(cond)
        return out

    def _all_true(self, cond: Value) -> list[tuple[Linear, str]] | None:
        """Facts `form pred 0` that together make every element of `cond` true."""
        o = cond.owner
        if o is None or (cond.type.is_block and cond.id not in self.exprs.inline):
            return None
        if o.kind in ("broadcast", "expand_dims"):
            return self._all_true(o.operands[0])
        if o.kind == "binary" and o.attrs["fn"] == "and":
            left, right = (self._all_true(x) for x in o.operands)
            return None if left is None or right is None else left + right
        if o.kind != "cmp" or o.attrs["pred"] not in _PREDICATES:
            return None
        x, y = o.operands
        if x.dtype.short != "i32" or y.dtype.short != "i32":
            return None
        bx, by = self._bounds(x), self._bounds(y)
        if bx is None or by is None:
            return None
        pred = o.attrs["pred"]
        if pred in ("lt", "le"):  # the greatest x against the least y
            return [(bx[1] + by[0].scaled(-1), pred)]
        return [(bx[0] + by[1].scaled(-1), pred)]  # the least x against the greatest y

    def _bounds(self, v: Value) -> tuple[Linear, Linear] | None:
        """(least, greatest) of the elements of int32 value `v`, or None."""
        o = v.owner
        if not v.type.is_block:
            if o is not None and o.kind == "const":
                c = Linear((), int(o.attrs["value"]))
                return c, c
            self.scalars[v.id] = v
            s = Linear(((v.id, 1),), 0)
            return s, s
        if o is None or v.id not in self.exprs.inline or v.dtype.short != "i32":
            return None
        if o.kind == "const":
            c = Linear((), int(o.attrs["value"]))
            return c, c
        if o.kind == "arange":
            return Linear((), o.attrs["start"]), Linear((), o.attrs["end"] - 1)
        if o.kind in ("splat", "broadcast", "expand_dims"):
            return self._bounds(o.operands[0])
        if o.kind != "binary" or o.attrs["fn"] not in ("add", "sub", "mul"):
            return None
        a, b = (self._bounds(x) for x in o.operands)
        if a is None or b is None:
            return None
        fn = o.attrs["fn"]
        if fn == "add":
            return a[0] + b[0], a[1] + b[1]
        if fn == "sub":
            return a[0] + b[1].scaled(-1), a[1] + b[0].scaled(-1)
        for (lo, hi), other in ((a, b), (b, a)):  # a product by a constant
            if not lo.terms and lo == hi:
                c = lo.const
                lo_o, hi_o = other[0].scaled(c), other[1].scaled(c)
                return (lo_o, hi_o) if c >= 0 else (hi_o, lo_o)
        return None

    def _c_fact(self, form: Linear, pred: str) -> str:
        """`form pred 0` in C, the positive terms on the left, evaluated in 64 bits."""
        sym, holds = _PREDICATES[pred]
        left = [(k, c) for k, c in form.terms if c > 0]
        right = [(k, -c) for k, c in form.terms if c < 0]
        const = form.const
        if not left and not right:
            return "true" if holds(const, 0) else "false"
        # the constant goes where it is added, so that neither side subtracts
        left_c, right_c = (const, 0) if const > 0 else (0, -const)
        return f"{self._side(left, left_c)} {sym}{SPACE}{self._side(right, right_c)}"

    def _side(self, terms: list[tuple[int, int]], const: int) -> str:
        """One side of a test: a lone scalar as it is, anything more in 64 bits."""
        wide = len(terms) > 1 or const or any(c != 1 for _, c in terms)
        parts = []
        for k, c in terms:
            v = self.scalars[k]
            text = f"static_cast<long long>({inner(self.exprs.text(v, '0'))})" if wide else \
                self.exprs.wrap(v, "0", ADD if c == 1 else MUL + 1)
            parts.append(text if c == 1 else f"{c} *{SPACE}{text}")
        if const or not parts:
            parts.append(str(const))
        return (" +" + SPACE).join(parts)
