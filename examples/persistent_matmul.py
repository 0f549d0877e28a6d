"""Persistent matrix multiplication with host-side tensor descriptors (the pattern of
Triton's tutorial 09): the host wraps each matrix in a `TensorDescriptor` (the tensor and
the block shape the kernel reads it in), the kernel receives the three descriptors and
reads and writes whole tiles with `desc.load([row, col])` / `desc.store(...)`, and one
program per SM walks the output tiles with a stride of the SM count.

A descriptor is passed as its base pointer, shape and strides (the generated kernel's
`a_desc_base, a_desc_shape0, ...` parameters); its block shape and element type are
compiled in.  Every tile access is bounds-checked in every dimension: rows and columns
past the matrix read as zeros and are not written, so M, N and K need not be multiples of
the blocks.

    python examples/persistent_matmul.py
prints the generated CUDA, then checks the kernel against NumPy (on the GPU when there
is one, else on the interpreter).
"""

import numpy as np

import tilecc
import tilecc.language as tl
from tilecc import TensorDescriptor


@tilecc.jit
def tile_coords(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M: tl.constexpr):
    """The (row, column) of output tile `tile_id`, in groups of GROUP_SIZE_M tile rows
    (neighbouring programs share A's rows and B's columns in the L2 cache)."""
    group_id = tile_id // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + (tile_id % group_size_m)
    pid_n = (tile_id % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@tilecc.jit
def persistent_matmul_kernel(a_desc, b_desc, c_desc, M, N, K,
                             BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                             BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr,
                             NUM_SMS: tl.constexpr):
    start_pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    k_tiles = tl.cdiv(K, BLOCK_SIZE_K)
    num_tiles = num_pid_m * num_pid_n
    num_pid_in_group = GROUP_SIZE_M * num_pid_n

    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS):
        pid_m, pid_n = tile_coords(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M)
        offs_am = pid_m * BLOCK_SIZE_M
        offs_bn = pid_n * BLOCK_SIZE_N
        accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for ki in range(k_tiles):
            offs_k = ki * BLOCK_SIZE_K
            a = a_desc.load([offs_am, offs_k])  # A is M x K, B is K x N, both row-major
            b = b_desc.load([offs_k, offs_bn])
            accumulator = tl.dot(a, b, accumulator)
        c_desc.store([offs_am, offs_bn], accumulator.to(c_desc.dtype))


def matmul(a, b, c, config: tilecc.Config, num_sms: int) -> None:
    """C = A @ B (2-D arrays: torch or CuPy on the GPU, NumPy on the interpreter)."""
    (m, k), n = a.shape, b.shape[1]
    meta = config.kwargs
    bm, bn, bk = meta["BLOCK_SIZE_M"], meta["BLOCK_SIZE_N"], meta["BLOCK_SIZE_K"]
    a_desc = TensorDescriptor.from_tensor(a, [bm, bk])
    b_desc = TensorDescriptor.from_tensor(b, [bk, bn])
    c_desc = TensorDescriptor.from_tensor(c, [bm, bn])
    tiles = tilecc.cdiv(m, bm) * tilecc.cdiv(n, bn)
    kernel = persistent_matmul_kernel.interpret if isinstance(a, np.ndarray) \
        else persistent_matmul_kernel
    kernel[(min(num_sms, tiles),)](a_desc, b_desc, c_desc, m, n, k, **meta, NUM_SMS=num_sms,
                                   num_warps=config.num_warps, num_stages=config.num_stages)


SIGNATURE = ("tensordesc<fp16[128, 64]>:16, tensordesc<fp16[64, 128]>:16, "
             "tensordesc<fp16[128, 128]>:16, "
             "i32, i32, i32, 128, 128, 64, 8, 132")


def main() -> None:
    print(persistent_matmul_kernel.source(SIGNATURE, num_warps=8, num_stages=3))
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (300, 200)).astype(np.float16)
    b = rng.uniform(-1, 1, (200, 264)).astype(np.float16)
    try:
        import cupy

        on_gpu = cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        on_gpu = False
    small = tilecc.Config({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32,
                           "GROUP_SIZE_M": 4}, num_warps=4, num_stages=2)
    if on_gpu:
        c = cupy.zeros((300, 264), np.float16)
        sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
        matmul(cupy.asarray(a), cupy.asarray(b), c, small, sms)
        c = cupy.asnumpy(c)
    else:
        c = np.zeros((300, 264), np.float16)
        matmul(a, b, c, small, 4)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c.astype(np.float32), ref, rtol=2e-3, atol=2e-3)
    print(f"// A @ B of 300 x 200 @ 200 x 264 on "
          f"{'the GPU' if on_gpu else 'the interpreter'}: matches NumPy")


if __name__ == "__main__":
    main()
