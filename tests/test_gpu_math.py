"""tl.clamp, tl.minimum / maximum with propagate_nan, tl.fdiv, tl.div_rn and tl.softmax on
the GPU (`pytest -m gpu`), against the interpreter: bit for bit where the result is exact
(clamp, min / max, the correctly rounded divisions), within bounds elsewhere."""

from __future__ import annotations

import numpy as np
import pytest

try:
    import test_math as M
except ImportError:  # tests/ imported as a package
    from tests import test_math as M

pytestmark = pytest.mark.gpu


def _inputs(rng, n=M.N):
    x = rng.normal(0, 10, n).astype(np.float32)
    x[:6] = [np.nan, -np.inf, np.inf, -0.0, 1e-40, -1e-40]
    return x


def _both(kernel, arrays, out, **consts):
    cupy = pytest.importorskip("cupy")
    want = out.copy()
    kernel.interpret[(1,)](*arrays, want, **consts)
    dev = cupy.asarray(out)
    kernel[(1,)](*[cupy.asarray(a) for a in arrays], dev, **consts)
    return cupy.asnumpy(dev), want


@pytest.mark.parametrize("all_nan", [False, True])
def test_clamp_and_min_max_on_gpu(all_nan):
    rng = np.random.default_rng(2)
    x, y = _inputs(rng), _inputs(rng)[::-1].copy()
    lo, hi = np.full(M.N, -1, np.float32), np.full(M.N, 2, np.float32)
    got, want = _both(M.clamp_kernel, [x, lo, hi], np.zeros(M.N, np.float32),
                      ALL=all_nan, BLOCK=M.N)
    np.testing.assert_array_equal(got, want)
    got, want = _both(M.min_max_kernel, [x, y], np.zeros(2 * M.N, np.float32),
                      ALL=all_nan, BLOCK=M.N)
    np.testing.assert_array_equal(got, want)


def test_divisions_on_gpu():
    rng = np.random.default_rng(3)
    x, y = _inputs(rng), _inputs(rng)[::-1].copy()
    got, want = _both(M.div_kernel, [x, y], np.zeros(4 * M.N, np.float32), BLOCK=M.N)
    np.testing.assert_array_equal(got[M.N:], want[M.N:])  # correctly rounded: exact
    fast, exact = got[:M.N], want[:M.N]
    finite = np.isfinite(exact) & (np.abs(y) > 2.0 ** -126) & (np.abs(y) < 2.0 ** 126)
    with np.errstate(invalid="ignore"):  # inf - inf where the operands are not finite
        close = np.abs(fast - exact) <= 2 * np.spacing(np.abs(exact))
    assert close[finite].all()


def test_softmax_on_gpu():
    x = np.random.default_rng(4).normal(0, 3, (8, 16)).astype(np.float32)
    got, want = _both(M.softmax_kernel, [x], np.zeros_like(x), M=8, N=16, DIM=1, KEEP=True,
                      IEEE=False)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
