"""Kernels and their host wrappers, in the style of Triton kernel libraries."""

import triton
import triton.language as tl


def _empty_like(x, shape=None, dtype=None):
    shape = x.shape if shape is None else shape
    if type(x).__module__.startswith("torch"):
        import torch

        return torch.empty(shape, dtype=dtype or x.dtype, device=x.device)
    import numpy as np

    return np.empty(shape, dtype=dtype or x.dtype)


def calculate_settings(n):
    block = triton.next_power_of_2(n)
    num_warps = 4
    if block >= 8192:
        num_warps = 16
    elif block >= 2048:
        num_warps = 8
    return block, num_warps


@triton.jit
def _rms_norm_forward_kernel(Y_ptr, Y_row_stride, X_ptr, X_row_stride, W_ptr, RSTD_ptr,
                             n_cols, eps, offset, BLOCK_SIZE: tl.constexpr):
    row_idx = tl.program_id(0).to(tl.int64)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    X_row = tl.load(X_ptr + row_idx * X_row_stride + col_offsets, mask=mask, other=0)
    X_row_dtype = X_row.dtype
    W_row = tl.load(W_ptr + col_offsets, mask=mask, other=0)
    X_row = X_row.to(tl.float32)
    mean_square = tl.sum(X_row * X_row, axis=0) / n_cols
    rstd = tl.math.rsqrt(mean_square + eps)
    tl.store(RSTD_ptr + row_idx, rstd)
    X_row = X_row * rstd
    X_row = X_row.to(X_row_dtype)
    Y_row = X_row * (offset + W_row)
    tl.store(Y_ptr + row_idx * Y_row_stride + col_offsets, Y_row, mask=mask)


def rms_norm_forward(X, W, eps=1e-6, offset=0.0):
    n_rows, n_cols = X.shape
    BLOCK_SIZE, num_warps = calculate_settings(n_cols)
    Y = _empty_like(X)
    RSTD = _empty_like(X, shape=(n_rows,), dtype=_float32_of(X))
    _rms_norm_forward_kernel[(n_rows,)](Y, _row_stride(Y), X, _row_stride(X), W, RSTD, n_cols,
                                        eps, offset, BLOCK_SIZE=BLOCK_SIZE,
                                        num_warps=num_warps)
    return Y, RSTD


def _row_stride(x):
    return x.stride(0) if hasattr(x, "stride") else x.strides[0] // x.itemsize


def _float32_of(x):
    if type(x).__module__.startswith("torch"):
        import torch

        return torch.float32
    import numpy as np

    return np.float32


@triton.jit
def silu(x):
    return x * tl.sigmoid(x)


@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 256}, num_warps=2),
                          triton.Config({"BLOCK_SIZE": 1024}, num_warps=4, num_stages=2)],
                 key=["n_elements"])
@triton.jit
def _swiglu_forward_kernel(a_ptr, b_ptr, c_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    a = tl.load(a_ptr + offsets, mask=mask, other=0).to(tl.float32)
    b = tl.load(b_ptr + offsets, mask=mask, other=0)
    c = silu(a).to(b.dtype) * b
    tl.store(c_ptr + offsets, c, mask=mask)


def swiglu_forward(a, b):
    c = _empty_like(a)
    n = a.numel() if hasattr(a, "numel") else a.size
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)  # noqa: E731
    _swiglu_forward_kernel[grid](a, b, c, n)
    return c


@triton.heuristics({"EVEN_COLS": lambda args: args["n_cols"] % args["BLOCK_SIZE"] == 0})
@triton.jit
def _cross_entropy_kernel(X_ptr, X_stride, Y_ptr, loss_ptr, n_cols, ignore_index,
                          BLOCK_SIZE: tl.constexpr, EVEN_COLS: tl.constexpr):
    """Loss of each row and, in place of the logits, their gradient (online softmax in
    blocks of BLOCK_SIZE columns)."""
    program_id = tl.program_id(0).to(tl.int64)
    X_ptr += program_id * X_stride
    y = tl.load(Y_ptr + program_id)
    if y == ignore_index:
        for i in range(0, n_cols, BLOCK_SIZE):
            X_offsets = i + tl.arange(0, BLOCK_SIZE)
            tl.store(X_ptr + X_offsets, 0.0, mask=X_offsets < n_cols)
        tl.store(loss_ptr + program_id, 0.0)
    else:
        m = float("-inf")
        d = 0.0
        ori_X_y = tl.load(X_ptr + y).cast(tl.float32)
        for i in range(0, n_cols, BLOCK_SIZE):
            X_offsets = i + tl.arange(0, BLOCK_SIZE)
            if EVEN_COLS:
                X_block = tl.load(X_ptr + X_offsets).cast(tl.float32)
            else:
                X_block = tl.load(X_ptr + X_offsets, mask=X_offsets < n_cols,
                                  other=float("-inf")).cast(tl.float32)
            block_max = tl.max(X_block)
            m_new = tl.maximum(m, block_max)
            d = d * tl.exp(m - m_new) + tl.sum(tl.exp(X_block - m_new))
            m = m_new
        lse = m + tl.log(d)
        for i in range(0, n_cols, BLOCK_SIZE):
            X_offsets = i + tl.arange(0, BLOCK_SIZE)
            X_block = tl.load(X_ptr + X_offsets, mask=X_offsets < n_cols,
                              other=float("-inf")).cast(tl.float32)
            grad = tl.exp(X_block - lse)
            grad = tl.where(X_offsets == y, grad - 1.0, grad)
            tl.store(X_ptr + X_offsets, grad, mask=X_offsets < n_cols)
        tl.store(loss_ptr + program_id, lse - ori_X_y)


def cross_entropy_forward(logits, target, ignore_index=-100):
    """The loss of each row; the gradient of each row's loss is written into `logits`."""
    n_rows, n_cols = logits.shape
    loss = _empty_like(logits, shape=(n_rows,), dtype=_float32_of(logits))
    BLOCK_SIZE = min(1024, triton.next_power_of_2(n_cols))
    _cross_entropy_kernel[(n_rows,)](logits, _row_stride(logits), target, loss, n_cols,
                                     ignore_index, BLOCK_SIZE=BLOCK_SIZE, num_warps=4)
    return loss


@triton.jit
def _rope_forward_kernel(q_ptr, q_row_stride, cos_ptr, sin_ptr, cos_row_stride, sl,
                         n_qh: tl.constexpr, hd: tl.constexpr, BLOCK_SIZE: tl.constexpr,
                         pad_n_qh: tl.constexpr, pad_hd: tl.constexpr):
    """Rotary embedding, in place, of one token's heads ([n_qh, hd] row of q)."""
    pid = tl.program_id(0)
    q_ptr = q_ptr + pid * q_row_stride
    cos_row_idx = pid % sl
    cos_ptr = cos_ptr + cos_row_idx * cos_row_stride
    sin_ptr = sin_ptr + cos_row_idx * cos_row_stride
    cos_offsets = tl.arange(0, pad_hd // 2)
    cos_mask = cos_offsets < hd // 2
    cos_row = tl.load(cos_ptr + cos_offsets, mask=cos_mask, other=0)
    sin_row = tl.load(sin_ptr + cos_offsets, mask=cos_mask, other=0)
    first_half_q_offsets = tl.arange(0, pad_n_qh)[:, None] * hd + tl.arange(0, pad_hd // 2)[None, :]
    first_q_mask = (tl.arange(0, pad_n_qh)[:, None] < n_qh) & \
        (tl.arange(0, pad_hd // 2)[None, :] < hd // 2)
    q_tile_1 = tl.load(q_ptr + first_half_q_offsets, mask=first_q_mask, other=0).to(sin_row.dtype)
    second_half_q_offsets = first_half_q_offsets + (hd // 2)
    q_tile_2 = tl.load(q_ptr + second_half_q_offsets, mask=first_q_mask, other=0).to(sin_row.dtype)
    new_q_tile_1 = q_tile_1 * cos_row - q_tile_2 * sin_row
    tl.store(q_ptr + first_half_q_offsets, new_q_tile_1, mask=first_q_mask)
    new_q_tile_2 = q_tile_2 * cos_row + q_tile_1 * sin_row
    tl.store(q_ptr + second_half_q_offsets, new_q_tile_2, mask=first_q_mask)


def rope_forward(q, cos, sin):
    """q: [batch * seq, n_heads * head_dim] (rotated in place); cos, sin: [seq, head_dim/2]."""
    n_rows = q.shape[0]
    seq_len, half = cos.shape
    hd = 2 * half
    n_qh = q.shape[1] // hd
    _rope_forward_kernel[(n_rows,)](q, _row_stride(q), cos, sin, _row_stride(cos), seq_len,
                                    n_qh, hd, BLOCK_SIZE=max(triton.next_power_of_2(n_qh), 1),
                                    pad_n_qh=triton.next_power_of_2(n_qh),
                                    pad_hd=triton.next_power_of_2(hd))
    return q
