"""Top-k of each row with its indices (the routing step of a mixture-of-experts layer):
one program per block of rows, `tl.topk` on 64-bit keys that pack an order-preserving
form of each float with its column, so that the k largest come out with where they were.

tl.topk runs Triton's bitonic network on the block: each compare-and-swap meets its
partner by a warp shuffle (or in registers), the reshapes around it go through shared
memory once each.

    python examples/topk.py
prints the generated CUDA, then checks the kernel against NumPy (on the GPU when there
is one, else on the interpreter).
"""

import numpy as np

import tilecc
import tilecc.language as tl


@tilecc.jit
def topk_kernel(x_ptr, values_ptr, indices_ptr, n_rows, n_cols, BLOCK_ROWS: tl.constexpr,
                BLOCK_COLS: tl.constexpr, K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)
    cols = tl.arange(0, BLOCK_COLS)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=-float("inf"))
    # float -> int32 with the same order: negative floats have their other bits flipped
    bits = x.to(tl.int32, bitcast=True)
    key = bits ^ ((bits >> 31) & 0x7FFFFFFF)
    # key in the high word, the column (reversed: ties go to the lower column) in the low
    packed = (key.to(tl.int64) << 32) | (BLOCK_COLS - 1 - cols[None, :]).to(tl.int64)
    top = tl.topk(packed, K)
    top_key = (top >> 32).to(tl.int32)
    value = (top_key ^ ((top_key >> 31) & 0x7FFFFFFF)).to(tl.float32, bitcast=True)
    index = BLOCK_COLS - 1 - (top & 0xFFFFFFFF).to(tl.int32)
    out = rows[:, None] * K + tl.arange(0, K)[None, :]
    tl.store(values_ptr + out, value, mask=rows[:, None] < n_rows)
    tl.store(indices_ptr + out, index, mask=rows[:, None] < n_rows)


BLOCK_ROWS = 4


def topk(x, k: int, values=None, indices=None):
    """The k largest of each row of a 2-D float32 array, descending, and their columns
    (the lower column first among equal values).  CuPy / torch arrays run on the GPU,
    NumPy arrays on the interpreter."""
    n_rows, n_cols = x.shape
    values = x[:, :k] * 0 if values is None else values
    if indices is None:
        indices = np.zeros((n_rows, k), np.int32) if isinstance(x, np.ndarray) else \
            (values * 0).astype("int32") if hasattr(values, "astype") else \
            values.to(__import__("torch").int32)
    kernel = topk_kernel.interpret if isinstance(x, np.ndarray) else topk_kernel
    kernel[(tilecc.cdiv(n_rows, BLOCK_ROWS),)](
        x, values, indices, n_rows, n_cols, BLOCK_ROWS=BLOCK_ROWS,
        BLOCK_COLS=tilecc.next_power_of_2(n_cols), K=k)
    return values, indices


def reference(x: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(-x, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(x, order, 1), order.astype(np.int32)


SIGNATURE = "*fp32:16, *fp32:16, *i32:16, i32, i32, 4, 128, 8"


def main() -> None:
    print(topk_kernel.source(SIGNATURE))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((37, 100)).astype(np.float32)
    x[:, 7] = x[:, 3]  # ties: the lower column first
    try:
        import cupy

        on_gpu = cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        on_gpu = False
    if on_gpu:
        v, i = topk(cupy.asarray(x), 8)
        v, i = cupy.asnumpy(v), cupy.asnumpy(i)
    else:
        v, i = topk(x, 8)
    want_v, want_i = reference(x, 8)
    np.testing.assert_array_equal(v, want_v)
    np.testing.assert_array_equal(i, want_i)
    print(f"// top 8 of each row of a 37 x 100 array on {'the GPU' if on_gpu else 'the interpreter'}:"
          " matches NumPy")


if __name__ == "__main__":
    main()
