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
    from conftest_compilers import require_cuda_compiler, require_hip_compiler
    from test_blocks import check_outputs, run_interpreted, shapes
    from test_compile_kernels import TARGETS, assert_clean_compile
    from test_gpu_cases import FRAMEWORKS
except ImportError:  # tests/ imported as a package
    from tests import kernels as K
    from tests import kernels_reorder as KR
    from tests.conftest_compilers import require_cuda_compiler, require_hip_compiler
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
