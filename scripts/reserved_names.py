"""Regenerate tilecc/transpiler/reserved_names.txt: the names a kernel must not declare.

Candidates are every identifier in the compilers' built-in headers (the strings of
libnvrtc-builtins and of the HIP runtime and hiprtc libraries, and the HIP headers).  Each
is compiled with NVRTC and with hiprtc as a kernel's `extern "C"` name and as a local in a
kernel that uses what generated code uses (tc::, threadIdx, TC_DEVICE_ASSERT); those that
fail are reserved.  Compiles run in child processes, since NVRTC 13.5 crashes outright on a
kernel named `A7`.  The macros of the headers exported launchers include (cuda_runtime.h,
hip/hip_runtime.h, <cstddef>, <cstdint>, via nvcc and hipcc when present) and the host
compiler's predefined ones are added.  Names starting with `_` are left out: tilecc renames
them by rule.  Takes a few minutes:

    PYTHONPATH=. python scripts/reserved_names.py [NVRTC_BUILTINS_SO HIP_LIB ...]
"""

from __future__ import annotations

import glob
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tilecc", "transpiler", "reserved_names.txt")
HEAD = '#include "tilecc.h"\n'
IDENT = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z][A-Za-z0-9_]{0,39}(?![A-Za-z0-9_])")


def strings(path: str) -> str:
    data = open(path, "rb").read()
    return "\n".join(m.decode() for m in re.findall(rb"[\x20-\x7e\t\n]{4,}", data))


def candidates(paths: list[str]) -> list[str]:
    found: set[str] = set()
    for p in paths:
        text = open(p, errors="replace").read() if p.endswith(".h") else strings(p)
        found |= {n for n in IDENT.findall(text) if not n.startswith("_Z")}
    return sorted(found)


def kernel_source(names: list[str]) -> str:
    return HEAD + "".join(f'extern "C" __global__ void {n}(int x) {{ }}\n' for n in names)


def local_source(names: list[str]) -> str:
    body = "".join(
        f"  {{ int {n} = x; float y_[2]; y_[0] = tc::exp(static_cast<float>({n})); "
        f"if (threadIdx.x == 0) p_[0] = y_[0] + blockIdx.x; "
        f'TC_DEVICE_ASSERT(x > 0, "m", "f", 1); }}\n' for n in names)
    return HEAD + 'extern "C" __global__ void k_(float* p_, int x) {\n' + body + "}\n"


CHILD = """
import sys
from tilecc.runtime import native_compile as NC
from tilecc.transpiler.render import INCLUDE_DIR
target, path = sys.argv[1], sys.argv[2]
src = open(path).read()
try:
    if target == "cuda":
        NC.compile_cuda(src, arch="sm_80", options=["-I" + INCLUDE_DIR])
    else:
        NC.compile_hip(src, arch="gfx90a", options=["-I" + INCLUDE_DIR])
except NC.NativeCompileError as e:
    sys.stdout.write(e.log or "failed")
"""


def log_of(target: str, source: str) -> str | None:
    """The compiler's error log ('' when clean), or None when the compiler crashed."""
    with tempfile.NamedTemporaryFile("w", suffix=".cu", delete=False) as f:
        f.write(source)
    try:
        r = subprocess.run([sys.executable, "-c", CHILD, target, f.name], capture_output=True,
                           text=True)
    finally:
        os.unlink(f.name)
    return r.stdout if r.returncode == 0 else None


def failing(target: str, names: list[str], make, head_lines: int) -> set[str]:
    log = log_of(target, make(names))
    if log == "":
        return set()
    if len(names) == 1:
        return set(names)
    bad: set[str] = set()
    if log is not None:
        lines = {int(x) for m in re.findall(r"\.cu\((\d+)\): (?:catastrophic )?error|"
                                            r"\.(?:cu|hip):(\d+):\d+: error", log) for x in m if x}
        bad = {names[n - 1 - head_lines] for n in lines if 0 <= n - 1 - head_lines < len(names)}
        rest = [n for n in names if n not in bad]
        if not rest or (bad and log_of(target, make(rest)) == ""):
            return bad
    else:
        rest = names
    mid = len(rest) // 2
    return bad | failing(target, rest[:mid], make, head_lines) | \
        failing(target, rest[mid:], make, head_lines)


def macros() -> set[str]:
    out: set[str] = set()
    runs = [
        (["nvcc", "-std=c++17", "-E", "-Xcompiler", "-dM", "-x", "cu", "-"],
         "#include <cuda_runtime.h>\n#include <cstddef>\n#include <cstdint>\n", None),
        (["hipcc", "-std=c++17", "--offload-arch=gfx90a", "--cuda-host-only", "-dM", "-E", "-x",
          "hip", "-", "-o", "-"],
         "#include <hip/hip_runtime.h>\n#include <cstddef>\n#include <cstdint>\n",
         {**os.environ, "HIP_PLATFORM": "amd"}),
        (["hipcc", "-std=c++17", "--offload-arch=gfx90a", "--cuda-device-only", "-dM", "-E",
          "-x", "hip", "-", "-o", "-"],
         "#include <hip/hip_runtime.h>\n#include <cstddef>\n#include <cstdint>\n",
         {**os.environ, "HIP_PLATFORM": "amd"}),
        (["g++", "-dM", "-E", "-x", "c++", "-"], "", None),
    ]
    for cmd, text, env in runs:
        try:
            r = subprocess.run(cmd, input=text, capture_output=True, text=True, env=env)
        except FileNotFoundError:
            print(f"skipped: {cmd[0]} not found", file=sys.stderr)
            continue
        out |= {m for m in re.findall(r"^#define (\w+)", r.stdout, re.M)
                if not m.startswith("_")}
    return out


def main(paths: list[str]) -> None:
    if not paths:
        import nvidia

        paths = glob.glob(os.path.join(os.path.dirname(nvidia.__path__[0]), "nvidia", "*",
                                       "lib", "libnvrtc-builtins.so*"))
        paths += glob.glob("/usr/lib/x86_64-linux-gnu/libhiprtc-builtins.so*")
        paths += glob.glob("/usr/lib/x86_64-linux-gnu/libamdhip64.so.*")[:1]
        paths += glob.glob("/usr/include/hip/*.h") + glob.glob("/usr/include/hip/amd_detail/*.h")
    names = candidates(paths)
    print(f"{len(names)} candidates", file=sys.stderr)
    reserved = macros()
    for target in ("cuda", "hip"):
        for make, head in ((kernel_source, 1), (local_source, 2)):
            for i in range(0, len(names), 400):
                reserved |= failing(target, names[i:i + 400], make, head)
            print(f"{target} {make.__name__}: {len(reserved)} so far", file=sys.stderr)
    with open(OUT) as f:
        header = [line for line in f if line.startswith("#")]
    with open(OUT, "w") as f:
        f.writelines(header)
        f.write("\n".join(sorted(n for n in reserved if not n.startswith("_"))) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
