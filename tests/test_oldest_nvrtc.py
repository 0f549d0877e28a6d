"""Generated kernels compile with the oldest NVRTC tilecc supports (CUDA 13.0).

NVRTC's releases accept different C++: 13.0 refuses an unannotated lambda in device code
that 13.5 takes, so kernels that built here failed on GPU machines with CUDA 13.0.  The
set-up installs NVRTC 13.0 beside the suite's own (`.venv/oldest-nvrtc`); these kernels,
which together instantiate most of tilecc.h (scans in registers, reductions, sorts,
atomics, random numbers, cp.async pipelines, mma.sync and wgmma, fp8), are compiled
with it in a process of their own, for sm_80 and sm_90.

Hopper's tensor-core kernels must also compile *clean* with it (no spills, nothing that
ptxas serializes): ptxas releases disagree about which register patterns around `wgmma`
they serialize (13.5's accepted a loop whose every wgmma 13.0's serialized), and a kernel
that ptxas serializes runs, correct, at a fraction of its speed."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest_compilers import compilers_required

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OLDEST = os.path.join(ROOT, ".venv", "oldest-nvrtc")

# (examples file or tests module, kernel, signature, num_warps)
KERNELS = [
    ("examples/softmax.py", "softmax_kernel", "*fp32:16, *fp32:16, i32:16, i32:16, i32, 1024", 4),
    ("examples/topk.py", "topk_kernel", "*fp32:16, *fp32:16, *i32:16, i32, i32, 4, 128, 8", 4),
    ("examples/histogram.py", "histogram_kernel", "*u8:16, *i32:16, i32, 256, 1024", 4),
    ("examples/dropout.py", "seeded_dropout_kernel", "*fp32:16, *fp32:16, i32, fp32, i32, 1024", 4),
    ("examples/matmul.py", "matmul_kernel",
     "*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, i32:16, i32:1, i32:16, i32:1, "
     "i32:16, i32:1, 128, 128, 32, 8, 'leaky_relu'", 4),
    ("tests/test_scan_layouts.py", "scan_rows_2d", "*fp32:16, *fp32:16, *fp32:16, 16, 64", 4),
    ("tests/test_scan_layouts.py", "scan_wide_1d", "*bf16:16, *bf16:16, 1024", 4),
]

# the examples' Hopper kernels in the configurations they run in, (examples file, kernel,
# signature, options): attention forward and its two gradient kernels (the causal builds
# test their masks once per block, which doubles part of the loop), and the GEMMs
_ATTN = ("*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp32:16,fp32,i32:16,i32:16,i32:16,i32,i32,"
         "{d},{BLOCK_M},{BLOCK_N},{causal}")
_BWD = {"dkdv": "*fp16:16," * 6 + "*fp32:16,*fp32:16,fp32,"
                "i32:16,i32:16,i32:16,i32,i32,{d},{BLOCK_M},{BLOCK_N},{causal}",
        "dq": "*fp16:16," * 5 + "*fp32:16,*fp32:16,fp32,"
              "i32:16,i32:16,i32:16,i32,i32,{d},{BLOCK_M},{BLOCK_N},{causal}"}


def _hopper_kernels() -> list[tuple[str, str, str, dict]]:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "attention_configs", os.path.join(ROOT, "examples", "attention.py"))
    attention = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(attention)
    out = []
    for d, causal in ((64, False), (128, False), (128, True)):
        cfg = attention.config(d, causal, "sm_90")
        out.append(("examples/attention.py", "attention_fwd",
                    _ATTN.format(d=d, causal=causal, **cfg),
                    {k: v for k, v in cfg.items() if k.startswith("num_")}))
    for part in ("dkdv", "dq"):
        cfg = attention.backward_config(128, True, "sm_90")[part]
        out.append(("examples/attention.py", f"attention_bwd_{part}",
                    _BWD[part].format(d=128, causal=True, **cfg),
                    {k: v for k, v in cfg.items() if k.startswith("num_")}))
    out.append(("examples/matmul.py", "matmul_kernel",
                "*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, i32:16, i32:1, "
                "i32:16, i32:1, i32:16, i32:1, 128, 256, 64, 8, ''",
                {"num_warps": 8, "num_stages": 3}))
    # the persistent GEMM in two warp roles (passes.warp_roles), two consumer warpgroups
    out.append(("examples/persistent_matmul.py", "persistent_matmul_kernel",
                "tensordesc<fp16[128, 64]>:16, tensordesc<fp16[64, 256]>:16, "
                "tensordesc<fp16[128, 256]>:16, i32, i32, i32, 128, 256, 64, 8, 132",
                {"num_warps": 8, "num_stages": 3}))
    return out


SCRIPT = """
import importlib.util, os, sys
sys.path.insert(0, os.path.join(ROOT, "tests"))
from tilecc.runtime import nvrtc_location
found = nvrtc_location.nvrtc_files()
assert found and found[0].startswith(OLDEST), found
failures = []
for path, name, sig, warps in KERNELS:
    spec = importlib.util.spec_from_file_location("m_" + name, os.path.join(ROOT, path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for arch in ("sm_80", "sm_90"):
        try:
            getattr(module, name).compile(sig, arch=arch, num_warps=warps)
        except Exception as e:
            failures.append(f"{name} {arch}: {e}")
from conftest_compilers import clean_log_problem
for path, name, sig, options in HOPPER:
    spec = importlib.util.spec_from_file_location("h_" + name, os.path.join(ROOT, path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        binary = getattr(module, name).compile(sig, arch="sm_90", **options)
    except Exception as e:
        failures.append(f"{name} sm_90 ({sig}, {options}): {e}")
        continue
    problem = clean_log_problem(binary.log or "", "cuda")
    if problem:
        failures.append(f"{name} sm_90 ({sig}, {options}): {problem}")
print("\\n".join(failures) or "all compiled")
sys.exit(1 if failures else 0)
"""


def test_kernels_compile_with_nvrtc_13_0(tmp_path) -> None:
    if not os.path.exists(os.path.join(OLDEST, "nvidia", "cu13", "lib", "libnvrtc.so.13")):
        if compilers_required():
            pytest.fail(f"NVRTC 13.0 is not installed in {OLDEST} (bash scripts/setup.sh)")
        pytest.skip("NVRTC 13.0 is not installed (bash scripts/setup.sh installs it)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([OLDEST, ROOT]),
               TILECC_CACHE_DIR=str(tmp_path))
    prelude = (f"ROOT = {ROOT!r}\nOLDEST = {OLDEST!r}\nKERNELS = {KERNELS!r}\n"
               f"HOPPER = {_hopper_kernels()!r}\n")
    run = subprocess.run([sys.executable, "-c", prelude + SCRIPT], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
