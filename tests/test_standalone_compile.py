"""The checked-in example sources compile outside tilecc, as a user would build them:
`nvcc -c` for sm_80 and sm_90a (CUDA) and `hipcc -c` for gfx90a (HIP), with the device
header's folder on the include path.  Skipped when the compiler is not installed (failed
under TILECC_REQUIRE_COMPILERS=1).
"""

from __future__ import annotations

import concurrent.futures
import os
import pathlib
import shutil
import subprocess

import pytest

from conftest_compilers import compilers_required

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
INCLUDE = ROOT / "tilecc" / "templates" / "include"
CUDA_SOURCES = sorted(EXAMPLES.glob("*.cu"))
HIP_SOURCES = sorted(EXAMPLES.glob("*.hip"))


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None and name == "nvcc" and os.path.exists("/usr/local/cuda/bin/nvcc"):
        path = "/usr/local/cuda/bin/nvcc"
    if path is None:
        if compilers_required():
            pytest.fail(f"{name} is unavailable but TILECC_REQUIRE_COMPILERS=1", pytrace=False)
        pytest.skip(f"{name} is not installed")
    return path


def _needs_sm90a(source: pathlib.Path) -> bool:
    return "tc::wgmma_" in source.read_text()


def _compile_all(jobs: list[tuple[str, list[str]]], tmp_path, env=None) -> None:
    """Runs the commands two at a time; fails with every compiler's complaint at once."""
    def one(job):
        label, cmd = job
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path)
        return label, cmd, p

    failures = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for label, cmd, p in pool.map(one, jobs):
            if p.returncode != 0:
                failures.append(f"{label}: {' '.join(cmd)}\n{p.stderr[-3000:]}")
    assert not failures, "\n\n".join(failures)


def test_sources_exist():
    assert CUDA_SOURCES and HIP_SOURCES
    assert {"matmul.cu", "attention.cu"} <= {p.name for p in CUDA_SOURCES if _needs_sm90a(p)}


def test_cuda_examples_compile_with_nvcc(tmp_path):
    nvcc = _tool("nvcc")
    jobs = []
    for source in CUDA_SOURCES:
        # A source with wgmma was generated for sm_90a; the others run on sm_80 and later.
        for arch in (["sm_90a"] if _needs_sm90a(source) else ["sm_80", "sm_90a"]):
            out = tmp_path / f"{source.stem}.{arch}.o"
            jobs.append((f"{source.name} ({arch})",
                         [nvcc, "-c", f"-arch={arch}", "-I", str(INCLUDE), str(source),
                          "-o", str(out)]))
    _compile_all(jobs, tmp_path)


def test_hip_examples_compile_with_hipcc(tmp_path):
    hipcc = _tool("hipcc")
    env = {**os.environ, "HIP_PLATFORM": "amd"}
    jobs = [(source.name,
             [hipcc, "-std=c++17", "--offload-arch=gfx90a", "-c", "-Werror", "-I", str(INCLUDE),
              str(source), "-o", str(tmp_path / f"{source.stem}.o")])
            for source in HIP_SOURCES]
    _compile_all(jobs, tmp_path, env=env)
