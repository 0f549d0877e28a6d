"""Matrix units are target data (tilecc/transpiler/matrix_units.py): a target lists its rows
in order of preference, `passes.dot` plans a product on the first that fits, and the
renderer writes the instruction the row names."""

from __future__ import annotations

from dataclasses import replace

try:
    import kernels_dot as KD
except ImportError:  # tests/ imported as a package
    from tests import kernels_dot as KD
from tilecc.transpiler.matrix_units import FMA, MMA_SYNC, WGMMA, WGMMA_WIDTHS, Instruction
from tilecc.transpiler.target import CUDA

FP16 = "*fp16:16,*fp16:16,*fp32:16,i32,i32,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,64,64,64,0"
BF16 = FP16.replace("fp16", "bf16")


def _build(signature: str, target, arch: str = "sm_90"):
    specs = KD.dot_loop_kernel._specs(signature, {})
    built = KD.dot_loop_kernel.build(specs, target, 4, arch=arch)
    [dot] = [op for op in built.kernel.walk() if op.kind == "dot"]
    return dot.attrs["plan"], built.source.split("#include")[1]


def test_units_are_tried_in_the_targets_order() -> None:
    assert CUDA.matrix_units == (WGMMA, MMA_SYNC)
    plan, source = _build(FP16, CUDA)
    assert plan.unit is WGMMA and "tc::wgmma_m64n64k16_f16_ss<" in source
    plan, source = _build(FP16, CUDA, arch="sm_80")  # wgmma's row is for sm_90 only
    assert plan.unit is MMA_SYNC and "tc::mma_m16n8k16_f16(" in source
    mma_first = replace(CUDA, matrix_units=(MMA_SYNC, WGMMA))
    plan, source = _build(FP16, mma_first)
    assert plan.unit is MMA_SYNC and "wgmma" not in source and "tc::mma_m16n8k16_f16(" in source


def test_a_new_row_is_data() -> None:
    """A row with one instruction: fp16 products call the intrinsic it names, bf16 ones
    fall back on the portable loop, saying why."""
    only_fp16 = replace(MMA_SYNC, name="mma.sync (fp16 only)", instructions={
        ("fp16", "ieee"): Instruction("m16n8k16", 16, "f32.f16.f16.f32", "my_mma_f16")})
    target = replace(CUDA, matrix_units=(only_fp16,))
    plan, source = _build(FP16, target)
    assert plan.unit is only_fp16 and "tc::my_mma_f16(" in source and "ldmatrix_x4(" in source
    plan, source = _build(BF16, target)
    assert plan.unit is FMA and "bf16 inputs: no tensor-core instruction" in plan.reason
    assert "tc::fma(" in source and "mma" not in source
    plan, _ = _build(FP16, replace(CUDA, matrix_units=()))
    assert plan.unit is FMA and "no matrix instructions on this target" in plan.reason


def test_targets_stay_hashable_and_short_to_print() -> None:
    """Targets key caches and appear in messages: the rows in them compare by identity."""
    assert {CUDA: "cuda"}[CUDA] == "cuda" and CUDA == replace(CUDA)
    assert replace(CUDA, matrix_units=(MMA_SYNC,)) != CUDA
    assert "MatrixUnit('wgmma')" in repr(CUDA) and "instructions" not in repr(CUDA)


def test_the_headers_wgmma_intrinsics_are_the_generators():
    """tilecc.h's wgmma functions are what scripts/generate_wgmma.py writes for the wgmma
    row: one per tile width the planner allows, input type and A operand."""
    import importlib.util
    import pathlib

    script = pathlib.Path(__file__).resolve().parent.parent / "scripts" / "generate_wgmma.py"
    spec = importlib.util.spec_from_file_location("generate_wgmma", script)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    text = gen.HEADER.read_text()
    assert gen.header_with(text, gen.generated()) == text, \
        "tilecc.h is stale: run python scripts/generate_wgmma.py"
    for dtype in ("f16", "bf16"):
        for n in WGMMA_WIDTHS:
            for a in ("ss", "rs"):
                assert f"void wgmma_m64n{n}k16_{dtype}_{a}(" in text
