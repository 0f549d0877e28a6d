"""`@tilecc.jit`: specialize, transpile, compile, cache and launch a kernel.

    kernel[grid](*args, num_warps=4, **constexprs)   launch on the GPU (or the interpreter
                                                     when TILECC_INTERPRET=1)
    kernel.interpret[grid](*args, ...)               always the NumPy interpreter
    kernel.source(signature, target="cuda")          generated source, no GPU needed
    kernel.compile(signature, target, arch)          cubin / HIP code object, no GPU needed
    kernel.warmup(*args, grid=grid, **meta)          compile what a launch would (no launch,
                                                     no GPU needed): a CompiledKernel

Triton's attributes of a kernel are here too (`arg_names`, `params`, `src`, `fn`,
`cache_key`, `add_pre_run_hook`...), and `KernelInterface`, the base of kernels, autotuners
and heuristics: `kernel[grid](...)` is `kernel.run(*args, grid=grid, warmup=False)`.

Compiled kernels are cached in memory per (specialization, launch options, device), and
on disk (`tilecc.runtime.cache`): a new process that finds its kernels there skips the
transpiler and the compiler.
"""

from __future__ import annotations

import ast
import contextvars
import difflib
import functools
import inspect
import os
import textwrap
from dataclasses import asdict
from typing import Any, Callable

from tilecc.errors import CompilationError, InterpreterError, LaunchError, python_cause
from tilecc.language import dtypes as D
from tilecc.language.core import KernelFunction
from tilecc.runtime.launch import run as _launch_run
from tilecc.runtime import compiler
from tilecc.runtime.options import (HIP_HINTS, LAUNCH_OPTIONS, STANDARD_EXTERN_LIBS,
                                    TRITON_ONLY_OPTIONS, CompileOptions, arch_problem)
from tilecc.transpiler import specialize as SP
from tilecc.transpiler.grid import normalize_grid as _normalize_grid
from tilecc.transpiler.specs import ArgSpec, ParamDecl
from tilecc.transpiler.target import Target, get_target


def _check_extern_libs(kernel: str, libs) -> None:
    """Triton's `extern_libs=` launch option: accepted when it names only the standard
    device libraries (whose functions tilecc's source already reaches), refused else."""
    names = set(dict(libs or {}))
    other = sorted(names - STANDARD_EXTERN_LIBS)
    if other:
        raise LaunchError(f"{kernel}[grid](...): extern_libs names {', '.join(map(repr, other))}: "
                          "tilecc links no external bitcode (it accepts only "
                          f"{', '.join(sorted(STANDARD_EXTERN_LIBS))}, the libraries behind "
                          "tl.extra.libdevice, which it reaches through the target's math "
                          "library)")


def _user_facing(method: Callable) -> Callable:
    """Re-raise CompilationErrors without tilecc's own frames behind them."""
    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        try:
            return method(*args, **kwargs)
        except CompilationError as e:
            raise e.with_traceback(None) from python_cause(e)
    return wrapper


# Set while `obj.interpret[grid](...)` runs an autotuner or heuristics: the launches they
# make run on the interpreter too.
_interpreting = contextvars.ContextVar("tilecc_interpreting", default=False)


def interpreting() -> bool:
    """Launches run on the NumPy interpreter: TILECC_INTERPRET=1, or inside
    `.interpret[grid](...)`."""
    return _interpreting.get() or os.environ.get("TILECC_INTERPRET", "0") == "1"


class KernelInterface:
    """What launches: `obj[grid](*args, **meta)` is `obj.run(*args, grid=grid,
    warmup=False, **meta)`, `obj.warmup(*args, grid=grid, **meta)` compiles the same
    without launching, `obj.interpret[grid](...)` runs it on the NumPy interpreter.
    Kernels, autotuners and heuristics are all one (Triton's `KernelInterface`)."""

    def run(self, *args, grid, warmup, **kwargs):
        raise NotImplementedError

    def warmup(self, *args, grid, **kwargs):
        from tilecc.runtime.tensor_wrappers import MockTensor

        return self.run(*map(MockTensor.wrap_dtype, args), grid=grid, warmup=True, **kwargs)

    def __getitem__(self, grid) -> Callable:
        return lambda *args, **kwargs: _user_launch(self.run, *args, grid=grid, warmup=False,
                                                    **kwargs)

    @property
    def interpret(self) -> "_InterpretAll":
        return _InterpretAll(self)


class _InterpretAll:
    def __init__(self, target: KernelInterface):
        self.target = target

    def __getitem__(self, grid) -> Callable:
        def run(*args, **kwargs):
            token = _interpreting.set(True)
            try:
                return _user_launch(self.target.run, *args, grid=grid, warmup=False, **kwargs)
            finally:
                _interpreting.reset(token)
        return run


def _user_launch(run: Callable, *args, **kwargs):
    """A launch as the user sees it: its errors point at the user's line (the message
    says where), without tilecc's frames behind them."""
    try:
        return run(*args, **kwargs)
    except (CompilationError, InterpreterError, LaunchError) as e:
        raise e.with_traceback(None) from python_cause(e)


def _base_jit(obj) -> "JITFunction":
    while not isinstance(obj, JITFunction):
        obj = obj.fn
    return obj


class KernelParam:
    """One parameter of a kernel, as Triton's `kernel.params` lists them: its position,
    name, annotation and default, and whether it is a constexpr."""

    def __init__(self, num: int, param: inspect.Parameter, do_not_specialize: bool,
                 do_not_specialize_on_alignment: bool, _is_constexpr: bool | None = None):
        self.num = num
        self._param = param
        # (the kernel's own reading of its annotations, which resolves strings)
        self.is_constexpr = "constexpr" in str(param.annotation) if _is_constexpr is None \
            else _is_constexpr
        self.do_not_specialize = do_not_specialize
        self.do_not_specialize_on_alignment = do_not_specialize_on_alignment

    def __repr__(self) -> str:
        return f"KernelParam({self.num}, {self.name!r}, constexpr={self.is_constexpr})"

    @property
    def name(self) -> str:
        return self._param.name

    @property
    def annotation(self) -> str:
        """The annotation as Triton spells it: "constexpr", "fp32", "*fp16"... ("" none)."""
        ann = self._param.annotation
        if ann is inspect.Parameter.empty or not ann:
            return ""
        if self.is_constexpr:
            return "constexpr"
        text = ann if isinstance(ann, str) else getattr(ann, "__name__", None) or str(ann)
        return text.rsplit(".", 1)[-1] if "." in text and not text.startswith("*") else text

    @property
    def annotation_type(self) -> str:
        a = self.annotation
        if a.startswith("*k"):
            return a[2:].lstrip(":")
        return a.lstrip("*") if a and a != "constexpr" else ""

    @property
    def is_const(self) -> bool:
        return not self.is_constexpr and "const" in self.annotation

    @property
    def default(self) -> Any:
        return self._param.default

    @property
    def has_default(self) -> bool:
        return self._param.default is not inspect.Parameter.empty


class JITFunction(KernelFunction, KernelInterface):
    """A kernel (or a helper kernels call): the language's `KernelFunction` mark, with
    the runtime's methods to specialize, compile, cache and launch it, and Triton's
    attributes of a kernel.  The constructor takes Triton's arguments: `version`,
    `do_not_specialize` and `do_not_specialize_on_alignment` (tilecc specializes on
    integers' `% 16` and `== 1` and on pointers' alignment regardless), `noinline` (helpers
    are inlined regardless), `repr` and `launch_metadata` (for Triton's profiler hooks)
    are kept as given."""

    def __init__(self, fn: Callable, version=None, do_not_specialize=None,
                 do_not_specialize_on_alignment=None, debug: bool | None = None,
                 noinline=None, repr=None, launch_metadata=None):
        if not inspect.isfunction(fn):
            raise TypeError("@tilecc.jit decorates a plain Python function")
        if fn.__name__ == "<lambda>":
            raise TypeError(f"tilecc.jit needs a function defined with `def` (a lambda, at "
                            f"{fn.__code__.co_filename}:{fn.__code__.co_firstlineno}, has "
                            "no statements to compile): write the kernel as `def`")
        from tilecc.source import capture

        capture(fn)  # what Python imported, not what the file holds when it is compiled
        self.fn = fn
        self.debug = debug
        functools.update_wrapper(self, fn)
        self.module = fn.__module__
        self.version = version
        self.do_not_specialize = list(do_not_specialize or [])
        self.do_not_specialize_on_alignment = list(do_not_specialize_on_alignment or [])
        self.noinline = noinline
        self.launch_metadata = launch_metadata
        self._repr = repr
        self.kernel = None  # Triton's: set by nothing, read by some libraries
        self.pre_run_hooks: list[Callable] = []
        self._params: list[KernelParam] | None = None
        self._entries: dict[tuple, Any] = {}  # warm key (launch.arg_key) -> Launcher
        # launch.make_binder's, one per set of argument types seen again (each with its
        # `bound`: its key -> Launcher), and the first one's whole warm launch, which
        # declines to the next one's (launch.py)
        self._binders: list[Callable] = []
        self._binder_types: set[tuple] = set()  # the sets of argument types tried
        self._direct: Callable | None = None
        self._launchers: dict[tuple, Any] = {}  # full specialization -> kernel, Launcher
        self._grids: dict[Any, Callable] = {}  # grid -> bound launch (kernel[grid])
        self._interpreted: dict[tuple, Any] = {}  # interpreter runs: key -> lowered IR

    def __repr__(self) -> str:
        return f"<tilecc kernel {self.fn.__module__}.{self.fn.__qualname__}>"

    @property
    def params(self) -> list[KernelParam]:
        """The parameters, in order (Triton's `KernelParam`s)."""
        if self._params is None:
            decls = _params_from_annotations(self.fn)  # no libcst parse: warm starts
            if decls is None:
                from tilecc.transpiler import frontend

                try:
                    decls = frontend.declared_params(self.fn)
                except CompilationError as e:
                    raise e.with_traceback(None) from python_cause(e)
            signature = self.signature.parameters
            self._params = [KernelParam(
                i, signature[d.name],
                i in self.do_not_specialize or d.name in self.do_not_specialize,
                i in self.do_not_specialize_on_alignment or
                d.name in self.do_not_specialize_on_alignment, d.is_constexpr)
                for i, d in enumerate(decls)]
        return self._params

    # --- Triton's attributes of a kernel ----------------------------------------------------
    @property
    def arg_names(self) -> list[str]:
        return list(self._param_names)

    @property
    def constexprs(self) -> list[int]:
        """The positions of the constexpr parameters."""
        return [p.num for p in self.params if p.is_constexpr]

    @functools.cached_property
    def signature(self) -> inspect.Signature:
        return inspect.signature(self.fn)

    @functools.cached_property
    def _source_lines(self) -> tuple[list[str], int]:
        from tilecc.source import captured

        snapshot = captured(self.fn)
        if snapshot is not None:
            return list(snapshot[2]), snapshot[1]
        lines, first = inspect.getsourcelines(self.fn)
        return lines, first

    @property
    def raw_src(self) -> list[str]:
        """The source lines, decorators included."""
        return self._source_lines[0]

    @property
    def starting_line_number(self) -> int:
        return self._source_lines[1]

    @property
    def src(self) -> str:
        """The source from its `def` on, dedented."""
        text = textwrap.dedent("".join(self.raw_src))
        for i, line in enumerate(text.splitlines(keepends=True)):
            if line.lstrip().startswith("def "):
                return "".join(text.splitlines(keepends=True)[i:])
        return text

    @property
    def cache_key(self) -> str:
        """A hash of the source, the helpers it calls and the globals it reads."""
        return self.fingerprint

    @property
    def hash(self) -> str:
        return self.fingerprint

    @property
    def type(self):
        from tilecc.language.core import constexpr_type

        return constexpr_type(self)

    def parse(self) -> ast.Module:
        """The function's `ast` (Python's, as Triton gives it)."""
        tree = ast.parse(self.src)
        if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
            raise ValueError(f"{self.fn.__name__}: the source is not one function")
        return tree

    def get_capture_scope(self) -> dict:
        """The names the kernel sees: its module's globals and its closure's."""
        return self.fn.__globals__ | inspect.getclosurevars(self.fn).nonlocals

    def repr(self, _) -> str:
        full = f"{self.fn.__module__}.{self.fn.__qualname__}"
        return full if self._repr is None else self._repr(_)

    def is_gluon(self) -> bool:
        return False

    def add_pre_run_hook(self, hook: Callable) -> None:
        """Call `hook(*args, **kwargs)` before each launch (and warm-up) of this kernel."""
        if not callable(hook):
            raise TypeError("a pre-run hook must be callable")
        self.pre_run_hooks.append(hook)
        self._grids.clear()  # bound launches made before now would not call it

    def _unsafe_update_src(self, new_src: str) -> None:
        """Triton's: compile `new_src` (the kernel's text edited, its parameters unchanged)
        instead of the source read from the file; kernels compiled before are dropped."""
        from tilecc.source import with_source

        self.fn = self.__wrapped__ = with_source(self.fn, new_src)
        for name in ("fingerprint", "signature", "_source_lines", "_param_names",
                     "_param_constexpr"):
            self.__dict__.pop(name, None)
        self._params = None
        for table in (self._entries, self._launchers, self._grids, self._binder_types,
                      self._interpreted):
            table.clear()
        self._binders, self._direct = [], None

    @functools.cached_property
    def fingerprint(self) -> str:
        """Hash of the source, the helpers it calls and the globals it reads (disk cache)."""
        from tilecc.runtime.cache import fingerprint

        return fingerprint(self.fn)

    @functools.cached_property
    def _param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    @functools.cached_property
    def _param_constexpr(self) -> tuple[bool, ...]:
        return tuple(p.is_constexpr for p in self.params)

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.fn.__name__} is a tilecc kernel: launch it with "
                        f"{self.fn.__name__}[grid](...), or call it from another kernel")

    # --- building (through the compile entry, `runtime/compiler.py`) -----------------------------
    def options(self, **given) -> CompileOptions:
        """Compile options from what a caller gives, checked, defaults filled in."""
        return compiler.resolve_options(self, **given)

    def _compile_options(self, target: Target | str, options: CompileOptions | None,
                         **given) -> CompileOptions:
        """The options of a public entry: `options` (a CompileOptions, from `options()`)
        with the keywords given (other than None) in its place, or the keywords alone,
        checked with defaults filled in (`runtime/options.py`); an `arch` checked against
        `target` first."""
        if options is not None:
            given = {**asdict(options), **{k: v for k, v in given.items() if v is not None}}
        elif given.get("line_directives") is None:
            given["line_directives"] = False
        _check_arch(target, given.get("arch"))
        return self.options(**given)

    # Every entry below takes the same options, as keywords or as one CompileOptions
    # (`options=kernel.options(num_warps=8, ...)`); None: the default (runtime/options.py).
    def build(self, specs: list[ArgSpec], target: Target | str = "cuda",
              num_warps: int | None = None, *, debug: bool | None = None,
              line_directives: bool | None = None, num_stages: int | None = None,
              arch: str | None = None, maxnreg: int | None = None,
              enable_fp_fusion: bool | None = None,
              options: CompileOptions | None = None) -> compiler.Artifact:
        """The IR and source of one specialization (`compiler.transpile`)."""
        return compiler.transpile(self, specs, target, self._compile_options(
            target, options, num_warps=num_warps, debug=debug, num_stages=num_stages,
            arch=arch, line_directives=line_directives, maxnreg=maxnreg,
            enable_fp_fusion=enable_fp_fusion))

    def lower(self, specs: list[ArgSpec], target: Target | str = "cuda",
              num_warps: int | None = None, *, debug: bool | None = None,
              line_directives: bool | None = None, num_stages: int | None = None,
              arch: str | None = None, maxnreg: int | None = None,
              enable_fp_fusion: bool | None = None, options: CompileOptions | None = None):
        """Frontend and passes (`compiler.lower`): the tile IR the interpreter runs."""
        return compiler.lower(self, specs, target, self._compile_options(
            target, options, num_warps=num_warps, debug=debug, num_stages=num_stages,
            arch=arch, line_directives=line_directives, maxnreg=maxnreg,
            enable_fp_fusion=enable_fp_fusion))

    def lower_to_interpret(self, specs: list[ArgSpec], num_warps: int | None,
                           num_stages: int | None, enable_fp_fusion: bool | None):
        """`lower` (with bounds checks) for the interpreter, which only reads the IR: kept
        per specialization, so that a kernel run on many inputs is traced once.  Keyed,
        as the disk cache keys builds, on the fingerprint of the source, the helpers and
        the globals read — taken at each call: a global changed between runs is seen."""
        from tilecc.runtime.cache import fingerprint, spec_key

        key = (fingerprint(self.fn), repr(spec_key(specs)), num_warps, num_stages,
               enable_fp_fusion)
        got = self._interpreted.get(key)
        if got is None:
            got = self.lower(specs, "cuda", num_warps, debug=True, num_stages=num_stages,
                             enable_fp_fusion=enable_fp_fusion)
            if len(self._interpreted) >= 32:
                self._interpreted.clear()
            self._interpreted[key] = got
        return got

    def _specs(self, signature, constexprs: dict) -> list[ArgSpec]:
        try:
            return SP.specs_from_signature(self.params, signature, constexprs,
                                           self.fn.__name__)
        except ValueError as e:
            raise CompilationError(str(e)) from None

    @_user_facing
    def source(self, signature: str | list[str] | None = None, target: str = "cuda",
               num_warps: int | None = None, line_directives: bool | None = None,
               debug: bool | None = None, num_stages: int | None = None,
               arch: str | None = None, maxnreg: int | None = None,
               enable_fp_fusion: bool | None = None, *, options: CompileOptions | None = None,
               **constexprs) -> str:
        """The generated CUDA or HIP source for one specialization (no GPU needed); `arch`
        (default sm_90 / gfx90a) as the source would be compiled for.  The options are
        written into the source itself (`maxnreg` as `__maxnreg__`, `enable_fp_fusion=False`
        as products no compiler contracts), whatever flags later build it."""
        return self.build(self._specs(signature, constexprs), target, num_warps, debug=debug,
                          line_directives=line_directives, num_stages=num_stages,
                          arch=arch, maxnreg=maxnreg, enable_fp_fusion=enable_fp_fusion,
                          options=options).source

    @_user_facing
    def ir(self, signature=None, target: str = "cuda", num_warps: int | None = None,
           num_stages: int | None = None, *, debug: bool | None = None,
           line_directives: bool | None = None, arch: str | None = None,
           maxnreg: int | None = None, enable_fp_fusion: bool | None = None,
           options: CompileOptions | None = None, **constexprs):
        """The tile IR after the passes, for inspection."""
        return self.build(self._specs(signature, constexprs), target, num_warps, debug=debug,
                          line_directives=line_directives, num_stages=num_stages,
                          arch=arch, maxnreg=maxnreg, enable_fp_fusion=enable_fp_fusion,
                          options=options).kernel

    @_user_facing
    def compile(self, signature=None, target: str = "cuda", arch: str | None = None,
                num_warps: int | None = None, debug: bool | None = None,
                num_stages: int | None = None, maxnreg: int | None = None,
                enable_fp_fusion: bool | None = None, *, line_directives: bool | None = None,
                options: CompileOptions | None = None, **constexprs):
        """Compile one specialization to a cubin (CUDA) or code object (HIP), no GPU needed
        (always with #line directives, as every runtime compile)."""
        return compiler.compile(self, self._specs(signature, constexprs), target,
                                self._compile_options(
                                    target, options, num_warps=num_warps, debug=debug,
                                    num_stages=num_stages, arch=arch, maxnreg=maxnreg,
                                    line_directives=line_directives,
                                    enable_fp_fusion=enable_fp_fusion)).binary

    # --- launching -------------------------------------------------------------------------------
    def __getitem__(self, grid) -> Callable:
        """kernel[grid]: the launch of this kernel on `grid`, to call with the arguments.
        Bound launches are kept per grid tuple (normalized once), so a warm
        `kernel[grid](...)` builds nothing.  Once the kernel has a generated warm launch
        (`launch.args.make_binder`), they bind it, straight from the user's call; what it
        does not take goes to the general path (`launch.run`)."""
        if self.pre_run_hooks:
            return functools.partial(self.run, grid=grid, warmup=False)
        try:
            bound = self._grids.get(grid)
        except TypeError:  # an unhashable grid (a list)
            return self._bound(grid, None)
        if bound is None:
            if type(grid) is not tuple:  # a callable grid is often a new lambda per call
                return self._bound(grid, None)
            try:
                g3 = _normalize_grid(grid)
            except ValueError:  # the launch reports it
                return functools.partial(_launch_run, self, grid, None)
            if len(self._grids) >= 64:
                self._grids.clear()
            bound = self._grids[grid] = self._bound(grid, g3)
        return bound

    def _bound(self, grid, g3: tuple | None) -> Callable:
        """The launch on `grid` (`g3`: normalized, or None to resolve at each launch)."""
        if self._direct is None:
            return functools.partial(_launch_run, self, grid, g3)
        return functools.partial(self._direct, grid, g3,
                                 functools.partial(_launch_run, self, _no_direct=True))

    @property
    def interpret(self) -> "_Interpret":
        return _Interpret(self)

    def run(self, *args, grid, warmup, **kwargs):
        """Triton's spelling of kernel[grid](*args, **kwargs), which autotuners and
        heuristics call; `warmup=True` compiles what the launch would (through the disk
        cache) without launching, and returns it (a `CompiledKernel`)."""
        for hook in self.pre_run_hooks:
            hook(*args, **kwargs)
        if warmup:
            from tilecc.runtime.compiled import warm_up

            try:
                return warm_up(self, args, kwargs)
            except CompilationError as e:
                raise e.with_traceback(None) from python_cause(e)
        return _launch_run(self, grid, None, *args, _interpret=interpreting(), **kwargs)

    def _compiled_kernel(self, artifact, options: dict[str, Any], device: int | None,
                         constexprs: dict[str, Any], loaded=None):
        """The `CompiledKernel` of a build of this kernel: what a launch returns (the
        launch package makes one per loaded kernel through this)."""
        from tilecc.runtime.compiled import CompiledKernel

        return CompiledKernel(self, artifact, options, device, constexprs, loaded=loaded)

    def bind(self, args: tuple, kwargs: dict) -> tuple[dict[str, Any], dict[str, Any]]:
        """Match launch arguments to parameters: (values by name, launch options)."""
        options = {k: kwargs.pop(k) for k in (*LAUNCH_OPTIONS, *HIP_HINTS) if k in kwargs}
        params = self.params
        name = self.fn.__name__
        if "extern_libs" in kwargs and not any(p.name == "extern_libs" for p in params):
            _check_extern_libs(name, kwargs.pop("extern_libs"))
        if len(args) > len(params):
            raise LaunchError(f"{name}[grid](...) takes {len(params)} arguments but "
                              f"{len(args)} were given ({self._takes()})")
        values = dict(zip((p.name for p in params), args))
        for k, v in options.items():  # `num_warps: tl.constexpr` receives the launch's
            if k not in values and any(p.name == k for p in params):  # too, as in Triton
                values[k] = v
        for k, v in kwargs.items():
            if k not in {p.name for p in params}:
                if k in TRITON_ONLY_OPTIONS:
                    raise LaunchError(f"{name}[grid](...): the Triton option `{k}` is not "
                                      "supported by tilecc (it takes "
                                      f"{', '.join(LAUNCH_OPTIONS)})")
                close = difflib.get_close_matches(k, [*self._param_names, *LAUNCH_OPTIONS],
                                                  n=1)
                raise LaunchError(f"{name}[grid](...) got an unexpected keyword argument "
                                  f"`{k}`" + (f": did you mean `{close[0]}`?" if close else "")
                                  + f" ({self._takes()})")
            if k in values:
                raise LaunchError(f"{name}[grid](...) got multiple values for argument `{k}`")
            values[k] = v
        for p in params:
            if p.name not in values:
                if p.default is inspect.Parameter.empty:
                    raise LaunchError(f"{name}[grid](...) is missing argument `{p.name}` "
                                      f"({self._takes()})")
                values[p.name] = p.default
        return values, options

    def _takes(self) -> str:
        return (f"{self.fn.__name__} takes {', '.join(self._param_names) or 'no arguments'}, "
                f"and the launch options {', '.join(LAUNCH_OPTIONS)}")

    def specs_for(self, values: dict[str, Any]) -> tuple[list[ArgSpec], list[Any]]:
        """Specialize on launch arguments: ArgSpecs, and the run-time arguments to pass
        (`ArrayInfo` for arrays, scalars as given; not the constexprs nor the ints equal to
        1, which are compiled in)."""
        specs, passed = [], []
        for p in self.params:
            v = values[p.name]
            if p.is_constexpr:
                if SP.array_info(v) is not None:
                    raise LaunchError(f"argument `{p.name}` is a tl.constexpr and takes a "
                                      "compile-time value, not an array")
                specs.append(ArgSpec(p.name, constexpr=v.value if hasattr(v, "value") and
                                     type(v).__name__ == "constexpr" else v, is_constexpr=True))
                continue
            if v is None:  # as Triton: None specializes like a constexpr (`if p is None`)
                specs.append(ArgSpec(p.name, constexpr=None, is_constexpr=True))
                continue
            try:
                arr = SP.array_info(v)
            except (KeyError, TypeError) as e:
                dtype = getattr(v, "dtype", "?")
                raise LaunchError(f"argument `{p.name}` has dtype {dtype}, which kernels "
                                  "cannot take (supported: bool, (u)int8-64, float16, "
                                  "bfloat16, float32, float64, and the float8 types e4m3fn, "
                                  "e5m2, e4m3fnuz, e5m2fnuz)") from None
            if arr is not None:
                specs.append(ArgSpec(p.name, type=D.pointer_type(arr.dtype),
                                     divisible_by_16=arr.ptr % 16 == 0))
                passed.append(arr)
                continue
            if SP.is_host_descriptor(v):
                parts, given = SP.descriptor_argument_specs(
                    p.name, v, {q.name for q in self.params})
                specs.extend(parts)
                passed.extend(given)
                continue
            t = SP.scalar_type(v)
            if t is None:
                raise LaunchError(_not_an_argument(p.name, v))
            if t.is_int() and not t.is_bool():
                iv = int(v)
                if iv == 1:
                    specs.append(ArgSpec(p.name, type=t, equals_one=True))
                    continue
                specs.append(ArgSpec(p.name, type=t, divisible_by_16=iv % 16 == 0,
                                     divisor=8 if iv % 16 and iv % 8 == 0 else 1))
            else:
                specs.append(ArgSpec(p.name, type=t))
            passed.append(v)  # as given: the launcher packs it by its type (no NumPy here)
        return specs, passed


ACCEPTED_ARGUMENTS = ("arrays (NumPy arrays and CPU torch tensors on the interpreter; CuPy "
                      "arrays, torch CUDA tensors and objects with __cuda_array_interface__ or "
                      "DLPack on the GPU) and int, float or bool scalars")


def _not_an_argument(name: str, value: Any) -> str:
    """What to say of a launch argument that is neither an array nor a scalar."""
    kind = type(value).__name__
    if isinstance(value, list):
        return (f"argument `{name}` is a Python list; kernels take {ACCEPTED_ARGUMENTS}: "
                "convert it with np.asarray(...) for the interpreter, or cupy.asarray(...) / "
                "torch.tensor(..., device='cuda') for the GPU")
    return f"argument `{name}` has type {kind}; kernels take {ACCEPTED_ARGUMENTS}"


class _Interpret:
    def __init__(self, jit_fn: JITFunction):
        self.jit_fn = jit_fn

    def __getitem__(self, grid) -> Callable:
        from tilecc.interpreter import run_interpreted

        def run(*args, **kwargs):
            try:
                return run_interpreted(self.jit_fn, grid, args, kwargs)
            except (CompilationError, InterpreterError, LaunchError) as e:  # the user's line
                raise e.with_traceback(None) from python_cause(e)
        return run


def _check_arch(target: Target | str, arch: str | None) -> None:
    """The architecture is one of the target's that the compiler knows (the command line's
    check), before anything is compiled."""
    if arch is None:
        return
    problem = arch_problem(get_target(target).name, arch, "arch", 'target="{}"')
    if problem:
        raise ValueError(problem)


def jit(fn: Callable | None = None, *, version=None, repr: Callable | None = None,
        launch_metadata: Callable | None = None, do_not_specialize=None,
        do_not_specialize_on_alignment=None, debug: bool | None = None,
        noinline: bool | None = None):
    """Decorate a kernel (or a helper that kernels call): `@jit`, `@jit(debug=True)`, and
    Triton's other options (kept on the kernel; see `JITFunction`)."""
    def decorator(f: Callable) -> JITFunction:
        return JITFunction(f, version=version, do_not_specialize=do_not_specialize,
                           do_not_specialize_on_alignment=do_not_specialize_on_alignment,
                           debug=debug, noinline=noinline, repr=repr,
                           launch_metadata=launch_metadata)
    return decorator if fn is None else decorator(fn)


def _params_from_annotations(fn: Callable) -> list[ParamDecl] | None:
    """The parameters as `frontend.declared_params` reads them, from the evaluated
    annotations (microseconds, where the libcst parse costs milliseconds).  None when an
    annotation is a string that does not resolve or anything else is unusual: the frontend
    then decides (and reports errors)."""
    from tilecc.language.core import constexpr

    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    out = []
    for p in sig.parameters.values():
        if p.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD:
            return None
        ann = p.annotation
        if isinstance(ann, str):
            ann = _resolve_dotted(fn, ann)
            if ann is None:
                return None
        is_ce = ann is constexpr or (isinstance(ann, type) and ann.__name__ == "constexpr" and
                                     ann.__module__.startswith("triton.language"))
        out.append(ParamDecl(p.name, is_ce, p.default))
    return out


def _resolve_dotted(fn: Callable, text: str) -> Any:
    parts = text.strip().split(".")
    if not all(x.isidentifier() for x in parts):
        return None
    from tilecc.transpiler.frontend import scope_of

    scope = scope_of(fn)
    if parts[0] not in scope:
        return None
    obj = scope[parts[0]]
    for attr in parts[1:]:
        obj = getattr(obj, attr, None)
        if obj is None:
            return None
    return obj
