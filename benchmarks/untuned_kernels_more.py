"""A second batch of kernels in the styles of LLM kernel libraries, written for Triton and
run unchanged by tilecc, as `untuned_kernels.py` (whose `Case` they use): backward passes
that walk runs of rows, in-place updates, quantization with libdevice rounding, looped
softmaxes and losses over a vocabulary, gathers through index tensors (embeddings, paged
key-value caches, a mixture of experts' tokens sorted by expert), a router's top-2, a
product of 4-bit packed weights, a recurrence over a 2-D state, a linear recurrence by
`tl.associative_scan`, a transpose by tiles, and chunked linear attention (the state at
each chunk's start, then the chunks' outputs).  Block configurations are those the
libraries pick for Triton."""

from __future__ import annotations

import tilecc
import tilecc.language as tl
from untuned_kernels import Case, _np


# --- RMS norm backward: each program walks a run of rows, its share of dW in registers ---
@tilecc.jit
def rmsnorm_bwd(dy_ptr, x_ptr, w_ptr, rstd_ptr, dx_ptr, dw_ptr, stride, n_rows, n_cols,
                rows_per_program, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    row_start = pid * rows_per_program
    row_end = tl.minimum(row_start + rows_per_program, n_rows)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    dw = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for row in range(row_start, row_end):
        dy = tl.load(dy_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        rstd = tl.load(rstd_ptr + row)
        m = dy * w
        dx = rstd * m - rstd * rstd * rstd * (tl.sum(m * x, axis=0) / n_cols) * x
        dw += dy * (x * rstd)
        tl.store(dx_ptr + row * stride + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask)
    tl.store(dw_ptr + pid * n_cols + cols, dw, mask=mask)


# --- SwiGLU backward, in place: a <- da, b <- db -------------------------------------------
@tilecc.jit
def swiglu_bwd(dc_ptr, a_ptr, b_ptr, stride, n_cols, BLOCK_SIZE: tl.constexpr):
    program_id = tl.program_id(0).to(tl.int64)
    dc_ptr += program_id * stride
    a_ptr += program_id * stride
    b_ptr += program_id * stride
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    dc_row = tl.load(dc_ptr + col_offsets, mask=mask, other=0)
    a_row = tl.load(a_ptr + col_offsets, mask=mask, other=0).to(tl.float32)
    b_row = tl.load(b_ptr + col_offsets, mask=mask, other=0)
    sig_a = tl.sigmoid(a_row)
    silu_a = a_row * sig_a
    db_row = dc_row * silu_a
    da_row = dc_row * (silu_a * (1 - sig_a) + sig_a) * b_row
    tl.store(a_ptr + col_offsets, da_row, mask=mask)
    tl.store(b_ptr + col_offsets, db_row, mask=mask)


# --- residual add then RMS norm: the sum written back over the residual ---------------------
@tilecc.jit
def fused_add_rmsnorm(x_ptr, residual_ptr, w_ptr, y_ptr, stride, N, eps,
                      BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(residual_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    x += r
    tl.store(residual_ptr + row * stride + cols, x.to(residual_ptr.dtype.element_ty), mask=mask)
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / N + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * stride + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


# --- per-token int8 quantization: scale by the row's largest magnitude, round to nearest ---
@tilecc.jit
def per_token_quant_int8(x_ptr, xq_ptr, scale_ptr, stride_x, stride_xq, N,
                         BLOCK: tl.constexpr):
    row_id = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row_id * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    absmax = tl.maximum(tl.max(tl.abs(x)), 1e-10)
    scale_x = absmax / 127
    x_q = x * (127 / absmax)
    x_q = tl.extra.cuda.libdevice.round(x_q).to(tl.int8)
    tl.store(xq_ptr + row_id * stride_xq + cols, x_q, mask=mask)
    tl.store(scale_ptr + row_id, scale_x)


# --- softmax of long rows: an online pass per lane, then a pass that writes --------------
@tilecc.jit
def softmax_looped(x_ptr, y_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride
    m = tl.full((BLOCK,), float("-inf"), tl.float32)  # each lane's running maximum and sum
    s = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-1e30).to(tl.float32)
        m_new = tl.maximum(m, x)
        s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
        m = m_new
    row_max = tl.max(m, 0)
    total = tl.sum(s * tl.exp(m - row_max), 0)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        ok = cols < n_cols
        x = tl.load(x_row + cols, mask=ok, other=-1e30).to(tl.float32)
        y = tl.exp(x - row_max) / total
        tl.store(y_ptr + row * stride + cols, y.to(y_ptr.dtype.element_ty), mask=ok)


# --- KL divergence per row (the target as probabilities), chunked over the vocabulary ----
@tilecc.jit
def kldiv_rows(y_pred_ptr, y_true_ptr, loss_ptr, stride, n_cols, eps,
               BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    y_pred_ptr += pid * stride
    y_true_ptr += pid * stride
    base_offsets = tl.arange(0, BLOCK_SIZE)
    loss_sum = 0.0
    for i in range(0, n_cols, BLOCK_SIZE):
        offsets = i + base_offsets
        mask = offsets < n_cols
        y = tl.load(y_pred_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        y_true = tl.load(y_true_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        loss = y_true * (tl.log(tl.maximum(y_true, eps)) - y)
        loss_sum += tl.sum(loss)
    tl.store(loss_ptr + pid, loss_sum)


# --- embedding lookup: rows gathered through the token ids --------------------------------
@tilecc.jit
def embedding_fwd(ids_ptr, w_ptr, out_ptr, n_tokens, D, BLOCK_M: tl.constexpr,
                  BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_m = offs_m < n_tokens
    ids = tl.load(ids_ptr + offs_m, mask=mask_m, other=0)
    mask = mask_m[:, None] & (offs_n[None, :] < D)
    rows = tl.load(w_ptr + ids[:, None] * D + offs_n[None, :], mask=mask, other=0.0)
    tl.store(out_ptr + offs_m[:, None] * D + offs_n[None, :], rows, mask=mask)


# --- a router's top 2 of E experts: softmax, two argmaxes, weights renormalized ------------
@tilecc.jit
def topk2_softmax(logits_ptr, weights_ptr, ids_ptr, n_tokens, E: tl.constexpr,
                  BLOCK_T: tl.constexpr):
    offs_t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_e = tl.arange(0, E)
    tok_ok = offs_t < n_tokens
    x = tl.load(logits_ptr + offs_t[:, None] * E + offs_e[None, :], mask=tok_ok[:, None],
                other=0.0).to(tl.float32)
    x = x - tl.max(x, 1)[:, None]
    p = tl.exp(x)
    p = p / tl.sum(p, 1)[:, None]
    i1 = tl.argmax(p, 1)
    w1 = tl.max(p, 1)
    p2 = tl.where(offs_e[None, :] == i1[:, None], -1.0, p)
    i2 = tl.argmax(p2, 1)
    w2 = tl.max(p2, 1)
    norm = w1 + w2
    tl.store(weights_ptr + offs_t * 2, w1 / norm, mask=tok_ok)
    tl.store(weights_ptr + offs_t * 2 + 1, w2 / norm, mask=tok_ok)
    tl.store(ids_ptr + offs_t * 2, i1, mask=tok_ok)
    tl.store(ids_ptr + offs_t * 2 + 1, i2, mask=tok_ok)


# --- decode attention over a paged key-value cache: one query per (sequence, head) --------
@tilecc.jit
def paged_decode(q_ptr, k_cache, v_cache, block_table, seq_lens, out_ptr, scale, max_blocks,
                 H: tl.constexpr, D: tl.constexpr, PAGE: tl.constexpr):
    """The cache is [pages, PAGE, H, D]; `block_table[seq, b]` is the page holding the
    sequence's tokens [b PAGE, (b + 1) PAGE)."""
    seq = tl.program_id(0)
    head = tl.program_id(1)
    offs_d = tl.arange(0, D)
    offs_p = tl.arange(0, PAGE)
    q = tl.load(q_ptr + (seq * H + head) * D + offs_d).to(tl.float32)
    seq_len = tl.load(seq_lens + seq)
    e_max = -float("inf")
    e_sum = 0.0
    acc = tl.zeros([D], dtype=tl.float32)
    for b in range(0, tl.cdiv(seq_len, PAGE)):
        page = tl.load(block_table + seq * max_blocks + b)
        toks = b * PAGE + offs_p
        kv = ((page * PAGE + offs_p[:, None]) * H + head) * D + offs_d[None, :]
        k = tl.load(k_cache + kv).to(tl.float32)
        s = tl.sum(k * q[None, :], 1) * scale
        s = tl.where(toks < seq_len, s, float("-inf"))
        n_max = tl.maximum(e_max, tl.max(s, 0))
        alpha = tl.exp(e_max - n_max)
        p = tl.exp(s - n_max)
        e_sum = e_sum * alpha + tl.sum(p, 0)
        v = tl.load(v_cache + kv).to(tl.float32)
        acc = acc * alpha + tl.sum(p[:, None] * v, 0)
        e_max = n_max
    tl.store(out_ptr + (seq * H + head) * D + offs_d, (acc / e_sum).to(out_ptr.dtype.element_ty))


# --- a product with 4-bit weights, 8 to an int32 along K, per-group scales and zeros -----
@tilecc.jit
def int4_matmul(a_ptr, b_ptr, scales_ptr, zeros_ptr, c_ptr, M, N, K, stride_am, stride_bk,
                stride_cm, groupsize, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + (offs_k[:, None] // 8) * stride_bk + offs_n[None, :]
    shifter = (offs_k % 8) * 4
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_m[:, None] < M, other=0.0)
        b = tl.load(b_ptrs)
        g = (k * BLOCK_K) // groupsize
        scales = tl.load(scales_ptr + g * N + offs_n)
        zeros = tl.load(zeros_ptr + g * N + offs_n)
        b = (b >> shifter[:, None]) & 0xF
        b = (b - zeros[None, :]) * scales[None, :]
        acc += tl.dot(a, b.to(a.dtype))
        a_ptrs += BLOCK_K
        b_ptrs += (BLOCK_K // 8) * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


# --- gated linear attention, recurrent form: a [BV, K] state per program, a step a token --
@tilecc.jit
def fused_recurrent_gla(q, k, v, g, o, T, scale, K: tl.constexpr, V: tl.constexpr,
                        BV: tl.constexpr):
    i_v, i_bh = tl.program_id(0), tl.program_id(1)
    p_q = q + i_bh * T * K + tl.arange(0, K)
    p_k = k + i_bh * T * K + tl.arange(0, K)
    p_g = g + i_bh * T * K + tl.arange(0, K)
    p_v = v + i_bh * T * V + i_v * BV + tl.arange(0, BV)
    p_o = o + i_bh * T * V + i_v * BV + tl.arange(0, BV)
    h = tl.zeros([BV, K], dtype=tl.float32)
    for _ in range(0, T):
        b_q = tl.load(p_q).to(tl.float32) * scale
        b_k = tl.load(p_k).to(tl.float32)
        b_v = tl.load(p_v).to(tl.float32)
        b_g = tl.load(p_g).to(tl.float32)
        h = h * tl.exp(b_g)[None, :] + b_v[:, None] * b_k[None, :]
        b_o = tl.sum(h * b_q[None, :], axis=1)
        tl.store(p_o, b_o.to(p_o.dtype.element_ty))
        p_q += K
        p_k += K
        p_g += K
        p_v += V
        p_o += V


# --- scaled causal softmax of attention scores, one query row per program ------------------
@tilecc.jit
def causal_softmax(x_ptr, y_ptr, n_cols, scale, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    query = row % n_cols  # rows are (batch x head, query), each n_cols keys
    cols = tl.arange(0, BLOCK)
    ok = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=ok, other=-float("inf")).to(tl.float32)
    x = tl.where(cols <= query, x * scale, -float("inf"))
    x = x - tl.max(x, 0)
    e = tl.exp(x)
    y = e / tl.sum(e, 0)
    tl.store(y_ptr + row * n_cols + cols, y.to(y_ptr.dtype.element_ty), mask=ok)


# --- a mixture of experts' product: each block of rows is one expert's tokens, gathered ----
@tilecc.jit
def fused_moe(a_ptr, b_ptr, c_ptr, weights_ptr, sorted_ids_ptr, expert_ids_ptr,
              padded_ptr, N, K, EM, num_valid, stride_am, stride_be, stride_bk, stride_cm,
              top_k: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
              BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """`sorted_ids` lists the (token, choice) slots expert by expert, each expert's run
    padded to BLOCK_M with `num_valid` (no slot); `expert_ids` names each block's expert.
    Row `slot` of C is row `slot // top_k` of A times its expert's B, times its weight."""
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(EM, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_pid_n
    first_m = pid // group * GROUP_M
    group_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % group_m
    pid_n = (pid % group) // group_m
    if pid_m * BLOCK_M >= tl.load(padded_ptr):
        return
    slots = tl.load(sorted_ids_ptr + pid_m * BLOCK_M + tl.arange(0, BLOCK_M))
    live = slots < num_valid
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + slots[:, None] // top_k * stride_am + offs_k[None, :]
    expert = tl.load(expert_ids_ptr + pid_m)
    b_ptrs = b_ptr + expert * stride_be + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=live[:, None] & (offs_k[None, :] < left), other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < left, other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    w = tl.load(weights_ptr + slots, mask=live, other=0)
    acc = acc * w[:, None]
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + slots[:, None] * stride_cm + offs_cn[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=live[:, None] & (offs_cn[None, :] < N))


# --- a linear recurrence h_t = a_t h_{t-1} + b_t over chunks of time, by a scan of pairs --
@tilecc.jit
def _affine_combine(a1, b1, a2, b2):
    return a1 * a2, b1 * a2 + b2


@tilecc.jit
def linear_scan(a_ptr, b_ptr, h_ptr, T, D, BT: tl.constexpr, BD: tl.constexpr):
    """Within each chunk of BT steps, from a zero state, with a_t = exp of the log decays
    given (log_a, b, h: [B, T, D])."""
    i_t, i_d, i_b = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    t = i_t * BT + tl.arange(0, BT)
    d = i_d * BD + tl.arange(0, BD)
    offs = (i_b * T + t[:, None]) * D + d[None, :]
    ok = (t[:, None] < T) & (d[None, :] < D)
    a = tl.exp(tl.load(a_ptr + offs, mask=ok, other=0.0).to(tl.float32))  # (log decays)
    b = tl.load(b_ptr + offs, mask=ok, other=0.0).to(tl.float32)
    _, h = tl.associative_scan((a, b), 0, _affine_combine)
    tl.store(h_ptr + offs, h.to(h_ptr.dtype.element_ty), mask=ok)


# --- rotary embedding over interleaved pairs (x[2i], x[2i+1]), one token's heads a program --
@tilecc.jit
def rope_interleaved(x_ptr, cos_ptr, sin_ptr, seq_len, n_heads, H_PAD: tl.constexpr,
                     HALF: tl.constexpr):
    tok = tl.program_id(0)
    pos = tok % seq_len
    heads = tl.arange(0, H_PAD)
    i = tl.arange(0, HALF)
    cos = tl.load(cos_ptr + pos * HALF + i)[None, :]
    sin = tl.load(sin_ptr + pos * HALF + i)[None, :]
    base = x_ptr + tok * n_heads * 2 * HALF + heads[:, None] * 2 * HALF
    ok = heads[:, None] < n_heads
    even = tl.load(base + 2 * i[None, :], mask=ok, other=0.0).to(tl.float32)
    odd = tl.load(base + 2 * i[None, :] + 1, mask=ok, other=0.0).to(tl.float32)
    tl.store(base + 2 * i[None, :], (even * cos - odd * sin).to(x_ptr.dtype.element_ty),
             mask=ok)
    tl.store(base + 2 * i[None, :] + 1, (odd * cos + even * sin).to(x_ptr.dtype.element_ty),
             mask=ok)


# --- softmax backward, one row a program: dx = y * (dy - sum(dy * y)) -----------------------
@tilecc.jit
def softmax_bwd(dy_ptr, y_ptr, dx_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    ok = cols < n_cols
    dy = tl.load(dy_ptr + row * stride + cols, mask=ok, other=0.0).to(tl.float32)
    y = tl.load(y_ptr + row * stride + cols, mask=ok, other=0.0).to(tl.float32)
    dx = y * (dy - tl.sum(dy * y, axis=0))
    tl.store(dx_ptr + row * stride + cols, dx.to(dx_ptr.dtype.element_ty), mask=ok)


# --- a causal depthwise convolution over time (x: [B, C, T], a width-W filter per channel) --
@tilecc.jit
def causal_conv1d(x_ptr, w_ptr, b_ptr, o_ptr, C, T, W: tl.constexpr, BLOCK_C: tl.constexpr,
                  BLOCK_T: tl.constexpr):
    i_t, i_c, i_b = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    c = i_c * BLOCK_C + tl.arange(0, BLOCK_C)
    t = i_t * BLOCK_T + tl.arange(0, BLOCK_T)
    c_ok = c < C
    acc = tl.zeros((BLOCK_C, BLOCK_T), dtype=tl.float32) + \
        tl.load(b_ptr + c, mask=c_ok, other=0.0).to(tl.float32)[:, None]
    row = x_ptr + (i_b * C + c[:, None]) * T
    for w in tl.static_range(W):
        src = t[None, :] - (W - 1) + w
        x = tl.load(row + src, mask=c_ok[:, None] & (src >= 0) & (src < T), other=0.0)
        acc += x.to(tl.float32) * tl.load(w_ptr + c * W + w, mask=c_ok, other=0.0)[:, None]
    acc = acc * tl.sigmoid(acc)  # SiLU, as Mamba applies it
    tl.store(o_ptr + (i_b * C + c[:, None]) * T + t[None, :], acc.to(o_ptr.dtype.element_ty),
             mask=c_ok[:, None] & (t[None, :] < T))


# --- a product scaled per row of A and per column of B after the loop (row-wise fp8 style) --
@tilecc.jit
def scaled_matmul(a_ptr, b_ptr, sa_ptr, sb_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr,
                  BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_pid_n
    first_m = pid // group * GROUP_M
    group_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % group_m
    pid_n = (pid % group) // group_m
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * K + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * N + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k * BLOCK_K),
                    other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < K - k * BLOCK_K) & (offs_n[None, :] < N),
                    other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N
    sa = tl.load(sa_ptr + offs_m, mask=offs_m < M, other=0.0)
    sb = tl.load(sb_ptr + offs_n, mask=offs_n < N, other=0.0)
    c = acc * sa[:, None] * sb[None, :]
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], c.to(c_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


# --- a bias gradient: column sums of a block of rows a program, added atomically -----------
@tilecc.jit
def bias_grad_atomic(dy_ptr, db_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    dy = tl.load(dy_ptr + rows[:, None] * N + cols[None, :],
                 mask=(rows[:, None] < M) & (cols[None, :] < N), other=0.0)
    tl.atomic_add(db_ptr + cols, tl.sum(dy.to(tl.float32), axis=0), mask=cols < N)


# --- an embedding's backward: each token's gradient row added into its id's row ------------
@tilecc.jit
def embedding_bwd(ids_ptr, dy_ptr, dw_ptr, n_tokens, D, BLOCK_M: tl.constexpr,
                  BLOCK_N: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    ok = (offs_m[:, None] < n_tokens) & (offs_n[None, :] < D)
    ids = tl.load(ids_ptr + offs_m, mask=offs_m < n_tokens, other=0)
    dy = tl.load(dy_ptr + offs_m[:, None] * D + offs_n[None, :], mask=ok, other=0.0)
    tl.atomic_add(dw_ptr + ids[:, None] * D + offs_n[None, :], dy.to(tl.float32), mask=ok)


# --- batched small products: a program multiplies BLOCK_B pairs of 32 x 32 blocks at once --
@tilecc.jit
def batched_small_mm(a_ptr, b_ptr, c_ptr, B, BLOCK_B: tl.constexpr, S: tl.constexpr):
    bb = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)
    r = tl.arange(0, S)
    offs = bb[:, None, None] * S * S + r[None, :, None] * S + r[None, None, :]
    ok = bb[:, None, None] < B
    a = tl.load(a_ptr + offs, mask=ok, other=0.0)
    b = tl.load(b_ptr + offs, mask=ok, other=0.0)
    c = tl.dot(a, b)
    tl.store(c_ptr + offs, c.to(c_ptr.dtype.element_ty), mask=ok)


# --- a transpose by tiles: each program loads a tile along its rows, stores it transposed --
@tilecc.jit
def transpose_tiles(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    ok = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=ok, other=0.0)
    tl.store(y_ptr + rn[:, None] * M + rm[None, :], tl.trans(x), mask=tl.trans(ok))


# --- chunked linear attention with scalar decays, as chunk-parallel libraries write it: the
# state at each chunk's start (a product accumulated across the chunk loop and stored at each
# step), then each chunk's output from its state and its own causal scores; block pointers
# with boundary checks throughout -----------------------------------------------------------
@tilecc.jit
def chunk_gated_state(k_ptr, v_ptr, g_ptr, h_ptr, T, NT, K: tl.constexpr, V: tl.constexpr,
                      BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr):
    i_k, i_v, i_bh = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    b_h = tl.zeros([BK, BV], dtype=tl.float32)
    for i_t in range(NT):
        p_h = tl.make_block_ptr(h_ptr + (i_bh * NT + i_t) * K * V, (K, V), (V, 1),
                                (i_k * BK, i_v * BV), (BK, BV), (1, 0))
        tl.store(p_h, b_h.to(p_h.dtype.element_ty), boundary_check=(0, 1))
        p_k = tl.make_block_ptr(k_ptr + i_bh * T * K, (K, T), (1, K), (i_k * BK, i_t * BT),
                                (BK, BT), (0, 1))
        p_v = tl.make_block_ptr(v_ptr + i_bh * T * V, (T, V), (V, 1), (i_t * BT, i_v * BV),
                                (BT, BV), (1, 0))
        b_k = tl.load(p_k, boundary_check=(0, 1))
        b_v = tl.load(p_v, boundary_check=(0, 1))
        last = tl.minimum((i_t + 1) * BT, T) - 1
        g_last = tl.load(g_ptr + i_bh * T + last)
        o_t = i_t * BT + tl.arange(0, BT)
        b_g = tl.load(g_ptr + i_bh * T + o_t, mask=o_t < T, other=0.0)
        b_h *= tl.exp(g_last)
        b_v = (b_v * tl.exp(g_last - b_g)[:, None]).to(b_v.dtype)
        b_h += tl.dot(b_k, b_v)


@tilecc.jit
def chunk_gated_output(q_ptr, k_ptr, v_ptr, g_ptr, h_ptr, o_ptr, scale, T, NT,
                       K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr,
                       BV: tl.constexpr):
    i_v, i_t, i_bh = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    o_i = tl.arange(0, BT)
    m_s = o_i[:, None] >= o_i[None, :]
    b_o = tl.zeros([BT, BV], dtype=tl.float32)
    b_s = tl.zeros([BT, BT], dtype=tl.float32)
    for i_k in range(tl.cdiv(K, BK)):
        p_q = tl.make_block_ptr(q_ptr + i_bh * T * K, (T, K), (K, 1), (i_t * BT, i_k * BK),
                                (BT, BK), (1, 0))
        p_k = tl.make_block_ptr(k_ptr + i_bh * T * K, (K, T), (1, K), (i_k * BK, i_t * BT),
                                (BK, BT), (0, 1))
        p_h = tl.make_block_ptr(h_ptr + (i_bh * NT + i_t) * K * V, (K, V), (V, 1),
                                (i_k * BK, i_v * BV), (BK, BV), (1, 0))
        b_q = tl.load(p_q, boundary_check=(0, 1))
        b_k = tl.load(p_k, boundary_check=(0, 1))
        b_h = tl.load(p_h, boundary_check=(0, 1))
        b_o += tl.dot(b_q, b_h)
        b_s += tl.dot(b_q, b_k)
    o_t = i_t * BT + o_i
    b_g = tl.load(g_ptr + i_bh * T + o_t, mask=o_t < T, other=0.0)
    b_o = b_o * tl.exp(b_g)[:, None]
    b_s = b_s * tl.exp(b_g[:, None] - b_g[None, :])
    b_s = tl.where(m_s, b_s, 0)
    p_v = tl.make_block_ptr(v_ptr + i_bh * T * V, (T, V), (V, 1), (i_t * BT, i_v * BV),
                            (BT, BV), (1, 0))
    b_v = tl.load(p_v, boundary_check=(0, 1))
    b_o = (b_o + tl.dot(b_s.to(b_v.dtype), b_v)) * scale
    p_o = tl.make_block_ptr(o_ptr + i_bh * T * V, (T, V), (V, 1), (i_t * BT, i_v * BV),
                            (BT, BV), (1, 0))
    tl.store(p_o, b_o.to(p_o.dtype.element_ty), boundary_check=(0, 1))


# --- layer norm by Welford's running mean and variance, chunked over long rows ------------
@tilecc.jit
def welford_layernorm(x_ptr, w_ptr, b_ptr, y_ptr, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * N
    mean = tl.zeros((BLOCK,), tl.float32)
    m2 = tl.zeros((BLOCK,), tl.float32)
    count = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        ok = cols < N
        x = tl.load(x_row + cols, mask=ok, other=0.0).to(tl.float32)
        new_count = count + ok.to(tl.float32)
        delta = x - mean
        mean += tl.where(ok, delta / tl.maximum(new_count, 1.0), 0.0)
        m2 += tl.where(ok, delta * (x - mean), 0.0)
        count = new_count
    # the lanes' statistics merged (Chan et al.): each lane holds its own count
    total = tl.sum(count, 0)
    row_mean = tl.sum(mean * count, 0) / total
    var = (tl.sum(m2, 0) + tl.sum(count * (mean - row_mean) * (mean - row_mean), 0)) / total
    rstd = tl.rsqrt(var + eps)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        ok = cols < N
        x = tl.load(x_row + cols, mask=ok, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=ok, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=ok, other=0.0).to(tl.float32)
        y = (x - row_mean) * rstd * w + b
        tl.store(y_ptr + row * N + cols, y.to(y_ptr.dtype.element_ty), mask=ok)


# --- the cases (as untuned_kernels.CASES; `mk` also has mk.randbits(shape), non-negative
# int32, mk.zeros(shape, dtype) and mk.from_numpy(array), a host array on the framework's
# device) ------------------------------------------------------------------------------------
SMS = 132  # the programs of the row-run kernels (as many as an H100's or H200's SMs)


def _rms_bwd_in(mk, dt, big):
    m, n = (8192, 4096) if big else (37, 40)
    return dict(dy=mk.randn((m, n), dt), x=mk.randn((m, n), dt), w=mk.randn((n,), dt),
                rstd=abs(mk.randn((m,), "float32")) + 0.5, dx=mk.empty((m, n), dt),
                dw=mk.empty((SMS if big else 4, n), "float32"))


def _rms_bwd_launch(k, a):
    m, n = a["x"].shape
    programs = a["dw"].shape[0]
    k[(programs,)](a["dy"], a["x"], a["w"], a["rstd"], a["dx"], a["dw"], n, m, n,
                   tilecc.cdiv(m, programs), BLOCK_SIZE=tilecc.next_power_of_2(n),
                   num_warps=8)


def _rms_bwd_ref(a):
    np = _np()
    dy, x, w = (a[s].astype("float64") for s in ("dy", "x", "w"))
    rstd = a["rstd"].astype("float64")[:, None]
    m = dy * w
    dx = rstd * m - rstd ** 3 * (m * x).mean(1, keepdims=True) * x
    per_row = dy * x * rstd
    programs = a["dw"].shape[0]
    run = -(-x.shape[0] // programs)
    dw = np.stack([per_row[p * run:(p + 1) * run].sum(0) for p in range(programs)])
    return dict(dx=dx, dw=dw)


def _swiglu_bwd_in(mk, dt, big):
    m, n = (8192, 11008) if big else (5, 300)
    return dict(dc=mk.randn((m, n), dt), a=mk.randn((m, n), dt), b=mk.randn((m, n), dt))


def _swiglu_bwd_launch(k, a):
    m, n = a["a"].shape
    k[(m,)](a["dc"], a["a"], a["b"], n, n, BLOCK_SIZE=tilecc.next_power_of_2(n),
            num_warps=16)


def _swiglu_bwd_ref(a):
    np = _np()
    dc, x, b = (a[s].astype("float64") for s in ("dc", "a", "b"))
    sig = 1 / (1 + np.exp(-x))
    return dict(a=dc * (x * sig * (1 - sig) + sig) * b, b=dc * x * sig)


def _add_rms_in(mk, dt, big):
    m, n = (8192, 4096) if big else (6, 200)
    return dict(x=mk.randn((m, n), dt), residual=mk.randn((m, n), dt), w=mk.randn((n,), dt),
                y=mk.empty((m, n), dt))


def _add_rms_launch(k, a):
    m, n = a["x"].shape
    k[(m,)](a["x"], a["residual"], a["w"], a["y"], n, n, 1e-6,
            BLOCK_N=tilecc.next_power_of_2(n), num_warps=8)


def _add_rms_ref(a):
    np = _np()
    s = a["x"].astype("float64") + a["residual"].astype("float64")
    rstd = 1 / np.sqrt((s * s).mean(1, keepdims=True) + 1e-6)
    return dict(residual=s, y=s * rstd * a["w"].astype("float64"))


def _quant_in(mk, dt, big):
    m, n = (8192, 4096) if big else (7, 100)
    return dict(x=mk.randn((m, n), dt), xq=mk.empty((m, n), "int8"),
                scale=mk.empty((m,), "float32"))


def _quant_launch(k, a):
    m, n = a["x"].shape
    block = tilecc.next_power_of_2(n)
    k[(m,)](a["x"], a["xq"], a["scale"], n, n, n, BLOCK=block,
            num_warps=min(max(block // 256, 1), 8))


def _quant_ref(a):
    np = _np()
    x = a["x"].astype("float64")
    absmax = np.maximum(np.abs(x).max(1, keepdims=True), 1e-10)
    return dict(xq=np.round(x * (127 / absmax)), scale=absmax[:, 0] / 127)


def _softmax_in(mk, dt, big):
    m, n = (4096, 32000) if big else (3, 333)
    return dict(x=mk.randn((m, n), dt), y=mk.empty((m, n), dt))


def _softmax_launch(k, a, BLOCK=2048):
    m, n = a["x"].shape
    k[(m,)](a["x"], a["y"], n, n, BLOCK=BLOCK if n > 1000 else 64, num_warps=8)


def _softmax_ref(a):
    np = _np()
    x = a["x"].astype("float64")
    e = np.exp(x - x.max(1, keepdims=True))
    return dict(y=e / e.sum(1, keepdims=True))


def _kl_in(mk, dt, big):
    m, n = (4096, 32000) if big else (3, 500)
    return dict(y_pred=mk.randn((m, n), dt), y_true=abs(mk.randn((m, n), dt)),
                loss=mk.empty((m,), "float32"))


def _kl_launch(k, a):
    m, n = a["y_pred"].shape
    k[(m,)](a["y_pred"], a["y_true"], a["loss"], n, n, 1e-10,
            BLOCK_SIZE=16384 if n > 1000 else 128, num_warps=16)


def _kl_ref(a):
    np = _np()
    y, t = a["y_pred"].astype("float64"), a["y_true"].astype("float64")
    return dict(loss=(t * (np.log(np.maximum(t, 1e-10)) - y)).sum(1))


def _emb_in(mk, dt, big):
    vocab, d, tokens = (32000, 4096, 16384) if big else (50, 96, 29)
    return dict(ids=mk.randint(vocab, (tokens,)), w=mk.randn((vocab, d), dt),
                out=mk.empty((tokens, d), dt))


def _emb_launch(k, a):
    tokens, d = a["out"].shape
    k[(tilecc.cdiv(tokens, 64), tilecc.cdiv(d, 128))](a["ids"], a["w"], a["out"], tokens, d,
                                                       BLOCK_M=64, BLOCK_N=128, num_warps=4)


def _emb_ref(a):
    return dict(out=a["w"].astype("float64")[a["ids"]])


def _topk_in(mk, dt, big):
    tokens = 65536 if big else 45
    return dict(logits=mk.randn((tokens, 64), dt), weights=mk.empty((tokens, 2), "float32"),
                ids=mk.empty((tokens, 2), "int32"))


def _topk_launch(k, a):
    tokens = a["logits"].shape[0]
    k[(tilecc.cdiv(tokens, 64),)](a["logits"], a["weights"], a["ids"], tokens, E=64,
                                  BLOCK_T=64, num_warps=4)


def _topk_ref(a):
    np = _np()
    x = a["logits"].astype("float64")
    p = np.exp(x - x.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    rows = np.arange(len(p))
    i1 = p.argmax(1)  # (the first of equal values, as tl.argmax)
    p2 = p.copy()
    p2[rows, i1] = -1.0
    i2 = p2.argmax(1)
    w1, w2 = p[rows, i1], p[rows, i2]
    return dict(weights=np.stack([w1, w2], 1) / (w1 + w2)[:, None], ids=np.stack([i1, i2], 1))


def _paged_in(mk, dt, big):
    seqs, h, d, page, longest = (64, 32, 128, 16, 4096) if big else (3, 2, 32, 16, 70)
    max_blocks = longest // page + (longest % page > 0)
    pages = seqs * max_blocks
    return dict(q=mk.randn((seqs, h, d), dt), k=mk.randn((pages, page, h, d), dt),
                v=mk.randn((pages, page, h, d), dt),
                table=mk.randint(pages, (seqs, max_blocks)),
                lens=mk.randint(longest, (seqs,)) + 1, out=mk.empty((seqs, h, d), dt))


def _paged_launch(k, a):
    seqs, h, d = a["q"].shape
    k[(seqs, h)](a["q"], a["k"], a["v"], a["table"], a["lens"], a["out"], d ** -0.5,
                 a["table"].shape[1], H=h, D=d, PAGE=a["k"].shape[1], num_warps=4)


def _paged_ref(a):
    np = _np()
    q = a["q"].astype("float64")
    page = a["k"].shape[1]
    out = np.empty_like(q)
    for s in range(q.shape[0]):
        n = int(a["lens"][s])
        pages = a["table"][s][np.arange(n) // page]
        k = a["k"].astype("float64")[pages, np.arange(n) % page]  # [n, h, d]
        v = a["v"].astype("float64")[pages, np.arange(n) % page]
        sc = np.einsum("hd,nhd->hn", q[s], k) * q.shape[-1] ** -0.5
        p = np.exp(sc - sc.max(1, keepdims=True))
        out[s] = np.einsum("hn,nhd->hd", p / p.sum(1, keepdims=True), v)
    return dict(out=out)


def _int4_in(mk, dt, big):
    m, n, k, group = (2048, 4096, 4096, 128) if big else (40, 128, 256, 128)
    return dict(a=mk.randn((m, k), dt), b=mk.randbits((k // 8, n)),
                scales=mk.randn((k // group, n), dt) * 0.02,
                zeros=mk.randn((k // group, n), dt) + 8, c=mk.empty((m, n), dt))


def _int4_launch(k, a, BLOCK_M=64, BLOCK_N=128, BLOCK_K=64):
    m, kk = a["a"].shape
    n = a["c"].shape[1]
    group = kk // a["scales"].shape[0]
    k[(tilecc.cdiv(m, BLOCK_M), tilecc.cdiv(n, BLOCK_N))](
        a["a"], a["b"], a["scales"], a["zeros"], a["c"], m, n, kk, kk, n, n, group,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, num_warps=4, num_stages=3)


def _int4_ref(a):
    np = _np()
    packed = a["b"].astype("int64")
    k = packed.shape[0] * 8
    rows = np.arange(k)
    q = (packed[rows // 8] >> ((rows % 8) * 4)[:, None]) & 0xF
    group = k // a["scales"].shape[0]
    s, z = a["scales"].astype("float64"), a["zeros"].astype("float64")
    b = (q - z[rows // group]) * s[rows // group]
    return dict(c=a["a"].astype("float64") @ b)


def _gla_in(mk, dt, big):
    bh, t, kd, vd = (64, 2048, 64, 64) if big else (2, 11, 16, 32)
    return dict(q=mk.randn((bh, t, kd), dt), k=mk.randn((bh, t, kd), dt),
                v=mk.randn((bh, t, vd), dt), g=mk.logsigmoid((bh, t, kd), dt),
                o=mk.empty((bh, t, vd), dt))


def _gla_launch(k, a, BV=32):
    bh, t, kd = a["q"].shape
    vd = a["v"].shape[2]
    bv = min(BV, vd)
    k[(vd // bv, bh)](a["q"], a["k"], a["v"], a["g"], a["o"], t, kd ** -0.5, K=kd, V=vd,
                      BV=bv, num_warps=1)


def _gla_ref(a):
    np = _np()
    q, k, v = (a[s].astype("float64") for s in "qkv")
    g = np.exp(a["g"].astype("float64"))
    scale = q.shape[-1] ** -0.5
    h = np.zeros((q.shape[0], v.shape[2], q.shape[2]))
    o = np.empty_like(v)
    for t in range(q.shape[1]):
        h = h * g[:, t, None, :] + v[:, t, :, None] * k[:, t, None, :]
        o[:, t] = (h * q[:, t, None, :] * scale).sum(-1)
    return dict(o=o)


def _causal_in(mk, dt, big):
    bh, n = (64, 2048) if big else (3, 50)
    return dict(x=mk.randn((bh * n, n), dt), y=mk.empty((bh * n, n), dt))


def _causal_launch(k, a):
    rows, n = a["x"].shape
    block = tilecc.next_power_of_2(n)
    k[(rows,)](a["x"], a["y"], n, 0.125, BLOCK=block, num_warps=8 if block >= 2048 else 4)


def _causal_ref(a):
    np = _np()
    rows, n = a["x"].shape
    x = a["x"].astype("float64") * 0.125
    future = np.arange(n)[None, :] > (np.arange(rows) % n)[:, None]
    x = np.where(future, -np.inf, x)
    e = np.exp(x - x.max(1, keepdims=True))
    return dict(y=e / e.sum(1, keepdims=True))


def _moe_in(mk, dt, big):
    np = _np()
    tokens, experts, top_k, n, k = (2048, 8, 2, 4096, 4096) if big else (13, 4, 2, 64, 64)
    rng = np.random.default_rng(1)
    choice = np.stack([rng.permutation(experts)[:top_k] for _ in range(tokens)])
    slots = choice.reshape(-1)  # slot = token * top_k + j: its expert
    ids, blocks = [], []
    for e in range(experts):  # each expert's slots, padded to whole blocks
        mine = np.flatnonzero(slots == e)
        pad = -len(mine) % _MOE_BM
        ids += list(mine) + [tokens * top_k] * pad
        blocks += [e] * ((len(mine) + pad) // _MOE_BM)
    return dict(a=mk.randn((tokens, k), dt), b=mk.randn((experts, k, n), dt) * 0.05,
                c=mk.empty((tokens * top_k, n), dt),
                weights=mk.from_numpy(rng.random(tokens * top_k).astype("float32")),
                sorted_ids=mk.from_numpy(np.array(ids, "int32")),
                expert_ids=mk.from_numpy(np.array(blocks, "int32")),
                padded=mk.from_numpy(np.array([len(ids)], "int32")))


_MOE_BM = 64


def _moe_launch(k, a, BLOCK_N=64, BLOCK_K=32):
    tokens, kk = a["a"].shape
    experts, _, n = a["b"].shape
    em = a["sorted_ids"].shape[0]
    top_k = a["c"].shape[0] // tokens
    grid = (tilecc.cdiv(em, _MOE_BM) * tilecc.cdiv(n, BLOCK_N),)
    k[grid](a["a"], a["b"], a["c"], a["weights"], a["sorted_ids"], a["expert_ids"],
            a["padded"], n, kk, em, tokens * top_k, kk, kk * n, n, n, top_k=top_k,
            BLOCK_M=_MOE_BM, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8, num_warps=4,
            num_stages=4)


def _moe_ref(a):
    np = _np()
    tokens = a["a"].shape[0]
    top_k = a["c"].shape[0] // tokens
    x, w = a["a"].astype("float64"), a["b"].astype("float64")
    out = np.full(a["c"].shape, np.nan)
    ids, blocks = a["sorted_ids"], a["expert_ids"]
    for i, slot in enumerate(ids):
        if slot < tokens * top_k:
            out[slot] = x[slot // top_k] @ w[blocks[i // _MOE_BM]] * a["weights"][slot]
    return dict(c=out)


def _scan_in(mk, dt, big):
    b, t, d = (8, 4096, 1024) if big else (2, 70, 40)
    return dict(a=mk.logsigmoid((b, t, d), dt), b=mk.randn((b, t, d), dt),
                h=mk.empty((b, t, d), dt))


def _scan_launch(k, a, BT=64, BD=64):
    b, t, d = a["a"].shape
    k[(tilecc.cdiv(t, BT), tilecc.cdiv(d, BD), b)](a["a"], a["b"], a["h"], t, d, BT=BT, BD=BD,
                                                    num_warps=4)


def _scan_ref(a, BT=64):
    np = _np()
    x, y = np.exp(a["a"].astype("float64")), a["b"].astype("float64")
    h = np.empty_like(y)
    for t in range(x.shape[1]):
        h[:, t] = y[:, t] if t % BT == 0 else x[:, t] * h[:, t - 1] + y[:, t]
    return dict(h=h)


def _rope_il_in(mk, dt, big):
    tokens, heads, seq = (4 * 4096, 32, 4096) if big else (6, 3, 4)
    return dict(x=mk.randn((tokens, heads, 128), dt), cos=mk.randn((seq, 64), "float32"),
                sin=mk.randn((seq, 64), "float32"))


def _rope_il_launch(k, a):
    tokens, heads, d = a["x"].shape
    k[(tokens,)](a["x"], a["cos"], a["sin"], a["cos"].shape[0], heads,
                 H_PAD=tilecc.next_power_of_2(heads), HALF=d // 2, num_warps=4)


def _rope_il_ref(a):
    np = _np()
    x = a["x"].astype("float64")
    pos = np.arange(x.shape[0]) % a["cos"].shape[0]
    cos, sin = a["cos"][pos][:, None, :], a["sin"][pos][:, None, :]
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = even * cos - odd * sin, odd * cos + even * sin
    return dict(x=out)


def _softmax_bwd_in(mk, dt, big):
    m, n = (8192, 4096) if big else (5, 300)
    return dict(dy=mk.randn((m, n), dt), y=abs(mk.randn((m, n), dt)) * 0.01,
                dx=mk.empty((m, n), dt))


def _softmax_bwd_launch(k, a):
    m, n = a["y"].shape
    k[(m,)](a["dy"], a["y"], a["dx"], n, n, BLOCK=tilecc.next_power_of_2(n), num_warps=8)


def _softmax_bwd_ref(a):
    dy, y = a["dy"].astype("float64"), a["y"].astype("float64")
    return dict(dx=y * (dy - (dy * y).sum(1, keepdims=True)))


def _conv_in(mk, dt, big):
    b, c, t = (4, 4096, 2048) if big else (2, 20, 37)
    return dict(x=mk.randn((b, c, t), dt), w=mk.randn((c, 4), dt), bias=mk.randn((c,), dt),
                o=mk.empty((b, c, t), dt))


def _conv_launch(k, a, BLOCK_C=64, BLOCK_T=64):
    b, c, t = a["x"].shape
    k[(tilecc.cdiv(t, BLOCK_T), tilecc.cdiv(c, BLOCK_C), b)](
        a["x"], a["w"], a["bias"], a["o"], c, t, W=4, BLOCK_C=BLOCK_C, BLOCK_T=BLOCK_T,
        num_warps=4)


def _conv_ref(a):
    np = _np()
    x, w = a["x"].astype("float64"), a["w"].astype("float64")
    pad = np.concatenate([np.zeros(x.shape[:2] + (3,)), x], axis=2)
    acc = a["bias"].astype("float64")[None, :, None] + sum(
        pad[:, :, j:j + x.shape[2]] * w[None, :, j, None] for j in range(4))
    return dict(o=acc / (1 + np.exp(-acc)))


def _scaled_in(mk, dt, big):
    m, n, k = (4096, 4096, 4096) if big else (40, 72, 96)
    return dict(a=mk.randn((m, k), dt), b=mk.randn((k, n), dt),
                sa=abs(mk.randn((m,), "float32")), sb=abs(mk.randn((n,), "float32")),
                c=mk.empty((m, n), dt))


def _scaled_launch(k, a, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64):
    m, kk = a["a"].shape
    n = a["b"].shape[1]
    k[(tilecc.cdiv(m, BLOCK_M) * tilecc.cdiv(n, BLOCK_N),)](
        a["a"], a["b"], a["sa"], a["sb"], a["c"], m, n, kk, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
        BLOCK_K=BLOCK_K, GROUP_M=8, num_warps=8, num_stages=3)


def _scaled_ref(a):
    c = a["a"].astype("float64") @ a["b"].astype("float64")
    return dict(c=c * a["sa"].astype("float64")[:, None] * a["sb"].astype("float64")[None, :])


def _bias_in(mk, dt, big):
    m, n = (16384, 4096) if big else (37, 100)
    return dict(dy=mk.randn((m, n), dt), db=mk.zeros((n,), "float32"))


def _bias_launch(k, a, BLOCK_M=128, BLOCK_N=128):
    m, n = a["dy"].shape  # (db starts at zero; timed calls keep adding into it)
    k[(tilecc.cdiv(m, BLOCK_M), tilecc.cdiv(n, BLOCK_N))](a["dy"], a["db"], m, n,
                                                           BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
                                                           num_warps=4)


def _bias_ref(a):
    return dict(db=a["dy"].astype("float64").sum(0))


def _emb_bwd_in(mk, dt, big):
    vocab, d, tokens = (32000, 4096, 16384) if big else (9, 96, 29)
    return dict(ids=mk.randint(vocab, (tokens,)), dy=mk.randn((tokens, d), dt),
                dw=mk.zeros((vocab, d), "float32"))


def _emb_bwd_launch(k, a):
    tokens, d = a["dy"].shape  # (dw starts at zero; timed calls keep adding into it)
    k[(tilecc.cdiv(tokens, 64), tilecc.cdiv(d, 128))](a["ids"], a["dy"], a["dw"], tokens, d,
                                                       BLOCK_M=64, BLOCK_N=128, num_warps=4)


def _emb_bwd_ref(a):
    np = _np()
    dw = np.zeros(a["dw"].shape)
    np.add.at(dw, a["ids"], a["dy"].astype("float64"))
    return dict(dw=dw)


def _transpose_in(mk, dt, big):
    m, n = (8192, 8192) if big else (37, 45)
    return dict(x=mk.randn((m, n), dt), y=mk.empty((n, m), dt))


def _transpose_launch(k, a, BLOCK_M=64, BLOCK_N=64):
    m, n = a["x"].shape
    k[(tilecc.cdiv(m, BLOCK_M), tilecc.cdiv(n, BLOCK_N))](a["x"], a["y"], m, n,
                                                         BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
                                                         num_warps=4)


def _transpose_ref(a):
    return dict(y=a["x"].T.astype("float64"))


CHUNK = 64  # the chunk length (BT) of the chunked linear attention


def _chunks_in(mk, dt, big):
    bh, t, d = (64, 4096, 128) if big else (2, 100, 128)  # (a last chunk of 36 when small)
    nt = -(-t // CHUNK)
    return dict(q=mk.randn((bh, t, d), dt), k=mk.randn((bh, t, d), dt),
                v=mk.randn((bh, t, d), dt), g=mk.logsigmoid((bh, t), "float32") * 0.1,
                h=mk.randn((bh, nt, d, d), dt), o=mk.empty((bh, t, d), dt))


def _chunk_state_launch(k, a):
    bh, t, d = a["k"].shape
    k[(d // 64, d // 64, bh)](a["k"], a["v"], a["g"], a["h"], t, -(-t // CHUNK), K=d, V=d,
                              BT=CHUNK, BK=64, BV=64, num_warps=4, num_stages=2)


def _chunk_output_launch(k, a):
    bh, t, d = a["q"].shape
    nt = -(-t // CHUNK)
    k[(d // 64, nt, bh)](a["q"], a["k"], a["v"], a["g"], a["h"], a["o"], d ** -0.5, t, nt,
                         K=d, V=d, BT=CHUNK, BK=64, BV=64, num_warps=4, num_stages=2)


def chunk_state_reference(k, v, g, xp, zeros):
    """The state before each chunk, (bh, chunks, K, V), in float64 (`xp`: numpy or torch;
    `zeros(shape)`: float64 zeros of that library)."""
    bh, t, d = k.shape
    nt = -(-t // CHUNK)
    h, s = zeros((bh, nt, d, v.shape[2])), zeros((bh, d, v.shape[2]))
    for c in range(nt):
        lo, hi = c * CHUNK, min((c + 1) * CHUNK, t)
        h[:, c] = s
        g_last = g[:, hi - 1]
        decayed = v[:, lo:hi] * xp.exp(g_last[:, None] - g[:, lo:hi])[:, :, None]
        s = s * xp.exp(g_last)[:, None, None] + xp.einsum("bti,btj->bij", k[:, lo:hi], decayed)
    return h


def chunk_output_reference(q, k, v, g, h, scale, xp, zeros):
    """Each chunk's output from the state before it and its own causal, decayed scores."""
    bh, t, d = q.shape
    o = zeros(v.shape)
    for c in range(-(-t // CHUNK)):
        lo, hi = c * CHUNK, min((c + 1) * CHUNK, t)
        qc, gc = q[:, lo:hi], g[:, lo:hi]
        inter = xp.einsum("bti,bij->btj", qc, h[:, c]) * xp.exp(gc)[:, :, None]
        s = xp.einsum("bti,bsi->bts", qc, k[:, lo:hi]) * xp.exp(gc[:, :, None] - gc[:, None, :])
        s = xp.tril(s)  # (causal within the chunk)
        o[:, lo:hi] = (inter + xp.einsum("bts,bsj->btj", s, v[:, lo:hi])) * scale
    return o


def _chunk_state_ref(a):
    np = _np()
    k, v, g = (a[n].astype("float64") for n in ("k", "v", "g"))
    return dict(h=chunk_state_reference(k, v, g, np, np.zeros))


def _chunk_output_ref(a):
    np = _np()
    q, k, v, g, h = (a[n].astype("float64") for n in ("q", "k", "v", "g", "h"))
    return dict(o=chunk_output_reference(q, k, v, g, h, q.shape[2] ** -0.5, np, np.zeros))


def _bmm_in(mk, dt, big):
    b = 65536 if big else 5
    return dict(a=mk.randn((b, 32, 32), dt), b=mk.randn((b, 32, 32), dt),
                c=mk.empty((b, 32, 32), dt))


def _bmm_launch(k, a, BLOCK_B=8):
    b = a["a"].shape[0]
    k[(tilecc.cdiv(b, BLOCK_B),)](a["a"], a["b"], a["c"], b, BLOCK_B=BLOCK_B, S=32,
                                  num_warps=4)


def _bmm_ref(a):
    return dict(c=a["a"].astype("float64") @ a["b"].astype("float64"))


def _welford_in(mk, dt, big):
    m, n = (4096, 16384) if big else (3, 1000)
    return dict(x=mk.randn((m, n), dt), w=mk.randn((n,), dt), b=mk.randn((n,), dt),
                y=mk.empty((m, n), dt))


def _welford_launch(k, a):
    m, n = a["x"].shape
    k[(m,)](a["x"], a["w"], a["b"], a["y"], n, 1e-5, BLOCK=1024 if n > 1000 else 128,
            num_warps=4)


def _welford_ref(a):
    np = _np()
    x = a["x"].astype("float64")
    y = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5)
    return dict(y=y * a["w"].astype("float64") + a["b"].astype("float64"))


CASES = [
    Case("rmsnorm bwd row runs", rmsnorm_bwd, _rms_bwd_in, _rms_bwd_launch, ("dx", "dw"),
         _rms_bwd_ref, moved=lambda e: 3 * 8192 * 4096 * e),
    Case("swiglu bwd in place", swiglu_bwd, _swiglu_bwd_in, _swiglu_bwd_launch, ("a", "b"),
         _swiglu_bwd_ref, moved=lambda e: 5 * 8192 * 11008 * e),
    Case("add + rmsnorm 4096", fused_add_rmsnorm, _add_rms_in, _add_rms_launch,
         ("residual", "y"), _add_rms_ref, moved=lambda e: 4 * 8192 * 4096 * e),
    Case("int8 token quant", per_token_quant_int8, _quant_in, _quant_launch, ("xq", "scale"),
         _quant_ref, tol=dict(xq=(0.0, 1.0), scale=(1e-5, 1e-7)),
         moved=lambda e: 8192 * 4096 * (e + 1)),
    Case("softmax looped 32000", softmax_looped, _softmax_in, _softmax_launch, ("y",),
         _softmax_ref, tol=(1e-4, 1e-6), moved=lambda e: 3 * 4096 * 32000 * e),
    Case("kl div 32000", kldiv_rows, _kl_in, _kl_launch, ("loss",), _kl_ref,
         tol=(1e-3, 1e-2), moved=lambda e: 2 * 4096 * 32000 * e),
    Case("embedding gather", embedding_fwd, _emb_in, _emb_launch, ("out",), _emb_ref,
         moved=lambda e: 2 * 16384 * 4096 * e),
    Case("router top-2 of 64", topk2_softmax, _topk_in, _topk_launch, ("weights", "ids"),
         _topk_ref, tol=(1e-4, 1e-5)),
    Case("paged decode attn", paged_decode, _paged_in, _paged_launch, ("out",), _paged_ref),
    Case("int4 weight matmul", int4_matmul, _int4_in, _int4_launch, ("c",), _int4_ref,
         tol=(2e-2, 2e-1)),
    Case("gla recurrent steps", fused_recurrent_gla, _gla_in, _gla_launch, ("o",), _gla_ref,
         tol=(1e-3, 1e-3), moved=lambda e: 4 * 64 * 2048 * 64 * e),
    Case("causal softmax 2048", causal_softmax, _causal_in, _causal_launch, ("y",),
         _causal_ref, tol=(1e-4, 1e-6), moved=lambda e: 2 * 64 * 2048 * 2048 * e),
    Case("fused moe top-2 of 8", fused_moe, _moe_in, _moe_launch, ("c",), _moe_ref,
         tol=(2e-2, 5e-2)),
    Case("linear scan pairs", linear_scan, _scan_in, _scan_launch, ("h",), _scan_ref,
         tol=(1e-4, 1e-4), moved=lambda e: 3 * 8 * 4096 * 1024 * e),
    Case("rope interleaved", rope_interleaved, _rope_il_in, _rope_il_launch, ("x",),
         _rope_il_ref, moved=lambda e: 2 * 4 * 4096 * 32 * 128 * e),
    Case("softmax bwd 4096", softmax_bwd, _softmax_bwd_in, _softmax_bwd_launch, ("dx",),
         _softmax_bwd_ref, tol=(1e-3, 1e-5), moved=lambda e: 3 * 8192 * 4096 * e),
    Case("causal conv1d w4", causal_conv1d, _conv_in, _conv_launch, ("o",), _conv_ref,
         moved=lambda e: 2 * 4 * 4096 * 2048 * e),
    Case("row/col scaled matmul", scaled_matmul, _scaled_in, _scaled_launch, ("c",),
         _scaled_ref, tol=(2e-2, 1e-1)),
    Case("bias grad atomics", bias_grad_atomic, _bias_in, _bias_launch, ("db",), _bias_ref,
         tol=(1e-3, 1e-2), moved=lambda e: 16384 * 4096 * e),
    Case("embedding bwd atomics", embedding_bwd, _emb_bwd_in, _emb_bwd_launch, ("dw",),
         _emb_bwd_ref, tol=(1e-4, 1e-4)),
    Case("batched 32x32 dots", batched_small_mm, _bmm_in, _bmm_launch, ("c",), _bmm_ref,
         tol=(2e-2, 5e-2), moved=lambda e: 3 * 65536 * 32 * 32 * e),
    Case("welford layernorm", welford_layernorm, _welford_in, _welford_launch, ("y",),
         _welford_ref, moved=lambda e: 2 * 4096 * 16384 * e),
    Case("transpose 64x64 tiles", transpose_tiles, _transpose_in, _transpose_launch, ("y",),
         _transpose_ref, tol=(0, 0), moved=lambda e: 2 * 8192 * 8192 * e),
    Case("chunk gated state", chunk_gated_state, _chunks_in, _chunk_state_launch, ("h",),
         _chunk_state_ref, tol=(2e-2, 2e-1), moved=lambda e: 64 * 4096 * 128 * 2 * 2 * e
         + 64 * 64 * 128 * 128 * e),
    Case("chunk gated output", chunk_gated_output, _chunks_in, _chunk_output_launch, ("o",),
         _chunk_output_ref, tol=(2e-2, 1e-1), moved=lambda e: 64 * 4096 * 128 * 4 * e
         + 64 * 64 * 128 * 128 * e),
]
