"""Generated kernels compile with the oldest NVRTC tilecc supports (CUDA 13.0).

NVRTC's releases accept different C++: 13.0 refuses an unannotated lambda in device code
that 13.5 takes, so kernels that built here failed on GPU machines with CUDA 13.0.  The
set-up installs NVRTC 13.0 beside the suite's own (`.venv/oldest-nvrtc`); these kernels,
which together instantiate most of tilecc.h (scans in registers, reductions, sorts,
atomics, random numbers, cp.async pipelines, mma.sync and wgmma, fp8), are compiled
with it in a process of their own, for sm_80 and sm_90."""

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
    prelude = f"ROOT = {ROOT!r}\nOLDEST = {OLDEST!r}\nKERNELS = {KERNELS!r}\n"
    run = subprocess.run([sys.executable, "-c", prelude + SCRIPT], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
