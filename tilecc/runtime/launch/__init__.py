"""Launching on the GPU: `kernel[grid](...)` from the arguments to the driver call.

    args.py   what both backends share: binding, the warm key (`arg_key`, `launch_key`,
              the generated `make_binder`), device checks, the grid, the argument block
    cuda.py   loading into the device's context, streams, the CUDA warm launch
    hip.py    loading and launching through hip-python
    here      `run` (every launch) and the slow path (specialize, compile, load);
              `runtime.compiled.warm_up` compiles without launching

`kernel[grid]` returns a bound launch (kept per grid tuple, the grid normalized once); a
launch returns the kernel's `CompiledKernel` (`runtime/compiled.py`), which `_build` makes
once per loaded kernel and every launcher of that kernel keeps as `compiled`.
From the second launch of a signature on, a launch is one generated function of the
kernel's own parameters (`binder.direct`, built by `args.make_binder` for that launch's
argument types, ending in the backend launcher's `direct_tail`), which `kernel[grid]`
then binds itself (`run` below is what it declines to, and what `kernel.run`, callable
grids and autotuners call):

1. Python binds the arguments as it binds any call;
2. `type(a) is T` checks, and the warm key: per argument, what decides the
   specialization (array: dtype, pointer % 16, device; int: i32/i64/u64, % 16, == 1;
   float; bool; constexpr: its value), with the launch options when any is given;
3. one dict lookup of that key: the backend's launcher, built by the first call;
4. the grid, when it was not normalized already (a callable grid, a list);
5. CUDA: `struct.pack_into` of the values into the launcher's argument block (whose
   `kernelParams` array of pointers was built once), the framework's current stream
   (torch's when a tensor is among the arguments, else CuPy's), and `cuLaunchKernel`.

Arguments of other types take the lines generated for their types, if the kernel has them
(one set per set of types seen twice, all in one function that tests each set's types in
turn: `_add_direct`); it declines (returns False) whatever none was generated for, and the general path runs: `JITFunction.bind`'s
checks where binding is unusual, the generic `arg_key`, one dict lookup, the launcher.
Anything that path does not read (host arrays, bfloat16 scalars, misspelt or defaulted
arguments, a new dtype, device or alignment) takes the slow path:
`JITFunction.specs_for` specializes from scratch with every check and error message, the
kernel is compiled (`runtime.compiler.compile`, which owns the memory and disk caches) and
loaded, and a launcher is built and cached under the warm key.

This package does not import `tilecc.runtime.jit`, nor `runtime.compiled` (which loads
through it): what it needs of a kernel comes with the kernel (`jit_fn.bind`,
`jit_fn.specs_for`, `jit_fn._compiled_kernel`, `runtime.compiler.compile`, ...).
"""

from __future__ import annotations

import contextlib
import functools

from tilecc.errors import (CompilationError, InterpreterError, LaunchError, NoDeviceError,
                           python_cause)
from tilecc.runtime import compiler
from tilecc.runtime.launch import cuda, hip
from tilecc.runtime.launch.args import (_INTERPRET_KEY, _KINDS, _ONE, _TORCH,  # noqa: F401
                                        LAUNCH_OPTIONS, ArgBuffer, _env_get, arg_key,
                                        bind_fast, combined_direct, declined,
                                        device_arrays, interpret_requested,
                                        launch_key, make_binder, normalize_grid,
                                        ordered_options, resolve_grid, slot_layout,
                                        slot_values)
from tilecc.runtime.launch.cuda import CudaKernel, Launcher, stream_getter  # noqa: F401
from tilecc.runtime.launch.hip import HipKernel, HipLauncher  # noqa: F401
from tilecc.runtime.options import (DEFAULT_NUM_WARPS, HIP_HINTS, OPTIONS,
                                    launch_arch, off_target_problem)
from tilecc.transpiler.target import resolve_target

_BACKENDS = {"cuda": cuda, "hip": hip}


# A profiler's observer of launches (`set_launch_observer`); while there is none, a launch
# pays one test for it.
_observer = None


def set_launch_observer(observer) -> None:
    """Have every launch (on the GPU or the interpreter) call
    `observer(jit_fn, grid, args, kwargs, interpreted, launch)` instead, where
    `launch(grid)` makes the launch on a grid (as given, or resolved by the observer);
    None removes it.  A warm launch hands the arguments over by name: read them through
    `jit_fn.bind(args, kwargs)`, as they would bind.  (tilecc.compat's `triton.profiler`
    sets it while a session records launches.)"""
    global _observer
    _observer = observer


def run(jit_fn, grid, g3: tuple | None, *args, _interpret: bool = False,
        _observed: bool = False, _no_direct: bool = False, **kwargs):
    """`kernel[grid](*args, **kwargs)`: on the GPU, or on the interpreter when
    TILECC_INTERPRET=1 (or `_interpret`).  `g3`: the grid, normalized (kernel[grid] does
    it once per grid tuple), or None.  See the module docstring for what a warm launch
    costs.  Returns the launched kernel's `CompiledKernel` (made once per loaded kernel,
    kept on its launchers), as Triton's launches do; None on the interpreter, as
    Triton's interpreter.  `_no_direct`: the general path at once (what a generated warm
    launch declines comes back here so: `kernel[grid]`'s partial calls it first)."""
    if _observer is not None and not _observed:
        interpreted = _interpret or _env_get(_INTERPRET_KEY) == _ONE

        def launch(on_grid):
            return run(jit_fn, on_grid, g3 if on_grid is grid else None, *args,
                       _interpret=_interpret, _observed=True, **kwargs)
        return _observer(jit_fn, grid, args, kwargs, interpreted, launch)
    if _interpret or _env_get(_INTERPRET_KEY) == _ONE:
        try:
            return jit_fn.interpret[grid](*args, **kwargs)
        except (CompilationError, InterpreterError, LaunchError) as e:  # without tilecc's
            raise e.with_traceback(None) from python_cause(e)  # frames behind it
    direct = jit_fn._direct
    if direct is not None and not _no_direct:
        try:
            launched = direct(grid, g3, declined, *args, **kwargs)  # compiled, or False
            if launched is not False:
                return launched
        except TypeError:  # an argument given twice, an unhashable constexpr: see below
            pass
    try:
        names = jit_fn._param_names
        if kwargs:
            values, options = bind_fast(names, args, kwargs)
            if values is None:  # defaults, misspelt or repeated arguments: the careful path
                by_name, options = jit_fn.bind(args, dict(kwargs))
                values = [by_name[n] for n in names]
        elif len(args) == len(names):
            values, options = args, None
        else:
            by_name, options = jit_fn.bind(args, {})
            values = [by_name[n] for n in names]
        options = options or {}
        fast = arg_key(jit_fn._param_constexpr, values)
        launcher = None
        if fast is not None:
            key, kernel_values = fast
            key = launch_key(tuple(key), *ordered_options(options)) if options else tuple(key)
            try:
                launcher = jit_fn._entries.get(key)
            except TypeError:  # an unhashable constexpr: specialize the slow way every time
                fast = None
        if launcher is None:
            launcher, kernel_values, has_arrays = _slow_path(jit_fn, values, options)
            if fast is not None and has_arrays:  # without arrays the device is the current one
                jit_fn._entries[key] = launcher
                _file_direct(jit_fn, values, options, launcher)
        elif not _file_direct(jit_fn, values, options, launcher):
            # A second launch of these argument types: their generated warm launch (~0.3 ms
            # to generate) pays off from here on.  A process's first launch does not wait
            # for it, and one that launches once never pays it.
            _add_direct(jit_fn, values, options, launcher)
        if options and not HIP_HINTS.isdisjoint(options):  # AMD's hints: HIP launches only
            _refuse_off_backend(options, launcher.backend)
        if g3 is None:
            g3 = resolve_grid(grid, dict(zip(names, values)), *ordered_options(options))
        if g3[0] and g3[1] and g3[2]:  # an empty grid launches nothing
            launcher(g3, kernel_values)
        return launcher.compiled
    except (CompilationError, LaunchError) as e:  # the user's line, without tilecc's
        raise e.with_traceback(None) from python_cause(e)  # frames behind it


# Generated warm launches per kernel, one per set of argument types (torch tensors and CuPy
# arrays alternating, a NumPy scalar in place of an int...), made into one function that
# tests each set in turn.
MAX_DIRECT_LAUNCHES = 8


def _add_direct(jit_fn, values, options: dict, launcher) -> None:
    """Generate the kernel's warm launch for these argument types and this launcher's
    backend, make it one with those generated before (`args.combined_direct`), and file
    the launcher under its key, so that the next launch takes it.  Each set of types is
    tried once."""
    types = tuple(map(type, values))
    if len(jit_fn._binders) >= MAX_DIRECT_LAUNCHES or types in jit_fn._binder_types:
        return
    jit_fn._binder_types.add(types)
    binder = make_binder(jit_fn._param_constexpr, values, jit_fn._param_names, {},
                         type(launcher), variant=len(jit_fn._binders))
    if binder is None or binder.direct is None:
        return
    jit_fn._binders.append(binder)
    direct = binder.direct if len(jit_fn._binders) == 1 else combined_direct(
        jit_fn._param_names, jit_fn._binders)
    # named for the kernel: an argument given twice is Python's TypeError, "k[grid]() got
    # multiple values for argument 'x'", raised at the user's call
    direct.__name__ = direct.__qualname__ = f"{jit_fn.fn.__name__}[grid]"
    jit_fn._direct = direct
    jit_fn._grids.clear()  # kernel[grid] binds the warm launch from now on
    _file_direct(jit_fn, values, options, launcher)


def _file_direct(jit_fn, values, options: dict, launcher) -> bool:
    """File a launcher the general path found or built under the key of the generated
    warm launch of these arguments' types, if there is one (whether there was)."""
    for binder in jit_fn._binders:
        bound = binder(values)
        if bound is not None:
            binder.bound[launch_key(bound[0], *ordered_options(options))] = launcher
            return True
    return False


# --- the slow path -----------------------------------------------------------------------------

def _slow_path(jit_fn, values, options: dict):
    """Specialize, check devices, compile and load: the first launch of a signature (and
    every launch whose arguments the warm path does not read)."""
    with _gpu_required():
        return _slow_path_on_device(jit_fn, values, options)


@contextlib.contextmanager
def _gpu_required():
    """CUDA's errors for a machine without a usable GPU become one NoDeviceError that
    says how to run without one."""
    try:
        yield
    except (RuntimeError, OSError, ImportError) as e:
        if not _no_usable_gpu(e):
            raise
        raise NoDeviceError(
            f"no usable CUDA driver or GPU was found ({type(e).__name__}: {e}): run the kernel "
            "on the NumPy interpreter instead, with kernel.interpret[grid](...) or "
            "TILECC_INTERPRET=1 (kernel.source and kernel.compile need no GPU)") from None


# CUDA errors that say there is no GPU to use: not initialized, a stub library, a driver
# older than the runtime, no device (the runtime's and the driver's codes agree)
_NO_DEVICE_STATUS = (3, 34, 35, 100)


def _no_usable_gpu(e: Exception) -> bool:
    if type(e).__name__ in ("CUDARuntimeError", "CUDADriverError"):
        return getattr(e, "status", None) in _NO_DEVICE_STATUS
    if isinstance(e, ImportError):  # no CuPy to ask which device is current
        return (e.name or "").startswith("cupy")
    return isinstance(e, OSError) and "libcuda" in str(e)  # no driver library at all


def _refuse_off_backend(options: dict, backend: str) -> None:
    """The launch options a backend does not take, as its target row says
    (`options.off_target_problem`): AMD's tuning hints off HIP, a cooperative launch on
    HIP.  The hints' values are checked at every launch that gives them (they are not in
    the warm key)."""
    for name in HIP_HINTS.intersection(options):
        OPTIONS[name].check(options[name])
    problem = off_target_problem(options, backend)
    if problem:
        raise LaunchError(problem)


def _slow_path_on_device(jit_fn, values, options: dict):
    num_warps = options.get("num_warps", DEFAULT_NUM_WARPS)
    specs, passed, arrays, backend, device_id = _specialize(jit_fn, values)
    if options:
        _refuse_off_backend(options, backend)
    frameworks = {a.framework for a in arrays}
    # constexpr types too: 64 == 64.0 == True, but they specialize differently
    key = (tuple(specs), tuple(type(s.constexpr) for s in specs), num_warps,
           ordered_options(options), backend, device_id, frozenset(frameworks))
    launcher = jit_fn._launchers.get(key)
    if launcher is None:
        kernel_key = key[:6]
        kernel = jit_fn._launchers.get(kernel_key)
        if kernel is None:
            more = {k: v for k, v in options.items()
                    if k not in ("num_warps", "debug", "num_stages")}
            kernel = jit_fn._launchers[kernel_key] = _build(
                jit_fn, specs, num_warps, options.get("debug"), backend, device_id,
                options.get("num_stages"), **more)
        launcher = _BACKENDS[backend].launcher(kernel, slot_layout(specs), frameworks)
        if getattr(launcher, "fallback", False) is None:  # tensor maps of made descriptors
            launcher.fallback = functools.partial(
                _without_made_descriptor_tma, jit_fn, specs, num_warps, options, backend,
                device_id, frameworks)
        jit_fn._launchers[key] = launcher
    return (launcher, slot_values(specs, passed),
            bool(arrays))


def _without_made_descriptor_tma(jit_fn, specs, num_warps, options, backend, device_id,
                                 frameworks):
    """The launcher of a build whose descriptors made in the kernel are read by bounds-
    checked loads, not TMA: for launches whose strides break Triton's rule (rows not in
    multiples of 16 bytes), which the TMA build assumed."""
    more = {k: v for k, v in options.items() if k not in ("num_warps", "debug", "num_stages")}
    kernel = _build(jit_fn, specs, num_warps, options.get("debug"), backend, device_id,
                    options.get("num_stages"), made_descriptor_tma=False, **more)
    return _BACKENDS[backend].launcher(kernel, slot_layout(specs), frameworks)


def _specialize(jit_fn, values):
    specs, passed = jit_fn.specs_for(dict(zip(jit_fn._param_names, values)))
    arrays, backend, device_id = device_arrays(specs, passed)
    if device_id is None:
        device_id = _current_device(backend)
    return specs, passed, arrays, backend, device_id


def _current_device(backend: str) -> int:
    return _BACKENDS[backend].current_device()


_archs: dict[tuple[int, str], str] = {}


def _device_arch(device_id: int, backend: str) -> str:
    arch = _archs.get((device_id, backend))
    if arch is None:
        arch = _archs[(device_id, backend)] = _BACKENDS[backend].device_arch(device_id)
    return arch


def _build(jit_fn, specs, num_warps, debug, backend, device_id, num_stages=None, **more):
    """Compile and load; `more`: the other launch options given (maxnreg...).  The loaded
    kernel carries its `CompiledKernel` (what launches return) as `compiled`.  `arch`:
    the device's unless given (one whose binary loads on the device: `launch_arch`)."""
    given = {"num_warps": num_warps, "debug": debug, "num_stages": num_stages, **more}
    arch = more.pop("arch", None)
    cooperative = bool(more.get("launch_cooperative_grid"))
    device_arch = _device_arch(device_id, backend)
    target = resolve_target(backend, device_arch if arch is None else
                            launch_arch(backend, arch, device_arch))
    art = compiler.compile(jit_fn, specs, target, compiler.resolve_options(
        jit_fn, num_warps=num_warps, debug=debug, num_stages=num_stages, arch=target.arch,
        **more))
    loaded = _BACKENDS[backend].load(art.binary, art.symbol,
                                     art.binary.threads or num_warps * target.warp_size,
                                     device_id, specs, cooperative=cooperative)
    loaded.compiled = jit_fn._compiled_kernel(
        art, {k: v for k, v in given.items() if k in LAUNCH_OPTIONS and v is not None},
        device_id, {s.name: s.constexpr for s in specs if s.is_constexpr}, loaded=loaded)
    return loaded
