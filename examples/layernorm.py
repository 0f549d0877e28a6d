"""Layer normalization, forward and backward (Triton's tutorial kernels).

Forward: one program per row; mean and variance are reduced over the row in fp32.
Backward: each program walks a strided set of rows, computing dx and keeping its share of
the weight and bias gradients in registers; it writes one row of partial sums, and a
second kernel adds the partial rows up with 2-D blocks.

    python examples/layernorm.py
prints the generated CUDA of the forward kernel and checks all three kernels against
NumPy (on the GPU when there is one, else on the interpreter).
"""

import numpy as np

import tilecc
import tilecc.language as tl


@tilecc.jit
def layer_norm_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    # mean, accumulated in fp32 a block of columns at a time
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    # variance
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.0)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    # normalize and apply the affine transform
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y, mask=mask)


@tilecc.jit
def layer_norm_bwd_dx(DX, DY, DW, DB, X, W, Mean, Rstd, stride, M, N,
                      BLOCK_SIZE_N: tl.constexpr):
    # Program p handles rows p, p + P, p + 2P, ... (P programs in all) and keeps its share
    # of dw and db in registers: no atomics, no locks, one partial row per program.
    pid = tl.program_id(0)
    n_programs = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    dw = tl.zeros([BLOCK_SIZE_N], dtype=tl.float32)
    db = tl.zeros([BLOCK_SIZE_N], dtype=tl.float32)
    for row in range(pid, M, n_programs):
        x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(DY + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        mean = tl.load(Mean + row)
        rstd = tl.load(Rstd + row)
        xhat = tl.where(mask, (x - mean) * rstd, 0.0)
        dw += dy * xhat
        db += dy
        # w is re-read each row (from cache) rather than held: registers are the limit here
        w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
        wdy = tl.where(mask, w * dy, 0.0)
        c1 = tl.sum(xhat * wdy, axis=0) / N
        c2 = tl.sum(wdy, axis=0) / N
        dx = (wdy - (xhat * c1 + c2)) * rstd
        tl.store(DX + row * stride + cols, dx, mask=mask)
    # this program's partial sums, in fp32; layer_norm_bwd_dwdb adds them up
    tl.store(DW + pid * N + cols, dw, mask=mask)
    tl.store(DB + pid * N + cols, db, mask=mask)


@tilecc.jit
def layer_norm_bwd_dwdb(DW, DB, FINAL_DW, FINAL_DB, M, N, BLOCK_SIZE_M: tl.constexpr,
                        BLOCK_SIZE_N: tl.constexpr):
    # each program sums BLOCK_SIZE_N columns of the partial buffers down all M rows
    pid = tl.program_id(0)
    cols = pid * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    dw = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for i in range(0, M, BLOCK_SIZE_M):
        rows = i + tl.arange(0, BLOCK_SIZE_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW + offs, mask=mask, other=0.0)
        db += tl.load(DB + offs, mask=mask, other=0.0)
    sum_dw = tl.sum(dw, axis=0)
    sum_db = tl.sum(db, axis=0)
    tl.store(FINAL_DW + cols, sum_dw, mask=cols < N)
    tl.store(FINAL_DB + cols, sum_db, mask=cols < N)


def forward_config(n: int, itemsize: int) -> dict:
    """The tutorial's choice: the row in one block if it fits 64 KB, warps by size."""
    block = min(65536 // itemsize, tilecc.next_power_of_2(n))
    return {"BLOCK_SIZE": block, "num_warps": min(max(block // 256, 1), 8)}


def layer_norm(x, w, b, eps: float, xp=np):
    """Forward: y, mean, rstd.  `xp` is numpy (interpreter) or cupy (GPU)."""
    m, n = x.shape
    y, mean, rstd = xp.empty_like(x), xp.empty(m, xp.float32), xp.empty(m, xp.float32)
    kernel = layer_norm_fwd.interpret if xp is np else layer_norm_fwd
    kernel[(m,)](x, y, w, b, mean, rstd, n, n, eps, **forward_config(n, x.itemsize))
    return y, mean, rstd


def backward_config(n: int, itemsize: int) -> dict:
    block = tilecc.next_power_of_2(n)
    return {"BLOCK_SIZE_N": block, "num_warps": min(max(block // 512, 4), 32)}


def layer_norm_backward(dy, x, w, mean, rstd, xp=np, programs: int = 256):
    """dx, dw, db for the forward above; `programs` rows of partial dw / db sums."""
    m, n = x.shape
    programs = min(programs, m)
    partial_dw = xp.empty((programs, n), xp.float32)
    partial_db = xp.empty((programs, n), xp.float32)
    dx, dw, db = xp.empty_like(x), xp.empty(n, xp.float32), xp.empty(n, xp.float32)
    dx_kernel = layer_norm_bwd_dx.interpret if xp is np else layer_norm_bwd_dx
    dx_kernel[(programs,)](dx, dy, partial_dw, partial_db, x, w, mean, rstd, n, m, n,
                           **backward_config(n, x.itemsize))
    dwdb = layer_norm_bwd_dwdb.interpret if xp is np else layer_norm_bwd_dwdb
    dwdb[(tilecc.cdiv(n, 128),)](partial_dw, partial_db, dw, db, programs, n,
                                 BLOCK_SIZE_M=32, BLOCK_SIZE_N=128)
    return dx, dw.astype(w.dtype), db.astype(w.dtype)


def reference(x, w, b, dy, eps):
    x, w, b, dy = (a.astype(np.float64) for a in (x, w, b, dy))
    mean = x.mean(axis=1, keepdims=True)
    rstd = 1 / np.sqrt(x.var(axis=1, keepdims=True) + eps)
    xhat = (x - mean) * rstd
    y = xhat * w + b
    wdy = w * dy
    c1 = (xhat * wdy).mean(axis=1, keepdims=True)
    c2 = wdy.mean(axis=1, keepdims=True)
    dx = (wdy - (xhat * c1 + c2)) * rstd
    return y, dx, (dy * xhat).sum(axis=0), dy.sum(axis=0)


FWD_SIGNATURE = "*fp16:16, *fp16:16, *fp16:16, *fp16:16, *fp32:16, *fp32:16, i32:16, i32:16, fp32, 1024"


def main() -> None:
    print(layer_norm_fwd.source(FWD_SIGNATURE, num_warps=4))
    rng = np.random.default_rng(0)
    m, n, eps = 19, 300, 1e-5
    x = rng.standard_normal((m, n)).astype(np.float16)
    w, b = (rng.standard_normal(n).astype(np.float16) for _ in range(2))
    dy = rng.standard_normal((m, n)).astype(np.float16)
    try:
        import cupy

        xp = cupy if cupy.cuda.runtime.getDeviceCount() > 0 else np
    except Exception:
        xp = np
    to = (lambda a: xp.asarray(a)) if xp is not np else (lambda a: a)
    back = (lambda a: xp.asnumpy(a)) if xp is not np else (lambda a: a)
    y, mean, rstd = layer_norm(to(x), to(w), to(b), eps, xp)
    dx, dw, db = layer_norm_backward(to(dy), to(x), to(w), mean, rstd, xp)
    ry, rdx, rdw, rdb = reference(x, w, b, dy, eps)
    for name, got, want, tol in (("y", y, ry, 1e-2), ("dx", dx, rdx, 1e-2),
                                 ("dw", dw, rdw, 5e-2), ("db", db, rdb, 5e-2)):
        np.testing.assert_allclose(back(got).astype(np.float64), want, rtol=tol, atol=tol,
                                   err_msg=name)
    print(f"// layer norm forward and backward of a {m} x {n} fp16 array on "
          f"{'the GPU' if xp is not np else 'the interpreter'}: matches NumPy")


if __name__ == "__main__":
    main()
