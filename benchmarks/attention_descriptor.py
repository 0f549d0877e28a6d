"""examples/attention.py's forward written with tensor descriptors, as Triton's
fused-attention tutorial writes its Hopper kernel: Q, K, V and the output as one
(Y, HEAD_DIM) tensor each, the heads' rows stacked (Y = batch x heads x N_CTX, the arrays
contiguous), every descriptor made from the arguments, so that on sm_90 K and V stream in by
TMA.  N_CTX must be a multiple of BLOCK_M and BLOCK_N: the rows past a head's last are the
next head's.  `bench_attention.py --descriptors` times it (and Triton compiling the same
source) beside SDPA."""

import tilecc
import tilecc.language as tl


@tilecc.jit
def attention_fwd_descriptors(Q, K, V, Out, LSE, sm_scale, Y, N_CTX,
                              HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                              BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    q_desc = tl.make_tensor_descriptor(Q, [Y, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_M, HEAD_DIM])
    k_desc = tl.make_tensor_descriptor(K, [Y, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_N, HEAD_DIM])
    v_desc = tl.make_tensor_descriptor(V, [Y, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_N, HEAD_DIM])
    o_desc = tl.make_tensor_descriptor(Out, [Y, HEAD_DIM], [HEAD_DIM, 1],
                                       [BLOCK_M, HEAD_DIM])
    row0 = off_hz * N_CTX  # the head's first row
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    q = q_desc.load([row0 + start_m * BLOCK_M, 0])
    m_i = tl.full([BLOCK_M], -float("inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634
    hi = N_CTX
    if CAUSAL:
        hi = (start_m + 1) * BLOCK_M
    for start_n in range(0, hi, BLOCK_N):
        qk = tl.dot(q, k_desc.load([row0 + start_n, 0]).T)
        if CAUSAL:
            qk = tl.where(offs_m[:, None] >= (start_n + offs_n)[None, :], qk * qk_scale,
                          -1.0e6)
        else:
            qk = qk * qk_scale
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = v_desc.load([row0 + start_n, 0])
        acc = tl.dot(p.to(Out.dtype.element_ty), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(LSE + off_hz * N_CTX + offs_m, m_i + tl.math.log2(l_i))
    o_desc.store([row0 + start_m * BLOCK_M, 0], acc.to(Out.dtype.element_ty))
