"""The registry of block reordering kernels: tl.sort, tl.topk, tl.bitonic_merge, tl.flip,
tl.gather, tl.histogram, tl.cat, tl.interleave, tl.xor_sum / tl.reduce_or, tl.swizzle2d;
and tl.map_elementwise.

Same `Case` conventions as tests/kernels_blocks.py (`n` a tuple, `case.dims`).  Each
program reorders one block; the references do the same on the block NumPy pads as the
kernel's masked loads do, so padding that moves (a sort's +inf) is part of the check.

Sort and topk follow Triton's bitonic network, which `bitonic_sort` / `bitonic_topk`
write out in NumPy from Triton's description (not from tilecc): each element meets its
partner across one bit of its index and the left one keeps `y` where `x > y` (flipped
on the descending runs).  A comparison with NaN is false, so a NaN may take its
partner's place: the references then differ from np.sort, as Triton's results do.
"""

from __future__ import annotations

import numpy as np

import tilecc
import tilecc.language as tl

try:
    from kernels import BF16, F32, I32, cdiv, junk, rand
    from kernels_blocks import F16, I8, I64, U32, block_case
except ImportError:  # tests/ imported as a package
    from tests.kernels import BF16, F32, I32, cdiv, junk, rand
    from tests.kernels_blocks import F16, I8, I64, U32, block_case


# --- the references: Triton's bitonic network, in NumPy ---------------------------------------

def _log2(n: int) -> int:
    return n.bit_length() - 1


def _compare_and_swap(x: np.ndarray, flip, j: int) -> np.ndarray:
    idx = np.arange(x.shape[-1])
    y = x[..., idx ^ (1 << j)]
    right = (idx >> j) & 1
    with np.errstate(invalid="ignore"):
        swap = (x > y) != ((flip ^ right) != 0)
    return np.where(swap, y, x)


def _merge(x: np.ndarray, stage: int, flip) -> np.ndarray:
    for i in range(stage):
        x = _compare_and_swap(x, flip, stage - 1 - i)
    return x


def _alternating(n: int, stage: int) -> np.ndarray:
    return (np.arange(n) >> stage) & 1


def bitonic_sort(x: np.ndarray, descending: bool) -> np.ndarray:
    """Rows of `x` (last axis, a power of 2) through Triton's sorting network."""
    n = x.shape[-1]
    for stage in range(1, _log2(n) + 1):
        flip = _alternating(n, stage) if stage < _log2(n) else int(descending)
        x = _merge(x, stage, flip)
    return x


def bitonic_topk(x: np.ndarray, k: int) -> np.ndarray:
    """Triton's topk: runs of k sorted alternately, then the larger of each pair of runs
    (tl.max: a NaN loses to a number) merged again, until k are left, descending."""
    log_n, log_k = _log2(x.shape[-1]), _log2(k)
    if x.dtype.itemsize < 4 and log_k < log_n:  # tl.max reduces narrow types in 32 bits
        x = x.astype(np.float32 if x.dtype.kind == "f" or x.dtype == BF16 else np.int32)
    for stage in range(1, log_k + 1):
        x = _merge(x, stage, _alternating(x.shape[-1], stage) if stage < log_n else 1)
    for i in range(log_k + 1, log_n + 1):
        n = x.shape[-1]
        low = np.array([p for p in range(n) if not p >> log_k & 1])
        x = np.fmax(x[..., low], x[..., low | k])
        x = _merge(x, log_k, _alternating(n // 2, log_k) if i < log_n else 1)
    return x


def _floats_with_nan(rng, size: int, dt) -> np.ndarray:
    """Values with ties (halves of small integers) and some NaNs (not in bfloat16, whose
    NaNs NumPy's comparisons of arrays do not see as equal)."""
    x = (rng.integers(-20, 20, size) * 0.5).astype(np.float32)
    if np.dtype(dt) != BF16:
        x[rng.random(size) < 0.08] = np.nan
    return x.astype(dt)


def _values(rng, size: int, dt) -> np.ndarray:
    dt = np.dtype(dt)
    if dt.kind == "f" or dt == BF16:
        return _floats_with_nan(rng, size, dt)
    return rand(rng, size, dt)


def _pad_value(dt, descending: bool):
    """What masked lanes load: sorted to the end of each row."""
    dt = np.dtype(dt)
    if dt.kind == "f" or dt == BF16:
        return float("-inf") if descending else float("inf")
    info = np.iinfo(dt)
    return int(info.min) if descending else int(info.max)


def _padded_rows(x: np.ndarray, m: int, nn: int, rows: int, width: int, pad, dt) -> np.ndarray:
    """The m × nn matrix `x` as the kernel's blocks see it: rows padded to `rows` (a
    multiple of the block's rows) and `width` columns with `pad`."""
    full = np.full((rows, width), pad).astype(dt) if isinstance(pad, float) else \
        np.full((rows, width), pad, dtype=dt)
    full[:m, :nn] = x.reshape(m, nn)
    return full


# --- 1. sort and topk of rows ---------------------------------------------------------------------

@tilecc.jit
def sort_rows_kernel(X, Y, M, N, pad, BM: tl.constexpr, BN: tl.constexpr,
                     DESCENDING: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    offs = rm[:, None] * N + rn[None, :]
    x = tl.load(X + offs, mask=mask, other=pad)
    tl.store(Y + offs, tl.sort(x, descending=DESCENDING), mask=mask)


def _sort_args(descending: bool):
    def make(n, dt, rng, masked=True):
        m, nn = n
        return [_values(rng, m * nn, dt), junk(rng, m * nn, dt), m, nn,
                _pad_value(dt, descending), 4, 64, descending]
    return make


def _sort_ref(a):
    x, m, nn, pad, bm, bn, desc = a[0], a[2], a[3], a[4], a[5], a[6], a[7]
    rows = cdiv(m, bm) * bm
    full = _padded_rows(x, m, nn, rows, bn, pad, x.dtype)
    return [bitonic_sort(full, desc)[:m, :nn].reshape(-1)]


SORT_DTYPES = (F32, F16, BF16, I8, I32, U32, I64)
SORT_SIGS = ("*fp32:16,*fp32:16,i32,i32,fp32,4,64,0", "*i8:16,*i8:16,i32,i32,i32,4,64,1",
             "*bf16:16,*bf16:16,i32:16,i32,fp32,4,64,1", "*i64:16,*i64:16,i32,i32,i64,4,64,0")
SORT = block_case("sort_rows", sort_rows_kernel, _sort_args(False), _sort_ref, (1,),
                  SORT_DTYPES, SORT_SIGS, lambda n: (cdiv(n[0], 4),), dims=((4, 13), (64, 64)))
SORT_DESC = block_case("sort_rows_descending", sort_rows_kernel, _sort_args(True), _sort_ref,
                       (1,), (F32, I32), SORT_SIGS[:1], lambda n: (cdiv(n[0], 4),),
                       dims=((4, 13), (64, 64)))


@tilecc.jit
def topk_rows_kernel(X, Y, M, N, BM: tl.constexpr, BN: tl.constexpr, K: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(X + rm[:, None] * N + rn[None, :], mask=mask, other=float("-inf"))
    top = tl.topk(x, K)
    rk = tl.arange(0, K)
    tl.store(Y + rm[:, None] * K + rk[None, :], top, mask=rm[:, None] < M)


def _topk_args(n, dt, rng, masked=True):
    m, nn = n
    return [_values(rng, m * nn, dt), junk(rng, m * 8, dt), m, nn, 2, 128, 8]


def _topk_ref(a):
    x, m, nn, bm, bn, k = a[0], a[2], a[3], a[4], a[5], a[6]
    full = _padded_rows(x, m, nn, cdiv(m, bm) * bm, bn, float("-inf"), x.dtype)
    return [bitonic_topk(full, k)[:m].astype(x.dtype).reshape(-1)]


TOPK = block_case("topk_rows", topk_rows_kernel, _topk_args, _topk_ref, (1,), (F32, F16),
                  ("*fp32:16,*fp32:16,i32,i32,2,128,8", "*fp16:16,*fp16:16,i32,i32:16,2,128,8"),
                  lambda n: (cdiv(n[0], 2),), dims=((2, 7), (128, 128)))


@tilecc.jit
def merge_rows_kernel(X, Y, N, DESCENDING: tl.constexpr, BN: tl.constexpr):
    rn = tl.arange(0, BN)
    offs = tl.program_id(0) * BN + rn
    x = tl.load(X + offs, mask=rn < N, other=float("inf"))
    tl.store(Y + offs, tl.bitonic_merge(x, descending=DESCENDING), mask=rn < N)


def _merge_args(n, dt, rng, masked=True):
    (nn,) = n
    x = np.sort(rng.standard_normal((3, 32)).astype(dt), axis=1)
    x[:, 16:] = x[:, 16:][:, ::-1]  # bitonic rows: up, then down
    return [x.reshape(-1), junk(rng, 3 * 32, dt), min(nn, 32), bool(nn % 2), 32]


def _merge_ref(a):
    x, nn, desc = a[0].reshape(3, 32).copy(), a[2], a[3]
    x[:, nn:] = np.inf
    out = a[1].reshape(3, 32).copy()
    out[:, :nn] = _merge(x, 5, int(desc))[:, :nn]
    return [out.reshape(-1)]


MERGE = block_case("bitonic_merge_rows", merge_rows_kernel, _merge_args, _merge_ref, (1,), (F32,),
                   ("*fp32:16,*fp32:16,i32,1,32",), lambda n: (3,), dims=((32, 32),))


# --- 2. flip, gather ----------------------------------------------------------------------------

@tilecc.jit
def flip_kernel(X, Y, M, N, AXIS: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    offs = rm[:, None] * N + rn[None, :]
    x = tl.load(X + offs, mask=mask, other=0)
    tl.store(Y + offs, tl.flip(x, AXIS), mask=mask)
    # the method, along the last axis, into the second half of Y
    tl.store(Y + M * N + offs, x.flip(), mask=mask)


def _flip_args(n, dt, rng, masked=True):
    m, nn = n
    return [rand(rng, m * nn, dt), junk(rng, 2 * m * nn, dt), m, nn, int(rng.integers(0, 2)),
            8, 16]


def _flip_ref(a):
    x, m, nn, axis, bm, bn = a[0], a[2], a[3], a[4], a[5], a[6]
    full = _padded_rows(x, m, nn, cdiv(m, bm) * bm, cdiv(nn, bn) * bn, 0, x.dtype)
    outs = []
    for ax in (axis, 1):
        blocks = full.reshape(full.shape[0] // bm, bm, full.shape[1] // bn, bn)
        flipped = np.flip(blocks, 1 + 2 * ax).reshape(full.shape)
        outs.append(flipped[:m, :nn].reshape(-1))
    return [np.concatenate(outs)]


FLIP = block_case("flip_blocks", flip_kernel, _flip_args, _flip_ref, (1,), (F32, BF16, I8, I64),
                  ("*fp32:16,*fp32:16,i32,i32,0,8,16", "*i8,*i8,i32,i32,1,8,16",
                   "*bf16:16,*bf16:16,i32,i32:16,1,8,16"),
                  lambda n: (cdiv(n[0], 8), cdiv(n[1], 16)), dims=((8, 30), (16, 50)))


@tilecc.jit
def gather_kernel(X, I, J, Y, M, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # each row of Y picks K elements of its row of X (whole rows of BN in one block)
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    x = tl.load(X + rm[:, None] * BN + rn[None, :], mask=rm[:, None] < M, other=0)
    kmask = (rm[:, None] < M) & (rk[None, :] < K)
    idx = tl.load(I + rm[:, None] * K + rk[None, :], mask=kmask, other=0)
    tl.store(Y + rm[:, None] * K + rk[None, :], tl.gather(x, idx, 1), mask=kmask)
    # along axis 0: row J[k] of the block, for each k (the method spelling)
    col = tl.load(J + rk[:, None] + rn[None, :] * 0)
    picked = x.gather(col, 0)
    tl.store(Y + M * K + tl.program_id(0) * BK * BN + rk[:, None] * BN + rn[None, :], picked)


def _gather_args(n, dt, rng, masked=True):
    m, k = n
    return [rand(rng, m * 16, dt), rng.integers(0, 16, m * k).astype(np.int32),
            rng.integers(0, 4, 8).astype(np.int64), junk(rng, m * k + cdiv(m, 4) * 8 * 16, dt),
            m, k, 4, 16, 8]


def _gather_ref(a):
    x, idx, col, out = a[0], a[1], a[2], a[3].copy()
    m, k, bm, bn, bk = a[4:9]
    rows = cdiv(m, bm) * bm
    xs = np.zeros((rows, bn), x.dtype)
    xs[:m] = x.reshape(m, bn)
    out[:m * k] = np.take_along_axis(xs[:m], idx.reshape(m, k).astype(np.int64), 1).reshape(-1)
    for p in range(rows // bm):
        block = xs[p * bm:(p + 1) * bm]
        out[m * k + p * bk * bn: m * k + (p + 1) * bk * bn] = block[col].reshape(-1)
    return [out]


GATHER = block_case("gather_rows", gather_kernel, _gather_args, _gather_ref, (3,),
                    (F32, F16, I64), ("*fp32:16,*i32:16,*i64:16,*fp32:16,i32,i32,4,16,8",
                                      "*i64,*i32,*i64,*i64,i32,i32,4,16,8"),
                    lambda n: (cdiv(n[0], 4),), dims=((4, 17), (8, 8)))


# --- 3. histogram, cat, interleave, xor_sum / reduce_or, swizzle2d ------------------------------

@tilecc.jit
def histogram_block_kernel(X, H, n, BINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n, other=0)
    tl.store(H + tl.program_id(0) * BINS + tl.arange(0, BINS),
             tl.histogram(x, BINS, mask=offs < n))


def _histogram_args(n, dt, rng, masked=True):
    (nn,) = n
    lo = -3 if np.dtype(dt).kind == "i" else 0  # some values below and above the bins
    return [rng.integers(lo, 32 + 3, nn).astype(dt), junk(rng, cdiv(nn, 256) * 32, I32), nn,
            32, 256]


def _histogram_ref(a):
    x, nn, bins, block = a[0].astype(np.int64), a[2], a[3], a[4]
    out = []
    for p in range(cdiv(nn, block)):
        v = x[p * block: min(nn, (p + 1) * block)]
        v = v[(v >= 0) & (v < bins)]
        out.append(np.bincount(v, minlength=bins).astype(np.int32))
    return [np.concatenate(out)]


HISTOGRAM_BLOCK = block_case(
    "histogram_block", histogram_block_kernel, _histogram_args, _histogram_ref, (1,),
    (I32, I8, np.dtype(np.uint16)), ("*i32:16,*i32:16,i32,32,256", "*i8,*i32,i32,32,256",
                                     "*u16:16,*i32:16,i32:16,32,256"),
    lambda n: (cdiv(n[0], 256),), dims=((256, 700),))


@tilecc.jit
def cat_interleave_kernel(A, B, C, D, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(A + offs, mask=offs < n, other=0)
    b = tl.load(B + offs, mask=offs < n, other=0)
    out = tl.program_id(0) * 2 * BLOCK + tl.arange(0, 2 * BLOCK)
    tl.store(C + out, tl.cat(a, b, can_reorder=True))
    tl.store(D + out, tl.interleave(a, b))


def _cat_args(n, dt, rng, masked=True):
    (nn,) = n
    g = cdiv(nn, 64)
    return [rand(rng, nn, dt), rand(rng, nn, dt), junk(rng, 2 * 64 * g, dt),
            junk(rng, 2 * 64 * g, dt), nn, 64]


def _cat_ref(a):
    nn, block = a[4], a[5]
    g = cdiv(nn, block)
    pa, pb = (np.zeros(g * block, a[0].dtype) for _ in range(2))
    pa[:nn], pb[:nn] = a[0], a[1]
    pa, pb = pa.reshape(g, block), pb.reshape(g, block)
    return [np.concatenate([pa, pb], 1).reshape(-1), np.stack([pa, pb], -1).reshape(-1)]


CAT = block_case("cat_interleave", cat_interleave_kernel, _cat_args, _cat_ref, (2, 3),
                 (F32, I8, BF16), ("*fp32:16,*fp32:16,*fp32:16,*fp32:16,i32,64",
                                   "*i8,*i8,*i8,*i8,i32,64"),
                 lambda n: (cdiv(n[0], 64),), dims=((64, 200),))


@tilecc.jit
def bit_reductions_kernel(X, XOR_ROWS, OR_COLS, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(X + rm[:, None] * N + rn[None, :], mask=mask, other=0)
    tl.store(XOR_ROWS + rm, tl.xor_sum(x, 1), mask=rm < M)
    tl.store(OR_COLS + rn, x.reduce_or(0), mask=rn < N)


def _bits_args(n, dt, rng, masked=True):
    m, nn = n
    return [rand(rng, m * nn, dt), junk(rng, m, dt), junk(rng, nn, dt), m, nn, 16, 32]


def _bits_ref(a):
    x = a[0].reshape(a[3], a[4])
    return [np.bitwise_xor.reduce(x, 1), np.bitwise_or.reduce(x, 0)]


BITS = block_case("xor_sum_reduce_or", bit_reductions_kernel, _bits_args, _bits_ref, (1, 2),
                  (I32, I8, I64), ("*i32:16,*i32:16,*i32:16,i32,i32,16,32",
                                   "*i8,*i8,*i8,i32,i32,16,32"),
                  lambda n: (1,), dims=((16, 16), (32, 32)))


@tilecc.jit
def swizzle_kernel(OUT, size_i, size_j, size_g, BI: tl.constexpr, BJ: tl.constexpr):
    i = tl.arange(0, BI)[:, None]
    j = tl.arange(0, BJ)[None, :]
    ni, nj = tl.swizzle2d(i, j, size_i, size_j, size_g)
    mask = (i < size_i) & (j < size_j)
    tl.store(OUT + i * size_j + j, ni * size_j + nj, mask=mask)


def _swizzle_args(n, dt, rng, masked=True):
    si, sj = n
    return [junk(rng, si * sj, I32), si, sj, int(rng.integers(1, 6)), 16, 16]


def _swizzle_ref(a):
    si, sj, g = a[1], a[2], a[3]
    i, j = np.meshgrid(np.arange(si), np.arange(sj), indexing="ij")
    ij = i * sj + j
    off_i = ij // (g * sj) * g
    size_g = np.minimum(si - off_i, g)
    ij = ij % (g * sj)
    return [((off_i + ij % size_g) * sj + ij // size_g).astype(np.int32).reshape(-1)]


SWIZZLE = block_case("swizzle2d", swizzle_kernel, _swizzle_args, _swizzle_ref, (0,), (I32,),
                     ("*i32:16,i32,i32,i32,16,16",), lambda n: (1,), dims=((16, 16), (16, 16)))


# --- 4. map_elementwise -------------------------------------------------------------------------

@tilecc.jit
def _below_or_above(x, lo):
    # a branch per element (tl.where would compute both sides)
    if x < lo:
        r = lo * 2
    else:
        r = x - 1
    return r, (x > lo).to(tl.int32)


@tilecc.jit
def _differences(a0, a1, a2, a3, b0, b1, b2, b3):
    return a0 - b0, a1 - b1, a2 - b2, a3 - b3


@tilecc.jit
def map_kernel(X, R, ABOVE, D, M, N, lo, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    offs = rm[:, None] * N + rn[None, :]
    x = tl.load(X + offs, mask=mask, other=0)
    r, above = tl.map_elementwise(_below_or_above, x, lo)
    tl.store(R + offs, r, mask=mask)
    tl.store(ABOVE + offs, above, mask=mask)
    # four elements a call; a row broadcast against the block
    (d,) = tl.map_elementwise(_differences, x, x.sum(1)[:, None], pack=4)
    tl.store(D + offs, d, mask=mask)


def _map_args(n, dt, rng, masked=True):
    m, nn = n
    x = rand(rng, m * nn, dt) if np.dtype(dt).kind in "iu" else \
        (rng.integers(-8, 8, m * nn) * 0.5).astype(dt)  # exact row sums
    if np.dtype(dt).kind in "iu":
        x = (x % 64).astype(dt)
    return [x, junk(rng, m * nn, dt), junk(rng, m * nn, I32), junk(rng, m * nn, dt), m, nn,
            3 if np.dtype(dt).kind in "iu" else 1.5, 4, 32]


def _map_ref(a):
    x, lo = a[0].reshape(a[4], a[5]), a[6]
    lo_t = np.asarray(lo).astype(x.dtype)
    r = np.where(x < lo_t, lo_t * x.dtype.type(2), x - x.dtype.type(1)).astype(x.dtype)
    total = x.sum(1, dtype=np.float64 if x.dtype.kind == "f" else np.int64)
    d = (x - total[:, None]).astype(x.dtype)
    return [r.reshape(-1), (x > lo_t).astype(np.int32).reshape(-1), d.reshape(-1)]


MAP = block_case("map_elementwise", map_kernel, _map_args, _map_ref, (1, 2, 3), (F32, I32),
                 ("*fp32:16,*fp32:16,*i32:16,*fp32:16,i32,i32,fp32,4,32",
                  "*i32,*i32,*i32,*i32,i32,i32,i32,4,32"),
                 lambda n: (cdiv(n[0], 4),), dims=((4, 13), (32, 32)))


CASES_REORDER = [SORT, SORT_DESC, TOPK, MERGE, FLIP, GATHER, HISTOGRAM_BLOCK, CAT, BITS, SWIZZLE,
                 MAP]
BY_NAME = {c.name: c for c in CASES_REORDER}
assert len(BY_NAME) == len(CASES_REORDER), "case names must be unique"
