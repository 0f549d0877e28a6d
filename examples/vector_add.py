"""Vector add: the smallest complete tilecc kernel (Triton's first tutorial).

    python examples/vector_add.py
prints the CUDA that tilecc generates for it, then runs it — on the GPU when CuPy sees
one, otherwise on tilecc's NumPy interpreter — and checks the result against NumPy.
"""

import numpy as np

import tilecc
import tilecc.language as tl


@tilecc.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    # Each program handles one contiguous block of BLOCK_SIZE elements.
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    # The last block may run past the end: mask those lanes off.
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(out_ptr + offsets, output, mask=mask)


SIGNATURE = "*fp32:16, *fp32:16, *fp32:16, i32:16, 1024"


def gpu_available() -> bool:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def main() -> None:
    print(add_kernel.source(SIGNATURE))
    n = 98_765
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    grid = lambda meta: (tilecc.cdiv(n, meta["BLOCK_SIZE"]),)  # noqa: E731
    if gpu_available():
        import cupy

        out = cupy.empty(n, cupy.float32)
        add_kernel[grid](cupy.asarray(x), cupy.asarray(y), out, n, BLOCK_SIZE=1024)
        result, where = cupy.asnumpy(out), f"GPU ({cupy.cuda.Device().compute_capability})"
    else:
        result = np.empty(n, np.float32)
        add_kernel.interpret[grid](x, y, result, n, BLOCK_SIZE=1024)
        where = "the NumPy interpreter (no GPU found)"
    assert np.array_equal(result, x + y), "mismatch against NumPy"
    print(f"// ran add_kernel on {where}: n = {n}, {tilecc.cdiv(n, 1024)} programs, "
          "result matches NumPy exactly")


if __name__ == "__main__":
    main()
