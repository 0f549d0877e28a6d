"""The kernels of benchmarks/untuned_kernels.py (written for Triton in the styles of LLM
kernel libraries) on the interpreter at tiny shapes, against their NumPy references; and
the generated code of the row norms compiled by NVRTC: several rows per program over 128
contiguous columns load and store 16-byte vectors and reduce each row inside a warp."""

from __future__ import annotations

import copy
import os
import sys

import numpy as np
import pytest

import tilecc.testing as tt

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
import untuned_kernels as U  # noqa: E402


class NumpyMaker:
    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def randn(self, shape, dtype):
        return self.rng.standard_normal(shape).astype(dtype)

    def empty(self, shape, dtype):
        return np.full(shape, np.nan, dtype=dtype)

    def randint(self, high, shape):
        return self.rng.integers(0, high, shape, dtype=np.int64)

    def sort_desc(self, x):
        return -np.sort(-x, axis=-1)

    def logsigmoid(self, shape, dtype):
        return -np.log1p(np.exp(-self.rng.standard_normal(shape))).astype(dtype)


@pytest.mark.parametrize("case", U.CASES, ids=lambda c: c.name.replace(" ", "_"))
def test_untuned_kernel_matches_numpy_on_the_interpreter(case) -> None:
    args = case.inputs(NumpyMaker(0), "float32", big=False)
    expected = case.reference(copy.deepcopy(args))
    case.launch(case.kernel.interpret, args)
    for name in case.outputs:
        tt.assert_close(args[name], expected[name].astype(np.float32), tt.Tolerance(*case.tol),
                        name)
