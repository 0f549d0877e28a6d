"""What the autotuner (`runtime/autotune.py`) and `do_bench` (Triton's
`triton.testing.do_bench`) measure with, and what the autotuner keeps: timing on the
device (events, an L2 flush before each run) or, for the interpreter, on the CPU clock;
saving, restoring and zeroing arguments that may be views; decisions on disk; the
report and the progress bar."""

from __future__ import annotations

import os
import statistics
import sys
import time
from typing import Callable

_MODES = ("min", "max", "mean", "median", "all")


def do_bench(fn: Callable, warmup: int = 25, rep: int = 100, grad_to_none=None,
             quantiles=None, return_mode: str = "mean"):
    """Milliseconds per call of `fn`, timed with device events (L2 flushed before each
    run), as Triton's: the mean by default, `return_mode` "min"/"max"/"median"/"all", or
    the given `quantiles` (a list, or one value for one quantile)."""
    import numpy as np

    if return_mode not in _MODES:
        raise ValueError(f"return_mode must be one of {', '.join(_MODES)}, not {return_mode!r}")

    def call():
        for x in grad_to_none or ():
            x.grad = None
        fn()

    prefer_torch = "torch" in sys.modules
    problem = _no_gpu(prefer_torch)
    if problem:
        from tilecc.errors import NoDeviceError

        raise NoDeviceError(
            f"triton.testing.do_bench times kernels with GPU events, and no usable GPU was "
            f"found ({problem}). Kernels run on the NumPy interpreter (TRITON_INTERPRET=1) "
            "are not timed this way: time them with time.perf_counter, or benchmark on a "
            "machine with a GPU")
    times = device_times(call, framework(prefer_torch), warmup, rep)
    if quantiles is not None:
        out = [float(q) for q in np.quantile(np.array(times), quantiles)]
        return out[0] if len(out) == 1 else out
    if return_mode == "all":
        return times
    return {"min": min, "max": max, "mean": statistics.mean,
            "median": statistics.median}[return_mode](times)


def _no_gpu(prefer_torch: bool) -> str:
    """Why there is no GPU to time on ("" where there is one): asked before `fn` runs,
    rather than whatever the framework raises at its first event."""
    try:
        if prefer_torch:
            import torch

            return "" if torch.cuda.is_available() else "torch.cuda.is_available() is False"
        import cupy

        return "" if cupy.cuda.runtime.getDeviceCount() > 0 else "no CUDA device"
    except Exception as e:  # no CuPy, a stub driver
        return f"{type(e).__name__}: {e}"


def quantiles_of(times: list[float], quantiles) -> list[float]:
    """The given quantiles (a list, or one value) of `times`, by linear interpolation."""
    import numpy as np

    return [float(q) for q in np.quantile(np.array(times), quantiles)]


def cpu_times(call: Callable, runs: int = 3) -> list[float]:
    """Milliseconds per run of `call` on the CPU clock, after one warm-up run (the
    interpreter's timing: only the order of candidates means anything)."""
    call()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        call()
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def median(times: list[float]) -> float:
    return statistics.median(times)


# --- device timing ----------------------------------------------------------------------------------

def device_times(call: Callable, fw, warmup_ms: float, rep_ms: float) -> list[float]:
    """Times in ms of runs of `call`, timed with device events after warm-up; L2 flushed
    before each run (as triton.testing.do_bench).  `fw`: `framework(...)`'s answer."""
    call()
    fw.synchronize()
    flush = fw.flush_buffer()
    start = fw.event()
    end = fw.event()
    start.record()
    for _ in range(5):
        call()
    end.record()
    fw.synchronize()
    estimate = max(fw.elapsed(start, end) / 5, 1e-3)
    n_warmup = max(1, int(warmup_ms / estimate))
    n_rep = min(max(5, int(rep_ms / estimate)), 1000)
    for _ in range(n_warmup):
        call()
    starts = [fw.event() for _ in range(n_rep)]
    ends = [fw.event() for _ in range(n_rep)]
    for s, e in zip(starts, ends):
        fw.zero(flush)
        s.record()
        call()
        e.record()
    fw.synchronize()
    return [fw.elapsed(s, e) for s, e in zip(starts, ends)]


class _Torch:
    def __init__(self):
        import torch

        self.torch = torch

    def synchronize(self):
        self.torch.cuda.synchronize()

    def event(self):
        return self.torch.cuda.Event(enable_timing=True)  # torch's current stream, as launches

    def elapsed(self, s, e) -> float:
        return s.elapsed_time(e)

    def flush_buffer(self):
        return self.torch.empty(256 * 1024 * 1024 // 4, dtype=self.torch.int32, device="cuda")

    def zero(self, buf):
        buf.zero_()


class _CuPy:
    def __init__(self):
        import cupy

        self.cupy = cupy

    def synchronize(self):
        self.cupy.cuda.get_current_stream().synchronize()

    def event(self):
        return _CuPyEvent(self.cupy)

    def elapsed(self, s, e) -> float:
        return self.cupy.cuda.get_elapsed_time(s.ev, e.ev)

    def flush_buffer(self):
        return self.cupy.empty(256 * 1024 * 1024 // 4, dtype=self.cupy.int32)

    def zero(self, buf):
        buf.fill(0)


class _CuPyEvent:
    def __init__(self, cupy):
        self.ev = cupy.cuda.Event()

    def record(self):
        self.ev.record()


def framework(prefer_torch: bool):
    """Device events, synchronisation and an L2-flush buffer from torch or CuPy."""
    return _Torch() if prefer_torch else _CuPy()


def device_name(named: dict) -> str:
    import cupy

    from tilecc.transpiler.specialize import array_info

    dev = 0
    for v in named.values():
        info = array_info(v) if hasattr(v, "dtype") else None
        if info is not None:
            dev = info.device_id
            break
    props = cupy.cuda.runtime.getDeviceProperties(dev)
    name = props["name"]
    return (name.decode() if isinstance(name, bytes) else name) + \
        f" sm_{props['major']}{props['minor']}"


# --- array helpers (torch, CuPy, NumPy) -----------------------------------------------------
# An argument may be a view (a slice, a transpose, an offset into a larger buffer): saving,
# restoring and zeroing go through its framework's indexing, which touches exactly the
# view's elements, never the memory between them nor the buffer around them.

def as_array(a):
    """`a` as a torch, CuPy or NumPy array viewing exactly its elements; other device
    arrays (`__cuda_array_interface__`, DLPack) are viewed through CuPy, with their
    strides and offset, without a copy."""
    mod = type(a).__module__ or ""
    if mod.startswith(("torch", "cupy", "numpy")):
        return a
    import numpy as np

    if isinstance(a, np.ndarray):
        return a
    if hasattr(a, "__cuda_array_interface__"):
        import cupy

        return cupy.asarray(a)
    if hasattr(a, "__dlpack__"):
        import cupy

        return cupy.from_dlpack(a)
    raise TypeError(f"autotune cannot save, restore or zero an argument of type "
                    f"{type(a).__name__}: pass torch, CuPy or NumPy arrays")


def zero(a) -> None:
    a = as_array(a)
    if hasattr(a, "zero_"):
        a.zero_()
    else:
        a[...] = 0


def clone(a):
    a = as_array(a)
    return a.clone() if hasattr(a, "clone") else a.copy()


def copy_into(dst, src) -> None:
    dst = as_array(dst)
    if hasattr(dst, "copy_"):
        dst.copy_(src)
    else:
        dst[...] = src


# --- decisions on disk, reporting, progress --------------------------------------------------

def load_decision(disk_key, pruned: list):
    from tilecc.runtime import cache
    import json

    entry = cache.load("autotune", disk_key)
    if entry is None:
        return None
    try:
        d = json.loads(entry.blobs["decision"])
        config = pruned[d["index"]]
    except (KeyError, IndexError, ValueError, TypeError):
        return None
    return config if repr(config) == d["config"] else None


def store_decision(disk_key, index: int, config, timings: dict) -> None:
    from tilecc.runtime import cache
    import json

    decision = {"index": index, "config": repr(config),
                "timings_ms": {repr(c): t for c, t in timings.items()}}
    cache.store("autotune", disk_key, {"config": repr(config)},
                {"decision": json.dumps(decision).encode()})


def report(tuner, key, config, timings, seconds: float, how: str) -> None:
    if os.environ.get("TILECC_PRINT_AUTOTUNING", "0") != "1":
        return
    print(f"tilecc autotuning: {tuner.__name__} key={key!r}: {how} in {seconds:.2f} s; "
          f"best config: {config}", file=sys.stderr)
    failures = getattr(tuner, "_failures", {})
    for c, t in (timings or {}).items():
        failed = f"  (skipped: {failures.get(c, 'failed')})" if t == float("inf") else ""
        print(f"    {t:10.4f} ms  {c}{failed}", file=sys.stderr)


def progress(total: int, name: str):
    """A progress bar for many configs in an interactive terminal, or None."""
    if total < 4 or not sys.stderr.isatty() or os.environ.get("TILECC_PROGRESS") == "0":
        return None
    try:
        from tqdm import tqdm

        return tqdm(total=total, desc=f"autotune {name}", leave=False, file=sys.stderr)
    except ImportError:
        pass
    try:
        from rich.progress import Progress
    except ImportError:
        return None

    class _Rich:
        def __init__(self):
            self.p = Progress(transient=True)
            self.p.start()
            self.task = self.p.add_task(f"autotune {name}", total=total)

        def update(self, n):
            self.p.advance(self.task, n)

        def set_postfix_str(self, text):
            self.p.update(self.task, description=f"autotune {name}: {text}")

        def close(self):
            self.p.stop()
    return _Rich()


def advance(progress, text: str) -> None:
    if progress is not None:
        progress.set_postfix_str(text)
        progress.update(1)


