"""Block-scaled matrix multiplication (the OCP microscaling formats of Triton's tutorial 10):
C = (A * 2**(SA - 127)) @ (B * 2**(SB - 127))^T, with A and B in fp8 e4m3 ("mxfp8") or in
fp4 e2m1 packed two per byte ("mxfp4"), and one e8m0 scale byte per 32 elements along K.

A is M x K and B is N x K (both K-major, as the tutorial stores them), each read through a
host-side TensorDescriptor; the scales are M x K/32 and N x K/32 bytes.  `tl.dot_scaled`
takes a tile of each with its scales: tilecc up-casts the values to bf16, applies the
scales and multiplies on the bf16 tensor cores with an fp32 accumulator, as Triton does on
GPUs without block-scaled instructions (Hopper, Ampere, AMD).

    python examples/block_scaled_matmul.py
prints the generated CUDA, then checks both formats against NumPy (on the GPU when there
is one, else on the interpreter).
"""

import numpy as np

import tilecc
import tilecc.language as tl
from tilecc import TensorDescriptor

E2M1_VALUES = np.array([0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6],
                       np.float32)


@tilecc.jit
def block_scaled_matmul_kernel(a_desc, a_scale, b_desc, b_scale, c_ptr, M, N, K,
                               stride_sm, stride_sn, stride_cm,
                               FORMAT: tl.constexpr, BLOCK_M: tl.constexpr,
                               BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    PACK: tl.constexpr = 2 if FORMAT == "e2m1" else 1  # values per byte of A and B
    GROUPS: tl.constexpr = BLOCK_K // 32  # scale bytes per row of a K tile
    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K // PACK])
        b = b_desc.load([pid_n * BLOCK_N, k * BLOCK_K // PACK])
        groups = k * GROUPS + tl.arange(0, GROUPS)
        sa = tl.load(a_scale + offs_m[:, None] * stride_sm + groups[None, :],
                     mask=offs_m[:, None] < M, other=127)
        sb = tl.load(b_scale + offs_n[:, None] * stride_sn + groups[None, :],
                     mask=offs_n[:, None] < N, other=127)
        accumulator = tl.dot_scaled(a, sa, FORMAT, b.T, sb, FORMAT, accumulator)
    c = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
    tl.store(c, accumulator, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def matmul(a, a_scale, b, b_scale, c, fmt: str, blocks=(128, 128, 64), num_warps=8):
    """C = A @ B^T in `fmt` ("e4m3": A, B hold fp8 bytes; "e2m1": two values a byte).
    NumPy arrays run on the interpreter, torch / CuPy ones on the GPU; K a multiple of
    BLOCK_K."""
    bm, bn, bk = blocks
    pack = 2 if fmt == "e2m1" else 1
    m, n = a.shape[0], b.shape[0]
    k = a.shape[1] * pack
    a_desc = TensorDescriptor.from_tensor(a, [bm, bk // pack])
    b_desc = TensorDescriptor.from_tensor(b, [bn, bk // pack])
    kernel = block_scaled_matmul_kernel.interpret if isinstance(a, np.ndarray) \
        else block_scaled_matmul_kernel
    kernel[(tilecc.cdiv(m, bm), tilecc.cdiv(n, bn))](
        a_desc, a_scale, b_desc, b_scale, c, m, n, k, k // 32, k // 32, n, FORMAT=fmt,
        BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=num_warps)


def random_operands(rng, m, n, k, fmt):
    """A, its scales, B, its scales (as the kernel takes them) and A, B as float32 values."""
    import ml_dtypes

    def values(rows):
        if fmt == "e2m1":
            codes = rng.integers(0, 16, (rows, k)).astype(np.uint8)
            return (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8), E2M1_VALUES[codes]
        x = rng.standard_normal((rows, k)).astype(ml_dtypes.float8_e4m3fn)
        return x.view(np.uint8), x.astype(np.float32)
    (a, av), (b, bv) = values(m), values(n)
    sa = rng.integers(122, 132, (m, k // 32)).astype(np.uint8)
    sb = rng.integers(122, 132, (n, k // 32)).astype(np.uint8)
    av = av * np.repeat(np.exp2(sa - 127.0), 32, axis=1)
    bv = bv * np.repeat(np.exp2(sb - 127.0), 32, axis=1)
    return a, sa, b, sb, av, bv


SIGNATURE = ("tensordesc<u8[128, 32]>:16, *u8:16, tensordesc<u8[128, 32]>:16, *u8:16, "
             "*fp32:16, i32, i32, i32:16, i32:16, i32:16, i32:16, 'e2m1', 128, 128, 64")


def main() -> None:
    print(block_scaled_matmul_kernel.source(SIGNATURE, num_warps=8))
    try:
        import cupy

        on_gpu = cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        on_gpu = False
    rng = np.random.default_rng(0)
    m, n, k = (300, 264, 512) if on_gpu else (40, 72, 128)
    for fmt in ("e4m3", "e2m1"):
        a, sa, b, sb, av, bv = random_operands(rng, m, n, k, fmt)
        if on_gpu:
            c = cupy.zeros((m, n), np.float32)
            matmul(*map(cupy.asarray, (a, sa, b, sb)), c, fmt)
            c = cupy.asnumpy(c)
        else:
            c = np.zeros((m, n), np.float32)
            matmul(a, sa, b, sb, c, fmt, blocks=(32, 32, 64), num_warps=4)
        ref = av.astype(np.float64) @ bv.astype(np.float64).T
        np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())
        print(f"// {fmt}: A @ B^T of {m} x {k} @ {k} x {n} on "
              f"{'the GPU' if on_gpu else 'the interpreter'}: matches NumPy")


if __name__ == "__main__":
    main()
