"""The registry of `tl.dot` kernels (same `Case` conventions as tests/kernels_blocks.py).

The problem size is `(M, K, N)`.  References are computed in float64 from the very inputs
the kernel reads (for tf32, from the inputs rounded to tf32 as the tensor cores see them),
so tolerances only cover the fp32 summation order and the final rounding; they scale with
the largest K drawn.
"""

from __future__ import annotations

import numpy as np

import tilecc
import tilecc.language as tl
from tilecc.interpreter.evaluate import truncate_to_tf32

try:
    from kernels import BF16, F32, I32, cdiv, junk, rand
    from kernels_blocks import F16, I8, block_case
except ImportError:  # tests/ imported as a package
    from tests.kernels import BF16, F32, I32, cdiv, junk, rand
    from tests.kernels_blocks import F16, I8, block_case


def _operands(n, dt, rng):
    """A (M x K, row- or column-major, drawn) and B (K x N row-major), small values."""
    m, k, nn = n
    lo, hi = (-3, 3) if np.dtype(dt).kind == "i" else (-2, 2)
    a = rand(rng, m * k, dt, lo, hi).reshape(m, k)
    b = rand(rng, k * nn, dt, lo, hi).reshape(k, nn)
    return a, b


def _product(a: np.ndarray, b: np.ndarray, tf32: bool = False) -> np.ndarray:
    if a.dtype.kind == "i":
        return a.astype(np.int64) @ b.astype(np.int64)
    x, y = a.astype(np.float32), b.astype(np.float32)
    if tf32:
        x, y = truncate_to_tf32(x), truncate_to_tf32(y)
    return x.astype(np.float64) @ y.astype(np.float64)


# ========================================================================================
# 1. Triton's tutorial loop: pointers advanced by the loop, K masked, any strides.
# ========================================================================================

@tilecc.jit
def dot_loop_kernel(A, B, C, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                    BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                    IEEE: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = A + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = B + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BM, BN), dtype=C.dtype.element_ty)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < K - k * BK), other=0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < K - k * BK) & (rn[None, :] < N), other=0)
        if IEEE:
            acc = tl.dot(a, b, acc, input_precision="ieee")
        else:
            acc = tl.dot(a, b, acc)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    tl.store(C + rm[:, None] * stride_cm + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@tilecc.jit
def dot_offsets_kernel(A, B, C, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                       IEEE: tl.constexpr):
    # the same product, its offsets along K computed from the loop index each iteration
    # (a named scalar both loads read) instead of pointers the loop advances
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=C.dtype.element_ty)
    for k in range(0, tl.cdiv(K, BK)):
        k0 = k * BK
        rk = k0 + tl.arange(0, BK)
        a = tl.load(A + rm[:, None] * stride_am + rk[None, :] * stride_ak,
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0)
        b = tl.load(B + rk[:, None] * stride_bk + rn[None, :] * stride_bn,
                    mask=(rk[:, None] < K) & (rn[None, :] < N), other=0)
        acc = tl.dot(a, b, acc, input_precision="ieee" if IEEE else "tf32")
    tl.store(C + rm[:, None] * stride_cm + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@tilecc.jit
def dot_inline_offsets_kernel(A, B, C, K, BM: tl.constexpr, BN: tl.constexpr,
                              BK: tl.constexpr):
    # offsets written out in each load (whole tiles): `k * BK + rk` once per operand
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(A + rm[:, None] * K + (k * BK + rk)[None, :])
        b = tl.load(B + (k * BK + rk)[:, None] * (BN * tl.num_programs(1)) + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(C + rm[:, None] * (BN * tl.num_programs(1)) + rn[None, :], acc)


def _loop_args(n, dt, rng, constexprs):
    m, k, nn = n
    a, b = _operands(n, dt, rng)
    out = np.dtype(I32 if np.dtype(dt).kind == "i" else F32)
    if rng.integers(0, 2):  # A stored column-major: K is not the contiguous axis
        a_mem, sam, sak = np.asfortranarray(a).ravel(order="K"), 1, m
    else:
        a_mem, sam, sak = a.ravel(), k, 1
    if rng.integers(0, 2):  # B stored column-major (a block of K^T): K is contiguous
        b_mem, sbk, sbn = np.asfortranarray(b).ravel(order="K"), 1, k
    else:
        b_mem, sbk, sbn = b.ravel(), nn, 1
    return [a_mem, b_mem, junk(rng, m * nn, out), m, nn, k, sam, sak, sbk, sbn, nn,
            *constexprs]


def _strided(mem: np.ndarray, shape: tuple[int, int], strides: tuple[int, int]) -> np.ndarray:
    return np.lib.stride_tricks.as_strided(mem, shape, tuple(s * mem.itemsize
                                                             for s in strides)).copy()


def _loop_ref(args, tf32: bool):
    m, nn, k, sam, sak, sbk, sbn = args[3:10]
    a = _strided(args[0], (m, k), (sam, sak))
    b = _strided(args[1], (k, nn), (sbk, sbn))
    out = _product(a, b, tf32)
    return [out.reshape(-1).astype(args[2].dtype)]


TL_NAMES = {F16: ("fp16", "fp32"), BF16: ("bf16", "fp32"), F32: ("fp32", "fp32"),
            I8: ("i8", "i32")}


def _loop_case(name, dtypes, ieee: bool, tf32: bool, blocks=(32, 32, 32), warps=4, tol=None,
               kernel=dot_loop_kernel):
    bm, bk, bn = blocks
    # sizes any, and sizes multiples of 16 (whole vectors: both operands stream in by
    # cp.async); B row-major, and B column-major (contiguous along K: staged K-major for
    # wgmma)
    sigs = [f"*{d}:16,*{d}:16,*{o}:16,{mn},{mn},i32:16,i32:16,i32:1,{b_strides},i32:16,"
            f"{bm},{bn},{bk},{int(ieee)}" for d, o in
            (TL_NAMES[np.dtype(x)] for x in dtypes)
            for mn, b_strides in (("i32", "i32:16,i32:1"), ("i32:16", "i32:16,i32:1"),
                                  ("i32:16", "i32:1,i32:16"))]
    case = block_case(
        name, kernel,
        lambda n, dt, rng, masked=True: _loop_args(n, dt, rng, (bm, bn, bk, int(ieee))),
        lambda a: _loop_ref(a, tf32), (2,), dtypes, sigs,
        lambda n: (cdiv(n[0], bm), cdiv(n[2], bn)),
        dims=((bm, 3 * bm), (bk, 3 * bk + 5), (bn, 3 * bn)),
        options={"num_warps": warps},
        tolerance=tol or {"float32": (1e-5, 1e-3)})
    return case


DOT_LOOP = _loop_case("dot_loop", (F16, BF16, I8), ieee=False, tf32=False)
DOT_LOOP_TF32 = _loop_case("dot_loop_tf32", (F32,), ieee=False, tf32=True)
DOT_LOOP_IEEE = _loop_case("dot_loop_ieee", (F32,), ieee=True, tf32=False)
# one warp, the smallest tile; and 8 warps on a tile the warps split unevenly (64 x 16)
DOT_LOOP_MIN = _loop_case("dot_loop_min", (F16,), ieee=False, tf32=False,
                          blocks=(16, 16, 16), warps=1)
DOT_LOOP_WIDE = _loop_case("dot_loop_8warps", (BF16,), ieee=False, tf32=False,
                           blocks=(64, 32, 16), warps=8)

# tiles Hopper's wgmma takes (sm_90): one warpgroup with K = 64 (128-byte swizzle), two
# warpgroups with K = 32 (64-byte swizzle)
DOT_LOOP_WG1 = _loop_case("dot_loop_warpgroup", (F16, BF16), ieee=False, tf32=False,
                          blocks=(64, 64, 64), warps=4, tol={"float32": (1e-5, 2e-3)})
DOT_LOOP_WG2 = _loop_case("dot_loop_2_warpgroups", (F16,), ieee=False, tf32=False,
                          blocks=(128, 32, 128), warps=8)
DOT_OFFSETS = _loop_case("dot_offsets_loop", (F16, BF16), ieee=False, tf32=False,
                         blocks=(64, 64, 64), warps=4, tol={"float32": (1e-5, 2e-3)},
                         kernel=dot_offsets_kernel)


# ========================================================================================
# 2. Operands from arithmetic, casts and tl.trans; `acc += tl.dot(...)`; a fused epilogue
#    (bias and leaky ReLU) stored in the input type.
# ========================================================================================

@tilecc.jit
def dot_epilogue_kernel(A, BT, BIAS, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                        BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(A + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K),
                    other=0.0)
        # B^T stored N x K in fp32: loaded, transposed and rounded to A's type in the kernel
        bt = tl.load(BT + rn[:, None] * K + rk[None, :], mask=(rn[:, None] < N) & (rk[None, :] < K),
                     other=0.0)
        acc += tl.dot(a * 2, tl.trans(bt).to(A.dtype.element_ty))
    bias = tl.load(BIAS + rn, mask=rn < N, other=0.0)
    y = acc + bias[None, :]
    y = tl.where(y >= 0, y, 0.01 * y)
    tl.store(C + rm[:, None] * N + rn[None, :], y.to(C.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def _epilogue_args(n, dt, rng, masked=True):
    m, k, nn = n
    a = rand(rng, m * k, dt, -2, 2)
    bt = rand(rng, nn * k, dt, -2, 2).astype(F32)  # values exact in the input type
    return [a, bt, rand(rng, nn, F32, -4, 4), junk(rng, m * nn, dt), m, nn, k, 64, 64, 32]


def _epilogue_ref(args):
    m, nn, k = args[4:7]
    a = args[0].reshape(m, k).astype(np.float64) * 2
    b = args[1].reshape(nn, k).T.astype(np.float64)
    y = a @ b + args[2].astype(np.float64)[None, :]
    y = np.where(y >= 0, y, 0.01 * y)
    return [y.reshape(-1).astype(args[3].dtype)]


DOT_EPILOGUE = block_case(
    "dot_epilogue", dot_epilogue_kernel, _epilogue_args, _epilogue_ref, (3,), (F16, BF16),
    ("*fp16:16,*fp32:16,*fp32:16,*fp16:16,i32,i32,i32:16,64,64,32",
     "*bf16:16,*fp32:16,*fp32:16,*bf16:16,i32,i32,i32:16,64,64,32"),
    lambda n: (cdiv(n[0], 64), cdiv(n[2], 64)), dims=((64, 150), (32, 80), (64, 150)),
    options={"num_warps": 4},
    tolerance={"float16": (2e-3, 2e-3), "bfloat16": (1e-2, 1e-2)})


# ========================================================================================
# 3. An operand that does not change in the loop of its product (staged in shared memory
#    once per entry of the loop), the loop itself inside another loop.
# ========================================================================================

@tilecc.jit
def dot_rows_kernel(X, W, C, M, N, ROWS: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                    K: tl.constexpr):
    # C = X @ W with K whole: each program takes ROWS blocks of X's rows in turn and
    # multiplies each, held, by every block of W's columns
    rk = tl.arange(0, K)
    for i in range(ROWS):
        rm = (tl.program_id(0) * ROWS + i) * BM + tl.arange(0, BM)
        x = tl.load(X + rm[:, None] * K + rk[None, :], mask=rm[:, None] < M, other=0.0)
        for n0 in range(0, N, BN):
            rn = n0 + tl.arange(0, BN)
            w = tl.load(W + rk[:, None] * N + rn[None, :], mask=rn[None, :] < N, other=0.0)
            tl.store(C + rm[:, None] * N + rn[None, :], tl.dot(x, w),
                     mask=(rm[:, None] < M) & (rn[None, :] < N))


def _rows_args(n, dt, rng, masked=True):
    m, nn = n
    x, w = (rand(rng, size, dt, -2, 2) for size in (m * 64, 64 * nn))
    return [x, w, junk(rng, m * nn, F32), m, nn, 2, 64, 64, 64]


def _rows_ref(args):
    m, nn = args[3:5]
    return [_product(args[0].reshape(m, 64), args[1].reshape(64, nn)).reshape(-1)
            .astype(F32)]


DOT_ROWS = block_case(
    "dot_rows_held", dot_rows_kernel, _rows_args, _rows_ref, (2,), (F16, BF16),
    tuple(f"*{d}:16,*{d}:16,*fp32:16,i32,{nn},2,64,64,64" for d in ("fp16", "bf16")
          for nn in ("i32", "i32:16")),
    lambda n: (cdiv(n[0], 128),), dims=((64, 300), (64, 200)), options={"num_warps": 4},
    tolerance={"float32": (1e-5, 2e-3)})


@tilecc.jit
def dot_held_twice_kernel(X, W, C, D, N, B: tl.constexpr):
    # one block x, held across two loops: C = x @ W (x as A), D = W^T @ x (x as B)
    r = tl.arange(0, B)
    x = tl.load(X + r[:, None] * B + r[None, :])
    for n0 in range(0, N, B):
        cols = n0 + r
        w = tl.load(W + r[:, None] * N + cols[None, :], mask=cols[None, :] < N, other=0.0)
        tl.store(C + r[:, None] * N + cols[None, :], tl.dot(x, w), mask=cols[None, :] < N)
    for n0 in range(0, N, B):
        rows = n0 + r
        wt = tl.load(W + r[None, :] * N + rows[:, None], mask=rows[:, None] < N, other=0.0)
        tl.store(D + rows[:, None] * B + r[None, :], tl.dot(wt, x), mask=rows[:, None] < N)


def _twice_args(n, dt, rng, masked=True):
    nn = n[0]
    x, w = rand(rng, 64 * 64, dt, -2, 2), rand(rng, 64 * nn, dt, -2, 2)
    return [x, w, junk(rng, 64 * nn, F32), junk(rng, nn * 64, F32), nn, 64]


def _twice_ref(args):
    nn = args[4]
    x, w = args[0].reshape(64, 64), args[1].reshape(64, nn)
    return [_product(x, w).reshape(-1).astype(F32), _product(w.T, x).reshape(-1).astype(F32)]


DOT_HELD_TWICE = block_case(
    "dot_held_twice", dot_held_twice_kernel, _twice_args, _twice_ref, (2, 3), (F16, BF16),
    tuple(f"*{d}:16,*{d}:16,*fp32:16,*fp32:16,{nn},64" for d in ("fp16", "bf16")
          for nn in ("i32", "i32:16")),
    lambda n: (1,), dims=((64, 200),), options={"num_warps": 4},
    tolerance={"float32": (1e-5, 2e-3)})


CASES_DOT = [DOT_LOOP, DOT_LOOP_TF32, DOT_LOOP_IEEE, DOT_LOOP_MIN, DOT_LOOP_WIDE, DOT_LOOP_WG1,
             DOT_LOOP_WG2, DOT_OFFSETS, DOT_EPILOGUE, DOT_ROWS, DOT_HELD_TWICE]
BY_NAME = {c.name: c for c in CASES_DOT}


# --- weight products: operands computed from loads (passes.pipeline.prologue_loads) ------

@tilecc.jit
def int8_weights_kernel(a_ptr, b_ptr, s_ptr, c_ptr, M, N, K, BM: tl.constexpr,
                        BN: tl.constexpr, BK: tl.constexpr):
    """fp16 A times int8 B (K x N) cast to fp16, column scales after the loop: A streams
    into the product's tiles, B is read ahead and cast."""
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + (rm % M)[:, None] * K + rk[None, :]  # rows past M: never stored
    b_ptrs = b_ptr + rk[:, None] * N + (rn % N)[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k * BK, other=0)
        acc = tl.dot(a, b.to(tl.float16), acc)
        a_ptrs += BK
        b_ptrs += BK * N
    acc = acc * tl.load(s_ptr + rn, mask=rn < N, other=0.0)[None, :]
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@tilecc.jit
def dequant_in_loop_kernel(a_ptr, b_ptr, s_ptr, z_ptr, c_ptr, M, N, K, BM: tl.constexpr,
                           BN: tl.constexpr, BK: tl.constexpr):
    """fp16 A times int8 B (K x N) dequantized inside the loop, `(b - zero) * scale` with
    per-column fp16 zeros and scales loaded once before it (the form of AWQ- and
    GPTQ-style kernels): the weight is converted and scaled at every step."""
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + (rm % M)[:, None] * K + rk[None, :]  # rows past M: never stored
    b_ptrs = b_ptr + rk[:, None] * N + (rn % N)[None, :]
    scale = tl.load(s_ptr + rn, mask=rn < N, other=0.0)
    zero = tl.load(z_ptr + rn, mask=rn < N, other=0.0)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k * BK, other=0)
        w = (b.to(tl.float16) - zero[None, :]) * scale[None, :]
        acc = tl.dot(a, w, acc)
        a_ptrs += BK
        b_ptrs += BK * N
    c = acc.to(tl.float16)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c, mask=(rm[:, None] < M) & (rn[None, :] < N))


@tilecc.jit
def upcast_bt_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                     BK: tl.constexpr):
    """fp8 A (M x K) and B stored N x K through descriptors, multiplied as bf16 with
    `b.T`: both read ahead, nothing streams into the product's tiles directly."""
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, [N, K], [K, 1], [BN, BK])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = a_desc.load([pid_m * BM, k * BK])
        b = b_desc.load([pid_n * BN, k * BK])
        acc = tl.dot(a.to(tl.bfloat16), b.T.to(tl.bfloat16), acc)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))
