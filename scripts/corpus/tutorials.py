"""Triton's own tutorials, unchanged, through tilecc's compatibility mode: each tutorial file
of a folder run in a subprocess as

    python -m tilecc.compat TUTORIAL.py

and a table printed: tutorial, status, seconds.

    python scripts/corpus/tutorials.py [DIR] [--only 01,03] [--timeout S] [--no-bench]
                                       [--out DIR] [--cpu [--compile cuda,hip]]

DIR (default `.corpus/tutorials` at the repository root, ignored by git: the tutorials are
Triton's code, never committed here) holds the tutorials as Triton publishes them
(`python/tutorials/NN-name.py`); every `*.py` in it runs, in name order.  Each runs with its
own folder `OUT/<name>/` (default OUT `.corpus/tutorials-out`) as working directory (the
tutorials that save benchmark tables write them there), its stdout and stderr captured to
`stdout.txt` and `stderr.txt` in it.  A status is

    ran                               the program exited with status 0
    failed at FILE:LINE: ERROR        it did not: the innermost frame of the tutorial's own
                                      file in the last traceback, and that traceback's
                                      error line (the exit status where there is none)
    timed out                         still running after --timeout seconds (killed)

The exit status is 1 if any tutorial failed or timed out, else 0.

`--no-bench` skips the tutorials' benchmark sections without editing them: the tutorial
then runs under `python -m tilecc.compat -m tutorial_hooks TUTORIAL.py` (tutorial_hooks.py
beside this file), which replaces `.run(...)` of `@triton.testing.perf_report` functions
by a line saying the benchmark was skipped, then runs the file as `__main__`.  Only the
perf_report tables are skipped: a tutorial that times things its own way (09 and 10 use
Triton's profiler, proton) still does.  Without it the benchmarks run in full, which on a
GPU takes minutes for some tutorials (03's autotuned sweep): give --timeout room.

`--cpu` is for a machine without a GPU: TRITON_INTERPRET=1 (tilecc's interpreter over
torch CPU tensors), the corpus worker's stand-in driver answering the device queries (an
sm_90 GPU whose torch device is the CPU), autotuning taking the first configuration, and
each kernel specialization launched also compiled for `--compile` targets (NVRTC /
hiprtc); the table then has a column per target.  It tells how far each tutorial's host
code goes and whether its kernels compile; tutorials that need a CUDA device by name
(`device="cuda"`, `torch.cuda...`) stop there.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+)')


def failure(stderr: str, tutorial: str, returncode: int) -> str:
    """`FILE:LINE: ERROR` of the last traceback in `stderr`: the innermost frame in the
    tutorial's own file (else the innermost frame) and the error line after the frames."""
    lines = stderr.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent")]
    if not starts:
        tail = next((line for line in reversed(lines) if line.strip()), "")
        return f"exit status {returncode}" + (f": {tail.strip()[:200]}" if tail else "")
    block = lines[starts[-1] + 1:]
    frames = [(i, m) for i, line in enumerate(block) if (m := _FRAME.match(line))]
    own = [(i, m) for i, m in frames if os.path.abspath(m.group(1)) == os.path.abspath(tutorial)]
    place = ""
    if own or frames:
        _, m = (own or frames)[-1]
        place = f"{os.path.basename(m.group(1))}:{m.group(2)}: "
    after = block[frames[-1][0] + 1:] if frames else block
    # the error line: the first line after the last frame (and its source lines, and the
    # carets under them) that starts in column 0
    error = next((line for line in after if line and not line[0].isspace()), "")
    return place + (error.strip()[:240] or f"exit status {returncode}")


def run_one(path: str, out: str, args) -> dict:
    name = os.path.splitext(os.path.basename(path))[0]
    folder = os.path.join(out, name)
    os.makedirs(folder, exist_ok=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (REPO, HERE, env.get("PYTHONPATH")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    report = os.path.join(folder, "compiled.json")
    hooked = args.no_bench or args.cpu
    if args.no_bench:
        env["TUTORIAL_NO_BENCH"] = "1"
    if args.cpu:
        env.update(TUTORIAL_CPU="1", TRITON_INTERPRET="1", TUTORIAL_COMPILE=args.compile,
                   TUTORIAL_REPORT=report)
        if os.path.exists(report):
            os.remove(report)
    command = [args.python, "-m", "tilecc.compat"]
    command += ["-m", "tutorial_hooks", path] if hooked else [path]
    t0 = time.time()
    with open(os.path.join(folder, "stdout.txt"), "w") as so, \
            open(os.path.join(folder, "stderr.txt"), "w") as se:
        try:
            done = subprocess.run(command, cwd=folder, env=env, stdout=so, stderr=se,
                                  timeout=args.timeout)
            code = done.returncode
        except subprocess.TimeoutExpired:
            code = None
    seconds = time.time() - t0
    with open(os.path.join(folder, "stderr.txt"), errors="replace") as f:
        stderr = f.read()
    if code is None:
        status = "timed out"
    elif code == 0:
        status = "ran"
    else:
        status = "failed at " + failure(stderr, path, code)
    row = {"tutorial": name, "status": status, "seconds": seconds}
    if args.cpu and os.path.exists(report):
        with open(report) as f:
            compiled = json.load(f)
        for target in args.compile.split(","):
            outcome, first = compiled.get(target, ("-", ""))
            row[target] = outcome + (f" ({first})" if first else "")
    return row


def table(rows: list[dict], targets: list[str]) -> str:
    columns = ["tutorial", "status", "seconds", *targets]
    cells = [columns] + [[r["tutorial"], r["status"], f"{r['seconds']:.1f}",
                          *(r.get(t, "-") for t in targets)] for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(columns))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip()
                     for row in cells)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folder", nargs="?", default=os.path.join(REPO, ".corpus", "tutorials"))
    p.add_argument("--only", default="", help="comma-separated name prefixes (01,03,...)")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per tutorial")
    p.add_argument("--no-bench", action="store_true",
                   help="skip the perf_report benchmark tables (tutorial files unchanged)")
    p.add_argument("--out", default=os.path.join(REPO, ".corpus", "tutorials-out"))
    p.add_argument("--cpu", action="store_true",
                   help="no GPU: interpreter, stand-in driver, kernels also compiled")
    p.add_argument("--compile", default="cuda,hip", help="targets compiled with --cpu")
    p.add_argument("--python", default=sys.executable)
    args = p.parse_args(argv)
    folder = os.path.abspath(args.folder)
    if not os.path.isdir(folder):
        print(f"{folder}: no such folder (put Triton's python/tutorials/*.py there)",
              file=sys.stderr)
        return 2
    only = [x for x in args.only.split(",") if x]
    files = sorted(f for f in os.listdir(folder) if f.endswith(".py")
                   and (not only or any(f.startswith(o) for o in only)))
    if not files:
        print(f"{folder}: no tutorials (*.py) to run", file=sys.stderr)
        return 2
    out = os.path.abspath(args.out)
    rows = []
    for f in files:
        print(f"[tutorials] {f} ...", file=sys.stderr, flush=True)
        rows.append(run_one(os.path.join(folder, f), out, args))
        print(f"[tutorials] {f}: {rows[-1]['status']} ({rows[-1]['seconds']:.1f} s)",
              file=sys.stderr, flush=True)
    print(table(rows, args.compile.split(",") if args.cpu else []))
    print(f"\nlogs: {out}/<tutorial>/stdout.txt, stderr.txt")
    return 0 if all(r["status"] == "ran" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
