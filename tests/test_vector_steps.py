"""Where a thread's cp.async copies land in a pipeline's stage: the first vector's place held
in one register, the others at constant distances from it, where those distances are the
same in every thread (`DotWriter.vector_steps`); a register per vector where they are not.

The distances are worked out in Python (`DotWriter.operand_place`), so the first test holds
that model to the C the generated code computes, element by element, for every operand tile
the builds below stage.  The others check the source the copies are issued from and clean
compiles; the products' values are checked on the GPU by the matmul tests.
"""

from __future__ import annotations

import re

import pytest

from tilecc.transpiler import render_dot
from tilecc.transpiler.line_breaks import flat

from conftest_compilers import require_cuda_compiler
import kernels_dot as KD
from test_blocks import load_example
from test_compile_kernels import assert_clean_compile

matmul = load_example("matmul")
TUTORIAL = ("*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,"
            "i32:1,{bm},{bn},{bk},8,''")
DOT_LOOP = ("*{dt}:16,*{dt}:16,*{acc}:16,i32,i32,i32:16,i32:16,i32:1,{b_strides},i32:16,"
            "{bm},{bn},{bk},0")
N_MAJOR, K_MAJOR = "i32:16,i32:1", "i32:1,i32:16"  # B's strides (K, N): rows, or columns


# A stored M-major (its strides (M, K): columns), M a multiple of 16: the wgmma builds stage
# it M-major (passes.dot.a_m_major), copied 16 bytes along M
A_M_MAJOR = ("*{dt}:16,*{dt}:16,*fp32:16,i32:16,i32,i32:16,i32:1,i32:16,i32:16,i32:1,i32:16,"
             "{bm},{bn},{bk},0")


def dot_loop(dt: str, bm: int, bn: int, bk: int, b_strides: str = N_MAJOR,
             acc: str = "fp32") -> str:
    return DOT_LOOP.format(dt=dt, acc=acc, b_strides=b_strides, bm=bm, bn=bn, bk=bk)


# (kernel, signature, arch, warps): tiles of several shapes, element sizes and units
BUILDS = [
    (matmul.matmul_kernel, TUTORIAL.format(bm=128, bn=128, bk=64), "sm_90", 4),
    (matmul.matmul_kernel, TUTORIAL.format(bm=128, bn=256, bk=64), "sm_90", 8),
    (matmul.matmul_kernel, TUTORIAL.format(bm=64, bn=128, bk=32), "sm_90", 4),
    (matmul.matmul_kernel, TUTORIAL.format(bm=128, bn=128, bk=64), "sm_80", 4),
    (matmul.matmul_kernel, TUTORIAL.format(bm=64, bn=64, bk=32), "sm_80", 4),
    (KD.dot_loop_kernel, dot_loop("bf16", 32, 256, 32), "sm_90", 4),
    (KD.dot_loop_kernel, dot_loop("fp16", 64, 128, 64, K_MAJOR), "sm_90", 4),
    (KD.dot_loop_kernel, dot_loop("fp16", 64, 128, 64, K_MAJOR), "sm_80", 4),
    (KD.dot_loop_kernel, dot_loop("fp8e4nv", 128, 128, 64, K_MAJOR), "sm_90", 4),
    (KD.dot_loop_kernel, dot_loop("fp32", 64, 64, 32), "sm_90", 4),
    (KD.dot_loop_kernel, dot_loop("fp32", 64, 64, 32), "sm_80", 4),
    (KD.dot_loop_kernel, dot_loop("i8", 64, 64, 64, acc="i32"), "sm_80", 4),
    (KD.dot_loop_kernel, A_M_MAJOR.format(dt="fp16", bm=64, bn=128, bk=64), "sm_90", 4),
    (KD.dot_loop_kernel, A_M_MAJOR.format(dt="bf16", bm=128, bn=64, bk=32), "sm_90", 4),
    (KD.dot_loop_kernel, A_M_MAJOR.format(dt="fp16", bm=128, bn=128, bk=64), "sm_90", 8),
    (KD.dot_loop_kernel, A_M_MAJOR.format(dt="fp16", bm=256, bn=64, bk=32), "sm_90", 8),
]


def _source(kernel, sig: str, arch: str, warps: int) -> str:
    """The build that copies by cp.async (on sm_90 too: no descriptors made for TMA)."""
    return kernel.source(sig, arch=arch, num_warps=warps, num_stages=3, options=kernel.options(
        made_descriptor_tma=False))


def _chunk(chunks: int, row: int, chunk: int) -> int:
    """`tc::swizzled_chunk<chunks>(row, chunk)`, as tilecc.h spells it."""
    span = chunks if chunks < 8 else 8
    rows_per_128b = 8 // chunks if chunks < 8 else 1
    return row * chunks + (chunk ^ ((row // rows_per_128b) % span))


def _a_row(warps: int, rows_per_group: int, row: int) -> int:
    """`tc::wgmma_a_row<warps, rows_per_group>(row)`, as tilecc.h spells it."""
    g, warp, rep = row % 8, (row // 8) % warps, row // (8 * warps)
    return (warp // 4) * rows_per_group + 64 * (rep // 2) + 16 * (warp % 4) + 8 * (rep % 2) + g


def _c_offset(text: str, row: int, col: int) -> int:
    """The element offset the generated C computes for (row, col), by evaluating its text
    (non-negative integers: C's `/` is Python's `//`)."""
    text = flat(text).replace("/", "//")
    text = re.sub(r"tc::swizzled_chunk<(\d+)>\(", r"_chunk(\1, ", text)
    text = re.sub(r"tc::wgmma_a_row<(\d+), (\d+)>\(", r"_a_row(\1, \2, ", text)
    return eval(text, {"_chunk": _chunk, "_a_row": _a_row, "row": row, "col": col})


def _staged(monkeypatch) -> list:
    """Each (writer, dot, operand) whose copies' places the builds work out."""
    seen = []
    steps = render_dot.DotWriter.vector_steps

    def record(self, dot, which, layout, vec):
        seen.append((self, dot, which))
        return steps(self, dot, which, layout, vec)

    monkeypatch.setattr(render_dot.DotWriter, "vector_steps", record)
    return seen


def test_the_python_places_are_the_offsets_the_generated_code_computes(monkeypatch) -> None:
    seen = _staged(monkeypatch)
    for kernel, sig, arch, warps in BUILDS:
        before = len(seen)
        _source(kernel, sig, arch, warps)
        assert len(seen) > before, sig  # (an operand the build copies by cp.async)
    assert {which for _, _, which in seen} == {0, 1}
    for writer, dot, which in seen:
        rows, cols = dot.operands[which].type.shape
        text = writer.operand_offset(dot, which, "row", "col")
        for r in range(rows):
            for c in range(cols):
                assert writer.operand_place(dot, which, r, c) == _c_offset(text, r, c), \
                    (str(dot.operands[which].type), which, r, c)


def _copies(src: str) -> list[str]:
    """The shared-memory address of each cp.async copy in the pipelined loops."""
    return re.findall(r"tc::cp_async<\d+>\(([^,]*),", flat(src.split("#include")[1]))


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_the_tutorial_copies_address_one_register_and_constants(arch) -> None:
    """Triton's matmul tutorial: every thread's vectors of A and of B lie at the same
    distances from its first, so the copies add a constant to one register (ptxas folds
    it into the instruction: no address arithmetic per vector in the K loop)."""
    src = _source(matmul.matmul_kernel, TUTORIAL.format(bm=128, bn=128, bk=64), arch, 4)
    copies = _copies(src)
    assert copies and all(
        re.fullmatch(r"\w+_base \+ \w+_at( \+ v / 8 \* \d+| \+ \w+_at_step\[v / 8\])", c)
        for c in copies), copies
    assert "unsigned a_at;" in src and "unsigned b_at;" in src
    assert "a_at[" not in src and "b_at[" not in src


def test_steps_that_differ_between_threads_keep_a_register_per_vector(monkeypatch) -> None:
    """A 32 x 256 B tile in 4 warps: warp w holds rows w, w + 4, ..., so the swizzle of a
    thread's rows (row % 8) alternates and differs between warps: no common distances."""
    seen = _staged(monkeypatch)
    src = _source(KD.dot_loop_kernel, dot_loop("fp16", 32, 256, 32), "sm_90", 4)
    [(writer, dot, _)] = [s for s in seen if s[2] == 1]
    b = dot.operands[1]
    assert writer.vector_steps(dot, 1, b.layout, 8) is None
    assert re.search(r"unsigned \w+_at\[8\];", src)
    b_copies = [c for c in _copies(src) if "b_at" in c]
    assert b_copies and all(re.fullmatch(r"\w+_base \+ \w+_at\[v / 8\]", c) for c in b_copies)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_the_builds_compile_cleanly(arch) -> None:
    require_cuda_compiler()
    for kernel, sig, _, warps in BUILDS[:3] + BUILDS[5:6]:
        assert_clean_compile(kernel, sig, "cuda", arch, num_warps=warps, num_stages=3)
