"""Assemble the exported header: `render_header(groups, grids, target, name, command)`.

Consumes the kernel groups (`variants.py`) and their grids (`grid.py`); produces the text of
one self-contained header — the device library `tilecc.h` inlined once behind a guard
shared by every exported header, each specialization's kernel in its own namespace, and per
group a selection function, a typed launcher and an `extern "C"` wrapper.  The spellings are
in `templates/export/header.j2`; the runtime API names in `runtime_api.py`.
"""

from __future__ import annotations

import hashlib
import os
import re

from tilecc.export.grid import Grid, c_constant_decl
from tilecc.export.runtime_api import APIS
from tilecc.export.variants import KernelGroup
from tilecc.runtime import template_cache
from tilecc.transpiler.render import INCLUDE_DIR
from tilecc.transpiler.target import get_target


def device_library() -> tuple[str, str]:
    """tilecc.h without its `#pragma once` (the header guards it by content), and a hash of
    it: two exported headers in one file must carry the same library."""
    with open(os.path.join(INCLUDE_DIR, "tilecc.h")) as f:
        text = f.read()
    digest = "0x" + hashlib.sha256(text.encode()).hexdigest()[:8]
    text = re.sub(r"^#pragma once\n", "", text, flags=re.M).strip("\n")
    return text, digest


def _group_context(g: KernelGroup, grid: Grid, header: str) -> dict:
    c_name = re.sub(r"__+", "_", "_".join(x for x in (header, g.symbol, g.type_suffix) if x))
    guarded = {p.cxx_name for v in g.variants for p in g.params
               if any(p.cxx_name in c for c in v.guards(g.params))}
    variants = []
    for v in g.variants:
        variants.append({
            "index": v.index, "signature": v.signature, "when": v.describe_guards(),
            "guards": v.guards(g.params), "namespace": v.namespace,
            "device_code": v.device_code.strip("\n"), "threads": v.threads,
            "shared_bytes": v.shared_bytes,
            "constants": [c_constant_decl(n, v.constexprs[n]) for n in sorted(grid.constexprs)],
            "kernel_args": [p.cxx_name for p in g.params if p.name in v.kernel_ctypes],
        })
    c_to_cxx = []
    for p in g.params:
        if p.c_abi_type != p.ctype:  # 16-bit floats: uint16_t bits in C, tc::half in C++
            c_to_cxx.append(f"reinterpret_cast<{p.ctype}>({p.cxx_name})")
        else:
            c_to_cxx.append(p.cxx_name)
    threads = sorted({v.threads for v in g.variants})
    extra = [f"int {a}" for a in grid.args]  # grid-only arguments, after the kernel's
    return {
        "kernel": g.kernel, "symbol": g.symbol, "source": g.source, "variants": variants,
        "has_fallback": g.has_fallback, "grid": grid.exprs, "grid_how": grid.how,
        "threads": " or ".join(map(str, threads)),
        "select_params": ", ".join(f"{p.ctype} {p.cxx_name}" for p in g.params),
        "cxx_params": ", ".join([f"{p.ctype} {p.cxx_name}" for p in g.params] + extra),
        "select_args": ", ".join(p.cxx_name for p in g.params),
        "c_params": ", ".join([f"{p.c_abi_type} {p.cxx_name}" for p in g.params] + extra),
        "c_to_cxx_args": ", ".join(c_to_cxx + list(grid.args)), "c_name": c_name,
        "unused_in_select": [p.cxx_name for p in g.params if p.cxx_name not in guarded],
    }


def render_header(groups: list[KernelGroup], grids: list[Grid], target: str, name: str,
                  command: str) -> str:
    from tilecc.version import __version__

    api = APIS[target]
    library, digest = device_library()
    macros = " || ".join(f"defined({m})" for m in api.compiler_macros)
    return template_cache.install().get_template("export/header.j2").render(
        file=name + api.header_suffix, version=__version__, command=command,
        target=get_target(target).describe(), api=api, name=name, guard=name.upper(),
        compiled_by_device_compiler=macros, library=library, library_hash=digest,
        groups=[_group_context(g, grid, name) for g, grid in zip(groups, grids)])
