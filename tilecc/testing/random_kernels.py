"""Random valid kernels, for differential testing: each `Program` is the *source text* of a
kernel (element-wise expressions over every integer and float dtype, Python literals,
broadcasting, masked loads, casts, reductions, scans, atomics, small `tl.dot`s, tl.flip and
tl.sort of the block) together
with its expected outputs computed by an independent NumPy evaluation of the same
expression tree, with Triton's typing rules written out here (not taken from tilecc).

    prog = generate(seed)            # deterministic in the seed
    kernel = prog.load(tmpdir)       # writes prog.source to a .py file and imports it
    args = prog.make_args()
    kernel.interpret[prog.grid](*args)
    prog.check(args)                 # raises Mismatch-like AssertionError with the source

`expected` is None where the program computes something Triton leaves undefined (signed
32/64-bit overflow, a division by zero, an out-of-range shift or float-to-int conversion,
NaN into min/max); such programs still must compile and run, only their values are not
compared.  tests/test_random_kernels.py runs a few hundred in CI;
scripts/gpu/random_kernels.py runs thousands on a GPU.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tilecc.testing import random_wild as W
from tilecc.testing.random_dot_loops import (batched_block_program, dot_loop_program,
                                             masked_chain_program, product_meets_load_program,
                                             shared_operand_program)
from tilecc.testing.random_exprs import (  # noqa: F401 - re-exported for tests
    CUMSUM_TO, SUM_TO, D, DT, DTYPES, RTOL, Gen, Undefined, _check_int_range, _ints, _wrap,
    block_len, cast_value, computation_type, literal_type, minmax_type, sum_rtol)
from tilecc.testing.random_program import (  # noqa: F401 - re-exported
    Output, Program, close, compare_output, random_array)
from tilecc.testing.random_wild import LATER_FEATURES, WILD_FEATURES

__all__ = ["Program", "generate", "check", "run_gpu", "Undefined", "FEATURES",
           "WILD_FEATURES", "LATER_FEATURES"]

FEATURES = ("elementwise", "reduce", "scan", "atomic", "dot", "reorder")
# WILD_FEATURES (random_wild.py): constructs of libraries' kernels, drawn only when asked
# for (generate(seed, WILD_FEATURES)), so that the programs of FEATURES stay as they were


# --- whole programs --------------------------------------------------------------------------

_COMBINES = '''

@tilecc.jit
def max_combine(a, b):
    return tl.maximum(a, b)


@tilecc.jit
def add_combine(a, b):
    return a + b
'''


def generate(seed: int, features: tuple[str, ...] = FEATURES,
             descriptors: bool = False, transposed: bool = False) -> Program:
    """The random program of `seed`: a kernel of one of `features`; with `descriptors`, its
    contiguous loads go through tensor descriptors (the program is otherwise the same);
    with `transposed`, a `tl.dot`'s operands may be stored transposed and read as `x.T`."""
    rng = random.Random(seed)
    weights = {"elementwise": 3, "reduce": 2, "scan": 1.5, "atomic": 1, "dot": 1, "reorder": 1,
               **W.WEIGHTS}
    feature = rng.choices(features, [weights[f] for f in features])[0]
    if feature in ("dot", "skinny_dot"):
        return _dot_program(seed, rng, transposed, skinny=feature == "skinny_dot")
    if feature in ("dot_loop", "scaled_dot_loop"):  # (random_dot_loops: K loops over
        # blocks of pointers; scaled by loads of the loop)
        return dot_loop_program(seed, rng, D, scaled=feature == "scaled_dot_loop")
    if feature == "batched_dot":
        return _batched_dot_program(seed, rng)
    if feature == "chained_dot":
        return _chained_dot_program(seed, rng)
    if feature == "shared_operand":
        return shared_operand_program(seed, rng, D)
    if feature == "product_meets_load":
        return product_meets_load_program(seed, rng, D)
    if feature == "masked_chain":
        return masked_chain_program(seed, rng, D)
    if feature == "batched_block":
        return batched_block_program(seed, rng, D)
    rank = rng.choice([1, 2, 2])
    M = rng.choice([1, 2, 4, 8]) if rank == 2 else 1
    N = rng.choice([16, 32, 64, 128] if rank == 2 else [16, 32, 64, 128, 256, 1024])
    G = rng.choice([1, 2, 3])
    grid = W.grid_dims(rng) if feature == "grid_3d" else (G,)
    G = math.prod(grid)
    block = M * N
    n = rng.randint(1, G * block)
    rows = rng.randint(1, M)
    wild = feature in WILD_FEATURES or feature in LATER_FEATURES
    gen = W.WildGen(rng, rank, M, N, descriptors, nodes=W.NODES & {feature}) if wild else \
        Gen(rng, rank, M, N, descriptors)
    res = gen._not_literal(rng.choice([1, 2, 3, 3, 4]))
    res_text = res.text
    if res.shape != "full":
        shape = "(M, N)" if rank == 2 else "(N,)"
        res_text = f"tl.broadcast_to({res.text}, {shape})"
    if res.dt.kind == "bool":
        res_text, res_dt = f"({res_text}).to(tl.int8)", D["int8"]
    else:
        res_dt = res.dt
    tail = W.TAILS[feature](W.Frame(rng, gen, rank, M, N, G, res, res_dt)) if wild else None
    body = list(gen.stmts)
    name = f"random_kernel_{seed}"
    floats = {d.name for d in (res_dt,) if d.is_float} | {d.name for _, d, _, _ in gen.loads
                                                          if d.is_float}
    rtol = max((RTOL[f] for f in floats), default=RTOL["float32"])
    rtol = max(rtol, RTOL["float32"])
    outputs: list[Output] = []
    final: list[str] = []
    if feature in ("elementwise", "reduce", "scan", "atomic", "reorder") or wild:
        final.append(f"res = {res_text}")
    reduce_fn = axis = None
    if feature == "reduce":
        reduce_fn = rng.choice(["sum", "max", "min", "argmax", "argmin", "reduce_max"])
        if reduce_fn in ("argmax", "argmin", "max", "min", "reduce_max") and not res.exact:
            reduce_fn = "sum"
        axis = rng.choice([0, 1]) if rank == 2 else 0
        call = (f"tl.reduce(res, {axis}, max_combine)" if reduce_fn == "reduce_max"
                else f"tl.{reduce_fn}(res, axis={axis})")
        final.append(f"r = {call}")
        if rank == 1:
            final.append("tl.store(out_ptr + pid, r)")
            size = G
        elif axis == 1:
            final.append("tl.store(out_ptr + pid * M + rm, r)")
            size = G * M
        else:
            final.append("tl.store(out_ptr + pid * N + rn, r)")
            size = G * N
        out_dt = D["int32"] if reduce_fn in ("argmax", "argmin") else \
            D[SUM_TO.get(res_dt.name, res_dt.name)] if reduce_fn == "sum" else \
            minmax_type(res_dt) if reduce_fn in ("max", "min") else res_dt
        outputs.append(Output("out_ptr", out_dt, size,
                              exact=res.exact and (reduce_fn != "sum" or out_dt.is_int)))
    elif feature == "scan":
        scan_fn = rng.choice(["cumsum", "cumsum", "scan_max"]) if res.exact else "cumsum"
        axis = rng.choice([0, 1]) if rank == 2 else 0
        call = (f"tl.associative_scan(res, {axis}, max_combine)" if scan_fn == "scan_max"
                else f"tl.cumsum(res, axis={axis})")
        reduce_fn = scan_fn
        final.append(f"r = {call}")
        final.append("tl.store(out_ptr + offs, r, mask=mask)")
        out_dt = D[CUMSUM_TO.get(res_dt.name, res_dt.name)] if scan_fn == "cumsum" else res_dt
        outputs.append(Output("out_ptr", out_dt, G * block,
                              exact=res.exact and (scan_fn != "cumsum" or out_dt.is_int)))
    elif feature == "reorder":  # tl.flip along an axis, tl.sort along the last one
        reduce_fn = rng.choice(["flip", "sort", "sort_descending"])
        axis = rng.choice([0, 1]) if rank == 2 and reduce_fn == "flip" else rank - 1
        call = f"tl.flip(res, {axis})" if reduce_fn == "flip" else \
            f"tl.sort(res, descending={reduce_fn == 'sort_descending'})"
        final.append(f"r = {call}")
        final.append("tl.store(out_ptr + offs, r, mask=mask)")
        outputs.append(Output("out_ptr", res_dt, G * block, exact=res.exact))
        out_dt = res_dt
    elif feature == "atomic":
        at = rng.choice(["int32", "float32"]) if res.exact else "float32"
        ops = ["add", "max", "min", "xchg"] + (["and", "or", "xor"] if at == "int32" else [])
        op = rng.choice(ops) if res.exact else "add"
        reduce_fn = f"atomic_{op}"
        final.append(f"old = tl.atomic_{op}(acc_ptr + offs, res.to(tl.{at}), mask=mask)")
        final.append("tl.store(out_ptr + offs, old, mask=mask)")
        outputs.append(Output("acc_ptr", D[at], G * block, exact=res.exact, init="zeros"))
        outputs.append(Output("out_ptr", D[at], G * block, exact=True))
        out_dt = D[at]
    elif tail is not None:
        final += tail.lines
        outputs += [Output(*o) for o in tail.outputs]
        out_dt, reduce_fn = res_dt, feature
    elif rng.random() < 0.25:  # a loop accumulating the value: loop-carried blocks
        final.append(f"acc = tl.zeros({gen.block_shape()}, dtype=tl.{res_dt.name})")
        final.append("for i in range(trips):")
        final.append(f"    acc += {res_text}")
        final.append("tl.store(out_ptr + offs, acc, mask=mask)")
        outputs.append(Output("out_ptr", res_dt, G * block, exact=res.exact and res_dt.is_int))
        out_dt = res_dt
        reduce_fn = "loop"
    elif rng.random() < 0.25:  # an if on a run-time scalar: both branches give one type
        final.append("if trips > 1:")
        final.append(f"    res = {res_text} * 2")
        final.append("else:")
        final.append(f"    res = {res_text} - 1")
        final.append("tl.store(out_ptr + offs, res, mask=mask)")
        outputs.append(Output("out_ptr", res_dt, G * block, exact=res.exact))
        out_dt = res_dt
        reduce_fn = "branch"
    else:
        final.append(f"tl.store(out_ptr + offs, {res_text}, mask=mask)")
        outputs.append(Output("out_ptr", res_dt, G * block, exact=res.exact))
        out_dt = res_dt

    if reduce_fn in ("sum", "cumsum") and out_dt.is_float:
        gen.sum_rtol = max(gen.sum_rtol, sum_rtol(out_dt, block_len(gen, axis)))
    rtol = max(rtol, gen.sum_rtol)
    params: list[tuple[str, Any]] = []
    arrays: dict[str, tuple[DT, int]] = {}
    for param, dt, shape, _ in gen.loads:
        size = {"full": G * block, "full:stride2": 2 * G * block, "full:shift1": G * block + 1,
                "full:trans": G * block, "full:desc": G * block, "row": G * M, "col": N,
                "scalar": G}[shape]
        params.append((param, "array"))
        arrays[param] = (dt, size)
    for o in outputs:
        params.append((o.param, "array"))
    scalars = {}
    for sname, dt, value in gen.scalars:
        params.append((sname, dt.sig))
        scalars[sname] = value
    trips = rng.choice([0, 2, 3])
    constexprs = {}
    if wild:
        head, head_params, head_scalars = W.header(feature, rng, rank, grid)
        params += tail.params + head_params
        arrays.update(tail.arrays)
        scalars.update(tail.scalars, **head_scalars)
        constexprs.update(tail.constexprs)
    params += [("n", "i32"), ("rows", "i32"), ("trips", "i32"), ("M", "constexpr"),
               ("N", "constexpr")]
    scalars.update(n=n, rows=rows, trips=trips)
    constexprs.update(M=M, N=N)

    signature = ", ".join(f"{p}: tl.constexpr" if k == "constexpr" else p for p, k in params)
    lines = ["import tilecc", "import tilecc.language as tl",
             _COMBINES + (tail.helpers if wild else ""), "",
             "@tilecc.jit",
             f"def {name}({signature}):"]
    ranges = ["    rm = tl.arange(0, M)", "    rn = tl.arange(0, N)"]
    if wild:
        lines += ranges + [f"    {h}" for h in head]
    else:
        lines += ["    pid = tl.program_id(0)"] + ranges
        if rank == 2:
            lines.append("    offs = pid * (M * N) + rm[:, None] * N + rn[None, :]")
        else:
            lines.append("    offs = pid * N + rn")
    lines.append("    mask = offs < n")
    lines += [f"    {s}" for s in body + final]
    source = "\n".join(lines) + "\n"

    def reference(inputs: dict, nudge: int = 0) -> dict:
        outs = {o.param: (np.zeros(o.size, o.dt.np), np.zeros(o.size, bool)) for o in outputs}
        if "acc_ptr" in outs:
            outs["acc_ptr"] = (inputs["acc_ptr"].copy(), np.ones(G * block, bool))
        rm, rn = np.arange(M), np.arange(N)
        for pid in range(G):
            offs = (pid * block + rm[:, None] * N + rn[None, :]) if rank == 2 else pid * N + rn
            mask = offs < n
            loads = {}
            for param, dt, shape, other in gen.loads:
                src = inputs[param]
                if shape == "full:desc":  # whole rows inside n (rank 2), else padding 0
                    inside = (pid * M + rm[:, None] < n // N) if rank == 2 else mask
                    v = np.where(inside, src[np.minimum(offs, src.size - 1)],
                                 cast_value(np.asarray(0), literal_type(0), dt))
                elif shape.startswith("full"):
                    where = {"full": offs, "full:stride2": offs * 2, "full:shift1": offs + 1,
                             "full:trans": pid * block + rm[:, None] + rn[None, :] * M
                             if rank == 2 else None}[shape]
                    v = np.where(mask, src[np.minimum(where, src.size - 1)],
                                 cast_value(np.asarray(other), literal_type(other), dt))
                elif shape == "row":
                    v = np.where(rm < rows, src[pid * M + rm],
                                 cast_value(np.asarray(other), literal_type(other), dt))[:, None]
                elif shape == "col":
                    v = src[rn][None, :]
                else:
                    v = src[pid]
                loads[param] = np.asarray(v).astype(dt.np)
            env = {"loads": loads, "nudge": nudge}
            full = np.broadcast_to(np.asarray(res.ev(env)).astype(res.dt.np), offs.shape)
            full = full.astype(res_dt.np)
            if tail is not None:
                tail.finish(W.Step(pid, full, offs, mask, outs, inputs, env, trips, scalars))
                continue
            _finish(feature, reduce_fn, axis, rank, full, res_dt, out_dt, outs, pid, offs, mask,
                    M, N, trips)
        return outs

    return Program(seed, feature, source, name, params, arrays, outputs, constexprs, grid,
                   rng.choice([1, 2, 4]), rtol, reference, scalars)


def _finish(feature, fn, axis, rank, full, res_dt, out_dt, outs, pid, offs, mask, M, N,
            trips=0):
    """Apply the program's last step (store / reduce / scan / atomic) to one program's block."""
    if fn == "branch":
        double = trips > 1
        if res_dt.is_int:
            v = _ints(full) * 2 if double else _ints(full) - 1
            _check_int_range(v, res_dt, "* 2" if double else "- 1")
            full = _wrap(v, res_dt)
        else:
            full = (full * res_dt.np.type(2) if double else full - res_dt.np.type(1)
                    ).astype(res_dt.np)
    if fn == "loop":
        acc = np.zeros(full.shape, res_dt.np)
        for _ in range(trips):
            if res_dt.is_int:
                total = _ints(acc) + _ints(full)
                _check_int_range(total, res_dt, "+=")
                acc = _wrap(total, res_dt)
            else:
                acc = (acc + full).astype(res_dt.np)
        full = acc
    if feature == "elementwise":
        vals, written = outs["out_ptr"]
        vals[offs[mask]] = full[mask]
        written[offs[mask]] = True
        return
    if feature == "reorder":  # the whole block, masked lanes' values included, reordered
        if fn == "flip":
            r = np.flip(full, axis)
        else:
            if res_dt.is_float and np.isnan(full.astype(np.float64)).any():
                raise Undefined("NaN into a sort (Triton's network may duplicate it)")
            r = np.sort(full, axis=-1)
            if fn == "sort_descending":
                r = np.flip(r, -1)
        vals, written = outs["out_ptr"]
        vals[offs[mask]] = r[mask]
        written[offs[mask]] = True
        return
    if feature == "atomic":
        v = cast_value(full, res_dt, out_dt)
        acc, _ = outs["acc_ptr"]
        old, written = outs["out_ptr"]
        idx = offs[mask]
        old[idx] = acc[idx]
        written[idx] = True
        if fn in ("atomic_and", "atomic_or", "atomic_xor"):
            f = {"atomic_and": np.bitwise_and, "atomic_or": np.bitwise_or,
                 "atomic_xor": np.bitwise_xor}[fn]
            acc[idx] = f(acc[idx], v[mask])
        elif fn == "atomic_xchg":
            acc[idx] = v[mask]
        elif fn == "atomic_min":
            acc[idx] = np.minimum(acc[idx], v[mask])
        elif fn == "atomic_add":
            if out_dt.kind == "int":
                s = _ints(acc[idx]) + _ints(v[mask])
                _check_int_range(s, out_dt, "atomic_add")
                acc[idx] = _wrap(s, out_dt)
            else:
                acc[idx] = acc[idx] + v[mask]
        else:
            acc[idx] = np.maximum(acc[idx], v[mask])
        return
    if fn in ("sum", "cumsum"):
        sum_dt = out_dt
        x = cast_value(full, res_dt, sum_dt) if res_dt != sum_dt else full
        if sum_dt.is_int:
            xs = _ints(x)
            r = xs.sum(axis=axis) if fn == "sum" else np.cumsum(xs, axis=axis)
            _check_int_range(r, sum_dt, fn)
            r = _wrap(r, sum_dt)
        else:
            acc_t = np.float64
            r = (x.astype(acc_t).sum(axis=axis) if fn == "sum"
                 else np.cumsum(x.astype(acc_t), axis=axis)).astype(sum_dt.np)
    elif fn in ("max", "min"):
        r = getattr(cast_value(full, res_dt, out_dt), fn)(axis=axis)
    elif fn == "reduce_max":
        r = full.max(axis=axis)
    elif fn in ("argmax", "argmin"):
        r = getattr(np, fn)(full, axis=axis).astype(np.int32)
    elif fn == "scan_max":
        r = np.maximum.accumulate(full, axis=axis)
    else:  # pragma: no cover
        raise AssertionError(fn)
    if res_dt.is_float and fn in ("max", "min", "reduce_max", "scan_max", "argmax", "argmin") \
            and np.isnan(full.astype(np.float64)).any():
        raise Undefined("NaN into a max/min reduction")
    vals, written = outs["out_ptr"]
    if feature == "scan":
        vals[offs[mask]] = np.asarray(r)[mask]
        written[offs[mask]] = True
    elif rank == 1:
        vals[pid] = r
        written[pid] = True
    elif axis == 1:
        vals[pid * M: (pid + 1) * M] = r
        written[pid * M: (pid + 1) * M] = True
    else:
        vals[pid * N: (pid + 1) * N] = r
        written[pid * N: (pid + 1) * N] = True


# what a product's program stores (by whether its inputs are integers), and its value
DOT_EPILOGUES = {False: ["acc", "acc * 2.0 + c", "tl.maximum(acc, 0.0)",
                         "(acc + c).to(tl.float16)"],
                 True: ["acc", "acc * 2 + c", "tl.maximum(acc, 0)"]}


def _epilogue_value(epilogue: str, acc, c, is_int: bool, out_dt) -> np.ndarray:
    """The stored values of `epilogue` (DOT_EPILOGUES) of float64 `acc` and `c`, flat."""
    if is_int:
        r = {"acc": acc, "acc * 2 + c": acc * 2 + c,
             "tl.maximum(acc, 0)": np.maximum(acc, 0)}[epilogue]
    else:
        acc, c32 = acc.astype(np.float32), c.astype(np.float32)
        r = {"acc": acc, "acc * 2.0 + c": acc * np.float32(2) + c32,
             "tl.maximum(acc, 0.0)": np.maximum(acc, np.float32(0)),
             "(acc + c).to(tl.float16)": (acc + c32).astype(np.float16)}[epilogue]
    return np.asarray(r).astype(out_dt.np).reshape(-1)


def _dot_program(seed: int, rng: random.Random, transposed: bool = False,
                 skinny: bool = False) -> Program:
    """acc = tl.dot(a, b[, acc=c]) on [M, K] x [K, N] tiles of fp16, bf16, fp32 or int8,
    the operands' K tail masked or not, then an epilogue.  `transposed`: A stored K x M
    and / or B stored N x K, loaded so and multiplied as `.T` (at least one of them).
    `skinny`: M or N below 16 (a matrix times a vector, down to 1 x 1), K up to 64."""
    dt = D[rng.choice(["float16", "float32", "int8"]
                      + (["bfloat16"] if "bfloat16" in D else []))]
    acc_t = D["int32"] if dt.is_int else D["float32"]
    if skinny:
        sizes = [1, 2, 4, 8, 16, 32, 64]
        M, N, K = rng.choice(sizes), rng.choice(sizes[:4]), rng.choice([16, 32, 64])
        if rng.random() < 0.5:
            M, N = N, M
    else:
        M, N, K = rng.choice([16, 32]), rng.choice([16, 32]), rng.choice([16, 32])
    if dt.is_int:
        K *= 2  # int8 products need K >= 32 (Triton's minimum too)
    precision = ", input_precision=\"ieee\"" if dt.name == "float32" and rng.random() < 0.5 \
        else ""
    with_acc = rng.random() < 0.3
    k_masked = rng.random() < 0.3
    kk = rng.randint(1, K) if k_masked else K
    epilogue = rng.choice(DOT_EPILOGUES[dt.is_int])
    name = f"random_kernel_{seed}"
    G = rng.choice([1, 2])
    warps = rng.choice([1, 2, 4])
    a_t = b_t = False
    if transposed:  # (drawn last: the programs without it stay as they were)
        a_t, b_t = rng.random() < 0.5, rng.random() < 0.5
        b_t = b_t or not a_t
    # Triton wants out_dtype=tl.int32 beside an int32 acc (the programs of "dot" leave it
    # out, which tilecc takes)
    int_acc = ", out_dtype=tl.int32" if skinny and with_acc and dt.is_int else ""
    k_row, k_col = ", mask=rk[None, :] < kk, other=0", ", mask=rk[:, None] < kk, other=0"
    a_mask = (k_col if a_t else k_row) if k_masked else ""
    b_mask = (k_row if b_t else k_col) if k_masked else ""
    a_load = (f"tl.load(a_ptr + pid * (M * K) + rk[:, None] * M + rm[None, :]{a_mask}).T"
              if a_t else f"tl.load(a_ptr + pid * (M * K) + rm[:, None] * K + rk[None, :]{a_mask})")
    b_load = (f"tl.load(b_ptr + rn[:, None] * K + rk[None, :]{b_mask}).T" if b_t
              else f"tl.load(b_ptr + rk[:, None] * N + rn[None, :]{b_mask})")
    source = "\n".join([
        "import tilecc", "import tilecc.language as tl", "", "",
        "@tilecc.jit",
        f"def {name}(a_ptr, b_ptr, c_ptr, out_ptr, kk, M: tl.constexpr, N: tl.constexpr, "
        "K: tl.constexpr):",
        "    pid = tl.program_id(0)",
        "    rm = tl.arange(0, M)",
        "    rn = tl.arange(0, N)",
        "    rk = tl.arange(0, K)",
        f"    a = {a_load}",
        f"    b = {b_load}",
        "    c = tl.load(c_ptr + rm[:, None] * N + rn[None, :])",
        f"    acc = tl.dot(a, b{', acc=c' if with_acc else ''}{int_acc}{precision})",
        f"    tl.store(out_ptr + pid * (M * N) + rm[:, None] * N + rn[None, :], {epilogue})",
    ]) + "\n"
    out_dt = D["float16"] if "float16)" in epilogue else acc_t
    # tf32 products keep 10 mantissa bits of the inputs; the inputs here are multiples of
    # 1/4 in [-4, 4], exact in every input type, so only the sums' order differs
    rtol = RTOL["float16"] if out_dt.name == "float16" else 1e-4

    def reference(inputs: dict, nudge: int = 0) -> dict:
        a = inputs["a_ptr"].astype(np.float64)
        a = (a.reshape(G, K, M).transpose(0, 2, 1) if a_t else a.reshape(G, M, K))[:, :, :kk]
        b = inputs["b_ptr"].astype(np.float64)
        b = (b.reshape(N, K).T if b_t else b.reshape(K, N))[:kk]
        c = inputs["c_ptr"].astype(np.float64).reshape(M, N)
        acc = a @ b + (c if with_acc else 0)  # exact: small integers and quarters
        r = _epilogue_value(epilogue, acc, c, dt.is_int, out_dt)
        return {"out_ptr": (r, np.ones(r.size, bool))}

    return Program(seed, "skinny_dot" if skinny else "dot", source, name,
                   [("a_ptr", "array"), ("b_ptr", "array"), ("c_ptr", "array"),
                    ("out_ptr", "array"), ("kk", "i32"), ("M", "constexpr"), ("N", "constexpr"),
                    ("K", "constexpr")],
                   {"a_ptr": (dt, G * M * K), "b_ptr": (dt, K * N), "c_ptr": (acc_t, M * N)},
                   [Output("out_ptr", out_dt, G * M * N, exact=dt.is_int)],
                   {"M": M, "N": N, "K": K}, (G,), warps, rtol, reference,
                   {"kk": kk})


def _batched_dot_program(seed: int, rng: random.Random) -> Program:
    """acc = tl.dot(a, b[, acc=c]) on [B, M, K] x [B, K, N] blocks of fp16, bf16, fp32 or
    int8 (one 2-D product per batch), then an epilogue; A stored with its batch axis first
    or last in memory, each program its own batches of A and of the output."""
    dt = D[rng.choice(["float16", "float32", "int8"]
                      + (["bfloat16"] if "bfloat16" in D else []))]
    acc_t = D["int32"] if dt.is_int else D["float32"]
    B, M, N, K = (rng.choice([1, 2, 4, 8]), rng.choice([16, 32]), rng.choice([16, 32]),
                  rng.choice([16, 32]))
    if dt.is_int:
        K *= 2  # int8 products need K >= 32 (Triton's minimum too)
    with_acc, a_last, warps, G = (rng.random() < 0.4, rng.random() < 0.3,
                                  rng.choice([1, 2, 4, 8]), rng.choice([1, 2]))
    epilogue = rng.choice(DOT_EPILOGUES[dt.is_int])
    name = f"random_kernel_{seed}"
    a_at = "rm * (K * B) + rk_row * B + rb" if a_last else "rb * (M * K) + rm * K + rk_row"
    source = "\n".join([
        "import tilecc", "import tilecc.language as tl", "", "",
        "@tilecc.jit",
        f"def {name}(a_ptr, b_ptr, c_ptr, out_ptr, B: tl.constexpr, M: tl.constexpr, "
        "N: tl.constexpr, K: tl.constexpr):",
        "    pid = tl.program_id(0)",
        "    rb = tl.arange(0, B)[:, None, None]",
        "    rm = tl.arange(0, M)[None, :, None]",
        "    rn = tl.arange(0, N)[None, None, :]",
        "    rk_row = tl.arange(0, K)[None, None, :]",
        "    rk_col = tl.arange(0, K)[None, :, None]",
        f"    a = tl.load(a_ptr + pid * (B * M * K) + {a_at})",
        "    b = tl.load(b_ptr + rb * (K * N) + rk_col * N + rn)",
        "    c = tl.load(c_ptr + rb * (M * N) + rm * N + rn)",
        f"    acc = tl.dot(a, b{', acc=c' if with_acc else ''})",
        f"    tl.store(out_ptr + pid * (B * M * N) + rb * (M * N) + rm * N + rn, {epilogue})",
    ]) + "\n"
    out_dt = D["float16"] if "float16)" in epilogue else acc_t
    rtol = RTOL["float16"] if out_dt.name == "float16" else 1e-4

    def reference(inputs: dict, nudge: int = 0) -> dict:
        a = inputs["a_ptr"].astype(np.float64)
        a = a.reshape(G, M, K, B).transpose(0, 3, 1, 2) if a_last else a.reshape(G, B, M, K)
        b = inputs["b_ptr"].astype(np.float64).reshape(B, K, N)
        c = inputs["c_ptr"].astype(np.float64).reshape(B, M, N)
        acc = a @ b + (c if with_acc else 0)  # exact: small integers and quarters
        r = _epilogue_value(epilogue, acc, c, dt.is_int, out_dt)
        return {"out_ptr": (r, np.ones(r.size, bool))}

    return Program(seed, "batched_dot", source, name,
                   [("a_ptr", "array"), ("b_ptr", "array"), ("c_ptr", "array"),
                    ("out_ptr", "array"), ("B", "constexpr"), ("M", "constexpr"),
                    ("N", "constexpr"), ("K", "constexpr")],
                   {"a_ptr": (dt, G * B * M * K), "b_ptr": (dt, B * K * N),
                    "c_ptr": (acc_t, B * M * N)},
                   [Output("out_ptr", out_dt, G * B * M * N, exact=dt.is_int)],
                   {"B": B, "M": M, "N": N, "K": K}, (G,), warps, rtol, reference)


# a product's result, made the next product's A (`acc` the first product, fp32)
CHAIN_STEPS = {"acc": lambda p: p, "tl.maximum(acc, 0.0)": lambda p: np.maximum(p, 0.0),
               "acc * 0.5": lambda p: p * 0.5}


def _chained_dot_program(seed: int, rng: random.Random) -> Program:
    """out = tl.dot(f(tl.dot(a, b)).to(a's type), c) on [M, K] x [K, N] x [N, L] tiles of
    fp16 or bf16 (or fp32, which stays in shared memory): where the warps split the
    second product along M only, its A goes to mma.sync from the first's accumulator
    registers.  The first product is exact in fp32, its cast rounded as NumPy rounds."""
    dt = D[rng.choice(["float16", "float16", "float32"]
                      + (["bfloat16", "bfloat16"] if "bfloat16" in D else []))]
    M, N, K, L = (rng.choice([16, 32, 64, 128]), rng.choice([16, 32]), rng.choice([16, 32]),
                  rng.choice([16, 32, 64]))
    warps, G = rng.choice([1, 2, 4, 8]), rng.choice([1, 2])
    step = rng.choice(sorted(CHAIN_STEPS))
    name = f"random_kernel_{seed}"
    source = "\n".join([
        "import tilecc", "import tilecc.language as tl", "", "",
        "@tilecc.jit",
        f"def {name}(a_ptr, b_ptr, c_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, "
        "K: tl.constexpr, L: tl.constexpr):",
        "    pid = tl.program_id(0)",
        "    rm = tl.arange(0, M)",
        "    rn = tl.arange(0, N)",
        "    rk = tl.arange(0, K)",
        "    rl = tl.arange(0, L)",
        "    a = tl.load(a_ptr + pid * (M * K) + rm[:, None] * K + rk[None, :])",
        "    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])",
        "    c = tl.load(c_ptr + rn[:, None] * L + rl[None, :])",
        "    acc = tl.dot(a, b)",
        f"    p = ({step}).to(a.dtype)",
        "    tl.store(out_ptr + pid * (M * L) + rm[:, None] * L + rl[None, :], tl.dot(p, c))",
    ]) + "\n"

    def reference(inputs: dict, nudge: int = 0) -> dict:
        a = inputs["a_ptr"].astype(np.float64).reshape(G, M, K)
        b = inputs["b_ptr"].astype(np.float64).reshape(K, N)
        c = inputs["c_ptr"].astype(np.float64).reshape(N, L)
        # quarters in [-4, 4]: both products exact in fp32 (fp32 operands: tf32 rounds
        # nothing of them, but the first product's sums then do; the tolerance covers it)
        p = CHAIN_STEPS[step](a @ b).astype(dt.np).astype(np.float64)
        r = (p @ c).astype(np.float32).reshape(-1)
        return {"out_ptr": (r, np.ones(r.size, bool))}

    return Program(seed, "chained_dot", source, name,
                   [("a_ptr", "array"), ("b_ptr", "array"), ("c_ptr", "array"),
                    ("out_ptr", "array"), ("M", "constexpr"), ("N", "constexpr"),
                    ("K", "constexpr"), ("L", "constexpr")],
                   {"a_ptr": (dt, G * M * K), "b_ptr": (dt, K * N), "c_ptr": (dt, N * L)},
                   [Output("out_ptr", D["float32"], G * M * L, exact=False)],
                   {"M": M, "N": N, "K": K, "L": L}, (G,), warps,
                   1e-2 if dt.name == "float32" else 1e-4, reference)


# --- checking one program --------------------------------------------------------------------

def run_interpreter(prog: Program, kernel) -> tuple[list, str | None]:
    """Launch `kernel` on the interpreter; (its arguments after the run, a mismatch or None)."""
    args = prog.make_args()
    kernel.interpret[prog.grid](*args, num_warps=prog.num_warps, num_stages=prog.num_stages)
    expected = prog.expected()
    if expected is None:
        return args, None
    return args, prog.compare(args, expected, "interpreter vs NumPy")


def same_outputs(prog: Program, got: list, want: list, what: str) -> str | None:
    """Compare two launches' outputs (GPU vs interpreter) with the program's tolerance."""
    by_got = {name: a for (name, _), a in zip(prog.params, got)}
    by_want = {name: a for (name, _), a in zip(prog.params, want)}
    expected = prog.expected()
    for o in prog.outputs:
        written = np.ones(o.size, bool) if expected is None else expected[o.param][1]
        problem = compare_output(np.asarray(by_got[o.param]), (np.asarray(by_want[o.param]),
                                                               written), o, prog.rtol)
        if problem:
            return f"{what}: output {o.param} ({o.dt.name}): {problem}"
    return None


@dataclass
class Result:
    """What happened to one program: the first problem found, by kind, or all fine."""

    seed: int
    kind: str = "ok"     # ok, internal (tilecc raised), rejected (compiler), interpreter,
    detail: str = ""     # mismatch, gpu (launch failed); ill-conditioned: differs only
    # where no implementation can promise a value (Program.ill_conditioned), not a failure
    undefined: bool = False
    args: list | None = field(default=None, repr=False)
    sources: dict[str, str] = field(default_factory=dict, repr=False)  # transpiled, by target


TARGETS = (("cuda", "sm_80"), ("cuda", "sm_90"), ("hip", "gfx90a"))


def check(prog: Program, directory: str, targets=TARGETS, interpret: bool = True) -> Result:
    """Transpile `prog` for each target and compile it (NVRTC / hiprtc, one by one; see
    `compile_batch` for many at once), then run it on the interpreter against NumPy.
    `targets` may hold (target, None): transpile only, the source kept in `sources`."""
    from tilecc.runtime.native_compile import NativeCompileError

    res = Result(prog.seed)
    try:
        kernel = prog.load(directory)
        for target, arch in targets:
            if arch is None:
                res.sources[target] = kernel.source(prog.signature(), target=target,
                                                    num_warps=prog.num_warps,
                                                    num_stages=prog.num_stages)
            else:
                kernel.compile(prog.signature(), target=target, arch=arch,
                               num_warps=prog.num_warps, num_stages=prog.num_stages)
    except NativeCompileError as e:
        res.kind, res.detail = "rejected", str(e)
        return res
    except Exception as e:  # CompilationError on a valid program is an internal error too
        rejected = "rejected the generated code" in str(e)
        res.kind = "rejected" if rejected else "internal"
        res.detail = f"{type(e).__name__}: {e}"
        return res
    if not interpret:
        return res
    try:
        res.args, problem = run_interpreter(prog, kernel)
    except Exception as e:
        res.kind, res.detail = "interpreter", f"{type(e).__name__}: {e}"
        return res
    res.undefined = prog.expected() is None
    if problem:
        res.kind, res.detail = _mismatch(prog, res.args, problem)
    return res


def _mismatch(prog: Program, args: list, problem: str) -> tuple[str, str]:
    """A difference's kind: "ill-conditioned" where it is confined to such elements."""
    expected = prog.expected()
    if expected is not None and prog.explained_by_conditioning(args, expected):
        return "ill-conditioned", problem
    return "mismatch", problem


def sources(prog: Program, directory: str, target: str) -> str:
    kernel = prog.load(directory)
    return kernel.source(prog.signature(), target=target, num_warps=prog.num_warps,
                         num_stages=prog.num_stages)


def compile_batch(texts: list[str], target: str, arch: str):
    """Compile several generated kernels as one translation unit (tilecc.testing.batch):
    one compiler start for many programs."""
    from tilecc.testing import batch

    return batch.compile_batch(texts, target, arch)


# --- on a GPU --------------------------------------------------------------------------------

def precompile(prog: Program, kernel, arch: str) -> None:
    """Compile (into the disk cache) the specialization a launch with `prog`'s arguments
    picks, so that a process that only launches finds it there."""
    from tilecc.runtime import compiler

    values, _ = kernel.bind(tuple(prog.make_args()), {"num_warps": prog.num_warps})
    specs, _ = kernel.specs_for(values)
    compiler.compile(kernel, specs, "cuda", kernel.options(
        num_warps=prog.num_warps, num_stages=prog.num_stages, arch=arch))


def _to_device(a: np.ndarray):
    if a.dtype.name == "bfloat16":  # CuPy has no bfloat16: torch
        import torch

        return torch.from_numpy(a.view(np.int16).copy()).cuda().view(torch.bfloat16)
    import cupy

    return cupy.asarray(a)


def _to_host(d, like: np.ndarray) -> np.ndarray:
    if type(d).__module__.startswith("torch"):
        import torch

        return d.view(torch.int16).cpu().numpy().view(like.dtype)
    import cupy

    return cupy.asnumpy(d)


def run_gpu(prog: Program, kernel, interpreted: Result) -> Result:
    """Launch `prog` on the GPU; compare with the interpreter's outputs (`interpreted.args`)
    and with NumPy's."""
    res = Result(prog.seed, undefined=interpreted.undefined)
    host = prog.make_args()
    try:
        dev = [_to_device(a) if isinstance(a, np.ndarray) else a for a in host]
        kernel[prog.grid](*dev, num_warps=prog.num_warps, num_stages=prog.num_stages)
        got = [_to_host(d, a) if isinstance(a, np.ndarray) else a for d, a in zip(dev, host)]
    except Exception as e:
        res.kind, res.detail = "gpu", f"{type(e).__name__}: {e}"
        return res
    res.args = got
    expected = prog.expected()
    if expected is None:  # undefined values (overflow, division by zero): only the launch
        return res
    problem = same_outputs(prog, got, interpreted.args, "GPU vs interpreter") or \
        prog.compare(got, expected, "GPU vs NumPy")
    if problem:
        res.kind, res.detail = _mismatch(prog, got, problem)
    return res
