"""GELU with the tanh approximation, as GPT-2 and BERT compute it:

    gelu(x) = 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))

`tanh` comes from libdevice (the CUDA math API's tanhf on NVIDIA, ocml's on AMD), as a
Triton kernel writes it with `triton.language.extra.libdevice`.  libdevice takes fp32 and
fp64 only: 16-bit inputs are converted to float32 first and the result rounded once.

    python examples/gelu_tanh.py
"""

import numpy as np

import tilecc
import tilecc.language as tl
from tilecc.language.extra import libdevice

SQRT_2_OVER_PI = 0.7978845608028654


@tilecc.jit
def gelu_tanh_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    inner = SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)
    out = 0.5 * x * (1.0 + libdevice.tanh(inner))
    tl.store(out_ptr + offsets, out.to(out_ptr.dtype.element_ty), mask=mask)


SIGNATURE = "*fp16:16, *fp16:16, i32:16, 1024"


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """The reference, in float64."""
    x = x.astype(np.float64)
    return 0.5 * x * (1 + np.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x ** 3)))


def main() -> None:
    print(gelu_tanh_kernel.source(SIGNATURE))
    n = 10_000
    x = np.random.default_rng(0).normal(0, 3, n).astype(np.float16)
    out = np.empty(n, np.float16)
    gelu_tanh_kernel.interpret[(tilecc.cdiv(n, 1024),)](x, out, n, BLOCK_SIZE=1024)
    np.testing.assert_allclose(out, gelu_tanh(x), rtol=2e-3, atol=2e-3)
    print("// interpreter result matches NumPy")


if __name__ == "__main__":
    main()
