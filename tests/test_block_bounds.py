"""Selects tested once per block (render_bounds): a loop's `tl.where` whose condition is
index arithmetic against scalars is written twice, without the select where one test of
scalars shows the condition true for every element.  The test must imply the condition,
element by element (else a wrong answer), and here, where the two sides of each
comparison vary along different axes, it is exact (else the copy would never run)."""

from __future__ import annotations

import importlib.util
import operator
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))

import attention as AT  # noqa: E402

MARK = "// where this test holds, so do the selects' conditions"
PREDICATES = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def _test_of(source: str) -> str | None:
    """The C condition of the first tested select, on one line; None where there is none."""
    at = source.find(MARK)
    if at < 0:
        return None
    text = source[source.index("if (", at) + 4:]
    return " ".join(text[:text.index(") {\n")].split())


def _as_python(c: str) -> str:
    """A test's C (64-bit casts, &&, integer + - * and comparisons) as Python, the C names
    of `i`, `s` and `t` (`s_`, where a kernel's other names take `s`) as theirs."""
    c = c.replace("static_cast<long long>(", "(").replace("&&", " and ")
    return re.sub(r"\b([ist])_+\b", r"\1", c)


def _load(tmp_path: Path, name: str, text: str):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.k


KERNEL = '''
import tilecc
import tilecc.language as tl

@tilecc.jit
def k(X, W, s, t, steps, BM: tl.constexpr, BN: tl.constexpr):
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for i in range(0, steps):
        rows = {a} * i + s + {b} * tl.arange(0, BM)
        cols = t - {c} * i - {d} * tl.arange(0, BN)
        acc = tl.where({cond}, acc + 1, acc)
    w = tl.load(W + tl.arange(0, BN)[:, None] * 16 + tl.arange(0, 16)[None, :])
    tl.store(X + tl.arange(0, BM)[:, None] * 16 + tl.arange(0, 16)[None, :], tl.dot(acc, w))
'''

_count = [0]


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(a=st.integers(-3, 3), b=st.integers(-3, 3), c=st.integers(-3, 3), d=st.integers(-3, 3),
       pred=st.sampled_from(sorted(PREDICATES)), second=st.sampled_from(["", "<", ">="]),
       bound=st.integers(-40, 40), bm=st.sampled_from([16, 32]), bn=st.sampled_from([16, 64]),
       data=st.data())
def test_the_test_holds_exactly_where_every_element_does(tmp_path, a, b, c, d, pred, second,
                                                         bound, bm, bn, data):
    cond = f"rows[:, None] {pred} cols[None, :]"
    if second:
        cond = f"({cond}) & (rows[:, None] {second} {bound})"
    _count[0] += 1
    kernel = _load(tmp_path, f"bounds_{_count[0]}", KERNEL.format(a=a, b=b, c=c, d=d, cond=cond))
    source = kernel.source("*fp32,*fp32,i32,i32,i32", BM=bm, BN=bn)
    test = _test_of(source)
    assert test is not None, source
    for _ in range(12):
        i, s, t = (data.draw(st.integers(-60, 60)) for _ in range(3))
        rows = a * i + s + b * np.arange(bm)
        cols = t - c * i - d * np.arange(bn)
        holds = PREDICATES[pred](rows[:, None], cols[None, :])
        if second:
            holds &= PREDICATES[second](rows[:, None], bound)
        assert eval(_as_python(test), {}, {"i": i, "s": s, "t": t}) == bool(holds.all()), \
            (test, i, s, t)


@pytest.mark.parametrize("causal", [False, True])
def test_attention_scores_are_masked_only_where_the_test_fails(causal):
    source = AT.attention_fwd.source(
        "*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp32:16,fp32,i32:16,i32:16,i32:16,i32,i32:16",
        arch="sm_90a", num_warps=8, HEAD_DIM=128, BLOCK_M=128, BLOCK_N=128, CAUSAL=causal)
    test = _test_of(source)
    assert test is not None
    assert "+ 127 < N_CTX" in test
    assert (">= static_cast<long long>(start_n) + 127" in test) == causal
    fast = source[source.index(MARK):]
    fast = fast[:fast.index("} else {")]
    assert "?" not in fast and re.search(r"qk_\d+\[r\] = qk\[r\] \* qk_scale;", fast)


CASES = {
    "a loaded value": "x > 0",
    "floats": "cols.to(tl.float32)[None, :] < 3.5",
    "a remainder": "(cols % 7)[None, :] < t",
    "a product of two scalars' blocks": "(cols * t)[None, :] < 9",
}


PLAIN = '''
import tilecc
import tilecc.language as tl

@tilecc.jit
def k(X, W, s, t, steps, BM: tl.constexpr, BN: tl.constexpr):
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    for i in range(0, steps):
        cols = s + i + tl.arange(0, BN)
        x = tl.load(X + offs)
        acc = tl.where({cond}, acc + 1, acc)
    {end}
'''
DOT_END = ("tl.store(X + offs, tl.dot(acc, tl.load(W + tl.arange(0, BN)[:, None] * BN + "
           "tl.arange(0, BN)[None, :])))")


@pytest.mark.parametrize("case", sorted(CASES))
def test_conditions_without_bounds_keep_their_selects(tmp_path, case):
    text = PLAIN.format(cond=CASES[case], end=DOT_END)
    source = _load(tmp_path, f"plain_{sorted(CASES).index(case)}", text).source(
        "*fp32,*fp32,i32,i32,i32", BM=16, BN=32)
    assert MARK not in source and "?" in source


def test_only_loops_with_tensor_core_products_test_their_selects(tmp_path):
    """A kernel that streams memory hides its selects behind its loads; their copies'
    branch would cost registers it needs (layer norm spills then)."""
    dot = PLAIN.format(cond="cols[None, :] < t", end=DOT_END)
    plain = PLAIN.format(cond="cols[None, :] < t", end="tl.store(X + offs, acc)")
    sig = "*fp32,*fp32,i32,i32,i32"
    assert MARK in _load(tmp_path, "with_dot", dot).source(sig, BM=16, BN=32)
    assert MARK not in _load(tmp_path, "streaming", plain).source(sig, BM=16, BN=32)


def test_selects_outside_loops_are_written_once(tmp_path):
    text = '''
import tilecc
import tilecc.language as tl

@tilecc.jit
def k(X, W, n, BLOCK: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.where(cols < n, 1.0, 2.0)
    w = tl.load(W + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :])
    tl.store(X + cols, tl.sum(tl.dot(w, w), axis=0) + x)
'''
    source = _load(tmp_path, "straight", text).source("*fp32,*fp32,i32", BLOCK=16)
    assert MARK not in source and "?" in source
