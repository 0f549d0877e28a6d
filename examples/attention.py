"""Fused attention, forward pass (the kernel of Triton's fused-attention tutorial).

One program per (block of BLOCK_M queries, batch x head).  It walks the keys and values
BLOCK_N at a time: scores with `tl.dot`, an online softmax (running maximum and sum in
fp32, `exp2` with log2(e) folded into the scale), the output accumulator rescaled and fed
by a second `tl.dot` of the probabilities with V.  The N x N score matrix never reaches
memory.  Causal or not (a constexpr); any sequence length (keys past the end are masked,
queries past the end are not stored).  Also writes each row's log-sum-exp (base 2, in
the scaled units), which a backward pass needs.

    python examples/attention.py
prints the generated CUDA, then checks the kernel against NumPy (on the GPU when there
is one, else on the interpreter).
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


# (BLOCK_M, BLOCK_N, num_warps, num_stages) per head dimension that the benchmark tries:
# the tutorial's, and wider blocks; all compile without spills for sm_90
CONFIGS = {64: [(128, 64, 4, 3), (128, 64, 8, 3), (128, 64, 8, 4), (64, 64, 4, 3),
                (128, 128, 8, 3)],
           128: [(128, 32, 8, 3), (128, 64, 8, 3), (128, 64, 8, 4), (64, 64, 4, 3),
                 (128, 128, 8, 3)]}


def config(head_dim: int, causal: bool, arch: str = "sm_90") -> dict:
    """Blocks and warps that compile without register spills for `arch`: on Hopper the
    fastest of benchmarks/bench_attention.py on an H100 (the probabilities reach the second
    product in registers there, which leaves room for wider blocks), elsewhere narrower."""
    if arch.startswith("sm_90"):
        if head_dim <= 64:
            return {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4, "num_stages": 3}
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


SIGNATURE = ("*fp16:16, *fp16:16, *fp16:16, *fp16:16, *fp32:16, fp32, i32:16, i32:16, "
             "i32:16, i32, i32, 64, 128, 64, True")


def main() -> None:
    print(attention_fwd.source(SIGNATURE, num_warps=8, num_stages=3))
    rng = np.random.default_rng(0)
    z, h, n, d = 1, 2, 200, 64
    q, k, v = (rng.standard_normal((z, h, n, d)).astype(np.float16) for _ in range(3))
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
    print(f"// attention (causal and not) of {z} x {h} x {n} x {d} fp16 on "
          f"{'the GPU' if xp is not np else 'the interpreter'}: matches NumPy")


if __name__ == "__main__":
    main()
