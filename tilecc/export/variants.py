"""Specializations to export: one `Variant` per (kernel, signature), grouped into the
overload sets that one typed launcher serves.

Consumes a `JITFunction` and AOT signature strings; produces, per variant, the kernel's
device code ready to sit in a namespace of a larger header (the rendered translation unit
with its `#include "tilecc.h"` removed and its `extern "C"` dropped, so that several
specializations of one kernel can share a file), the C types of the parameters it takes,
and the run-time conditions under which it may be launched (`guards`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from tilecc.runtime import compiler
from tilecc.runtime.compiler import Artifact
from tilecc.runtime.jit import JITFunction
from tilecc.transpiler.frontend import ArgSpec
from tilecc.transpiler.names import c_identifier, unique
from tilecc.transpiler.target import Target, c_type, get_target, resolve_target


class ExportError(ValueError):
    """The export request cannot be satisfied (bad signature, grid, names, ...)."""


# names the generated launcher uses for itself in the scopes of its parameters: a Python
# parameter spelled like one of these (or like anything names.is_reserved) takes a `_`
LAUNCHER_NAMES = frozenset({
    "stream", "grid", "cdiv", "min", "max", "aligned16", "detail", "tc", "dim3", "k",
    "launch", "same", "kThreads", "kDynamicSharedBytes", "tilecc",
})

# the kernel's line: `__launch_bounds__(threads[, programs])`, or `__maxnreg__(n)` where the
# user limits its registers (the threads are then num_warps x the warp size)
_KERNEL_SIGNATURE = re.compile(
    r'extern "C" __global__ void (?:__launch_bounds__\((?P<threads>\d+)(?:, \d+)?\)|'
    r'__maxnreg__\(\d+\)) (?P<name>\w+)\((?P<params>[^)]*)\)')


@dataclass
class LauncherParam:
    """One parameter of the typed launcher: every non-constexpr Python parameter."""

    name: str  # Python name
    cxx_name: str  # its spelling in C++ (names.c_identifier, distinct in the launcher)
    spec: ArgSpec  # of the first variant; types agree across a group
    ctype: str = ""  # C++ type, constness joined over the group's variants
    c_abi_type: str = ""  # type in the extern "C" wrapper (16-bit floats as uint16_t bits)

    @property
    def is_pointer(self) -> bool:
        return self.spec.type.is_ptr()


@dataclass
class Variant:
    """One exported specialization of one kernel."""

    kernel: str  # the Python name
    symbol: str  # its C++ spelling (names.kernel_symbol): the launcher's name
    index: int  # position in the dispatch order of its group
    signature: str  # as given on the command line, normalized
    specs: list[ArgSpec]
    built: Artifact
    device_code: str  # namespace-ready kernel source
    threads: int
    kernel_ctypes: dict[str, str]  # Python name -> C type, for parameters the kernel takes
    constexprs: dict[str, Any]  # Python name -> value
    shared_bytes: int = 0
    namespace: str = ""

    def guards(self, params: list[LauncherParam]) -> list[str]:
        """C++ conditions (over launcher argument names) that must hold to launch it."""
        out = []
        for p in params:
            s = next(x for x in self.specs if x.name == p.name)
            if s.equals_one:
                out.append(f"{p.cxx_name} == 1")
            elif s.divisible_by_16:
                out.append(f"aligned16({p.cxx_name})" if s.type.is_ptr()
                           else f"{p.cxx_name} % 16 == 0")
            elif s.divisor > 1:
                out.append(f"{p.cxx_name} % {s.divisor} == 0")
        return out

    def describe_guards(self) -> str:
        parts = []
        for s in self.specs:
            if s.is_constexpr:
                continue
            if s.equals_one:
                parts.append(f"{s.name} == 1")
            elif s.divisible_by_16:
                parts.append(f"{s.name} 16-byte aligned" if s.type.is_ptr()
                             else f"{s.name} % 16 == 0")
            elif s.divisor > 1:
                parts.append(f"{s.name} % {s.divisor} == 0")
        return "when " + " and ".join(parts) if parts else "for any arguments"


@dataclass
class KernelGroup:
    """The variants one typed launcher dispatches between (same parameter types)."""

    kernel: str  # the Python name
    symbol: str  # its C++ spelling: the launcher is tilecc::<header>::<symbol>
    jit_fn: JITFunction
    source: str  # "file.py:line"
    variants: list[Variant] = field(default_factory=list)
    params: list[LauncherParam] = field(default_factory=list)
    type_suffix: str = ""  # "fp32_fp32_fp32_i32", for distinguishing groups of one kernel

    @property
    def has_fallback(self) -> bool:
        return not self.variants[-1].guards(self.params)


def normalize_signature(signature: str) -> str:
    return ",".join(e.strip() for e in signature.split(",") if e.strip())


def cxx_name(name: str) -> str:
    """A constexpr's or parameter's spelling in the launcher (before `unique`)."""
    text = c_identifier(name)
    return text + "_" if text in LAUNCHER_NAMES else text


def namespace_ready(source: str, kernel: str, threads: int = 0) -> tuple[str, int, list[str]]:
    """The rendered translation unit without its `#include "tilecc.h"` (the exported header
    carries the device library once) and without `extern "C"` (specializations of one kernel
    share its name, each in its own namespace).  Also returns the threads per program and
    the kernel's C parameter types, in order (`threads`: where the kernel's line does not
    say them)."""
    include = '#include "tilecc.h"\n'
    m = _KERNEL_SIGNATURE.search(source)
    if include not in source or m is None or m.group("name") != kernel:
        raise ExportError(f"{kernel}: the rendered kernel does not have the shape tilecc "
                          "export expects (an `#include \"tilecc.h\"` line and one "
                          "`extern \"C\" __global__` kernel); tilecc's templates changed")
    types = []
    params = re.sub(r"/\*.*?\*/", "", m.group("params"))  # a renamed one's Python name
    for decl in (d.strip() for d in params.split(",") if d.strip()):
        types.append(re.sub(r"\s*\b\w+$", "", decl))
    code = source.replace(include, "", 1)
    code = code.replace('extern "C" __global__', "__global__", 1)
    return code, int(m.group("threads") or threads), types


def build_variant(jit_fn: JITFunction, signature: str, target: Target, num_warps: int,
                  debug: bool = False, **options) -> Variant:
    """One specialization, rendered with the compile options given (`options`: arch,
    num_stages, maxnreg, enable_fp_fusion; written into the source, which the user's
    compiler builds with flags tilecc does not choose)."""
    name = jit_fn.fn.__name__
    signature = normalize_signature(signature)
    try:
        specs = jit_fn._specs(signature, {})
        described = [s.descriptor.param for s in specs if s.descriptor is not None]
        if described:
            raise ValueError(f"`{described[0]}` is a tensor descriptor, which the C++ "
                             "launcher cannot take yet: give the kernel the pointer, shape "
                             "and strides and make the descriptor inside it "
                             "(tl.make_tensor_descriptor)")
        # The project's own compiler builds the header for the architectures it targets:
        # sm_80 code (mma.sync for tl.dot) runs on all of them from Ampere on, where
        # Hopper's wgmma would need an sm_90a-only build.
        options = dict(options)
        row = get_target(target)
        # The C++ launcher encodes no tensor maps: descriptors the kernel makes are read
        # by its bounds-checked loads and written by its threads on every architecture.
        compile_options = jit_fn.options(num_warps=num_warps, debug=debug, arch=options.pop(
            "arch", None) or row.export_arch, made_descriptor_tma=False, tma_stores=False,
            **options)
        compile_target = resolve_target(row, compile_options.arch)
        compile_options.native_flags(compile_target)  # refused on this target?
        built = compiler.transpile(jit_fn, specs, compile_target, compile_options)
    except ValueError as e:
        raise ExportError(f"{name}: {e}") from None
    code, threads, types = namespace_ready(
        built.source, built.kernel.symbol, built.products.threads)
    taken = [p.name for p in built.kernel.params if p.value is not None]
    if len(taken) != len(types):
        raise ExportError(f"{name}: the kernel takes {len(types)} parameters but its IR has "
                          f"{len(taken)}; tilecc's templates changed")
    return Variant(
        kernel=name, symbol=built.kernel.symbol, index=0, signature=signature, specs=specs,
        built=built,
        device_code=code, threads=threads, kernel_ctypes=dict(zip(taken, types)),
        constexprs={s.name: s.constexpr for s in specs if s.is_constexpr},
        # Dynamic shared memory the kernel asks for at launch (tl.dot's pipeline stages).
        shared_bytes=built.products.shared_bytes)


def specificity(v: Variant) -> int:
    return sum(1 for s in v.specs if not s.is_constexpr and
               (s.divisible_by_16 or s.equals_one or s.divisor > 1))


def group_variants(jit_fn: JITFunction, variants: list[Variant]) -> list[KernelGroup]:
    """Variants with the same parameter types share a launcher; within it they are tried
    most specialized first (stable for equally specialized ones)."""
    groups: dict[tuple, KernelGroup] = {}
    loc = variants[0].built.kernel.loc
    source = f"{os.path.basename(loc.file)}:{loc.line}"
    seen = set()
    for v in variants:
        key = tuple((s.name, str(s.type)) for s in v.specs if not s.is_constexpr)
        if v.signature in seen:
            raise ExportError(f"{v.kernel}: signature {v.signature!r} given twice")
        seen.add(v.signature)
        g = groups.setdefault(key, KernelGroup(v.kernel, v.symbol, jit_fn, source))
        g.variants.append(v)
    out = list(groups.values())
    for g in out:
        g.variants.sort(key=specificity, reverse=True)
        g.type_suffix = type_suffix(g.variants[0]) if len(out) > 1 else ""
        for i, v in enumerate(g.variants):
            v.index = i
            v.namespace = re.sub(r"__+", "_", "_".join(  # no `__`: reserved in C++
                x for x in (v.symbol, g.type_suffix, f"v{i}") if x))
        g.params = _launcher_params(g.variants)
    return out


def type_suffix(v: Variant) -> str:
    """`fp32_fp32_fp32_i32`: names one kernel's launcher for one set of parameter types."""
    return "_".join((s.type.element_ty.short if s.type.is_ptr() else s.type.short)
                    for s in v.specs if not s.is_constexpr)


def _launcher_params(variants: list[Variant]) -> list[LauncherParam]:
    first = variants[0]
    params = []
    # distinct from each other, from the constants the launcher declares beside them, and
    # from the launcher and selection functions they would hide
    taken = {cxx_name(n) for v in variants for n in v.constexprs} | \
        {first.symbol, f"{first.symbol}_select"}
    for s in first.specs:
        if s.is_constexpr:
            continue
        p = LauncherParam(s.name, unique(cxx_name(s.name), taken), s)
        if s.type.is_ptr():
            # const only where no specialization writes through the pointer
            const = all(v.kernel_ctypes.get(s.name, "const ").startswith("const ")
                        for v in variants)
            p.ctype = c_type(s.type, const=const)
            base = c_type(s.type.element_ty)
            c_base = "uint16_t" if base.startswith("tc::") else base
            p.c_abi_type = ("const " if const else "") + c_base + "*"
        else:
            p.ctype = p.c_abi_type = c_type(s.type)
        params.append(p)
    return params
