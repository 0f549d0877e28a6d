"""Check the compatibility mode against Triton's recorded surface, in this process.

    python tests/triton_surface_check.py      # prints each problem, exits 1 if any

Installs the mode, makes one object of each recorded class (a kernel, an autotuner, a
config...) for the attributes their methods set, and compares every recorded name
(`tilecc.compat.surface.check`).  tests/test_triton_surface.py runs it in a fresh Python.
"""

import json
import sys
from pathlib import Path

import tilecc.compat

tilecc.compat.install()

import numpy as np  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.tools.tensor_descriptor import TensorDescriptor  # noqa: E402

from tilecc.compat import surface  # noqa: E402
from tilecc.compat.refused import REFUSED  # noqa: E402

SURFACE = Path(__file__).resolve().parent / "data" / "triton_surface.json"


@triton.jit
def kernel(x, n, BLOCK: tl.constexpr):
    tl.store(x + tl.arange(0, BLOCK), tl.arange(0, BLOCK), mask=tl.arange(0, BLOCK) < n)


def compiled_kernel():
    """A CompiledKernel of `kernel`, made from its source and a stand-in binary (no
    compiler: the members are what is checked)."""
    from tilecc.runtime.binary import Binary
    from tilecc.runtime.compiled import CompiledKernel
    from tilecc.runtime.compiler import Artifact, transpile

    specs = kernel._specs("*i32,i32", {"BLOCK": 16})
    art = transpile(kernel, specs, "cuda", kernel.options())
    art = Artifact(art.symbol, art.source, art.specs, "cuda", "sm_90", art.options,
                   Binary("cuda", "sm_90", b"", "ptxas info    : Used 8 registers"))
    return CompiledKernel(kernel, art, {}, None, {"BLOCK": 16})


def classes() -> dict:
    from tilecc.runtime.compiled import CompiledKernel

    tuner = triton.autotune(configs=[triton.Config({"BLOCK": 16})], key=["n"])(kernel)
    heuristics = triton.heuristics({"BLOCK": lambda args: 16})(kernel)
    descriptor = TensorDescriptor.from_tensor(np.zeros((16, 16), np.float32), [16, 16])
    return {
        "triton.runtime.jit.JITFunction": (type(kernel), kernel),
        "triton.runtime.jit.KernelParam": (type(kernel.params[0]), kernel.params[0]),
        "triton.runtime.autotuner.Autotuner": (type(tuner), tuner),
        "triton.runtime.autotuner.Heuristics": (type(heuristics), heuristics),
        "triton.runtime.autotuner.Config": (triton.Config, triton.Config({"BLOCK": 16})),
        "triton.compiler.compiler.CompiledKernel": (CompiledKernel, compiled_kernel()),
        "triton.language.core.tensor": (tl.tensor, None),
        "triton.language.core.dtype": (tl.dtype, tl.float32),
        "triton.language.core.constexpr": (tl.constexpr, tl.constexpr(1)),
        "triton.language.core.tensor_descriptor": (tl.tensor_descriptor, None),
        "triton.tools.tensor_descriptor.TensorDescriptor": (TensorDescriptor, descriptor),
    }


def main() -> int:
    problems = surface.check(json.loads(SURFACE.read_text()), REFUSED, classes())
    for path, problem in sorted(problems.items()):
        print(f"{path}: {problem}")
    print(f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
