"""Random kernels (tilecc.testing.random_kernels) through Triton itself: each program's
source, with `tilecc` read as `triton`, compiled by Triton's frontend (to TTIR: no GPU
needed) and run on Triton's interpreter (torch CPU tensors), its outputs compared with the
generator's NumPy evaluation.  It checks the generator — that its programs are valid
Triton and that its NumPy evaluation says what Triton computes — not tilecc.

    PYTHONPATH=. python scripts/random_kernels_vs_triton.py \\
        [-n 200] [--start 0] [--wild] [--features a,b]

Needs triton and torch (CPU), and tilecc's testing package on PYTHONPATH (the generator
does not import the rest of tilecc).  Prints the programs Triton refuses or computes
differently, and the counts by feature.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

import numpy as np


# Triton's compiler reads Python's min / max in a kernel as tl.minimum / tl.maximum from
# the left; its interpreter runs Python's own (which compares blocks as booleans)
_BUILTINS_AS_COMPILED = """

def min(*args):
    r = args[0]
    for a in args[1:]:
        r = tl.minimum(r, a)
    return r


def max(*args):
    r = args[0]
    for a in args[1:]:
        r = tl.maximum(r, a)
    return r
"""


def as_triton(source: str, interpret: bool = False) -> str:
    text = (source.replace("import tilecc.language as tl", "import triton.language as tl")
            .replace("import tilecc\n", "import triton\n").replace("@tilecc.jit", "@triton.jit"))
    if interpret:
        text = text.replace("import triton.language as tl\n",
                            "import triton.language as tl\n" + _BUILTINS_AS_COMPILED, 1)
    return text


def interpretable(prog) -> bool:
    """Triton's interpreter keeps bfloat16 values as their 16 bits and does arithmetic on
    them: programs with bfloat16 are checked by the frontend only."""
    return "bf16" not in prog.signature() and "bfloat16" not in prog.source


def load(prog, folder: str, interpret: bool = False):
    path = os.path.join(folder, f"{prog.name}_triton.py")
    with open(path, "w") as f:
        f.write(as_triton(prog.source, interpret))
    spec = importlib.util.spec_from_file_location(f"{prog.name}_triton", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, prog.name)


def frontend_problem(prog, kernel) -> str | None:
    """Triton's frontend on the program's specialization; None if it compiles to TTIR."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    signature, constexprs = {}, {}
    for (name, kind), entry in zip(prog.params, prog.signature().split(",")):
        if kind in ("constexpr", "none"):
            signature[name] = "constexpr"
            constexprs[name] = prog.constexprs.get(name)
        else:
            signature[name] = entry.split(":")[0]  # the type (Triton's attributes go apart)
    src = ASTSource(fn=kernel, signature=signature, constexprs=constexprs)
    try:
        triton.compile(src, target=GPUTarget("cuda", 90, 32), options={
            "num_warps": prog.num_warps, "num_stages": prog.num_stages})
    except Exception as e:  # noqa: BLE001
        text = str(e)
        if "ptxas" in text or "PTX" in text or "nvidia" in text.lower() or "cuda" in text.lower():
            return None  # past the frontend: the back end wants a GPU toolchain
        return f"{type(e).__name__}: {text.strip()[-600:]}"
    return None


def _torch(a: np.ndarray):
    import torch

    if a.dtype.name == "bfloat16":
        return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(a.copy())


def _numpy(t, like: np.ndarray) -> np.ndarray:
    import torch

    if like.dtype.name == "bfloat16":
        return t.view(torch.int16).numpy().view(like.dtype)
    return t.numpy()


def interpreter_problem(prog, kernel) -> str | None:
    """Triton's interpreter against the generator's NumPy evaluation."""
    expected = prog.expected()
    args = prog.make_args()
    dev = [_torch(a) if isinstance(a, np.ndarray) else a for a in args]
    kernel[prog.grid](**{n: d for (n, _), d in zip(prog.params, dev)},
                      num_warps=prog.num_warps, num_stages=prog.num_stages)
    got = [_numpy(d, a) if isinstance(a, np.ndarray) else a for d, a in zip(dev, args)]
    if expected is None:
        return None
    problem = prog.compare(got, expected, "Triton's interpreter vs NumPy")
    if problem and prog.explained_by_conditioning(got, expected):
        return None
    return problem


def _patch_interpreter_index() -> None:
    """Triton 3.6's interpreter takes a scalar's index as `int()` of its 1-element array,
    which NumPy 2.4 refuses (`range(n)` over an argument fails): read the element."""
    from triton.runtime import interpreter

    patch = interpreter._patch_lang_tensor

    def patched(tensor, scope):
        patch(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.reshape(-1)[0]))
    interpreter._patch_lang_tensor = patched


def _programs(args):
    from tilecc.testing import random_kernels as RK

    features = tuple(args.features.split(",")) if args.features else \
        RK.WILD_FEATURES if args.wild else RK.FEATURES
    return [RK.generate(seed, features) for seed in range(args.start, args.start + args.n)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=200)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--wild", action="store_true", help="the features of RK.WILD_FEATURES")
    ap.add_argument("--features", help="comma-separated features to draw from")
    ap.add_argument("--frontend", action="store_true",
                    help="(internal) only Triton's frontend; one JSON line per program")
    args = ap.parse_args()
    # Triton picks its interpreter or its compiler when it is imported: the frontend
    # runs in a child process without TRITON_INTERPRET, the interpreter here with it
    if args.frontend:
        with tempfile.TemporaryDirectory() as folder:
            for prog in _programs(args):
                print(json.dumps([prog.seed, frontend_problem(prog, load(prog, folder))]),
                      flush=True)
        return 0
    child = subprocess.run([sys.executable, __file__, "--frontend", *sys.argv[1:]],
                           capture_output=True, text=True,
                           env={k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"})
    refused = dict(json.loads(line) for line in child.stdout.splitlines()
                   if line.startswith("["))
    if child.returncode:
        sys.exit(f"the frontend pass failed:\n{child.stderr[-3000:]}")
    os.environ["TRITON_INTERPRET"] = "1"
    _patch_interpreter_index()
    counts: collections.Counter = collections.Counter()
    with tempfile.TemporaryDirectory() as folder:
        for prog in _programs(args):
            problem, kind = refused.get(prog.seed), "refused"
            if not problem and not interpretable(prog):
                kind = "ok (bf16: frontend only)"
            elif not problem:
                try:
                    problem = interpreter_problem(prog, load(prog, folder, interpret=True))
                except Exception as e:  # noqa: BLE001
                    problem = f"{type(e).__name__}: {str(e)[-600:]}"
                kind = "differs" if problem else "ok"
            counts[(prog.feature, kind)] += 1
            if problem:
                print(f"seed {prog.seed} ({prog.feature}): {kind}: {problem}\n{prog.source}",
                      flush=True)
    for (feature, kind), count in sorted(counts.items()):
        print(f"  {feature:16s} {kind:26s} {count}")
    return 1 if any(k in ("refused", "differs") for _, k in counts) else 0


if __name__ == "__main__":
    sys.exit(main())
