"""One compile target, resolved once at the compile entry (`target.resolve_target`): its
facts follow from the target's row and the architecture, the stages below read them, and
every public entry takes the same options."""

from __future__ import annotations

import pytest

import tilecc
import tilecc.language as tl
from tilecc.runtime import compiler
from tilecc.runtime.options import DEFAULT_NUM_STAGES, DEFAULT_NUM_WARPS, CompileOptions
from tilecc.transpiler import target as T
from tilecc.transpiler.target import CUDA, HIP, resolve_target


@tilecc.jit
def scaled_copy(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) * 2.0, mask=m)


SIG = "*fp32:16,*fp32:16,i32,256"


@pytest.mark.parametrize("name, arch, tma, wgmma, fp8, binary", [
    ("cuda", None, True, True, ("fp8e4nv", "fp8e5"), "sm_90a"),
    ("cuda", "sm_90a", True, True, ("fp8e4nv", "fp8e5"), "sm_90a"),
    ("cuda", "sm_89", False, False, ("fp8e4nv", "fp8e5"), "sm_89a"),
    ("cuda", "sm_80", False, False, ("fp8e5",), "sm_80a"),
    ("cuda", "sm_100", False, False, ("fp8e4nv", "fp8e5"), "sm_100a"),
    ("hip", None, False, False, T.ALL_FP8, "gfx90a"),
    ("hip", "gfx942", False, False, T.ALL_FP8, "gfx942"),
])
def test_facts_follow_from_the_row_and_the_architecture(name, arch, tma, wgmma, fp8, binary):
    t = resolve_target(name, arch)
    assert t.arch == (arch or T.TARGETS[name].default_arch)
    assert (t.has_tma, t.has_wgmma, t.fp8_formats) == (tma, wgmma, fp8)
    assert t.binary_arch(arch_specific=True) == binary
    assert t.binary_arch(arch_specific=False) == t.arch
    assert t.shared_memory_limit == T.shared_memory_limit(t.row, t.arch)


def test_native_flags_and_suffixes_are_the_rows():
    cuda, hip = resolve_target("cuda"), resolve_target(HIP)
    assert (cuda.source_suffix, cuda.binary_suffix, cuda.assembly_suffix) == \
        (".cu", ".cubin", ".ptx")
    assert (hip.source_suffix, hip.binary_suffix, hip.assembly_suffix) == \
        (".hip", ".hsaco", None)
    assert CompileOptions(maxnreg=300, enable_fp_fusion=False).native_flags(cuda) == \
        ["--maxrregcount=255", "--fmad=false"]
    assert CompileOptions(enable_fp_fusion=False).native_flags(hip) == ["-ffp-contract=off"]
    assert (cuda.arch_number, resolve_target("cuda", "sm_90a").arch_number,
            hip.arch_number) == (90, 90, "gfx90a")


def test_a_resolved_target_is_taken_as_it_is():
    t = resolve_target(CUDA, "sm_80")
    assert resolve_target(t) is t and resolve_target(t, "sm_80") is t
    with pytest.raises(ValueError, match="sm_90"):
        resolve_target(t, "sm_90")
    with pytest.raises(ValueError, match="unknown target"):
        resolve_target("metal")


def test_the_compile_entry_resolves_the_target_once(monkeypatch):
    built = []
    real_init = T.CompileTarget.__init__

    def counting_init(self, *args, **kwargs):
        built.append(args)
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(T.CompileTarget, "__init__", counting_init)
    scaled_copy.source(SIG, arch="sm_80")
    scaled_copy.source(SIG, target="hip")
    assert [a[1] for a in built] == ["sm_80", "gfx90a"]


def test_every_entry_takes_the_same_options():
    opts = scaled_copy.options(num_warps=2, num_stages=2, arch="sm_80", maxnreg=64,
                               enable_fp_fusion=False)
    keywords = dict(num_warps=2, num_stages=2, arch="sm_80", maxnreg=64,
                    enable_fp_fusion=False)
    assert scaled_copy.source(SIG, options=opts) == scaled_copy.source(SIG, **keywords)
    ir = scaled_copy.ir(SIG, **keywords)  # ir() took only num_warps and num_stages
    assert (ir.num_warps, ir.num_stages, ir.maxnreg, ir.fp_fusion) == (2, 2, 64, False)
    # keywords given next to an options object take its place
    assert scaled_copy.ir(SIG, options=opts, num_warps=8).num_warps == 8
    from tilecc.transpiler.specialize import specs_from_signature

    specs = specs_from_signature(scaled_copy.params, SIG, {}, "scaled_copy")
    lowered, _ = scaled_copy.lower(specs, "cuda", options=opts)
    assert (lowered.num_warps, lowered.maxnreg) == (2, 64)
    with pytest.raises(ValueError, match="not a cuda architecture"):
        scaled_copy.ir(SIG, arch="gfx90a")


def test_defaults_come_from_the_options_table():
    ir = scaled_copy.ir(SIG)
    assert (ir.num_warps, ir.num_stages) == (DEFAULT_NUM_WARPS, DEFAULT_NUM_STAGES)
    art = compiler.transpile(scaled_copy, scaled_copy._specs(SIG, {}), "hip",
                             scaled_copy.options())
    assert (art.target, art.arch) == ("hip", "gfx90a")


def test_launch_options_off_their_target_are_facts_of_its_row():
    from dataclasses import replace

    from tilecc.runtime.options import off_target_problem

    assert off_target_problem({"kpack": 2, "waves_per_eu": 1}, "hip") is None
    assert "kpack, waves_per_eu: AMD (HIP) tuning hints, not taken by a cuda launch" in \
        off_target_problem({"kpack": 2, "waves_per_eu": 1}, "cuda")
    assert off_target_problem({"launch_cooperative_grid": True}, "cuda") is None
    assert "on HIP (it launches through hipModuleLaunchKernel); a cooperative launch is " \
        "tilecc's on CUDA only" in off_target_problem({"launch_cooperative_grid": True}, "hip")
    assert off_target_problem({"launch_cooperative_grid": False}, "hip") is None
    # the row decides, not the target's name
    assert off_target_problem({"kpack": 2}, replace(CUDA, amd_tuning_hints=True)) is None
    assert off_target_problem({"launch_cooperative_grid": True},
                              replace(HIP, cooperative_launch=True)) is None
