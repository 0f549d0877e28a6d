"""The generated source reads like code a person would write: no line over 100 columns
(the checked-in examples, CUDA and HIP) and no reduction loop that runs once."""

from __future__ import annotations

import pathlib
import re

import pytest

import tilecc
import tilecc.language as tl
from conftest_compilers import require_cuda_compiler, require_hip_compiler
from tilecc.transpiler.render_wrap import WIDTH, wrap_source

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"
SOURCES = sorted(EXAMPLES.glob("*.cu")) + sorted(EXAMPLES.glob("*.hip"))
# `for (int x = A; x < B; step)`: the loops whose trip count the text gives
_LOOP = re.compile(r"for \(int (\w+) = (\d+); \1 < (\d+); (\+\+\1|\1 \+= (\d+)|\1 <<= 1)\)")


def _trips(m: re.Match) -> int:
    first, bound, step = int(m.group(2)), int(m.group(3)), m.group(4)
    if "<<=" in step:
        return max(0, (bound - 1).bit_length() - (first.bit_length() - 1)) if first else 0
    by = 1 if step.startswith("++") else int(m.group(5))
    return max(0, -(-(bound - first) // by))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_example_lines_fit(path):
    long = [f"{path.name}:{n}: {line}" for n, line in
            enumerate(path.read_text().splitlines(), 1) if len(line) > WIDTH]
    assert not long, "\n".join(long)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_reductions_have_no_one_iteration_loops(path):
    once = [f"{path.name}:{n}: {line.strip()}"
            for n, line in enumerate(path.read_text().splitlines(), 1)
            for m in _LOOP.finditer(line)
            if m.group(1) in ("o", "j", "lane_mask", "warp") and _trips(m) <= 1]
    assert not once, "\n".join(once)


def test_trip_counts():
    def trips(text):
        return _trips(_LOOP.search(text))
    assert trips("for (int lane_mask = 32; lane_mask < 64; lane_mask <<= 1)") == 1
    assert trips("for (int lane_mask = 1; lane_mask < 32; lane_mask <<= 1)") == 5
    assert trips("for (int o = 0; o < 1; ++o)") == 1
    assert trips("for (int v = 0; v < 16; v += 8)") == 2


def _tokens(text: str) -> list[str]:
    return text.split()


def test_wrapping_changes_only_whitespace_in_code():
    line = ("    tc::cp_async<16>(kt_stages_base + 2 * (row / 64 * 4096 + tc::swizzled_chunk<8>(col, "
            "row % 64 / 8) * 8 + row % 8), K + base + Sliced4::coord0((v % 8 + (v / 8) * 8) / 8) "
            "* stride_m + Sliced5::coord0((v % 8)) + start_n_next * stride_m, start_n_next + "
            "Sliced4::coord0((v % 8 + (v / 8) * 8) / 8) < N_CTX ? 16 : 0);")
    wrapped = wrap_source(line)
    assert all(len(part) <= WIDTH for part in wrapped.splitlines()), wrapped
    assert _tokens(wrapped) == _tokens(line)
    assert "<16>" in wrapped and "swizzled_chunk<8>(col," in wrapped  # template arguments whole


def test_wrapping_leaves_strings_and_preprocessor_lines():
    text = ("  asm volatile(\"" + "x, " * 40 + "\");\n"
            "#define LONG " + "a + " * 40 + "b\n")
    assert wrap_source(text) == text


def test_wrapped_comment_keeps_its_words_and_indent():
    line = "    // " + " ".join(f"word{i}" for i in range(40))
    lines = wrap_source(line).splitlines()
    assert len(lines) > 1 and all(len(x) <= WIDTH for x in lines)
    assert all(x.startswith("    //") for x in lines)
    assert " ".join(x.strip().lstrip("/").strip() for x in lines) == line.strip()[3:]


def test_loop_body_moves_under_its_head():
    line = ("  for (int r = 0; r < 128; ++r) accumulator_1[r] = accumulator[r] >= 0.0f ? "
            "accumulator[r] : 0.01f * accumulator[r];")
    head, body = wrap_source(line).splitlines()
    assert head == "  for (int r = 0; r < 128; ++r)"
    assert body.startswith("    accumulator_1[r] = ")


@tilecc.jit
def _argmax_rows(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr, tl.argmax(tl.load(x_ptr + offs), axis=0))


@pytest.mark.parametrize("target", ["cuda", "hip"])
def test_small_reduction_is_straight_line_code(target):
    """Two elements per thread, two warps (and on CUDA's 32 lanes, one register out): each
    step is written once, for a reduction of two values (argmax: value and index)."""
    sig = "*fp32:16, *i32:16, 128" if target == "cuda" else "*fp32:16, *i32:16, 256"
    src = _argmax_rows.source(sig, target=target, num_warps=2)
    assert "for (int o = 0;" not in src and "for (int warp = 1;" not in src, src
    assert "for (int j = 1;" not in src, src
    assert "partial0[1]" in src and "partial1[1]" in src, src
    if target == "cuda":
        require_cuda_compiler()
    else:
        require_hip_compiler()
    _argmax_rows.compile(sig, target=target, num_warps=2,
                         arch="sm_80" if target == "cuda" else "gfx90a")


@tilecc.jit
def _checked_copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.device_assert(x >= 0, 'a "quoted" \\ word')
    tl.device_print('x "is" \\', x)
    tl.store(y_ptr + offs, x, mask=offs < n)


def test_assert_and_print_texts_are_c_string_literals():
    """The message and prefix reach C as string literals: quotes and backslashes escaped,
    in a register loop (a statement per element)."""
    src = _checked_copy.source("*fp32:16, *fp32:16, i32, 128", debug=True)
    assert r'TC_DEVICE_ASSERT(x[r] >= 0.0f, "a \"quoted\" \\ word", ' in src, src
    assert r'" x \"is\" \\: ", static_cast<double>(x[r]));' in src, src
    assert re.search(r"for \(int r = 0; r < 1; \+\+r\)\s+TC_DEVICE_ASSERT\(", src), src
