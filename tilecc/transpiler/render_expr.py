"""C expressions of values (`ExprWriter`, the writer every other one asks): a value written as
its variable (`x[r]` in a register loop) or, where the passes inline it, as the expression
that computes it, with as few parentheses as C's precedence allows; C literals of each
element type (`literal`).  Expressions are text: the statements around them are spelled by
the templates (c_like/*.j2).  After an operator and a call's comma the text holds a SPACE
mark (line_breaks.py), a level deeper inside parentheses, brackets and calls: where a line
is still too long, it breaks there, outermost first."""

from __future__ import annotations

import math
from contextlib import contextmanager
from typing import Iterator

import numpy as np

from tilecc.language import dtypes as D
from tilecc.transpiler.ir import Op, Value
from tilecc.transpiler.line_breaks import SPACE, inner
from tilecc.transpiler.passes.layouts import Blocked, Placement
from tilecc.transpiler.render_writer import Writer
from tilecc.transpiler.render_math import extern_call
from tilecc.transpiler.target import NARROW_INTS, c_type

# C operator precedence (higher binds tighter), for minimal parentheses.
PRIMARY, UNARY, MUL, ADD, SHIFT, REL, EQ, BAND, BXOR, BOR, LAND, LOR, COND = \
    16, 15, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3
BINARY = {"add": ("+", ADD), "sub": ("-", ADD), "mul": ("*", MUL), "div": ("/", MUL),
          "rem": ("%", MUL), "and": ("&", BAND), "or": ("|", BOR), "xor": ("^", BXOR),
          "shl": ("<<", SHIFT), "ashr": (">>", SHIFT), "lshr": (">>", SHIFT),
          "land": ("&&", LAND), "lor": ("||", LOR)}
COMPARE = {"lt": ("<", REL), "le": ("<=", REL), "gt": (">", REL), "ge": (">=", REL),
           "eq": ("==", EQ), "ne": ("!=", EQ)}
CALLS = {"min": "tc::min", "max": "tc::max", "fmin": "tc::fmin", "fmax": "tc::fmax",
         "umulhi": "tc::umulhi", "fmin_nan": "tc::fmin_nan", "fmax_nan": "tc::fmax_nan"}
MATH = {"exp", "exp2", "log", "log2", "sqrt", "sqrt_rn", "rsqrt", "sin", "cos", "floor", "ceil",
        "erf"}


_FP32_MAX = float(np.finfo(np.float32).max)
_FP32_MIN_NORMAL = float(np.finfo(np.float32).tiny)


def literal(value, d) -> str:
    """A C literal of element type `d`."""
    name = d.short
    if name == "i1":
        return "true" if value else "false"
    if d.is_floating():
        if name == "fp32" and value and not _FP32_MIN_NORMAL <= abs(value) <= _FP32_MAX:
            # beyond float's range, or below its normals: the value fp32 rounds it to
            # (inf, a denormal, 0), as Triton computes it; C rejects `1e39f` and `1e-50f`
            with np.errstate(over="ignore", under="ignore"):
                value = float(np.float32(value))
        if math.isnan(value) or math.isinf(value):
            base = "double" if name == "fp64" else "float"
            text = f"tc::nan<{base}>()" if math.isnan(value) else f"tc::inf<{base}>()"
            text = f"-{text}" if value < 0 else text
        else:
            text = repr(float(value))
            if "e" not in text and "." not in text:
                text += ".0"
            text += "" if name == "fp64" else "f"
        if name in ("fp16", "bf16"):  # the rounded bit pattern, as a constant
            bits = int(np.asarray(value, dtype=d.to_numpy()).view(np.uint16))
            return f"{c_type(d)}::from_bits(0x{bits:04x} /* {float(value)!r} */)"
        if d.is_fp8():  # constants are rounded at trace time (semantic.constant)
            bits = int(np.asarray(value, dtype=np.float32).astype(d.to_numpy()).view(np.uint8))
            return f"{c_type(d)}::from_bits(0x{bits:02x} /* {float(value)!r} */)"
        return text
    value = int(value)
    if name == "i32":
        return str(value) if value != -2**31 else "(-2147483647 - 1)"
    if name == "i64":
        return f"{value}ll" if value != -2**63 else "(-9223372036854775807ll - 1)"
    if name == "u32":
        return f"{value}u"
    if name == "u64":
        return f"{value}ull"
    return f"static_cast<{c_type(d)}>({value})"


def call(fn: str, *args: str) -> str:
    """`fn(args...)`, a line break allowed after each comma (before those of the args)."""
    return f"{fn}({(',' + SPACE).join(inner(a) for a in args)})"


def _plain_c_shift(fn: str, amount: Value, d) -> bool:
    """Whether C's own `<<` / `>>` shifts as Triton does: a constant amount below the
    width, and `>>` of a type whose signedness is the shift's (C picks arithmetic or
    logical by type). Everything else calls tc::shl / ashr / lshr."""
    while amount.owner is not None and amount.owner.kind in ("splat", "broadcast"):
        amount = amount.owner.operands[0]
    if amount.owner is None or amount.owner.kind != "const" or d.is_bool():
        return False
    if not 0 <= int(amount.owner.attrs["value"]) < d.bits:
        return False
    return fn == "shl" or (fn == "ashr") == d.signed


class ExprWriter(Writer):
    """Values as C expressions.  Its state, written only here: the values written as
    expressions (`inline`: the passes' choice, and a pipeline's copies' scalars while
    they are written) and the C structs of the placements used (`layout_names`, declared
    in the kernel file)."""

    def __init__(self, renderer):
        super().__init__(renderer)
        self.inline: set[int] = set(self.ctx.emission.inline)
        self.layout_names: dict[Placement, str] = {}
        # variables a statement being written updates in place (each register from its
        # old value): read at each register's own index, never at its run's first
        self.overwritten: frozenset[int] = frozenset()
        # conditions known true for every element (render_bounds): their selects are
        # written as their first operand
        self.assumed: frozenset[int] = frozenset()

    @contextmanager
    def overwriting(self, roots: set[int]) -> Iterator[None]:
        """Expressions in the `with` are written into the variables of `roots`, which they
        may read (`x = x + y` in a loop)."""
        saved, self.overwritten = self.overwritten, frozenset(roots)
        try:
            yield
        finally:
            self.overwritten = saved

    @contextmanager
    def assuming(self, conds: set[int]) -> Iterator[None]:
        """Selects on the conditions `conds` written as their first operand in the `with`:
        the copy of a register loop that runs where a test showed those conditions true for
        the whole block (render_bounds)."""
        saved, self.assumed = self.assumed, frozenset(conds)
        try:
            yield
        finally:
            self.assumed = saved

    def read_values(self, v: Value) -> list[Value]:
        """The values an inlined expression of `v` reads (`v` among them)."""
        out, todo = [], [v]
        while todo:
            x = todo.pop()
            out.append(x)
            if x.id in self.inline and x.owner is not None:
                todo.extend(x.owner.operands)
        return out

    @contextmanager
    def inlined(self, ids: set[int]) -> Iterator[None]:
        """The values of `ids` written as expressions in the `with`."""
        self.inline |= ids
        try:
            yield
        finally:
            self.inline -= ids

    def defining_text(self, op: Op, idx: str = "r") -> str:
        """The expression that computes `op`'s result (not its variable)."""
        v = op.result
        with self.inlined({v.id}):
            return self.text(v, idx)

    def ctype(self, v: Value) -> str:
        return c_type(v.dtype, const=v.dtype.is_ptr() and v.id not in self.ctx.writes)

    def pointer_cast(self, v: Value, x: Value, idx: str) -> str:
        """A pointer from an address, an address from a pointer, or a pointer to another
        element type: reinterpret_cast (an integer narrower than a pointer is widened
        first, as LLVM's inttoptr zero-extends it)."""
        text = self.text(x, idx)
        if not x.dtype.is_ptr() and x.dtype.bits < 64:
            bits = x.dtype if x.dtype.is_bool() else D.BY_NAME[f"u{x.dtype.bits}"]
            narrow = call(f"static_cast<{c_type(bits)}>", text)
            text = call("static_cast<unsigned long long>", narrow)
        return call(f"reinterpret_cast<{self.ctype(v)}>", text)

    # --- expressions ----------------------------------------------------------------------------
    def expr(self, v: Value, idx: str = "r") -> tuple[str, int]:
        if v.id not in self.inline:
            name = self.names.name(v)
            return (f"{name}[{inner(idx)}]" if v.type.is_block else name), PRIMARY
        op = v.owner
        a = op.operands
        k = op.kind
        if k == "const":
            text = literal(op.attrs["value"], v.dtype)
            return text, (UNARY if text.startswith("-") else PRIMARY)
        if k == "splat":
            return self.expr(a[0])
        if k in ("expand_dims", "broadcast"):
            return self.expr(a[0], self.reg_map(a[0].layout, v.layout, idx))
        if k == "arange":
            index = call(f"{self.lname(v.layout)}::coord0", idx)
            start = op.attrs["start"]
            return (f"{start} + {index}", ADD) if start else (index, PRIMARY)
        if k == "program_id":
            return f"static_cast<int>(blockIdx.{'xyz'[op.attrs['axis']]})", PRIMARY
        if k == "num_programs":
            return f"static_cast<int>(gridDim.{'xyz'[op.attrs['axis']]})", PRIMARY
        if k == "cast" and (v.dtype.is_ptr() or a[0].dtype.is_ptr()):
            return self.pointer_cast(v, a[0], idx), PRIMARY
        if k == "cast":
            fn = "tc::bitcast" if op.attrs.get("bitcast") else \
                "tc::cast_rz" if op.attrs.get("rounding") == "rtz" else "tc::cast"
            return call(f"{fn}<{c_type(v.dtype)}>", self.text(a[0], idx)), PRIMARY
        if k == "unary":
            fn = op.attrs["fn"]
            if fn in MATH:
                return call(f"tc::{fn}", self.text(a[0], idx)), PRIMARY
            if fn == "abs":
                f = "tc::fabs" if v.dtype.is_floating() else "tc::abs"
                return call(f, self.text(a[0], idx)), PRIMARY
            if fn == "invert" and v.dtype.is_bool():  # ~ of C's bool would be -1 or -2
                fn = "not"
            sym = {"neg": "-", "invert": "~", "not": "!"}[fn]
            operand = self.wrap(a[0], idx, UNARY)
            if sym == "-" and operand.startswith("-"):  # `--x` would be a decrement
                operand = f"({operand})"
            return self.narrow(f"{sym}{operand}", UNARY, v)
        if k == "binary":  # integers constant over runs of registers: once per run
            return self.binary_expr(v, self.run_start(v, idx) if v.dtype.is_int() else idx)
        if k == "cmp":
            sym, prec = COMPARE[op.attrs["pred"]]
            idx = self.run_start(v, idx)
            left, right = self.wrap(a[0], idx, prec), self.wrap(a[1], idx, prec + 1)
            return f"{left} {sym}{SPACE}{right}", prec
        if k == "where" and a[0].id in self.assumed:
            return self.expr(a[1], idx)
        if k == "where":
            return (f"{self.wrap(a[0], idx, EQ)} ?{SPACE}{self.wrap(a[1], idx, COND)} :{SPACE}"
                    f"{self.wrap(a[2], idx, COND)}"), COND
        if k == "fma":
            return call("tc::fma", *(self.text(x, idx) for x in a)), PRIMARY
        if k == "extern":
            return extern_call(op, self.ctx.target, [inner(self.text(x, idx)) for x in a]), PRIMARY
        if k == "addptr":
            return f"{self.wrap(a[0], idx, ADD)} +{SPACE}{self.wrap(a[1], idx, ADD + 1)}", ADD
        raise AssertionError(f"cannot inline {k}")

    def binary_expr(self, v: Value, idx: str) -> tuple[str, int]:
        """A binary op's expression: a call where C's operator differs from Triton's."""
        a, fn = v.owner.operands, v.owner.attrs["fn"]
        if fn in CALLS:
            return call(CALLS[fn], self.text(a[0], idx), self.text(a[1], idx)), PRIMARY
        if fn == "div" and v.dtype.short == "fp32":  # div.full.f32, as Triton divides
            return call("tc::fdiv", self.text(a[0], idx), self.text(a[1], idx)), PRIMARY
        if fn == "rem" and v.dtype.is_floating():
            return call("tc::fmod", self.text(a[0], idx), self.text(a[1], idx)), PRIMARY
        if fn in ("shl", "ashr", "lshr") and not _plain_c_shift(fn, a[1], v.dtype):
            return call(f"tc::{fn}", self.text(a[0], idx), self.text(a[1], idx)), PRIMARY
        if fn == "mul" and not self.ctx.kernel.fp_fusion and \
                self.ctx.target.rounded_products and \
                v.dtype.short in ("fp32", "fp64"):  # a product nvcc never contracts
            mul = "__fmul_rn" if v.dtype.short == "fp32" else "__dmul_rn"
            return call(mul, self.text(a[0], idx), self.text(a[1], idx)), PRIMARY
        if fn == "mul" and v.dtype.short == "u16":  # C multiplies them as int: may overflow
            text = (f"{call('static_cast<unsigned>', self.text(a[0], idx))} *{SPACE}"
                    f"{self.wrap(a[1], idx, MUL + 1)}")
            return self.narrow(text, MUL, v)
        sym, prec = BINARY[fn]
        # Mixed bitwise / shift / logical operators always get parentheses (as
        # compilers' -Wparentheses asks); arithmetic follows plain precedence.
        need = UNARY if prec <= SHIFT else prec
        left, right = self.wrap(a[0], idx, need), self.wrap(a[1], idx, max(need, prec + 1))
        text = f"{left} {sym}{SPACE}{right}"
        return self.narrow(text, prec, v)

    def lname(self, p: Placement) -> str:
        """The C struct of a placement (emitted in the kernel file when used)."""
        if p not in self.layout_names:
            kind = "Blocked" if isinstance(p.enc, Blocked) else "Sliced"
            self.layout_names[p] = f"{kind}{len(self.layout_names)}"
        return self.layout_names[p]

    def reg_map(self, src: Placement, dst: Placement, idx: str) -> str:
        """The register of `src` holding what register `idx` of `dst` holds, where dst
        only adds axes to (or repeats size-1 axes of) src: no data moves."""
        if src == dst:
            return idx
        terms = []
        for e in src.kept:
            comp = dst.reg_component(e, idx)
            if src.reg_sizes[e] < dst.reg_sizes[e]:
                comp = f"({comp}) % {src.reg_sizes[e]}" if src.reg_sizes[e] > 1 else "0"
            if comp != "0" and src.reg_sizes[e] > 1:
                stride = src.rstride(e)
                terms.append(comp if stride == 1 else f"({comp}) * {stride}")
        return f" +{SPACE}".join(terms) or "0"

    def narrow(self, text: str, prec: int, v: Value) -> tuple[str, int]:
        # C promotes narrow integers to int; the language keeps their width.
        if v.dtype.short in NARROW_INTS and v.dtype.short != "i1":
            return call(f"static_cast<{c_type(v.dtype)}>", text), PRIMARY
        return text, prec

    def run_start(self, v: Value, idx: str) -> str:
        """An integer value or comparison constant over runs of a thread's consecutive
        registers (`offs < n` with n a multiple of the run) is written at the run's first
        register: one expression for the whole run, which the compiler evaluates once, as a
        vector load checks its mask once.  Not where the statement updates a variable the
        expression reads: the run's first register is then already overwritten."""
        place, info = v.layout, getattr(v, "info", None)
        if not v.type.is_block or place is None or info is None or place.fast_axis is None:
            return idx
        if self.overwritten and any(self.ctx.root(x) in self.overwritten
                                    for x in self.read_values(v)):
            return idx
        ax = place.fast_axis
        run = math.gcd(info.constancy[ax], place.vec)
        if run < 2 or place.full[place.kept[ax]] % run or idx == "v":  # v: a vector's start
            return idx
        if idx.endswith(f" / {run} * {run}"):  # already a run's start (an enclosing value's)
            return idx
        return f"{idx if idx.isidentifier() else f'({idx})'} / {run} * {run}"

    def text(self, v: Value, idx: str = "r") -> str:
        return self.expr(v, idx)[0]

    def wrap(self, v: Value, idx: str, need: int) -> str:
        text, prec = self.expr(v, idx)
        return text if prec >= need else f"({inner(text)})"

    def element(self, v: Value, idx: str) -> str:
        """The lvalue/rvalue `*ptr`, written `base[offset]` when the pointer is base + offset
        with a uniform base."""
        if v.id in self.inline and v.owner.kind == "addptr":
            base, off = v.owner.operands
            if not base.type.is_block or not self.varies(base):
                return f"{self.wrap(base, idx, PRIMARY)}[{inner(self.text(off, idx))}]"
        return f"*({inner(self.text(v, idx))})"

    def varies(self, v: Value) -> bool:
        return not (v.id in self.inline and v.owner.kind in ("splat", "const"))
