"""Tiled matrix multiplication (Triton's tutorial kernel): each program computes a
BLOCK_SIZE_M x BLOCK_SIZE_N tile of C = A @ B, looping over K in BLOCK_SIZE_K steps, with
programs ordered in groups of GROUP_SIZE_M rows of tiles so that the tiles running at the
same time share their A rows and B columns in L2.  The epilogue applies a leaky ReLU when
the ACTIVATION constexpr asks for it, and stores in C's type.

On NVIDIA GPUs `tl.dot` runs on the tensor cores (mma.sync), the A and B tiles of the next
iterations streaming into shared memory with cp.async while the current one is multiplied.

    python examples/matmul.py
prints the generated CUDA, then checks the kernel against NumPy (on the GPU when there
is one, else on the interpreter).
"""

import numpy as np

import tilecc
import tilecc.language as tl


@tilecc.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)


@tilecc.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                  BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr,
                  ACTIVATION: tl.constexpr):
    # Program ids in groups of GROUP_SIZE_M rows of tiles, column by column within a group.
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    # Rows and columns wrap around (% M, % N): loads need no mask on M and N, and the
    # out-of-range results are never stored.
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    # The fp32 accumulator, carried through the loop over K; the last step is masked.
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk

    # Epilogue: straight from the accumulator's registers.
    if ACTIVATION == "leaky_relu":
        accumulator = leaky_relu(accumulator)
    c = accumulator.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


# Block configurations tried by `matmul` (the fastest is kept per shape and dtype).
CONFIGS = [
    tilecc.Config({"BLOCK_SIZE_M": m, "BLOCK_SIZE_N": n, "BLOCK_SIZE_K": k, "GROUP_SIZE_M": 8},
                  num_warps=w, num_stages=s)
    for m, n, k, w, s in [(128, 256, 64, 8, 3), (128, 256, 64, 8, 4), (128, 256, 32, 8, 5),
                          (256, 128, 64, 8, 4), (128, 128, 64, 4, 4), (128, 128, 64, 4, 5),
                          (128, 128, 32, 4, 4), (64, 256, 32, 4, 4), (128, 64, 32, 4, 4),
                          (64, 128, 32, 4, 4)]
]

# Triton's tutorial's configurations for fp8 operands: K steps of 128 bytes, as for fp16's 64
FP8_CONFIGS = [
    tilecc.Config({"BLOCK_SIZE_M": m, "BLOCK_SIZE_N": n, "BLOCK_SIZE_K": k, "GROUP_SIZE_M": 8},
                  num_warps=w, num_stages=s)
    for m, n, k, w, s in [(128, 256, 128, 8, 3), (256, 128, 128, 8, 3), (256, 64, 128, 4, 4),
                          (64, 256, 128, 4, 4), (128, 128, 128, 4, 4), (128, 64, 64, 4, 4),
                          (64, 128, 64, 4, 4), (128, 32, 64, 4, 4)]
]


def strides(a) -> tuple[int, int]:
    """Element strides of a 2-D torch tensor or NumPy / CuPy array."""
    if callable(getattr(a, "stride", None)):
        return a.stride(0), a.stride(1)
    return a.strides[0] // a.itemsize, a.strides[1] // a.itemsize


def launch(a, b, c, config: tilecc.Config, activation: str = "") -> None:
    """C = act(A @ B) with one block configuration (the interpreter for NumPy arrays)."""
    (m, k), n = a.shape, b.shape[1]
    meta = config.kwargs
    grid = (tilecc.cdiv(m, meta["BLOCK_SIZE_M"]) * tilecc.cdiv(n, meta["BLOCK_SIZE_N"]),)
    kernel = matmul_kernel.interpret if isinstance(a, np.ndarray) else matmul_kernel
    kernel[grid](a, b, c, m, n, k, *strides(a), *strides(b), *strides(c), **meta,
                 ACTIVATION=activation, num_warps=config.num_warps,
                 num_stages=config.num_stages)


SIGNATURE = ("*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, i32:16, i32:1, i32:16, i32:1, "
             "i32:16, i32:1, 128, 128, 32, 8, 'leaky_relu'")


def main() -> None:
    print(matmul_kernel.source(SIGNATURE, num_warps=4, num_stages=3))
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (300, 200)).astype(np.float16)
    b = rng.uniform(-1, 1, (200, 260)).astype(np.float16)
    try:
        import cupy

        on_gpu = cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        on_gpu = False
    small = tilecc.Config({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32,
                           "GROUP_SIZE_M": 4}, num_warps=4, num_stages=2)
    if on_gpu:
        c = cupy.zeros((300, 260), np.float16)
        launch(cupy.asarray(a), cupy.asarray(b), c, small, "leaky_relu")
        c = cupy.asnumpy(c)
    else:
        c = np.zeros((300, 260), np.float16)
        launch(a, b, c, small, "leaky_relu")
    ref = a.astype(np.float32) @ b.astype(np.float32)
    ref = np.where(ref >= 0, ref, 0.01 * ref)
    np.testing.assert_allclose(c.astype(np.float32), ref, rtol=2e-3, atol=2e-3)
    print(f"// leaky_relu(A @ B) of 300 x 200 @ 200 x 260 on "
          f"{'the GPU' if on_gpu else 'the interpreter'}: matches NumPy")


if __name__ == "__main__":
    main()
