"""The generated source reads like code a person would write: no line over 100 columns
(the checked-in examples, CUDA and HIP; the code that writes each line marks where it may
break) and no reduction loop that runs once."""

from __future__ import annotations

import pathlib
import re

import pytest

import tilecc
import tilecc.language as tl
from conftest_compilers import require_cuda_compiler, require_hip_compiler
from tilecc.transpiler.line_breaks import BODY, BREAK, SPACE, WIDTH, joined, lay_out, words

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


def test_a_line_that_fits_keeps_its_marks_as_spaces():
    line = f"  x[r] ={BREAK}a +{SPACE}b;"
    assert lay_out(line) == "  x[r] = a + b;"


def test_statement_breaks_between_its_parts_first():
    args = [f"argument_number_{i}[r]" for i in range(8)]
    line = f"    y[r] ={BREAK}tc::call({joined(args, ', ')}) +{SPACE}z[r];"
    lines = lay_out(line).splitlines()
    assert len(lines) > 1 and all(len(x) <= WIDTH for x in lines), lines
    assert lines[0].startswith("    y[r] = tc::call(argument_number_0[r],") and lines[0].endswith("],")
    assert all(x.startswith("        ") for x in lines[1:])  # four columns in
    assert _tokens("\n".join(lines)) == _tokens(line.replace(BREAK, " ").replace(SPACE, " "))


def test_operands_break_only_where_parts_do_not_fit():
    operands = "".join(f" +{SPACE}operand_{i}[r]" for i in range(12))
    lines = lay_out(f"  total[r] ={BREAK}first[r]{operands};").splitlines()
    assert lines[0] == "  total[r] ="  # the statement's own break first
    assert all(len(x) <= WIDTH and x.startswith("      ") for x in lines[1:]), lines
    assert lines[1].endswith(" +"), lines  # after the operator


def test_loop_body_moves_under_its_head():
    line = (f"  for (int r = 0; r < 128; ++r){BODY}accumulator_1[r] ={BREAK}accumulator[r] >= 0.0f"
            f" ?{SPACE}accumulator[r] :{SPACE}0.01f * accumulator[r];")
    head, body = lay_out(line).splitlines()
    assert head == "  for (int r = 0; r < 128; ++r)"
    assert body.startswith("    accumulator_1[r] = ")


def test_unmarked_text_and_preprocessor_lines_stay():
    text = ("  asm volatile(\"" + "x, " * 40 + "\");\n"
            "#define LONG " + f"a +{SPACE}" * 40 + "b\n")
    assert lay_out(text) == text.replace(SPACE, " ")


def test_wrapped_comment_keeps_its_words_and_indent():
    line = "    // " + " ".join(f"word{i}" for i in range(40))
    lines = lay_out(words(line)).splitlines()
    assert len(lines) > 1 and all(len(x) <= WIDTH for x in lines)
    assert all(x.startswith("    //") for x in lines)
    assert lines[1].startswith("    //   word")  # under the comment's text
    assert " ".join(x.strip().lstrip("/").strip() for x in lines) == line.strip()[3:]


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


@pytest.mark.parametrize("kernel,sig", [
    (_checked_copy, "*fp32:16, *fp32:16, i32, 128"),
    (_argmax_rows, "*fp32:16, *i32:16, 128"),
])
def test_layout_changes_whitespace_only(kernel, sig, monkeypatch):
    """The source as laid out, and as written with every mark a space (one line per
    statement): the same tokens (a comment's words the same, its lines aside), and no
    mark left in the source."""
    from tilecc.transpiler import line_breaks, render

    monkeypatch.setattr(render, "lay_out", line_breaks.flat)
    written = kernel.source(sig, debug=True, num_warps=4)
    monkeypatch.undo()
    again = kernel.source(sig, debug=True, num_warps=4)
    assert not any(c in again for c in line_breaks._MARKS)
    def words_of(text):
        return _tokens(re.sub(r"(?m)^\s*//", "", text))
    assert again != written and words_of(again) == words_of(written)
    assert max(map(len, again.splitlines())) <= WIDTH < max(map(len, written.splitlines()))
