"""Fused attention, forward and backward (the kernels of Triton's fused-attention tutorial).

Forward: one program per (block of BLOCK_M queries, batch x head) walks the keys and values
BLOCK_N at a time: scores with `tl.dot`, an online softmax (running maximum and sum in
fp32, `exp2` with log2(e) folded into the scale), the output accumulator rescaled and fed
by a second `tl.dot` with V; the N x N scores never reach memory.  Causal or not (a
constexpr); any length (keys past the end masked, queries past the end not stored).  It
also writes each row's log-sum-exp (base 2, scaled), from which the backward below
(`attention_backward`; `flash_attention`: a torch autograd Function) rebuilds P.

    python examples/attention.py
prints the generated CUDA, then checks forward and backward against NumPy (on the GPU
when there is one, else on the interpreter).
"""

import math

import numpy as np

import tilecc
import tilecc.language as tl


@tilecc.jit
def attention_fwd(Q, K, V, Out, LSE, sm_scale, stride_z, stride_h, stride_m, H, N_CTX,
                  HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  CAUSAL: tl.constexpr):
    # Q, K, V and Out are (batch, heads, N_CTX, HEAD_DIM) with one set of strides, the
    # last dimension contiguous.
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    base = (off_hz // H) * stride_z + (off_hz % H) * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + offs_m[:, None] * stride_m + offs_d[None, :],
                mask=offs_m[:, None] < N_CTX, other=0.0)
    kt_ptrs = K + base + offs_n[None, :] * stride_m + offs_d[:, None]  # a block of K^T
    v_ptrs = V + base + offs_n[:, None] * stride_m + offs_d[None, :]

    # running row maximum and row sum of the online softmax, and the output accumulator
    m_i = tl.full([BLOCK_M], -float("inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634  # exp(x) = exp2(x * log2(e))
    hi = N_CTX
    if CAUSAL:  # keys after the block's last query contribute nothing
        hi = tl.minimum((start_m + 1) * BLOCK_M, N_CTX)
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        kt = tl.load(kt_ptrs + start_n * stride_m, mask=cols[None, :] < N_CTX, other=0.0)
        qk = tl.dot(q, kt)
        keep = cols[None, :] < N_CTX
        if CAUSAL:
            keep = keep & (offs_m[:, None] >= cols[None, :])
        qk = tl.where(keep, qk * qk_scale, -1.0e6)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)  # rescales what was summed with the old maximum
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(v_ptrs + start_n * stride_m, mask=cols[:, None] < N_CTX, other=0.0)
        acc = tl.dot(p.to(Out.dtype.element_ty), v, acc)
        m_i = m_ij

    acc = acc / l_i[:, None]
    tl.store(LSE + off_hz * N_CTX + offs_m, m_i + tl.math.log2(l_i), mask=offs_m < N_CTX)
    tl.store(Out + base + offs_m[:, None] * stride_m + offs_d[None, :],
             acc.to(Out.dtype.element_ty), mask=offs_m[:, None] < N_CTX)



# --- backward -------------------------------------------------------------------------------
# With P = softmax(S), S = Q K^T * sm_scale and dO the gradient of the output:
#   dV = P^T dO,  dP = dO V^T,  dS = P * (dP - delta),  delta = rowsum(dO * O),
#   dQ = dS K * sm_scale,  dK = dS^T Q * sm_scale.
# P is rebuilt block by block from the forward's log-sum-exp (exp2(S log2(e) - LSE)), so the
# N x N matrices never reach memory either.  Three kernels: delta first; then one program
# per block of keys accumulates its dK and dV over the queries, and one program per block
# of queries accumulates its dQ over the keys, each owning what it writes (no atomics).


@tilecc.jit
def attention_bwd_preprocess(O, DO, Delta, stride_z, stride_h, stride_m, H, N_CTX,
                             HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr):
    # delta = rowsum(dO * O), in fp32, one row per query (the dP - delta of every dS)
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    base = (off_hz // H) * stride_z + (off_hz % H) * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    rows = offs_m[:, None] < N_CTX
    at = base + offs_m[:, None] * stride_m + offs_d[None, :]
    o = tl.load(O + at, mask=rows, other=0.0).to(tl.float32)
    do = tl.load(DO + at, mask=rows, other=0.0).to(tl.float32)
    tl.store(Delta + off_hz * N_CTX + offs_m, tl.sum(o * do, axis=1), mask=offs_m < N_CTX)


@tilecc.jit
def attention_bwd_dkdv(Q, K, V, DO, DK, DV, LSE, Delta, sm_scale, stride_z, stride_h,
                       stride_m, H, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                       BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    # One program per block of BLOCK_N keys: dK and dV stay in registers while the
    # queries stream past BLOCK_M at a time.  Everything is transposed (keys along the
    # rows), so that the key block is the products' M side and P^T is never transposed.
    start_n = tl.program_id(0)
    off_hz = tl.program_id(1)
    base = (off_hz // H) * stride_z + (off_hz % H) * stride_h
    offs_n = start_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_m = tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    keys = offs_n[:, None] < N_CTX
    kv_at = base + offs_n[:, None] * stride_m + offs_d[None, :]
    k = tl.load(K + kv_at, mask=keys, other=0.0)
    v = tl.load(V + kv_at, mask=keys, other=0.0)
    # Q and dO are each read both ways round (a pointer load, transposed or not, can be
    # pipelined into shared memory; a register transpose of one load could not)
    q_ptrs = Q + base + offs_m[:, None] * stride_m + offs_d[None, :]
    qt_ptrs = Q + base + offs_m[None, :] * stride_m + offs_d[:, None]
    do_ptrs = DO + base + offs_m[:, None] * stride_m + offs_d[None, :]
    dot_ptrs = DO + base + offs_m[None, :] * stride_m + offs_d[:, None]
    lse_ptrs = LSE + off_hz * N_CTX + offs_m
    delta_ptrs = Delta + off_hz * N_CTX + offs_m

    dk = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    dv = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634  # the forward's units: exp(x) = exp2(x log2(e))
    lo = 0
    if CAUSAL:  # queries before the block's first key see none of its keys
        lo = (start_n * BLOCK_N) // BLOCK_M * BLOCK_M
    for start_m in range(lo, N_CTX, BLOCK_M):
        rows = start_m + offs_m
        # queries past the end load as zeros: their P^T columns then meet zero rows of dO
        # and their dS^T columns are zero, so they add nothing
        qt = tl.load(qt_ptrs + start_m * stride_m, mask=rows[None, :] < N_CTX, other=0.0)
        lse = tl.load(lse_ptrs + start_m, mask=rows < N_CTX, other=0.0)
        pt = tl.math.exp2(tl.dot(k, qt) * qk_scale - lse[None, :])
        if CAUSAL:
            pt = tl.where(rows[None, :] >= offs_n[:, None], pt, 0.0)
        do = tl.load(do_ptrs + start_m * stride_m, mask=rows[:, None] < N_CTX, other=0.0)
        dv = tl.dot(pt.to(DO.dtype.element_ty), do, dv)
        delta = tl.load(delta_ptrs + start_m, mask=rows < N_CTX, other=0.0)
        dot = tl.load(dot_ptrs + start_m * stride_m, mask=rows[None, :] < N_CTX, other=0.0)
        dpt = tl.dot(v, dot)
        dst = pt * (dpt - delta[None, :])
        q = tl.load(q_ptrs + start_m * stride_m, mask=rows[:, None] < N_CTX, other=0.0)
        dk = tl.dot(dst.to(Q.dtype.element_ty), q, dk)

    tl.store(DV + kv_at, dv.to(DV.dtype.element_ty), mask=keys)
    tl.store(DK + kv_at, (dk * sm_scale).to(DK.dtype.element_ty), mask=keys)


@tilecc.jit
def attention_bwd_dq(Q, K, V, DO, DQ, LSE, Delta, sm_scale, stride_z, stride_h, stride_m,
                     H, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                     BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    # One program per block of BLOCK_M queries: dQ stays in registers while the keys and
    # values stream past BLOCK_N at a time (as in the forward).
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    base = (off_hz // H) * stride_z + (off_hz % H) * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    rows = offs_m[:, None] < N_CTX
    q_at = base + offs_m[:, None] * stride_m + offs_d[None, :]
    q = tl.load(Q + q_at, mask=rows, other=0.0)
    do = tl.load(DO + q_at, mask=rows, other=0.0)
    lse = tl.load(LSE + off_hz * N_CTX + offs_m, mask=offs_m < N_CTX, other=0.0)
    delta = tl.load(Delta + off_hz * N_CTX + offs_m, mask=offs_m < N_CTX, other=0.0)
    kt_ptrs = K + base + offs_n[None, :] * stride_m + offs_d[:, None]  # blocks of K^T, V^T
    vt_ptrs = V + base + offs_n[None, :] * stride_m + offs_d[:, None]
    k_ptrs = K + base + offs_n[:, None] * stride_m + offs_d[None, :]

    dq = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634
    hi = N_CTX
    if CAUSAL:  # keys after the block's last query contribute nothing
        hi = tl.minimum((start_m + 1) * BLOCK_M, N_CTX)
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        kt = tl.load(kt_ptrs + start_n * stride_m, mask=cols[None, :] < N_CTX, other=0.0)
        vt = tl.load(vt_ptrs + start_n * stride_m, mask=cols[None, :] < N_CTX, other=0.0)
        k = tl.load(k_ptrs + start_n * stride_m, mask=cols[:, None] < N_CTX, other=0.0)
        # keys past the end are zeros, but exp2(0 - lse) need not be small: mask P there
        keep = cols[None, :] < N_CTX
        if CAUSAL:
            keep = keep & (offs_m[:, None] >= cols[None, :])
        p = tl.where(keep, tl.math.exp2(tl.dot(q, kt) * qk_scale - lse[:, None]), 0.0)
        dp = tl.dot(do, vt)
        ds = p * (dp - delta[:, None])
        dq = tl.dot(ds.to(Q.dtype.element_ty), k, dq)

    tl.store(DQ + q_at, (dq * sm_scale).to(DQ.dtype.element_ty), mask=rows)

# (BLOCK_M, BLOCK_N, num_warps, num_stages) per head dimension that the benchmark tries:
# the tutorial's, and wider blocks; all compile without spills for sm_90
CONFIGS = {64: [(128, 64, 4, 3), (128, 64, 8, 3), (128, 64, 8, 4), (64, 64, 4, 3),
                (128, 128, 8, 3)],
           128: [(128, 32, 8, 3), (128, 64, 8, 3), (128, 64, 8, 4), (64, 64, 4, 3),
                 (128, 128, 8, 3)]}


def config(head_dim: int, causal: bool, arch: str = "sm_90") -> dict:
    """Blocks and warps that compile without register spills for `arch`: on Hopper the
    fastest of benchmarks/bench_attention.py on an H200 (the probabilities reach the second
    product in registers there, which leaves room for wider blocks; head dim 64 on 8 warps,
    128 x 128: 475 / 424 TFLOP/s non-causal / causal against 427 / 387 for 128 x 64 on 4),
    elsewhere narrower."""
    if arch.startswith("sm_90"):
        return {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 3}
    return {"BLOCK_M": 128, "BLOCK_N": 64 if head_dim <= 64 else 32, "num_warps": 8,
            "num_stages": 3}


def attention(q, k, v, causal: bool, sm_scale: float | None = None, xp=np, **cfg):
    """softmax(q k^T * sm_scale [causal]) v, and the rows' log-sum-exp (base 2, scaled):
    q, k, v of shape (batch, heads, n, d), contiguous; `xp` numpy (interpreter) or cupy."""
    z, h, n, d = q.shape
    sm_scale = 1 / math.sqrt(d) if sm_scale is None else sm_scale
    out = xp.empty_like(q)
    lse = xp.empty((z * h, n), dtype=xp.float32)
    arch = "sm_90"
    if xp is not np:
        arch = f"sm_{xp.cuda.Device().compute_capability}"
    cfg = {**config(d, causal, arch), **cfg}
    kernel = attention_fwd.interpret if xp is np else attention_fwd
    stride_z, stride_h, stride_m = (s // q.itemsize for s in q.strides[:3])
    grid = (tilecc.cdiv(n, cfg["BLOCK_M"]), z * h)
    kernel[grid](q, k, v, out, lse, sm_scale, stride_z, stride_h, stride_m, h, n,
                 HEAD_DIM=d, CAUSAL=causal, **cfg)
    return out, lse


def reference(q, k, v, causal: bool, sm_scale: float | None = None):
    """Attention in float64, and the log-sum-exp in the kernel's units."""
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    n, d = q.shape[-2], q.shape[-1]
    sm_scale = 1 / math.sqrt(d) if sm_scale is None else sm_scale
    s = q @ np.swapaxes(k, -1, -2) * sm_scale
    if causal:
        s = np.where(np.tril(np.ones((n, n), dtype=bool)), s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    e = np.exp(s - m)
    total = e.sum(axis=-1, keepdims=True)
    lse = (m + np.log(total))[..., 0] / math.log(2)  # log2 of the sum of exp(s)
    return e / total @ v, lse.reshape(-1, n)


# (BLOCK_M, BLOCK_N, num_warps, num_stages) of the two gradient kernels per head dimension
# that benchmarks/bench_attention_bwd.py tries; all compile without spills for sm_90
BWD_CONFIGS = {64: {"dkdv": [(64, 128, 8, 3), (32, 128, 8, 3), (64, 64, 4, 3), (32, 64, 4, 3)],
                    "dq": [(128, 64, 8, 3), (128, 32, 8, 3), (64, 64, 4, 3)]},
               128: {"dkdv": [(32, 64, 8, 3), (64, 64, 4, 3), (64, 64, 4, 2), (16, 128, 8, 3),
                              (16, 64, 4, 3)],
                     "dq": [(128, 32, 8, 3), (128, 64, 8, 3), (64, 64, 4, 3)]}}


def backward_config(head_dim: int, causal: bool, arch: str = "sm_90") -> dict:
    """Blocks and warps of the two gradient kernels ("dkdv", "dq") and of the preprocess
    ("delta") that compile without register spills for `arch`.  The key block of dK/dV and
    the query block of dQ are the wide ones (their accumulators stay in registers), the
    streamed block narrower.  On Hopper dK/dV runs 64 x 64 blocks on one warpgroup: every
    product is then a wgmma (m64, N of 64 or more), and at head dimension 128 its two
    accumulators still fit (about 240 registers, no spills)."""
    hopper = arch.startswith("sm_90")
    if head_dim <= 64:
        dkdv, dq = ((64, 64, 4) if hopper else (32, 128, 8)), (128, 64, 8)
    else:
        dkdv, dq = ((64, 64, 4) if hopper else (32, 64, 8)), \
            ((128, 64, 8) if hopper else (128, 32, 8))
    if arch.startswith("gfx"):  # 64 KiB of LDS: Q and dO of dQ's block are staged there
        dq = (64, 32, 4) if head_dim > 64 else dq
    return {"dkdv": {"BLOCK_M": dkdv[0], "BLOCK_N": dkdv[1], "num_warps": dkdv[2],
                     "num_stages": 3},
            "dq": {"BLOCK_M": dq[0], "BLOCK_N": dq[1], "num_warps": dq[2], "num_stages": 3},
            "delta": {"BLOCK_M": 64, "num_warps": 4}}


def _strides(a) -> tuple:
    """Element strides of the three leading axes: torch tensors, NumPy / CuPy arrays."""
    if callable(getattr(a, "stride", None)):
        return tuple(a.stride()[:3])
    return tuple(s // a.itemsize for s in a.strides[:3])


def _empty_like(a):
    if isinstance(a, np.ndarray):
        return np.empty_like(a)
    return __import__(type(a).__module__.split(".")[0]).empty_like(a)  # torch or cupy


def attention_backward(q, k, v, out, lse, do, causal: bool, sm_scale: float | None = None,
                       cfg: dict | None = None):
    """dQ, dK, dV of `attention` given the gradient `do` of its output, and its `out` and
    `lse`.  q, k, v, out and do of one shape (batch, heads, n, d) and one set of strides
    (the last axis contiguous); NumPy arrays run on the interpreter, torch tensors or CuPy
    arrays on the GPU.  `cfg`: backward_config's form, for the parts it names."""
    z, h, n, d = q.shape
    strides = _strides(q)
    if any(_strides(a) != strides for a in (k, v, out, do)):
        raise ValueError("q, k, v, out and do must share their strides")
    sm_scale = 1 / math.sqrt(d) if sm_scale is None else sm_scale
    interpret = isinstance(q, np.ndarray)
    arch = "sm_90"
    if type(q).__module__.startswith("torch"):
        import torch

        arch = "sm_{}{}".format(*torch.cuda.get_device_capability(q.device))
    elif type(q).__module__.startswith("cupy"):
        import cupy

        arch = f"sm_{cupy.cuda.Device().compute_capability}"
    parts = backward_config(d, causal, arch)
    for name, part in (cfg or {}).items():
        parts[name] = {**parts[name], **part}

    def launch(kernel, blocks, part, *args, **constexprs):
        (kernel.interpret if interpret else kernel)[(tilecc.cdiv(n, blocks), z * h)](
            *args, *strides, h, n, HEAD_DIM=d, **constexprs, **part)

    delta = _empty_like(lse)
    dq, dk, dv = _empty_like(q), _empty_like(k), _empty_like(v)
    launch(attention_bwd_preprocess, parts["delta"]["BLOCK_M"], parts["delta"], out, do, delta)
    launch(attention_bwd_dkdv, parts["dkdv"]["BLOCK_N"], parts["dkdv"], q, k, v, do, dk, dv,
           lse, delta, sm_scale, CAUSAL=causal)
    launch(attention_bwd_dq, parts["dq"]["BLOCK_M"], parts["dq"], q, k, v, do, dq, lse, delta,
           sm_scale, CAUSAL=causal)
    return dq, dk, dv


def reference_backward(q, k, v, do, causal: bool, sm_scale: float | None = None):
    """dQ, dK, dV of softmax attention in float64, from the probabilities in full."""
    q, k, v, do = (a.astype(np.float64) for a in (q, k, v, do))
    n, d = q.shape[-2], q.shape[-1]
    sm_scale = 1 / math.sqrt(d) if sm_scale is None else sm_scale
    s = q @ np.swapaxes(k, -1, -2) * sm_scale
    if causal:
        s = np.where(np.tril(np.ones((n, n), dtype=bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    dv = np.swapaxes(p, -1, -2) @ do
    dp = do @ np.swapaxes(v, -1, -2)
    # softmax's Jacobian, row by row: dS = P * (dP - sum_j P dP), and sum_j P dP = rowsum(dO * O)
    ds = p * (dp - (p * dp).sum(axis=-1, keepdims=True))
    return ds @ k * sm_scale, np.swapaxes(ds, -1, -2) @ q * sm_scale, dv


_FUNCTION: list = []  # the autograd Function, made on first use


def _autograd_function():
    if _FUNCTION:
        return _FUNCTION[0]
    import torch

    def on_cpu(fn, *tensors, **kwargs):
        # CPU tensors run on the interpreter, through NumPy views of them
        results = fn(*(t.detach().numpy() for t in tensors), **kwargs)
        return tuple(torch.from_numpy(np.ascontiguousarray(r)) for r in results)

    class FusedAttention(torch.autograd.Function):
        """`attention_fwd` forward; attention_backward's three kernels backward.  CUDA
        tensors run on the GPU, CPU tensors on the interpreter."""

        @staticmethod
        def forward(ctx, q, k, v, causal, sm_scale):
            q, k, v = (t.contiguous() for t in (q, k, v))
            z, h, n, d = q.shape
            sm_scale = 1 / math.sqrt(d) if sm_scale is None else sm_scale
            if q.device.type == "cpu":
                out, lse = on_cpu(attention, q, k, v, causal=causal, sm_scale=sm_scale)
            else:
                out = torch.empty_like(q)
                lse = torch.empty((z * h, n), device=q.device, dtype=torch.float32)
                arch = "sm_{}{}".format(*torch.cuda.get_device_capability(q.device))
                cfg = config(d, causal, arch)
                attention_fwd[(tilecc.cdiv(n, cfg["BLOCK_M"]), z * h)](
                    q, k, v, out, lse, sm_scale, *_strides(q), h, n, HEAD_DIM=d,
                    CAUSAL=causal, **cfg)
            ctx.save_for_backward(q, k, v, out, lse)
            ctx.causal, ctx.sm_scale = causal, sm_scale
            return out

        @staticmethod
        def backward(ctx, do):
            q, k, v, out, lse = ctx.saved_tensors
            args = (q, k, v, out, lse, do.contiguous())
            if q.device.type == "cpu":
                dq, dk, dv = on_cpu(attention_backward, *args, causal=ctx.causal,
                                    sm_scale=ctx.sm_scale)
            else:
                dq, dk, dv = attention_backward(*args, causal=ctx.causal,
                                                sm_scale=ctx.sm_scale)
            return dq, dk, dv, None, None

    _FUNCTION.append(FusedAttention)
    return FusedAttention


def flash_attention(q, k, v, causal: bool = False, sm_scale: float | None = None):
    """softmax(q k^T * sm_scale [causal]) v of torch tensors (batch, heads, n, d),
    differentiable (backward through attention_backward).  torch is imported on the first
    call only, so that this module imports without it."""
    return _autograd_function().apply(q, k, v, causal, sm_scale)


SIGNATURE = ("*fp16:16, *fp16:16, *fp16:16, *fp16:16, *fp32:16, fp32, i32:16, i32:16, "
             "i32:16, i32, i32, 64, 128, 64, True")


def main() -> None:
    print(attention_fwd.source(SIGNATURE, num_warps=8, num_stages=3))
    rng = np.random.default_rng(0)
    z, h, n, d = 1, 2, 200, 64
    q, k, v, do = (rng.standard_normal((z, h, n, d)).astype(np.float16) for _ in range(4))
    try:
        import cupy

        xp = cupy if cupy.cuda.runtime.getDeviceCount() > 0 else np
    except Exception:
        xp = np
    to = (lambda a: xp.asarray(a)) if xp is not np else (lambda a: a)
    back = (lambda a: xp.asnumpy(a)) if xp is not np else (lambda a: a)
    for causal in (False, True):
        out, lse = attention(to(q), to(k), to(v), causal, xp=xp)
        want, want_lse = reference(q, k, v, causal)
        np.testing.assert_allclose(back(out).astype(np.float64), want, atol=2e-2, rtol=2e-2)
        np.testing.assert_allclose(back(lse), want_lse, atol=1e-2, rtol=1e-3)
        grads = attention_backward(to(q), to(k), to(v), out, lse, to(do), causal)
        for got, want in zip(grads, reference_backward(q, k, v, do, causal)):
            np.testing.assert_allclose(back(got).astype(np.float64), want,
                                       atol=1e-2 * np.abs(want).max(), rtol=1e-2)
    print(f"// attention and its gradients (causal and not) of {z} x {h} x {n} x {d} fp16 on "
          f"{'the GPU' if xp is not np else 'the interpreter'}: matches NumPy")


if __name__ == "__main__":
    main()
