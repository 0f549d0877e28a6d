"""Constructs that libraries' kernels use, as features of the random-kernel generator:
`random_kernels.generate(seed, WILD_FEATURES)` draws programs that each show one of them
around a random expression `res` (random_exprs.Gen), with the NumPy evaluation of what they
compute.  Nothing here uses tilecc.

    ptr_loop        pointers and pointer blocks advanced in a loop (`ptrs += stride`), a
                    pointer argument reassigned
    branch_memory   loads and stores under a run-time if / else inside a loop
    branch_carry    loop-carried values (a block, a scalar count) updated in branches
    optional_ptr    None-or-pointer arguments guarded by constexpr flags or `is not None`,
                    advanced in a loop
    scalar_where    a scalar load deciding a tl.where over blocks (an expression node)
    builtin_minmax  Python's min / max over blocks and scalars (an expression node)
    skinny_dot      tl.dot with M or N below 16 (random_kernels._dot_program)
    static_range    tl.static_range with constexpr bounds and a static if on its index
    tuple_helper    nested @jit helpers returning tuples
    early_return    `return` under a run-time condition, between two stores
    grid_3d         two- and three-dimensional grids: tl.program_id(1 | 2), tl.num_programs
    int64_offsets   offsets computed in int64 (a 64-bit argument among them)
    ptr_swap        double buffering: two pointer blocks, and two values, swapped every
                    iteration (`a, b = b, a`)
    nested_branch   a `while` loop whose carried block is updated, and stored, under
                    nested run-time ifs
    block_ptr_loop  block pointers moved in a loop by a run-time step, forwards or
                    backwards past the tensor's start, once or twice under a run-time if,
                    loads and stores with boundary_check, a load after the loop

A tail (`TAILS`) is the program's end after `res = ...`: its lines, extra parameters and
outputs, and `finish`, which applies it to one program's values in the NumPy evaluation.
"""

from __future__ import annotations

import operator
import random
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from tilecc.testing.random_exprs import (D, DT, Gen, Node, Undefined, _check_int_range,
                                         _ints, _wrap, cast_value, computation_type,
                                         literal_type, minmax_operands_type, nudgeable)

__all__ = ["WILD_FEATURES", "LATER_FEATURES", "WEIGHTS", "TAILS", "WildGen", "Frame", "Step",
           "Tail", "grid_dims", "header"]

WILD_FEATURES = ("ptr_loop", "branch_memory", "branch_carry", "optional_ptr", "scalar_where",
                 "builtin_minmax", "skinny_dot", "static_range", "tuple_helper",
                 "early_return", "grid_3d", "int64_offsets", "ptr_swap", "nested_branch")
# constructs added after seeds of WILD_FEATURES were recorded (tests' regression seeds):
# drawn only when asked for, so that those seeds keep their programs
LATER_FEATURES = ("block_ptr_loop", "dot_loop", "batched_dot", "scaled_dot_loop", "chained_dot",
                  "shared_operand", "product_meets_load", "masked_chain", "batched_block")
WEIGHTS = {f: 1.0 for f in WILD_FEATURES + LATER_FEATURES}
# features that are expression nodes (WildGen draws them inside `res`)
NODES = {"scalar_where", "builtin_minmax"}
BIG = 2**32 + 7  # the 64-bit argument of int64_offsets (needs an i64 parameter)


@dataclass
class Frame:
    """What a tail builder sees: the program's draws and its result `res` (full block)."""
    rng: random.Random
    gen: Gen
    rank: int
    M: int
    N: int
    G: int
    res: Node
    res_dt: DT

    @property
    def span(self) -> int:  # elements all programs' blocks cover
        return self.G * self.M * self.N


@dataclass
class Step:
    """One program's values in the NumPy evaluation."""
    pid: int
    full: np.ndarray  # res, broadcast to the block
    offs: np.ndarray
    mask: np.ndarray
    outs: dict  # output param -> (values, written)
    inputs: dict
    env: dict  # the expression nodes' environment (loads, nudge)
    trips: int
    scalars: dict


@dataclass
class Tail:
    lines: list[str]
    outputs: list[tuple[str, DT, int, bool]]  # (param, dtype, size, exact)
    finish: Callable[[Step], None]
    params: list[tuple[str, Any]] = field(default_factory=list)  # after the expression's
    arrays: dict[str, tuple[DT, int]] = field(default_factory=dict)
    scalars: dict[str, Any] = field(default_factory=dict)  # run-time values, None included
    constexprs: dict[str, Any] = field(default_factory=dict)
    helpers: str = ""  # @jit functions written before the kernel


# --- NumPy helpers --------------------------------------------------------------------------

def _arith(dt: DT, a, b, op: Callable, what: str) -> np.ndarray:
    """a op b in dt: integers exactly, then wrapped (signed 32/64-bit overflow undefined)."""
    if dt.is_int:
        v = op(_ints(np.asarray(a)), _ints(np.asarray(b)))
        _check_int_range(v, dt, what)
        return _wrap(v, dt)
    return np.asarray(op(np.asarray(a).astype(dt.np), np.asarray(b).astype(dt.np))
                      ).astype(dt.np)


def _load(src: np.ndarray, where: np.ndarray, mask: np.ndarray, dt: DT) -> np.ndarray:
    """tl.load(src + where, mask=mask, other=0)."""
    zero = cast_value(np.asarray(0), literal_type(0), dt)
    return np.where(mask, src[np.minimum(where, src.size - 1)], zero).astype(dt.np)


def _store(st: Step, param: str, where: np.ndarray, values: np.ndarray) -> None:
    vals, written = st.outs[param]
    vals[where[st.mask]] = np.broadcast_to(values, st.mask.shape)[st.mask]
    written[where[st.mask]] = True


def _store_res(f: Frame) -> list[str]:
    return ["tl.store(out_ptr + offs, res, mask=mask)"]


# --- tails ----------------------------------------------------------------------------------

def ptr_loop(f: Frame) -> Tail:
    """Running sums of `src` rows, each stored a row further on: the pointers advance as a
    block (`src_ptrs += stride`) or as the argument itself (`src_ptr += stride`)."""
    rng, dt, span = f.rng, f.res_dt, f.span
    src_block, out_block = rng.random() < 0.5, rng.random() < 0.5
    src = "src_ptrs" if src_block else "src_ptr + offs"
    out = "out_ptrs" if out_block else "out_ptr + offs"
    lines = (["src_ptrs = src_ptr + offs"] if src_block else []) + \
        (["out_ptrs = out_ptr + offs"] if out_block else []) + [
        "acc = res",
        "for c in range(trips):",
        f"    acc = acc + tl.load({src}, mask=mask, other=0)",
        f"    tl.store({out}, acc, mask=mask)",
        f"    {'src_ptrs' if src_block else 'src_ptr'} += stride",
        f"    {'out_ptrs' if out_block else 'out_ptr'} += stride"]

    def finish(st: Step) -> None:
        acc = st.full
        for c in range(st.trips):
            where = c * span + st.offs
            acc = _arith(dt, acc, _load(st.inputs["src_ptr"], where, st.mask, dt),
                         operator.add, "+")
            _store(st, "out_ptr", where, acc)
    return Tail(lines, [("out_ptr", dt, 3 * span, f.res.exact and dt.is_int)], finish,
                [("src_ptr", "array"), ("stride", "i32")], {"src_ptr": (dt, 3 * span)},
                {"stride": span})


def _loop_condition(f: Frame, c: str = "c"
                    ) -> tuple[str, Callable[[int, int, dict], bool], dict]:
    """A run-time condition on the loop index `c` (and the program, or an argument)."""
    kind = f.rng.choice(["parity", "limit", "pid"])
    if kind == "parity":
        return f"({c} + pid) % 2 == 0", lambda i, pid, s: (i + pid) % 2 == 0, {}
    if kind == "limit":
        return f"{c} < lim", lambda i, pid, s: i < s["lim"], {"lim": f.rng.choice([0, 1, 2])}
    return f"{c} * 2 != pid", lambda i, pid, s: i * 2 != pid, {}


def branch_memory(f: Frame) -> Tail:
    """Loads and stores under if / else in a loop: each row of `out` gets a loaded row or
    `res`, the last one goes to `fin` instead (the pointers advance every iteration)."""
    dt, span = f.res_dt, f.span
    text, cond, scalars = _loop_condition(f)
    lines = ["src_ptrs = src_ptr + offs",
             "out_ptrs = out_ptr + offs",
             "for c in range(trips):",
             f"    if {text}:",
             "        x = tl.load(src_ptrs, mask=mask, other=0)",
             "    else:",
             "        x = res",
             "    if c < trips - 1:",
             "        tl.store(out_ptrs, x, mask=mask)",
             "    else:",
             "        tl.store(fin_ptr + offs, x, mask=mask)",
             "    src_ptrs += stride",
             "    out_ptrs += stride"]

    def finish(st: Step) -> None:
        for c in range(st.trips):
            where = c * span + st.offs
            x = _load(st.inputs["src_ptr"], where, st.mask, dt) \
                if cond(c, st.pid, st.scalars) else st.full
            _store(st, "out_ptr" if c < st.trips - 1 else "fin_ptr",
                   where if c < st.trips - 1 else st.offs, x)
    params = [("src_ptr", "array"), ("stride", "i32")] + [(s, "i32") for s in scalars]
    return Tail(lines, [("out_ptr", dt, 3 * span, f.res.exact),
                        ("fin_ptr", dt, span, f.res.exact)], finish,
                params, {"src_ptr": (dt, 3 * span)}, {"stride": span, **scalars})


def branch_carry(f: Frame) -> Tail:
    """A block and a scalar count carried through a loop, updated in if / elif / else."""
    dt = f.res_dt
    text, cond, scalars = _loop_condition(f)
    with_elif = f.rng.random() < 0.5
    lines = ["acc = res",
             "cnt = 0",
             "for c in range(trips):",
             f"    if {text}:",
             "        acc = acc + res",
             "        cnt += 1"]
    if with_elif:
        lines += ["    elif c == 1:",
                  "        acc = acc * 2"]
    lines += ["    else:",
              "        acc = acc - 1",
              "tl.store(out_ptr + offs, acc, mask=mask)",
              "tl.store(cnt_ptr + pid, cnt)"]

    def finish(st: Step) -> None:
        acc, cnt = st.full, 0
        for c in range(st.trips):
            if cond(c, st.pid, st.scalars):
                acc = _arith(dt, acc, st.full, operator.add, "+")
                cnt += 1
            elif with_elif and c == 1:
                acc = _arith(dt, acc, 2, operator.mul, "*")
            else:
                acc = _arith(dt, acc, 1, operator.sub, "-")
        _store(st, "out_ptr", st.offs, acc)
        vals, written = st.outs["cnt_ptr"]
        vals[st.pid], written[st.pid] = cnt, True
    return Tail(lines, [("out_ptr", dt, f.span, f.res.exact and dt.is_int),
                        ("cnt_ptr", D["int32"], f.G, True)], finish,
                [(s, "i32") for s in scalars], {}, scalars)


def optional_ptr(f: Frame) -> Tail:
    """`bias_ptr` and `scale_ptr`: a pointer or None, each guarded by a constexpr flag
    (HAS_BIAS) or by `is not None`; the bias pointer advances in the loop."""
    rng, span, fp32 = f.rng, f.span, D["float32"]
    has_bias, has_scale = rng.random() < 0.5, rng.random() < 0.5
    bias_flag, scale_flag = rng.random() < 0.5, rng.random() < 0.5
    bias_guard = "HAS_BIAS" if bias_flag else "bias_ptr is not None"
    scale_guard = "HAS_SCALE" if scale_flag else "scale_ptr is not None"
    lines = [f"acc = res.to(tl.float32)",
             "for c in range(trips):",
             f"    if {bias_guard}:",
             "        acc += tl.load(bias_ptr + offs, mask=mask, other=0)",
             "        bias_ptr += stride",
             "    else:",
             "        acc += 1",
             f"if {scale_guard}:",
             "    acc = acc * tl.load(scale_ptr + pid)",
             "tl.store(out_ptr + offs, acc, mask=mask)"]
    params: list[tuple[str, Any]] = [("bias_ptr", "array" if has_bias else "none"),
                                     ("scale_ptr", "array" if has_scale else "none"),
                                     ("stride", "i32")]
    constexprs = {}
    if bias_flag:
        params.append(("HAS_BIAS", "constexpr"))
        constexprs["HAS_BIAS"] = has_bias
    if scale_flag:
        params.append(("HAS_SCALE", "constexpr"))
        constexprs["HAS_SCALE"] = has_scale
    arrays = {}
    if has_bias:
        arrays["bias_ptr"] = (fp32, 3 * span)
    if has_scale:
        arrays["scale_ptr"] = (fp32, f.G)
    scalars = {"stride": span, **{p: None for p, kind in params if kind == "none"}}

    def finish(st: Step) -> None:
        acc = cast_value(st.full, f.res_dt, fp32)
        for c in range(st.trips):
            if has_bias:
                acc = acc + _load(st.inputs["bias_ptr"], c * span + st.offs, st.mask, fp32)
            else:
                acc = acc + np.float32(1)
        if has_scale:
            acc = acc * st.inputs["scale_ptr"][st.pid]
        _store(st, "out_ptr", st.offs, np.asarray(acc).astype(np.float32))
    return Tail(lines, [("out_ptr", fp32, span, False)], finish, params, arrays, scalars,
                constexprs)


def static_range(f: Frame) -> Tail:
    """An accumulation unrolled over tl.static_range, a static if on its constexpr index."""
    dt = f.res_dt
    T = f.rng.choice([1, 2, 3, 4])
    form, indices = f.rng.choice([("tl.static_range(T)", range(T)),
                                  ("tl.static_range(1, T)", range(1, T)),
                                  ("tl.static_range(0, T, 2)", range(0, T, 2))])
    lines = ["acc = res",
             f"for i in {form}:",
             "    if i % 2 == 0:",
             "        acc = acc + res",
             "    else:",
             "        acc = acc - i",
             "tl.store(out_ptr + offs, acc, mask=mask)"]

    def finish(st: Step) -> None:
        acc = st.full
        for i in indices:
            acc = _arith(dt, acc, st.full, operator.add, "+") if i % 2 == 0 else \
                _arith(dt, acc, i, operator.sub, "-")
        _store(st, "out_ptr", st.offs, acc)
    return Tail(lines, [("out_ptr", dt, f.span, f.res.exact and dt.is_int)], finish,
                [("T", "constexpr")], constexprs={"T": T})


_HELPERS = '''

@tilecc.jit
def order_pair(a, b):
    return tl.minimum(a, b), tl.maximum(a, b)


@tilecc.jit
def order_with(a, b, c):
    lo, hi = order_pair(a, b)
    return lo, (hi, c)
'''


def tuple_helper(f: Frame) -> Tail:
    """`res` and a second expression ordered by nested helpers returning (nested) tuples."""
    dt = f.res_dt
    other = f.gen.full(f.gen._not_literal(2))
    other_text = other.text if other.dt == dt else f"{other.text}.to(tl.{dt.name})"
    mt = minmax_operands_type(dt, dt)
    lines = [f"other = {other_text}",
             "lo, pair = order_with(res, other, res)",
             "hi, same = pair",
             "tl.store(out_ptr + offs, lo, mask=mask)",
             "tl.store(out2_ptr + offs, hi, mask=mask)",
             "tl.store(out3_ptr + offs, same, mask=mask)"]

    def finish(st: Step) -> None:
        o = np.broadcast_to(cast_value(other.ev(st.env), other.dt, dt), st.full.shape)
        a, b = st.full.astype(mt.np), o.astype(mt.np)
        if mt.is_float and (np.isnan(a.astype(np.float64)).any() or
                            np.isnan(b.astype(np.float64)).any()):
            raise Undefined("NaN into tl.minimum/maximum")
        _store(st, "out_ptr", st.offs, np.minimum(a, b))
        _store(st, "out2_ptr", st.offs, np.maximum(a, b))
        _store(st, "out3_ptr", st.offs, st.full)
    exact = f.res.exact and other.exact
    return Tail(lines, [("out_ptr", mt, f.span, exact), ("out2_ptr", mt, f.span, exact),
                        ("out3_ptr", dt, f.span, f.res.exact)], finish, helpers=_HELPERS)


def early_return(f: Frame) -> Tail:
    """`if <run-time condition>: return` between a store every program does and one only
    the others do."""
    kind = f.rng.choice(["skip", "flag", "parity"])
    text = {"skip": "pid == skip", "flag": "tl.load(flag_ptr + pid) > 0",
            "parity": "(pid % 2 == 1) & (n > 3)"}[kind]
    lines = ["tl.store(out_ptr + offs, res, mask=mask)",
             f"if {text}:",
             "    return",
             "tl.store(out2_ptr + offs, res, mask=mask)"]
    skip = f.rng.randrange(f.G)
    params, arrays, scalars = [], {}, {}
    if kind == "skip":
        params, scalars = [("skip", "i32")], {"skip": skip}
    elif kind == "flag":
        params, arrays = [("flag_ptr", "array")], {"flag_ptr": (D["int32"], f.G)}

    def finish(st: Step) -> None:
        _store(st, "out_ptr", st.offs, st.full)
        returns = {"skip": lambda: st.pid == skip,
                   "flag": lambda: st.inputs["flag_ptr"][st.pid] > 0,
                   "parity": lambda: st.pid % 2 == 1 and st.scalars["n"] > 3}[kind]()
        if not returns:
            _store(st, "out2_ptr", st.offs, st.full)
    return Tail(lines, [("out_ptr", f.res_dt, f.span, f.res.exact),
                        ("out2_ptr", f.res_dt, f.span, f.res.exact)], finish,
                params, arrays, scalars)


def ptr_swap(f: Frame) -> Tail:
    """Two rows read in turn through pointer blocks swapped every iteration, and a pair of
    values swapped as they are updated (`cur, prev = prev + x, cur`)."""
    dt, span = f.res_dt, f.span
    lines = ["a_ptrs = src_ptr + offs",
             "b_ptrs = src_ptr + stride + offs",
             "cur = res",
             "prev = res - res",
             "for c in range(trips):",
             "    cur, prev = prev + tl.load(a_ptrs, mask=mask, other=0), cur",
             "    tl.store(out_ptr + c * stride + offs, cur, mask=mask)",
             "    a_ptrs, b_ptrs = b_ptrs, a_ptrs",
             "tl.store(fin_ptr + offs, prev, mask=mask)"]

    def finish(st: Step) -> None:
        cur, prev = st.full, _arith(dt, st.full, st.full, operator.sub, "-")
        for c in range(st.trips):
            x = _load(st.inputs["src_ptr"], (c % 2) * span + st.offs, st.mask, dt)
            cur, prev = _arith(dt, prev, x, operator.add, "+"), cur
            _store(st, "out_ptr", c * span + st.offs, cur)
        _store(st, "fin_ptr", st.offs, prev)
    exact = f.res.exact and dt.is_int
    return Tail(lines, [("out_ptr", dt, 3 * span, exact), ("fin_ptr", dt, span, exact)],
                finish, [("src_ptr", "array"), ("stride", "i32")],
                {"src_ptr": (dt, 2 * span)}, {"stride": span})


def nested_branch(f: Frame) -> Tail:
    """A `while` loop carrying a block and its counter; the block updated under nested
    run-time ifs, and stored in the inner one."""
    dt, span = f.res_dt, f.span
    inner, cond, scalars = _loop_condition(f, "i")
    lines = ["acc = res",
             "i = 0",
             "while i < trips:",
             "    if i % 2 == 0:",
             f"        if {inner}:",
             "            acc = acc + res",
             "            tl.store(out2_ptr + i * stride + offs, acc, mask=mask)",
             "        else:",
             "            acc = acc - 1",
             "    else:",
             "        acc = acc * 2",
             "    i += 1",
             "tl.store(out_ptr + offs, acc, mask=mask)"]

    def finish(st: Step) -> None:
        acc = st.full
        for i in range(st.trips):
            if i % 2 == 0:
                if cond(i, st.pid, st.scalars):
                    acc = _arith(dt, acc, st.full, operator.add, "+")
                    _store(st, "out2_ptr", i * span + st.offs, acc)
                else:
                    acc = _arith(dt, acc, 1, operator.sub, "-")
            else:
                acc = _arith(dt, acc, 2, operator.mul, "*")
        _store(st, "out_ptr", st.offs, acc)
    exact = f.res.exact and dt.is_int
    return Tail(lines, [("out_ptr", dt, span, exact), ("out2_ptr", dt, 3 * span, exact)],
                finish, [("stride", "i32")] + [(s, "i32") for s in scalars], {},
                {"stride": span, **scalars})


def block_ptr_loop(f: Frame) -> Tail:
    """Running sums of `src` blocks read through a block pointer moved in a loop (by `step`
    rows of blocks, forwards, or backwards from the last page past the tensor's start; twice
    where a run-time condition holds), each stored a page further on through another block
    pointer; then the block where `src`'s pointer stopped, read after the loop.  `src` is
    `extent` rows long for the boundary checks (its array is longer): rows outside read 0."""
    rng, dt, rank, M, N = f.rng, f.res_dt, f.rank, f.M, f.N
    rows_per_page = f.G * M if rank == 2 else f.G * N  # a page: every program's block
    backwards = rng.random() < 0.5
    text, cond, scalars = _loop_condition(f)
    twice = rng.random() < 0.5
    first = "pid * M" if rank == 2 else "pid * N"
    start = f"{first} + 2 * step" if backwards else first
    if rank == 2:
        def make(ptr, length, at):
            return f"tl.make_block_ptr({ptr}, ({length}, N), (N, 1), ({at}, 0), (M, N), (1, 0))"
        move, check = "(({s}), 0)", "(0,)" if rng.random() < 0.5 else "(0, 1)"
    else:
        def make(ptr, length, at):
            return f"tl.make_block_ptr({ptr}, ({length},), (1,), ({at},), (N,), (0,))"
        move, check = "(({s}),)", "(0,)"
    sign = "-" if backwards else ""
    lines = [f"sp = {make('src_ptr', 'extent', start)}",
             f"op = {make('out_ptr', '3 * step', first)}",
             "acc = res",
             "for c in range(trips):",
             f"    acc = acc + tl.load(sp, boundary_check={check}, padding_option=\"zero\")",
             f"    tl.store(op, acc, boundary_check={check})"]
    if twice:
        lines += [f"    if {text}:",
                  f"        sp = tl.advance(sp, {move.format(s=sign + '2 * step')})",
                  "    else:",
                  f"        sp = tl.advance(sp, {move.format(s=sign + 'step')})"]
    else:
        lines.append(f"    sp = tl.advance(sp, {move.format(s=sign + 'step')})")
    lines += [f"    op = tl.advance(op, {move.format(s='step')})",
              "tl.store(fin_ptr + offs, tl.load(sp, boundary_check=(0,), "
              "padding_option=\"zero\"), mask=mask)"]
    extent = rng.randint(0, 3 * rows_per_page)

    def block_at(src: np.ndarray, row: int, length: int) -> np.ndarray:
        """The block whose first row (rank 1: element) is `row`: zeros outside the rows
        [0, length)."""
        idx = row + (np.arange(M)[:, None] if rank == 2 else np.arange(N))
        inside = (idx >= 0) & (idx < length)
        where = idx * N + np.arange(N)[None, :] if rank == 2 else idx
        zero = cast_value(np.asarray(0), literal_type(0), dt)
        vals = np.where(inside, src[np.clip(where, 0, src.size - 1)], zero)
        return np.broadcast_to(vals, (M, N) if rank == 2 else (N,)).astype(dt.np)

    def finish(st: Step) -> None:
        src, step = st.inputs["src_ptr"], rows_per_page
        first_row = st.pid * (M if rank == 2 else N)
        row = first_row + (2 * step if backwards else 0)
        acc = st.full
        vals, written = st.outs["out_ptr"]
        for c in range(st.trips):
            acc = _arith(dt, acc, block_at(src, row, extent), operator.add, "+")
            at = first_row + c * step  # inside the output's 3 pages: every element stored
            idx = (at + np.arange(M)[:, None]) * N + np.arange(N)[None, :] if rank == 2 else \
                at + np.arange(N)
            vals[idx] = acc
            written[idx] = True
            moved = 2 * step if twice and cond(c, st.pid, st.scalars) else step
            row += -moved if backwards else moved
        _store(st, "fin_ptr", st.offs, block_at(src, row, extent))
    exact = f.res.exact and dt.is_int
    params = [("src_ptr", "array"), ("extent", "i32"), ("step", "i32")] + \
        [(s, "i32") for s in scalars]
    return Tail(lines, [("out_ptr", dt, 3 * f.span, exact), ("fin_ptr", dt, f.span, True)],
                finish, params, {"src_ptr": (dt, 3 * f.span)},
                {"extent": extent, "step": rows_per_page, **scalars})


def plain_store(f: Frame) -> Tail:
    """The expression features and the header ones: `res` stored."""
    def finish(st: Step) -> None:
        _store(st, "out_ptr", st.offs, st.full)
    return Tail(_store_res(f), [("out_ptr", f.res_dt, f.span, f.res.exact)], finish)


TAILS: dict[str, Callable[[Frame], Tail]] = {
    "ptr_loop": ptr_loop, "branch_memory": branch_memory, "branch_carry": branch_carry,
    "optional_ptr": optional_ptr, "static_range": static_range, "tuple_helper": tuple_helper,
    "early_return": early_return, "scalar_where": plain_store, "builtin_minmax": plain_store,
    "grid_3d": plain_store, "int64_offsets": plain_store, "ptr_swap": ptr_swap,
    "nested_branch": nested_branch, "block_ptr_loop": block_ptr_loop}


# --- the kernel's first lines ---------------------------------------------------------------

def grid_dims(rng: random.Random) -> tuple[int, ...]:
    """grid_3d's grid: two or three dimensions of 1 to 3 programs."""
    dims = [rng.choice([1, 2, 3]), rng.choice([1, 2])]
    if rng.random() < 0.5:
        dims.append(rng.choice([1, 2]))
    return tuple(dims)


def header(feature: str, rng: random.Random, rank: int, grid: tuple[int, ...]
           ) -> tuple[list[str], list[tuple[str, Any]], dict[str, Any]]:
    """The lines defining pid and offs (after `rn`), and the parameters they add."""
    block = "(M * N) + rm[:, None] * N + rn[None, :]" if rank == 2 else "N + rn"
    if feature == "grid_3d":
        # the programs numbered over every axis, the first one varying fastest or slowest
        axes = list(range(len(grid)))
        if rng.random() < 0.5:
            axes.reverse()
        terms, scale = [], ""
        for ax in axes:
            terms.append(f"tl.program_id({ax}){scale}")
            scale += f" * tl.num_programs({ax})"
        return [f"pid = {' + '.join(terms)}", f"offs = pid * {block}"], [], {}
    if feature == "int64_offsets":
        start = rng.choice(["pid.to(tl.int64)", "tl.cast(pid, tl.int64)"])
        return ["pid = tl.program_id(0)", f"base = big - {BIG}",
                f"offs = {start} * {block} + base"], [("big", "i64")], {"big": BIG}
    return ["pid = tl.program_id(0)", f"offs = pid * {block}"], [], {}


# --- expression nodes ---------------------------------------------------------------------

class WildGen(Gen):
    """Gen, with the expression features among its nodes."""

    def __init__(self, *args, nodes: frozenset[str] = frozenset(), **kwargs):
        super().__init__(*args, **kwargs)
        self.nodes = sorted(nodes)

    def expr(self, depth: int) -> Node:
        if depth > 0 and self.nodes and self.rng.random() < 0.3:
            kind = self.rng.choice(self.nodes)
            node = self.scalar_where(depth) if kind == "scalar_where" else \
                self.builtin_minmax(depth)
            return nudgeable(node)
        return super().expr(depth)

    def scalar_where(self, depth: int) -> Node:
        """tl.where(<a value loaded for the program> <op> <literal>, x, y)."""
        s = self.load("scalar")
        lit = self.literal(want_float=s.dt.is_float)
        if s.dt.kind == "uint" and lit.ev({}) < 0:
            lit = self.literal(False)
        op = self.rng.choice(["<", ">", "==", "!="])
        fn = {"<": np.less, ">": np.greater, "==": np.equal, "!=": np.not_equal}[op]
        ct = computation_type(s.dt, False, lit.dt, True, False)

        def cond_ev(env, s=s, lit=lit, fn=fn, ct=ct):
            return fn(np.asarray(s.ev(env)).astype(ct.np), ct.np.type(lit.ev(env)))
        cond = Node(f"({s.text} {op} {lit.text})", D["int1"], cond_ev, "scalar")
        return self.where(cond, depth)

    def builtin_minmax(self, depth: int) -> Node:
        """min(a, b[, c]) / max(...) of Python's builtins: tl.minimum / maximum from the left
        (Python numbers become tensors of their own type first)."""
        rng = self.rng
        fn = rng.choice(["min", "max"])
        first = self._not_literal(depth - 1)
        rest = []
        for _ in range(rng.choice([1, 1, 2])):
            r = rng.random()
            n = self.scalar_arg() if r < 0.3 else self.literal() if r < 0.5 else \
                self.expr(depth - 1)
            if n.literal and n.ev({}) < 0 and "uint" in (first.dt.kind, n.dt.kind):
                n = self.literal(False)
            rest.append(n)
        nodes = [first] + rest
        types = [first.dt]
        for n in rest:
            types.append(minmax_operands_type(types[-1], n.dt))
        np_fn = np.minimum if fn == "min" else np.maximum

        def ev(env, nodes=nodes, types=types, np_fn=np_fn):
            cur = np.asarray(nodes[0].ev(env))
            for n, t in zip(nodes[1:], types[1:]):
                x = cur.astype(t.np)
                y = t.np.type(n.ev(env)) if n.literal else np.asarray(n.ev(env)).astype(t.np)
                if t.is_float and (np.isnan(x.astype(np.float64)).any() or
                                   np.isnan(np.asarray(y).astype(np.float64)).any()):
                    raise Undefined("NaN into min/max")
                cur = np.asarray(np_fn(x, y)).astype(t.np)
            return cur
        return Node(f"{fn}({', '.join(n.text for n in nodes)})", types[-1], ev,
                    self._shape(*nodes), exact=all(n.exact for n in nodes))
