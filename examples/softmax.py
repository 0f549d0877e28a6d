"""Fused row softmax (Triton's tutorial kernel): one program per row, the row held in
registers across the program's threads, max and sum reduced in registers, warp shuffles
and shared memory.  Masked, so any row length up to BLOCK_SIZE works.

    python examples/softmax.py
prints the generated CUDA, then checks the kernel against NumPy (on the GPU when there
is one, else on the interpreter).
"""

import numpy as np

import tilecc
import tilecc.language as tl


@tilecc.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_cols,
                   BLOCK_SIZE: tl.constexpr):
    # One program per row; the whole row fits in BLOCK_SIZE (a power of 2 >= n_cols).
    row_idx = tl.program_id(0)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    row = tl.load(input_ptr + row_idx * input_row_stride + col_offsets, mask=mask,
                  other=-float("inf"))
    # Subtract the maximum for numerical stability.
    row_minus_max = row - tl.max(row, axis=0)
    numerator = tl.exp(row_minus_max)
    denominator = tl.sum(numerator, axis=0)
    softmax_output = numerator / denominator
    tl.store(output_ptr + row_idx * output_row_stride + col_offsets, softmax_output, mask=mask)


def launch_config(n_cols: int) -> dict:
    """BLOCK_SIZE covers the row; more warps for longer rows."""
    block = tilecc.next_power_of_2(n_cols)
    warps = 4 if block <= 2048 else (8 if block <= 8192 else 16)
    return {"BLOCK_SIZE": block, "num_warps": warps}


def row_stride(a) -> int:
    """Elements between rows, for torch tensors and NumPy / CuPy arrays alike."""
    return a.stride(0) if callable(getattr(a, "stride", None)) else a.strides[0] // a.itemsize


def softmax(x, out=None):
    """Row softmax of a 2-D CuPy / torch array (GPU) or NumPy array (interpreter)."""
    n_rows, n_cols = x.shape
    out = x * 0 if out is None else out
    kernel = softmax_kernel.interpret if isinstance(x, np.ndarray) else softmax_kernel
    kernel[(n_rows,)](out, x, row_stride(x), row_stride(out), n_cols, **launch_config(n_cols))
    return out


SIGNATURE = "*fp32:16, *fp32:16, i32:16, i32:16, i32, 1024"


def main() -> None:
    print(softmax_kernel.source(SIGNATURE, num_warps=4))
    x = np.random.default_rng(0).standard_normal((37, 781)).astype(np.float32)
    try:
        import cupy

        on_gpu = cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        on_gpu = False
    y = cupy.asnumpy(softmax(cupy.asarray(x))) if on_gpu else softmax(x)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    print(f"// softmax of a 37 x 781 array on {'the GPU' if on_gpu else 'the interpreter'}: "
          "matches NumPy")


if __name__ == "__main__":
    main()
