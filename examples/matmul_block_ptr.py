"""Matrix multiplication written with block pointers: the kernel of `matmul.py`, with
`tl.make_block_ptr` describing each operand as a 2-D tensor (shape, strides) and the
tile this program reads, `tl.advance` stepping A's tile right and B's tile down along K,
and `boundary_check` doing the masking that `matmul.py` writes by hand.

tilecc lowers block pointers to the same pointer arithmetic (the tile of element offsets
is computed once, before the loop), so the generated code vectorizes and pipelines the
A and B tiles exactly as the pointer version does (tests/test_block_ptr.py checks it).

    python examples/matmul_block_ptr.py
prints the generated CUDA, then checks the kernel against NumPy (on the GPU when there
is one, else on the interpreter).
"""

import numpy as np

import tilecc
import tilecc.language as tl


@tilecc.jit
def matmul_block_ptr_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                            stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                            BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                            BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr):
    # Program ids in groups of GROUP_SIZE_M rows of tiles, as in matmul.py.
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    # A's tile starts at row pid_m * BLOCK_SIZE_M, column 0; B's at row 0, column
    # pid_n * BLOCK_SIZE_N.  order=(1, 0): the columns are contiguous (row-major).
    a_block = tl.make_block_ptr(a_ptr, shape=(M, K), strides=(stride_am, stride_ak),
                                offsets=(pid_m * BLOCK_SIZE_M, 0),
                                block_shape=(BLOCK_SIZE_M, BLOCK_SIZE_K), order=(1, 0))
    b_block = tl.make_block_ptr(b_ptr, shape=(K, N), strides=(stride_bk, stride_bn),
                                offsets=(0, pid_n * BLOCK_SIZE_N),
                                block_shape=(BLOCK_SIZE_K, BLOCK_SIZE_N), order=(1, 0))

    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        # Out-of-range rows and columns read as zeros.
        a = tl.load(a_block, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(b_block, boundary_check=(0, 1), padding_option="zero")
        accumulator = tl.dot(a, b, accumulator)
        a_block = tl.advance(a_block, (0, BLOCK_SIZE_K))
        b_block = tl.advance(b_block, (BLOCK_SIZE_K, 0))

    c = accumulator.to(c_ptr.dtype.element_ty)
    c_block = tl.make_block_ptr(c_ptr, shape=(M, N), strides=(stride_cm, stride_cn),
                                offsets=(pid_m * BLOCK_SIZE_M, pid_n * BLOCK_SIZE_N),
                                block_shape=(BLOCK_SIZE_M, BLOCK_SIZE_N), order=(1, 0))
    tl.store(c_block, c, boundary_check=(0, 1))


def strides(a) -> tuple[int, int]:
    """Element strides of a 2-D torch tensor or NumPy / CuPy array."""
    if callable(getattr(a, "stride", None)):
        return a.stride(0), a.stride(1)
    return a.strides[0] // a.itemsize, a.strides[1] // a.itemsize


def launch(a, b, c, config: tilecc.Config) -> None:
    """C = A @ B with one block configuration (the interpreter for NumPy arrays)."""
    (m, k), n = a.shape, b.shape[1]
    meta = config.kwargs
    grid = (tilecc.cdiv(m, meta["BLOCK_SIZE_M"]) * tilecc.cdiv(n, meta["BLOCK_SIZE_N"]),)
    kernel = matmul_block_ptr_kernel.interpret if isinstance(a, np.ndarray) \
        else matmul_block_ptr_kernel
    kernel[grid](a, b, c, m, n, k, *strides(a), *strides(b), *strides(c), **meta,
                 num_warps=config.num_warps, num_stages=config.num_stages)


SIGNATURE = ("*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, i32:16, i32:1, i32:16, i32:1, "
             "i32:16, i32:1, 128, 128, 32, 8")


def main() -> None:
    print(matmul_block_ptr_kernel.source(SIGNATURE, num_warps=4, num_stages=3))
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
        launch(cupy.asarray(a), cupy.asarray(b), c, small)
        c = cupy.asnumpy(c)
    else:
        c = np.zeros((300, 260), np.float16)
        launch(a, b, c, small)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c.astype(np.float32), ref, rtol=2e-3, atol=2e-3)
    print(f"// A @ B of 300 x 200 @ 200 x 260 on "
          f"{'the GPU' if on_gpu else 'the interpreter'}: matches NumPy")


if __name__ == "__main__":
    main()
