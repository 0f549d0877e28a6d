"""Atomics whose block is held by several threads (or registers) at once, and the NumPy
references they are checked against (CPU: tests/test_atomics.py; GPU: tests/test_gpu.py).

`rows = tl.arange(0, S)[:, None]` is an S x 1 block: in a layout of num_warps x warp_size
threads, each row is held by several lanes, warps, or (where it takes the layout of an S x S
block stored in vectors) several registers of one thread.  Each element's atomic must be
performed exactly once and its result (the old value) reach every copy: the kernels read
every copy, as a gather index and broadcast across S columns.

Every program updates distinct addresses, so the results are deterministic: the old value of
row i is P0[i], a permutation of 0..S-1 (exact in every dtype).
"""

from __future__ import annotations

import numpy as np

import tilecc
import tilecc.language as tl

OPS = ("add", "max", "min", "xchg", "cas", "and", "or", "xor")
OP_CODE = {op: i for i, op in enumerate(OPS)}
BITWISE = ("and", "or", "xor")


@tilecc.jit
def replicated_rmw_kernel(P, X, OLD, GATHER, S: tl.constexpr, C: tl.constexpr,
                          OP: tl.constexpr):
    rows = tl.arange(0, S)[:, None]
    x = tl.load(X + rows)
    if OP == 0:
        old = tl.atomic_add(P + rows, x)
    elif OP == 1:
        old = tl.atomic_max(P + rows, x, scope="sys")
    elif OP == 2:
        old = tl.atomic_min(P + rows, x, sem="relaxed")
    elif OP == 3:
        old = tl.atomic_xchg(P + rows, x, sem="release")
    elif OP == 4:
        old = tl.atomic_cas(P + rows, x, x + 1, sem="acquire")
    elif OP == 5:
        old = tl.atomic_and(P + rows, x)
    elif OP == 6:
        old = tl.atomic_or(P + rows, x, scope="cta")
    else:
        old = tl.atomic_xor(P + rows, x)
    cols = tl.arange(0, C)[None, :]
    # every copy of `old` is read: broadcast over C columns (stored in vectors: a thread
    # may hold a row several times), and as a gather index
    tl.store(OLD + rows * C + cols, old + (cols * 0).to(old.dtype))
    idx = old.to(tl.int32) & (S - 1)
    tl.store(GATHER + rows * C + cols, tl.load(X + idx + cols * 0))


@tilecc.jit
def issue_add_kernel(P, OUT, S: tl.constexpr):
    # the issue's kernel: old used as an index right away
    old = tl.atomic_add(P + tl.arange(0, S)[:, None], val=tl.arange(0, S)[:, None])
    cols = tl.arange(0, S)[None, :]
    tl.store(OUT + old * S + cols, old + 1 + cols * 0)


@tilecc.jit
def issue_cas_kernel(P, OUT, S: tl.constexpr):
    rows = tl.arange(0, S)[:, None]
    old = tl.atomic_cas(P + rows, rows, rows + 100)
    cols = tl.arange(0, S)[None, :]
    tl.store(OUT + (old & (S - 1)) * S + cols, old + 1 + cols * 0)


@tilecc.jit
def reduce_then_atomic_kernel(P, X, OLD, S: tl.constexpr):
    # the atomic's layout is the slice layout a reduction leaves: each row sum is held by
    # every lane (and warp) that split the reduced axis
    rows = tl.arange(0, S)
    cols = tl.arange(0, S)
    x = tl.load(X + rows[:, None] * S + cols[None, :])
    old = tl.atomic_add(P + rows, tl.sum(x, axis=1))
    tl.store(OLD + rows[:, None] * S + cols[None, :], old[:, None] + x * 0)


@tilecc.jit
def loop_atomic_kernel(P, OUT, T, flag, S: tl.constexpr):
    # atomics in a loop and under a branch: the owners' results are carried by every copy
    rows = tl.arange(0, S)[:, None]
    cols = tl.arange(0, S)[None, :]
    acc = tl.zeros((S, S), tl.int32)
    for _ in range(T):
        old = tl.atomic_add(P + rows, 1)
        acc += old
    if flag > 0:
        old2 = tl.atomic_xchg(P + rows, rows)
        acc += old2 * 1000
    tl.store(OUT + rows * S + cols, acc)


def rmw_args(op: str, S: int, dtype, C: int | None = None, seed: int = 0):
    """Arrays (P, X, OLD, GATHER) for replicated_rmw_kernel (C columns, S by default): P
    starts at a permutation of 0..S-1; X is chosen so that every op changes some rows and
    not others."""
    C = S if C is None else C
    rng = np.random.default_rng(seed + S)
    dt = np.dtype(dtype)
    p0 = rng.permutation(S).astype(dt)
    if op == "cas":  # equal to P on every other row: those rows swap
        x = np.where(np.arange(S) % 2 == 0, p0, (p0 + 1) % S).astype(dt)
    elif op in BITWISE:
        x = rng.integers(0, S, S).astype(dt)
    else:
        x = rng.integers(0, S, S).astype(dt)
        if dt.kind == "f":
            x = np.where(np.arange(S) % 3 == 0, -x, x).astype(dt)  # negatives too
    return [p0, x, np.full((S, C), -7, dt), np.full((S, C), -7, dt)]


def rmw_reference(op: str, args):
    """Expected (P after, OLD, GATHER) of replicated_rmw_kernel."""
    p0, x = args[0], args[1]
    S, C = args[2].shape
    new = {"add": lambda: p0 + x, "max": lambda: np.maximum(p0, x),
           "min": lambda: np.minimum(p0, x), "xchg": lambda: x,
           "cas": lambda: np.where(p0 == x, x + 1, p0),
           "and": lambda: p0 & x, "or": lambda: p0 | x, "xor": lambda: p0 ^ x}[op]()
    old = np.repeat(p0[:, None], C, axis=1)
    idx = p0.astype(np.int64) & (S - 1)
    gather = np.repeat(x[idx][:, None], C, axis=1)
    return [new.astype(p0.dtype), old, gather]


def float_extreme_args(dtype):
    """Memory and values covering Triton's float max/min order: signed zeros, NaNs of both
    signs, infinities, mixed signs."""
    dt = np.dtype(dtype)
    nan = np.array(np.nan, dt)
    neg_nan = -nan
    mem = np.array([-1.0, 1.0, nan, neg_nan, 1.0, -1.0, 0.0, -0.0, 2.0, 5.0, -np.inf, np.inf,
                    -2.0, 3.0, -0.0, 0.0], dt)
    val = np.array([-0.0, -0.0, 1.0, 1.0, nan, nan, -0.0, 0.0, -3.0, 7.0, -5.0, 4.0,
                    -1.5, neg_nan, -0.0, 0.0], dt)
    return mem, val


def float_extreme_reference(mem, val, largest: bool):
    """Triton's float atomic max / min: the order -NaN < -inf < .. < -0.0 < +0.0 < .. < +inf
    < +NaN, on the bit patterns."""
    signed = np.dtype(f"i{mem.itemsize}")
    top = np.iinfo(signed).max

    def key(a):  # sign-magnitude bits → an integer in that order
        bits = a.view(signed).astype(object)
        return [b if b >= 0 else -(b & top) - 1 for b in bits]

    km, kv = key(mem), key(val)
    pick_val = [(v > m) if largest else (v < m) for m, v in zip(km, kv)]
    return np.where(pick_val, val, mem).astype(mem.dtype)


@tilecc.jit
def float_extreme_kernel(P, V, OLD, n, LARGEST: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(V + offs, mask=mask)
    if LARGEST:
        old = tl.atomic_max(P + offs, v, mask=mask)
    else:
        old = tl.atomic_min(P + offs, v, mask=mask)
    tl.store(OLD + offs, old, mask=mask)


@tilecc.jit
def float_cas_kernel(P, CMP, OLD, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    c = tl.load(CMP + offs)
    tl.store(OLD + offs, tl.atomic_cas(P + offs, c, tl.full((BLOCK,), 5, c.dtype)))


def float_cas_args(dtype):
    """Memory and comparands that are equal as numbers but not as bits (signed zeros), and
    NaNs that are unequal as numbers but equal as bits."""
    dt = np.dtype(dtype)
    nan = np.array(np.nan, dt)
    mem = np.array([0.0, -0.0, nan, nan, 1.0, 2.0, -nan, 3.0], dt)
    cmp = np.array([-0.0, 0.0, nan, -nan, 1.0, 7.0, -nan, 3.0], dt)
    return mem, cmp


def float_cas_reference(mem, cmp):
    """atomic_cas swaps where the bits are equal, as the hardware (and Triton) compare."""
    bits = f"u{mem.itemsize}"
    return np.where(mem.view(bits) == cmp.view(bits), np.array(5, mem.dtype), mem)
