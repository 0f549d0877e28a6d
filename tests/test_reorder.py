"""Block reordering (tests/kernels_reorder.py: sort, topk, bitonic_merge, flip, gather,
histogram, cat, interleave, xor_sum / reduce_or, swizzle2d): on the interpreter against
NumPy (Hypothesis draws the shapes), compiled by NVRTC and hiprtc with no warnings and no
spills, and on the GPU (`pytest -m gpu`); and the errors of their misuse.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st

import tilecc
import tilecc.language as tl

try:
    import kernels as K
    import kernels_reorder as KR
    from conftest_compilers import (compile_cleanly_together, require_cuda_compiler,
                                    require_hip_compiler)
    from test_blocks import check_outputs, run_interpreted, shapes
    from test_compile_kernels import TARGETS, assert_clean_compile
    from test_gpu_cases import FRAMEWORKS
except ImportError:  # tests/ imported as a package
    from tests import kernels as K
    from tests import kernels_reorder as KR
    from tests.conftest_compilers import (compile_cleanly_together, require_cuda_compiler,
                                          require_hip_compiler)
    from tests.test_blocks import check_outputs, run_interpreted, shapes
    from tests.test_compile_kernels import TARGETS, assert_clean_compile
    from tests.test_gpu_cases import FRAMEWORKS


def _interp_params():
    for case in KR.CASES_REORDER:
        for dt in case.dtypes:
            yield pytest.param(case, dt, id=f"{case.name}-{K.tl_name(dt)}")


@pytest.mark.parametrize("case,dtype", list(_interp_params()))
def test_reorder_case_matches_numpy(case, dtype) -> None:
    @settings(max_examples=6, deadline=None, database=None, derandomize=True,
              phases=[Phase.explicit, Phase.generate],
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(n=shapes(case), seed=st.integers(0, 2**32 - 1))
    def check(n, seed):
        note(f"shape={n} seed={seed}")
        run_interpreted(case, dtype, n, seed)

    check()


def _compile_params():
    for case in KR.CASES_REORDER:
        for sig in case.signatures:
            for target, arch in TARGETS:
                yield pytest.param(case, sig, target, arch, id=f"{case.name}-{arch}-[{sig}]")


@pytest.mark.parametrize("case,signature,target,arch", list(_compile_params()))
def test_reorder_case_compiles_cleanly(case, signature: str, target: str, arch: str) -> None:
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    cases = [(c.kernel, sig, c.options) for c in KR.CASES_REORDER for sig in c.signatures]
    if not compile_cleanly_together("reorder", target, arch, lambda: cases):
        assert_clean_compile(case.kernel, signature, target, arch, **case.options)


def _gpu_params():
    for case in KR.CASES_REORDER:
        for dt in case.dtypes:
            for fw in FRAMEWORKS:
                if fw == "cupy" and np.dtype(dt) == K.BF16:
                    continue  # CuPy has no bfloat16 arrays
                yield pytest.param(case, dt, fw, id=f"{case.name}-{K.tl_name(dt)}-{fw}")


@pytest.mark.gpu
@pytest.mark.parametrize("case,dtype,fw", list(_gpu_params()))
def test_reorder_case_on_gpu(case, dtype, fw: str) -> None:
    pytest.importorskip(fw)
    to_dev, to_host = FRAMEWORKS[fw]
    sizes = [tuple(max(1, b - 3) if top > 1 else 1 for b, top in case.dims),
             tuple(top for _, top in case.dims)]
    for n in sizes:
        for seed in range(2):
            rng = np.random.default_rng(seed)
            args = case.make_args(n, dtype, rng)
            before = copy.deepcopy(args)
            dev = [to_dev(a) if isinstance(a, np.ndarray) else a for a in args]
            case.kernel[case.grid(n)](*dev, **case.options)
            outs = [to_host(dev[i], args[i]) for i in case.outputs]
            check_outputs(case, before, outs, f"{case.name} on {fw} n={n}")


# --- examples: top-k with indices, histogram ------------------------------------------------

try:
    from test_blocks import load_example
except ImportError:  # tests/ imported as a package
    from tests.test_blocks import load_example

topk_ex = load_example("topk")
histogram_ex = load_example("histogram")


def _topk_input(rows: int, cols: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = (rng.integers(-30, 30, (rows, cols)) * 0.25).astype(np.float32)  # many ties
    x[rng.random((rows, cols)) < 0.05] = -0.0
    return x


@pytest.mark.parametrize("rows,cols,k", [(1, 8, 8), (5, 100, 8), (9, 128, 1), (3, 33, 16)])
def test_topk_example_interpreted(rows, cols, k) -> None:
    x = _topk_input(rows, cols, seed=rows * cols)
    v, i = topk_ex.topk(x, k)
    want_v, want_i = topk_ex.reference(x, k)
    np.testing.assert_array_equal(v, want_v)
    # -0.0 and 0.0 tie in NumPy's order but not in the packed keys (-0.0 sorts below 0.0)
    same = want_v != 0
    np.testing.assert_array_equal(i[same], want_i[same])


@pytest.mark.parametrize("n", [1, 1000, 3 * 1024 + 17])
def test_histogram_example_interpreted(n) -> None:
    x = np.random.default_rng(n).integers(0, 256, n).astype(np.uint8)
    hist = histogram_ex.histogram(x, np.ones(256, np.int32))
    np.testing.assert_array_equal(hist, 1 + np.bincount(x, minlength=256))


@pytest.mark.gpu
def test_examples_on_gpu() -> None:
    cupy = pytest.importorskip("cupy")
    x = _topk_input(37, 100, seed=1)
    v, i = topk_ex.topk(cupy.asarray(x), 8)
    want_v, want_i = topk_ex.reference(x, 8)
    np.testing.assert_array_equal(cupy.asnumpy(v), want_v)
    same = want_v != 0
    np.testing.assert_array_equal(cupy.asnumpy(i)[same], want_i[same])
    b = np.random.default_rng(0).integers(0, 256, 100_003).astype(np.uint8)
    hist = histogram_ex.histogram(cupy.asarray(b), cupy.zeros(256, np.int32))
    np.testing.assert_array_equal(cupy.asnumpy(hist), np.bincount(b, minlength=256))


# --- the ops one by one, on random shapes, dtypes and values (interpreter) ----------------------

@tilecc.jit
def _sort_block(X, Y, M: tl.constexpr, N: tl.constexpr, DESCENDING: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(Y + offs, tl.sort(tl.load(X + offs), descending=DESCENDING))


@tilecc.jit
def _topk_block(X, Y, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)[:, None]
    tl.store(Y + rm * K + tl.arange(0, K)[None, :],
             tl.topk(tl.load(X + rm * N + tl.arange(0, N)[None, :]), K))


@tilecc.jit
def _flip_gather_block(X, I, F, G, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(X + offs)
    tl.store(F + offs, tl.flip(x, AXIS))
    tl.store(G + offs, tl.gather(x, tl.load(I + offs), AXIS))


@tilecc.jit
def _histogram_block(X, H, n, N: tl.constexpr, BINS: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(H + tl.arange(0, BINS), tl.histogram(tl.load(X + offs), BINS, mask=offs < n))


SHAPES = [(1, 1), (1, 2), (4, 8), (2, 64), (1, 256), (8, 16), (16, 4)]
DTYPES = [np.float32, np.float16, np.int8, np.uint16, np.int64]


def _random_block(rng, shape, dt, nan: bool) -> np.ndarray:
    if np.dtype(dt).kind == "f":
        x = (rng.integers(-6, 6, shape) * 0.5).astype(dt)  # ties
        if nan:
            x[rng.random(shape) < 0.1] = np.nan
        return x
    info = np.iinfo(dt)
    return rng.integers(max(info.min, -100), min(info.max, 100), shape).astype(dt)


settings_ops = settings(max_examples=25, deadline=None, database=None, derandomize=True,
                        suppress_health_check=[HealthCheck.too_slow])


@settings_ops
@given(shape=st.sampled_from(SHAPES), dt=st.sampled_from(DTYPES), descending=st.booleans(),
       nan=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_sort_is_tritons_network(shape, dt, descending, nan, seed) -> None:
    x = _random_block(np.random.default_rng(seed), shape, dt, nan)
    y = np.zeros_like(x)
    _sort_block.interpret[(1,)](x, y, *shape, descending)
    want = KR.bitonic_sort(x, descending)
    np.testing.assert_array_equal(y, want)
    if not np.isnan(x.astype(np.float64)).any():  # without NaN, the network sorts
        order = np.sort(x, axis=1)
        np.testing.assert_array_equal(y, order[:, ::-1] if descending else order)


@settings_ops
@given(shape=st.sampled_from([s for s in SHAPES if s[1] > 1]), dt=st.sampled_from(DTYPES),
       log_k=st.integers(0, 8), nan=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_topk_is_tritons_network(shape, dt, log_k, nan, seed) -> None:
    m, n = shape
    k = 1 << min(log_k, n.bit_length() - 1)
    x = _random_block(np.random.default_rng(seed), shape, dt, nan)
    y = np.zeros((m, k), dt)
    _topk_block.interpret[(1,)](x, y, m, n, k)
    want = KR.bitonic_topk(x, k).astype(dt)
    np.testing.assert_array_equal(y, want)
    if not np.isnan(x.astype(np.float64)).any():
        np.testing.assert_array_equal(y, np.sort(x, axis=1)[:, ::-1][:, :k])


@settings_ops
@given(shape=st.sampled_from(SHAPES), dt=st.sampled_from(DTYPES), axis=st.sampled_from([0, 1, -1]),
       seed=st.integers(0, 2**32 - 1))
def test_flip_and_gather_match_numpy(shape, dt, axis, seed) -> None:
    rng = np.random.default_rng(seed)
    x = _random_block(rng, shape, dt, nan=False)
    idx = rng.integers(0, shape[axis], shape).astype(rng.choice([np.int32, np.int64, np.int16]))
    f, g = np.zeros_like(x), np.zeros_like(x)
    _flip_gather_block.interpret[(1,)](x, idx, f, g, *shape, axis)
    np.testing.assert_array_equal(f, np.flip(x, axis))
    np.testing.assert_array_equal(g, np.take_along_axis(x, idx.astype(np.int64), axis))


@settings_ops
@given(n_log=st.integers(0, 10), bins_log=st.integers(0, 8), dt=st.sampled_from(
    [np.int32, np.int8, np.uint8, np.int64, np.uint32]), valid=st.floats(0, 1),
    seed=st.integers(0, 2**32 - 1))
def test_histogram_matches_numpy(n_log, bins_log, dt, valid, seed) -> None:
    n, bins = 1 << n_log, 1 << bins_log
    rng = np.random.default_rng(seed)
    info = np.iinfo(dt)
    x = rng.integers(max(info.min, -5), min(info.max, bins + 5), n).astype(dt)
    count = int(valid * n)
    h = np.full(bins, -1, np.int32)
    _histogram_block.interpret[(1,)](x, h, count, n, bins)
    v = x[:count].astype(np.int64)
    v = v[(v >= 0) & (v < bins)]  # values outside the bins are not counted
    np.testing.assert_array_equal(h, np.bincount(v, minlength=bins))


# --- placements the generated code relies on --------------------------------------------------

@tilecc.jit
def _histogram_reshaped_mask(X, Mk, H, N: tl.constexpr, BINS: tl.constexpr):
    x = tl.load(X + tl.arange(0, N))
    # a mask whose own placement differs from x's (a reshape's result: one element a thread)
    m2 = tl.load(Mk + tl.arange(0, N // 32)[:, None] * 32 + tl.arange(0, 32)[None, :])
    tl.store(H + tl.arange(0, BINS), tl.histogram(x, BINS, mask=tl.reshape(m2 != 0, (N,))))


def test_histogram_mask_is_placed_with_its_values() -> None:
    """Each thread tests mask register r for value register r: the layouts pass must give
    both one placement (else the GPU counts under another element's mask)."""
    k = _histogram_reshaped_mask.ir("*i32:16,*u8:16,*i32:16,4096,32")
    (op,) = [op for op in k.walk() if op.kind == "histogram"]
    assert op.operands[0].layout == op.operands[1].layout
    x = np.random.default_rng(0).integers(0, 32, 4096).astype(np.int32)
    mk = np.random.default_rng(1).integers(0, 2, 4096).astype(np.uint8)
    h = np.zeros(32, np.int32)
    _histogram_reshaped_mask.interpret[(1,)](x, mk, h, 4096, 32)
    np.testing.assert_array_equal(h, np.bincount(x[mk != 0], minlength=32))


@pytest.mark.parametrize("target,arch", TARGETS)
def test_histogram_reshaped_mask_compiles_cleanly(target, arch) -> None:
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    assert_clean_compile(_histogram_reshaped_mask, "*i32:16,*u8:16,*i32:16,4096,32", target, arch)


@pytest.mark.gpu
def test_histogram_reshaped_mask_on_gpu() -> None:
    cupy = pytest.importorskip("cupy")
    x = np.random.default_rng(0).integers(0, 32, 4096).astype(np.int32)
    mk = np.random.default_rng(1).integers(0, 2, 4096).astype(np.uint8)
    h = cupy.zeros(32, np.int32)
    _histogram_reshaped_mask[(1,)](cupy.asarray(x), cupy.asarray(mk), h, 4096, 32)
    np.testing.assert_array_equal(cupy.asnumpy(h), np.bincount(x[mk != 0], minlength=32))
