"""Export kernels for C++ projects: one self-contained header per kernel set.

    from tilecc.export import export
    path = export([add_kernel], ["*fp32:16,*fp32:16,*fp32:16,i32,1024",
                                 "*fp32,*fp32,*fp32,i32,1024"], target="cuda", out_dir="gen")

or `tilecc export FILE.py:KERNEL ... --signature SIG ... -o DIR`.  The header (`NAME.cuh`
for CUDA, `NAME.hip.hpp` for HIP) needs only the CUDA or HIP runtime headers; see
docs/export.md for what is in it and the ABI of its launchers.

Modules: `variants` (one kernel per signature, grouped per launcher), `grid` (the launch
grid: given or derived), `runtime_api` (CUDA / HIP host spellings), `header` (assembly).
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict
from typing import Mapping, Sequence

from tilecc.errors import CompilationError
from tilecc.export.grid import derive_grid, given_grid, split_grid
from tilecc.export.header import render_header
from tilecc.export.runtime_api import APIS
from tilecc.export.variants import ExportError, JITFunction, build_variant, group_variants
from tilecc.runtime.options import DEFAULT_NUM_WARPS, OPTIONS, CompileOptions

__all__ = ["ExportError", "export", "export_header", "header_filename"]


def header_filename(name: str, target: str) -> str:
    return name + APIS[target].header_suffix


def _per_kernel(value, kernels: Sequence[JITFunction], what: str) -> dict[str, object]:
    """`value` for every kernel, or a {kernel name: value} mapping."""
    names = [k.fn.__name__ for k in kernels]
    if isinstance(value, Mapping):
        unknown = set(value) - set(names)
        if unknown:
            raise ExportError(f"{what} for unknown kernel(s) {', '.join(sorted(unknown))}; "
                              f"exporting {', '.join(names)}")
        return dict(value)
    return {n: value for n in names}


def export_header(kernels: JITFunction | Sequence[JITFunction],
                  signatures: str | Sequence[str] | Mapping[str, Sequence[str]], *,
                  target: str = "cuda", num_warps: int | None = None,
                  grid: str | Mapping[str, str] | None = None,
                  grid_args: Sequence[str] | Mapping[str, Sequence[str]] | None = None,
                  name: str | None = None, command: str | None = None,
                  debug: bool | None = None, arch: str | None = None,
                  num_stages: int | None = None, maxnreg: int | None = None,
                  enable_fp_fusion: bool | None = None,
                  options: CompileOptions | None = None) -> tuple[str, str]:
    """The header's file name and text.  `signatures`: AOT signatures applied to every
    kernel, or {kernel name: [signatures]}; `grid` likewise (None: derive it);
    `grid_args` likewise: extra `int` launcher arguments that only `grid` reads.  The
    compile options are those of `kernel.source()`, as keywords or as one `options`
    (`kernel.options(...)`, the keywords given in its place): `num_warps`, `debug`
    (default off), `arch` (default sm_80 on CUDA, whose code runs on every GPU from Ampere
    on; gfx90a on HIP), `num_stages`, `maxnreg` and `enable_fp_fusion`, written into the
    kernels' source."""
    if isinstance(kernels, JITFunction):
        kernels = [kernels]
    kernels = list(kernels)
    if not kernels:
        raise ExportError("nothing to export: give at least one kernel")
    if target not in APIS:
        raise ExportError(f"unknown target {target!r}; choose one of {sorted(APIS)}")
    if isinstance(signatures, str):
        signatures = [signatures]
    sigs = _per_kernel(signatures, kernels, "signatures")
    grids = _per_kernel(grid, kernels, "--grid")
    if isinstance(grid_args, str):
        grid_args = [grid_args]
    extra = _per_kernel(grid_args, kernels, "--grid-arg")
    if len({k.fn.__name__ for k in kernels}) != len(kernels):
        raise ExportError("the same kernel name appears twice")
    name = name or os.path.splitext(os.path.basename(kernels[0].fn.__code__.co_filename))[0]
    if not re.fullmatch(r"[A-Za-z_]\w*", name):
        raise ExportError(f"header name {name!r} must be a C identifier (use --name)")
    chosen = _chosen_options(options, num_warps=num_warps, debug=debug, arch=arch,
                             num_stages=num_stages, maxnreg=maxnreg,
                             enable_fp_fusion=enable_fp_fusion)
    num_warps, debug = chosen.pop("num_warps", DEFAULT_NUM_WARPS), chosen.pop("debug", False)
    given = {"arch": None, "num_stages": None, "maxnreg": None, "enable_fp_fusion": True,
             **chosen}
    compile_options = {k: v for k, v in given.items() if v is not None}
    groups, group_grids = [], []
    for k in kernels:
        kname = k.fn.__name__
        if not sigs.get(kname):
            raise ExportError(f"{kname}: no --signature for it")
        if grids.get(kname):
            split_grid(grids[kname])  # its syntax, before the kernel is built
        try:
            variants = [build_variant(k, s, target, num_warps, debug, **compile_options)
                        for s in sigs[kname]]
        except CompilationError as e:
            raise e.with_traceback(None) from None
        for g in group_variants(k, variants):
            groups.append(g)
            if extra.get(kname) and not grids.get(kname):
                raise ExportError(f"{kname}: --grid-arg {', '.join(extra[kname])} needs a "
                                  "--grid that reads it")
            group_grids.append(given_grid(grids[kname], g, extra.get(kname) or ())
                               if grids.get(kname) else derive_grid(g))
    if command is None:
        command = _command(kernels, sigs, target, num_warps, grids, extra, name,
                           dict(given, debug=debug))
    return header_filename(name, target), render_header(groups, group_grids, target, name,
                                                         command)


# the compile options an exported header is built with (`export_header`'s keywords)
_EXPORTED = ("num_warps", "debug", "arch", "num_stages", "maxnreg", "enable_fp_fusion")


def _chosen_options(options: CompileOptions | None, **given) -> dict[str, object]:
    """The compile options chosen for an export: those of `options` that differ from the
    table's defaults (`runtime/options.py`), then the keywords given (not None) in their
    place.  An option left at its default is not written into the header's command."""
    chosen: dict[str, object] = {}
    if options is not None:
        if not isinstance(options, CompileOptions):
            raise ExportError(f"options must be a CompileOptions (`kernel.options(...)`), got "
                              f"{type(options).__name__}")
        if options.line_directives:
            raise ExportError("line_directives=True: an exported header carries no #line "
                              "directives (they would name the .py file's path); leave it out")
        chosen = {k: v for k, v in asdict(options).items()
                  if k in _EXPORTED and v != OPTIONS[k].default}
    chosen.update({k: v for k, v in given.items() if v is not None})
    return chosen


def export(kernels, signatures, *, out_dir: str, **keywords) -> str:
    """Write the header into `out_dir` (only if its text changed); return its path.
    `keywords`: `export_header`'s (the compile options, or `options=`, among them)."""
    filename, text = export_header(kernels, signatures, **keywords)
    path = os.path.join(out_dir, filename)
    tmp = path + ".tmp"
    try:
        os.makedirs(out_dir, exist_ok=True)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                if f.read() == text:
                    return path
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise ExportError(f"cannot write {e.filename or path}: {e.strerror or e}; give a "
                          "writable output folder") from None
    return path


def _command(kernels, sigs, target, num_warps, grids, extra, name, options: dict) -> str:
    """The `tilecc export` command that makes this header (file names without directories,
    so the text does not depend on where it was built)."""
    parts = ["tilecc export"]
    parts += [f"{os.path.basename(k.fn.__code__.co_filename)}:{k.fn.__name__}" for k in kernels]
    parts += ["--target", target]
    single = len(kernels) == 1
    for k in kernels:
        for s in sigs[k.fn.__name__]:
            sig = ",".join(e.strip() for e in s.split(","))
            parts += ["--signature", f"'{sig}'" if single else f"'{k.fn.__name__}={sig}'"]
        g = grids.get(k.fn.__name__)
        if g:
            parts += ["--grid", f"'{g}'" if single else f"'{k.fn.__name__}={g}'"]
        for a in extra.get(k.fn.__name__) or ():
            parts += ["--grid-arg", a if single else f"{k.fn.__name__}={a}"]
    if num_warps != DEFAULT_NUM_WARPS:
        parts += ["--num-warps", str(num_warps)]
    for flag, value in (("--arch", options["arch"]), ("--num-stages", options["num_stages"]),
                        ("--maxnreg", options["maxnreg"])):
        if value is not None:
            parts += [flag, str(value)]
    parts += ["--debug"] if options["debug"] else []
    parts += ["--no-fp-fusion"] if options["enable_fp_fusion"] is False else []
    parts += ["--name", name, "-o", "DIR"]
    return " ".join(parts)

