"""examples/attention.py's forward written with block pointers, as Triton's fused-attention
tutorial writes its non-TMA kernel: Q, K^T, V and the output through `tl.make_block_ptr`,
K^T and V moved along the keys with `tl.advance`.  Same parameters as `attention_fwd`, so
`bench_attention.py --block-ptr` times it (and Triton compiling the same source) with the
same launcher."""

import tilecc
import tilecc.language as tl


@tilecc.jit
def attention_fwd_block_ptr(Q, K, V, Out, LSE, sm_scale, stride_z, stride_h, stride_m, H,
                            N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                            BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    base = (off_hz // H).to(tl.int64) * stride_z + (off_hz % H).to(tl.int64) * stride_h
    q_block = tl.make_block_ptr(Q + base, (N_CTX, HEAD_DIM), (stride_m, 1),
                                (start_m * BLOCK_M, 0), (BLOCK_M, HEAD_DIM), (1, 0))
    kt_block = tl.make_block_ptr(K + base, (HEAD_DIM, N_CTX), (1, stride_m), (0, 0),
                                 (HEAD_DIM, BLOCK_N), (0, 1))
    v_block = tl.make_block_ptr(V + base, (N_CTX, HEAD_DIM), (stride_m, 1), (0, 0),
                                (BLOCK_N, HEAD_DIM), (1, 0))
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    m_i = tl.full([BLOCK_M], -float("inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634
    q = tl.load(q_block, boundary_check=(0,), padding_option="zero")
    hi = N_CTX
    if CAUSAL:
        hi = tl.minimum((start_m + 1) * BLOCK_M, N_CTX)
    for start_n in range(0, hi, BLOCK_N):
        kt = tl.load(kt_block, boundary_check=(1,), padding_option="zero")
        qk = tl.dot(q, kt)
        keep = (start_n + offs_n)[None, :] < N_CTX
        if CAUSAL:
            keep = keep & (offs_m[:, None] >= (start_n + offs_n)[None, :])
        qk = tl.where(keep, qk * qk_scale, -1.0e6)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(v_block, boundary_check=(0,), padding_option="zero")
        acc = tl.dot(p.to(Out.dtype.element_ty), v, acc)
        m_i = m_ij
        kt_block = tl.advance(kt_block, (0, BLOCK_N))
        v_block = tl.advance(v_block, (BLOCK_N, 0))

    acc = acc / l_i[:, None]
    tl.store(LSE + off_hz * N_CTX + offs_m, m_i + tl.math.log2(l_i), mask=offs_m < N_CTX)
    o_block = tl.make_block_ptr(Out + base, (N_CTX, HEAD_DIM), (stride_m, 1),
                                (start_m * BLOCK_M, 0), (BLOCK_M, HEAD_DIM), (1, 0))
    tl.store(o_block, acc.to(Out.dtype.element_ty), boundary_check=(0,))
