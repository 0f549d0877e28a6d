"""Property tests for examples/gelu_tanh.py (GELU's tanh approximation through
libdevice.tanh) with tilecc.testing: against NumPy in float64 on the interpreter, and on the
GPU with `-m gpu`."""

from hypothesis import given
from hypothesis import strategies as st

import tilecc
import tilecc.testing as tt
from gelu_tanh import gelu_tanh, gelu_tanh_kernel

import pytest

BLOCK = 256

GELU = tt.Launch(
    gelu_tanh_kernel,
    args=lambda x: dict(x_ptr=x, out_ptr=tt.out_like(x), n_elements=x.size, BLOCK_SIZE=BLOCK),
    grid=lambda meta: (tilecc.cdiv(meta["n_elements"], meta["BLOCK_SIZE"]),),
    reference=gelu_tanh,
    num_warps=2,
)

n = st.shared(tt.sizes(BLOCK), key="n")
dtype = st.shared(tt.float_dtypes(float64=False), key="dtype")


@given(x=tt.arrays(dtype, n, min_value=-20, max_value=20))
def test_gelu_tanh_matches_numpy(x):
    GELU.check(x=x)


@pytest.mark.gpu
@given(x=tt.arrays(dtype, n, min_value=-20, max_value=20))
def test_gelu_tanh_on_gpu(x):
    GELU.replace(backends=("gpu",)).check(x=x)
