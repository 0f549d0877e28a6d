"""Test kernels for block pointers (tl.make_block_ptr / tl.advance) and pointers as values
(integers cast to pointers and back, pointers loaded from memory), with the NumPy
arrays their tests launch them on."""

from __future__ import annotations

import os
import runpy

import tilecc
import tilecc.language as tl


@tilecc.jit
def bp_load_kernel(X, Y, M, N, stride_xm, stride_xn, OM, ON, BM: tl.constexpr,
                   BN: tl.constexpr, CHECK: tl.constexpr, PAD: tl.constexpr):
    """Y (BM x BN, dense) = the block of X (M x N) at (OM, ON), read through a block
    pointer with `boundary_check=CHECK`, `padding_option=PAD`."""
    x_block = tl.make_block_ptr(X, shape=(M, N), strides=(stride_xm, stride_xn),
                                offsets=(OM, ON), block_shape=(BM, BN), order=(1, 0))
    x = tl.load(x_block, boundary_check=CHECK, padding_option=PAD)
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    tl.store(Y + rm[:, None] * BN + rn[None, :], x)


@tilecc.jit
def bp_store_kernel(X, Y, M, N, stride_ym, stride_yn, OM, ON, BM: tl.constexpr,
                    BN: tl.constexpr, CHECK: tl.constexpr):
    """The block X (BM x BN, dense) stored into Y (M x N) at (OM, ON) through a block
    pointer, inside the dims `CHECK` names."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(X + rm[:, None] * BN + rn[None, :])
    y_block = tl.make_block_ptr(Y, shape=(M, N), strides=(stride_ym, stride_yn),
                                offsets=(OM, ON), block_shape=(BM, BN), order=(1, 0))
    tl.store(y_block, x, boundary_check=CHECK)


@tilecc.jit
def bp_row_sum_kernel(X, OUT, M, N, stride_xm, stride_xn, BM: tl.constexpr,
                      BN: tl.constexpr):
    """OUT[m] = sum of row m of X: a block pointer advanced along N in a loop, and a 1-D
    block pointer for the result."""
    pid = tl.program_id(0)
    x_block = tl.make_block_ptr(X, (M, N), (stride_xm, stride_xn), (pid * BM, 0), (BM, BN),
                                (1, 0))
    acc = tl.zeros((BM,), dtype=tl.float32)
    for _ in range(0, tl.cdiv(N, BN)):
        x = tl.load(x_block, boundary_check=(0, 1), padding_option="zero")
        acc += tl.sum(x.to(tl.float32), axis=1)
        x_block = tl.advance(x_block, (0, BN))
    out_block = tl.make_block_ptr(OUT, (M,), (1,), (pid * BM,), (BM,), (0,))
    tl.store(out_block, acc, boundary_check=(0,))


@tilecc.jit
def bp_while_kernel(X, OUT, N, BN: tl.constexpr):
    """OUT[0] = sum of X[0:N], a 1-D block pointer advanced in a `while` loop."""
    x_block = tl.make_block_ptr(X, (N,), (1,), (0,), (BN,), (0,))
    acc = tl.zeros((BN,), dtype=tl.float32)
    start = 0
    while start < N:
        acc += tl.load(x_block, boundary_check=(0,), padding_option="zero")
        x_block = tl.advance(x_block, (BN,))
        start += BN
    tl.store(OUT, tl.sum(acc, axis=0))


@tilecc.jit
def ptr_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk,
                      stride_bn, stride_cm, stride_cn, BLOCK_SIZE_M: tl.constexpr,
                      BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr):
    """The pointer-arithmetic twin of examples/matmul_block_ptr.py (same tiles, the same
    bounds checked), for comparing the code each gets."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_n = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k * BLOCK_SIZE_K),
                    other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < K - k * BLOCK_SIZE_K) & (offs_n[None, :] < N),
                    other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@tilecc.jit
def bp_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk,
                     stride_bn, stride_cm, stride_cn, BLOCK_SIZE_M: tl.constexpr,
                     BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr):
    """`ptr_matmul_kernel` written with block pointers."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_block = tl.make_block_ptr(a_ptr, (M, K), (stride_am, stride_ak), (pid_m * BLOCK_SIZE_M, 0),
                                (BLOCK_SIZE_M, BLOCK_SIZE_K), (1, 0))
    b_block = tl.make_block_ptr(b_ptr, (K, N), (stride_bk, stride_bn), (0, pid_n * BLOCK_SIZE_N),
                                (BLOCK_SIZE_K, BLOCK_SIZE_N), (1, 0))
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_block, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(b_block, boundary_check=(0, 1), padding_option="zero")
        acc = tl.dot(a, b, acc)
        a_block = tl.advance(a_block, (0, BLOCK_SIZE_K))
        b_block = tl.advance(b_block, (BLOCK_SIZE_K, 0))
    c_block = tl.make_block_ptr(c_ptr, (M, N), (stride_cm, stride_cn),
                                (pid_m * BLOCK_SIZE_M, pid_n * BLOCK_SIZE_N),
                                (BLOCK_SIZE_M, BLOCK_SIZE_N), (1, 0))
    tl.store(c_block, acc.to(c_ptr.dtype.element_ty), boundary_check=(0, 1))


MATMUL_SIGNATURE = ("*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, i32:16, i32:1, "
                    "i32:16, i32:1, i32:16, i32:1, {bm}, {bn}, {bk}")


@tilecc.jit
def desc_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_SIZE_M: tl.constexpr,
                       BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr):
    """`bp_matmul_kernel` on row-major operands, written with tensor descriptors."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BLOCK_SIZE_M, BLOCK_SIZE_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, [K, N], [N, 1], [BLOCK_SIZE_K, BLOCK_SIZE_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, [M, N], [N, 1], [BLOCK_SIZE_M, BLOCK_SIZE_N])
    offs_am = pid_m * BLOCK_SIZE_M  # as Triton's tutorial 09 writes it
    offs_bn = pid_n * BLOCK_SIZE_N
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        offs_k = k * BLOCK_SIZE_K
        a = a_desc.load([offs_am, offs_k])
        b = tl.load_tensor_descriptor(b_desc, [offs_k, offs_bn])
        acc = tl.dot(a, b, acc)
    c_desc.store([offs_am, offs_bn], acc.to(c_desc.dtype))


DESC_MATMUL_SIGNATURE = "*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, {bm}, {bn}, {bk}"


@tilecc.jit
def gather_sum_kernel(table, out, count, n, BLOCK: tl.constexpr, DTYPE: tl.constexpr):
    """out = the sum of the `count` arrays whose addresses `table` holds (n elements each)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float64)
    for g in range(count):
        src = tl.load(table + g).to(tl.pointer_type(DTYPE))
        acc += tl.load(src + offs, mask=offs < n, other=0).to(tl.float64)
    tl.store(out + offs, acc, mask=offs < n)


@tilecc.jit
def address_arith_kernel(x, y, bits, flags, n, BLOCK: tl.constexpr):
    """y[i] = x[n - 1 - i] through addresses computed as integers; bits = x's float32 bits
    through a pointer cast to int32; flags = (x is not null, the address round-trips)."""
    offs = tl.arange(0, BLOCK)
    addr = x.to(tl.int64)
    rev = (addr + (n - 1 - offs).to(tl.int64) * 4).to(tl.pointer_type(tl.float32))
    tl.store(y + offs, tl.load(rev, mask=offs < n), mask=offs < n)
    as_int = x.to(tl.pointer_type(tl.int32))
    tl.store(bits + offs, tl.load(as_int + offs, mask=offs < n), mask=offs < n)
    tl.store(flags, x.to(tl.int1).to(tl.int32))
    back = addr.to(tl.pointer_type(tl.float32))
    tl.store(flags + 1, (back.to(tl.uint64) == x.to(tl.uint64)).to(tl.int32))


@tilecc.jit
def _row_sums(x_block, steps, BN: tl.constexpr):
    """A helper that takes a block pointer and advances it in its own loop."""
    acc = tl.zeros((16,), dtype=tl.float32)
    for _ in range(steps):
        acc += tl.sum(tl.load(x_block, boundary_check=(0, 1), padding_option="zero"), axis=1)
        x_block = tl.advance(x_block, (0, BN))
    return acc


@tilecc.jit
def _next_rows(x_block):
    return tl.advance(x_block, (16, 0))


@tilecc.jit
def bp_helper_kernel(X, OUT, M, N, BN: tl.constexpr):
    """OUT[m] = sum of row m of X (M x N, row-major), 16 rows per program, through helpers."""
    x_block = tl.make_block_ptr(X, (M, N), (N, 1), (0, 0), (16, BN), (1, 0))
    for _ in range(tl.program_id(0)):
        x_block = _next_rows(x_block)
    acc = _row_sums(x_block, tl.cdiv(N, BN), BN)
    out_block = tl.make_block_ptr(OUT, (M,), (1,), (tl.program_id(0) * 16,), (16,), (0,))
    tl.store(out_block, acc, boundary_check=(0,))


@tilecc.jit
def bp_branch_kernel(X, OUT, N, SKIP, BN: tl.constexpr):
    """OUT = the sum of X's blocks of BN, skipping every block whose index is SKIP: a block
    pointer advanced by one or two steps in a run-time `if`."""
    x_block = tl.make_block_ptr(X, (N,), (1,), (0,), (BN,), (0,))
    acc = tl.zeros((BN,), dtype=tl.float32)
    i = 0
    while i * BN < N:
        if i == SKIP:
            x_block = tl.advance(x_block, (BN,))
            i += 1
        else:
            acc += tl.load(x_block, boundary_check=(0,), padding_option="zero")
            x_block = tl.advance(x_block, (BN,))
            i += 1
    tl.store(OUT, tl.sum(acc, axis=0))


@tilecc.jit
def bp_walk_kernel(X, OUT, M, N, stride_m, STEP, BM: tl.constexpr, BN: tl.constexpr):
    """OUT = the sum of X's (BM, BN) blocks from the last columns back, STEP columns at a
    time (a run-time step, negative), plus 100 times the block where the walk ends, read
    after the loop: the pointers a loop carries, moved both ways."""
    blk = tl.make_block_ptr(X, (M, N), (stride_m, 1), (0, N - BN), (BM, BN), (1, 0))
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, tl.cdiv(N, STEP)):
        acc += tl.load(blk, boundary_check=(0, 1), padding_option="zero")
        blk = tl.advance(blk, (0, -STEP))
    acc += 100 * tl.load(blk, boundary_check=(0, 1), padding_option="zero")
    tl.store(OUT + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :], acc)


@tilecc.jit
def ptr_bt_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bn, stride_cm,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C = A @ B^T with B stored N x K: rows of B loaded, multiplied transposed."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kk = k * BK + rk
        a = tl.load(a_ptr + rm[:, None] * stride_am + kk[None, :],
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rn[:, None] * stride_bn + kk[None, :],
                    mask=(rn[:, None] < N) & (kk[None, :] < K), other=0.0)
        acc = tl.dot(a, tl.trans(b), acc)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@tilecc.jit
def desc_bt_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_SIZE_M: tl.constexpr,
                   BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr):
    """Triton's tutorial 09 descriptor matmul: B is N x K, read through `b.T`."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BLOCK_SIZE_M, BLOCK_SIZE_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, [N, K], [K, 1], [BLOCK_SIZE_N, BLOCK_SIZE_K])
    c_desc = tl.make_tensor_descriptor(c_ptr, [M, N], [N, 1], [BLOCK_SIZE_M, BLOCK_SIZE_N])
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = a_desc.load([pid_m * BLOCK_SIZE_M, k * BLOCK_SIZE_K])
        b = b_desc.load([pid_n * BLOCK_SIZE_N, k * BLOCK_SIZE_K])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([pid_m * BLOCK_SIZE_M, pid_n * BLOCK_SIZE_N], acc.to(c_desc.dtype))


@tilecc.jit
def host_desc_bt_matmul(a_desc, b_desc, c_desc, BM: tl.constexpr, BN: tl.constexpr,
                        BK: tl.constexpr):
    """The same with host-side descriptors (tutorial 09's TMA persistent kernel's body)."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(a_desc.shape[1], BK)):
        a = a_desc.load([pid_m * BM, k * BK])
        b = b_desc.load([pid_n * BN, k * BK])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(c_desc.dtype))


# the grouped tile order of examples/persistent_matmul.py
_EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "persistent_matmul.py")
tile_coords = runpy.run_path(_EXAMPLE, run_name="kernels")["tile_coords"]


@tilecc.jit
def persistent_bt_kernel(a_desc, b_desc, c_desc, M, N, K, BLOCK_SIZE_M: tl.constexpr,
                         BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                         GROUP_SIZE_M: tl.constexpr, NUM_SMS: tl.constexpr):
    """`examples/persistent_matmul.py`'s kernel with B stored N x K, read as `b.T`."""
    start_pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    k_tiles = tl.cdiv(K, BLOCK_SIZE_K)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    for tile_id in tl.range(start_pid, num_pid_m * num_pid_n, NUM_SMS):
        pid_m, pid_n = tile_coords(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M)
        offs_am = pid_m * BLOCK_SIZE_M
        offs_bn = pid_n * BLOCK_SIZE_N
        accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for ki in range(k_tiles):
            offs_k = ki * BLOCK_SIZE_K
            a = a_desc.load([offs_am, offs_k])
            b = b_desc.load([offs_bn, offs_k])
            accumulator = tl.dot(a, b.T, accumulator)
        c_desc.store([offs_am, offs_bn], accumulator.to(c_desc.dtype))
