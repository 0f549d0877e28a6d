"""The random-kernel campaign on a GPU: N programs of tilecc.testing.random_kernels, from
seeds, each transpiled, compiled (NVRTC for this GPU, hiprtc for gfx90a), run on the
interpreter against NumPy, then launched on the GPU and compared with both.

    PYTHONPATH=. python3 scripts/gpu/random_kernels.py [-n 2000] [--start 0] [--out DIR]
        [--wild | --features a,b] [--no-gpu | --hip-only [--batch 60]] [--jobs N]

Workers transpile, compile (into tilecc's disk cache) and interpret in parallel; the main
process only launches.  Prints the counts (internal errors, compiler rejections,
interpreter errors, mismatches, GPU failures; ill-conditioned differences, which are not
failures) overall and by feature, and writes each failing program's source and what went
wrong to DIR (default $OUT or random-kernels-out).  Exit status 1 if any failed.
`--wild` draws the constructs of libraries' kernels (random_kernels.WILD_FEATURES;
`--features` names any, random_kernels.LATER_FEATURES' included);
`--no-gpu` stops before the launch (NVRTC for sm_90, hiprtc, the interpreter: a campaign
on a machine without a GPU).  `--hip-only` transpiles for HIP alone and compiles the
programs for gfx90a `--batch` at a time in one hiprtc run (tilecc.testing.batch; a batch
that fails is halved until its culprits stand alone): no NVRTC, interpreter or GPU, for a
machine with hiprtc but no GPU; it writes the counts after each batch, so that an
interrupted run says which seeds it finished.
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
_VARIANT: tuple = (False, False, RK.FEATURES, True)  # descriptors, transposed, features, gpu


def _init(directory: str, arch: str, variant: tuple = _VARIANT) -> None:
    global _DIR, _ARCH, _VARIANT
    _DIR, _ARCH, _VARIANT = directory, arch, variant


def _program(seed: int, variant: tuple) -> RK.Program:
    """The program of `seed`; `variant` (descriptors, transposed, features, gpu): its loads
    through tensor descriptors, or a product of transposed operands (tl.dot programs
    alone), drawn from `features`."""
    descriptors, transposed, features, _ = variant
    if transposed:
        return RK.generate(seed, ("dot",), transposed=True)
    return RK.generate(seed, features, descriptors=descriptors)


def _prepare(seed: int) -> RK.Result:
    """Worker: everything up to the launch."""
    from tilecc.runtime.native_compile import hip_compiler_available

    prog = _program(seed, _VARIANT)
    targets = [("cuda", _ARCH)] + ([("hip", "gfx90a")] if hip_compiler_available() else [])
    res = RK.check(prog, _DIR, targets=targets)
    if res.kind == "ok" and _VARIANT[3]:
        try:
            RK.precompile(prog, prog.load(_DIR), _ARCH)
        except Exception as e:  # the launch will report it
            res.detail = f"precompile: {type(e).__name__}: {e}"
    return res


def _transpile_hip(seed: int) -> RK.Result:
    """Worker of --hip-only: the program's HIP source (in res.sources), or why none."""
    return RK.check(_program(seed, _VARIANT), _DIR, targets=(("hip", None),), interpret=False)


def _compile_hip(results: list[RK.Result]) -> None:
    """hiprtc (gfx90a) on the HIP sources of `results` in one run; each whose source fails
    alone becomes "rejected", with hiprtc's message."""
    from tilecc.testing import batch

    texts = {i: r.sources["hip"] for i, r in enumerate(results)}
    for i, e in batch.failures(texts, "hip", "gfx90a").items():
        results[i].kind, results[i].detail = "rejected", f"hip (gfx90a): {e}"


def _hip_only_results(seeds: range, args, work: str, variant: tuple):
    """--hip-only: the seeds' results in order, a batch at a time; transpiled in workers
    (none with --jobs 1: one process in all), compiled here."""
    _init(work, "gfx90a", variant)
    if args.jobs > 1:
        pool = mp.get_context("fork").Pool(args.jobs, initializer=_init,
                                           initargs=(work, "gfx90a", variant))
        transpiled = pool.imap(_transpile_hip, seeds, chunksize=4)
    else:
        pool, transpiled = None, map(_transpile_hip, seeds)
    try:
        pending: list[RK.Result] = []
        for res in transpiled:
            pending.append(res)
            if len(pending) == args.batch or res.seed == seeds.stop - 1:
                _compile_hip([r for r in pending if r.kind == "ok"])
                yield pending
                pending = []
    finally:
        if pool is not None:
            pool.terminate()


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
                       + (["--transposed"] if args.transposed else [])
                       + (["--features", ",".join(args.feature_list)]), check=False)
        with open(f.name) as g:
            saved = json.load(g)
    by_feature = collections.Counter({tuple(k.split("|")): v for k, v in saved["by_feature"]})
    return collections.Counter(saved["counts"]), by_feature


KINDS = ("ok", "internal", "rejected", "interpreter", "mismatch", "gpu", "ill-conditioned",
         "undefined values (not compared)")
NOT_FAILURES = ("ok", "ill-conditioned", "undefined values (not compared)")


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
    ap.add_argument("--wild", action="store_true",
                    help="the constructs of libraries' kernels (random_kernels.WILD_FEATURES)")
    ap.add_argument("--features", help="comma-separated features to draw from")
    ap.add_argument("--no-gpu", action="store_true",
                    help="stop before the launch: compile (sm_90, gfx90a) and interpret only")
    ap.add_argument("--hip-only", action="store_true",
                    help="transpile for HIP and compile for gfx90a only, --batch programs "
                         "per hiprtc run (no NVRTC, interpreter or GPU)")
    ap.add_argument("--batch", type=int, default=60,
                    help="programs per hiprtc run with --hip-only (default 60)")
    args = ap.parse_args()
    args.feature_list = tuple(args.features.split(",")) if args.features else \
        RK.WILD_FEATURES if args.wild else RK.FEATURES
    unknown = set(args.feature_list) - set(RK.FEATURES) - set(RK.WILD_FEATURES) - \
        set(RK.LATER_FEATURES)
    if unknown:
        ap.error(f"unknown features {sorted(unknown)}")
    if args.hip_only and args.no_gpu:
        ap.error("--hip-only already leaves the GPU out (and NVRTC and the interpreter)")
    variant = (args.descriptors, args.transposed, args.feature_list,
               not (args.no_gpu or args.hip_only))
    out_dir = os.path.join(args.out, "random_kernels")
    os.makedirs(out_dir, exist_ok=True)
    arch = "sm_90" if args.no_gpu else "gfx90a" if args.hip_only else _gpu_arch()
    work = tempfile.mkdtemp(prefix="random-kernels-")
    counts: collections.Counter = collections.Counter()
    by_feature: collections.Counter = collections.Counter()  # (feature, kind)
    t0 = time.time()
    seeds = range(args.start, args.start + args.n)

    def record(res: RK.Result, prog: RK.Program) -> None:
        counts[res.kind] += 1
        by_feature[(prog.feature, res.kind)] += 1
        counts["undefined values (not compared)"] += res.undefined
        if res.kind != "ok":
            with open(os.path.join(out_dir, f"{prog.name}.py"), "w") as f:
                f.write(prog.source)
                f.write(f"\n# {res.kind}: launch grid {prog.grid}, num_warps "
                        f"{prog.num_warps}, num_stages {prog.num_stages}, "
                        f"scalars {prog.scalars}\n")
                f.write("".join(f"# {line}\n" for line in res.detail.splitlines()))
            print(f"seed {res.seed} ({prog.feature}): {res.kind}: "
                  f"{res.detail.splitlines()[0][:300] if res.detail else ''}", flush=True)

    rest = None  # the seeds after one that broke the CUDA context
    if args.hip_only:
        for results in _hip_only_results(seeds, args, work, variant):
            for res in results:
                record(res, _program(res.seed, variant))
            if args.counts:
                _write_counts(args.counts, counts, by_feature, range(seeds.start,
                                                                      results[-1].seed + 1))
            print(f"seeds {seeds.start}..{results[-1].seed} done in {time.time() - t0:.0f} s: "
                  + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()) if v), flush=True)
    else:
        ctx = mp.get_context("fork")
        with ctx.Pool(args.jobs, initializer=_init, initargs=(work, arch, variant)) as pool:
            for res in pool.imap(_prepare, seeds, chunksize=4):
                prog = _program(res.seed, variant)
                if res.kind == "ok" and not args.no_gpu:
                    res = RK.run_gpu(prog, prog.load(work), res)
                record(res, prog)
                if res.kind == "gpu" and _context_lost():
                    rest = range(res.seed + 1, seeds.stop)
                    break
    if rest:
        print(f"(the CUDA context is lost: seeds {rest.start}.. go on in a new process)",
              flush=True)
        more_counts, more_by_feature = _rest_in_a_new_process(args, rest.start, len(rest))
        counts.update(more_counts)
        by_feature.update(more_by_feature)
    if args.counts:
        _write_counts(args.counts, counts, by_feature, seeds)
        if not args.hip_only:  # a parent run prints the counts
            return 0
    took = time.time() - t0
    failed = sum(v for k, v in counts.items() if k not in NOT_FAILURES)
    where = ("no GPU: compiled and interpreted" if args.no_gpu else
             f"gfx90a, hiprtc only, {args.batch} per run" if args.hip_only else arch)
    print(f"\n{args.n} programs (seeds {args.start}..{args.start + args.n - 1}) on {where} in "
          f"{took:.0f} s")
    for kind in KINDS:
        print(f"  {kind:32s} {counts[kind]}")
    print("by feature:")
    for feature in sorted({f for f, _ in by_feature}):
        kinds = {k: v for (f, k), v in by_feature.items() if f == feature}
        print(f"  {feature:16s} {sum(kinds.values()):5d}  " +
              ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    print(f"failing programs: {out_dir}" if failed else "no failures")
    return 1 if failed else 0


def _write_counts(path: str, counts, by_feature, seeds: range) -> None:
    """The counts as JSON: for a parent run, or to say how far an interrupted one got."""
    import json

    with open(path, "w") as f:
        json.dump({"counts": counts, "seeds": [seeds.start, seeds.stop - 1],
                   "by_feature": [("|".join(k), v) for k, v in by_feature.items()]}, f)

if __name__ == "__main__":
    sys.exit(main())
