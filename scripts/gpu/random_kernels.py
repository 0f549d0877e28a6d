"""The random-kernel campaign on a GPU: N programs of tilecc.testing.random_kernels, from
seeds, each transpiled, compiled (NVRTC for this GPU, hiprtc for gfx90a), run on the
interpreter against NumPy, then launched on the GPU and compared with both.

    PYTHONPATH=. python3 scripts/gpu/random_kernels.py [-n 2000] [--start 0] [--out DIR]

Workers transpile, compile (into tilecc's disk cache) and interpret in parallel; the main
process only launches.  Prints the counts (internal errors, compiler rejections,
interpreter errors, mismatches, GPU failures) and writes each failing program's source and
what went wrong to DIR (default $OUT or random-kernels-out).  Exit status 1 if any failed.
A failure that loses the CUDA context (a misaligned address is sticky) hands the remaining
seeds to a fresh process, so that each program is judged on its own.
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing as mp
import os
import sys
import tempfile
import time

from tilecc.testing import random_kernels as RK

_DIR = None
_ARCH = None
_VARIANT: tuple[bool, bool] = (False, False)  # (descriptors, transposed)


def _init(directory: str, arch: str, variant: tuple[bool, bool] = (False, False)) -> None:
    global _DIR, _ARCH, _VARIANT
    _DIR, _ARCH, _VARIANT = directory, arch, variant


def _program(seed: int, variant: tuple[bool, bool]) -> RK.Program:
    """The program of `seed`; `variant` (descriptors, transposed): its loads through tensor
    descriptors, or a product of transposed operands (tl.dot programs alone)."""
    descriptors, transposed = variant
    if transposed:
        return RK.generate(seed, ("dot",), transposed=True)
    return RK.generate(seed, descriptors=descriptors)


def _prepare(seed: int) -> RK.Result:
    """Worker: everything up to the launch."""
    from tilecc.runtime.native_compile import hip_compiler_available

    prog = _program(seed, _VARIANT)
    targets = [("cuda", _ARCH)] + ([("hip", "gfx90a")] if hip_compiler_available() else [])
    res = RK.check(prog, _DIR, targets=targets)
    if res.kind == "ok":
        try:
            RK.precompile(prog, prog.load(_DIR), _ARCH)
        except Exception as e:  # the launch will report it
            res.detail = f"precompile: {type(e).__name__}: {e}"
    return res


def _gpu_arch() -> str:
    """The GPU's sm_XX, asked in a child process: the workers fork before CUDA starts here."""
    import subprocess

    out = subprocess.run([sys.executable, "-c", "import cupy; d = cupy.cuda.Device(0); "
                          "print(d.compute_capability)"], capture_output=True, text=True,
                         check=True).stdout.strip()
    return f"sm_{out}"


def _context_lost() -> bool:
    """Whether the last failure left the CUDA context unusable (a misaligned or illegal
    address is sticky: every later launch in this process would fail too)."""
    import cupy

    try:
        cupy.cuda.runtime.deviceSynchronize()
        return int((cupy.arange(2) + 1).sum()) != 3
    except Exception:
        return True


def _rest_in_a_new_process(args, start: int, n: int) -> tuple[collections.Counter,
                                                              collections.Counter]:
    """Seeds start..start+n-1 in a fresh process (with a fresh CUDA context); its counts."""
    import json
    import subprocess

    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run([sys.executable, __file__, "-n", str(n), "--start", str(start),
                        "--out", args.out, "--jobs", str(args.jobs), "--counts", f.name]
                       + (["--descriptors"] if args.descriptors else [])
                       + (["--transposed"] if args.transposed else []), check=False)
        with open(f.name) as g:
            saved = json.load(g)
    return collections.Counter(saved["counts"]), collections.Counter(saved["features"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=2000)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--out", default=os.environ.get("OUT", "random-kernels-out"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--counts", help="write the counts here as JSON (for a parent run)")
    ap.add_argument("--descriptors", action="store_true",
                    help="contiguous loads through tensor descriptors (tl.make_tensor_descriptor)")
    ap.add_argument("--transposed", action="store_true",
                    help="tl.dot programs alone, their operands stored transposed and read as x.T")
    args = ap.parse_args()
    variant = (args.descriptors, args.transposed)
    out_dir = os.path.join(args.out, "random_kernels")
    os.makedirs(out_dir, exist_ok=True)
    arch = _gpu_arch()
    work = tempfile.mkdtemp(prefix="random-kernels-")
    counts: collections.Counter = collections.Counter()
    features: collections.Counter = collections.Counter()
    t0 = time.time()
    seeds = range(args.start, args.start + args.n)
    rest = None  # the seeds after one that broke the CUDA context
    ctx = mp.get_context("fork")
    with ctx.Pool(args.jobs, initializer=_init, initargs=(work, arch, variant)) as pool:
        for res in pool.imap(_prepare, seeds, chunksize=4):
            prog = _program(res.seed, variant)
            features[prog.feature] += 1
            if res.kind == "ok":
                res = RK.run_gpu(prog, prog.load(work), res)
            counts[res.kind] += 1
            counts["undefined values (not compared)"] += res.undefined
            if res.kind != "ok":
                with open(os.path.join(out_dir, f"{prog.name}.py"), "w") as f:
                    f.write(prog.source)
                    f.write(f"\n# {res.kind}: launch grid {prog.grid}, num_warps "
                            f"{prog.num_warps}, scalars {prog.scalars}\n")
                    f.write("".join(f"# {line}\n" for line in res.detail.splitlines()))
                print(f"seed {res.seed} ({prog.feature}): {res.kind}: "
                      f"{res.detail.splitlines()[0][:300] if res.detail else ''}", flush=True)
                if res.kind == "gpu" and _context_lost():
                    rest = range(res.seed + 1, seeds.stop)
                    break
    if rest:
        print(f"(the CUDA context is lost: seeds {rest.start}.. go on in a new process)",
              flush=True)
        more_counts, more_features = _rest_in_a_new_process(args, rest.start, len(rest))
        counts.update(more_counts)
        features.update(more_features)
    if args.counts:
        import json

        with open(args.counts, "w") as f:
            json.dump({"counts": counts, "features": features}, f)
        return 0
    took = time.time() - t0
    failed = sum(v for k, v in counts.items() if k not in ("ok", "undefined values (not compared)"))
    print(f"\n{args.n} programs (seeds {args.start}..{args.start + args.n - 1}) on {arch} in "
          f"{took:.0f} s; features {dict(features)}")
    for kind in ("ok", "internal", "rejected", "interpreter", "mismatch", "gpu",
                 "undefined values (not compared)"):
        print(f"  {kind:32s} {counts[kind]}")
    print(f"failing programs: {out_dir}" if failed else "no failures")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
