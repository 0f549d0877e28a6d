"""Grouped GEMM: one launch multiplies several independent pairs of matrices of different
sizes (C_g = A_g @ B_g), as in Triton's tutorial 08.

The kernel receives the matrices as arrays of addresses: `a_addrs[g]` holds the device
address of A_g (an int64), and `tl.load(a_addrs + g).to(tl.pointer_type(tl.float16))`
turns it back into a pointer.  A fixed number of programs (one per SM) walks the tiles of
all the problems in turn: program p computes tiles p, p + NUM_SM, p + 2 * NUM_SM, ... of
the concatenated list, so small and large problems share the GPU evenly.

    python examples/grouped_gemm.py
prints the generated CUDA, then checks the kernel against NumPy (on the GPU when there is
one, else on the interpreter, which maps the addresses back to the NumPy arrays).
"""

import numpy as np

import tilecc
import tilecc.language as tl


@tilecc.jit
def grouped_matmul_kernel(a_addrs, b_addrs, c_addrs, sizes, lds, group_count,
                          NUM_SM: tl.constexpr, BLOCK_SIZE_M: tl.constexpr,
                          BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr):
    tile = tl.program_id(0)
    first_tile_of_group = 0
    for g in range(group_count):
        # problem g: C (m x n) = A (m x k) @ B (k x n), rows lda, ldb, ldc elements apart
        m = tl.load(sizes + g * 3)
        n = tl.load(sizes + g * 3 + 1)
        k = tl.load(sizes + g * 3 + 2)
        tiles_n = tl.cdiv(n, BLOCK_SIZE_N)
        tiles_in_group = tl.cdiv(m, BLOCK_SIZE_M) * tiles_n
        # this program's tiles that fall in problem g
        while tile >= first_tile_of_group and tile < first_tile_of_group + tiles_in_group:
            lda = tl.load(lds + g * 3)
            ldb = tl.load(lds + g * 3 + 1)
            ldc = tl.load(lds + g * 3 + 2)
            a_ptr = tl.load(a_addrs + g).to(tl.pointer_type(tl.float16))
            b_ptr = tl.load(b_addrs + g).to(tl.pointer_type(tl.float16))
            c_ptr = tl.load(c_addrs + g).to(tl.pointer_type(tl.float16))
            tile_m = (tile - first_tile_of_group) // tiles_n
            tile_n = (tile - first_tile_of_group) % tiles_n

            offs_m = tile_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
            offs_n = tile_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
            offs_k = tl.arange(0, BLOCK_SIZE_K)
            a_ptrs = a_ptr + offs_m[:, None] * lda + offs_k[None, :]
            b_ptrs = b_ptr + offs_k[:, None] * ldb + offs_n[None, :]
            acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
            for kk in range(0, tl.cdiv(k, BLOCK_SIZE_K)):
                k_left = k - kk * BLOCK_SIZE_K
                a = tl.load(a_ptrs, mask=(offs_m[:, None] < m) & (offs_k[None, :] < k_left),
                            other=0.0)
                b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < n),
                            other=0.0)
                acc = tl.dot(a, b, acc)
                a_ptrs += BLOCK_SIZE_K
                b_ptrs += BLOCK_SIZE_K * ldb
            c_ptrs = c_ptr + offs_m[:, None] * ldc + offs_n[None, :]
            tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_m[:, None] < m) & (offs_n[None, :] < n))
            tile += NUM_SM  # this program's next tile
        first_tile_of_group += tiles_in_group


def address(x) -> int:
    """The address of an array's first element: torch, CuPy or NumPy (the interpreter)."""
    if hasattr(x, "data_ptr"):
        return x.data_ptr()
    if hasattr(x, "data") and hasattr(x.data, "ptr"):
        return x.data.ptr
    return x.ctypes.data


def group_gemm(a_list, b_list, c_list, num_sm: int = 4, blocks=(64, 64, 32), xp=np) -> None:
    """C_g = A_g @ B_g for every g, in one launch; `xp` makes the int tables (np, cupy,
    or torch with its device)."""
    sizes, lds = [], []
    for a, b, c in zip(a_list, b_list, c_list):
        (m, k), n = a.shape, b.shape[1]
        sizes += [m, n, k]
        lds += [a.shape[1], b.shape[1], c.shape[1]]

    def table(values, dtype):
        return xp(np.array(values, dtype))

    bm, bn, bk = blocks
    kernel = grouped_matmul_kernel.interpret if xp is np.asarray else grouped_matmul_kernel
    kernel[(num_sm,)](table([address(a) for a in a_list], np.int64),
                      table([address(b) for b in b_list], np.int64),
                      table([address(c) for c in c_list], np.int64),
                      table(sizes, np.int32), table(lds, np.int32), len(a_list),
                      NUM_SM=num_sm, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk)


SIGNATURE = "*i64:16, *i64:16, *i64:16, *i32:16, *i32:16, i32, 132, 128, 128, 32"


def main() -> None:
    print(grouped_matmul_kernel.source(SIGNATURE, num_warps=4))
    rng = np.random.default_rng(0)
    shapes = [(100, 80, 60), (64, 64, 64), (33, 130, 17)]
    a_list = [rng.uniform(-1, 1, (m, k)).astype(np.float16) for m, n, k in shapes]
    b_list = [rng.uniform(-1, 1, (k, n)).astype(np.float16) for m, n, k in shapes]
    try:
        import cupy

        on_gpu = cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        on_gpu = False
    if on_gpu:
        a_dev = [cupy.asarray(a) for a in a_list]
        b_dev = [cupy.asarray(b) for b in b_list]
        c_dev = [cupy.zeros((m, n), np.float16) for m, n, k in shapes]
        group_gemm(a_dev, b_dev, c_dev, num_sm=8, xp=cupy.asarray)
        c_list = [cupy.asnumpy(c) for c in c_dev]
    else:
        c_list = [np.zeros((m, n), np.float16) for m, n, k in shapes]
        group_gemm(a_list, b_list, c_list, num_sm=4, blocks=(32, 32, 16), xp=np.asarray)
    for a, b, c in zip(a_list, b_list, c_list):
        np.testing.assert_allclose(c.astype(np.float32), a.astype(np.float32) @ b,
                                   rtol=2e-3, atol=2e-3)
    print(f"// {len(shapes)} products in one launch on "
          f"{'the GPU' if on_gpu else 'the interpreter'}: match NumPy")


if __name__ == "__main__":
    main()
