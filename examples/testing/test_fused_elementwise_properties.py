"""Property tests for examples/fused_elementwise.py (out = x * sigmoid(x) * y, computed in
float32 whatever the storage type) with tilecc.testing.

The reference computes in float64; the check rounds it to the output's dtype and compares
with that dtype's tolerance (torch.testing.assert_close's defaults: docs/testing.md).
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tilecc
import tilecc.testing as tt
from fused_elementwise import silu_mul_kernel

BLOCK = 256


def silu_mul(x, y):
    x, y = x.astype(np.float64), y.astype(np.float64)
    return x / (1.0 + np.exp(-x)) * y


SILU_MUL = tt.Launch(
    silu_mul_kernel,
    args=lambda x, y: dict(x_ptr=x, y_ptr=y, out_ptr=tt.out_like(x), n_elements=x.size,
                           BLOCK_SIZE=BLOCK),
    grid=lambda meta: (tilecc.cdiv(meta["n_elements"], meta["BLOCK_SIZE"]),),
    reference=silu_mul,
    num_warps=2,
)

n = st.shared(tt.sizes(BLOCK), key="n")
# float16, bfloat16 and float32 storage; not float64: the kernel computes in float32, so a
# float64 result has float32's precision and range (a property test finds that at once).
dtype = st.shared(tt.float_dtypes(float64=False), key="dtype")


@given(x=tt.arrays(dtype, n, min_value=-30, max_value=30),
       y=tt.arrays(dtype, n, min_value=-1e3, max_value=1e3, layout="offset"))
def test_silu_mul_matches_numpy(x, y):
    SILU_MUL.check(x=x, y=y)


def silu_mul_in_float32(x, y):
    # the kernel's own arithmetic, operation by operation: at the edges of the range (inf,
    # NaN, underflow to zero before a multiplication by inf) only this reference agrees
    # with it; in the middle of the range both references do
    x, y = x.astype(np.float32), y.astype(np.float32)
    return x * (np.float32(1) / (np.float32(1) + np.exp(-x))) * y


@given(x=tt.arrays(dtype, n, nan=True, inf=True), y=tt.arrays(dtype, n, nan=True, inf=True))
def test_silu_mul_whole_range_nan_and_inf(x, y):
    SILU_MUL.replace(reference=silu_mul_in_float32).check(x=x, y=y)


@pytest.mark.gpu
@given(x=tt.arrays(dtype, n, min_value=-30, max_value=30),
       y=tt.arrays(dtype, n, min_value=-1e3, max_value=1e3))
def test_silu_mul_on_gpu(x, y):
    SILU_MUL.replace(backends=("gpu",)).check(x=x, y=y)
