"""Python forms that real Triton code uses, with Triton 3.6's answers: one-line bodies,
casts to the type a value has, `None` pointers advanced in loops under a constexpr guard,
`and` / `or` mixing compile-time and run-time operands, `isinstance` / `hasattr` / `is None`
on kernel values, dtypes and descriptors, a constexpr's `.value` / `.type` / `.dtype`, and
scans and reductions whose combine function comes from anywhere — on the interpreter
against NumPy, and compiled by NVRTC and hiprtc."""

from __future__ import annotations

import numpy as np
import pytest

import tilecc
import tilecc.language as tl
from conftest_compilers import require_cuda_compiler, require_hip_compiler
from tilecc.errors import CompilationError


def _compiles(kernel, signature: str, target: str) -> None:
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    kernel.compile(signature, target=target)


# --- one-line bodies ----------------------------------------------------------------------------

@tilecc.jit
def exp_fp32(x): return tl.exp(x.to(tl.float32))


@tilecc.jit
def at_least(x, lo):
    if lo > 0: return tl.maximum(x, lo)
    return x


@tilecc.jit
def one_line_bodies_kernel(x_ptr, out_ptr, n, lo, BLOCK: tl.constexpr, SHIFT: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    acc = 0.0
    for i in range(3): acc += i * 0.5
    if SHIFT: x = x + acc
    else: x = x - acc
    while acc < 4.0: acc += 1.0
    if n > 4: x = x * 2.0; acc = acc + 0.25
    tl.store(out_ptr + offs, exp_fp32(at_least(x, lo)) + acc, mask=offs < n)


@pytest.mark.parametrize("n,lo,shift", [(8, 0.0, True), (3, 0.5, False), (6, -1.0, False)])
def test_one_line_bodies_run_as_their_indented_forms(n, lo, shift) -> None:
    x = np.linspace(-1, 1, 8).astype(np.float32)
    out = np.zeros(8, np.float32)
    one_line_bodies_kernel.interpret[(1,)](x, out, n, lo, 8, shift)
    y = np.where(np.arange(8) < n, x, 0) + (1.5 if shift else -1.5)
    acc = 4.5
    if n > 4:
        y, acc = y * 2, acc + 0.25
    if lo > 0:
        y = np.maximum(y, lo)
    np.testing.assert_allclose(out[:n], (np.exp(y) + acc)[:n], rtol=1e-6)
    source = one_line_bodies_kernel.source("*fp32,*fp32,i32,fp32,8,True")
    for line in ("for i in range(3): acc += i * 0.5", "if n > 4: x = x * 2.0; acc = acc + 0.25"):
        assert f": {line}\n" in source  # the whole line, as written, above its code


@pytest.mark.parametrize("target", ["cuda", "hip"])
def test_one_line_bodies_compile(target) -> None:
    _compiles(one_line_bodies_kernel, "*fp32,*fp32,i32,fp32,8,False", target)
