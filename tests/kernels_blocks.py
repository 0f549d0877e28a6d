"""The registry of multi-dimensional block kernels: indexing with None, broadcasting, block
creation, shape ops, reductions, scans, loop-carried blocks and atomics.

Same `Case` as tests/kernels.py, with these conventions:

* the problem size `n` is a tuple, one entry per dimension (`case.dims`, a tuple of
  `(block, max)` pairs: the block size along that dimension, and the largest size drawn;
  `max == block` means the dimension must fit in one block);
* `case.options`: launch / compile options (`num_warps`) used everywhere the case runs;
* `case.canonical(outputs, args)`, where set: the outputs are compared through it, for
  kernels whose atomics return order-dependent values (GPU atomics are unordered); then
  `reference(args)` returns the expected canonical form, not raw memory.

Expected results follow Triton: tl.sum / tl.cumsum of integers narrower than 32 bits
accumulate in (u)int32; tl.max / tl.min without indices return fp32 for 16-bit floats and
int32 for narrow integers; argmax / argmin break ties toward the first index.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import tilecc
import tilecc.language as tl

try:
    from kernels import BF16, F32, I32, Case, cdiv, is_float, rand, junk, _wrap
except ImportError:  # tests/ imported as a package
    from tests.kernels import BF16, F32, I32, Case, cdiv, is_float, rand, junk, _wrap

F16 = np.dtype(np.float16)
F64 = np.dtype(np.float64)
I8 = np.dtype(np.int8)
I16 = np.dtype(np.int16)
I64 = np.dtype(np.int64)
U32 = np.dtype(np.uint32)


def block_case(name: str, kernel, make_args, reference, outputs, dtypes, signatures, grid,
               dims: tuple[tuple[int, int], ...], options: dict | None = None,
               canonical: Callable | None = None, tolerance: dict | None = None) -> Case:
    case = Case(name, kernel, make_args, reference, tuple(outputs), tuple(dtypes),
                tuple(signatures), grid, block=dims[-1][0], max_n=dims[-1][1],
                tolerance=dict(tolerance or {}))
    case.dims = dims
    case.options = dict(options or {})
    case.canonical = canonical
    return case


def acc_dtype(dt) -> np.dtype:
    """Triton's sum dtype: (u)int32 for narrower integers, else unchanged."""
    dt = np.dtype(dt)
    if dt.kind in "iu" and dt.itemsize < 4:
        return np.dtype(np.uint32 if dt.kind == "u" else np.int32)
    return dt


def minmax_dtype(dt) -> np.dtype:
    """Triton's tl.max / tl.min dtype (no indices): fp32 for 16-bit floats."""
    dt = np.dtype(dt)
    if dt == F16 or dt == BF16:
        return F32
    return acc_dtype(dt)


def tied(rng, shape, dt) -> np.ndarray:
    """Values with many ties (a few distinct levels), exact in every dtype."""
    v = rng.integers(-6, 7, shape)
    if is_float(dt):
        return (v * 0.5).astype(dt)
    return v.astype(dt)


def wrapped_sum(x: np.ndarray, axis, dt) -> np.ndarray:
    s = np.sum(x.astype(np.int64) if dt.kind in "iu" else x.astype(np.float64), axis=axis)
    if dt.kind in "iu":
        return _wrap(np.ravel(s), dt).reshape(np.shape(s))
    return s.astype(dt)


# ========================================================================================
# 1. Row statistics of a 2-D tile: sum / max / min / argmax / argmin along axis 1, a
#    keep_dims maximum broadcast back, method forms, masks for M x N inside BM x BN.
# ========================================================================================

@tilecc.jit
def row_stats_kernel(X, SUM, MAX, MIN, ARGMAX, ARGMIN, CENTER, M, N, stride,
                     BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    row_ok = rows < M
    mask = row_ok[:, None] & (cols[None, :] < N)
    x = tl.load(X + rows[:, None] * stride + cols[None, :], mask=mask, other=0)
    # masked lanes repeat the row's first element: neutral for max/min and, being later
    # than column 0, for the first-index tie break
    first = tl.load(X + rows * stride, mask=row_ok, other=0)
    xm = tl.where(mask, x, first[:, None])
    total = tl.sum(x, axis=1)
    big = tl.max(xm, axis=1)
    small = xm.min(axis=-1)
    where_big = tl.argmax(xm, axis=1)
    small2, where_small = tl.min(xm, axis=1, return_indices=True)
    centered = x - xm.max(axis=1, keep_dims=True)
    tl.store(SUM + rows, total, mask=row_ok)
    tl.store(MAX + rows, big, mask=row_ok)
    tl.store(MIN + rows, tl.where(small == small2, small, small2 + 1), mask=row_ok)
    tl.store(ARGMAX + rows, where_big, mask=row_ok)
    tl.store(ARGMIN + rows, where_small, mask=row_ok)
    tl.store(CENTER + rows[:, None] * N + cols[None, :], centered, mask=mask)


def _row_stats_args(bm, bn):
    def make(n, dt, rng, masked=True):
        m, ncols = n
        stride = ncols + int(rng.integers(0, 3))
        x = tied(rng, (m, stride), dt)
        mdt = minmax_dtype(dt)
        cdt = np.result_type(F32 if dt in (F16, BF16) else dt, mdt)
        sdt = F32 if dt == BF16 else acc_dtype(dt)  # Triton sums bfloat16 in fp32
        return [x.reshape(-1), junk(rng, m, sdt),
                junk(rng, m, mdt), junk(rng, m, mdt), junk(rng, m, I32), junk(rng, m, I32),
                junk(rng, m * ncols, cdt), m, ncols, stride, bm, bn]
    return make


def _row_stats_ref(a):
    m, n, stride = a[7], a[8], a[9]
    x = a[0].reshape(m, stride)[:, :n]
    dt = x.dtype
    mx = x.max(axis=1).astype(a[2].dtype)
    center = x.astype(a[6].dtype) - mx[:, None].astype(a[6].dtype)
    return [wrapped_sum(x, 1, a[1].dtype), mx, x.min(axis=1).astype(a[3].dtype),
            np.argmax(x, axis=1), np.argmin(x, axis=1), center.reshape(-1)]


def _row_grid(bm):
    return lambda n: (cdiv(n[0], bm),)


ROW_STATS = block_case(
    "row_stats_2d", row_stats_kernel, _row_stats_args(8, 64), _row_stats_ref, (1, 2, 3, 4, 5, 6),
    (I8, I16, I32, F16, F32, F64, BF16),
    ("*i8,*i32,*i32,*i32,*i32,*i32,*i32,i32,i32,i32,8,64",
     "*fp16:16,*fp16:16,*fp32:16,*fp32:16,*i32:16,*i32:16,*fp32:16,i32,i32,i32:16,8,64",
     "*fp32:16,*fp32:16,*fp32:16,*fp32:16,*i32:16,*i32:16,*fp32:16,i32,i32,i32,8,64"),
    _row_grid(8), dims=((8, 40), (64, 64)),
    tolerance={"float16": (1e-2, 2e-2)})

# a block smaller than the 128 threads of the program (16 elements) ...
ROW_STATS_TINY = block_case(
    "row_stats_tiny_block", row_stats_kernel, _row_stats_args(2, 8), _row_stats_ref,
    (1, 2, 3, 4, 5, 6), (I8, F32, F16),
    ("*i8,*i32,*i32,*i32,*i32,*i32,*i32,i32,i32,i32,2,8",
     "*fp16,*fp16,*fp32,*fp32,*i32,*i32,*fp32,i32,i32,i32,2,8"),
    _row_grid(2), dims=((2, 7), (8, 8)), tolerance={"float16": (1e-2, 2e-2)})

# ... and much larger (2048 elements over 64 threads, warps split the reduced axis)
ROW_STATS_BIG = block_case(
    "row_stats_big_block", row_stats_kernel, _row_stats_args(2, 1024), _row_stats_ref,
    (1, 2, 3, 4, 5, 6), (I8, F32, F16),
    ("*i8,*i32,*i32,*i32,*i32,*i32,*i32,i32,i32,i32,2,1024",
     "*fp32:16,*fp32:16,*fp32:16,*fp32:16,*i32:16,*i32:16,*fp32:16,i32,i32,i32,2,1024"),
    _row_grid(2), dims=((2, 5), (1024, 1024)), options={"num_warps": 2},
    tolerance={"float16": (2e-2, 2e-1)})


# ========================================================================================
# 2. Column statistics with 2-D blocks carried through a loop over row tiles (acc += ...),
#    then reduced along axis 0; per-program total with axis=None and keep_dims.
# ========================================================================================

@tilecc.jit
def col_stats_kernel(X, COLSUM, COLMAX, PART, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    big = tl.full((BM, BN), float("-inf"), tl.float32)
    for m in range(0, M, BM):
        rows = m + tl.arange(0, BM)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        x = tl.load(X + rows[:, None] * N + cols[None, :], mask=mask, other=0).to(tl.float32)
        acc += x
        big = tl.maximum(big, tl.where(mask, x, float("-inf")))
    tl.store(COLSUM + cols, tl.sum(acc, axis=0), mask=cols < N)
    tl.store(COLMAX + cols, big.max(0), mask=cols < N)
    everything = tl.sum(acc, axis=None, keep_dims=True)  # shape (1, 1)
    tl.store(PART + pid + tl.arange(0, 1)[:, None], everything)


def _col_stats_args(n, dt, rng, masked=True):
    m, ncols = n
    x = rand(rng, m * ncols, dt, -8, 8) if not is_float(dt) else rand(rng, m * ncols, dt)
    return [x, junk(rng, ncols, F32), junk(rng, ncols, F32), junk(rng, cdiv(ncols, 32), F32),
            m, ncols, 8, 32]


def _col_stats_ref(a):
    m, n = a[4], a[5]
    x = a[0].reshape(m, n).astype(np.float64)
    parts = [x[:, i:i + 32].sum() for i in range(0, n, 32)]
    return [x.sum(axis=0), x.max(axis=0), np.array(parts)]


COL_STATS = block_case(
    "col_stats_loop_carried", col_stats_kernel, _col_stats_args, _col_stats_ref, (1, 2, 3),
    (F32, F16, I16, BF16),
    ("*fp32:16,*fp32:16,*fp32:16,*fp32:16,i32,i32,8,32",
     "*fp16,*fp32,*fp32,*fp32,i32,i32:16,8,32"),
    lambda n: (cdiv(n[1], 32),), dims=((8, 50), (32, 100)),
    tolerance={"float32": (1e-5, 1e-4)})


# ========================================================================================
# 3. Three-dimensional blocks: reductions along each axis (functions and methods),
#    keep_dims broadcast back, axis=None; masks for A x B x C inside 4 x 8 x 32.
# ========================================================================================

@tilecc.jit
def reduce3d_kernel(X, S0, M1, N2, DEV, TOTAL, A, B, C,
                    BA: tl.constexpr, BB: tl.constexpr, BC: tl.constexpr):
    a = tl.arange(0, BA)
    b = tl.arange(0, BB)
    c = tl.arange(0, BC)
    mask = (a[:, None, None] < A) & (b[None, :, None] < B) & (c[None, None, :] < C)
    offs = a[:, None, None] * (B * C) + b[None, :, None] * C + c[None, None, :]
    x = tl.load(X + offs, mask=mask, other=0.0)
    s0 = x.sum(0)                                           # (BB, BC)
    m1 = tl.max(tl.where(mask, x, float("-inf")), axis=1)   # (BA, BC)
    n2 = tl.where(mask, x, float("inf")).min(axis=2)        # (BA, BB)
    mean1 = tl.sum(x, axis=1, keep_dims=True) / B           # (BA, 1, BC)
    tl.store(S0 + b[:, None] * C + c[None, :], s0, mask=(b[:, None] < B) & (c[None, :] < C))
    tl.store(M1 + a[:, None] * C + c[None, :], m1, mask=(a[:, None] < A) & (c[None, :] < C))
    tl.store(N2 + a[:, None] * B + b[None, :], n2, mask=(a[:, None] < A) & (b[None, :] < B))
    tl.store(DEV + offs, x - mean1, mask=mask)
    tl.store(TOTAL, tl.sum(x))


def _reduce3d_args(n, dt, rng, masked=True):
    A, B, C = n
    x = rand(rng, A * B * C, dt)
    return [x, junk(rng, B * C, dt), junk(rng, A * C, F32 if dt == F16 else dt),
            junk(rng, A * B, F32 if dt == F16 else dt), junk(rng, A * B * C, dt),
            junk(rng, 1, dt), A, B, C, 4, 8, 32]


def _reduce3d_ref(a):
    A, B, C = a[6:9]
    x = a[0].reshape(A, B, C).astype(np.float64)
    return [x.sum(0).reshape(-1), x.max(1).reshape(-1), x.min(2).reshape(-1),
            (x - x.sum(1, keepdims=True) / B).reshape(-1), np.array([x.sum()])]


REDUCE_3D = block_case(
    "reduce_3d_every_axis", reduce3d_kernel, _reduce3d_args, _reduce3d_ref, (1, 2, 3, 4, 5),
    (F32, F16, F64),
    ("*fp32:16,*fp32:16,*fp32:16,*fp32:16,*fp32:16,*fp32,i32,i32,i32,4,8,32",
     "*fp16:16,*fp16,*fp32,*fp32,*fp16,*fp16,i32,i32,i32,4,8,32"),
    lambda n: (1,), dims=((4, 4), (8, 8), (32, 32)),
    tolerance={"float16": (1e-2, 1e-1), "float32": (1e-5, 1e-5)})


# ========================================================================================
# 4. Matrix product by broadcasting: a 3-D (BM, BK, BN) product summed along its middle
#    axis, the (BM, BN) accumulator carried through the loop over K.
# ========================================================================================

@tilecc.jit
def bcast_matmul_kernel(A, B, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                        BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        rk = k + tl.arange(0, BK)
        a = tl.load(A + rm[:, None] * K + rk[None, :],
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(B + rk[:, None] * N + rn[None, :],
                    mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.sum(a.to(tl.float32)[:, :, None] * b.to(tl.float32)[None, :, :], axis=1)
    tl.store(C + rm[:, None] * N + rn[None, :], acc.to(C.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def _matmul_args(n, dt, rng, masked=True):
    m, k, nn = n
    return [rand(rng, m * k, dt, -2, 2), rand(rng, k * nn, dt, -2, 2), junk(rng, m * nn, dt),
            m, nn, k, 16, 16, 8]


def _matmul_ref(a):
    m, nn, k = a[3:6]
    x = a[0].reshape(m, k).astype(np.float64)
    y = a[1].reshape(k, nn).astype(np.float64)
    return [(x @ y).reshape(-1).astype(a[2].dtype)]


MATMUL = block_case(
    "matmul_3d_broadcast_loop", bcast_matmul_kernel, _matmul_args, _matmul_ref, (2,),
    (F32, F16),
    ("*fp32:16,*fp32:16,*fp32:16,i32,i32,i32,16,16,8", "*fp16,*fp16,*fp16,i32,i32,i32,16,16,8"),
    lambda n: (cdiv(n[0], 16), cdiv(n[2], 16)), dims=((16, 40), (8, 30), (16, 40)),
    tolerance={"float32": (1e-5, 1e-4), "float16": (5e-3, 5e-3)})


# ========================================================================================
# 5. Block creation and broadcasting: zeros, zeros_like, full, expand_dims, broadcast_to,
#    broadcast, x[:, None] and x[None, :].
# ========================================================================================

@tilecc.jit
def outer_kernel(X, Y, OUT, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    x = tl.load(X + rm, mask=rm < M, other=0.0)
    y = tl.load(Y + rn, mask=rn < N, other=0.0)
    col = tl.expand_dims(x, 1)                        # (BM, 1)
    row = tl.broadcast_to(y[None, :], (BM, BN))       # (BM, BN)
    prod = col * row
    bias = tl.full((BM, BN), 1.5, tl.float32) + tl.zeros_like(prod) + tl.zeros([BM, BN], tl.float32)
    xb, yb = tl.broadcast(x[:, None], tl.expand_dims(y, (0,)))
    out = prod + bias + xb - yb
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(OUT + rm[:, None] * N + rn[None, :], out, mask=mask)


def _outer_args(n, dt, rng, masked=True):
    m, nn = n
    return [rand(rng, m, dt), rand(rng, nn, dt), junk(rng, m * nn, dt), m, nn, 16, 32]


def _outer_ref(a):
    x, y = a[0], a[1]
    if x.dtype == F64:
        r = np.outer(x, y) + 1.5 + x[:, None] - y[None, :]
    else:  # 16-bit floats are rounded after every operation
        xf, yf = x[:, None].astype(F32), y[None, :].astype(F32)
        rd = lambda v: v.astype(x.dtype).astype(F32) if x.dtype != F32 else v
        r = rd(rd(rd(xf * yf) + np.float32(1.5)) + xf) - yf
    return [r.astype(x.dtype).reshape(-1)]


OUTER = block_case(
    "creation_broadcast_outer", outer_kernel, _outer_args, _outer_ref, (2,), (F32, F16, F64),
    ("*fp32:16,*fp32:16,*fp32:16,i32,i32,16,32", "*fp16,*fp16,*fp16,i32,i32,16,32"),
    lambda n: (cdiv(n[0], 16), cdiv(n[1], 32)), dims=((16, 40), (32, 80)),
    tolerance={"float16": (2e-3, 2e-3)})


# ========================================================================================
# 6. Scans along each axis, forward and reverse: cumsum (narrow ints accumulate in int32),
#    cumprod, method forms.
# ========================================================================================

@tilecc.jit
def scan2d_kernel(X, C1, C0R, P1R, C0, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    offs = rm[:, None] * N + rn[None, :]
    x = tl.load(X + offs, mask=mask, other=0)
    tl.store(C1 + offs, tl.cumsum(x, axis=1), mask=mask)
    tl.store(C0R + offs, tl.cumsum(x, axis=0, reverse=True), mask=mask)
    ones = tl.where(mask, x, 1)  # masked lanes are neutral for the reverse product
    tl.store(P1R + offs, tl.cumprod(ones, axis=1, reverse=True), mask=mask)
    tl.store(C0 + offs, x.cumsum(0), mask=mask)


def _scan2d_args(n, dt, rng, masked=True):
    m, nn = n
    if is_float(dt):
        x = rng.choice(np.array([0.5, 1.0, 2.0, -1.0, 1.0, -0.5, 1.0]), m * nn).astype(dt)
    else:
        x = rand(rng, m * nn, dt)
    sdt = acc_dtype(dt)
    return [x, junk(rng, m * nn, sdt), junk(rng, m * nn, sdt), junk(rng, m * nn, dt),
            junk(rng, m * nn, sdt), m, nn, 16, 32]


def _cum(x, axis, dt, op="sum", reverse=False):
    if reverse:
        x = np.flip(x, axis)
    if dt.kind in "iu":
        f = np.cumsum if op == "sum" else np.cumprod
        r = f(x.astype(object), axis=axis)
        r = _wrap(r.reshape(-1), dt).reshape(r.shape)
    else:
        r = (np.cumsum if op == "sum" else np.cumprod)(x.astype(np.float64), axis=axis)
    r = r.astype(dt)
    return np.flip(r, axis) if reverse else r


def _scan2d_ref(a):
    m, nn = a[5], a[6]
    x = a[0].reshape(m, nn)
    sdt = a[1].dtype
    xs = x.astype(sdt)
    return [_cum(xs, 1, sdt).reshape(-1), _cum(xs, 0, sdt, reverse=True).reshape(-1),
            _cum(x, 1, x.dtype, "prod", reverse=True).reshape(-1), _cum(xs, 0, sdt).reshape(-1)]


SCAN_2D = block_case(
    "scan_2d_each_axis", scan2d_kernel, _scan2d_args, _scan2d_ref, (1, 2, 3, 4),
    (I8, I32, np.dtype(np.uint8), F32, F16),
    ("*i8,*i32,*i32,*i8,*i32,i32,i32,16,32", "*fp32:16,*fp32:16,*fp32:16,*fp32:16,*fp32:16,i32,i32,16,32",
     "*fp16,*fp16,*fp16,*fp16,*fp16,i32,i32,16,32"),
    lambda n: (1,), dims=((16, 16), (32, 32)))


# ========================================================================================
# 7. associative_scan and reduce with user combine functions, on tuples: a linear
#    recurrence h[t] = a[t] * h[t-1] + b[t] scanned along rows (forward) and columns
#    (reverse); an argmax-with-count reduce; a bitwise-or reduce.
# ========================================================================================

@tilecc.jit
def _affine_combine(a1, b1, a2, b2):
    return a1 * a2, b1 * a2 + b2


@tilecc.jit
def _max_count_combine(v1, c1, v2, c2):
    return tl.maximum(v1, v2), tl.where(v1 == v2, c1 + c2, tl.where(v1 > v2, c1, c2))


@tilecc.jit
def _or_combine(a, b):
    return a | b


@tilecc.jit
def recurrence_kernel(A, B, H1, H0R, MAXV, MAXC, ORS, M, N, BM: tl.constexpr,
                      BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    offs = rm[:, None] * N + rn[None, :]
    a = tl.load(A + offs, mask=mask, other=1.0)  # (1, 0) is the identity of the combine
    b = tl.load(B + offs, mask=mask, other=0.0)
    _, h1 = tl.associative_scan((a, b), 1, _affine_combine)
    _, h0r = tl.associative_scan((a, b), axis=0, combine_fn=_affine_combine, reverse=True)
    tl.store(H1 + offs, h1, mask=mask)
    tl.store(H0R + offs, h0r, mask=mask)
    # per row: the largest b and how often it occurs
    key = tl.where(mask, (b * 4.0).to(tl.int32), -1000)
    v, c = tl.reduce((key, tl.where(mask, 1, 0)), 1, _max_count_combine)
    tl.store(MAXV + rm, v, mask=rm < M)
    tl.store(MAXC + rm, c, mask=rm < M)
    bits = tl.where(mask, 1 << (offs % 31), 0)
    tl.store(ORS + rn, tl.reduce(bits, 0, _or_combine), mask=rn < N)


def _recurrence_args(n, dt, rng, masked=True):
    m, nn = n
    a = rng.uniform(0.5, 1.0, m * nn).astype(np.float32)
    b = (rng.integers(-8, 8, m * nn) * 0.25).astype(np.float32)
    return [a, b, junk(rng, m * nn, F32), junk(rng, m * nn, F32), junk(rng, m, I32),
            junk(rng, m, I32), junk(rng, nn, I32), m, nn, 16, 32]


def _recurrence_ref(a):
    m, nn = a[7], a[8]
    A, B = a[0].reshape(m, nn).astype(np.float64), a[1].reshape(m, nn).astype(np.float64)
    h1 = np.zeros_like(A)
    h1[:, 0] = B[:, 0]
    for j in range(1, nn):
        h1[:, j] = h1[:, j - 1] * A[:, j] + B[:, j]
    h0r = np.zeros_like(A)
    h0r[-1] = B[-1]
    for i in range(m - 2, -1, -1):
        h0r[i] = h0r[i + 1] * A[i] + B[i]
    key = (B * 4).astype(np.int32)
    mv = key.max(axis=1)
    mc = (key == mv[:, None]).sum(axis=1)
    offs = np.arange(m * nn).reshape(m, nn)
    ors = np.bitwise_or.reduce((1 << (offs % 31)).astype(np.int32), axis=0)
    return [h1.reshape(-1), h0r.reshape(-1), mv, mc, ors]


RECURRENCE = block_case(
    "associative_scan_reduce_tuples", recurrence_kernel, _recurrence_args, _recurrence_ref,
    (2, 3, 4, 5, 6), (F32,),
    ("*fp32:16,*fp32:16,*fp32:16,*fp32:16,*i32,*i32,*i32,i32,i32,16,32",),
    lambda n: (1,), dims=((16, 16), (32, 32)), tolerance={"float32": (1e-5, 1e-5)})


# ========================================================================================
# 8. Shape ops round trips: trans, permute, reshape / view / ravel, join / split.
# ========================================================================================

@tilecc.jit
def shapes_kernel(X, T, SWAP, SAME, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(X + rm[:, None] * N + rn[None, :], mask=mask, other=0)
    # transpose: out[j, i] = x[i, j]
    tl.store(T + rn[:, None] * M + rm[None, :], tl.trans(x), mask=tl.trans(mask))
    # swap adjacent columns: split the pairs, join them the other way round
    even, odd = tl.split(tl.reshape(x, (BM, BN // 2, 2)))
    swapped = tl.join(odd, even).reshape(BM, BN)
    tl.store(SWAP + rm[:, None] * N + rn[None, :], swapped, mask=mask)
    # permute a 3-D view there and back, flatten and view: the identity
    cube = tl.view(x, (BM, 4, BN // 4))
    turned = tl.permute(cube, (2, 0, 1))                 # (BN // 4, BM, 4)
    back = tl.permute(turned, 1, 2, 0)                   # (BM, 4, BN // 4)
    flat = tl.ravel(back)
    same = tl.reshape(flat, [BM, BN]) + tl.trans(tl.trans(x)) - x
    tl.store(SAME + rm[:, None] * N + rn[None, :], same, mask=mask)


def _shapes_args(n, dt, rng, masked=True):
    m, nn = n
    return [rand(rng, m * nn, dt, -100, 100), junk(rng, m * nn, dt), junk(rng, m * nn, dt),
            junk(rng, m * nn, dt), m, nn, 8, 16]


def _shapes_ref(a):
    m, nn = a[4], a[5]
    x = a[0].reshape(m, nn)
    padded = np.zeros((m, cdiv(nn, 16) * 16), x.dtype)
    padded[:, :nn] = x
    swap = padded.reshape(m, -1, 2)[:, :, ::-1].reshape(m, -1)[:, :nn]
    return [x.T.reshape(-1), swap.reshape(-1), x.reshape(-1)]


SHAPES = block_case(
    "shape_ops_round_trip", shapes_kernel, _shapes_args, _shapes_ref, (1, 2, 3),
    (F32, I8, F16, I64),
    ("*fp32:16,*fp32:16,*fp32:16,*fp32:16,i32,i32,8,16", "*i8,*i8,*i8,*i8,i32,i32,8,16",
     "*i64:16,*i64:16,*i64:16,*i64:16,i32:16,i32:16,8,16"),
    lambda n: (cdiv(n[0], 8), cdiv(n[1], 16)), dims=((8, 30), (16, 50)))


# ========================================================================================
# 9. Atomics.  Unordered on the GPU: only order-independent results are compared.
# ========================================================================================

@tilecc.jit
def histogram_kernel(BINS, WEIGHTS, COUNT, WSUM, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    b = tl.load(BINS + offs, mask=mask, other=0)
    w = tl.load(WEIGHTS + offs, mask=mask, other=0.0)
    # many lanes of one block hit the same bin; masked lanes must not count
    tl.atomic_add(COUNT + b, 1, mask=mask)
    tl.atomic_add(WSUM + b, w, mask=mask, sem="relaxed")


def _hist_args(n, dt, rng, masked=True):
    (n,) = n
    bins = rng.integers(0, 7, n).astype(np.int32)
    w = (rng.integers(-8, 9, n) * 0.25).astype(dt)  # exact sums in any order
    return [bins, w, rng.integers(0, 5, 7).astype(np.int32), rng.integers(0, 5, 7).astype(dt),
            n, 128]


def _hist_ref(a):
    bins, w = a[0], a[1]
    return [a[2] + np.bincount(bins, minlength=7).astype(np.int32),
            a[3] + np.bincount(bins, weights=w.astype(np.float64), minlength=7).astype(w.dtype)]


HISTOGRAM = block_case(
    "atomic_add_histogram", histogram_kernel, _hist_args, _hist_ref, (2, 3), (F32, F64),
    ("*i32:16,*fp32:16,*i32,*fp32,i32,128", "*i32,*fp64,*i32,*fp64,i32,128"),
    lambda n: (cdiv(n[0], 128),), dims=((128, 700),))


@tilecc.jit
def scatter_minmax_kernel(KEYS, VALS, MX, MN, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    offs = rm[:, None] * N + rn[None, :]
    k = tl.load(KEYS + offs, mask=mask, other=0)
    v = tl.load(VALS + offs, mask=mask)
    tl.atomic_max(MX + k, v, mask=mask)
    tl.atomic_min(MN + k, v, mask=mask, sem="acq_rel", scope="gpu")


def _minmax_args(n, dt, rng, masked=True):
    m, nn = n
    keys = rng.integers(0, 9, m * nn).astype(np.int32)
    if is_float(dt):
        vals = rng.uniform(-100, 100, m * nn).astype(dt)  # negatives: no integer tricks
        init_mx, init_mn = np.full(9, -np.inf, dt), np.full(9, np.inf, dt)
    else:
        vals = rand(rng, m * nn, dt)
        info = np.iinfo(dt)
        init_mx, init_mn = np.full(9, info.min, dt), np.full(9, info.max, dt)
    init_mx[0] = 50  # a slot that starts above the values scattered into it
    init_mn[0] = -50 if dt.kind != "u" else 7
    return [keys, vals, init_mx, init_mn, m, nn, 4, 32]


def _minmax_ref(a):
    keys, vals, mx, mn = a[0], a[1], a[2].copy(), a[3].copy()
    np.maximum.at(mx, keys, vals)
    np.minimum.at(mn, keys, vals)
    return [mx, mn]


SCATTER_MINMAX = block_case(
    "atomic_max_min_scatter_2d", scatter_minmax_kernel, _minmax_args, _minmax_ref, (2, 3),
    (I32, F32, U32, I64, F64),
    ("*i32:16,*i32:16,*i32,*i32,i32,i32,4,32", "*i32:16,*fp32:16,*fp32,*fp32,i32,i32,4,32",
     "*i32,*u32,*u32,*u32,i32,i32,4,32", "*i32,*fp64,*fp64,*fp64,i32,i32,4,32"),
    lambda n: (cdiv(n[0], 4),), dims=((4, 30), (32, 32)))


@tilecc.jit
def ticket_kernel(X, COUNTER, TICKETS, TOTAL, DONE, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n, other=0)
    tl.atomic_add(TOTAL, tl.sum(x, axis=0))
    # the old value of a scalar atomic is this program's ticket
    ticket = tl.atomic_add(COUNTER, 1, sem="acq_rel")
    tl.store(TICKETS + pid, ticket)
    if ticket == tl.num_programs(0) - 1:  # the last program to arrive
        tl.store(DONE, tl.atomic_add(TOTAL, 0) + 1)


def _ticket_args(n, dt, rng, masked=True):
    (n,) = n
    return [rand(rng, n, dt, -1000, 1000), np.zeros(1, dt), junk(rng, cdiv(n, 64), dt),
            np.zeros(1, dt), np.zeros(1, dt), n, 64]


def _ticket_canonical(outs, args):
    counter, tickets, total, done = outs
    return [counter, np.sort(tickets), total, done]


def _ticket_ref(a):
    progs = cdiv(a[5], 64)
    total = np.array([a[0].astype(np.int64).sum()]).astype(a[0].dtype)
    return [np.array([progs]), np.arange(progs), total, total + 1]


TICKETS = block_case(
    "scalar_atomic_add_tickets", ticket_kernel, _ticket_args, _ticket_ref, (1, 2, 3, 4),
    (I32, I64, U32),
    ("*i32:16,*i32,*i32,*i32,*i32,i32,64", "*i64,*i64,*i64,*i64,*i64,i32,64"),
    lambda n: (cdiv(n[0], 64),), dims=((64, 1000),), canonical=_ticket_canonical)


@tilecc.jit
def cas_counter_kernel(COUNTER, TICKETS, LOCK, ACC, X, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    # a lock-free increment: retry the compare-and-swap until no one raced us
    cur = tl.atomic_add(COUNTER, 0)
    prev = tl.atomic_cas(COUNTER, cur, cur + 1)
    while prev != cur:
        cur = prev
        prev = tl.atomic_cas(COUNTER, cur, cur + 1)
    tl.store(TICKETS + pid, cur)
    # a spin lock around a plain read-modify-write of a block
    cols = tl.arange(0, BLOCK)
    x = tl.load(X + pid * BLOCK + cols)
    while tl.atomic_cas(LOCK, 0, 1, sem="acquire") == 1:
        pass
    tl.store(ACC + cols, tl.load(ACC + cols) + x)
    tl.debug_barrier()
    tl.atomic_xchg(LOCK, 0, sem="release")


def _cas_args(n, dt, rng, masked=True):
    (progs,) = n
    return [np.zeros(1, dt), junk(rng, progs, dt), np.zeros(1, np.int32), np.zeros(32, dt),
            rand(rng, progs * 32, dt, -1000, 1000), 32]


def _cas_canonical(outs, args):
    counter, tickets, lock, acc = outs
    return [counter, np.sort(tickets), lock, acc]


def _cas_ref(a):
    progs = a[1].size
    return [np.array([progs]), np.arange(progs), np.zeros(1, np.int32),
            a[4].reshape(progs, 32).sum(axis=0).astype(a[3].dtype)]


CAS_COUNTER = block_case(
    "atomic_cas_counter_and_lock", cas_counter_kernel, _cas_args, _cas_ref, (0, 1, 2, 3),
    (I32, I64),
    ("*i32,*i32,*i32,*i32:16,*i32:16,32", "*i64,*i64,*i32,*i64,*i64,32"),
    lambda n: (n[0],), dims=((1, 40),), canonical=_cas_canonical)


@tilecc.jit
def claim_kernel(KEYS, OWNER, WINS, OLD, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    # tl.atomic_cas has no mask: masked lanes go to a spare slot with their own ids
    k = tl.load(KEYS + offs, mask=mask, other=8)
    me = tl.where(mask, offs, -2 - offs)
    old = tl.atomic_cas(OWNER + k, -1, me)
    won = old == -1
    tl.atomic_add(WINS + k, won.to(tl.int32), mask=mask)
    tl.store(OLD + offs, old, mask=mask)


def _claim_args(n, dt, rng, masked=True):
    (n,) = n
    keys = rng.integers(0, 8, n).astype(np.int32)
    keys[keys == 5] = 6  # a slot nobody claims
    return [keys, np.full(9, -1, np.int32), np.zeros(9, np.int32), junk(rng, n, I32), n, 64]


def _claim_canonical(outs, args):
    keys = args[0]
    owner, wins, old = outs
    # each claimed slot is owned by a lane with that key, and every other lane with that
    # key saw the owner's id
    valid = np.array([o == -1 or (0 <= o < keys.size and keys[o] == k)
                      for k, o in enumerate(owner[:8])])
    losers_saw_owner = bool(np.all((old == -1) | (old == owner[keys])))
    return [valid, wins[:8], np.bincount(keys[old == -1], minlength=8), np.array([losers_saw_owner])]


def _claim_ref(a):
    present = (np.bincount(a[0], minlength=8) > 0).astype(np.int64)
    return [np.ones(8, bool), present, present, np.array([True])]


CLAIM = block_case(
    "atomic_cas_block_claim", claim_kernel, _claim_args, _claim_ref, (1, 2, 3), (I32,),
    ("*i32:16,*i32,*i32,*i32:16,i32,64",),
    lambda n: (cdiv(n[0], 64),), dims=((64, 300),), canonical=_claim_canonical)


@tilecc.jit
def xchg_kernel(SLOT, OLDS, PERM, TABLE, PREV, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    # scalar: every program swaps its id in; the values seen and left are all the ids
    tl.store(OLDS + pid, tl.atomic_xchg(SLOT, pid + 100))
    # block: a permutation scatter, one lane per address
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    p = tl.load(PERM + offs, mask=mask, other=0)
    prev = tl.atomic_xchg(TABLE + p, offs.to(tl.float32) * 0.5, mask=mask, scope="gpu")
    tl.store(PREV + offs, prev, mask=mask)


def _xchg_args(n, dt, rng, masked=True):
    (n,) = n
    progs = cdiv(n, 32)
    return [np.array([7], np.int32), junk(rng, progs, I32), rng.permutation(n).astype(np.int32),
            rand(rng, n, F32), junk(rng, n, F32), n, 32]


def _xchg_canonical(outs, args):
    slot, olds, table, prev = outs
    return [np.sort(np.concatenate([slot, olds])), table, prev]


def _xchg_ref(a):
    n = a[5]
    progs = cdiv(n, 32)
    table = np.zeros(n, np.float32)
    table[a[2]] = np.arange(n) * 0.5
    return [np.sort(np.concatenate([[7], np.arange(progs) + 100])), table, a[3][a[2]]]


XCHG = block_case(
    "atomic_xchg_scalar_and_block", xchg_kernel, _xchg_args, _xchg_ref, (0, 1, 3, 4), (F32,),
    ("*i32,*i32,*i32:16,*fp32:16,*fp32:16,i32,32",),
    lambda n: (cdiv(n[0], 32),), dims=((32, 200),), canonical=_xchg_canonical)


@tilecc.jit
def bitset_kernel(VALUES, SET, PARITY, CLEARED, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(VALUES + offs, mask=mask, other=0)
    word = v >> 5
    bit = (v & 31).to(SET.dtype.element_ty)
    one = tl.full((BLOCK,), 1, SET.dtype.element_ty)
    tl.atomic_or(SET + word, one << bit, mask=mask, sem="relaxed")
    tl.atomic_xor(PARITY + word, one << bit, mask=mask, sem="release")
    tl.atomic_and(CLEARED + word, ~(one << bit), mask=mask, scope="sys")


def _bitset_args(n, dt, rng, masked=True):
    (n,) = n
    v = rng.integers(0, 96, n).astype(np.int32)
    return [v, np.zeros(3, dt), np.zeros(3, dt), np.full(3, -1).astype(dt), n, 64]


def _bitset_ref(a):
    v, dt = a[0], a[1].dtype
    words = np.zeros((3, 32), np.int64)
    np.add.at(words, (v >> 5, v & 31), 1)
    weights = np.array([1 << i for i in range(32)], dtype=object)
    pack = lambda bits: _wrap([int((b.astype(object) * weights).sum()) for b in bits], dt)
    seen = pack(words > 0)
    return [seen, pack(words % 2 == 1), ~seen]  # CLEARED starts all ones (64 bits for i64)


BITSET = block_case(
    "atomic_and_or_xor_bitset", bitset_kernel, _bitset_args, _bitset_ref, (1, 2, 3),
    (I32, U32, I64),
    ("*i32:16,*i32,*i32,*i32,i32,64", "*i32,*u32,*u32,*u32,i32,64", "*i32,*i64,*i64,*i64,i32,64"),
    lambda n: (cdiv(n[0], 64),), dims=((64, 400),))


CASES_BLOCKS: list[Case] = [
    ROW_STATS, ROW_STATS_TINY, ROW_STATS_BIG, COL_STATS, REDUCE_3D, MATMUL, OUTER, SCAN_2D,
    RECURRENCE, SHAPES, HISTOGRAM, SCATTER_MINMAX, TICKETS, CAS_COUNTER, CLAIM, XCHG, BITSET,
]
BY_NAME = {c.name: c for c in CASES_BLOCKS}
assert len(BY_NAME) == len(CASES_BLOCKS), "case names must be unique"
