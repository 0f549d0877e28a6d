"""Property tests for examples/softmax.py (row softmax, one program per row) with
tilecc.testing: a reduction, so the tolerance scales with the row length.

The launch configuration comes from the example's own `launch_config` (BLOCK_SIZE, the next
power of 2 of the row length, and num_warps); rows may be padded (a row stride larger than
the row), which the kernel takes as an argument.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tilecc.testing as tt
from softmax import launch_config, softmax_kernel


def softmax(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


SOFTMAX = tt.Launch(
    softmax_kernel,
    args=lambda x: dict(output_ptr=tt.out_like(x), input_ptr=x,
                        input_row_stride=tt.element_strides(x)[0],
                        output_row_stride=x.shape[1], n_cols=x.shape[1],
                        **launch_config(x.shape[1])),
    grid=lambda meta: (meta["x"].shape[0],),  # one program per row
    reference=softmax,
    # a sum over the row: tolerance for a reduction of n_cols terms, in the output's dtype
    tolerance=lambda x: tt.tolerance(x.dtype, "reduction", k=x.shape[1]),
)

# rows: anything from 1 to 9; columns: around the block sizes 64 and 128 (one less, one more)
shape = tt.shapes((2, (64, 128)), max_sizes=(9, 260))
dtype = tt.float_dtypes(float64=False)


@given(x=tt.arrays(dtype, shape, min_value=-40, max_value=40, layout="padded"))
def test_softmax_matches_numpy(x):
    SOFTMAX.check(x=x)


@given(x=tt.arrays(np.float32, shape, layout="offset"))
def test_softmax_whole_float32_range(x):
    # huge values: subtracting the row maximum keeps exp() finite
    SOFTMAX.check(x=x)


@pytest.mark.gpu
@given(x=tt.arrays(dtype, shape, min_value=-40, max_value=40, layout="padded"))
def test_softmax_on_gpu(x):
    SOFTMAX.replace(backends=("gpu",)).check(x=x)
