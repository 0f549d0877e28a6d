"""Low-memory dropout (Triton's fourth tutorial): the dropout mask is never stored. Each
element's keep-or-drop decision is `tl.rand(seed, offset)`, Philox random numbers drawn
from the seed and the element's offset alone, so the backward pass (or anyone) redraws
the same mask from one integer instead of reading a mask tensor — and the mask is the
one Triton's kernel draws for the same seed, bit for bit.

    python examples/dropout.py
prints the generated CUDA, then runs the kernel (on the GPU when there is one, else on
the interpreter) and checks it against a NumPy Philox.
"""

import numpy as np

import tilecc
import tilecc.language as tl


@tilecc.jit
def seeded_dropout_kernel(x_ptr, output_ptr, n_elements, p, seed, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    # A uniform number in [0, 1) per element, from the seed and the element's offset:
    # an element is kept with probability 1 - p, and scaled so the expectation is x.
    random = tl.rand(seed, offsets)
    keep = random > p
    output = tl.where(keep, x / (1 - p), 0.0)
    tl.store(output_ptr + offsets, output, mask=mask)


SIGNATURE = "*fp32:16, *fp32:16, i32, fp32, i32, 1024"


def seeded_dropout(x, p: float, seed: int, out=None):
    """Dropout of a 1-D CuPy / torch array (GPU) or NumPy array (interpreter)."""
    n = x.shape[0]
    out = x * 0 if out is None else out
    kernel = seeded_dropout_kernel.interpret if isinstance(x, np.ndarray) else seeded_dropout_kernel
    kernel[(tilecc.cdiv(n, 1024),)](x, out, n, p, seed, BLOCK_SIZE=1024)
    return out


def philox_uniform(seed: int, n: int) -> np.ndarray:
    """What tl.rand(seed, offsets) draws for int32 offsets 0..n-1, in NumPy: Philox-4x32
    with 10 rounds on the counter (offset, 0, 0, 0) under the seed's two 32-bit words, the
    first word folded to non-negative and scaled into [0, 1)."""
    u64, low = np.uint64, np.uint64(0xFFFFFFFF)
    seed %= 1 << 64
    k0, k1 = u64(seed & 0xFFFFFFFF), u64(seed >> 32)
    c0, c1 = np.arange(n, dtype=np.uint64), np.zeros(n, np.uint64)
    c2, c3 = np.zeros(n, np.uint64), np.zeros(n, np.uint64)
    for _ in range(10):
        p0, p2 = u64(0xD2511F53) * c0, u64(0xCD9E8D57) * c2
        c0, c1, c2, c3 = (p2 >> u64(32)) ^ c1 ^ k0, p2 & low, (p0 >> u64(32)) ^ c3 ^ k1, p0 & low
        k0, k1 = (k0 + u64(0x9E3779B9)) & low, (k1 + u64(0xBB67AE85)) & low
    signed = c0.astype(np.uint32).view(np.int32)
    return np.where(signed < 0, ~signed, signed).astype(np.float32) * np.float32(4.6566127342e-10)


def gpu_available() -> bool:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def main() -> None:
    print(seeded_dropout_kernel.source(SIGNATURE))
    n, p = 100_003, 0.5
    x = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
    on_gpu = gpu_available()
    if on_gpu:
        import cupy

        run = lambda seed: cupy.asnumpy(seeded_dropout(cupy.asarray(x), p, seed))  # noqa: E731
    else:
        run = lambda seed: seeded_dropout(x, p, seed)  # noqa: E731
    first, again, other = run(123), run(123), run(512)
    keep = philox_uniform(123, n) > np.float32(p)
    assert np.array_equal(first != 0, keep & (x != 0)), "the mask differs from Philox's"
    np.testing.assert_allclose(first[keep], x[keep] / np.float32(1 - p), rtol=1e-6)
    assert np.array_equal(first, again), "the same seed must give the same mask"
    assert not np.array_equal(first != 0, other != 0), "another seed must give another mask"
    print(f"// dropout (p = {p}) of {n} elements on "
          f"{'the GPU' if on_gpu else 'the interpreter'}: {keep.mean():.1%} kept, the mask "
          "matches NumPy's Philox and is redrawn from the seed alone")


if __name__ == "__main__":
    main()
