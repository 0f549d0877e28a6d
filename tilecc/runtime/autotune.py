"""`@tilecc.autotune` and `@tilecc.heuristics`, with Triton's semantics and Triton's
classes: `Autotuner` and `Heuristics` take Triton's constructor arguments and have its
attributes and methods (`run`, `prune_configs`, `_bench`, `pre_hook`, `nargs`, ...), so
that libraries that subclass `triton.runtime.Autotuner` run unchanged.

    @tilecc.autotune(configs=[tilecc.Config({"BLOCK": 1024}, num_warps=4), ...],
                     key=["n"], reset_to_zero=["out_ptr"], restore_value=[...],
                     prune_configs_by={"early_config_prune": f, "perf_model": g, "top_k": 4},
                     pre_hook=..., post_hook=..., do_bench=..., cache_results=False)
    @tilecc.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
    @tilecc.jit
    def kernel(...): ...

The tuning key is the values of the `key` arguments plus the dtype of every argument that
has one (as in Triton); a name in `key` that is not a parameter is left out of it, as
Triton leaves it out, with a warning at decoration (a misspelt key would otherwise go
unnoticed); one in `reset_to_zero` or `restore_value` is an error at decoration.
On a new key the candidates (after pruning) are compiled in parallel on a thread pool
(NVRTC releases the GIL while it compiles), then each is timed with device events — the
median of repeated runs after warm-up, the L2 cache flushed before each — and the fastest
is kept (in memory; on disk too with `cache_results=True` or TILECC_CACHE_AUTOTUNING=1,
in `$TILECC_CACHE_DIR/autotune/`, per device and key).  A candidate that fails to compile
or to launch (too many registers or threads, shared memory: `tilecc.OutOfResources`,
found before compiling) is skipped with a logged reason; if all fail, the error lists
every reason.

Tuning never changes the caller's data: before each timed run, `reset_to_zero` arguments
are zeroed and `restore_value` arguments copied; after it, they get their contents back;
the `reset_to_zero` arguments are zeroed once more before the real launch.  Views (slices,
transposes, offsets into larger buffers) are copied and zeroed through their framework:
exactly their elements.  Unlike Triton, a user `pre_hook` / `post_hook` runs *in addition*
to these (Triton drops `reset_to_zero` / `restore_value` when hooks are given).

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
import inspect
import logging
import os
import time
import warnings
from typing import Any, Callable

from tilecc.errors import AutotunerError, CompilationError
from tilecc.runtime import autotune_bench as bench
from tilecc.runtime.jit import KernelInterface, interpreting
from tilecc.runtime.options import (DEFAULT_NUM_STAGES, DEFAULT_NUM_WARPS, OPTIONS,
                                    TRITON_ONLY_OPTIONS)

log = logging.getLogger("tilecc.autotune")
_INF = float("inf")


class Config:
    """One candidate: meta-parameter values (constexpr arguments) and launch options."""

    def __init__(self, kwargs, num_warps=DEFAULT_NUM_WARPS, num_stages=DEFAULT_NUM_STAGES,
                 num_ctas=1, maxnreg=None, pre_hook=None, ir_override=None):
        for name, value in (("num_ctas", num_ctas), ("maxnreg", maxnreg)):
            try:
                OPTIONS[name].check(value)
            except ValueError as e:
                raise ValueError(f"tilecc.Config: {e}") from None
        if ir_override is not None:
            assert "ir_override" in TRITON_ONLY_OPTIONS
            raise ValueError("tilecc.Config: ir_override is not supported by tilecc (it "
                             "replaces a stage of Triton's compiler with a file of its IR)")
        self.kwargs = kwargs
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.num_ctas = num_ctas
        self.maxnreg = maxnreg
        self.pre_hook = pre_hook
        self.ir_override = ir_override

    def all_kwargs(self) -> dict:
        """The meta-parameters and the launch options, as a launch takes them."""
        return {**self.kwargs, **{k: v for k, v in (
            ("num_warps", self.num_warps), ("num_ctas", self.num_ctas),
            ("num_stages", self.num_stages), ("maxnreg", self.maxnreg),
            ("ir_override", self.ir_override)) if v is not None}}

    def __str__(self) -> str:  # Triton's
        return ", ".join([f"{k}: {v}" for k, v in self.kwargs.items()] +
                         [f"num_warps: {self.num_warps}", f"num_ctas: {self.num_ctas}",
                          f"num_stages: {self.num_stages}", f"maxnreg: {self.maxnreg}"])

    def __repr__(self) -> str:  # what the disk cache files decisions under
        extra = [f"maxnreg: {self.maxnreg}"] if self.maxnreg is not None else []
        return ", ".join([f"{k}: {v!r}" for k, v in (self.kwargs or {}).items()] +
                         [f"num_warps: {self.num_warps}", f"num_stages: {self.num_stages}"] +
                         extra)

    # Equal (and hashing alike) when the launch would be the same: the meta-parameters,
    # the options and the pre-hook, as Triton's (values by repr: lists are allowed).
    def _identity(self) -> tuple:
        return tuple((k, repr(v)) for k, v in self.all_kwargs().items()), self.pre_hook

    def __eq__(self, other) -> bool:
        return isinstance(other, Config) and self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())


class Heuristics(KernelInterface):
    """Meta-parameters computed from the other arguments (Triton's `@heuristics`)."""

    def __init__(self, fn, arg_names, values) -> None:
        self.fn = fn
        self.arg_names = list(arg_names)
        self.values = values
        self.__name__ = getattr(fn, "__name__", "kernel")
        self.__doc__ = getattr(fn, "__doc__", None)

    def run(self, *args, **kwargs):
        for name, heuristic in self.values.items():
            kwargs[name] = heuristic({**dict(zip(self.arg_names, args)), **kwargs})
        return self.fn.run(*args, **kwargs)


class Autotuner(KernelInterface):
    """Picks the fastest `Config` per tuning key (Triton's constructor, attributes and
    methods; see the module's docstring)."""

    def __init__(self, fn, arg_names, configs, key, reset_to_zero, restore_value,
                 pre_hook=None, post_hook=None, prune_configs_by: dict | None = None,
                 warmup=None, rep=None, use_cuda_graph=False, do_bench=None,
                 cache_results=False):
        self.fn = fn
        self.base_fn = fn
        while not inspect.isfunction(self.base_fn):
            self.base_fn = self.base_fn.fn
        self.__name__ = getattr(fn, "__name__", "kernel")
        self.__doc__ = getattr(fn, "__doc__", None)
        self.configs = list(configs) if configs else [Config({})]
        self.arg_names = list(arg_names)
        for label, group in (("key", key), ("reset_to_zero", reset_to_zero or []),
                             ("restore_value", restore_value or [])):
            unknown = [k for k in group if k not in self.arg_names]
            if unknown:
                text = (f"autotune {label} of {self.__name__} names "
                        f"{', '.join(map(repr, unknown))}, which "
                        f"{'is not a parameter' if len(unknown) == 1 else 'are not parameters'}"
                        f" (parameters: {', '.join(self.arg_names)})")
                if label != "key":
                    raise ValueError(text)
                # Triton tunes on the key names that are parameters and ignores the rest
                warnings.warn(text + ": left out of the tuning key, as Triton does",
                              stacklevel=3)
        self.keys = list(key)
        self.reset_to_zero = list(reset_to_zero or [])
        self.restore_value = list(restore_value or [])
        self.cache: dict[tuple, Config] = {}
        self.cache_results = bool(cache_results) or \
            os.environ.get("TILECC_CACHE_AUTOTUNING", "0") == "1"
        self.user_defined_pre_hook = pre_hook is not None
        self.user_defined_post_hook = post_hook is not None
        self._user_pre_hook, self._user_post_hook = pre_hook, post_hook
        self.restore_copies: dict[str, Any] = {}
        prune = prune_configs_by or {}
        self.perf_model = prune.get("perf_model")
        self.configs_top_k = prune.get("top_k", 1.0)
        self.early_config_prune = prune.get("early_config_prune")
        self._do_bench = do_bench
        self.num_warmups, self.num_reps = warmup, rep
        self.use_cuda_graph = use_cuda_graph  # timed without a graph (triton.testing's note)
        self.nargs: dict | None = None
        self.best_config: Config | None = None
        self.configs_timings: dict[Config, float] | None = None
        self.bench_time = 0.0
        self._failures: dict[Config, str] = {}

    # --- hooks: what keeps tuning from changing the caller's data ------------------------
    def pre_hook(self, kwargs: dict, reset_only: bool = False) -> None:
        """Before a timed run: zero `reset_to_zero`, copy `restore_value` (not when
        `reset_only`, which the real launch after tuning asks for), then the user's hook."""
        for name in self.reset_to_zero:
            bench.zero(kwargs[name])
        if not reset_only:
            self.restore_copies = {name: bench.clone(kwargs[name])
                                   for name in self.restore_value}
        hook = self._user_pre_hook
        if hook is not None and (not reset_only or _takes(hook, "reset_only")):
            hook(kwargs, reset_only=True) if reset_only else hook(kwargs)

    def post_hook(self, kwargs: dict, exception: BaseException | None) -> None:
        """After a timed run: `restore_value` arguments get their contents back, then the
        user's hook."""
        for name, saved in self.restore_copies.items():
            bench.copy_into(kwargs[name], saved)
        self.restore_copies = {}
        if self._user_post_hook is not None:
            self._user_post_hook(kwargs, exception)

    # --- timing ------------------------------------------------------------------------------
    @property
    def do_bench(self) -> Callable:
        """`do_bench(fn, quantiles) -> ms`: the user's, else device events (the CPU clock
        for the interpreter)."""
        return self._do_bench if self._do_bench is not None else self._default_bench

    def _default_bench(self, kernel_call: Callable, quantiles=(0.5, 0.2, 0.8)):
        if interpreting():
            times = bench.cpu_times(kernel_call)
        else:
            named = self.nargs or {}
            fw = bench.framework(any(type(v).__module__.startswith("torch")
                                     for v in named.values()))
            times = bench.device_times(kernel_call, fw, 25 if self.num_warmups is None
                                       else self.num_warmups,
                                       100 if self.num_reps is None else self.num_reps)
        return bench.quantiles_of(times, quantiles)

    def _bench(self, *args, config: Config, **meta) -> float:
        """Milliseconds of one run with `config` (the median); inf where the config cannot
        run here (its reason kept in `_failures`)."""
        conflicts = meta.keys() & config.kwargs.keys()
        if conflicts:
            raise ValueError(f"Conflicting meta-parameters: {', '.join(sorted(conflicts))}. "
                             "Make sure that you don't re-define auto-tuned symbols.")
        if config in self._failures:
            return _INF
        current = dict(meta, **config.all_kwargs())
        full = {**(self.nargs or {}), **current}

        def kernel_call():
            if config.pre_hook:
                config.pre_hook(full)
            self.pre_hook(full)
            try:
                self.fn.run(*args, **current)
            except Exception as e:
                try:
                    self.post_hook(full, exception=e)
                finally:
                    raise
            self.post_hook(full, exception=None)

        try:
            t = self.do_bench(kernel_call, **({"quantiles": (0.5, 0.2, 0.8)}
                                              if _takes(self.do_bench, "quantiles") else {}))
        except Exception as e:
            self._skip(config, e)
            return _INF
        return float(t[0] if isinstance(t, (list, tuple)) else t)

    def _skip(self, config: Config, e: Exception) -> None:
        """Record and log why a candidate is skipped; re-raise what is not a config's fault.
        (Called from an `except` block, so a bare `raise` keeps the original traceback.)"""
        if not _skippable(e):
            raise e
        self._failures[config] = f"{type(e).__name__}: {_first_line(e)}"
        log.warning("autotune %s: skipping config %s: %s", self.__name__, config,
                    self._failures[config])

    # --- choosing ------------------------------------------------------------------------------
    def prune_configs(self, kwargs: dict, nargs: dict | None = None) -> list[Config]:
        named = self.nargs if nargs is None else nargs
        pruned = self.configs
        if self.early_config_prune:
            pruned = list(self.early_config_prune(self.configs, named, **kwargs))
            if not pruned:
                raise AutotunerError(f"{self.__name__}: early_config_prune left no "
                                     "configuration (it should return at least one)")
        if self.perf_model:
            top_k = self.configs_top_k
            if isinstance(top_k, float) and top_k <= 1.0:
                top_k = max(1, int(len(pruned) * top_k))
            elif not isinstance(top_k, int):
                raise TypeError("prune_configs_by['top_k'] is an int or a float <= 1.0")
            if len(pruned) > top_k:
                est = {c: self.perf_model(**named, **kwargs, **c.all_kwargs()) for c in pruned}
                pruned = sorted(est, key=est.get)[:top_k]
        return pruned

    def _tuning_key(self, args: tuple, kwargs: dict) -> tuple:
        named = {k: v for k, v in {**dict(zip(self.arg_names, args)), **kwargs}.items()
                 if k in self.arg_names}
        key = [named[k] for k in self.keys if k in named]
        key += [str(v.dtype) for v in named.values() if hasattr(v, "dtype")]
        return tuple(key)

    def run(self, *args, **kwargs):
        self.nargs = dict(zip(self.arg_names, args))
        clash = sorted({k for c in self.configs for k in (c.kwargs or {}) if k in kwargs})
        if clash:
            raise ValueError(f"{self.__name__}: {', '.join(clash)} are tuned by @autotune "
                             "and cannot also be passed by the caller")
        if len(self.configs) > 1:
            key = self._tuning_key(args, kwargs)
            if key not in self.cache:
                self._choose(key, args, kwargs)
            config = self.cache[key]
        else:
            config = self.configs[0]
        self.best_config = config
        if config.pre_hook is not None:
            config.pre_hook({**self.nargs, **kwargs, **config.all_kwargs()})
        try:
            return self.fn.run(*args, **kwargs, **config.all_kwargs())
        finally:
            self.nargs = None

    def _choose(self, key: tuple, args: tuple, kwargs: dict) -> None:
        t0 = time.perf_counter()
        pruned = self.prune_configs(kwargs)
        if len(pruned) == 1:  # nothing to time
            self.cache[key] = pruned[0]
            return

        def benchmark():
            if not interpreting() and not kwargs.get("warmup"):
                self._precompile(pruned, args, kwargs)
            timings = {}
            progress = bench.progress(len(pruned), self.__name__)
            try:
                for config in pruned:
                    timings[config] = self._bench(*args, config=config, **kwargs)
                    bench.advance(progress, f"{config}: {timings[config]:.4f} ms")
            finally:
                if progress is not None:
                    progress.close()
            best = builtins.min(timings, key=timings.get)
            if timings[best] == _INF:
                reasons = "\n".join(f"  {c}: {r}" for c, r in self._failures.items())
                raise RuntimeError(f"{self.__name__}: every autotune configuration failed:\n"
                                   f"{reasons}")
            self.bench_time = time.perf_counter() - t0
            self.cache[key] = best
            self.pre_hook({**self.nargs, **kwargs, **best.all_kwargs()}, reset_only=True)
            self.configs_timings = timings

        if self.cache_results and not interpreting():
            cached = self.check_disk_cache(key, pruned, benchmark)
        else:
            benchmark()
            cached = False
        bench.report(self, key, self.cache[key], None if cached else self.configs_timings,
                     time.perf_counter() - t0, "from the disk cache" if cached else "tuned")

    def check_disk_cache(self, tuning_key: tuple, configs: list[Config],
                         bench_fn: Callable) -> bool:
        """The decision for `tuning_key` from the disk cache (True), else `bench_fn()` and
        the decision stored (False).  Configs with pre-hooks are always timed (a hook
        cannot be part of a key), as in Triton."""
        disk_key = None if any(c.pre_hook for c in configs) else \
            self._disk_key(tuning_key, configs)
        if disk_key is not None:
            config = bench.load_decision(disk_key, configs)
            if config is not None:
                self.cache[tuning_key] = config
                self.configs_timings = None
                return True
        bench_fn()
        if disk_key is not None:
            best = self.cache[tuning_key]
            bench.store_decision(disk_key, configs.index(best), best, self.configs_timings)
        return False

    def _disk_key(self, key, pruned):  # a cache.Key, or None
        from tilecc.runtime import cache
        from tilecc.runtime.jit import _base_jit

        try:
            device = bench.device_name(self.nargs or {})
        except Exception:
            return None
        heur = sorted(getattr(self.fn, "values", {}))
        return cache.key_of("autotune", _base_jit(self).fingerprint, [repr(c) for c in pruned],
                            [repr(k) for k in key], device, heur)

    def _precompile(self, pruned: list[Config], args: tuple, kwargs: dict) -> None:
        """Compile every candidate at once on a thread pool (transpiling holds the GIL,
        NVRTC does not); results land in the in-process and disk caches."""
        def one(config):
            try:
                a, k = _hooked_descriptors(self, config, args, kwargs)
                self.fn.run(*a, **{**k, "warmup": True, **config.all_kwargs()})
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

    def warmup(self, *args, **kwargs) -> list:
        """Compile every configuration that pruning keeps (no launch): their
        CompiledKernels."""
        self.nargs = dict(zip(self.arg_names, args))
        try:
            return [self.fn.warmup(*args, **kwargs, **config.all_kwargs())
                    for config in self.prune_configs(kwargs)]
        finally:
            self.nargs = None


def _takes(fn: Callable, name: str) -> bool:
    """Whether `fn` accepts the keyword `name` (user hooks and do_bench written for one
    argument are called with one)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return True
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


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
    config.pre_hook({**dict(zip(tuner.arg_names, args)), **kwargs, **config.all_kwargs()})
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


# --- decorators ------------------------------------------------------------------------------

def autotune(configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None,
             pre_hook=None, post_hook=None, warmup=None, rep=None, use_cuda_graph=False,
             do_bench=None, cache_results=False):
    """Decorate a @jit kernel (or a @heuristics one) to pick the fastest Config per key."""
    def decorator(fn):
        return Autotuner(fn, fn.arg_names, configs, key, reset_to_zero, restore_value,
                         pre_hook=pre_hook, post_hook=post_hook,
                         prune_configs_by=prune_configs_by, warmup=warmup, rep=rep,
                         use_cuda_graph=use_cuda_graph, do_bench=do_bench,
                         cache_results=cache_results)
    return decorator


def heuristics(values):
    """Decorate a @jit kernel: each named meta-parameter is computed from the arguments."""
    def decorator(fn):
        return Heuristics(fn, fn.arg_names, values)
    return decorator
