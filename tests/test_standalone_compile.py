"""The checked-in example sources compile outside tilecc, as a user would build them:
`nvcc -c` for sm_80 and sm_90a (CUDA) and `hipcc -c` for gfx90a (HIP), with the device
header's folder on the include path.  Several examples go to one compiler run (each in a
namespace of its own); the documentation's hipcc commands build one alone, as written.
Skipped when the compiler is not installed (failed under TILECC_REQUIRE_COMPILERS=1).
"""

from __future__ import annotations

import concurrent.futures
import os
import pathlib
import re
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


def _together(sources: list[pathlib.Path], tmp_path, name: str) -> tuple[str, pathlib.Path]:
    """One translation unit that includes each example in a namespace of its own (the
    device header first, once): one compiler run parses the header and the SDK's once for
    all of them.  Diagnostics still name the example's own file and line."""
    unit = tmp_path / name
    unit.write_text('#include "tilecc.h"\n' + "".join(
        f'namespace example_{s.stem} {{\n#include "{s}"\n}}\n' for s in sources))
    return f"{', '.join(s.name for s in sources)} (as {name})", unit


def _halves(sources: list[pathlib.Path]) -> list[list[pathlib.Path]]:
    """Two groups of about equal size (by text), for the two compiler runs at once."""
    groups: list[list[pathlib.Path]] = [[], []]
    sizes = [0, 0]
    for s in sorted(sources, key=lambda s: -s.stat().st_size):
        i = sizes.index(min(sizes))
        groups[i].append(s)
        sizes[i] += s.stat().st_size
    return [g for g in groups if g]


def test_sources_exist():
    assert CUDA_SOURCES and HIP_SOURCES
    assert {"matmul.cu", "attention.cu"} <= {p.name for p in CUDA_SOURCES if _needs_sm90a(p)}


def test_cuda_examples_compile_with_nvcc(tmp_path):
    nvcc = _tool("nvcc")
    # A source with wgmma was generated for sm_90a; the others run on sm_80 and later
    # (one nvcc call builds both: the host code is compiled once).
    groups = {("sm_90a",): [s for s in CUDA_SOURCES if _needs_sm90a(s)],
              ("sm_80", "sm_90a"): [s for s in CUDA_SOURCES if not _needs_sm90a(s)]}
    jobs = []
    for archs, sources in groups.items():
        gencode = [f"-gencode=arch=compute_{a[3:]},code={a}" for a in archs]
        label, unit = _together(sources, tmp_path, f"examples_{'_'.join(archs)}.cu")
        jobs.append((f"{label} ({', '.join(archs)})",
                     [nvcc, "-c", *gencode, "-I", str(INCLUDE), str(unit),
                      "-o", str(unit.with_suffix(".o"))]))
    _compile_all(jobs, tmp_path)


def test_hip_examples_compile_with_hipcc(tmp_path):
    hipcc = _tool("hipcc")
    env = {**os.environ, "HIP_PLATFORM": "amd"}
    jobs = []
    for i, sources in enumerate(_halves(HIP_SOURCES)):
        label, unit = _together(sources, tmp_path, f"examples_{i}.hip")
        jobs.append((label, [hipcc, "-std=c++17", "--offload-arch=gfx90a", "-c", "-Werror",
                             "-I", str(INCLUDE), str(unit), "-o", str(unit.with_suffix(".o"))]))
    _compile_all(jobs, tmp_path, env=env)


# --- the hipcc command lines the documentation gives ---------------------------------------

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_INCLUDE_DIR = re.compile(r"\$\((?:python3? -m )?tilecc --include-dir\)")


def documented_hipcc_commands() -> list[tuple[str, str]]:
    """(file:line, command) for each command line of README.md and docs/*.md, in a code
    block or a code span, that runs hipcc on a .hip file (after any VAR=value)."""
    found = []
    for doc in DOCS:
        for number, line in enumerate(doc.read_text().splitlines(), 1):
            for text in re.findall(r"`([^`]+)`", line) or [line]:
                words = text.strip().split()
                while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
                    words = words[1:]
                if words and words[0] == "hipcc" and any(w.endswith(".hip") for w in words):
                    found.append((f"{doc.name}:{number}", text.strip()))
    return found


def test_the_documentation_gives_hipcc_commands():
    assert {where.split(":")[0] for where, _ in documented_hipcc_commands()} >= {
        "README.md", "export.md"}


@pytest.mark.parametrize("where,command", documented_hipcc_commands())
def test_documented_hipcc_commands_run_as_written(where, command, tmp_path):
    """Copied into a shell where CUDA may be installed too (Debian's hipcc then drives
    nvcc unless told HIP_PLATFORM=amd): only the include folder's `$(...)` and the input
    file are provided; the environment is the user's, without HIP_PLATFORM."""
    _tool("hipcc")
    source = next(w for w in command.split() if w.endswith(".hip"))
    (tmp_path / source).write_text((EXAMPLES / "vector_add.hip").read_text())
    env = {k: v for k, v in os.environ.items() if k != "HIP_PLATFORM"}
    line = _INCLUDE_DIR.sub(str(INCLUDE), command)
    p = subprocess.run(["bash", "-c", line], capture_output=True, text=True, env=env,
                       cwd=tmp_path)
    assert p.returncode == 0, f"{where}: {command}\n{p.stderr[-3000:]}"
    assert (tmp_path / (source[:-len(".hip")] + ".o")).exists(), where
