"""Property tests for examples/vector_add.py with tilecc.testing.

    pytest examples/testing                  # interpreter; also the GPU where there is one
    pytest examples/testing -m gpu           # only the GPU tests

The launch is declared once (`ADD`); each test draws inputs and calls `ADD.check`, which runs
the kernel on the interpreter (and on the GPU where CuPy sees one) and compares the output
with NumPy.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tilecc
import tilecc.testing as tt
from vector_add import add_kernel

BLOCK = 128

ADD = tt.Launch(
    add_kernel,
    args=lambda x, y, block=BLOCK: dict(x_ptr=x, y_ptr=y, out_ptr=tt.out_like(x),
                                        n_elements=x.size, BLOCK_SIZE=block),
    grid=lambda meta: (tilecc.cdiv(meta["n_elements"], meta["BLOCK_SIZE"]),),
    reference=lambda x, y: x + y,
)

# One size and one dtype per example, shared by both arrays.
n = st.shared(tt.sizes(BLOCK), key="n")
dtype = st.shared(st.one_of(tt.float_dtypes(), tt.integer_dtypes()), key="dtype")


@given(x=tt.arrays(dtype, n), y=tt.arrays(dtype, n))
def test_add_matches_numpy(x, y):
    ADD.check(x=x, y=y)


@given(x=tt.arrays(dtype, n, layout="offset"), y=tt.arrays(dtype, n, layout="offset"))
def test_add_unaligned_arrays(x, y):
    # starting a few elements past 16-byte alignment: the kernel is specialized without
    # 16-byte vector accesses
    ADD.check(x=x, y=y)


float_dtype = st.shared(tt.float_dtypes(), key="float_dtype")


@given(x=tt.arrays(float_dtype, n, nan=True, inf=True),
       y=tt.arrays(float_dtype, n, nan=True, inf=True))
def test_add_nan_and_inf(x, y):
    ADD.check(x=x, y=y)  # inf + -inf is NaN on both sides; NaN matches NaN


@given(x=tt.arrays(np.float32, st.shared(tt.sizes((64, 256, 1024)), key="m")),
       y=tt.arrays(np.float32, st.shared(tt.sizes((64, 256, 1024)), key="m")),
       block=st.sampled_from([64, 256, 1024]))
def test_add_any_block_size(x, y, block):
    ADD.check(x=x, y=y, block=block)


@pytest.mark.gpu
@given(x=tt.arrays(dtype, n), y=tt.arrays(dtype, n))
def test_add_on_gpu_with_cupy_and_torch(x, y):
    ADD.replace(backends=("gpu",), frameworks=("cupy", "torch")).check(x=x, y=y)
