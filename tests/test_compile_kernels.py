"""Every kernel of tests/kernels.py compiled for real, with no GPU: the generated CUDA by
NVRTC for sm_80 and sm_90, the generated HIP by hiprtc for gfx90a.

A compile must be clean: no warning in the compiler's log and, for CUDA, no register
spills in ptxas' report.  Every signature of every case is compiled for each target
(the signatures are a few representative dtypes and alignments, not all of them).
"""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

import tilecc
import tilecc.language as tl

try:
    from conftest_compilers import (clean_log_problem, compile_cleanly_together,
                                    require_cuda_compiler, require_hip_compiler)
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import (clean_log_problem, compile_cleanly_together,
                                          require_cuda_compiler, require_hip_compiler)

try:
    import kernels as K
except ImportError:
    from tests import kernels as K

TARGETS = (("cuda", "sm_80"), ("cuda", "sm_90"), ("hip", "gfx90a"))


def _params():
    seen = set()
    for case in K.CASES:
        for sig in case.signatures:
            for target, arch in TARGETS:
                key = (case.kernel, sig, target, arch)
                if key in seen:  # several cases share one kernel and signature
                    continue
                seen.add(key)
                yield pytest.param(case, sig, target, arch,
                                   id=f"{case.name}-{arch}-[{sig}]")


def _require(target: str) -> None:
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()


def assert_clean_compile(kernel, signature: str, target: str, arch: str, **options) -> None:
    binary = kernel.compile(signature, target=target, arch=arch, **options)
    assert binary.target == target and binary.arch in (arch, arch + "a")
    assert len(binary.data) > 0
    problem = clean_log_problem(binary.log or "", target)
    # the source as it was compiled (constexprs and options given as keywords included)
    assert problem is None, \
        f"{problem}\n{kernel.source(signature, target=target, arch=arch, **options)}"


def _cases_of(target: str, arch: str):
    return [(p.values[0].kernel, p.values[1], {}) for p in _params()
            if p.values[2:] == (target, arch)]


@pytest.mark.parametrize("case,signature,target,arch", list(_params()))
def test_case_compiles_cleanly(case: K.Case, signature: str, target: str, arch: str) -> None:
    _require(target)
    if not compile_cleanly_together("kernels", target, arch, lambda: _cases_of(target, arch)):
        assert_clean_compile(case.kernel, signature, target, arch)


@pytest.mark.parametrize("target,arch", [TARGETS[0], TARGETS[2]])
@pytest.mark.parametrize("kernel,signature", [
    (K.checked_sqrt_kernel, K.ASSERTS.signatures[0]),
    (K.softplus_kernel, K.SOFTPLUS.signatures[0]),
], ids=["device_assert", "triton_device_assert"])
def test_debug_mode_device_asserts_compile(kernel, signature, target, arch) -> None:
    _require(target)
    source = kernel.source(signature, target=target, debug=True)
    assert "TC_DEVICE_ASSERT" in source
    assert "TC_DEVICE_ASSERT" not in kernel.source(signature, target=target, debug=False)
    assert_clean_compile(kernel, signature, target, arch, debug=True)


@pytest.mark.parametrize("num_warps", [1, 8])
def test_other_warp_counts_compile(num_warps: int) -> None:
    require_cuda_compiler()
    assert_clean_compile(K.add_kernel, K.ADD.signatures[0], "cuda", "sm_90", num_warps=num_warps)


# --- the generated source reads like the Python -------------------------------------------

def _statement_lines(fn) -> dict[str, int]:
    lines, first = inspect.getsourcelines(fn)
    return {line.strip(): first + i for i, line in enumerate(lines)}


@pytest.mark.parametrize("target", ["cuda", "hip"])
def test_source_has_python_statements_comments_and_names(target: str) -> None:
    src = K.horner_kernel.source(K.HORNER.signatures[0], target=target)
    lines = _statement_lines(K.horner_kernel.fn)
    for stmt in ("mask = offs < n", "x = tl.load(x_ptr + offs, mask=mask, other=0.0)",
                 "acc = acc * x + tl.load(coef_ptr + i)",
                 "tl.store(out_ptr + offs, acc, mask=mask)"):
        assert f"// L{lines[stmt]}: {stmt}" in src, stmt
    assert f"// L{lines['for i in tl.range(degree - 1, -1, -1):']}: " \
           "for i in tl.range(degree - 1, -1, -1):" in src
    # the author's comment above a statement is carried over
    assert "// p(x) = c[0] + c[1] x + ... + c[degree] x**degree, highest coefficient first" \
        in src
    # parameters and variables keep their Python names
    for name in ("x_ptr", "coef_ptr", "out_ptr", "degree", "offs", "mask", "acc"):
        assert re.search(rf"\b{name}\b(\[|\s|,|\))", src), name
    assert "horner_kernel(" in src


def test_source_names_helper_statements_and_folds_constexpr_branches() -> None:
    src = K.silu_kernel.source(K.SILU.signatures[0])
    helper_lines = _statement_lines(K.block_offsets.fn)
    stmt = "offs = pid * BLOCK + tl.arange(0, BLOCK)"
    assert f"// block_offsets L{helper_lines[stmt]}: {stmt}" in src
    assert "silu_kernel(" in src and "tc::exp(" in src  # silu() and tl.sigmoid inlined
    exp_src = K.unary_math_kernel.source("*fp32:16,*fp32:16,i32,'exp',1024,False")
    assert "tc::exp(" in exp_src and "tc::log(" not in exp_src and "tc::sin(" not in exp_src
    assert 'FN == "exp"' not in exp_src  # a constexpr `if` leaves no code behind


def test_source_line_directives_point_at_the_python_file() -> None:
    src = K.add_kernel.source(K.ADD.signatures[0], line_directives=True)
    line = _statement_lines(K.add_kernel.fn)["tl.store(out_ptr + offsets, x + y, mask=mask)"]
    assert f'#line {line} "{K.add_kernel.fn.__code__.co_filename}"' in src


@tilecc.jit
def _constant_in_one_branch(x_ptr, out_ptr, n):
    x = tl.load(x_ptr + tl.program_id(0))
    if n > 3:  # one branch yields a Python number, the other a loaded scalar
        y = 0.0
    else:
        y = x - 1.0
    tl.store(out_ptr + tl.program_id(0), y)


@pytest.mark.parametrize("target,arch", TARGETS)
def test_a_branch_yielding_a_python_number_renders_and_compiles(target, arch) -> None:
    """The number becomes a constant made outside any statement: no comment for it, the
    rest as usual (this crashed the renderer)."""
    src = _constant_in_one_branch.source("*fp32,*fp32,i32", target=target)
    assert "0.0f;" in src and "// L" in src
    _require(target)
    assert_clean_compile(_constant_in_one_branch, "*fp32,*fp32,i32", target, arch)
    x = np.arange(4, dtype=np.float32)
    for n, want in ((5, np.zeros(4, np.float32)), (2, x - 1)):
        out = np.full(4, -7.0, np.float32)
        _constant_in_one_branch.interpret[(4,)](x, out, n)
        np.testing.assert_array_equal(out, want)
