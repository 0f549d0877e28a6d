"""A fused elementwise kernel: out = x * sigmoid(x) * y (SiLU-and-multiply, as in gated
MLPs), computed in float32 whatever the storage type, in one pass over memory.

    python examples/fused_elementwise.py
"""

import numpy as np

import tilecc
import tilecc.language as tl


@tilecc.jit
def silu_mul_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    # Compute in fp32 even for fp16 / bf16 storage, and round once at the end.
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offsets, mask=mask).to(tl.float32)
    out = x * tl.sigmoid(x) * y
    tl.store(out_ptr + offsets, out.to(out_ptr.dtype.element_ty), mask=mask)


SIGNATURE = "*fp16:16, *fp16:16, *fp16:16, i32:16, 2048"


def main() -> None:
    print(silu_mul_kernel.source(SIGNATURE, num_warps=8))
    n = 10_000
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal(n).astype(np.float16) for _ in range(2))
    out = np.empty(n, np.float16)
    silu_mul_kernel.interpret[(tilecc.cdiv(n, 2048),)](x, y, out, n, BLOCK_SIZE=2048)
    xf, yf = x.astype(np.float64), y.astype(np.float64)
    np.testing.assert_allclose(out, xf / (1 + np.exp(-xf)) * yf, rtol=2e-3, atol=2e-3)
    print("// interpreter result matches NumPy")


if __name__ == "__main__":
    main()
