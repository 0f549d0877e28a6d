"""Random typed expressions for tilecc.testing.random_kernels: Triton's dtypes and
promotion rules written out (semantic.computation_type_impl, integer_promote_impl, the
reductions' result types), and `Gen`, which draws expression trees whose every node carries
its Python text, its Triton dtype and its NumPy evaluation.  Nothing here uses tilecc."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

__all__ = ["Undefined", "DT", "DTYPES", "D", "computation_type", "literal_type",
           "minmax_type", "cast_value", "Node", "Gen", "RTOL", "SUM_TO",
           "CUMSUM_TO", "nudgeable"]


class Undefined(Exception):
    """The program computes something whose value Triton leaves undefined."""


# --- dtypes and Triton's promotion rules ---------------------------------------------------

@dataclass(frozen=True)
class DT:
    name: str      # tl name: "int32", "float16", ...
    kind: str      # "bool", "int", "uint", "float"
    bits: int
    np: Any
    sig: str       # signature spelling: "i32", "fp16"

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_int(self) -> bool:
        return self.kind in ("int", "uint", "bool")


def _dt(name, kind, bits, npd, sig):
    return DT(name, kind, bits, np.dtype(npd), sig)


DTYPES = {d.name: d for d in [
    _dt("int1", "bool", 1, np.bool_, "i1"),
    _dt("int8", "int", 8, np.int8, "i8"), _dt("int16", "int", 16, np.int16, "i16"),
    _dt("int32", "int", 32, np.int32, "i32"), _dt("int64", "int", 64, np.int64, "i64"),
    _dt("uint8", "uint", 8, np.uint8, "u8"), _dt("uint16", "uint", 16, np.uint16, "u16"),
    _dt("uint32", "uint", 32, np.uint32, "u32"), _dt("uint64", "uint", 64, np.uint64, "u64"),
    _dt("float16", "float", 16, np.float16, "fp16"),
    _dt("float32", "float", 32, np.float32, "fp32"),
    _dt("float64", "float", 64, np.float64, "fp64"),
]}
try:  # bfloat16 where NumPy can hold it (ml_dtypes ships with tilecc's test dependencies)
    import ml_dtypes

    DTYPES["bfloat16"] = _dt("bfloat16", "float", 16, ml_dtypes.bfloat16, "bf16")
except ImportError:  # pragma: no cover
    pass
D = DTYPES
LOADABLE = [n for n in DTYPES if n != "int1"]
_KIND_RANK = {"bool": 0, "uint": 1, "int": 1, "float": 2}  # Triton's kind(): literals of a
# lower or equal kind do not take part in promotion


def integer_promote(a: DT, b: DT) -> DT:
    if a.kind == b.kind or "bool" in (a.kind, b.kind):
        return a if a.bits > b.bits else b
    if a.kind == "uint":
        return a if a.bits >= b.bits else b
    return b if b.bits >= a.bits else a


def computation_type(a: DT, a_lit: bool, b: DT, b_lit: bool, div_or_mod: bool) -> DT:
    """Triton 3.6 semantic.computation_type_impl."""
    if a_lit != b_lit:
        lit, ten = (a, b) if a_lit else (b, a)
        if _KIND_RANK[lit.kind] <= _KIND_RANK[ten.kind]:
            if div_or_mod and ten.name in ("float16", "bfloat16"):
                return D["float32"]
            return ten
    names = (a.name, b.name)
    if "float64" in names:
        return D["float64"]
    if "float32" in names:
        return D["float32"]
    if "float16" in names:
        return D["float32"] if div_or_mod else D["float16"]
    if "bfloat16" in names:
        if div_or_mod or names != ("bfloat16", "bfloat16"):
            return D["float32"]
        return D["bfloat16"]
    if div_or_mod and (a.kind == "uint") != (b.kind == "uint"):  # int1 counts as signed
        raise TypeError("mixed signedness in / or %")
    return integer_promote(a, b)


def minmax_operands_type(a: DT, b: DT) -> DT:
    """tl.minimum / tl.maximum: Python numbers become tensors of their literal type first
    (so they take part in promotion: minimum(x_u8, 7) is int32), bfloat16 goes to float32."""
    a, b = (D["float32"] if t.name == "bfloat16" else t for t in (a, b))
    return computation_type(a, False, b, False, False)


def literal_type(v) -> DT:
    if isinstance(v, bool):
        return D["int1"]
    if isinstance(v, int):
        return D["int32"] if -2**31 <= v < 2**31 else D["int64"]
    return D["float32"]


# --- expression nodes ------------------------------------------------------------------------

@dataclass
class Node:
    text: str
    dt: DT
    ev: Callable[[dict], Any]  # the NumPy value for one program
    shape: str = "full"        # "full", "row" ([M, 1]), "col" ([1, N]), "scalar"
    literal: bool = False      # a Python number (takes part in promotion as a literal)
    exact: bool = True         # the same bits on every correct implementation
    rounds: bool = True        # computed with a rounding of its own (a cast's is its input's)


def _as(v, dt: DT):
    return np.asarray(v).astype(dt.np)


def _erf(t):
    import math

    return np.vectorize(math.erf, otypes=[np.float64])(t)


def _fitting_literals(nodes, dt: DT):
    """`nodes`, an integer literal that `dt` (an integer type it meets) cannot hold replaced
    by one it can: Triton rejects `u8_block + 500` and `tl.where(c, u8_block, 500)`
    ("Scalar 500 is out of range for type uint8")."""
    if not dt.is_int or dt.kind == "bool":
        return nodes
    info = np.iinfo(dt.np)
    out = []
    for n in nodes:
        v = n.ev({}) if n.literal else None
        if isinstance(v, int) and not info.min <= v <= info.max:
            v = v % (info.max + 1)
            n = Node(repr(v), literal_type(v), lambda env, v=v: v, "scalar", literal=True)
        out.append(n)
    return tuple(out)


def _check_int_range(exact_values, dt: DT, what: str):
    """Signed 32/64-bit overflow is undefined in the generated C."""
    if dt.kind == "int" and dt.bits >= 32:
        info = np.iinfo(dt.np)
        arr = np.asarray(exact_values, dtype=object)
        if arr.size and (arr.min() < info.min or arr.max() > info.max):
            raise Undefined(f"{dt.name} overflow in {what}")


def _wrap(exact_values, dt: DT):
    """Python ints wrapped to dt's width (two's complement)."""
    bits = dt.bits
    mask = (1 << bits) - 1
    f = np.frompyfunc(lambda v: v & mask if dt.kind == "uint"
                      else ((v & mask) ^ (1 << (bits - 1))) - (1 << (bits - 1)), 1, 1)
    return np.asarray(f(np.asarray(exact_values, dtype=object)), dtype=object).astype(dt.np)


def _ints(v):
    return np.asarray(v).astype(object)


def _trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _trunc_mod(a, b):
    return a - b * _trunc_div(a, b)


_VTRUNC_DIV = np.frompyfunc(_trunc_div, 2, 1)
_VTRUNC_MOD = np.frompyfunc(_trunc_mod, 2, 1)


def cast_value(v, src: DT, dst: DT):
    """tl `.to(dst)` of NumPy values v of dtype src."""
    v = np.asarray(v)
    if dst.kind == "bool":
        return v != 0
    if src.is_float and dst.is_int:
        f = v.astype(np.float64)
        if np.isnan(f).any():
            raise Undefined("NaN converted to an integer")
        t = np.trunc(f)
        info = np.iinfo(dst.np)
        # the bounds as exact floats: float(2**64 - 1) is 2**64, which would pass
        if t.size and (t.min() < info.min or t.max() >= 2.0 ** (dst.bits - (dst.kind == "int"))):
            raise Undefined("out-of-range float converted to an integer")
        return t.astype(dst.np)
    if src.is_int and dst.is_int:
        return _wrap(_ints(v).astype(object) if v.dtype != object else v, dst) \
            if v.dtype.kind != "b" else v.astype(dst.np)
    if src.name == "bfloat16" or dst.name == "bfloat16":
        return v.astype(np.float32).astype(dst.np) if src.is_float or src.bits <= 16 \
            else v.astype(np.float64).astype(np.float32).astype(dst.np)
    return v.astype(dst.np)


# ulps of each float type (the distance from 1 to the next value)
ULP = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23, "float64": 2.0**-52}
NUDGE_ULPS = 2  # how far `nudgeable` moves a rounded value: a few ulps, as two libms differ


def nudgeable(node: Node) -> Node:
    """`node`, whose NumPy value moves by NUDGE_ULPS ulps up or down when the evaluation
    asks (`env["nudge"]` +1 or -1) and the value may be rounded: evaluating a program so
    shows which outputs hang on the last bits of an intermediate value (sin of 1e16 after
    an fma, floor of 2.9999999) — ill-conditioned outputs, which two correct
    implementations may give differently (Program.ill_conditioned).  Values that are
    exact sums and products of the inputs (small multiples of 1/16: the inputs are
    quarters) are left as they are, and so are casts (their rounding is their input's)."""
    if node.exact or not node.dt.is_float or not node.rounds:
        return node
    inner, factor = node.ev, NUDGE_ULPS * ULP[node.dt.name]
    # up to where the type holds every integer: past it, rounding is of whole units
    below = 2.0 ** (round(-np.log2(ULP[node.dt.name])) + 1)

    def ev(env, inner=inner, dt=node.dt):
        v = inner(env)
        k = env.get("nudge", 0)
        if not k:
            return v
        x = np.asarray(v).astype(np.float64)
        with np.errstate(invalid="ignore"):
            dyadic = (np.abs(x) < below) & (x * 16 == np.round(x * 16))
        return np.asarray(np.where(dyadic, x, x * (1 + k * factor))).astype(dt.np)
    return Node(node.text, node.dt, ev, node.shape, node.literal, node.exact)


class Gen:
    """Builds one program's expression trees; `rng` decides everything."""

    def __init__(self, rng: random.Random, rank: int, M: int = 1, N: int = 1,
                 descriptors: bool = False):
        self.rng = rng
        self.rank = rank
        self.M, self.N = M, N
        # contiguous loads read through tensor descriptors (tl.make_tensor_descriptor) of
        # the whole rows inside `n` (rank 2) or of the first n elements (rank 1), padding
        # 0; the same draws as without, so a seed's program is otherwise the same
        self.descriptors = descriptors
        self.loads: list[tuple[str, DT, str, Any]] = []  # (param, dtype, access, other)
        self.scalars: list[tuple[str, DT, int]] = []
        self.stmts: list[str] = []
        self.names = 0
        self.sum_rtol = 0.0  # float sums' own error: their order is the implementation's

    # leaves
    def load(self, shape: str) -> Node:
        rng = self.rng
        dt = D[rng.choice(LOADABLE)]
        i = len(self.loads)
        other = rng.choice([0, 1, 2, -1] if dt.kind != "uint" else [0, 1, 3])
        other = float(other) if dt.is_float and rng.random() < 0.5 else other
        param = f"in{i}_ptr"
        var = f"x{i}"
        access = shape
        if shape == "full":
            # how the pointers run: contiguous, every other element, one element off the
            # alignment, or down the columns (each a different memory-access plan)
            access = rng.choice(["full", "full", "full:stride2", "full:shift1"]
                                + (["full:trans"] if self.rank == 2 else []))
            where = {"full": "offs", "full:stride2": "offs * 2", "full:shift1": "offs + 1",
                     "full:trans": "pid * (M * N) + rm[:, None] + rn[None, :] * M"}[access]
            if access == "full" and self.descriptors:
                access = "full:desc"
                if self.rank == 2:
                    self.stmts.append(f"d{i} = tl.make_tensor_descriptor({param}, [n // N, N], "
                                      "[N, 1], [M, N])")
                    self.stmts.append(f"{var} = d{i}.load([pid * M, 0])")
                else:
                    self.stmts.append(f"d{i} = tl.make_tensor_descriptor({param}, [n], [1], "
                                      "[N])")
                    self.stmts.append(f"{var} = d{i}.load([pid * N])")
            else:
                self.stmts.append(f"{var} = tl.load({param} + {where}, mask=mask, "
                                  f"other={other!r})")
        self.loads.append((param, dt, access, other))
        if shape == "full":
            pass  # written above
        elif shape == "row":  # one value per row, broadcast along the columns
            self.stmts.append(f"{var} = tl.load({param} + pid * M + rm, mask=rm < rows, "
                              f"other={other!r})[:, None]")
        elif shape == "col":
            self.stmts.append(f"{var} = tl.load({param} + rn)[None, :]")
        else:
            self.stmts.append(f"{var} = tl.load({param} + pid)")

        def ev(env, param=param, dt=dt, shape=shape, other=other):
            return env["loads"][param]
        return Node(var, dt, ev, shape)

    def scalar_arg(self) -> Node:
        i = len(self.scalars)
        dt = D["int32"]  # a runtime int is i32 unless its value needs 64 bits
        value = self.rng.choice([2, 3, 5, 7, -3, 100, -100])
        name = f"s{i}"
        self.scalars.append((name, dt, value))
        return Node(name, dt, lambda env, v=value, dt=dt: dt.np.type(v), "scalar")

    def literal(self, want_float: bool | None = None) -> Node:
        rng = self.rng
        if want_float if want_float is not None else rng.random() < 0.4:
            v = rng.choice([0.5, 1.5, 2.0, -0.25, 3.0, 0.0])
        else:
            v = rng.choice([0, 1, 2, 3, 5, 7, 100])
        return Node(repr(v), literal_type(v), lambda env, v=v: v, "scalar", literal=True)

    def leaf(self) -> Node:
        r = self.rng.random()
        if r < 0.55:
            return self.load("full")
        if r < 0.7 and self.rank == 2:
            return self.load(self.rng.choice(["row", "col"]))
        if r < 0.8:
            return self.scalar_arg() if self.rng.random() < 0.5 else self.load("scalar")
        return self.literal()

    # composite
    def expr(self, depth: int) -> Node:
        if depth <= 0:
            return self.leaf()
        r = self.rng.random()
        if r < 0.05:
            node = self.constant()
        elif r < 0.1:
            node = self.inner_reduce(depth)
        elif r < 0.13:
            node = self.join_split(depth)
        elif r < 0.16:
            node = self.fma(depth)
        elif r < 0.19:
            node = self.round_trip(depth)
        elif r < 0.4:
            node = self.binary(depth)
        elif r < 0.5:
            node = self.compare_where(depth)
        elif r < 0.62:
            node = self.cast(depth)
        elif r < 0.72:
            node = self.minmax(depth)
        elif r < 0.84:
            node = self.math(depth)
        elif r < 0.9:
            node = self.unary(depth)
        else:
            node = self.leaf()
        if not node.literal and node.shape != "scalar" and self.rng.random() < 0.3:
            self.names += 1
            name = f"t{self.names}"
            self.stmts.append(f"{name} = {node.text}")
            node = Node(name, node.dt, node.ev, node.shape, node.literal, node.exact,
                        node.rounds)
        return nudgeable(node)

    def block_shape(self) -> str:
        return "(M, N)" if self.rank == 2 else "(N,)"

    def full(self, n: Node) -> Node:
        """`n` broadcast to the whole block."""
        if n.shape == "full":
            return n
        return Node(f"tl.broadcast_to({n.text}, {self.block_shape()})", n.dt, n.ev, "full",
                    exact=n.exact)

    def constant(self) -> Node:
        """Constant sub-expressions: Python arithmetic on literals stays a literal (constexpr
        folding, with Python's semantics), tl functions of literals are scalar tensors."""
        rng = self.rng
        a, b = self.literal(), self.literal()
        kind = rng.choice(["arith", "arith", "minmax", "math", "neg"])
        if kind == "neg":
            v = -a.ev({})
            return Node(f"(-{a.text})", literal_type(v), lambda env, v=v: v, "scalar",
                        literal=True)
        if kind == "arith":
            x, y = a.ev({}), b.ev({})
            ops = ["+", "-", "*"] + (["//", "%"] if isinstance(x, int) and isinstance(y, int)
                                     and y != 0 else []) + (["/"] if y != 0 else [])
            op = rng.choice(ops)
            v = eval(f"x {op} y")  # what Python computes: constexpr folding
            return Node(f"({a.text} {op} {b.text})", literal_type(v), lambda env, v=v: v,
                        "scalar", literal=True)
        if kind == "minmax":
            fn = rng.choice(["maximum", "minimum"])
            ct = minmax_operands_type(a.dt, b.dt)
            v = getattr(np, fn)(ct.np.type(a.ev({})), ct.np.type(b.ev({})))
            return Node(f"tl.{fn}({a.text}, {b.text})", ct, lambda env, v=v, ct=ct: ct.np.type(v),
                        "scalar")
        fn = rng.choice(["exp", "sqrt", "abs"])
        x = float(a.ev({}))
        with np.errstate(over="ignore"):  # tl.exp(100.0) is inf in fp32, as on the GPU
            v = np.float32({"exp": np.exp, "sqrt": np.sqrt, "abs": np.abs}[fn](
                np.float32(abs(x))))
        text = f"tl.{fn}({abs(x)!r})"
        return Node(text, D["float32"], lambda env, v=v: v, "scalar", exact=fn == "abs")

    def inner_reduce(self, depth: int) -> Node:
        """A reduction inside the expression, broadcast back: tl.sum(e, axis=1)[:, None]."""
        rng = self.rng
        e = self.full(self._not_literal(depth - 1))
        if e.dt.kind == "bool":
            return e
        fn = rng.choice(["sum", "max", "min"]) if e.exact else "sum"
        axis = rng.choice([0, 1]) if self.rank == 2 else 0
        out = D[SUM_TO.get(e.dt.name, e.dt.name)] if fn == "sum" else minmax_type(e.dt)
        if fn == "sum" and out.is_float:
            self.sum_rtol = max(self.sum_rtol, sum_rtol(out, block_len(self, axis)))
        text = f"tl.{fn}({e.text}, axis={axis})"
        if self.rank == 2:
            text += "[:, None]" if axis == 1 else "[None, :]"
            shape = "row" if axis == 1 else "col"
        else:
            shape = "scalar"
        block = (self.M, self.N) if self.rank == 2 else (self.N,)

        def ev(env, e=e, fn=fn, axis=axis, out=out):
            x = np.broadcast_to(np.asarray(e.ev(env)).astype(e.dt.np), block)
            if fn == "sum":
                x = cast_value(x, e.dt, out)
                if out.is_int:
                    r = _ints(x).sum(axis=axis)
                    _check_int_range(r, out, "sum")
                    r = _wrap(r, out)
                else:
                    r = x.astype(np.float64).sum(axis=axis).astype(out.np)
            else:
                if out.is_float and np.isnan(x.astype(np.float64)).any():
                    raise Undefined("NaN into a max/min reduction")
                r = getattr(cast_value(x, e.dt, out), fn)(axis=axis)
            r = np.asarray(r)
            if self.rank == 2:
                r = r[:, None] if axis == 1 else r[None, :]
            return r
        return Node(text, out, ev, shape, exact=e.exact and (fn != "sum" or out.is_int))

    def join_split(self, depth: int) -> Node:
        """tl.split(tl.join(a, b))[k]: a round trip through a block with a new last axis."""
        a = self.full(self._not_literal(depth - 1))
        b = self.full(self._not_literal(depth - 1))
        k = self.rng.choice([0, 1])
        text = f"tl.split(tl.join({a.text}, {b.text}.to(tl.{a.dt.name})))[{k}]"
        if k == 0:
            return Node(text, a.dt, a.ev, "full", exact=a.exact)
        return Node(text, a.dt, lambda env, a=a, b=b: cast_value(b.ev(env), b.dt, a.dt), "full",
                    exact=b.exact)

    def round_trip(self, depth: int) -> Node:
        """Shape changes that give the block back: permutes and reshapes through shared
        memory, each a chance to misplace an element."""
        a = self.full(self._not_literal(depth - 1))
        if self.rank == 2:
            text = self.rng.choice([
                f"tl.trans(tl.trans({a.text}))",
                f"tl.reshape(tl.reshape({a.text}, (M * N,)), (M, N))",
                f"tl.reshape(tl.ravel({a.text}), (M, N))",
                f"tl.permute(tl.reshape({a.text}, (M, N, 1)), (2, 0, 1)).reshape(M, N)"])
        else:
            text = self.rng.choice([f"tl.reshape(tl.reshape({a.text}, (2, N // 2)), (N,))",
                                    f"tl.ravel(tl.trans(tl.reshape({a.text}, (1, N))))"])
        return Node(text, a.dt, a.ev, "full", exact=a.exact)

    def fma(self, depth: int) -> Node:
        xs = [self._not_literal(depth - 1) for _ in range(3)]
        ct = D["float32"] if any(x.dt.bits == 16 or x.dt.is_int for x in xs) else \
            max((x.dt for x in xs), key=lambda d: d.bits)
        args = [f"{x.text}.to(tl.{ct.name})" if x.dt != ct else x.text for x in xs]

        def ev(env, xs=xs, ct=ct):
            a, b, c = (np.asarray(cast_value(x.ev(env), x.dt, ct)).astype(np.float64)
                       for x in xs)
            return np.asarray(a * b + c).astype(ct.np)
        return Node(f"tl.fma({', '.join(args)})", ct, ev, self._shape(*xs), exact=False)

    def _shape(self, *nodes: Node) -> str:
        shapes = {n.shape for n in nodes} - {"scalar"}
        if not shapes:
            return "scalar"
        if len(shapes) == 1:
            return shapes.pop()
        return "full"

    def _not_literal(self, depth: int) -> Node:
        for _ in range(20):
            n = self.expr(depth)
            if not n.literal:
                return n
        return self.load("full")

    def binary(self, depth: int) -> Node:
        rng = self.rng
        a = self.expr(depth - 1)
        b = self.expr(depth - 1) if not a.literal else self._not_literal(depth - 1)
        if rng.random() < 0.5:
            a, b = b, a
        ops = ["+", "-", "*"]
        if a.dt.is_float or b.dt.is_float:
            ops += ["/"]
        else:
            ops += ["/", "//", "%", "&", "|", "^", "<<", ">>"]
        op = rng.choice(ops)
        div_or_mod = op in ("/", "//", "%")
        try:
            ct = computation_type(a.dt, a.literal, b.dt, b.literal, div_or_mod)
        except TypeError:
            op, div_or_mod = "+", False
            ct = computation_type(a.dt, a.literal, b.dt, b.literal, False)
        if ct.kind == "bool" and op not in ("&", "|", "^"):
            return a if not a.literal else b
        if ct.kind == "uint" and ((a.literal and a.ev({}) < 0) or (b.literal and b.ev({}) < 0)):
            # Triton rejects a negative literal with an unsigned value: use its magnitude
            a, b = (Node(f"({-n.ev({})!r})", n.dt, lambda env, v=-n.ev({}): v, "scalar",
                         literal=True) if n.literal and n.ev({}) < 0 else n for n in (a, b))
        a, b = _fitting_literals((a, b), ct)
        out = D["float32"] if op == "/" and ct.is_int else ct
        if op in ("//", "%") and b.literal and b.ev({}) == 0:
            op = "+"
        exact = a.exact and b.exact and not out.is_float
        text = f"({a.text} {op} {b.text})"

        def ev(env, a=a, b=b, ct=ct, op=op, out=out):
            x, y = a.ev(env), b.ev(env)
            x = np.asarray(x).astype(ct.np) if not a.literal else ct.np.type(x)
            y = np.asarray(y).astype(ct.np) if not b.literal else ct.np.type(y)
            x, y = np.asarray(x), np.asarray(y)
            if op == "/":
                if ct.is_int:
                    x, y = x.astype(np.float32), y.astype(np.float32)
                return np.asarray(x / y).astype(out.np)
            if ct.is_float:
                return np.asarray({"+": np.add, "-": np.subtract, "*": np.multiply}[op](x, y)
                                  ).astype(ct.np)
            xi, yi = _ints(x), _ints(y)
            if op in ("//", "%"):
                if (yi == 0).any():
                    raise Undefined("integer division by zero")
                exact_v = (_VTRUNC_DIV if op == "//" else _VTRUNC_MOD)(*np.broadcast_arrays(xi, yi))
                _check_int_range(exact_v, ct, op)
                return _wrap(exact_v, ct)
            if op in ("<<", ">>"):
                if ((yi < 0) | (yi >= ct.bits)).any():
                    raise Undefined("shift amount out of range")
                if op == "<<":
                    return _wrap(np.frompyfunc(lambda p, q: p << q, 2, 1)(xi, yi), ct)
                # arithmetic or logical after the block operand's own signedness (the left
                # one, or the right one beside a literal), on the promoted type's bits
                own = b.dt if a.literal else a.dt
                bits = ct.bits
                if own.kind == "int":
                    def shr(p, q):
                        p &= (1 << bits) - 1
                        return (p - (1 << bits) if p >> (bits - 1) else p) >> q
                else:
                    def shr(p, q):
                        return (p & ((1 << bits) - 1)) >> q
                return _wrap(np.frompyfunc(shr, 2, 1)(xi, yi), ct)
            fn = {"+": lambda p, q: p + q, "-": lambda p, q: p - q, "*": lambda p, q: p * q,
                  "&": lambda p, q: p & q, "|": lambda p, q: p | q, "^": lambda p, q: p ^ q}[op]
            exact_v = np.frompyfunc(fn, 2, 1)(xi, yi)
            _check_int_range(exact_v, ct, op)
            return _wrap(exact_v, ct) if ct.kind != "bool" else np.asarray(exact_v).astype(bool)
        return Node(text, out, ev, self._shape(a, b), exact=exact)

    def compare_where(self, depth: int, cond_only: bool = False) -> Node:
        rng = self.rng
        # comparisons only of exact values: a value within rounding of the other may compare
        # either way on two correct implementations
        for _ in range(10):
            a = self._not_literal(depth - 1)
            if a.exact:
                break
        else:
            a = self.load("full")
        b = self.literal(want_float=a.dt.is_float) if rng.random() < 0.5 else self.load("full")
        if a.dt.kind == "uint" and b.literal and b.ev({}) < 0:
            b = self.literal(False)
        op = rng.choice(["<", "<=", ">", ">=", "==", "!="])
        ct = computation_type(a.dt, False, b.dt, b.literal, False)

        def cond_ev(env, a=a, b=b, ct=ct, op=op):
            x = np.asarray(a.ev(env)).astype(ct.np)
            y = b.ev(env)
            y = ct.np.type(y) if b.literal else np.asarray(y).astype(ct.np)
            return {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
                    "==": np.equal, "!=": np.not_equal}[op](x, y)
        cond = Node(f"({a.text} {op} {b.text})", D["int1"], cond_ev, self._shape(a, b))
        if rng.random() < 0.3:  # combined with another condition
            other = self.compare_where(depth - 1, cond_only=True) if depth > 1 else None
            if other is not None:
                lop = rng.choice(["&", "|", "^"])
                fn = {"&": np.logical_and, "|": np.logical_or, "^": np.logical_xor}[lop]
                cond = Node(f"({cond.text} {lop} {other.text})", D["int1"],
                            lambda env, c=cond, o=other, fn=fn: fn(c.ev(env), o.ev(env)),
                            self._shape(cond, other))
        if cond_only:
            return cond
        if rng.random() < 0.3:  # the int1 itself, widened
            return Node(f"{cond.text}.to(tl.int32)", D["int32"],
                        lambda env, c=cond: np.asarray(c.ev(env)).astype(np.int32), cond.shape)
        return self.where(cond, depth)

    def where(self, cond: Node, depth: int) -> Node:
        """tl.where(cond, x, y) of two new expressions."""
        x = self.expr(depth - 1)
        y = self.expr(depth - 1)
        # tl.where promotes its two values like arithmetic does
        rt = computation_type(x.dt, x.literal, y.dt, y.literal, False)
        if x.literal and y.literal:
            rt = literal_type(x.ev({}) if x.dt.is_float else y.ev({}))
        if rt.kind == "uint" and any(n.literal and n.ev({}) < 0 for n in (x, y)):
            # Triton rejects a negative literal beside an unsigned value: use its magnitude
            x, y = (Node(f"({-n.ev({})!r})", n.dt, lambda env, v=-n.ev({}): v, "scalar",
                         literal=True) if n.literal and n.ev({}) < 0 else n for n in (x, y))
        x, y = _fitting_literals((x, y), rt)

        def ev(env, cond=cond, x=x, y=y, rt=rt):
            return np.where(cond.ev(env), np.asarray(x.ev(env)).astype(rt.np),
                            np.asarray(y.ev(env)).astype(rt.np)).astype(rt.np)
        return Node(f"tl.where({cond.text}, {x.text}, {y.text})", rt, ev,
                    self._shape(cond, x, y), exact=x.exact and y.exact)

    def cast(self, depth: int) -> Node:
        a = self._not_literal(depth - 1)
        dst = D[self.rng.choice(LOADABLE)]
        if a.dt.is_float and dst.is_int and not a.exact:
            dst = D[self.rng.choice(["float16", "float32", "float64"])]

        def ev(env, a=a, dst=dst):
            return cast_value(a.ev(env), a.dt, dst)
        exact = a.exact and not (dst.is_float and a.dt.bits > dst.bits and False)
        return Node(f"{a.text}.to(tl.{dst.name})", dst, ev, a.shape, exact=exact, rounds=False)

    def minmax(self, depth: int) -> Node:
        a = self._not_literal(depth - 1)
        b = self.expr(depth - 1)
        if a.dt.kind == "uint" and b.literal and b.ev({}) < 0:
            b = self.literal(False)
        fn = self.rng.choice(["maximum", "minimum"])
        ct = minmax_operands_type(a.dt, b.dt)

        def ev(env, a=a, b=b, ct=ct, fn=fn):
            x = np.asarray(a.ev(env)).astype(ct.np)
            y = np.asarray(b.ev(env)).astype(ct.np)
            if ct.is_float and (np.isnan(x).any() or np.isnan(y).any()):
                raise Undefined("NaN into tl.minimum/maximum")
            return getattr(np, fn)(x, y).astype(ct.np)
        return Node(f"tl.{fn}({a.text}, {b.text})", ct, ev, self._shape(a, b),
                    exact=a.exact and b.exact)

    def math(self, depth: int) -> Node:
        a = self._not_literal(depth - 1)
        fn = self.rng.choice(["exp", "log", "sqrt", "sin", "cos", "abs", "exp2", "floor", "ceil",
                              "log2", "rsqrt", "erf", "sigmoid"])
        if fn != "abs" and (a.dt.is_int or a.dt.bits == 16):  # Triton's math takes fp32/fp64
            a = Node(f"{a.text}.to(tl.float32)", D["float32"],
                     lambda env, a=a: cast_value(a.ev(env), a.dt, D["float32"]), a.shape,
                     exact=a.exact)
        if fn in ("log", "sqrt", "log2", "rsqrt"):  # on a safe domain: no NaN
            inner = f"(tl.abs({a.text}) + 1)"
        elif fn in ("exp", "exp2"):  # and no overflow
            inner = f"tl.minimum({a.text}, 8)"
        else:
            inner = a.text
        out = a.dt

        def ev(env, a=a, fn=fn, out=out):
            x = np.asarray(a.ev(env))
            if fn == "abs":
                if out.is_int:
                    return np.abs(x).astype(out.np)  # wraps INT_MIN like the hardware
                return np.abs(x)
            f = x.astype(np.float64 if out.name == "float64" else np.float32)
            if fn in ("log", "sqrt", "log2", "rsqrt"):
                f = np.abs(f) + f.dtype.type(1)
            elif fn in ("exp", "exp2"):
                if np.isnan(f).any():
                    raise Undefined("NaN into tl.minimum")
                f = np.minimum(f, 8)
            r = {"exp": np.exp, "log": np.log, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos,
                 "exp2": np.exp2, "floor": np.floor, "ceil": np.ceil, "log2": np.log2,
                 "rsqrt": lambda t: 1 / np.sqrt(t), "erf": _erf,
                 "sigmoid": lambda t: 1 / (1 + np.exp(-t))}[fn](f.astype(np.float64))
            return r.astype(out.np)
        exact = a.exact and fn in ("abs", "floor", "ceil")
        return Node(f"tl.{fn}({inner})", out, ev, a.shape, exact=exact)

    def unary(self, depth: int) -> Node:
        a = self._not_literal(depth - 1)
        if a.dt.is_int and a.dt.kind != "bool" and self.rng.random() < 0.5:
            def ev(env, a=a):
                return _wrap(np.frompyfunc(lambda p: ~p, 1, 1)(_ints(a.ev(env))), a.dt)
            return Node(f"(~{a.text})", a.dt, ev, a.shape, exact=a.exact)
        if a.dt.kind == "bool":
            return a

        def ev(env, a=a):
            x = a.ev(env)
            if a.dt.is_float:
                return -np.asarray(x)
            v = np.frompyfunc(lambda p: -p, 1, 1)(_ints(x))
            _check_int_range(v, a.dt, "negation")
            return _wrap(v, a.dt)
        return Node(f"(-{a.text})", a.dt, ev, a.shape, exact=a.exact)





# relative tolerances by the least precise float type a program computes in
RTOL = {"float16": 3e-2, "bfloat16": 8e-2, "float32": 3e-4, "float64": 1e-9}
# what tl.sum adds narrow values up in (Triton's _pick_sum_dtype: after the signedness, int1
# counting as unsigned; bfloat16 stays bfloat16), and tl.cumsum (which first takes bfloat16
# to fp32)
SUM_TO = {"int8": "int32", "int16": "int32", "uint8": "uint32", "uint16": "uint32",
          "int1": "uint32"}
CUMSUM_TO = {**SUM_TO, "bfloat16": "float32"}


def sum_rtol(dt: DT, n: int) -> float:
    """A relative error a float sum of n terms in dt may have in any order (sequential
    summation's bound is about n * eps; a quarter of it, capped, in practice)."""
    eps = {"float16": 2.0**-11, "bfloat16": 2.0**-8, "float32": 2.0**-24}.get(dt.name, 0.0)
    return min(0.25, n * eps / 4)


def block_len(gen: "Gen", axis: int) -> int:
    return gen.N if gen.rank == 1 or axis == 1 else gen.M


def minmax_type(dt: DT) -> DT:
    """tl.max / tl.min (without indices) reduce 16-bit floats in fp32 and narrower ints in
    int32 (Triton's standard.max), unsigned ones included."""
    if dt.bits < 32:
        return D["float32"] if dt.is_float else D["int32"]
    return dt
