"""Triton's own language tests (`python/test/unit/language/test_core.py`), unchanged, run
under tilecc's compatibility mode and under Triton, case by case: how much of what Triton
passes tilecc passes, and how the rest fails.

    python scripts/corpus/triton_tests.py [--device cpu|cuda] [-k EXPR] [--sample N]
        [--jobs N] [--out DIR] [--tests DIR] [--files test_core.py,...]
        [--triton-python PYTHON] [--python PYTHON] [--timeout S] [-m MARKEXPR]

The test files are Triton's, so they are not in the repository: put them in the tests
folder (default `.corpus/triton_tests/` at the repository root, ignored by git), as
Triton has them at one commit: `python/test/unit/language/test_core.py` and the
`python/test/conftest.py` beside it (its `device` fixture).  They import
`triton._internal_testing` from the installed Triton wheel, so the Python that runs them
needs Triton installed (and PyTorch, NumPy, pytest; pytest-xdist for `--jobs`); under
tilecc the plugin loads that file with `import triton` resolving to tilecc
(`triton_tests_plugin.py`).

The device: `cpu` runs both on their interpreters (TRITON_INTERPRET=1, torch CPU tensors,
as Triton's CI runs these tests on CPU; only the tests marked `interpreter`, unless `-m`
says otherwise); `cuda` runs both on the GPU.  The same selection runs twice, in separate
pytest processes: under Triton (`--triton-python`, default this Python) and under tilecc
(`--python`, default this Python, with this repository first on PYTHONPATH).  Triton's
outcomes are kept in the out folder (`triton-<device>.json`, keyed by node id and by the
test file's hash) and computed only for cases it has not seen: its interpreter is slow.

`--sample N` takes N parametrizations of each test function (a deterministic choice: the
N whose node ids hash lowest), so that a CPU run fits minutes; `-k` selects as pytest's
does; `--jobs N` runs N pytest-xdist workers.

A case is applicable when it passes under Triton.  tilecc's outcome of each is one of
passed, refused (tilecc's CompilationError: an error of the right kind), different (an
assertion on values failed: the worst, each listed), error-text (the expected error came
with another message), accepted (no error where Triton raised one), timeout, crashed
(another exception: a bug), skipped; `internals` are cases that reach Triton's compiler
(triton.compile on IR text, knobs: refused by design), its IR levels (kernel.asm["ttir"])
or assert on the text of its PTX, counted apart.
Printed: a table per test function, the totals and the pass rate, every different value,
and the crashes and refusals grouped by message; `report.md` and `tilecc-<device>.json` in
the out folder hold the same.  The exit status is 0 whatever the outcomes.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def file_hash(paths: list[str]) -> str:
    h = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:16]


def pytest_command(python: str, backend: str, args, extra: list[str]) -> tuple[list, dict]:
    env = dict(os.environ)
    path = [HERE] + ([REPO] if backend == "tilecc" else [])
    env["PYTHONPATH"] = os.pathsep.join(path + [env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    if args.device == "cpu":
        env["TRITON_INTERPRET"] = "1"
    else:
        env.pop("TRITON_INTERPRET", None)
        env.pop("TILECC_INTERPRET", None)
    env.setdefault("TILECC_PROGRESS", "0")
    cmd = [python, "-m", "pytest", "-p", "triton_tests_plugin", "--tt-backend", backend,
           "--device", args.device, "-p", "no:cacheprovider", "-q", "-rN",
           "--rootdir", args.tests, *args.files]
    if args.marker:
        cmd += ["-m", args.marker]
    if args.k:
        cmd += ["-k", args.k]
    return cmd + extra, env


def collect(python: str, args) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        listed = os.path.join(tmp, "collected.txt")
        cmd, env = pytest_command(python, "triton", args, ["--collect-only",
                                                           "--tt-collected", listed])
        r = subprocess.run(cmd, env=env, cwd=args.tests, capture_output=True, text=True)
        ids = []
        if os.path.exists(listed):
            with open(listed) as f:
                ids = [line.rstrip("\n") for line in f if line.strip()]
    if not ids:
        sys.exit(f"collecting the tests found nothing:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return ids


def sample(ids: list[str], n: int) -> list[str]:
    """At most n node ids of each test function: those whose ids hash lowest."""
    if not n:
        return ids
    groups = collections.defaultdict(list)
    for i in ids:
        groups[i.split("[")[0]].append(i)
    rank = lambda i: hashlib.sha1(i.encode()).hexdigest()  # noqa: E731
    chosen = {i for group in groups.values() for i in sorted(group, key=rank)[:n]}
    return [i for i in ids if i in chosen]


def run(python: str, backend: str, ids: list[str], args) -> dict[str, dict]:
    """{node id: row} of one pytest run of `ids`."""
    with tempfile.TemporaryDirectory() as tmp:
        select, report = os.path.join(tmp, "select.txt"), os.path.join(tmp, "report.jsonl")
        with open(select, "w") as f:
            f.write("\n".join(ids) + "\n")
        extra = ["--tt-select", select, "--tt-report", report, "--tt-timeout",
                 str(args.timeout), "--continue-on-collection-errors"]
        if args.jobs > 1:
            extra += ["-n", str(args.jobs)]
        cmd, env = pytest_command(python, backend, args, extra)
        print(f"[{backend}] {len(ids)} cases: {' '.join(cmd[:4])} ...", file=sys.stderr,
              flush=True)
        r = subprocess.run(cmd, env=env, cwd=args.tests, capture_output=True, text=True)
        rows = {}
        if os.path.exists(report):
            with open(report) as f:
                for line in f:
                    row = json.loads(line)
                    rows[row["id"]] = row
    missing = [i for i in ids if i not in rows]
    tail = (r.stdout + r.stderr).strip().splitlines()[-3:]
    for i in missing:  # not collected, or the process died
        rows[i] = {"id": i, "outcome": "failed", "kind": "crashed", "where": "",
                   "detail": "no outcome reported: " + " | ".join(tail)[:300]}
    return rows


def triton_rows(ids: list[str], args, key: str) -> dict[str, dict]:
    """Triton's outcomes of `ids`: from the cache in the out folder, the rest run now."""
    path = os.path.join(args.out, f"triton-{args.device}.json")
    cache = {}
    if os.path.exists(path):
        with open(path) as f:
            saved = json.load(f)
        if saved.get("tests") == key:
            cache = saved["rows"]
    todo = [i for i in ids if i not in cache]
    if todo:
        cache.update(run(args.triton_python, "triton", todo, args))
        with open(path, "w") as f:
            json.dump({"tests": key, "rows": cache}, f, indent=0)
    return {i: cache[i] for i in ids}


# ------------------------------------------------------------------------------------------
# the report


def summarize(ids, ref, got) -> tuple[list[str], dict]:
    per_fn = collections.OrderedDict()
    totals = collections.Counter()
    for i in ids:
        fn = i.split("::")[-1].split("[")[0]
        c = per_fn.setdefault(fn, collections.Counter())
        c["selected"] += 1
        if ref[i]["kind"] != "passed":
            if got[i]["kind"] == "passed":
                c["beyond"] += 1
            continue
        kind = got[i]["kind"]
        if kind == "internals":
            c["internals"] += 1
            continue
        c["applicable"] += 1
        c[kind] += 1
    for c in per_fn.values():
        totals.update(c)
    cols = ("selected", "applicable", "passed", "refused", "different", "error-text",
            "accepted", "timeout", "crashed", "skipped", "internals", "beyond")
    lines = [f"| {'test':34} | " + " | ".join(f"{c[:6]:>6}" for c in cols) + " |",
             "|" + "-" * 36 + "|" + "|".join("-" * 8 for _ in cols) + "|"]
    for fn, c in list(per_fn.items()) + [("TOTAL", totals)]:
        lines.append(f"| {fn[:34]:34} | " + " | ".join(f"{c[k]:>6}" for k in cols) + " |")
    return lines, totals


def groups(ids, ref, got, kind) -> list[tuple[int, str, list[str]]]:
    by = collections.defaultdict(list)
    for i in ids:
        if ref[i]["kind"] == "passed" and got[i]["kind"] == kind:
            by[f"{got[i]['detail'][:200]}  ({got[i]['where']})"].append(i)
    return sorted(((len(v), k, v) for k, v in by.items()), key=lambda t: (-t[0], t[1]))


def report(ids, ref, got, args, total_collected) -> str:
    lines, t = summarize(ids, ref, got)
    pct = 100.0 * t["passed"] / t["applicable"] if t["applicable"] else 0.0
    out = [f"# Triton's language tests under tilecc ({args.device}"
           f"{', interpreter' if args.device == 'cpu' else ''})", "",
           f"Files: {', '.join(args.files)}; {len(ids)} cases selected of {total_collected} "
           f"collected (sample {args.sample or 'all'}, -k {args.k or '-'}, "
           f"-m {args.marker or '-'}).", "",
           f"**Applicable (passed under Triton): {t['applicable']}; passed under tilecc: "
           f"{t['passed']} ({pct:.1f} %); refused {t['refused']}; different values "
           f"{t['different']}; error text {t['error-text']}; accepted {t['accepted']}; "
           f"crashed {t['crashed']}; timeouts {t['timeout']}; skipped {t['skipped']}.** "
           f"Triton's compiler API (refused by design): {t['internals']} more; passing under "
           f"tilecc where Triton did not: {t['beyond']}.", ""] + lines
    for kind, title in (("different", "Different values"),
                        ("accepted", "No error where Triton raised"),
                        ("error-text", "Another error message"), ("crashed", "Crashes"),
                        ("timeout", "Timeouts"), ("refused", "Refusals"),
                        ("skipped", "Skipped under tilecc only")):
        found = groups(ids, ref, got, kind)
        if not found:
            continue
        out += ["", f"## {title}", ""]
        for n, text, cases in found:
            out.append(f"- {n} x {text}")
            shown = cases if kind == "different" else cases[:2]
            out += [f"    - `{c}`" for c in shown]
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--tests", default=os.path.join(REPO, ".corpus", "triton_tests"))
    p.add_argument("--files", default="test_core.py",
                   help="comma-separated test files of the tests folder")
    p.add_argument("-k", default=None, help="pytest's -k expression")
    p.add_argument("-m", dest="marker", default=None,
                   help="pytest's -m expression (default on cpu: interpreter)")
    p.add_argument("--sample", type=int, default=0, help="parametrizations per function")
    p.add_argument("--jobs", type=int, default=1, help="pytest-xdist workers")
    p.add_argument("--timeout", type=float, default=300, help="seconds per case")
    p.add_argument("--out", default=os.path.join(REPO, ".corpus", "triton-tests-out"))
    p.add_argument("--python", default=sys.executable, help="the Python that runs tilecc")
    p.add_argument("--triton-python", default=sys.executable,
                   help="the Python that runs Triton (with Triton installed)")
    args = p.parse_args(argv)
    # the real path: under a symlinked folder pytest would name the cases without their file
    args.tests = os.path.realpath(args.tests)
    args.files = [f for f in args.files.split(",") if f]
    if args.marker is None and args.device == "cpu":
        args.marker = "interpreter"
    os.makedirs(args.out, exist_ok=True)
    missing = [f for f in args.files + ["conftest.py"]
               if not os.path.exists(os.path.join(args.tests, f))]
    if missing:
        sys.exit(f"{args.tests} lacks {', '.join(missing)}: put Triton's test files there "
                 "(see this script's docstring)")
    key = file_hash([os.path.join(args.tests, f) for f in args.files + ["conftest.py"]])
    everything = collect(args.triton_python, args)
    ids = sample(everything, args.sample)
    ref = triton_rows(ids, args, key)
    got = run(args.python, "tilecc", ids, args)
    with open(os.path.join(args.out, f"tilecc-{args.device}.json"), "w") as f:
        json.dump({"tests": key, "rows": got}, f, indent=0)
    text = report(ids, ref, got, args, len(everything))
    with open(os.path.join(args.out, "report.md"), "w") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
