"""One library's ops in one process, on one backend: what scripts/corpus/run.py starts.

    python scripts/corpus/worker.py --lib NAME --src DIR --backend tilecc|triton
                                    --device cpu|cuda --report FILE.jsonl [--save DIR]
                                    [--compile cuda,hip] [--time] [--only a,b] [--timeout S]

`--backend tilecc` installs tilecc's compatibility mode before anything imports triton
(the library's `import triton` is tilecc then); `--backend triton` leaves Triton itself.
Each op's outcome is one JSON line of `--report`, written as soon as the op is done (a
worker that dies still leaves the ops before).  `--save` keeps each case's outputs and
gradients (`DIR/<op>.pt`) for run.py to compare two backends; `--time` measures the GPU
time of each case that ran (forward and backward, kernels only, by torch's profiler).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import importlib
import json
import os
import signal
import sys
import time
import traceback
from collections import namedtuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

TRACEBACKS = False

# ------------------------------------------------------------------------------------------
# Outcomes: ok / mismatch / refused / error / n/a


class Timeout(BaseException):
    """An op past its time.  Not an Exception: autotuners (Triton's and tilecc's) skip a
    config on any Exception, which would swallow the alarm and let the op run on."""


def _short(path: str, markers=()) -> str:
    for marker in (*markers, "tilecc/", "triton/", "scripts/"):
        i = path.rfind(marker)
        if i >= 0:
            return path[i:]
    return os.path.basename(path)


LIB_MARKERS: tuple[str, ...] = ()  # the library's package directories, as paths contain them


def _where(tb, prefer: tuple[str, ...] = ()) -> str:
    """The innermost frame outside the standard library and torch (with `prefer`, the
    innermost one whose path contains one of them, if any)."""
    frames = [f for f in traceback.extract_tb(tb)
              if "/torch/" not in f.filename and "/lib/python3" not in f.filename
              or "/triton/" in f.filename]
    if prefer and any(p in f.filename for f in frames for p in prefer):
        frames = [f for f in frames if any(p in f.filename for p in prefer)]
    if not frames:
        return ""
    f = frames[-1]
    return f"{_short(f.filename, LIB_MARKERS)}:{f.lineno}"


def _chain(e):
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        yield e
        e = e.__cause__ or e.__context__


def describe(e: BaseException) -> str:
    """`refused: ...`, `error: ...` or `n/a: ...` for an exception a case raised."""
    for inner in _chain(e):
        compilation = any(c.__name__ == "CompilationError" for c in type(inner).__mro__)
        if compilation and hasattr(inner, "loc"):  # tilecc's
            head = str(inner.message).strip().splitlines()[0] if inner.message else ""
            where = (f" @ {_short(inner.loc.file, LIB_MARKERS)}:{inner.loc.line}"
                     if inner.loc is not None else "")
            return f"refused: {head}{where}"
        if compilation:  # Triton's: its message names the place
            lines = [ln for ln in str(inner).strip().splitlines() if ln.strip()]
            return f"refused: {lines[-1][:300] if lines else ''} @ {_where(inner.__traceback__, LIB_MARKERS)}"
    if type(e).__name__ == "NotApplicable":
        return f"n/a: {e}"
    if isinstance(e, Timeout):
        return "error: timed out"
    text = str(e).strip().splitlines()[0] if str(e).strip() else ""
    if type(e).__name__ == "InterpreterError":  # `place in kernel:`, the line, then what
        lines = [ln for ln in str(e).strip().splitlines() if ln.strip()]
        place = lines[0].split(" in ")[0].rsplit(":", 1)[0] if lines else ""
        return f"error: InterpreterError: {lines[-1][:300]} @ {_short(place, LIB_MARKERS)}"
    compat = "compatibility mode" in text or "is not part of tilecc" in text
    if isinstance(e, AttributeError) and _from_tilecc(getattr(e, "obj", None)):
        compat = True  # a part of Triton's API that tilecc's object lacks
    if isinstance(e, TypeError) and _tilecc_signature(text):
        compat = True  # a parameter of Triton's API that tilecc's function lacks
    if isinstance(e, (ImportError, AttributeError, TypeError)) and compat:
        text = text.split(" (tilecc implements")[0].split("; ")[0]
        return f"refused: {type(e).__name__}: {text} @ {_where(e.__traceback__, LIB_MARKERS)}"
    if TRACEBACKS:
        traceback.print_exception(e, file=sys.stderr)
    where = _where(e.__traceback__)
    user = _where(e.__traceback__, LIB_MARKERS)
    return (f"error: {type(e).__name__}: {text[:300]} @ {where}"
            + (f" (from {user})" if user and user != where else ""))


def _from_tilecc(obj) -> bool:
    if obj is None:
        return False
    name = obj.__name__ if isinstance(obj, type(sys)) else type(obj).__module__
    return name.startswith("tilecc")


def _tilecc_signature(text: str) -> bool:
    """Whether a TypeError's `f() got an unexpected keyword argument` (or `takes N
    positional arguments`) names a function or class that `triton` resolves to tilecc's."""
    if "unexpected keyword argument" not in text and "positional argument" not in text:
        return False
    name = text.split("(")[0].split(".")[0].strip()
    for module in ("triton", "triton.runtime.autotuner", "triton.runtime.jit", "triton.language"):
        obj = getattr(sys.modules.get(module), name, None)
        if obj is not None and getattr(obj, "__module__", "").startswith("tilecc"):
            return True
    return False


def _kind(text: str) -> str:
    if text.startswith(("output", "grad", "shape")):
        return "mismatch"
    return text.split(":")[0]


def _after_kind(text: str) -> str:
    for kind in ("refused: ", "error: ", "n/a: "):
        if text.startswith(kind):
            return text[len(kind):]
    return text


# ------------------------------------------------------------------------------------------
# One case: the op against the reference, forward and backward


def _tensors(out) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _max_error(got, want, atol, rtol) -> tuple[bool, float]:
    import torch

    got, want = got.detach().float().cpu(), want.detach().float().cpu()
    if got.shape != want.shape:
        if got.numel() == want.numel() == 1:  # a loss as () against (1,)
            got, want = got.reshape(()), want.reshape(())
        else:
            raise AssertionError(f"shape {tuple(got.shape)} != {tuple(want.shape)}")
    err = (got - want).abs()
    both_nan = torch.isnan(want) & torch.isnan(got)
    err = torch.where(both_nan, torch.zeros_like(err), err)
    ok = bool((torch.isnan(got) == torch.isnan(want)).all()) and bool((err <= atol + rtol * want.abs()).all())
    return ok, float(err.nan_to_num(float("inf")).max()) if err.numel() else 0.0


def compare(gots, wants, atol, rtol, what) -> str | None:
    """None if every pair of tensors matches, else `<what> i: max err E`."""
    import torch

    for i, (g, w) in enumerate(zip(gots, wants)):
        if not isinstance(g, torch.Tensor) or not isinstance(w, torch.Tensor):
            continue
        try:
            ok, worst = _max_error(g, w, atol, rtol)
        except AssertionError as e:
            return f"shape of {what} {i}: {e}"
        if not ok:
            return f"{what} {i}: max err {worst:.3g} (atol {atol:g}, rtol {rtol:g})"
    return None


def _copies(case, upcast: bool):
    import torch

    out = []
    for i, x in enumerate(case.inputs):
        if isinstance(x, torch.Tensor):
            x = x.detach().clone()
            if upcast and x.is_floating_point():
                x = x.float()
            if i in case.grad:
                x.requires_grad_(True)
        out.append(x)
    return out


def _backward_pairs(case, got, want):
    import torch

    chosen = range(len(want)) if case.bwd_outputs is None else case.bwd_outputs
    pairs = [(got[i], want[i]) for i in chosen if i < len(got)]
    return [(g, w) for g, w in pairs
            if isinstance(g, torch.Tensor) and isinstance(w, torch.Tensor)
            and g.requires_grad and w.requires_grad and w.is_floating_point()]


def _upstream(pairs):
    import torch

    gen = torch.Generator().manual_seed(1)
    return [torch.randn(w.shape, generator=gen, dtype=torch.float32) for _, w in pairs]


def run_case(case, keep: dict | None) -> tuple[str, str]:
    """(forward outcome, backward outcome): 'ok', '-' or a description.  With `keep`,
    the outputs and gradients go there (on the CPU) for another backend's to be compared."""
    import torch

    mine, theirs = _copies(case, False), _copies(case, True)
    try:
        got = _tensors(case.fn(*mine))
    except (Exception, Timeout) as e:  # noqa: BLE001 - every failure is an outcome
        return describe(e), "-"
    if keep is not None:
        keep["out"] = [g.detach().cpu() if isinstance(g, torch.Tensor) else None for g in got]
    want = _tensors(case.ref(*theirs))
    fwd = compare(got, want, case.atol, case.rtol, "output") or "ok"
    if not case.backward or not case.grad:
        return fwd, "-"
    pairs = _backward_pairs(case, got, want)
    if not pairs:
        return fwd, "-"
    ups = _upstream(pairs)
    try:
        mine_grads = torch.autograd.grad(
            [g for g, _ in pairs], [mine[i] for i in case.grad],
            [u.to(g.dtype).to(g.device).clone() for u, (g, _) in zip(ups, pairs)],
            allow_unused=True)
    except (Exception, Timeout) as e:  # noqa: BLE001
        return fwd, describe(e)
    if keep is not None:
        keep["grad"] = [g.detach().cpu() if g is not None else None for g in mine_grads]
    ref_grads = torch.autograd.grad([w for _, w in pairs], [theirs[i] for i in case.grad],
                                    [u.to(w.device) for u, (_, w) in zip(ups, pairs)],
                                    allow_unused=True)
    atol = case.atol if case.bwd_atol is None else case.bwd_atol
    rtol = case.rtol if case.bwd_rtol is None else case.bwd_rtol
    return fwd, compare(list(mine_grads), list(ref_grads), atol, rtol, "grad of input") or "ok"


GPU_LOCK = os.environ.get("CORPUS_GPU_LOCK", "")  # set by run.py for sharded GPU runs


@contextlib.contextmanager
def gpu_alone():
    """While it times, this worker alone times (`CORPUS_GPU_LOCK`: a file every worker of
    a sharded run locks around its timed calls).  Processes sharing one GPU take turns at
    it: a kernel preempted by another process's counts that slice in its own time.  Timed
    side by side with 15 other workers, torch's own elementwise kernels, the same in both
    runs, came out up to 1.14x apart, and 3-8 µs kernels up to 1.9x.  (Autotuning under
    the lock too made the workers wait for each other past their time limit per op; its
    picks stay exposed to the other workers.)"""
    if not GPU_LOCK:
        yield
        return
    with open(GPU_LOCK, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def gpu_time_us(case, with_backward: bool, reps: int = 5,
                per_kernel: dict | None = None) -> float:
    """Device time of one call (forward, then backward where `with_backward`), in µs: the
    kernels' own time summed by torch's profiler (launch gaps left out, so that the two
    backends' host overheads do not count), the mean of `reps` calls after the one
    already made; CUDA events around the calls where the profiler saw no kernel.  Each
    kernel's share (µs a call, by the kernel's name) is added to `per_kernel`."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    sets = [_copies(case, False) for _ in range(reps)]  # prepared outside the timed region

    def call(inputs):
        got = _tensors(case.fn(*inputs))
        if with_backward:
            pairs = [(g, None) for g in got if isinstance(g, torch.Tensor) and g.requires_grad]
            torch.autograd.grad([g for g, _ in pairs], [inputs[i] for i in case.grad],
                                [torch.ones_like(g) for g, _ in pairs], allow_unused=True)

    torch.cuda.synchronize()
    with gpu_alone(), profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for inputs in sets:
            call(inputs)
        torch.cuda.synchronize()
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    total = sum(e.device_time_total for e in kernels)
    if per_kernel is not None:
        for e in kernels:
            per_kernel[e.name] = per_kernel.get(e.name, 0.0) + e.device_time_total / reps
    if total > 0:
        return total / reps
    sets = [_copies(case, False) for _ in range(reps)]
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with gpu_alone():
        start.record()
        for inputs in sets:
            call(inputs)
        end.record()
        torch.cuda.synchronize()
    return start.elapsed_time(end) * 1000 / reps


# ------------------------------------------------------------------------------------------
# Kernels launched, and (on the interpreter) compiled for GPU targets


LAUNCHED: set[str] = set()
COMPILED: dict[str, dict] = {}  # target -> {specialization: None or the failure}, this op
_COMPILED_EVER: dict[tuple, str | None] = {}


def count_launches_tilecc(compile_for: list[str]) -> None:
    """Note each kernel tilecc launches; on the interpreter, with `compile_for`, also
    compile (transpile, then NVRTC / hiprtc: no GPU needed) each specialization it runs."""
    import tilecc.interpreter as interpreter
    import tilecc.runtime.jit as jit

    def counting(launch, compile_too: bool):
        def counted(jit_fn, *args, **kwargs):
            LAUNCHED.add(jit_fn.fn.__name__)
            if compile_too:
                grid, a, kw = args
                for target in compile_for:
                    compile_specialization(jit_fn, a, kw, target)
            return launch(jit_fn, *args, **kwargs)
        return counted

    jit._launch_run = counting(jit._launch_run, False)
    interpreter.run_interpreted = counting(interpreter.run_interpreted, bool(compile_for))


def count_launches_triton() -> None:
    import triton.runtime.interpreter as interp
    import triton.runtime.jit as jit

    for cls in (jit.JITFunction, interp.InterpretedFunction):
        if not hasattr(cls, "run"):  # another Triton release: no kernel names then
            continue

        def run(self, *args, _run=cls.run, **kwargs):
            fn = getattr(self, "fn", None)
            LAUNCHED.add(getattr(fn, "__name__", "?"))
            return _run(self, *args, **kwargs)
        cls.run = run


def compile_specialization(jit_fn, args, kwargs, target: str) -> None:
    from tilecc.runtime import compiler

    try:
        values, options = jit_fn.bind(args, dict(kwargs))
        specs, _ = jit_fn.specs_for(values)
    except Exception:  # noqa: BLE001 - arguments the launch itself refuses, reported there
        return
    nw, ns = options.get("num_warps", 4), options.get("num_stages")
    key = (target, jit_fn.fn.__name__, repr(specs), nw, ns)
    if key not in _COMPILED_EVER:
        try:
            compiler.compile(jit_fn, specs, target, jit_fn.options(num_warps=nw, num_stages=ns))
            _COMPILED_EVER[key] = None
        except Exception as e:  # noqa: BLE001 - reported in the op's row
            _COMPILED_EVER[key] = describe(e)
            if TRACEBACKS:
                print(f"--- {target} compile of {jit_fn.fn.__name__}:\n{e}", file=sys.stderr)
    COMPILED.setdefault(target, {})[key] = _COMPILED_EVER[key]


def compile_outcome(target: str) -> tuple[str, str]:
    """(`ok N` / `refused` / `error` / `-`, the first failure) of this op's compiles."""
    done = COMPILED.get(target, {})
    if not done:
        return "-", ""
    bad = [(k, v) for k, v in done.items() if v is not None]
    if not bad:
        return f"ok {len(done)}", ""
    (_, name, *_), why = bad[0]
    return why.split(":")[0], f"{target} [{name}, {len(bad)} of {len(done)}] {_after_kind(why)}"


# ------------------------------------------------------------------------------------------
# A CPU stand-in for the GPU queries libraries make at import or before a launch

GPUTarget = namedtuple("GPUTarget", ["backend", "arch", "warp_size"])
STANDIN_PROPERTIES = {"max_shared_mem": 232448, "max_num_regs": 65536,
                      "multiprocessor_count": 132, "warpSize": 32, "sm_clock_rate": 1980000,
                      "mem_clock_rate": 2619000, "mem_bus_width": 5120}


class _StandinUtils:
    def get_device_properties(self, device):
        return dict(STANDIN_PROPERTIES)


class StandinDriver:
    """`triton.runtime.driver.active` on a machine without a GPU: an sm_90 device, so that
    libraries pick their Hopper paths (the architecture the NVRTC compiles target)."""

    utils = _StandinUtils()

    def is_active(self):
        return True

    def get_current_device(self):
        return 0

    def set_current_device(self, device):
        pass

    def get_current_stream(self, device=None):
        return 0

    def get_current_target(self):
        return GPUTarget("cuda", 90, 32)

    def get_active_torch_device(self):
        import torch

        return torch.device("cpu")

    def get_device_interface(self):
        import torch

        return torch.cuda

    def get_benchmarker(self):
        def same_time(fn, *args, quantiles=None, **kwargs):  # the first config wins, unrun
            return [1.0] * len(quantiles) if quantiles else 1.0
        return same_time

    def get_empty_cache_for_benchmark(self):
        import torch

        return torch.empty(16, dtype=torch.int32)

    def clear_cache(self, cache):
        cache.zero_()


def cpu_standins(backend: str) -> None:
    """The stand-in driver, and torch.cuda's device queries answering for it; autotuning
    takes the first configuration left after pruning, without timing any (the interpreter
    would run every candidate several times, and each would be compiled)."""
    import types

    import torch
    from triton.runtime import driver

    driver.set_active(StandinDriver())
    props = types.SimpleNamespace(name="NVIDIA H100 (stand-in)", major=9, minor=0,
                                  multi_processor_count=132, total_memory=80 << 30,
                                  shared_memory_per_block_optin=232448, warp_size=32,
                                  L2_cache_size=50 << 20)
    torch.cuda.get_device_capability = lambda *a, **k: (9, 0)
    torch.cuda.get_device_properties = lambda *a, **k: props
    torch.cuda.get_device_name = lambda *a, **k: props.name
    torch.cuda.current_device = lambda: 0
    # `with torch.cuda.device(x.device.index):` around launches: index None on the CPU
    torch.cuda.device = lambda *a, **k: contextlib.nullcontext()
    if backend == "tilecc":
        from tilecc.runtime.autotune import Autotuner

        Autotuner._tune = lambda self, pruned, *a, **k: {c: float(i) for i, c in enumerate(pruned)}


# ------------------------------------------------------------------------------------------
# One op


def run_op(name: str, lib, args, save_dir: str | None) -> dict:
    import torch

    module, cases = lib.OPS[name]
    torch.manual_seed(0)

    def alarm(*_):
        raise Timeout()

    signal.signal(signal.SIGALRM, alarm)
    signal.alarm(args.timeout)
    LAUNCHED.clear()
    COMPILED.clear()
    fwd_bad = bwd_bad = None
    n, kept, times, backward_ran = 0, {}, {}, False
    kernel_us: dict[str, float] = {}  # every timed case's kernels, by name
    t0 = time.time()
    phase = "import"
    try:
        if module:
            importlib.import_module(module)
        phase = "setup"
        for case in cases(args.device):
            n += 1
            keep = {"atol": case.atol, "rtol": case.rtol,
                    "bwd_atol": case.bwd_atol if case.bwd_atol is not None else case.atol,
                    "bwd_rtol": case.bwd_rtol if case.bwd_rtol is not None else case.rtol}
            fwd, bwd = run_case(case, keep if save_dir else None)
            kept[case.label] = keep
            backward_ran |= bwd != "-"
            if fwd != "ok" and fwd_bad is None:
                fwd_bad = (case.label, fwd)
            if bwd not in ("ok", "-") and bwd_bad is None:
                bwd_bad = (case.label, bwd)
            if _kind(fwd) in ("refused", "error", "n/a"):
                break  # the same failure again for every shape
            if args.time and _kind(bwd) not in ("refused", "error"):
                try:
                    times[case.label] = gpu_time_us(case, bwd != "-", per_kernel=kernel_us)
                except Timeout:
                    raise
                except Exception as e:  # noqa: BLE001 - an op that ran is not failed by its timing
                    print(f"# {name} [{case.label}]: not timed: {describe(e)}", file=sys.stderr)
    except (Exception, Timeout) as e:  # noqa: BLE001 - import failures and the cases' own setup
        d = describe(e)
        if n == 0 or fwd_bad is None:
            fwd_bad = (f"after case {n}" if n else phase, d)
    finally:
        signal.alarm(0)
    if save_dir and kept:
        torch.save(kept, os.path.join(save_dir, f"{name}.pt"))
    row = {"op": name, "cases": n, "kernels": sorted(LAUNCHED), "seconds": round(time.time() - t0, 1),
           "times_us": times, "kernel_us": kernel_us, "compile": {}}
    fwd_failed = fwd_bad is not None and _kind(fwd_bad[1]) in ("refused", "error", "n/a")
    row["forward"] = "n/a" if n == 0 and fwd_bad is None else (_kind(fwd_bad[1]) if fwd_bad else "ok")
    row["backward"] = "-" if fwd_failed else (_kind(bwd_bad[1]) if bwd_bad else "ok")
    if not fwd_failed and bwd_bad is None and not backward_ran:
        row["backward"] = "-"  # no case has a backward
    details = []
    if fwd_bad:
        details.append(f"fwd [{fwd_bad[0]}] {_after_kind(fwd_bad[1])}")
    if bwd_bad and not fwd_failed:
        details.append(f"bwd [{bwd_bad[0]}] {_after_kind(bwd_bad[1])}")
    said = {_after_kind(b[1]) for b in (fwd_bad, bwd_bad) if b}
    for target in sorted(COMPILED):
        kind, why = compile_outcome(target)
        row["compile"][target] = kind
        if why and why.split("] ", 1)[-1] not in said:
            details.append(why)
    row["detail"] = "; ".join(details)
    return row


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lib", required=True)
    p.add_argument("--src", required=True, help="the directory holding the library's package")
    p.add_argument("--deps", default="", help="directories of pure-Python dependencies (os.pathsep)")
    p.add_argument("--backend", choices=["tilecc", "triton"], default="tilecc")
    p.add_argument("--device", choices=["cpu", "cuda"], required=True)
    p.add_argument("--report", required=True)
    p.add_argument("--save", default="")
    p.add_argument("--compile", default="")
    p.add_argument("--time", action="store_true")
    p.add_argument("--only", default="")
    p.add_argument("--timeout", type=int, default=300)
    p.add_argument("--standins", action="store_true",
                   help="the library module's stand-ins for parts of Triton's API (driver-side)")
    p.add_argument("--traceback", action="store_true")
    args = p.parse_args(argv)
    global TRACEBACKS, LIB_MARKERS
    TRACEBACKS = args.traceback
    if args.backend == "tilecc":
        import tilecc.compat

        tilecc.compat.install()  # before anything imports triton
    import torch  # noqa: F401

    for d in filter(None, args.deps.split(os.pathsep)):
        sys.path.append(d)  # after site-packages: what is installed wins
    lib = importlib.import_module(f"lib_{args.lib}")
    LIB_MARKERS = tuple(getattr(lib, "MARKERS", ()))
    report = open(args.report, "a", buffering=1)
    import triton

    report.write(json.dumps({"triton": triton.__file__, "version": triton.__version__}) + "\n")
    if args.device == "cpu":
        cpu_standins(args.backend)
    try:
        if hasattr(lib, "load"):
            lib.load(args.src, args.device)
        else:  # the package imported from its source as it is
            sys.path.insert(0, args.src)
        if args.standins and hasattr(lib, "standins"):
            lib.standins()
    except Exception as e:  # noqa: BLE001 - the library cannot be loaded at all
        report.write(json.dumps({"load": describe(e)}) + "\n")
        return 0
    if args.backend == "tilecc":
        count_launches_tilecc([t for t in args.compile.split(",") if t])
    else:
        count_launches_triton()
    names = [n for n in args.only.split(",") if n] or list(lib.OPS)
    if args.save:
        os.makedirs(args.save, exist_ok=True)
    for name in names:
        row = run_op(name, lib, args, args.save or None)
        report.write(json.dumps(row) + "\n")
        print(f"# {args.lib}/{name} [{args.backend}]: {row['forward']} / {row['backward']} "
              f"({row['seconds']}s)", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
