"""Real Triton libraries, unchanged, through tilecc's compatibility mode: op by op, each
against a plain-PyTorch reference and, where Triton itself is installed, against the same
library run by Triton.

    python scripts/corpus/run.py [--libs liger,fla,gemlite,mamba] [--device cpu|cuda]
                                 [--vs-triton] [--only lib:op,...] [--compile cuda,hip]
                                 [--timeout S] [--standins] [--corpus DIR] [--jobs N]
                                 [--deadline S]

The libraries are PyPI releases pinned to exact versions (each `lib_<name>.py` beside this
file names its release and its ops).  Nothing is installed: the downloaded wheels and
sdists are unpacked under the corpus folder (default `.corpus/` at the repository root,
ignored by git) and imported from there, so that the folder can travel to a machine
without a network.  Fetch them once with

    pip download --no-deps -d .corpus liger-kernel==0.8.5 fla-core==0.6.0 \\
        gemlite==0.6.0.post2 einops==0.8.1 tqdm==4.67.1 packaging==25.0
    MAMBA_SKIP_CUDA_BUILD=TRUE pip download --no-deps --no-build-isolation -d .corpus \\
        mamba-ssm==2.3.2.post1

(mamba-ssm is an sdist whose setup.py wants torch to say its metadata, hence
`--no-build-isolation` from an environment that has torch; einops, tqdm and packaging are
the pure-Python dependencies of fla, gemlite and mamba-ssm).

Each library runs in worker processes of its own (scripts/corpus/worker.py), one library
at a time: one with `import triton` resolving to tilecc (`tilecc.compat.install()`), and
with `--vs-triton` one with Triton itself.  For every op the worker calls the library's
entry point forward (and backward where it has one) on small random inputs and compares
with the reference; each op's forward and backward are

    ok          every case matched
    mismatch    the largest error (and the case) where one did not
    refused     tilecc refused a kernel (its CompilationError, or the compatibility mode's
                ImportError/AttributeError for a part of Triton it lacks): message, place
    error       anything else: the exception and where it was raised
    n/a         the op has no Triton path on this device (reason given)

On the CPU (`--device cpu`, the default without a GPU) kernels run on tilecc's interpreter
(TILECC_INTERPRET=1, Triton's with TRITON_INTERPRET=1) over torch CPU tensors, each
kernel specialization launched is also compiled for `--compile` (default cuda: tilecc's
CUDA source through NVRTC, no GPU needed), and a stand-in driver answers the device
queries libraries make (an sm_90 GPU).  On a GPU, `--vs-triton` compares outputs and
gradients case by case with Triton's and times both (kernel time by torch's profiler):
the `ratio` column is tilecc's time over Triton's.

With `--jobs N` a library's ops are dealt round-robin to N shards, each shard a worker
of its own, and the tilecc and Triton workers of every shard run at the same time: the
run is bound by compiling (autotuning) on the host, so shards on a machine with many cores
cut the wall time about N-fold.  Processes share the GPU by time-slicing, which a kernel's time
would count: every worker times its calls holding a lock the others wait for
(`worker.gpu_alone`); autotuning is not under it, and may pick by disturbed times.

One table per library and a summary are printed; the exit status is 0 whatever the outcomes.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
LIBRARIES = ["liger", "fla", "gemlite", "mamba"]
sys.path.insert(0, HERE)


# ------------------------------------------------------------------------------------------
# The corpus folder: archives unpacked on first use


def unpack(corpus: str, archive: str) -> str:
    """The folder an archive (wheel or sdist) of `corpus` is unpacked into."""
    path = os.path.join(corpus, archive)
    stem = archive.removesuffix(".whl").removesuffix(".tar.gz").removesuffix(".zip")
    dest = os.path.join(corpus, "src", stem)
    if os.path.isdir(dest):
        return dest
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path} is missing: fetch it as this script's docstring says")
    tmp = dest + ".part"
    if archive.endswith(".tar.gz"):
        with tarfile.open(path) as t:
            t.extractall(tmp, filter="data")
    else:
        with zipfile.ZipFile(path) as z:
            z.extractall(tmp)
    os.replace(tmp, dest)
    return dest


def library_paths(corpus: str, lib) -> tuple[str, list[str]]:
    src = os.path.join(unpack(corpus, lib.ARCHIVE), lib.ROOT)
    return src, [unpack(corpus, a) for a in lib.DEPS]


# ------------------------------------------------------------------------------------------
# Workers


def run_worker(name: str, backend: str, args, src: str, deps: list[str], ops: list[str],
               save: str | None) -> tuple[dict, dict]:
    """(header, rows by op) of one worker; ops it did not report are errors."""
    fd, report = tempfile.mkstemp(suffix=".jsonl", prefix=f"corpus-{name}-{backend}-")
    os.close(fd)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([REPO, *args.lib_dir, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    if args.device == "cpu":
        env["TILECC_INTERPRET" if backend == "tilecc" else "TRITON_INTERPRET"] = "1"
    cmd = [sys.executable, os.path.join(HERE, "worker.py"), "--lib", name, "--src", src,
           "--deps", os.pathsep.join(deps), "--backend", backend, "--device", args.device,
           "--report", report, "--timeout", str(args.timeout), "--only", ",".join(ops)]
    if save:
        cmd += ["--save", save]
    if backend == "tilecc" and args.device == "cpu" and args.compile:
        cmd += ["--compile", args.compile]
    if args.device == "cuda" and args.vs_triton:
        cmd += ["--time"]
    if args.standins:
        cmd += ["--standins"]
    if args.traceback:
        cmd += ["--traceback"]
    ended = ""
    try:
        limit = args.timeout * (len(ops) + 1) + 60
        if args.deadline:
            limit = min(limit, max(1.0, args.deadline - time.monotonic()))
        r = subprocess.run(cmd, env=env, timeout=limit)
        if r.returncode:
            ended = f"error: the worker ended with status {r.returncode}"
    except subprocess.TimeoutExpired:
        cut = args.deadline and time.monotonic() >= args.deadline - 1
        ended = "error: cut at the run's deadline" if cut else "error: the worker ran past its time"
    header, rows = {}, {}
    with open(report) as f:
        for line in f:
            item = json.loads(line)
            if "op" in item:
                rows[item["op"]] = item
            else:
                header.update(item)
    os.unlink(report)
    for op in ops:
        if op not in rows:
            why = header.get("load") or ended or "error: not reported"
            kind = why.split(":")[0]
            rows[op] = {"op": op, "forward": kind, "backward": "-", "detail": why.split(": ", 1)[-1],
                        "kernels": [], "compile": {}, "times_us": {}, "kernel_us": {},
                        "cases": 0}
    return header, rows


def run_sharded(name: str, args, src: str, deps: list[str], ops: list[str], save_mine,
                save_theirs) -> tuple[dict, dict, dict]:
    """(header, tilecc rows, Triton rows) of a library: its ops dealt to `args.jobs` shards,
    every shard's workers of both backends running at once."""
    shards = [ops[i::args.jobs] for i in range(min(args.jobs, len(ops)))]
    backends = ["tilecc", "triton"] if args.vs_triton else ["tilecc"]
    saves = {"tilecc": save_mine, "triton": save_theirs}
    jobs = [(b, shard) for shard in shards for b in backends]
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        done = list(pool.map(lambda j: run_worker(name, j[0], args, src, deps, j[1], saves[j[0]]),
                             jobs))
    header: dict = {}
    rows: dict[str, dict] = {"tilecc": {}, "triton": {}}
    for (backend, _), (h, r) in zip(jobs, done):
        if backend == "tilecc":
            header.update(h)
        rows[backend].update(r)
    return header, rows["tilecc"], rows["triton"]


# ------------------------------------------------------------------------------------------
# Two backends compared


def compare_saved(op: str, mine: str, theirs: str) -> str:
    """`ok N` (cases whose outputs and gradients match), `mismatch [case] ...` or `-`."""
    import torch

    from worker import compare

    a_path, b_path = os.path.join(mine, f"{op}.pt"), os.path.join(theirs, f"{op}.pt")
    if not (os.path.exists(a_path) and os.path.exists(b_path)):
        return "-"
    a, b = torch.load(a_path), torch.load(b_path)
    n = 0
    for case in a:
        if case not in b or "out" not in a[case] or "out" not in b[case]:
            continue
        t = a[case]
        bad = compare(a[case]["out"], b[case]["out"], t["atol"], t["rtol"], "output")
        if bad is None and "grad" in a[case] and "grad" in b[case]:
            bad = compare(a[case]["grad"], b[case]["grad"], t["bwd_atol"], t["bwd_rtol"],
                          "grad of input")
        if bad:
            return f"mismatch [{case}] {bad}"
        n += 1
    return f"ok {n}" if n else "-"


def ratio(mine: dict, theirs: dict) -> float | None:
    both = [c for c in mine if c in theirs and theirs[c] > 0]
    if not both:
        return None
    return sum(mine[c] for c in both) / sum(theirs[c] for c in both)


# ------------------------------------------------------------------------------------------
# Tables


def print_kernels(rows: list[dict], kernel_times: dict, at_least: float) -> None:
    """Each kernel of the ops at or past `at_least` (tilecc time over Triton's), its device
    time a call summed over the op's cases under each backend: which kernel makes the gap."""
    slow = [r["op"] for r in rows if r.get("_ratio") and r["_ratio"] >= at_least]
    if not slow:
        return
    print(f"   kernels of the ops at or past {at_least:.2f} (µs a call over the cases, "
          "tilecc / Triton)")
    for op in slow:
        mine, theirs = kernel_times[op]
        for k in sorted(set(mine) | set(theirs), key=lambda k: -mine.get(k, 0.0)):
            a, b = mine.get(k), theirs.get(k)
            q = f"{a / b:6.2f}" if a and b else "     -"
            print(f"   {op:<26} {k[:60]:<60} {a or 0:9.1f} {b or 0:9.1f} {q}")

KINDS = ("ok", "mismatch", "refused", "error", "n/a", "-")


def print_library(name: str, lib, rows: list[dict], columns: list[str], device: str, header: dict):
    w = max([len(r["op"]) for r in rows] + [2])
    widths = [max(9, len(c), *(len(str(r.get(c, ""))) for r in rows)) for c in columns]
    where = "interpreter" if device == "cpu" else "GPU"
    print(f"\n== {name} ({lib.RELEASE}) through tilecc on {device} ({where}); "
          f"triton = {header.get('triton', '?')}")
    if "load" in header:
        print(f"   the library did not load: {header['load']}")
    print(f"{'op':<{w}}  " + " ".join(f"{c:<{cw}}" for c, cw in zip(columns, widths)) + " detail")
    for r in rows:
        print(f"{r['op']:<{w}}  " + " ".join(f"{str(r.get(c, '')):<{cw}}" for c, cw in zip(columns, widths))
              + f" {r.get('detail', '')}")
    for c in columns:
        if c in ("ratio", "kernels"):
            continue
        counts: dict[str, int] = {}
        for r in rows:
            kind = str(r.get(c, "-")).split(" ")[0]
            counts[kind] = counts.get(kind, 0) + 1
        print(f"  {c}: " + ", ".join(f"{counts[k]} {k}" for k in KINDS if k in counts)
              + f" (of {len(rows)})")


def summary_row(name: str, lib, rows: list[dict], device: str) -> dict:
    run = [r for r in rows if r["forward"] in ("ok", "mismatch")]
    match = [r for r in rows if r["forward"] == "ok" and r["backward"] in ("ok", "-")]
    compiled = [r for r in rows if str(r.get("cuda compile", "")).startswith("ok")]
    vs = [r for r in rows if str(r.get("vs triton", "")).startswith("ok")]
    ratios = [r["_ratio"] for r in rows if r.get("_ratio")]
    mine = sum(r["_mine_us"] for r in rows if r.get("_ratio"))
    theirs = sum(r["_theirs_us"] for r in rows if r.get("_ratio"))
    return {"library": name, "release": lib.RELEASE, "ops": len(rows), "run": len(run),
            "match": len(match), "compiled": len(compiled) if device == "cpu" else "-",
            "vs triton": len(vs) if any("vs triton" in r for r in rows) else "-",
            "time ratio": f"{mine / theirs:.2f}" if theirs else "-",
            "geomean": f"{math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f}" if ratios else "-"}


def print_summary(summary: list[dict]) -> None:
    cols = ["library", "release", "ops", "run", "match", "compiled", "vs triton", "time ratio",
            "geomean"]
    widths = [max(len(c), *(len(str(s[c])) for s in summary)) for c in cols]
    print("\n== summary (run: forward ran; match: forward and backward equal the reference; "
          "compiled: every kernel compiled for CUDA; time ratio: tilecc / Triton GPU time)")
    print("  ".join(f"{c:<{w}}" for c, w in zip(cols, widths)))
    for s in summary:
        print("  ".join(f"{str(s[c]):<{w}}" for c, w in zip(cols, widths)))


# ------------------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--libs", default=",".join(LIBRARIES))
    p.add_argument("--device", choices=["cpu", "cuda"], default=None)
    p.add_argument("--corpus", default=os.path.join(REPO, ".corpus"))
    p.add_argument("--only", default="", help="lib:op,... (ops of other libraries run whole)")
    p.add_argument("--vs-triton", action="store_true",
                   help="also run each library under Triton itself and compare (and time, on a GPU)")
    p.add_argument("--compile", default="cuda",
                   help="on the CPU, compile each kernel launched for these targets ('' for none)")
    p.add_argument("--timeout", type=int, default=300, help="seconds per op")
    p.add_argument("--standins", action="store_true",
                   help="apply each library's driver-side stand-ins for Triton API tilecc lacks")
    p.add_argument("--deadline", type=float, default=0,
                   help="seconds for the whole run: workers still running then are stopped, "
                        "their ops reported as past their time, and the tables printed")
    p.add_argument("--jobs", type=int, default=1,
                   help="shards of each library's ops run at once (both backends each)")
    p.add_argument("--traceback", action="store_true", help="whole tracebacks of errors (stderr)")
    p.add_argument("--kernels", type=float, default=None, metavar="RATIO",
                   help="with --vs-triton on a GPU: under each library's table, every kernel "
                        "of an op whose tilecc / Triton time is at least RATIO, timed apart")
    p.add_argument("--lib-dir", action="append", default=[],
                   help="another directory holding lib_<name>.py modules")
    args = p.parse_args(argv)
    if args.deadline:
        args.deadline += time.monotonic()
    sys.path[1:1] = args.lib_dir
    if args.device is None:
        import torch

        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    if args.device == "cuda" and args.vs_triton:  # workers time one at a time (worker.gpu_alone)
        fd, os.environ["CORPUS_GPU_LOCK"] = tempfile.mkstemp(prefix="corpus-gpu-", suffix=".lock")
        os.close(fd)
    only: dict[str, list[str]] = {}
    for item in filter(None, args.only.split(",")):
        lib_name, _, op = item.partition(":")
        only.setdefault(lib_name, []).append(op)
    names = [n for n in args.libs.split(",") if n]
    summary = []
    for name in names:
        lib = importlib.import_module(f"lib_{name}")
        try:
            src, deps = library_paths(args.corpus, lib)
        except FileNotFoundError as e:
            print(f"\n== {name} ({lib.RELEASE}): {e}")
            continue
        ops = only.get(name) or list(lib.OPS)
        unknown = [op for op in ops if op not in lib.OPS.table]
        if unknown:
            print(f"\n== {name}: unknown ops {', '.join(unknown)} (known: {', '.join(lib.OPS)})")
            continue
        with tempfile.TemporaryDirectory(prefix=f"corpus-{name}-") as tmp:
            save_mine = os.path.join(tmp, "tilecc") if args.vs_triton else None
            save_theirs = os.path.join(tmp, "triton")
            header, mine, theirs = run_sharded(name, args, src, deps, ops, save_mine, save_theirs)
            rows, kernel_times = [], {}
            for op in ops:
                r = dict(mine[op])
                for target, kind in r.get("compile", {}).items():
                    r[f"{target} compile"] = kind
                if args.vs_triton:
                    t = theirs[op]
                    r["triton"] = f"{t['forward']} {t['backward']}"
                    r["vs triton"] = compare_saved(op, save_mine, save_theirs)
                    kernel_times[op] = (r.get("kernel_us", {}), t.get("kernel_us", {}))
                    q = ratio(r.get("times_us", {}), t.get("times_us", {}))
                    if q is not None:
                        both = [c for c in r["times_us"] if c in t["times_us"]]
                        r["_ratio"], r["ratio"] = q, f"{q:.2f}"
                        r["_mine_us"] = sum(r["times_us"][c] for c in both)
                        r["_theirs_us"] = sum(t["times_us"][c] for c in both)
                    if (t["forward"], t["backward"]) != ("ok", "ok") and t.get("detail"):
                        r["detail"] = (r.get("detail", "") + f"; triton: {t['detail']}").lstrip("; ")
                if not r.get("detail"):
                    r["detail"] = f"{r.get('cases', 0)} cases, kernels: {', '.join(r.get('kernels', [])) or 'none'}"
                rows.append(r)
        columns = ["forward", "backward"]
        if args.device == "cpu":
            columns += [f"{t} compile" for t in args.compile.split(",") if t]
        if args.vs_triton:
            columns += ["triton", "vs triton"] + (["ratio"] if args.device == "cuda" else [])
        print_library(name, lib, rows, columns, args.device, header)
        if args.kernels is not None and args.vs_triton:
            print_kernels(rows, kernel_times, args.kernels)
        summary.append(summary_row(name, lib, rows, args.device))
        sys.stdout.flush()
    if summary:
        print_summary(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
