"""`@tilecc.autotune` and `@tilecc.heuristics`, with Triton's semantics.

    @tilecc.autotune(configs=[tilecc.Config({"BLOCK": 1024}, num_warps=4), ...],
                     key=["n"], reset_to_zero=["out_ptr"], restore_value=[...],
                     prune_configs_by={"early_config_prune": f, "perf_model": g, "top_k": 4},
                     pre_hook=..., post_hook=..., warmup=25, rep=100)
    @tilecc.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
    @tilecc.jit
    def kernel(...): ...

The tuning key is the values of the `key` arguments plus the dtype of every argument that
has one (as in Triton); a name in `key` that is not a parameter is an error at decoration.
On a new key the candidates (after pruning) are compiled in parallel on a thread pool
(NVRTC releases the GIL while it compiles), then each is timed with device events — the
median of repeated runs after warm-up, the L2 cache flushed before each — and the fastest
is kept in memory and on disk (`$TILECC_CACHE_DIR/autotune/`, per device and key).  A
candidate that fails to compile or to launch (too many registers or threads, shared
memory: `tilecc.OutOfResources`, found before compiling) is skipped with a logged reason;
if all fail, the error lists every reason.

Tuning never changes the caller's data: before each timed run, `reset_to_zero` arguments
are zeroed; after each, `restore_value` arguments get their original contents back (one
copy is taken before tuning); the `reset_to_zero` arguments are zeroed once more before
the real launch.  Views (slices, transposes, offsets into larger buffers) are copied and
zeroed through their framework: exactly their elements.  Unlike Triton, a user
`pre_hook` / `post_hook` runs *in addition* to these (Triton drops `reset_to_zero` /
`restore_value` when hooks are given).

Interpreter (`kernel.interpret[grid]`, `TILECC_INTERPRET=1`): the same procedure runs
with every candidate executed by the NumPy interpreter and timed on the CPU clock
(`perf_counter`, 1 warm-up + 3 runs).  The winner is what the interpreter runs fastest —
meaningless for GPU speed, but every semantic (pruning, hooks, reset/restore, the key,
caching per key) is exercised in CI.  Interpreter decisions are not written to disk.

`TILECC_PRINT_AUTOTUNING=1` prints each decision.  Tuning several configurations in an
interactive terminal shows a progress bar (tqdm or rich, whichever is installed).
"""

from __future__ import annotations

import builtins
import copy
import logging
import os
import sys
import time
from typing import Any, Callable

from tilecc.errors import CompilationError, InterpreterError, LaunchError
from tilecc.runtime.options import OPTIONS

log = logging.getLogger("tilecc.autotune")


class Config:
    """One candidate: meta-parameter values (constexpr arguments) and launch options."""

    def __init__(self, kwargs: dict, num_warps: int = 4, num_stages: int = 3,
                 num_ctas: int = 1, maxnreg: int | None = None,
                 pre_hook: Callable | None = None):
        for name, value in (("num_ctas", num_ctas), ("maxnreg", maxnreg)):
            try:
                OPTIONS[name].check(value)
            except ValueError as e:
                raise ValueError(f"tilecc.Config: {e}") from None
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.num_ctas = num_ctas
        self.maxnreg = maxnreg
        self.pre_hook = pre_hook

    def all_kwargs(self) -> dict:
        extra = {"maxnreg": self.maxnreg} if self.maxnreg is not None else {}
        return {**self.kwargs, "num_warps": self.num_warps, "num_stages": self.num_stages,
                **extra}

    def __repr__(self) -> str:
        extra = [f"maxnreg: {self.maxnreg}"] if self.maxnreg is not None else []
        return ", ".join([f"{k}: {v!r}" for k, v in self.kwargs.items()] +
                         [f"num_warps: {self.num_warps}", f"num_stages: {self.num_stages}"] +
                         extra)

    def __eq__(self, other) -> bool:
        return isinstance(other, Config) and repr(self) == repr(other)

    def __hash__(self) -> int:
        return hash(repr(self))


def _base_jit(fn):
    from tilecc.runtime.jit import JITFunction

    while not isinstance(fn, JITFunction):
        fn = fn.fn
    return fn


class KernelInterface:
    """kernel[grid](...), kernel.run(..., grid=), kernel.interpret[grid](...)."""

    fn: Any

    def __getitem__(self, grid) -> Callable:
        return lambda *args, **kwargs: self._user_launch(grid, args, kwargs, _interpreting())

    @property
    def interpret(self):
        outer = self

        class _Interpret:
            def __getitem__(self, grid):
                return lambda *args, **kwargs: outer._user_launch(grid, args, kwargs, True)
        return _Interpret()

    def run(self, *args, grid, warmup: bool = False, **kwargs):
        if warmup:
            return self._compile_only(args, kwargs)
        return self._user_launch(grid, args, kwargs, _interpreting())

    def _user_launch(self, grid, args, kwargs, interpret: bool):
        try:
            return self._launch(grid, args, kwargs, interpret)
        except (CompilationError, InterpreterError, LaunchError) as e:  # the user's line,
            raise e.with_traceback(None) from None  # without tilecc's frames behind it

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.__name__} is a tilecc kernel: launch it with "
                        f"{self.__name__}[grid](...)")

    @property
    def arg_names(self) -> tuple[str, ...]:
        return _base_jit(self.fn)._param_names

    def _compile_only(self, args, kwargs):
        if isinstance(self, Autotuner):
            cfg = self.best_config or self.configs[0]
            kwargs = {**kwargs, **cfg.all_kwargs()}
        args, kwargs = _expand_chain(self if isinstance(self, Heuristics) else self.fn, args,
                                     kwargs)
        return _base_jit(self.fn).run(*args, grid=None, warmup=True, **kwargs)


def _interpreting() -> bool:
    return os.environ.get("TILECC_INTERPRET", "0") == "1"


class Heuristics(KernelInterface):
    """Meta-parameters computed from the other arguments (Triton's `@heuristics`)."""

    def __init__(self, fn, values: dict[str, Callable[[dict], Any]]):
        self.fn, self.values = fn, dict(values)
        self.__name__ = getattr(fn, "__name__", "kernel")
        self.__doc__ = getattr(fn, "__doc__", None)

    def _expand(self, args, kwargs):
        kwargs = dict(kwargs)
        for name, heuristic in self.values.items():
            kwargs[name] = heuristic({**dict(zip(self.arg_names, args)), **kwargs})
        return args, kwargs

    def _launch(self, grid, args, kwargs, interpret: bool):
        args, kwargs = self._expand(args, kwargs)
        return self.fn._launch(grid, args, kwargs, interpret)


def _expand_chain(fn, args, kwargs):
    """Apply every @heuristics between `fn` and the @jit function."""
    while isinstance(fn, Heuristics):
        args, kwargs = fn._expand(args, kwargs)
        fn = fn.fn
    return args, kwargs


class Autotuner(KernelInterface):
    def __init__(self, fn, configs: list[Config], key: list[str], *, reset_to_zero=None,
                 restore_value=None, pre_hook=None, post_hook=None, prune_configs_by=None,
                 warmup: int = 25, rep: int = 100, do_bench: Callable | None = None,
                 cache_results: bool = True):
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", "kernel")
        self.__doc__ = getattr(fn, "__doc__", None)
        self.configs = list(configs) or [Config({})]
        names = self.arg_names
        for label, group in (("key", key), ("reset_to_zero", reset_to_zero or []),
                             ("restore_value", restore_value or [])):
            unknown = [k for k in group if k not in names]
            if unknown:
                raise ValueError(f"autotune {label} of {self.__name__} names "
                                 f"{', '.join(map(repr, unknown))}, which "
                                 f"{'is not a parameter' if len(unknown) == 1 else 'are not parameters'}"
                                 f" (parameters: {', '.join(names)})")
        self.keys = list(key)
        self.reset_to_zero = list(reset_to_zero or [])
        self.restore_value = list(restore_value or [])
        self.user_pre_hook, self.user_post_hook = pre_hook, post_hook
        prune = prune_configs_by or {}
        self.early_config_prune = prune.get("early_config_prune")
        self.perf_model = prune.get("perf_model")
        self.configs_top_k = prune.get("top_k", 1.0)
        self.warmup, self.rep = warmup, rep
        self.custom_bench = do_bench
        self.cache_results = cache_results
        self.cache: dict[tuple, Config] = {}
        self.best_config: Config | None = None
        self.configs_timings: dict[Config, float] | None = None
        self.bench_time = 0.0

    # --- the key and pruning ----------------------------------------------------------------
    def _named(self, args, kwargs) -> dict:
        return {**dict(zip(self.arg_names, args)), **kwargs}

    def tuning_key(self, named: dict) -> tuple:
        key = [named[k] for k in self.keys if k in named]
        key += [str(v.dtype) for v in named.values() if hasattr(v, "dtype")]
        return tuple(key)

    def prune_configs(self, named: dict, kwargs: dict) -> list[Config]:
        pruned = self.configs
        if self.early_config_prune:
            pruned = list(self.early_config_prune(self.configs, named, **kwargs))
            if not pruned:
                raise ValueError(f"{self.__name__}: early_config_prune left no configuration")
        if self.perf_model:
            top_k = self.configs_top_k
            if isinstance(top_k, float) and top_k <= 1.0:
                top_k = max(1, int(len(pruned) * top_k))
            elif not isinstance(top_k, int):
                raise TypeError("prune_configs_by['top_k'] is an int or a float <= 1.0")
            if len(pruned) > top_k:
                est = {c: self.perf_model(**named, **c.all_kwargs()) for c in pruned}
                pruned = sorted(est, key=est.get)[:top_k]
        return pruned

    # --- running ------------------------------------------------------------------------------
    def _launch(self, grid, args, kwargs, interpret: bool):
        named = self._named(args, kwargs)
        clash = [k for c in self.configs for k in c.kwargs if k in kwargs]
        if clash:
            raise ValueError(f"{self.__name__}: {', '.join(sorted(set(clash)))} are tuned by "
                             "@autotune and cannot also be passed by the caller")
        key = self.tuning_key(named)
        config = self.cache.get(key)
        if config is None:
            config = self._choose(key, grid, args, kwargs, named, interpret)
            self.cache[key] = config
            full = {**named, **config.all_kwargs()}
            for name in self.reset_to_zero:
                _zero(full[name])
        self.best_config = config
        full = {**named, **config.all_kwargs()}
        if config.pre_hook:
            config.pre_hook(full)
        return self._inner_launch(grid, args, {**kwargs, **config.all_kwargs()}, interpret)

    def _inner_launch(self, grid, args, kwargs, interpret):
        return self.fn._launch(grid, args, kwargs, interpret)

    def _choose(self, key, grid, args, kwargs, named, interpret) -> Config:
        t0 = time.perf_counter()
        pruned = self.prune_configs(named, kwargs)
        disk_key = None
        if not interpret and self.cache_results and len(pruned) > 1:
            disk_key = self._disk_key(key, pruned, named)
            config = _load_decision(disk_key, pruned)
            if config is not None:
                self.configs_timings = None
                _report(self, key, config, None, time.perf_counter() - t0, "from the disk cache")
                return config
        if len(pruned) == 1:
            return pruned[0]
        timings = self._tune(pruned, grid, args, kwargs, named, interpret)
        best = builtins.min(timings, key=timings.get)
        if timings[best] == float("inf"):
            reasons = "\n".join(f"  {c}: {r}" for c, r in self._failures.items())
            raise RuntimeError(f"{self.__name__}: every autotune configuration failed:\n"
                               f"{reasons}")
        self.configs_timings = timings
        self.bench_time = time.perf_counter() - t0
        if disk_key is not None:
            _store_decision(disk_key, pruned.index(best), best, timings)
        _report(self, key, best, timings, self.bench_time, "tuned")
        return best

    def _disk_key(self, key, pruned, named):  # a cache.Key, or None
        from tilecc.runtime import cache

        base = _base_jit(self.fn)
        try:
            device = _device_name(named)
        except Exception:
            return None
        heur = sorted(getattr(self.fn, "values", {}))
        return cache.key_of("autotune", base.fingerprint, [repr(c) for c in pruned],
                            [repr(k) for k in key], device, heur)

    def _tune(self, pruned, grid, args, kwargs, named, interpret) -> dict[Config, float]:
        self._failures: dict[Config, str] = {}
        if not interpret:
            self._precompile(pruned, args, kwargs)
        saved = {name: _clone(named[name]) for name in self.restore_value}
        bench = _cpu_bench if interpret else _device_bench
        if self.custom_bench is not None:
            bench = _custom(self.custom_bench)
        timings = {}
        progress = _progress(len(pruned), self.__name__)
        try:
            for config in pruned:
                if config in self._failures:
                    timings[config] = float("inf")
                    _advance(progress, f"{config}: skipped")
                    continue
                current = {**kwargs, **config.all_kwargs()}
                full = {**named, **config.all_kwargs()}

                def call(config=config, current=current, full=full):
                    for name in self.reset_to_zero:
                        _zero(full[name])
                    if config.pre_hook:
                        config.pre_hook(full)
                    if self.user_pre_hook:
                        self.user_pre_hook(full)
                    try:
                        self._inner_launch(grid, args, current, interpret)
                    except Exception as e:
                        if self.user_post_hook:
                            self.user_post_hook(full, e)
                        raise
                    finally:
                        for name in self.restore_value:
                            _copy_into(full[name], saved[name])
                    if self.user_post_hook:
                        self.user_post_hook(full, None)

                try:
                    timings[config] = bench(call, named, self.warmup, self.rep)
                except Exception as e:
                    self._skip(config, e)
                    timings[config] = float("inf")
                _advance(progress, f"{config}: {timings[config]:.4f} ms")
        finally:
            if progress is not None:
                progress.close()
        return timings

    def _skip(self, config, e: Exception) -> None:
        """Record and log why a candidate is skipped; re-raise what is not a config's fault.
        (Called from an `except` block, so a bare `raise` keeps the original traceback.)"""
        if not _skippable(e):
            raise e
        self._failures[config] = f"{type(e).__name__}: {_first_line(e)}"
        log.warning("autotune %s: skipping config %s: %s", self.__name__, config,
                    self._failures[config])

    def _precompile(self, pruned, args, kwargs) -> None:
        """Compile every candidate at once on a thread pool (transpiling holds the GIL,
        NVRTC does not); results land in the in-process and disk caches."""
        def one(config):
            try:
                a, k = _hooked_descriptors(self, config, args, kwargs)
                a, k = _expand_chain(self.fn, a, {**k, **config.all_kwargs()})
                _base_jit(self.fn).run(*a, grid=None, warmup=True, **k)
            except Exception as e:
                self._skip(config, e)

        workers = min(len(pruned), os.cpu_count() or 1, 8)
        if workers <= 1:
            for c in pruned:
                one(c)
            return
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(workers, thread_name_prefix="tilecc-compile") as pool:
            list(pool.map(one, pruned))


def _hooked_descriptors(tuner, config, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """The arguments a configuration is compiled for.  A pre-hook may set the block shape
    of host-side tensor descriptors (Triton's tutorial 09 and Liger set it per
    configuration), which the kernel is specialized on: where there are descriptors, the
    hook runs on copies of them (the configurations compile in parallel), and those are
    compiled for."""
    from tilecc.transpiler.specialize import is_host_descriptor

    if not config.pre_hook or not any(map(is_host_descriptor, (*args, *kwargs.values()))):
        return args, kwargs

    def own(x):
        if not is_host_descriptor(x):
            return x
        mine = copy.copy(x)
        mine.block_shape = list(x.block_shape)
        return mine
    args = tuple(map(own, args))
    kwargs = {k: own(v) for k, v in kwargs.items()}
    config.pre_hook({**tuner._named(args, kwargs), **config.all_kwargs()})
    return args, kwargs


def _skippable(e: Exception) -> bool:
    """Compile failures and resource errors skip a config; anything else is a bug."""
    if isinstance(e, (CompilationError, ValueError)):
        return True
    name = type(e).__name__
    return name in ("CUDADriverError", "CUDARuntimeError", "OutOfMemoryError") or \
        (isinstance(e, RuntimeError) and ("HIP error" in str(e) or "CUDA" in str(e)))


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else repr(e)


# --- timing ----------------------------------------------------------------------------------

def _device_bench(call: Callable, named: dict, warmup_ms: float, rep_ms: float) -> float:
    """Median ms of `call` timed with device events (see `device_times`)."""
    import statistics

    return statistics.median(device_times(call, _framework(named), warmup_ms, rep_ms))


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


def _custom(do_bench: Callable) -> Callable:
    """A user's do_bench(fn) -> ms (or a sequence whose first item is the median)."""
    def bench(call, named, warmup_ms, rep_ms):
        t = do_bench(call)
        return float(t[0] if isinstance(t, (list, tuple)) else t)
    return bench


def _cpu_bench(call: Callable, named: dict, warmup_ms: float, rep_ms: float) -> float:
    call()
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        call()
        times.append((time.perf_counter() - t0) * 1e3)
    import statistics

    return statistics.median(times)


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


def _framework(named: dict):
    return framework(any(type(v).__module__.startswith("torch") for v in named.values()))


def framework(prefer_torch: bool):
    """Device events, synchronisation and an L2-flush buffer from torch or CuPy."""
    return _Torch() if prefer_torch else _CuPy()


def _device_name(named: dict) -> str:
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

def _array(a):
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


def _zero(a) -> None:
    a = _array(a)
    if hasattr(a, "zero_"):
        a.zero_()
    else:
        a[...] = 0


def _clone(a):
    a = _array(a)
    return a.clone() if hasattr(a, "clone") else a.copy()


def _copy_into(dst, src) -> None:
    dst = _array(dst)
    if hasattr(dst, "copy_"):
        dst.copy_(src)
    else:
        dst[...] = src


# --- decisions on disk, reporting, progress --------------------------------------------------

def _load_decision(disk_key, pruned: list[Config]) -> Config | None:
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


def _store_decision(disk_key, index: int, config: Config, timings: dict) -> None:
    from tilecc.runtime import cache
    import json

    decision = {"index": index, "config": repr(config),
                "timings_ms": {repr(c): t for c, t in timings.items()}}
    cache.store("autotune", disk_key, {"config": repr(config)},
                {"decision": json.dumps(decision).encode()})


def _report(tuner: Autotuner, key, config, timings, seconds: float, how: str) -> None:
    if os.environ.get("TILECC_PRINT_AUTOTUNING", "0") != "1":
        return
    print(f"tilecc autotuning: {tuner.__name__} key={key!r}: {how} in {seconds:.2f} s; "
          f"best config: {config}", file=sys.stderr)
    failures = getattr(tuner, "_failures", {})
    for c, t in (timings or {}).items():
        failed = f"  (skipped: {failures.get(c, 'failed')})" if t == float("inf") else ""
        print(f"    {t:10.4f} ms  {c}{failed}", file=sys.stderr)


def _progress(total: int, name: str):
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


def _advance(progress, text: str) -> None:
    if progress is not None:
        progress.set_postfix_str(text)
        progress.update(1)


# --- decorators ------------------------------------------------------------------------------

def autotune(configs: list[Config], key: list[str], prune_configs_by: dict | None = None,
             reset_to_zero: list[str] | None = None, restore_value: list[str] | None = None,
             pre_hook: Callable | None = None, post_hook: Callable | None = None,
             warmup: int = 25, rep: int = 100, do_bench: Callable | None = None,
             cache_results: bool = True):
    """Decorate a @jit kernel (or a @heuristics one) to pick the fastest Config per key."""
    def decorator(fn):
        return Autotuner(fn, configs, key, reset_to_zero=reset_to_zero,
                         restore_value=restore_value, pre_hook=pre_hook, post_hook=post_hook,
                         prune_configs_by=prune_configs_by, warmup=warmup, rep=rep,
                         do_bench=do_bench, cache_results=cache_results)
    return decorator


def heuristics(values: dict[str, Callable[[dict], Any]]):
    """Decorate a @jit kernel: each named meta-parameter is computed from the arguments."""
    def decorator(fn):
        return Heuristics(fn, values)
    return decorator
