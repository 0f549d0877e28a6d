"""Kernels written against `triton.language`, as a Triton user would write them.

Loaded through `tilecc.cli.load_kernel("tests/triton_kernels.py:NAME")`, which serves
`import triton` from tilecc when Triton itself is not installed.
"""

import triton
import triton.language as tl


@triton.jit
def leaky_relu_kernel(x_ptr, out_ptr, n_elements, slope, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    # negative inputs are scaled by `slope` instead of being clamped to zero
    y = tl.where(x > 0, x, x * slope)
    tl.store(out_ptr + offsets, y, mask=mask)


@triton.jit
def softplus_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_blocks = triton.cdiv(n_elements, BLOCK_SIZE)
    tl.device_assert(pid < num_blocks, "launched more programs than blocks")
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    # log(1 + exp(x)), written stably: max(x, 0) + log(1 + exp(-|x|))
    y = tl.maximum(x, 0.0) + tl.math.log(1.0 + tl.math.exp(-tl.abs(x)))
    tl.store(out_ptr + offsets, y, mask=mask)
