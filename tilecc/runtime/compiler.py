"""The compile entry: (kernel, specialization, options, target) -> Artifact.

Every way tilecc turns a kernel into code goes through here: `kernel.source()` and
`kernel.compile()`, a launch's first call (`runtime.launch`), the autotuner's candidates
(which launch, or warm up: `runtime.compiled.warm_up`), `tilecc emit`/`compile` and `tilecc export`.

    options = resolve_options(kernel_fn, num_warps=8)         # checked, defaults filled in
    art = transpile(kernel_fn, specs, "cuda", options)      # IR + source, no binary
    art = compile(kernel_fn, specs, "cuda", options)        # + cubin / code object, cached

`compile` answers from this process's memory, else from the disk cache (`runtime.cache`,
keyed on the kernel's fingerprint, the specialization, the target, the architecture and
the options the table marks `in_key`), else transpiles, runs NVRTC or hiprtc and
publishes the result there.  `kernel_fn` is any `KernelFunction` with the runtime's
`fingerprint` (a `JITFunction`); this module does not import `runtime.jit`.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from tilecc.errors import CompilationError, Loc, OutOfResources
from tilecc.language import dtypes as D
from tilecc.runtime.options import (HIP_HINTS, OPTIONS, CompileOptions, compile_key_options,
                                    default_of, legal_maxnreg)
from tilecc.transpiler.specs import ArgSpec, TensorMap
from tilecc.transpiler.target import CompileTarget, Target, resolve_target

# The transpiler (frontend: libcst; render: Jinja) is imported where it is used: a process
# whose kernels are all in the disk cache never loads it.
if TYPE_CHECKING:
    from tilecc.language.core import KernelFunction
    from tilecc.runtime.binary import Binary
    from tilecc.transpiler.ir import Kernel
    from tilecc.transpiler.render import Rendered


@dataclass(frozen=True)
class Artifact:
    """One specialization of a kernel, transpiled (and compiled, where `binary` is set)."""

    symbol: str  # the kernel's name in the binary (the Python name where C++ takes it)
    source: str  # the generated CUDA / HIP
    specs: tuple[ArgSpec, ...]
    target: str
    arch: str
    options: CompileOptions
    binary: Binary | None = None  # None: transpiled only
    kernel: Kernel | None = None  # the IR after the passes; None when the disk cache answered
    # the source's products (shared memory, programs per SM, C names); None as `kernel`
    products: Rendered | None = None
    conversions: list[str] = field(default_factory=list)  # layout conversions, described

    @property
    def metadata(self) -> dict[str, Any]:
        """What the disk cache files with the binary, and what `tilecc cache list` shows."""
        return {"name": self.symbol, "target": self.target,
                "arch": self.binary.arch if self.binary else self.arch,  # sm_90a for wgmma
                "num_warps": self.options.num_warps,
                "shared_bytes": self.binary.shared_bytes if self.binary else 0,
                "threads": self.binary.threads if self.binary else 0,
                "tensor_maps": [asdict(m) for m in self.binary.tensor_maps] if self.binary
                else [],
                "log": self.binary.log if self.binary else "",
                "specialization": describe_specs(self.specs)}


# --- options ------------------------------------------------------------------------------------

def resolve_options(kernel_fn: KernelFunction, *, num_warps: int | None = None,
                    num_stages: int | None = None, debug: bool | None = None,
                    arch: str | None = None, line_directives: bool = False,
                    maxnreg: int | None = None, enable_fp_fusion: bool | None = None,
                    num_ctas: int | None = None, enable_reflect_ftz: bool | None = None,
                    made_descriptor_tma: bool = True, tma_stores: bool = True,
                    prologue_reads: bool = True, deferred_products: bool = True,
                    launch_cooperative_grid: bool | None = None,
                    **hip_hints) -> CompileOptions:
    """The options of one compile, checked against the table (`runtime/options.py`) and
    with defaults filled in.  `debug` None: the kernel's `@jit(debug=...)`, else
    TILECC_DEBUG=1.  `enable_fp_fusion` None: TILECC_DEFAULT_FP_FUSION (and, under the
    compatibility mode, TRITON_DEFAULT_FP_FUSION), else True.  `arch` None stays None: the target's default, or the device's.
    The launch-only options (a cooperative launch, AMD's hints) are checked, and change
    nothing compiled."""
    OPTIONS["num_ctas"].check(num_ctas)  # accepted where it is 1, which changes nothing
    OPTIONS["enable_reflect_ftz"].check(enable_reflect_ftz)  # accepted: changes nothing
    OPTIONS["launch_cooperative_grid"].check(launch_cooperative_grid)
    for name, value in hip_hints.items():
        if name not in HIP_HINTS:
            raise TypeError(f"resolve_options() got an unexpected keyword argument {name!r}")
        OPTIONS[name].check(value)
    if debug is None:
        debug = kernel_fn.debug
    if debug is None:
        debug = os.environ.get("TILECC_DEBUG", "0") == "1"
    return CompileOptions(
        num_warps=OPTIONS["num_warps"].check(OPTIONS["num_warps"].default
                                             if num_warps is None else num_warps),
        num_stages=OPTIONS["num_stages"].check(num_stages), debug=bool(debug), arch=arch,
        line_directives=bool(line_directives), maxnreg=OPTIONS["maxnreg"].check(maxnreg),
        enable_fp_fusion=OPTIONS["enable_fp_fusion"].check(
            default_of("enable_fp_fusion") if enable_fp_fusion is None else enable_fp_fusion),
        made_descriptor_tma=made_descriptor_tma, tma_stores=tma_stores,
        prologue_reads=prologue_reads, deferred_products=deferred_products)


# --- transpiling ----------------------------------------------------------------------------------

# `lower`, `transpile` and `compile` take the target as a name, a row or a CompileTarget;
# each resolves it once with the options' architecture (`resolve_target`) and passes the
# CompileTarget down: the stages below neither resolve nor parse it again.

def lower(kernel_fn: KernelFunction, specs: list[ArgSpec],
          target: CompileTarget | Target | str, options: CompileOptions):
    """Frontend and passes: (the tile IR that is rendered and interpreted, the layout
    conversions).  `options.arch` (default: the target's) picks instructions: Hopper's
    wgmma needs sm_90."""
    return _lower(kernel_fn, specs, resolve_target(target, options.arch), options)


def _lower(kernel_fn: KernelFunction, specs: list[ArgSpec], target: CompileTarget,
           options: CompileOptions):
    from tilecc.transpiler import frontend
    from tilecc.transpiler.passes import run_passes

    traced = replace(options, maxnreg=legal_maxnreg(options.maxnreg))
    kernel = frontend.parse(kernel_fn.fn, specs, traced, target)
    return kernel, run_passes(kernel, target, made_descriptor_tma=options.made_descriptor_tma,
                              tma_stores=options.tma_stores,
                              prologue_reads=options.prologue_reads,
                              deferred_products=options.deferred_products)


def transpile(kernel_fn: KernelFunction, specs: list[ArgSpec],
              target: CompileTarget | Target | str, options: CompileOptions, *,
              occupancy: bool = True) -> Artifact:
    """The IR and the source of one specialization, no compiler run.  `occupancy`: ask
    ptxas for the programs per SM the kernel wants (`compile` renders again without it
    when that makes ptxas spill registers)."""
    return _transpile(kernel_fn, specs, resolve_target(target, options.arch), options,
                      occupancy)


def _transpile(kernel_fn: KernelFunction, specs: list[ArgSpec], target: CompileTarget,
               options: CompileOptions, occupancy: bool = True) -> Artifact:
    from tilecc.runtime import template_cache
    from tilecc.transpiler import builtins_vendor, fp8
    from tilecc.transpiler.passes.layouts import check_registers
    from tilecc.transpiler.passes.pipeline import reads_ahead
    from tilecc.transpiler.passes.settle import tma_store_tile
    from tilecc.transpiler.render import render

    kernel, conversions = _lower(kernel_fn, specs, target, options)
    fp8.check_supported(kernel, target.fp8_formats, target.arch)
    builtins_vendor.check_counters(kernel, target.name)
    check_registers(kernel)  # before rendering: such blocks take ptxas minutes
    template_cache.install()
    rendered = render(kernel, target, conversions, specialization=describe_specs(specs),
                      line_directives=options.line_directives, occupancy=occupancy)
    if options.tma_stores and tma_store_tile(kernel) is not None and \
            rendered.static_shared_bytes + rendered.shared_bytes > target.shared_memory_limit:
        # the TMA stores' tile is what does not fit: the threads store those blocks
        return _transpile(kernel_fn, specs, target, replace(options, tma_stores=False),
                          occupancy)
    if options.prologue_reads and reads_ahead(kernel) and \
            rendered.static_shared_bytes + rendered.shared_bytes > target.shared_memory_limit:
        # the stages of the loads read ahead are what does not fit: loaded in the loop
        return _transpile(kernel_fn, specs, target, replace(options, prologue_reads=False),
                          occupancy)
    check_shared_memory(kernel, rendered, target)
    return Artifact(kernel.symbol, rendered.source, tuple(specs), target.name, target.arch,
                    options, kernel=kernel, products=rendered, conversions=conversions)


# --- compiling, through the caches ----------------------------------------------------------------

_compiled: dict[str, Artifact] = {}  # this process's compiled artifacts, by key digest


def compile(kernel_fn: KernelFunction, specs: list[ArgSpec] | tuple[ArgSpec, ...],
            target: CompileTarget | Target | str, options: CompileOptions) -> Artifact:
    """One specialization compiled to a cubin (CUDA) or code object (HIP): from this
    process's memory, else from the disk cache, else transpiled, compiled and published
    there.  The runtime always compiles with #line directives (and -lineinfo on CUDA), so
    compiler errors and profilers point at the user's lines."""
    from tilecc.runtime import cache
    from tilecc.runtime.binary import Binary

    target = resolve_target(target, options.arch)
    options = replace(options, arch=target.arch, line_directives=True)
    key_options = compile_key_options(options.num_warps, options.num_stages, options.debug,
                                      target, _native_flags(options, target),
                                      options.made_descriptor_tma)
    key = cache.kernel_key(kernel_fn.fingerprint, specs, target.name, options.arch,
                           key_options)
    hit = _compiled.get(key.digest)  # verified when it was read from disk: not again
    if hit is not None:
        return hit
    dump = cache.dump_dir()
    entry = cache.load("kernels", key) if dump is None else None  # dumps need a build
    if entry is not None and "binary" in entry.blobs:
        m = entry.meta
        binary = Binary(m["target"], m["arch"], entry.blobs["binary"], m["log"],
                        m.get("shared_bytes", 0),
                        tuple(_tensor_map(t) for t in m.get("tensor_maps", ())),
                        m.get("threads", 0))
        source = entry.blobs["source"].decode() if "source" in entry.blobs else ""
        hit = _compiled[key.digest] = Artifact(m["name"], source, tuple(specs), target.name,
                                               options.arch, options, binary)
        return hit
    art = transpile(kernel_fn, list(specs), target, options)  # (resolved: taken as it is)
    binary = compile_source(art, target)
    occupancy = True
    if art.products.min_programs and _spills(binary.log):
        # the programs per SM asked of ptxas cost register spills: not worth them
        occupancy = False
        art = transpile(kernel_fn, list(specs), target, options, occupancy=False)
        binary = compile_source(art, target)
    if _serialized(binary.log) and _defers_products(art.kernel):
        # ptxas serialized the warpgroup products, where one is kept in flight across
        # iterations (its C7515 in causal product chains): each waited for where it is
        # issued costs less than serial products
        options = replace(options, deferred_products=False)
        art = transpile(kernel_fn, list(specs), target, options, occupancy=occupancy)
        binary = compile_source(art, target)
    extra = art.products.threads != options.num_warps * target.warp_size
    art = replace(art, binary=binary._replace(shared_bytes=art.products.shared_bytes,
                                              tensor_maps=tuple(art.kernel.tensor_maps),
                                              threads=art.products.threads if extra else 0))
    fn = kernel_fn.fn
    cache.store("kernels", key, {**art.metadata, "kernel": f"{fn.__module__}.{fn.__qualname__}"},
                {"source": art.source.encode(), "binary": art.binary.data})
    if dump is not None:
        _dump(art, target, key.digest)
    hit = _compiled[key.digest] = art
    return hit


def _tensor_map(saved: dict) -> TensorMap:
    """A specs.TensorMap from the disk cache's metadata (JSON lists back to tuples)."""
    args = saved.get("args")
    split = saved.get("rows_split")
    return TensorMap(**{**saved, "box": tuple(saved["box"]),
                        "args": tuple(args) if args is not None else None,
                        "rows_split": tuple(map(tuple, split)) if split is not None else None,
                        "requires": tuple(map(tuple, saved.get("requires", ())))})


def check_shared_memory(kernel: Kernel, rendered: Rendered, target: CompileTarget) -> None:
    """Raise OutOfResources where a program of `kernel`, as `rendered`, needs more shared
    memory than one may have on the target's architecture: before the native compiler
    runs, instead of a ptxas error or a failed launch (a launch checks the device's own
    number again)."""
    limit, arch = target.shared_memory_limit, target.arch
    required = rendered.static_shared_bytes + rendered.shared_bytes
    if required <= limit:
        return
    uses = "".join(f"\n  {u}" for u in rendered.shared_uses)
    raise OutOfResources(required, limit, "shared memory", details=(
        f"{kernel.name} (num_warps={kernel.num_warps}, num_stages={kernel.num_stages}) needs "
        f"{required} bytes of shared memory per program; {arch} allows {limit}:{uses}"))


_LOG_LINE = re.compile(r"^(?P<file>[^\s(:]+\.py)(?:\((?P<l1>\d+)\)|:(?P<l2>\d+):(?:\d+:)?)\s*"
                       r"(?P<what>error|warning)?:?\s*(?P<msg>.*)$")


def compile_source(art: Artifact, target: CompileTarget) -> Binary:
    """NVRTC / hiprtc on an artifact's source (with #line directives); compile errors
    become CompilationErrors at the user's Python line."""
    from tilecc.runtime import native_compile as NC
    from tilecc.transpiler.render import INCLUDE_DIR

    # wgmma is an sm_90a feature: compiled for exactly this architecture
    arch = target.binary_arch(art.kernel.arch_specific)
    options = [f"-I{INCLUDE_DIR}", *_native_flags(art.options, target),
               *target.line_info_flags]
    try:
        return NC.compile_for(target.name, art.source, arch=arch, options=options,
                              filename=f"{art.symbol}{target.source_suffix}")
    except NC.CompilerUnavailable as e:
        raise CompilationError(e.hint) from None
    except NC.NativeCompileError as e:
        loc, message = None, ""
        log = e.log.splitlines()
        for i, line in enumerate(log):
            m = _LOG_LINE.match(line.strip())
            if m and (m.group("what") == "error" or "error" in line):
                quoted = log[i + 1] if i + 1 < len(log) else ""
                number = _statement_line(art.source, m.group("file"),
                                         int(m.group("l1") or m.group("l2")), quoted)
                loc = Loc(m.group("file"), number, 0, art.kernel.name)
                message = m.group("msg")
                break
        raise CompilationError(f"{target.name} compiler ({arch}) rejected the generated code: "
                               f"{message or 'see the log'}\n--- compiler log ---\n{e.log}",
                               loc, log=e.log) from None


def _statement_line(source: str, file: str, number: int, quoted: str) -> int:
    """The Python line of a compiler's error.  A `#line N` directive stands above the C++
    lines of statement N, and the compiler counts on from it (N + 1, N + 2, ...): the
    lines numbered `number` are found under each directive, the one the log quotes
    preferred, and their directive's N is the statement's line."""
    found: list[tuple[int, str]] = []
    directive = None  # (N, file, index of the line after it)
    for i, text in enumerate(source.splitlines()):
        m = _DIRECTIVE.match(text)
        if m:
            directive = (int(m.group(1)), m.group(2), i + 1)
        elif directive and directive[1] == file and directive[0] + i - directive[2] == number:
            found.append((directive[0], text))
    quoted = quoted.strip()
    for line, text in found:
        if quoted and text.strip() == quoted:
            return line
    return found[0][0] if found else number


_DIRECTIVE = re.compile(r'^#line (\d+) "(.*)"$')


def _native_flags(options: CompileOptions, target: CompileTarget) -> list[str]:
    try:
        return options.native_flags(target)
    except ValueError as e:
        raise CompilationError(str(e)) from None


def _spills(log: str) -> bool:
    return any(n != "0" for n in re.findall(r"(\d+) bytes spill stores", log))


def _serialized(log: str) -> bool:
    """ptxas's note that it serialized a kernel's warpgroup MMAs (C7515: registers of a
    product in flight defined by other instructions before its wait; C75xx other causes)."""
    return "wgmma.mma_async instructions are serialized" in log


def _defers_products(kernel) -> bool:
    return any(op.attrs["pipeline"].deferred for op in kernel.walk()
               if op.kind == "for" and op.attrs.get("pipeline") is not None)


def _dump(art: Artifact, target: CompileTarget, key: str) -> None:
    """TILECC_DUMP: the IR, the source, the binary, the log (and PTX) of a build."""
    from tilecc.runtime import cache
    from tilecc.transpiler.ir import format_kernel

    name = art.symbol  # an ASCII file name
    files: dict[str, Any] = {"ir.txt": format_kernel(art.kernel),
                             f"{name}{target.source_suffix}": art.source,
                             f"{name}{target.binary_suffix}": art.binary.data,
                             "compile.log": art.binary.log}
    if target.assembly_suffix:  # NVRTC's PTX
        try:
            files[f"{name}{target.assembly_suffix}"] = _ptx(art.source, art.arch, name,
                                                           art.options.native_flags(target))
        except Exception as e:  # the dump is for inspection; never fail a build over it
            files["ptx-error.txt"] = str(e)
    cache.dump(name, key, files)


def ptx_of(art: Artifact) -> str:
    """The PTX of a compiled CUDA artifact: its source through NVRTC again, to PTX."""
    return _ptx(art.source, art.binary.arch, art.symbol, art.options.native_flags("cuda"))


def _ptx(source: str, arch: str, name: str, flags: list[str] = ()) -> str:
    from cupy.cuda import nvrtc

    from tilecc.transpiler.render import INCLUDE_DIR

    prog = nvrtc.createProgram(source, f"{name}.cu", [], [])
    try:
        nvrtc.compileProgram(prog, [f"--gpu-architecture={arch}", "--std=c++17",
                                    f"-I{INCLUDE_DIR}", "-lineinfo", *flags])
        ptx = nvrtc.getPTX(prog)
        return (ptx.decode() if isinstance(ptx, bytes) else ptx).rstrip("\x00")
    finally:
        nvrtc.destroyProgram(prog)


def describe_specs(specs) -> list[str]:
    """The specialization in words, a line per parameter (the source's header comment)."""
    out = []
    for s in specs:
        if s.is_constexpr:
            value = s.constexpr  # a dtype as `tl.<name>`, whichever module its repr names
            shown = f"tl.{value.codegen_name()}" if isinstance(value, D.dtype) else repr(value)
            out.append(f"{s.name} = {shown} (constexpr)")
        elif s.equals_one:
            out.append(f"{s.name} = 1 (specialized: the argument was 1)")
        elif s.descriptor is not None:
            d = s.descriptor
            out.append(f"{d.param}: tensor descriptor of {s.type.element_ty.short}, blocks "
                       f"{list(d.block_shape)}" + (", NaN padding" if d.padding == "nan" else "")
                       + f"; passed as {s.name}: *{s.type.element_ty.short} and its shape and "
                       "strides")
        elif s.type.is_ptr():
            out.append(f"{s.name}: *{s.type.element_ty.short}" +
                       (" (16-byte aligned)" if s.divisible_by_16 else ""))
        else:
            out.append(f"{s.name}: {s.type.short}" + (" (multiple of 16)" if s.divisible_by_16
                                                      else " (multiple of 8)" if s.divisor == 8
                                                      else ""))
    return out
