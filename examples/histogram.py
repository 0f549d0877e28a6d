"""Histogram of byte values: each program counts its block with `tl.histogram` (in
shared memory, one atomic add per element there), then adds its counts to the global
histogram with one atomic per bin instead of one per element.

    python examples/histogram.py
prints the generated CUDA, then checks the kernel against NumPy (on the GPU when there
is one, else on the interpreter).
"""

import numpy as np

import tilecc
import tilecc.language as tl


@tilecc.jit
def histogram_kernel(x_ptr, hist_ptr, n, NUM_BINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    counts = tl.histogram(x, NUM_BINS, mask=mask)
    bins = tl.arange(0, NUM_BINS)
    tl.atomic_add(hist_ptr + bins, counts, mask=counts > 0, sem="relaxed")


BLOCK = 1024


def histogram(x, hist):
    """Add the counts of the values 0 .. len(hist)-1 in `x` (uint8) to `hist` (int32).
    CuPy / torch arrays run on the GPU, NumPy arrays on the interpreter."""
    n = x.shape[0]
    kernel = histogram_kernel.interpret if isinstance(x, np.ndarray) else histogram_kernel
    kernel[(tilecc.cdiv(n, BLOCK),)](x, hist, n, NUM_BINS=hist.shape[0], BLOCK=BLOCK)
    return hist


SIGNATURE = "*u8:16, *i32:16, i32, 256, 1024"


def main() -> None:
    print(histogram_kernel.source(SIGNATURE))
    x = np.random.default_rng(0).integers(0, 256, 100_003).astype(np.uint8)
    try:
        import cupy

        on_gpu = cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        on_gpu = False
    if on_gpu:
        hist = cupy.asnumpy(histogram(cupy.asarray(x), cupy.zeros(256, np.int32)))
    else:
        hist = histogram(x, np.zeros(256, np.int32))
    np.testing.assert_array_equal(hist, np.bincount(x, minlength=256))
    print(f"// histogram of 100003 bytes on {'the GPU' if on_gpu else 'the interpreter'}: "
          "matches NumPy")


if __name__ == "__main__":
    main()
