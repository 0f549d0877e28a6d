"""Every kernel of tests/kernels.py on the GPU against its NumPy reference (`pytest -m gpu`),
with CuPy and with torch arguments: the same cases the interpreter runs in CI."""

from __future__ import annotations

import copy

import numpy as np
import pytest

try:
    import kernels as K
    from test_interpreter import assert_output
except ImportError:  # tests/ imported as a package
    from tests import kernels as K
    from tests.test_interpreter import assert_output

pytestmark = pytest.mark.gpu


def _to_torch(a: np.ndarray):
    import torch

    if a.dtype == K.BF16:
        return torch.from_numpy(a.view(np.uint16).copy()).cuda().view(torch.bfloat16)
    return torch.from_numpy(a.copy()).cuda()


def _from_torch(t, like: np.ndarray) -> np.ndarray:
    import torch

    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).cpu().numpy().view(K.BF16)
    return t.cpu().numpy()


def _to_cupy(a: np.ndarray):
    import cupy

    return cupy.asarray(a)


def _from_cupy(a, like: np.ndarray) -> np.ndarray:
    import cupy

    return cupy.asnumpy(a)


FRAMEWORKS = {"torch": (_to_torch, _from_torch), "cupy": (_to_cupy, _from_cupy)}


def _params():
    for case in K.CASES:
        for dt in case.dtypes:
            dts = dt if isinstance(dt, tuple) else (dt,)
            for fw in FRAMEWORKS:
                if fw == "cupy" and any(np.dtype(d) == K.BF16 for d in dts):
                    continue  # CuPy has no bfloat16 arrays
                name = "->".join(K.tl_name(d) for d in dts)
                yield pytest.param(case, dt, fw, id=f"{case.name}-{name}-{fw}")


@pytest.mark.parametrize("case,dtype,fw", list(_params()))
def test_case_on_gpu(case: K.Case, dtype, fw: str) -> None:
    pytest.importorskip(fw)
    to_dev, to_host = FRAMEWORKS[fw]
    for n in (max(1, case.block - 3), min(case.max_n, 3 * case.block + 5)):
        rng = np.random.default_rng(n)
        args = case.make_args(n, dtype, rng, masked=True)
        with np.errstate(all="ignore"):
            expected = case.reference(copy.deepcopy(args))
        dev = [to_dev(a) if isinstance(a, np.ndarray) else a for a in args]
        case.kernel[case.grid(n)](*dev, **K.unfused(dtype))
        for idx, exp in zip(case.outputs, expected):
            got = to_host(dev[idx], args[idx])
            assert_output(got, exp, case.tol(args[idx].dtype),
                          f"{case.name} on {fw}: output {idx} (n={n})")


# --- the value language (tests/test_language_values.py) on the GPU ------------------------------

def test_device_print_on_gpu_prints_the_interpreter_s_lines(capfd) -> None:
    import cupy

    try:
        import test_language_values as V
    except ImportError:
        from tests import test_language_values as V
    x = np.array([-2.5, 0, 3, 7.25], np.float32)
    V.device_print_kernel[(2,)](cupy.asarray(x), 4)
    cupy.cuda.runtime.deviceSynchronize()
    printed = capfd.readouterr().out.splitlines()
    # printf's lines arrive in no fixed order; each element is printed once
    assert sorted(printed) == sorted(V.device_print_lines(x, 2))


def test_early_return_none_argument_and_methods_on_gpu() -> None:
    import cupy

    try:
        import test_language_values as V
    except ImportError:
        from tests import test_language_values as V
    rng = np.random.default_rng(0)
    for n in (64, 1088):
        x = rng.standard_normal(n).astype(np.float32)
        y = cupy.zeros(n, cupy.float32)
        V.early_return_kernel[(8,)](cupy.asarray(x), y, n, 8)
        np.testing.assert_array_equal(cupy.asnumpy(y)[:64],
                                      V._early_return_reference(x, n, 8)[:64])
    x = rng.standard_normal(16).astype(np.float32)
    b = rng.standard_normal(16).astype(np.float32)
    y = cupy.zeros(16, cupy.float32)
    V.optional_bias_kernel[(1,)](cupy.asarray(x), None, y, 16)
    np.testing.assert_array_equal(cupy.asnumpy(y), x)
    V.optional_bias_kernel[(1,)](cupy.asarray(x), cupy.asarray(b), y, 16)
    np.testing.assert_array_equal(cupy.asnumpy(y), x + b)
    out = cupy.zeros(48, cupy.float32)
    ref = np.zeros(48, np.float32)
    V.methods_kernel[(1,)](cupy.asarray(x), out, 16)
    V.methods_kernel.interpret[(1,)](x, ref, 16)
    np.testing.assert_allclose(cupy.asnumpy(out), ref, rtol=2e-6, atol=1e-6)


def test_lower_rank_masks_and_values_and_static_loop_returns_on_gpu() -> None:
    import cupy

    try:
        import test_language_values as V
    except ImportError:
        from tests import test_language_values as V
    x = np.arange(64, dtype=np.float32)
    for n in (0, 5, 8):
        y, ref = cupy.zeros(128, cupy.float32), np.zeros(128, np.float32)
        V.rank_broadcast_memory_kernel[(1,)](cupy.asarray(x), y, n, 8)
        V.rank_broadcast_memory_kernel.interpret[(1,)](x, ref, n, 8)
        np.testing.assert_array_equal(cupy.asnumpy(y), ref)
    for n in range(6):
        y, ref = cupy.zeros(9, cupy.float32), np.zeros(9, np.float32)
        V.static_loop_return_kernel[(1,)](y, n)
        V.static_loop_return_kernel.interpret[(1,)](ref, n)
        np.testing.assert_array_equal(cupy.asnumpy(y), ref)
    x = np.random.default_rng(1).standard_normal(64).astype(np.float32)
    for returning in (True, False):
        y = cupy.zeros(4, cupy.float32)
        V.combine_with_if_kernel[(1,)](cupy.asarray(x), y, returning)
        np.testing.assert_array_equal(cupy.asnumpy(y), x.reshape(4, 16).max(1))


def test_rounding_toward_zero_on_gpu_matches_the_interpreter() -> None:
    import cupy

    try:
        import test_language_values as V
    except ImportError:
        from tests import test_language_values as V
    x = np.random.default_rng(2).uniform(-7e4, 7e4, 4).astype(np.float32)
    y, ref = cupy.zeros(4, cupy.float16), np.zeros(4, np.float16)
    V.downcast_kernel[(1,)](cupy.asarray(x), y, "rtz")
    V.downcast_kernel.interpret[(1,)](x, ref, "rtz")
    np.testing.assert_array_equal(cupy.asnumpy(y), ref)
    x64 = np.array([1 / 3, -1 / 3, 1e300, -1e300, 0.0, 2.0, 1e-320, -7.1], np.float64)
    y, ref = cupy.zeros(8, cupy.float32), np.zeros(8, np.float32)
    V.downcast64_kernel[(1,)](cupy.asarray(x64), y)
    V.downcast64_kernel.interpret[(1,)](x64, ref)
    np.testing.assert_array_equal(cupy.asnumpy(y), ref)
