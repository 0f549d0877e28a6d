"""tl.dot on AMD CDNA: products run on MFMA (tilecc/transpiler/matrix_units_amd.py).  The
generated HIP calls the row's intrinsic for each input type, tile and number of warps,
compiles cleanly with hiprtc for gfx90a (hipcc for gfx940, where the CDNA3 rows run), and
the kernels' interpreted results still match NumPy on ragged (masked) sizes.  Running
them is for an AMD GPU (`@pytest.mark.gpu`); tests/test_mfma_layouts.py proves the lane
layouts without one."""

from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest

try:
    import kernels_dot as KD
    from conftest_compilers import compilers_required, require_hip_compiler
    from test_blocks import run_interpreted
except ImportError:  # tests/ imported as a package
    from tests import kernels_dot as KD
    from tests.conftest_compilers import compilers_required, require_hip_compiler
    from tests.test_blocks import run_interpreted
from tilecc.transpiler.render import INCLUDE_DIR

_OUT = {"i8": "i32", "fp16": "fp32", "bf16": "fp32", "fp32": "fp32"}
# (input type, BM, BN, BK, num_warps) → the instruction its plan takes on gfx90a
GFX90A = [
    ("fp16", 64, 64, 32, 4, "mfma_f32_32x32x8f16"),
    ("fp16", 128, 128, 32, 8, "mfma_f32_32x32x8f16"),
    ("fp16", 32, 64, 16, 2, "mfma_f32_32x32x8f16"),
    ("fp16", 16, 16, 16, 1, "mfma_f32_16x16x16f16"),
    ("fp16", 32, 32, 64, 4, "mfma_f32_16x16x16f16"),
    ("bf16", 64, 64, 32, 4, "mfma_f32_32x32x8bf16_1k"),
    ("bf16", 32, 32, 32, 1, "mfma_f32_32x32x8bf16_1k"),
    ("bf16", 64, 32, 16, 8, "mfma_f32_16x16x16bf16_1k"),
    ("i8", 64, 64, 32, 4, "mfma_i32_32x32x8i8"),
    ("i8", 32, 32, 32, 4, "mfma_i32_16x16x16i8"),
    ("i8", 64, 128, 64, 8, "mfma_i32_32x32x8i8"),
    ("i8", 32, 16, 32, 2, "mfma_i32_16x16x16i8"),
    # products smaller than the warps' tiles: warps hold copies
    ("fp16", 16, 32, 16, 4, "mfma_f32_16x16x16f16"),
    ("bf16", 16, 16, 32, 8, "mfma_f32_16x16x16bf16_1k"),
    ("i8", 32, 32, 32, 8, "mfma_i32_16x16x16i8"),
    ("fp32", 64, 64, 32, 4, "mfma_f32_32x32x2f32"),
    ("fp32", 16, 32, 16, 2, "mfma_f32_16x16x4f32"),
]


def _signature(dt: str, bm: int, bn: int, bk: int, out: str | None = None) -> str:
    # unaligned sizes and strides: the loads stay masked, element by element
    return (f"*{dt}:16,*{dt}:16,*{out or _OUT[dt]}:16,i32,i32,i32,i32,i32:1,i32,i32:1,i32,"
            f"{bm},{bn},{bk},0")


def _hip(dt, bm, bn, bk, warps, arch="gfx90a") -> str:
    return KD.dot_loop_kernel.source(_signature(dt, bm, bn, bk), target="hip", arch=arch,
                                     num_warps=warps)


@pytest.mark.parametrize("dt,bm,bn,bk,warps,intrinsic", GFX90A,
                         ids=[f"{c[0]}-{c[1]}x{c[2]}x{c[3]}-w{c[4]}" for c in GFX90A])
def test_products_take_the_rows_instruction(dt, bm, bn, bk, warps, intrinsic) -> None:
    src = _hip(dt, bm, bn, bk, warps)
    body = src.split("extern \"C\"")[1]
    assert f"tc::{intrinsic}<" in body and "v_mfma_" in body
    assert "tc::fma(" not in body and "+= tc::cast<int>" not in body  # no portable loop


def _fnuz_on_gfx90a(dt: str) -> str:
    return KD.dot_loop_kernel.source(_signature(dt, 64, 64, 64, "fp32"), target="hip",
                                     arch="gfx90a", num_warps=4)


@pytest.mark.parametrize("dt", ["fp8e4b8", "fp8e5b16"])
def test_fnuz_fp8_runs_as_it_is_on_cdna3_and_as_fp16_on_cdna2(dt) -> None:
    """CDNA3 multiplies its fp8 formats (e4m3fnuz, e5m2fnuz); on gfx90a the passes convert
    the operands to fp16 (exactly) for its fp16 instruction."""
    name = "fp8_fp8" if dt == "fp8e4b8" else "bf8_bf8"
    cdna3 = KD.dot_loop_kernel.source(_signature(dt, 64, 64, 64, "fp32"), target="hip",
                                      arch="gfx940", num_warps=4)
    assert f"tc::mfma_f32_32x32x16_{name}<1>(" in cdna3 and "tc::load<8>(" in cdna3
    assert "tc::half" not in cdna3.split('extern "C"')[1]
    cdna2 = _fnuz_on_gfx90a(dt)
    assert "tc::mfma_f32_32x32x8f16<1>(" in cdna2 and "tc::cast<tc::half>(" in cdna2


def test_the_kernels_compile_cleanly_with_hiprtc() -> None:
    require_hip_compiler()
    from tilecc.testing import batch

    from conftest_compilers import clean_log_problem

    texts = [_hip(*c[:5]) for c in GFX90A] + [_fnuz_on_gfx90a(dt) for dt in ("fp8e4b8", "fp8e5b16")]
    log = batch.compile_batch(texts, "hip", "gfx90a").log or ""
    assert clean_log_problem(log, "hip") is None, log


def test_cdna3_rows_compile_with_hipcc(tmp_path) -> None:
    """gfx940's rows (8-wide int8, FNUZ fp8 as they are, xf32 for tf32) with the installed hipcc (hiprtc may
    not target CDNA3); gfx942 is the same instruction set."""
    hipcc = shutil.which("hipcc")
    if hipcc is None:
        if compilers_required():
            pytest.fail("hipcc is unavailable but TILECC_REQUIRE_COMPILERS=1", pytrace=False)
        pytest.skip("hipcc is not installed")
    cases = [("i8", "i32", "mfma_i32_32x32x16_i8"), ("fp16", "fp32", "mfma_f32_32x32x8f16"),
             ("bf16", "fp32", "mfma_f32_32x32x8bf16_1k"), ("fp32", "fp32", "mfma_f32_32x32x4_xf32"),
             ("fp8e4b8", "fp32", "mfma_f32_32x32x16_fp8_fp8"),
             ("fp8e5b16", "fp32", "mfma_f32_32x32x16_bf8_bf8")]
    unit = ['#include "tilecc.h"']
    for i, (dt, out, intrinsic) in enumerate(cases):
        src = KD.dot_loop_kernel.source(_signature(dt, 64, 64, 64, out), target="hip",
                                        arch="gfx940", num_warps=4)
        assert f"tc::{intrinsic}<" in src
        unit.append(f"namespace k{i} {{\n" + src.replace('extern "C" ', "") + "\n}")
    path = tmp_path / "cdna3.hip"
    path.write_text("\n".join(unit))
    p = subprocess.run([hipcc, "-std=c++17", "--offload-arch=gfx940", "-c", "-Werror",
                        "-I", str(INCLUDE_DIR), str(path), "-o", str(tmp_path / "cdna3.o")],
                       capture_output=True, text=True, env={**os.environ, "HIP_PLATFORM": "amd"})
    assert p.returncode == 0, p.stderr[-3000:]


_DTYPES = {"fp16": KD.F16, "bf16": KD.BF16, "i8": KD.I8, "fp32": KD.F32}


@pytest.mark.parametrize("dt,bm,bn,bk,warps,intrinsic", GFX90A[::2],
                         ids=[f"{c[0]}-{c[1]}x{c[2]}x{c[3]}-w{c[4]}" for c in GFX90A[::2]])
def test_interpreted_results_match_numpy_on_ragged_sizes(dt, bm, bn, bk, warps, intrinsic) -> None:
    case = KD._loop_case(f"mfma_{dt}", (_DTYPES[dt],), ieee=False, tf32=dt == "fp32",
                         blocks=(bm, bk, bn), warps=warps)
    for n in ((bm + 3, 2 * bk + 5, bn - 1), (1, bk - 3, 2 * bn + 1)):
        run_interpreted(case, _DTYPES[dt], n, seed=sum(n))


@pytest.mark.gpu
@pytest.mark.parametrize("dt,bm,bn,bk,warps,intrinsic", GFX90A,
                         ids=[f"{c[0]}-{c[1]}x{c[2]}x{c[3]}-w{c[4]}" for c in GFX90A])
def test_products_on_the_gpu_match_numpy(dt, bm, bn, bk, warps, intrinsic) -> None:
    """The same kernels launched with torch tensors (on an AMD GPU: MFMA), ragged sizes."""
    import copy

    pytest.importorskip("torch")
    try:
        from test_gpu_cases import FRAMEWORKS
        from test_blocks import check_outputs
    except ImportError:  # tests/ imported as a package
        from tests.test_gpu_cases import FRAMEWORKS
        from tests.test_blocks import check_outputs
    to_dev, to_host = FRAMEWORKS["torch"]
    # fp32 products run tf32 on NVIDIA and in full on CDNA2 (the reference rounds to tf32):
    # a tolerance for either; a layout mistake is off by whole products
    tol = (1e-2, 5e-2) if dt == "fp32" else (1e-5, 2e-3)
    case = KD._loop_case(f"mfma_{dt}", (_DTYPES[dt],), ieee=False, tf32=dt == "fp32",
                         blocks=(bm, bk, bn), warps=warps, tol={"float32": tol})
    for n in ((bm + 3, 2 * bk + 5, bn - 1), (1, bk - 3, 2 * bn + 1), (2 * bm, bk, 2 * bn)):
        rng = np.random.default_rng(sum(n))
        args = case.make_args(n, _DTYPES[dt], rng)
        before = copy.deepcopy(args)
        dev = [to_dev(a) if isinstance(a, np.ndarray) else a for a in args]
        case.kernel[case.grid(n)](*dev, **case.options)
        check_outputs(case, before, [to_host(dev[i], args[i]) for i in case.outputs],
                      f"{case.name} n={n}")
