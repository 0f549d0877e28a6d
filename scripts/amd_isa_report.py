"""What the AMD code of tilecc's kernels looks like, read from the GCN assembly, with no GPU.

Transpiles kernels to HIP, compiles each for gfx90a (and gfx942 where the installed clang
knows it) to assembly with `hipcc --cuda-device-only -S`, and reports per kernel:

* the hot loop: among the loops of the assembly (a label and the last backward branch
  to it), the one whose own instructions (those of no loop nested in it) do the most matrix
  work (MFMA cycles, then FMA instructions), the innermost on a tie; its static counts
  (each instruction between the label and the branch once): v_mfma, v_fma / v_pk_fma /
  v_dot, LDS reads and writes with their widths, global / buffer / flat loads, s_barrier,
  s_waitcnt, and every other vector and scalar instruction;
* from the kernel's metadata: VGPRs, AGPRs, SGPRs, spills and scratch bytes, LDS bytes, and
  the occupancy (waves per SIMD) these allow at the kernel's work-group size;
* an issue estimate of one pass through the loop: MFMA cycles against the other
  instructions' cycles, the MFMA share of the loop's issue, and the loop's flops against
  the fp16 matrix peak of the architecture (see `issue_estimate`).

    python scripts/amd_isa_report.py                      # matmul and attention examples
    python scripts/amd_isa_report.py --arch gfx90a --json
    python scripts/amd_isa_report.py --kernel examples/matmul.py:matmul_kernel \\
        -s '*fp16:16,*fp16:16,*fp16:16,i32,i32,i32,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1,128,128,32,8,""' \\
        --num-warps 4 [-s ANOTHER_SIGNATURE ...] [--keep DIR]

A kernel and its signature are given as to `tilecc emit` (FILE.py:KERNEL, and -s with one
entry per parameter, constexpr values included; several -s: several configurations).
The counts are static: a branch inside the loop (a masked load, say) counts both sides.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# --- instruction classes ------------------------------------------------------------------

_TRANSCENDENTAL = re.compile(r"^v_(exp|log|rcp|rsq|sqrt|sin|cos)_")
_FMA = re.compile(r"^v_(pk_)?(fma|fmac|mac|mad|dot2c?)(_mix\w*|_legacy)?_(b?f16|f32|f64|bf16)")
_LDS = re.compile(r"^ds_(read|write|load|store)(2st64|2)?_?(\w*)")
_VMEM_LOAD = re.compile(r"^(global|buffer|flat|scratch)_load")
_VMEM_STORE = re.compile(r"^(global|buffer|flat|scratch)_store")
_BYTES = {"b128": 16, "b96": 12, "b64": 8, "b32": 4, "u16": 2, "i16": 2, "b16": 2,
          "u8": 1, "i8": 1, "b8": 1}


def lds_width(mnemonic: str) -> str:
    """`ds_read_b128` → "b128", `ds_read2_b32` → "b32x2" (two at once),
    `ds_read_u16_d16_hi` → "u16"."""
    m = _LDS.match(mnemonic)
    if not m:
        return ""
    width = next((w for w in _BYTES if m.group(3).startswith(w)), m.group(3) or "?")
    return f"{width}x2" if m.group(2) else width


def lds_bytes(width: str) -> int:
    """Bytes a lane moves by an LDS instruction of this width ("b64x2": 16)."""
    base, _, times = width.partition("x")
    return int(times or 1) * _BYTES.get(base, 0)


# --- MFMA: passes and flops ---------------------------------------------------------------
# CDNA2 (gfx90a), "AMD Instinct MI200 Instruction Set Architecture", section 7 (matrix
# arithmetic), table of MFMA instructions: every 32x32 shape takes 16 passes (64 cycles, a
# pass being 4 cycles), every 16x16 shape 8 passes (32 cycles), every 4x4 shape 2 passes,
# except the fp64 4x4x4 (4 passes); e.g. v_mfma_f32_32x32x8f16 = 16 passes, 64 cycles;
# v_mfma_f32_16x16x16f16 = 8 passes, 32 cycles.  CDNA3 (gfx940-gfx942) doubles the dense
# 16- and 8-bit rate per CU and clock (MI300X's 1307 fp16 TFLOPS on 304 CUs at 2.1 GHz is
# 2048 flops per CU and clock, MI250X's 383 on 220 CUs at 1.7 GHz is 1024): those shapes
# take half the passes there; fp32 and fp64 keep theirs.
_MFMA = re.compile(r"^v_s?mfma_(?P<out>[a-z0-9]+)_(?P<m>\d+)x(?P<n>\d+)x(?P<k>\d+)_?(?P<in>\w+)")
# Dense matrix flops per SIMD per clock by input type (the peak rates above, / 4 SIMDs).
_MFMA_RATE = {"gfx90a": {"16bit": 256, "bf16_old": 128, "8bit": 256, "xf32": 128, "f32": 64,
                         "f64": 64},
              "gfx94x": {"16bit": 512, "bf16_old": 512, "8bit": 1024, "xf32": 256, "f32": 64,
                         "f64": 64}}
FP16_PEAK_PER_SIMD = {"gfx90a": 256, "gfx94x": 512}  # flops per clock


def _family(arch: str) -> str:
    return "gfx94x" if re.match(r"gfx94", arch) else "gfx90a"


def _input_kind(inp: str) -> str:
    """The rate class of an MFMA's input type as its mnemonic spells it (f16, bf16_1k, bf16,
    i8, fp8_bf8, xf32, f32, f64)."""
    inp = inp.replace("_", "").lower()
    if inp in ("f16", "bf161k"):
        return "16bit"
    if inp == "xf32":  # gfx94x only
        return "xf32"
    if inp == "bf16":  # gfx90a: the half-rate form kept from gfx908; gfx94x: full rate
        return "bf16_old"
    if inp == "i8" or re.fullmatch(r"(fp8|bf8){2}", inp):
        return "8bit"
    return "f64" if inp == "f64" else "f32"


def mfma_cost(mnemonic: str, arch: str) -> tuple[int, int]:
    """(cycles, flops) of one wave's MFMA instruction on `arch`."""
    m = _MFMA.match(mnemonic)
    if not m:
        return 0, 0
    shape, kind = (int(m.group("m")), int(m.group("n"))), _input_kind(m.group("in"))
    passes = {32: 16, 16: 8}.get(shape[0], 2)
    if kind == "f64" and shape[0] == 4:
        passes = 4
    if _family(arch) == "gfx94x" and kind in ("16bit", "bf16_old", "8bit", "xf32") \
            and passes > 2:
        passes //= 2
    cycles = 4 * passes
    return cycles, cycles * _MFMA_RATE[_family(arch)][kind]


def classify(mnemonic: str) -> str:
    """One of: mfma, fma, lds_read, lds_write, global_load, global_store, barrier, waitcnt,
    valu, salu, branch, other."""
    if mnemonic.startswith(("v_mfma", "v_smfmac")):
        return "mfma"
    if _FMA.match(mnemonic):
        return "fma"
    if mnemonic.startswith("ds_"):
        return "lds_write" if re.match(r"ds_(write|store)", mnemonic) else \
            "lds_read" if re.match(r"ds_(read|load)", mnemonic) else "lds_other"
    if _VMEM_LOAD.match(mnemonic):
        return "global_load"
    if _VMEM_STORE.match(mnemonic):
        return "global_store"
    if mnemonic == "s_barrier":
        return "barrier"
    if mnemonic.startswith("s_waitcnt"):
        return "waitcnt"
    if mnemonic.startswith(("s_branch", "s_cbranch", "s_setpc", "s_endpgm")):
        return "branch"
    if mnemonic.startswith("v_"):
        return "valu"
    if mnemonic.startswith("s_"):
        return "salu"
    return "other"


# --- the assembly: kernels, instructions, loops -------------------------------------------

@dataclasses.dataclass
class Instruction:
    mnemonic: str
    operands: str
    line: int  # in the .s file, 1-based


@dataclasses.dataclass
class Loop:
    label: str
    start: int  # index of the first instruction after the label
    end: int  # index of the backward branch (inclusive)
    depth: int = 1  # 1: outermost
    nested: list = dataclasses.field(default_factory=list)  # loops directly inside


@dataclasses.dataclass
class AsmKernel:
    name: str
    instructions: list
    labels: dict  # label → index of the instruction that follows it
    metadata: dict


_BRANCH_TARGET = re.compile(r"^s_(c?branch\w*)$")


def parse_function(lines: list[str], first_line: int = 1) -> tuple[list, dict]:
    """Instructions and labels of one function's body lines (comments, directives dropped)."""
    instructions, labels = [], {}
    for n, raw in enumerate(lines, first_line):
        text = raw.split(";", 1)[0].strip()
        if not text:
            continue
        m = re.match(r"^([.\w$]+):\s*(.*)$", text)
        if m:
            labels[m.group(1)] = len(instructions)
            text = m.group(2).strip()
            if not text:
                continue
        if text.startswith("."):
            continue
        mnemonic, _, operands = text.partition(" ")
        instructions.append(Instruction(mnemonic, operands.strip(), n))
    return instructions, labels


def find_loops(instructions: list, labels: dict) -> list:
    """Every loop: a label with a branch back to it from below (the last such branch ends
    it), nested by containment, outermost first."""
    ends: dict[str, int] = {}
    for i, ins in enumerate(instructions):
        if _BRANCH_TARGET.match(ins.mnemonic):
            target = ins.operands.split(",")[0].strip()
            if target in labels and labels[target] <= i:
                ends[target] = i
    ends = {label: end for label, end in ends.items()
            if _reaches(instructions, labels, labels[label], end)}
    loops = sorted((Loop(label, labels[label], end) for label, end in ends.items()),
                   key=lambda lp: (lp.start, -lp.end))
    for i, loop in enumerate(loops):  # the closest enclosing loop is the last one opened
        parents = [p for p in loops[:i] if p.start <= loop.start and loop.end <= p.end]
        if parents:
            parent = parents[-1]
            parent.nested.append(loop)
            loop.depth = parent.depth + 1
    return loops


def _reaches(instructions: list, labels: dict, start: int, goal: int) -> bool:
    """Control that enters at instruction `start` can reach instruction `goal`: a backward
    branch is a loop's only if so (block placement also jumps back to shared exits)."""
    seen, todo = set(), [start]
    while todo:
        i = todo.pop()
        if i == goal:
            return True
        if i in seen or i >= len(instructions):
            continue
        seen.add(i)
        ins = instructions[i]
        if _BRANCH_TARGET.match(ins.mnemonic):
            target = labels.get(ins.operands.split(",")[0].strip())
            if target is not None:
                todo.append(target)
        if ins.mnemonic not in ("s_branch", "s_endpgm", "s_setpc_b64"):
            todo.append(i + 1)
    return False


def own_instructions(loop: Loop, instructions: list) -> list:
    """The loop's instructions outside the loops nested in it."""
    inner = {i for child in loop.nested for i in range(child.start, child.end + 1)}
    return [instructions[i] for i in range(loop.start, loop.end + 1) if i not in inner]


def count(instructions: list, arch: str) -> dict:
    """Counts of each class, LDS widths, MFMA cycles and flops, FMA flops (per wave)."""
    counts = dict.fromkeys(("mfma", "fma", "lds_read", "lds_write", "lds_other",
                            "global_load", "global_store", "barrier", "waitcnt", "valu",
                            "salu", "branch", "other", "transcendental", "flat_load"), 0)
    widths = {"lds_read": {}, "lds_write": {}}
    mfma_cycles = flops = lds_bytes_read = 0
    mfma_kinds: dict[str, int] = {}
    for ins in instructions:
        kind = classify(ins.mnemonic)
        counts[kind] += 1
        if kind == "mfma":
            cycles, f = mfma_cost(ins.mnemonic, arch)
            mfma_cycles += cycles
            flops += f
            mfma_kinds[ins.mnemonic] = mfma_kinds.get(ins.mnemonic, 0) + 1
        elif kind == "fma":  # a packed or dot2 instruction: two products per lane
            flops += 64 * 2 * (2 if re.match(r"v_(pk_|dot2)", ins.mnemonic) else 1)
        elif kind in widths:
            w = lds_width(ins.mnemonic)
            widths[kind][w] = widths[kind].get(w, 0) + 1
            if kind == "lds_read":
                lds_bytes_read += lds_bytes(w)
        elif kind == "valu" and _TRANSCENDENTAL.match(ins.mnemonic):
            counts["transcendental"] += 1
        if kind == "global_load" and ins.mnemonic.startswith("flat_"):
            counts["flat_load"] += 1
    counts.update(instructions=len(instructions), mfma_cycles=mfma_cycles, flops=flops,
                  lds_widths=widths, lds_read_bytes_per_lane=lds_bytes_read,
                  mfma_kinds=mfma_kinds)
    return counts


def _work(counts: dict) -> tuple[int, int]:
    return counts["mfma_cycles"], counts["fma"]


def hot_loop(loops: list, instructions: list, arch: str) -> Loop | None:
    """The loop whose own instructions do the most matrix work (MFMA cycles, then FMA
    instructions), the deeper on a tie; None where there is no loop."""
    best, best_key = None, None
    for loop in loops:
        key = (*_work(count(own_instructions(loop, instructions), arch)), loop.depth)
        if best_key is None or key > best_key:
            best, best_key = loop, key
    return best


# --- the issue estimate -------------------------------------------------------------------

def issue_estimate(counts: dict, arch: str) -> dict:
    """Cycles one wave spends issuing one pass through the loop, on one SIMD.

    A wave64 vector instruction runs over a 16-lane SIMD in 4 cycles (v_pk_fma_f32 too, two
    fp32 products a lane: the packed rate is the VALU's fp32 peak); a transcendental
    (v_exp, v_rcp, ...) at quarter rate in 16; an MFMA its passes x 4 cycles in the matrix
    core (`mfma_cost`); LDS and global instructions take their own pipes (4 cycles of issue
    each, counted in the one-wave figure only); scalar instructions and branches 1 cycle;
    s_waitcnt and s_barrier 0 (they cost latency, which static counts cannot see).
    MFMA and VALU are separate pipes: with enough waves on the SIMD the loop takes at least
    max(MFMA, VALU) cycles ("bound"); one wave alone issues everything in turn ("serial").
    The MFMA share of the loop's issue lies between mfma / serial and mfma / bound, and the
    loop's flops per `bound` cycle over the fp16 matrix peak per SIMD give the best it
    could reach of that peak (an upper bound: memory latency and bandwidth are left out).
    """
    valu = 4 * (counts["valu"] + counts["fma"]) + 12 * counts["transcendental"]
    memory = 4 * (counts["lds_read"] + counts["lds_write"] + counts["lds_other"]
                  + counts["global_load"] + counts["global_store"])
    scalar = counts["salu"] + counts["branch"] + counts["other"]
    mfma = counts["mfma_cycles"]
    bound, serial = max(mfma, valu, 1), max(mfma + valu + memory + scalar, 1)
    peak = FP16_PEAK_PER_SIMD[_family(arch)]
    return {"mfma_cycles": mfma, "valu_cycles": valu, "memory_issue_cycles": memory,
            "scalar_cycles": scalar, "bound_cycles": bound, "serial_cycles": serial,
            "mfma_share_min": mfma / serial, "mfma_share_max": mfma / bound,
            "fma_share_of_valu": 4 * counts["fma"] / valu if valu else 0.0,
            "fp16_peak_fraction_max": counts["flops"] / (bound * peak)}


# --- metadata and occupancy ---------------------------------------------------------------

_META_KEYS = {"vgpr_count": int, "agpr_count": int, "sgpr_count": int, "vgpr_spill_count": int,
              "sgpr_spill_count": int, "private_segment_fixed_size": int,
              "group_segment_fixed_size": int, "max_flat_workgroup_size": int}


def parse_metadata(text: str) -> dict:
    """Per kernel name: the amdhsa metadata's register, spill, scratch and LDS figures, the
    `.amdhsa_accum_offset` and the compiler's own occupancy comment."""
    out: dict[str, dict] = {}
    block = re.search(r"\.amdgpu_metadata(.*?)\.end_amdgpu_metadata", text, re.S)
    if block:
        for entry in re.split(r"\n  - ", block.group(1))[1:]:
            name = re.search(r"^\s+\.name:\s+(\S+)", entry, re.M)
            if not name:
                continue
            meta = out.setdefault(name.group(1), {})
            for key, conv in _META_KEYS.items():
                m = re.search(rf"^\s*\.{key}:\s+(\S+)", entry, re.M)
                if m:
                    meta[key] = conv(m.group(1))
    for m in re.finditer(r"\.amdhsa_kernel (\S+)(.*?)\.end_amdhsa_kernel", text, re.S):
        accum = re.search(r"\.amdhsa_accum_offset (\d+)", m.group(2))
        if accum:
            out.setdefault(m.group(1), {})["accum_offset"] = int(accum.group(1))
    return out


def occupancy(meta: dict, arch: str) -> dict:
    """Waves per SIMD (at most 8 on CDNA2/3) that the registers and LDS allow.

    * Registers: gfx90a and gfx94x have one 512-entry file per lane and SIMD shared by VGPRs
      and AGPRs; a wave takes its VGPRs rounded up to 4 (the AGPRs start at
      .amdhsa_accum_offset), plus its AGPRs, all rounded up to the granule of 8:
      waves = floor(512 / roundup(roundup(vgpr, 4) + agpr, 8)).  The metadata's .vgpr_count
      is that sum already (LLVM's TotalNumVgprs); the architectural VGPRs are the
      "; NumVgprs:" comment.  (LLVM's AMDGPU backend, AMDGPUBaseInfo.cpp: getTotalNumVGPRs
      = 512, getVGPRAllocGranule = 8 for gfx90a, getNumWavesPerEUWithNumVGPRs; the MI200
      ISA guide on the unified VGPR/AGPR file.)
    * SGPRs: 800 per SIMD, granule 16: waves = floor(800 / roundup(sgpr, 16)) (GCN / CDNA
      ISA guides; AMDGPUBaseInfo getNumWavesPerEUWithNumSGPRs gives 8+ for any
      kernel under 100 SGPRs, so this rarely binds).
    * LDS: 64 KiB per CU (CDNA2/3 ISA guides, "LDS"); floor(65536 / lds) work-groups fit on a
      CU, each spreading its waves over the CU's 4 SIMDs: waves = groups x ceil(waves per
      group / 4).
    The work-group size is the kernel's `.max_flat_workgroup_size` (tilecc's
    __launch_bounds__ is the exact size it launches).
    """
    def up(x, g):
        return -(-x // g) * g

    arch_vgprs = meta.get("arch_vgpr_count", 0)
    vgprs = up(max(meta.get("vgpr_count", 0), up(arch_vgprs, 4) + meta.get("agpr_count", 0)), 8)
    by_vgpr = 8 if vgprs == 0 else min(8, 512 // vgprs)
    sgprs = up(meta.get("sgpr_count", 0), 16)
    by_sgpr = 8 if sgprs == 0 else min(8, 800 // sgprs)
    lds = meta.get("group_segment_fixed_size", 0)
    waves_per_group = -(-meta.get("max_flat_workgroup_size", 64) // 64)
    if lds:
        by_lds = min(8, (65536 // lds) * -(-waves_per_group // 4))
    else:
        by_lds = 8
    limits = {"vgpr": by_vgpr, "sgpr": by_sgpr, "lds": by_lds}
    waves = min(limits.values())
    return {"waves_per_simd": waves, "limits": limits, "unified_vgprs": vgprs,
            "limited_by": [k for k, v in limits.items() if v == waves and waves < 8]}


def parse_assembly(text: str) -> list:
    """The kernels of an AMDGPU .s file, each with its instructions, labels and metadata."""
    meta = parse_metadata(text)
    lines = text.splitlines()
    kernels = []
    for m in re.finditer(r"^\s*\.type\s+([\w$.]+),@function", text, re.M):
        name = m.group(1)
        start = next((i for i, ln in enumerate(lines) if ln.startswith(f"{name}:")), None)
        if start is None:
            continue
        end = next((i for i in range(start, len(lines))
                    if re.match(r"^\.Lfunc_end\d+:", lines[i])), len(lines))
        instructions, labels = parse_function(lines[start + 1:end], start + 2)
        metadata = dict(meta.get(name, {}))
        for line in lines[end:]:  # the "; Kernel info:" comments after the function
            if re.match(r"^\s*\.type\s", line):
                break
            m = re.match(r"^; (Occupancy|NumVgprs): (\d+)", line)
            if m:
                key = {"Occupancy": "compiler_occupancy", "NumVgprs": "arch_vgpr_count"}
                metadata[key[m.group(1)]] = int(m.group(2))
        kernels.append(AsmKernel(name, instructions, labels, metadata))
    return kernels


def analyse(text: str, arch: str) -> list:
    """The report of each kernel of the assembly `text` (plain data, as --json writes)."""
    reports = []
    for k in parse_assembly(text):
        loops = find_loops(k.instructions, k.labels)
        hot = hot_loop(loops, k.instructions, arch)
        report = {"kernel": k.name, "arch": arch, "metadata": k.metadata,
                  "occupancy": occupancy(k.metadata, arch) if k.metadata else None,
                  "loops": [{"label": lp.label, "depth": lp.depth,
                             "lines": [k.instructions[lp.start].line,
                                       k.instructions[lp.end].line],
                             **_brief(count(k.instructions[lp.start:lp.end + 1], arch))}
                            for lp in loops],
                  "hot_loop": None}
        if hot is not None:
            counts = count(k.instructions[hot.start:hot.end + 1], arch)
            report["hot_loop"] = {"label": hot.label, "depth": hot.depth,
                                  "innermost": not hot.nested,
                                  "lines": [k.instructions[hot.start].line,
                                            k.instructions[hot.end].line],
                                  "counts": counts, "issue": issue_estimate(counts, arch)}
        reports.append(report)
    return reports


def _brief(c: dict) -> dict:
    return {key: c[key] for key in ("instructions", "mfma", "fma", "lds_read", "lds_write",
                                    "global_load", "barrier")}


# --- compiling ----------------------------------------------------------------------------

class NoCompiler(Exception):
    pass


def amd_compiler() -> list[str]:
    """The command that compiles HIP device code to AMDGPU assembly: hipcc (Debian's,
    driven to the AMD platform), else a clang that finds the ROCm device libraries."""
    hipcc = shutil.which("hipcc")
    if hipcc:
        return [hipcc]
    for clang in ("clang++", *(f"clang++-{v}" for v in range(20, 13, -1))):
        path = shutil.which(clang)
        if path:
            return [path, "-x", "hip"]
    raise NoCompiler("neither hipcc nor clang++ is installed")


def compile_to_assembly(source: str, arch: str, workdir: str, stem: str) -> str:
    """`source` (HIP) compiled for `arch` to assembly text; NoCompiler where the compiler
    or the architecture is not available, RuntimeError with its log on any other failure."""
    from tilecc.transpiler.render import INCLUDE_DIR

    src, out = os.path.join(workdir, f"{stem}.hip"), os.path.join(workdir, f"{stem}.{arch}.s")
    with open(src, "w") as f:
        f.write(source)
    cmd = [*amd_compiler(), "-std=c++17", "-O3", f"--offload-arch={arch}",
           "--cuda-device-only", "-S", "-Wno-unused-command-line-argument",
           f"-I{INCLUDE_DIR}", src, "-o", out]
    env = {**os.environ, "HIP_PLATFORM": "amd"}
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        if re.search(r"invalid target ID|unknown target CPU|cannot find ROCm device library",
                     p.stderr):
            raise NoCompiler(f"{arch}: not supported by {os.path.basename(cmd[0])} here")
        raise RuntimeError(f"{' '.join(cmd)}\n{p.stderr[-3000:]}")
    with open(out) as f:
        return f.read()


# --- the kernels reported -----------------------------------------------------------------

@dataclasses.dataclass
class Case:
    label: str
    kernel: object  # a JITFunction
    signature: str
    num_warps: int
    num_stages: int | None = None


_MATMUL_SIG = ("*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,"
               "i32:16,i32:1,{m},{n},{k},8,''")
_ATTENTION_SIG = ("*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp32:16,fp32,i32:16,i32:16,i32:16,"
                  "i32,i32,{d},{m},{n},False")


def example_cases() -> list:
    """matmul (fp16, unit inner strides) and attention (fp16, not causal) at a few of
    their block configurations."""
    from tilecc.cli_input import load_kernel

    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples")
    matmul = load_kernel(os.path.join(root, "matmul.py") + ":matmul_kernel")
    attention = load_kernel(os.path.join(root, "attention.py") + ":attention_fwd")
    cases = [Case(f"matmul {m}x{n}x{k} w{w}", matmul, _MATMUL_SIG.format(m=m, n=n, k=k), w)
             for m, n, k, w in ((64, 64, 32, 4), (128, 128, 32, 4), (128, 128, 64, 8))]
    cases += [Case(f"attention d{d} {m}x{n} w{w}", attention,
                   _ATTENTION_SIG.format(d=d, m=m, n=n), w)
              for d, m, n, w in ((64, 64, 64, 4), (64, 128, 64, 8), (128, 128, 32, 8))]
    return cases


def report_case(case: Case, arch: str, workdir: str) -> dict:
    source = case.kernel.source(case.signature, target="hip", arch=arch,
                                num_warps=case.num_warps, num_stages=case.num_stages)
    stem = re.sub(r"\W+", "_", case.label).strip("_")
    text = compile_to_assembly(source, arch, workdir, stem)
    reports = analyse(text, arch)
    for r in reports:
        r.update(case=case.label, signature=case.signature, num_warps=case.num_warps)
    return reports[0] if len(reports) == 1 else {"case": case.label, "kernels": reports}


# --- the table ----------------------------------------------------------------------------

def _widths(w: dict) -> str:
    return " ".join(f"{k}:{n}" for k, n in sorted(w.items(), key=lambda kv: -lds_bytes(kv[0])))


def table(reports: list) -> str:
    head = ("case", "arch", "VGPR", "AGPR", "SGPR", "spill", "scratch", "LDS", "occ",
            "loop", "inst", "mfma", "fma", "ds_read", "ds_write", "gload", "bar", "wait",
            "mfma%", "fma%valu", "fp16pk%")
    rows = []
    for r in reports:
        md, occ, hot = r["metadata"], r["occupancy"] or {}, r["hot_loop"]
        row = [r["case"], r["arch"], md.get("arch_vgpr_count", md.get("vgpr_count", "?")),
               md.get("agpr_count", "?"),
               md.get("sgpr_count", "?"),
               f"{md.get('vgpr_spill_count', 0)}/{md.get('sgpr_spill_count', 0)}",
               md.get("private_segment_fixed_size", "?"), md.get("group_segment_fixed_size", "?"),
               f"{occ.get('waves_per_simd', '?')}"
               + (f"({','.join(occ['limited_by'])})" if occ.get("limited_by") else "")]
        if hot is None:
            row += ["none"] + [""] * (len(head) - len(row) - 1)
        else:
            c, e = hot["counts"], hot["issue"]
            row += [f"{hot['label']} d{hot['depth']}", c["instructions"], c["mfma"], c["fma"],
                    f"{c['lds_read']} [{_widths(c['lds_widths']['lds_read'])}]",
                    f"{c['lds_write']} [{_widths(c['lds_widths']['lds_write'])}]",
                    c["global_load"] if not c["flat_load"] else
                    f"{c['global_load']} ({c['flat_load']} flat)",
                    c["barrier"], c["waitcnt"],
                    f"{100 * e['mfma_share_min']:.0f}-{100 * e['mfma_share_max']:.0f}",
                    f"{100 * e['fma_share_of_valu']:.0f}",
                    f"{100 * e['fp16_peak_fraction_max']:.1f}"]
        rows.append([str(x) for x in row])
    width = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, width))]
    lines += ["  ".join(x.ljust(w) for x, w in zip(row, width)) for row in rows]
    return "\n".join(lines)


LEGEND = """\
occ: waves per SIMD from VGPR+AGPR, SGPR and LDS (the binding limit in brackets); loop: the
hot loop's label and nesting depth; its counts are static, per wave; gload: global/buffer/
flat loads; mfma%: MFMA share of the loop's issue cycles, one wave alone - perfectly
overlapped; fma%valu: FMA share of the VALU cycles; fp16pk%: the loop's flops per cycle
against the fp16 matrix (MFMA) peak of a SIMD, at best (see issue_estimate)."""


# Older clangs know gfx940, not gfx942 (LLVM 17 added it): one ISA, the same code.
STAND_INS = {"gfx942": "gfx940"}


def _run(cases: list, arch: str, workdir: str) -> list:
    """The reports of `cases` for `arch`, two compiles at a time."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(lambda case: report_case(case, arch, workdir), cases))


def _reports(cases: list, archs: list, workdir: str) -> tuple[list, list]:
    """The reports of `cases` on each of `archs` (a stand-in where the compiler lacks one),
    and notes on what was skipped or stood in."""
    reports, notes = [], []
    for arch in archs:
        try:
            reports += _run(cases, arch, workdir)
        except NoCompiler as e:
            stand_in = STAND_INS.get(arch)
            if stand_in is None or stand_in in archs:
                notes.append(f"skipped {e}")
                continue
            try:
                reports += _run(cases, stand_in, workdir)
                notes.append(f"{e}: {stand_in} (the same CDNA3 instruction set to LLVM) "
                             "reported in its place")
            except NoCompiler as e2:
                notes.append(f"skipped {e}; {e2}")
    return reports, notes


def loop_lines(reports: list) -> list[str]:
    """Every loop of every kernel, one line each, nested ones indented (the hot one
    starred): where the table's single loop does not tell the whole story."""
    out = ["loops (static counts over each loop's span, nested loops included):"]
    for r in reports:
        hot = (r["hot_loop"] or {}).get("label")
        out.append(f"  {r['case']} ({r['arch']}):" + ("" if r["loops"] else " none"))
        for lp in r["loops"]:
            out.append(f"    {'  ' * (lp['depth'] - 1)}{'*' if lp['label'] == hot else ' '}"
                       f"{lp['label']} lines {lp['lines'][0]}-{lp['lines'][1]}: "
                       f"{lp['instructions']} inst, {lp['mfma']} mfma, {lp['fma']} fma, "
                       f"{lp['lds_read']} ds_read, {lp['lds_write']} ds_write, "
                       f"{lp['global_load']} gload, {lp['barrier']} s_barrier")
    return out


def main(argv: list[str] | None = None) -> int:
    from tilecc.cli_input import UsageError
    from tilecc.errors import CompilationError

    try:
        return _main(argv)
    except (UsageError, CompilationError, NoCompiler, RuntimeError) as e:
        print(f"amd_isa_report: error: {e}", file=sys.stderr)
        return 2


def _main(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kernel", help="FILE.py:KERNEL (default: the matmul and attention "
                        "examples at a few configurations)")
    parser.add_argument("-s", "--signature", action="append", default=[],
                        help="the kernel's signature as `tilecc emit` takes it; repeat for "
                        "several configurations")
    parser.add_argument("--num-warps", type=int, default=4)
    parser.add_argument("--num-stages", type=int, default=None)
    parser.add_argument("--arch", action="append", default=[],
                        help="gfx90a, gfx942, ... (repeatable; default gfx90a and gfx942, "
                        "each where the compiler supports it)")
    parser.add_argument("--json", action="store_true", help="print the reports as JSON")
    parser.add_argument("--loops", action="store_true",
                        help="also list every loop of each kernel with its counts")
    parser.add_argument("--keep", metavar="DIR", help="keep the .hip and .s files in DIR")
    args = parser.parse_args(argv)
    if args.kernel:
        if not args.signature:
            parser.error("--kernel needs at least one -s SIGNATURE")
        from tilecc.cli_input import load_kernel

        kernel = load_kernel(args.kernel)
        cases = [Case(f"{kernel.fn.__name__}[{i}]" if len(args.signature) > 1 else
                      kernel.fn.__name__, kernel, sig, args.num_warps, args.num_stages)
                 for i, sig in enumerate(args.signature)]
    else:
        cases = example_cases()
    archs = args.arch or ["gfx90a", "gfx942"]
    amd_compiler()  # NoCompiler before any work
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        reports, notes = _reports(cases, archs, args.keep)
    else:
        with tempfile.TemporaryDirectory(prefix="amd-isa-") as workdir:
            reports, notes = _reports(cases, archs, workdir)
    if args.json:
        print(json.dumps({"reports": reports, "notes": notes}, indent=1))
    else:
        flat = [k for r in reports for k in (r["kernels"] if "kernels" in r else [r])]
        print(table(flat))
        print(LEGEND)
        if args.loops:
            print("\n".join(loop_lines(flat)))
        for note in notes:
            print(note)
    return 0 if reports else 1


if __name__ == "__main__":
    sys.exit(main())
