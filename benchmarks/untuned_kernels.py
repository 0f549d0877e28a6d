"""Kernels in the styles of popular LLM kernel libraries, written for Triton and run
unchanged by tilecc (benchmarks/bench_untuned.py clones each into Triton; the tests run
them on the interpreter).  None is tuned for tilecc: they are the block configurations
their libraries choose for Triton.

Each entry of CASES names a kernel, how to build its inputs (NumPy, any shape), its
grid and launch constants, and a NumPy reference of its outputs."""

from __future__ import annotations

import tilecc
import tilecc.language as tl


# --- row norms, several rows per program (BLOCK_M rows x 128 columns) --------------------
@tilecc.jit
def l2norm_rows(x_ptr, y_ptr, n_rows, eps, D: tl.constexpr, BLOCK_M: tl.constexpr):
    row0 = tl.program_id(0) * BLOCK_M
    rows = row0 + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, D)
    mask = rows[:, None] < n_rows
    x = tl.load(x_ptr + rows[:, None] * D + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    inv = 1.0 / tl.sqrt(tl.sum(x * x, axis=1) + eps)
    y = x * inv[:, None]
    tl.store(y_ptr + rows[:, None] * D + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)


@tilecc.jit
def rmsnorm_rows(x_ptr, w_ptr, y_ptr, rstd_ptr, n_rows, eps, D: tl.constexpr,
                 BLOCK_M: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, D)
    row_ok = rows < n_rows
    offs = rows[:, None] * D + cols[None, :]
    x = tl.load(x_ptr + offs, mask=row_ok[:, None], other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols).to(tl.float32)
    rstd = tl.rsqrt(tl.sum(x * x, axis=1) / D + eps)
    tl.store(rstd_ptr + rows, rstd, mask=row_ok)
    y = x * rstd[:, None] * w[None, :]
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=row_ok[:, None])


# --- gated RMS norm: one row per program, y = rmsnorm(x) * w * silu(z) --------------------
@tilecc.jit
def gated_rmsnorm(x_ptr, z_ptr, w_ptr, y_ptr, stride_row, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    ok = cols < N
    x = tl.load(x_ptr + row * stride_row + cols, mask=ok, other=0.0).to(tl.float32)
    z = tl.load(z_ptr + row * stride_row + cols, mask=ok, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=ok, other=0.0).to(tl.float32)
    var = tl.sum(x * x, axis=0) / N
    rstd = 1.0 / tl.sqrt(var + eps)
    y = x * rstd * w * (z * tl.sigmoid(z))
    tl.store(y_ptr + row * stride_row + cols, y.to(y_ptr.dtype.element_ty), mask=ok)


# --- activations ------------------------------------------------------------------------
@tilecc.jit
def swiglu_fwd(a_ptr, b_ptr, c_ptr, stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK_SIZE)
    ok = offs < n_cols
    a = tl.load(a_ptr + row * stride + offs, mask=ok, other=0).to(tl.float32)
    b = tl.load(b_ptr + row * stride + offs, mask=ok, other=0)
    c = (a * tl.sigmoid(a)).to(b.dtype) * b
    tl.store(c_ptr + row * stride + offs, c, mask=ok)


@tilecc.jit
def _tanh(x):
    return 2 * tl.sigmoid(2 * x) - 1


@tilecc.jit
def geglu_tanh_fwd(a_ptr, b_ptr, c_ptr, stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK_SIZE)
    ok = offs < n_cols
    a = tl.load(a_ptr + row * stride + offs, mask=ok, other=0).to(tl.float32)
    b = tl.load(b_ptr + row * stride + offs, mask=ok, other=0)
    sqrt_2_over_pi = 0.7978845608028654
    inner = sqrt_2_over_pi * (a + 0.044715 * a * a * a)
    gelu = 0.5 * a * (1 + _tanh(inner))
    tl.store(c_ptr + row * stride + offs, gelu.to(b.dtype) * b, mask=ok)


# --- scans ------------------------------------------------------------------------------
@tilecc.jit
def sparsemax_rows(x_ptr, sorted_ptr, y_ptr, N, BLOCK_N: tl.constexpr):
    """Sparsemax of each row, given the row sorted in decreasing order."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    ok = cols < N
    z = tl.load(sorted_ptr + row * N + cols, mask=ok, other=0.0).to(tl.float32)
    csum = tl.cumsum(z, axis=0)
    k = (cols + 1).to(tl.float32)
    support = ((1 + k * z) > csum) & ok
    k_max = tl.sum(support.to(tl.int32), axis=0)
    tau_sum = tl.sum(tl.where(support, z, 0.0), axis=0)
    tau = (tau_sum - 1) / k_max
    x = tl.load(x_ptr + row * N + cols, mask=ok, other=0.0).to(tl.float32)
    y = tl.maximum(x - tau, 0.0)
    tl.store(y_ptr + row * N + cols, y.to(y_ptr.dtype.element_ty), mask=ok)


@tilecc.jit
def chunk_local_cumsum(s_ptr, o_ptr, T, H: tl.constexpr, BT: tl.constexpr):
    """Cumulative sum over time within chunks of BT steps, for each head (s: [B, T, H])."""
    i_t, i_b = tl.program_id(0), tl.program_id(1)
    t = i_t * BT + tl.arange(0, BT)
    h = tl.arange(0, H)
    offs = (i_b * T + t[:, None]) * H + h[None, :]
    ok = t[:, None] < T
    s = tl.load(s_ptr + offs, mask=ok, other=0.0).to(tl.float32)
    o = tl.cumsum(s, axis=0)
    tl.store(o_ptr + offs, o.to(o_ptr.dtype.element_ty), mask=ok)


# --- cross entropy over a large vocabulary, chunked; writes the gradient in place --------
@tilecc.jit
def cross_entropy_fwd_bwd(logits_ptr, stride, target_ptr, loss_ptr, n_cols, inv_n_rows,
                          BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = logits_ptr + row * stride
    target = tl.load(target_ptr + row)
    m = float("-inf")
    d = 0.0
    for start in range(0, n_cols, BLOCK_SIZE):
        offs = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(base + offs, mask=offs < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        d = d * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    lse = m + tl.log(d)
    x_t = tl.load(base + target).to(tl.float32)
    tl.store(loss_ptr + row, lse - x_t)
    for start in range(0, n_cols, BLOCK_SIZE):
        offs = start + tl.arange(0, BLOCK_SIZE)
        ok = offs < n_cols
        x = tl.load(base + offs, mask=ok, other=float("-inf")).to(tl.float32)
        g = tl.exp(x - lse) - tl.where(offs == target, 1.0, 0.0)
        tl.store(base + offs, (g * inv_n_rows).to(logits_ptr.dtype.element_ty), mask=ok)


# --- rotary embedding: one token per program, every head ---------------------------------
@tilecc.jit
def rope_fwd(q_ptr, cos_ptr, sin_ptr, seq_len, n_heads, H_PAD: tl.constexpr,
             HALF: tl.constexpr):
    tok = tl.program_id(0)
    pos = tok % seq_len
    heads = tl.arange(0, H_PAD)
    d = tl.arange(0, HALF)
    cos = tl.load(cos_ptr + pos * HALF + d)
    sin = tl.load(sin_ptr + pos * HALF + d)
    base = q_ptr + tok * n_heads * 2 * HALF + heads[:, None] * 2 * HALF + d[None, :]
    ok = heads[:, None] < n_heads
    x1 = tl.load(base, mask=ok, other=0.0)
    x2 = tl.load(base + HALF, mask=ok, other=0.0)
    tl.store(base, x1 * cos[None, :] - x2 * sin[None, :], mask=ok)
    tl.store(base + HALF, x2 * cos[None, :] + x1 * sin[None, :], mask=ok)


# --- linear attention with a second-order Taylor feature map (small-K dots) --------------
@tilecc.jit
def _taylor(s):
    return 1 + s + 0.5 * s * s


@tilecc.jit
def _score_block(q, k_ptr, i_s, T, DK: tl.constexpr, BS: tl.constexpr):
    s_idx = i_s + tl.arange(0, BS)
    k = tl.load(k_ptr + s_idx[:, None] * DK + tl.arange(0, DK)[None, :],
                mask=s_idx[:, None] < T, other=0.0)
    return _taylor(tl.dot(q, tl.trans(k), allow_tf32=False))


@tilecc.jit
def taylor_linear_attn(q_ptr, k_ptr, v_ptr, o_ptr, z_ptr, T, scale, DK: tl.constexpr,
                       DV: tl.constexpr, BT: tl.constexpr, BS: tl.constexpr):
    """Causal attention with exp(q.k) replaced by 1 + s + s^2/2 (head dim DK = 16), one
    block of BT queries per program, over key blocks of BS (q, k: [BH, T, DK])."""
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    q_ptr += i_bh * T * DK
    k_ptr += i_bh * T * DK
    v_ptr += i_bh * T * DV
    t = i_t * BT + tl.arange(0, BT)
    q = tl.load(q_ptr + t[:, None] * DK + tl.arange(0, DK)[None, :], mask=t[:, None] < T,
                other=0.0) * scale
    o = tl.zeros([BT, DV], dtype=tl.float32)
    z = tl.zeros([BT], dtype=tl.float32)
    for i_s in range(0, (i_t + 1) * BT, BS):
        s_idx = i_s + tl.arange(0, BS)
        a = _score_block(q, k_ptr, i_s, T, DK, BS)
        a = tl.where((t[:, None] >= s_idx[None, :]) & (s_idx[None, :] < T), a, 0.0)
        v = tl.load(v_ptr + s_idx[:, None] * DV + tl.arange(0, DV)[None, :],
                    mask=s_idx[:, None] < T, other=0.0)
        o += tl.dot(a, v, allow_tf32=False)
        z += tl.sum(a, axis=1)
    out = o / z[:, None]
    tl.store(o_ptr + i_bh * T * DV + t[:, None] * DV + tl.arange(0, DV)[None, :], out,
             mask=t[:, None] < T)
    tl.store(z_ptr + i_bh * T + t, z, mask=t < T)


# --- gated linear recurrence, one step per token -----------------------------------------
@tilecc.jit
def gated_rnn_fwd(x_ptr, g_ptr, o_ptr, T, D, BD: tl.constexpr):
    """h_t = exp(g_t) * h_{t-1} + (1 - exp(g_t)) * x_t per channel (x, g, o: [B, T, D])."""
    i_d, i_b = tl.program_id(0), tl.program_id(1)
    d = i_d * BD + tl.arange(0, BD)
    ok = d < D
    h = tl.zeros([BD], dtype=tl.float32)
    p = i_b * T * D + d
    for _ in range(0, T):
        x = tl.load(x_ptr + p, mask=ok, other=0.0).to(tl.float32)
        g = tl.exp(tl.load(g_ptr + p, mask=ok, other=0.0).to(tl.float32))
        h = g * h + (1 - g) * x
        tl.store(o_ptr + p, h.to(o_ptr.dtype.element_ty), mask=ok)
        p += D


# --- group norm over 64 groups: one (sample, group) per program, chunked ----------------
@tilecc.jit
def group_norm_fwd(x_ptr, w_ptr, b_ptr, y_ptr, C, HW, eps, GROUPS: tl.constexpr,
                   BLOCK: tl.constexpr):
    n, g = tl.program_id(0), tl.program_id(1)
    cpg = C // GROUPS
    size = cpg * HW
    base = n * C * HW + g * size
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    acc2 = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, size, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + base + offs, mask=offs < size, other=0.0).to(tl.float32)
        acc += x
        acc2 += x * x
    mean = tl.sum(acc, axis=0) / size
    var = tl.sum(acc2, axis=0) / size - mean * mean
    rstd = tl.rsqrt(var + eps)
    for start in range(0, size, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        ok = offs < size
        ch = g * cpg + offs // HW
        w = tl.load(w_ptr + ch, mask=ok, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + ch, mask=ok, other=0.0).to(tl.float32)
        x = tl.load(x_ptr + base + offs, mask=ok, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(y_ptr + base + offs, y.to(y_ptr.dtype.element_ty), mask=ok)


# --- the cases: inputs, launch, NumPy reference -------------------------------------------
# `mk` makes arrays for one framework: mk.randn(shape, dtype), mk.empty(shape, dtype),
# mk.randint(high, shape) and mk.sort_desc(x); `dt` names the activation dtype (bfloat16 on
# the GPU, float32 in the NumPy tests).  `big` picks the benchmark shapes over tiny ones.
class Case:
    def __init__(self, name, kernel, inputs, launch, outputs, reference, tol=(2e-2, 2e-2),
                 moved=None):
        self.name, self.kernel, self.inputs, self.launch = name, kernel, inputs, launch
        self.outputs, self.reference, self.tol = outputs, reference, tol
        self.moved = moved  # bytes a call must move, for GB/s (None: not memory bound)

    def tolerance(self, output: str) -> tuple[float, float]:
        """(rtol, atol) of one output: `tol`, or its entry where `tol` is a dict by name."""
        return self.tol[output] if isinstance(self.tol, dict) else self.tol


def _np():
    import numpy as np
    return np


def _l2norm_in(mk, dt, big):
    m = 65536 if big else 37
    return dict(x=mk.randn((m, 128), dt), y=mk.empty((m, 128), dt))


def _l2norm_launch(k, a, BLOCK_M=16, num_warps=4):
    m = a["x"].shape[0]
    k[(tilecc.cdiv(m, BLOCK_M),)](a["x"], a["y"], m, 1e-6, D=128, BLOCK_M=BLOCK_M,
                              num_warps=num_warps)


def _l2norm_ref(a):
    x = a["x"].astype("float64")
    return dict(y=x / _np().sqrt((x * x).sum(1, keepdims=True) + 1e-6))


def _rms_in(mk, dt, big):
    m = 65536 if big else 37
    return dict(x=mk.randn((m, 128), dt), w=mk.randn((128,), dt), y=mk.empty((m, 128), dt),
                rstd=mk.empty((m,), "float32"))


def _rms_launch(k, a, BLOCK_M=16, num_warps=4):
    m = a["x"].shape[0]
    k[(tilecc.cdiv(m, BLOCK_M),)](a["x"], a["w"], a["y"], a["rstd"], m, 1e-6, D=128,
                              BLOCK_M=BLOCK_M, num_warps=num_warps)


def _rms_ref(a):
    x = a["x"].astype("float64")
    rstd = 1 / _np().sqrt((x * x).mean(1) + 1e-6)
    return dict(y=x * rstd[:, None] * a["w"].astype("float64"), rstd=rstd)


def _gated_in(mk, dt, big):
    m, n = (8192, 4096) if big else (5, 100)
    return dict(x=mk.randn((m, n), dt), z=mk.randn((m, n), dt), w=mk.randn((n,), dt),
                y=mk.empty((m, n), dt))


def _gated_launch(k, a, num_warps=8):
    m, n = a["x"].shape
    k[(m,)](a["x"], a["z"], a["w"], a["y"], n, n, 1e-6, BLOCK_N=tilecc.next_power_of_2(n),
            num_warps=num_warps)


def _gated_ref(a):
    np = _np()
    x, z = a["x"].astype("float64"), a["z"].astype("float64")
    rstd = 1 / np.sqrt((x * x).mean(1, keepdims=True) + 1e-6)
    return dict(y=x * rstd * a["w"].astype("float64") * z / (1 + np.exp(-z)))


def _glu_in(mk, dt, big):
    m, n = (8192, 11008) if big else (3, 200)
    return dict(a=mk.randn((m, n), dt), b=mk.randn((m, n), dt), c=mk.empty((m, n), dt))


def _glu_launch(k, a, num_warps=32):
    m, n = a["a"].shape
    k[(m,)](a["a"], a["b"], a["c"], n, n, BLOCK_SIZE=tilecc.next_power_of_2(n),
            num_warps=num_warps if n > 4096 else 4)


def _swiglu_ref(a):
    x = a["a"].astype("float64")
    return dict(c=x / (1 + _np().exp(-x)) * a["b"].astype("float64"))


def _geglu_ref(a):
    np = _np()
    x = a["a"].astype("float64")
    g = 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))
    return dict(c=g * a["b"].astype("float64"))


def _sparsemax_in(mk, dt, big):
    m, n = (16384, 1000) if big else (4, 50)
    x = mk.randn((m, n), "float32")
    return dict(x=x, sorted=mk.sort_desc(x), y=mk.empty((m, n), "float32"))


def _sparsemax_launch(k, a, num_warps=4):
    m, n = a["x"].shape
    k[(m,)](a["x"], a["sorted"], a["y"], n, BLOCK_N=tilecc.next_power_of_2(n),
            num_warps=num_warps)


def _sparsemax_ref(a):
    np = _np()
    z = -np.sort(-a["sorted"].astype("float64"), axis=1)
    k = np.arange(1, z.shape[1] + 1)
    cs = np.cumsum(z, axis=1)
    support = 1 + k * z > cs
    kmax = support.sum(1, keepdims=True)
    tau = (np.where(support, z, 0).sum(1, keepdims=True) - 1) / kmax
    return dict(y=np.maximum(a["x"].astype("float64") - tau, 0))


def _cumsum_in(mk, dt, big):
    b, t = (8, 16384) if big else (2, 70)
    return dict(s=mk.randn((b, t, 16), "float32"), o=mk.empty((b, t, 16), "float32"))


def _cumsum_launch(k, a, BT=64, num_warps=4):
    b, t, h = a["s"].shape
    k[(tilecc.cdiv(t, BT), b)](a["s"], a["o"], t, H=h, BT=BT, num_warps=num_warps)


def _cumsum_ref(a, BT=64):
    np = _np()
    s = a["s"].astype("float64")
    b, t, h = s.shape
    pad = -t % BT
    s = np.concatenate([s, np.zeros((b, pad, h))], axis=1).reshape(b, -1, BT, h)
    return dict(o=np.cumsum(s, axis=2).reshape(b, -1, h)[:, :t])


def _ce_in(mk, dt, big):
    m, v = (512, 128256) if big else (3, 300)
    return dict(logits=mk.randn((m, v), dt), target=mk.randint(v, (m,)),
                loss=mk.empty((m,), "float32"))


def _ce_launch(k, a, BLOCK_SIZE=32768, num_warps=32):
    m, v = a["logits"].shape
    block = min(BLOCK_SIZE, tilecc.next_power_of_2(v))
    k[(m,)](a["logits"], v, a["target"], a["loss"], v, 1.0 / m, BLOCK_SIZE=block,
            num_warps=num_warps if block >= 4096 else 4)


def _ce_ref(a):
    np = _np()
    x = a["logits"].astype("float64")
    m = x.max(1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(x - m).sum(1))
    rows = np.arange(x.shape[0])
    g = np.exp(x - lse[:, None])
    g[rows, a["target"]] -= 1
    return dict(loss=lse - x[rows, a["target"]], logits=g / x.shape[0])


def _rope_in(mk, dt, big):
    b, s, h = (4, 4096, 32) if big else (2, 5, 3)
    return dict(q=mk.randn((b * s, h, 128), dt), cos=mk.randn((s, 64), dt),
                sin=mk.randn((s, 64), dt))


def _rope_launch(k, a, num_warps=4):
    tokens, h, _ = a["q"].shape
    k[(tokens,)](a["q"], a["cos"], a["sin"], a["cos"].shape[0], h,
                 H_PAD=tilecc.next_power_of_2(h), HALF=64, num_warps=num_warps)


def _rope_ref(a):
    np = _np()
    q = a["q"].astype("float64")
    s = a["cos"].shape[0]
    reps = q.shape[0] // s
    cos = np.tile(a["cos"].astype("float64"), (reps, 1))[:, None, :]
    sin = np.tile(a["sin"].astype("float64"), (reps, 1))[:, None, :]
    x1, x2 = q[..., :64], q[..., 64:]
    return dict(q=np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1))


def _taylor_in(mk, dt, big):
    bh, t = (64, 2048) if big else (2, 40)
    return dict(q=mk.randn((bh, t, 16), "float32"), k=mk.randn((bh, t, 16), "float32"),
                v=mk.randn((bh, t, 64), "float32"), o=mk.empty((bh, t, 64), "float32"),
                z=mk.empty((bh, t), "float32"))


def _taylor_launch(k, a, BT=64, BS=32, num_warps=4):
    bh, t, _ = a["q"].shape
    k[(tilecc.cdiv(t, BT), bh)](a["q"], a["k"], a["v"], a["o"], a["z"], t, 0.25, DK=16, DV=64,
                            BT=BT, BS=BS, num_warps=num_warps)


def _taylor_ref(a):
    np = _np()
    q, k, v = (a[n].astype("float64") for n in "qkv")
    s = np.einsum("btd,bsd->bts", q * 0.25, k)
    s = np.tril(1 + s + 0.5 * s * s)
    z = s.sum(-1)
    return dict(o=np.einsum("bts,bsd->btd", s, v) / z[..., None], z=z)


def _rnn_in(mk, dt, big):
    b, t, d = (8, 2048, 2048) if big else (2, 9, 40)
    return dict(x=mk.randn((b, t, d), dt), g=mk.logsigmoid((b, t, d), dt),
                o=mk.empty((b, t, d), dt))


def _rnn_launch(k, a, BD=128, num_warps=4):
    b, t, d = a["x"].shape
    k[(tilecc.cdiv(d, BD), b)](a["x"], a["g"], a["o"], t, d, BD=BD, num_warps=num_warps)


def _rnn_ref(a):
    np = _np()
    x, g = a["x"].astype("float64"), np.exp(a["g"].astype("float64"))
    h = np.zeros_like(x[:, 0])
    out = np.empty_like(x)
    for t in range(x.shape[1]):
        h = g[:, t] * h + (1 - g[:, t]) * x[:, t]
        out[:, t] = h
    return dict(o=out)


def _gn_in(mk, dt, big):
    n, c, hw = (16, 512, 4096) if big else (2, 128, 9)
    return dict(x=mk.randn((n, c, hw), dt), w=mk.randn((c,), dt), b=mk.randn((c,), dt),
                y=mk.empty((n, c, hw), dt))


def _gn_launch(k, a, BLOCK=4096, num_warps=8):
    n, c, hw = a["x"].shape
    block = min(BLOCK, tilecc.next_power_of_2(c // 64 * hw))
    k[(n, 64)](a["x"], a["w"], a["b"], a["y"], c, hw, 1e-5, GROUPS=64, BLOCK=block,
               num_warps=num_warps)


def _gn_ref(a):
    np = _np()
    x = a["x"].astype("float64")
    n, c, hw = x.shape
    xg = x.reshape(n, 64, -1)
    mean, var = xg.mean(-1, keepdims=True), xg.var(-1, keepdims=True)
    y = ((xg - mean) / np.sqrt(var + 1e-5)).reshape(n, c, hw)
    return dict(y=y * a["w"].astype("float64")[:, None] + a["b"].astype("float64")[:, None])


_ROW = 2 * 65536 * 128  # elements read and written by the 65536 x 128 row norms

CASES = [
    Case("l2norm 16x128 rows", l2norm_rows, _l2norm_in, _l2norm_launch, ("y",), _l2norm_ref,
         moved=lambda e: _ROW * e),
    Case("rmsnorm 16x128 rows", rmsnorm_rows, _rms_in, _rms_launch, ("y", "rstd"), _rms_ref,
         moved=lambda e: _ROW * e),
    Case("gated rmsnorm 4096", gated_rmsnorm, _gated_in, _gated_launch, ("y",), _gated_ref,
         moved=lambda e: 3 * 8192 * 4096 * e),
    Case("swiglu 11008", swiglu_fwd, _glu_in, _glu_launch, ("c",), _swiglu_ref,
         moved=lambda e: 3 * 8192 * 11008 * e),
    Case("geglu tanh 11008", geglu_tanh_fwd, _glu_in, _glu_launch, ("c",), _geglu_ref,
         moved=lambda e: 3 * 8192 * 11008 * e),
    Case("sparsemax cumsum 1000", sparsemax_rows, _sparsemax_in, _sparsemax_launch, ("y",),
         _sparsemax_ref, tol=(1e-4, 1e-5), moved=lambda e: 3 * 16384 * 1000 * 4),
    Case("chunk cumsum BT=64", chunk_local_cumsum, _cumsum_in, _cumsum_launch, ("o",),
         _cumsum_ref, tol=(1e-4, 1e-4), moved=lambda e: 2 * 8 * 16384 * 16 * 4),
    Case("cross entropy 128k", cross_entropy_fwd_bwd, _ce_in, _ce_launch, ("loss", "logits"),
         _ce_ref, tol=(2e-2, 1e-6), moved=lambda e: 3 * 512 * 128256 * e),
    Case("rope 32 heads", rope_fwd, _rope_in, _rope_launch, ("q",), _rope_ref,
         moved=lambda e: 2 * 4 * 4096 * 32 * 128 * e),
    Case("taylor linear attn", taylor_linear_attn, _taylor_in, _taylor_launch, ("o", "z"),
         _taylor_ref, tol=(1e-3, 1e-3)),
    Case("gated rnn steps", gated_rnn_fwd, _rnn_in, _rnn_launch, ("o",), _rnn_ref,
         moved=lambda e: 3 * 8 * 2048 * 2048 * e),
    Case("group norm 64 groups", group_norm_fwd, _gn_in, _gn_launch, ("y",), _gn_ref,
         moved=lambda e: 3 * 16 * 512 * 4096 * e),
]
