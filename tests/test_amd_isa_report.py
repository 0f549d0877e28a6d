"""scripts/amd_isa_report.py: the GCN assembly parser (loops, counts, metadata, occupancy)
on a hand-written listing, and the whole report on assembly hipcc really wrote for gfx90a
(skipped where no AMD device compiler is installed)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

import tilecc
import tilecc.language as tl
from conftest_compilers import compilers_required

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "amd_isa_report.py"


@pytest.fixture(scope="module")
def isa():
    spec = importlib.util.spec_from_file_location("amd_isa_report", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


# An outer loop (.LBB0_1) around an MFMA loop (.LBB0_2) and an FMA loop (.LBB0_3), then an
# epilogue whose backward branch to .LBB0_5 (an s_endpgm block) is no loop.
LISTING = """\
\t.text
\t.amdgcn_target "amdgcn-amd-amdhsa--gfx90a"
\t.type\tk,@function
k:                                      ; @k
; %bb.0:
\ts_load_dwordx4 s[0:3], s[4:5], 0x0
\tv_mad_u32_u24 v1, v0, s2, v1
.LBB0_1:                                ; =>This Loop Header: Depth=1
\tglobal_load_dwordx4 v[2:5], v[6:7], off
\tflat_load_dword v8, v[6:7]
\ts_waitcnt vmcnt(0)
\ts_barrier
\tds_write_b128 v9, v[2:5]
\ts_barrier
.LBB0_2:                                ; v_mfma_f32_32x32x8f16 in a comment is no instruction
\tds_read_b128 v[10:13], v9
\tds_read2_b64 v[14:17], v9 offset1:8
\tds_read_u16 v18, v9 offset:64
\ts_waitcnt lgkmcnt(0)
\tv_mfma_f32_32x32x8f16 a[0:15], v[10:11], v[12:13], a[0:15]
\tv_mfma_f32_32x32x8f16 a[16:31], v[14:15], v[16:17], a[16:31]
\tv_mfma_f32_16x16x16f16 a[32:35], v[10:11], v[14:15], a[32:35]
\tv_pk_fma_f32 v[20:21], v[10:11], v[12:13], v[20:21]
\tv_fmac_f32_e32 v22, v18, v19
\tv_exp_f32_e32 v23, v22
\ts_add_i32 s6, s6, 1
\ts_cmp_lg_u32 s6, s7
\ts_cbranch_scc1 .LBB0_2
; %bb.3:
\tv_add_u32_e32 v1, 64, v1
.LBB0_3:
\tv_fma_f32 v24, v25, v26, v24
\tv_fma_f32 v27, v25, v26, v27
\tv_fma_f32 v28, v25, v26, v28
\ts_cbranch_vccnz .LBB0_3
\ts_add_i32 s8, s8, 1
\ts_cmp_eq_u32 s8, s9
\ts_cbranch_scc0 .LBB0_1
\ts_cbranch_execnz .LBB0_6
.LBB0_5:
\ts_endpgm
.LBB0_6:
\tglobal_store_dword v[6:7], v24, off
\ts_cbranch_execz .LBB0_5
.Lfunc_end0:
\t.size\tk, .Lfunc_end0-k
\t.section\t.rodata,#alloc
\t.amdhsa_kernel k
\t\t.amdhsa_accum_offset 172
\t.end_amdhsa_kernel
; Kernel info:
; NumVgprs: 170
; NumAgprs: 36
; Occupancy: 2
\t.amdgpu_metadata
---
amdhsa.kernels:
  - .agpr_count:     36
    .group_segment_fixed_size: 40960
    .max_flat_workgroup_size: 512
    .name:           k
    .private_segment_fixed_size: 16
    .sgpr_count:     40
    .sgpr_spill_count: 0
    .vgpr_count:     208
    .vgpr_spill_count: 3
amdhsa.target:   amdgcn-amd-amdhsa--gfx90a
...
\t.end_amdgpu_metadata
"""


def test_loops_nest_and_a_jump_back_to_an_exit_is_no_loop(isa):
    (kernel,) = isa.parse_assembly(LISTING)
    loops = isa.find_loops(kernel.instructions, kernel.labels)
    assert [(lp.label, lp.depth) for lp in loops] == [(".LBB0_1", 1), (".LBB0_2", 2),
                                                      (".LBB0_3", 2)]
    assert [child.label for child in loops[0].nested] == [".LBB0_2", ".LBB0_3"]


def test_hot_loop_is_the_one_with_the_most_matrix_work(isa):
    (report,) = isa.analyse(LISTING, "gfx90a")
    hot = report["hot_loop"]
    assert (hot["label"], hot["depth"], hot["innermost"]) == (".LBB0_2", 2, True)
    c = hot["counts"]
    assert (c["mfma"], c["fma"], c["lds_read"], c["lds_write"], c["waitcnt"]) == (3, 2, 3, 0, 1)
    assert c["mfma_cycles"] == 2 * 64 + 32  # CDNA2: 16 passes for 32x32, 8 for 16x16
    assert c["lds_widths"]["lds_read"] == {"b128": 1, "b64x2": 1, "u16": 1}
    assert c["lds_read_bytes_per_lane"] == 16 + 16 + 2
    assert c["transcendental"] == 1
    # per wave: 3 MFMAs at 256 flops a cycle, a packed FMA (2 per lane), an FMA (1 per lane)
    assert c["flops"] == 160 * 256 + 64 * 2 * 2 + 64 * 2
    issue = hot["issue"]
    assert issue["valu_cycles"] == 4 * 3 + 12  # pk_fma, fmac, exp (quarter rate)
    assert issue["mfma_share_max"] == 1.0
    assert 0 < issue["mfma_share_min"] < 1


def test_outer_loop_counts_the_memory_traffic(isa):
    (report,) = isa.analyse(LISTING, "gfx90a")
    outer = report["loops"][0]
    assert (outer["global_load"], outer["lds_write"], outer["barrier"]) == (2, 1, 2)
    assert outer["fma"] == 2 + 3  # the two inner loops' own, once each


def test_metadata_and_occupancy(isa):
    (report,) = isa.analyse(LISTING, "gfx90a")
    md = report["metadata"]
    assert (md["arch_vgpr_count"], md["agpr_count"], md["vgpr_count"]) == (170, 36, 208)
    assert (md["vgpr_spill_count"], md["private_segment_fixed_size"]) == (3, 16)
    occ = report["occupancy"]
    # 208 unified registers (rounded to 8: 208) → 512 // 208 = 2; 40 KiB of LDS → one
    # group of 8 waves on a CU → 2 a SIMD; 40 SGPRs → 800 // 48 > 8
    assert occ["limits"] == {"vgpr": 2, "sgpr": 8, "lds": 2}
    assert occ["waves_per_simd"] == 2 and occ["limited_by"] == ["vgpr", "lds"]


def test_instruction_classes(isa):
    assert isa.classify("v_mad_u32_u24") == "valu"  # integer address arithmetic
    assert isa.classify("v_dot2_f32_f16") == "fma"
    assert isa.classify("v_fma_mix_f32") == "fma"
    assert isa.classify("buffer_load_dwordx4") == "global_load"
    assert isa.classify("s_waitcnt_vscnt") == "waitcnt"
    assert isa.lds_width("ds_read2st64_b32") == "b32x2"
    assert isa.lds_width("ds_read_u16_d16_hi") == "u16"
    # CDNA3 doubles the 16-bit rate: half the cycles, same flops; fp32 unchanged
    assert isa.mfma_cost("v_mfma_f32_32x32x8_f16", "gfx942") == (32, 16384)
    assert isa.mfma_cost("v_mfma_f32_32x32x8f16", "gfx90a") == (64, 16384)
    assert isa.mfma_cost("v_mfma_f32_32x32x2f32", "gfx942") == isa.mfma_cost(
        "v_mfma_f32_32x32x2f32", "gfx90a") == (64, 4096)
    assert isa.mfma_cost("v_mfma_f64_4x4x4f64", "gfx90a")[0] == 16


# --- on real compiler output ---------------------------------------------------------------

def _compile(isa, source: str, tmp_path, stem: str) -> str:
    try:
        return isa.compile_to_assembly(source, "gfx90a", str(tmp_path), stem)
    except isa.NoCompiler as e:
        if compilers_required():
            pytest.fail(f"{e} but TILECC_REQUIRE_COMPILERS=1", pytrace=False)
        pytest.skip(str(e))


@tilecc.jit
def _dot_loop(A, B, C, K, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k in range(0, K, BLOCK):
        a = tl.load(A + offs[:, None] * K + (k + offs[None, :]))
        b = tl.load(B + (k + offs[:, None]) * BLOCK + offs[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(C + offs[:, None] * BLOCK + offs[None, :], acc)


def test_report_of_a_compiled_dot_kernel(isa, tmp_path):
    source = _dot_loop.source("*fp16:16,*fp16:16,*fp32:16,i32:16,32", target="hip",
                              num_warps=4)
    (report,) = isa.analyse(_compile(isa, source, tmp_path, "dot_loop"), "gfx90a")
    md, occ, hot = report["metadata"], report["occupancy"], report["hot_loop"]
    assert md["vgpr_count"] > 0 and md["sgpr_count"] > 0 and md["arch_vgpr_count"] > 0
    assert md["max_flat_workgroup_size"] == 4 * 64
    assert hot is not None, "the K loop was not found"
    assert hot["counts"]["fma"] + hot["counts"]["mfma"] > 0, hot["counts"]
    # the compiler's own figure counts registers only: never below ours
    assert 1 <= occ["waves_per_simd"] <= md["compiler_occupancy"] <= min(
        occ["limits"]["vgpr"], occ["limits"]["sgpr"])
    start, end = hot["lines"]
    assert start < end


def test_block_pointer_loop_keeps_global_loads_on_amd(isa, tmp_path):
    """A loop that moves block pointers carries their pointers on CUDA only
    (`Target.carried_block_pointers`): on AMD, addresses written from the offsets at each
    load become global loads from one scalar base, which carried pointers turned into
    flat loads (176 VGPRs against 121 in this GEMM)."""
    import kernels_ptr as KP
    sig = KP.MATMUL_SIGNATURE.format(bm=128, bn=128, bk=32)
    # (sm_80: its cp.async copies read them; on sm_90 the copy engine's copies do not, and
    # the loads read them worked out from the loop's index, passes.pointer_tiles)
    assert "a_block_pointers" in KP.bp_matmul_kernel.source(sig, num_warps=4, arch="sm_80")
    source = KP.bp_matmul_kernel.source(sig, target="hip", num_warps=4, num_stages=2)
    assert "a_block_pointers" not in source
    (report,) = isa.analyse(_compile(isa, source, tmp_path, "bp_matmul"), "gfx90a")
    counts = report["hot_loop"]["counts"]
    assert counts["global_load"] > 0 and counts["flat_load"] == 0, counts


def test_report_of_a_compiled_mfma_loop(isa, tmp_path):
    source = """\
typedef _Float16 half4 __attribute__((ext_vector_type(4)));
typedef float float16 __attribute__((ext_vector_type(16)));
extern "C" __attribute__((global, amdgpu_flat_work_group_size(64, 64)))
void mfma_loop(const half4* a, const half4* b, float16* c, int n) {
  float16 acc = {};
  for (int k = 0; k < n; ++k) {
    int i = k * 64 + __builtin_amdgcn_workitem_id_x();
    acc = __builtin_amdgcn_mfma_f32_32x32x8f16(a[i], b[i], acc, 0, 0, 0);
  }
  c[__builtin_amdgcn_workitem_id_x()] = acc;
}
"""
    (report,) = isa.analyse(_compile(isa, source, tmp_path, "mfma_loop"), "gfx90a")
    md, hot = report["metadata"], report["hot_loop"]
    assert hot["counts"]["mfma_kinds"] == {"v_mfma_f32_32x32x8f16": 1}
    assert hot["counts"]["mfma_cycles"] == 64 and hot["issue"]["mfma_share_max"] > 0.5
    assert md["agpr_count"] >= 16  # the 32x32 accumulator
    # the metadata's count is the unified one: VGPRs rounded to 4, then the AGPRs
    assert md["vgpr_count"] == -(-md["arch_vgpr_count"] // 4) * 4 + md["agpr_count"]


def test_table_and_json_of_a_report(isa):
    import json

    (report,) = isa.analyse(LISTING, "gfx90a")
    report["case"] = "listing"
    lines = isa.table([report]).splitlines()
    head, row = (re.split(r"\s{2,}", line.strip()) for line in lines)  # cells: 2+ spaces apart
    assert len(lines) == 2 and row[0] == "listing"
    assert row[head.index("VGPR")] == "170" and row[head.index("AGPR")] == "36"
    assert row[head.index("occ")] == "2(vgpr,lds)" and row[head.index("mfma")] == "3"
    assert row[head.index("ds_read")] == "3 [b128:1 b64x2:1 u16:1]"
    assert json.loads(json.dumps(report))["hot_loop"]["label"] == ".LBB0_2"
    listing = "\n".join(isa.loop_lines([dict(report, arch="gfx90a")]))
    assert "*.LBB0_2" in listing and ".LBB0_5" not in listing


@pytest.mark.parametrize("mnemonic,arch,macs", [
    ("v_mfma_f32_32x32x8f16", "gfx90a", 32 * 32 * 8),
    ("v_mfma_f32_16x16x16bf16_1k", "gfx90a", 16 * 16 * 16),
    ("v_mfma_f32_32x32x2f32", "gfx90a", 32 * 32 * 2),
    ("v_mfma_f64_16x16x4f64", "gfx90a", 16 * 16 * 4),
    ("v_mfma_i32_32x32x16_i8", "gfx942", 32 * 32 * 16),
    ("v_mfma_f32_16x16x32_fp8_fp8", "gfx942", 16 * 16 * 32),
    ("v_mfma_f32_32x32x4_xf32", "gfx942", 32 * 32 * 4),
])
def test_mfma_flops_are_the_shapes(isa, mnemonic, arch, macs):
    """The flops that cycles x rate give are 2 M N K of the single-block shapes."""
    assert isa.mfma_cost(mnemonic, arch)[1] == 2 * macs
