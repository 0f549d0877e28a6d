"""The launch grid of an exported kernel, as C++ expressions over the launcher's arguments.

Consumes the `--grid` text (Triton AOT style: up to three comma-separated C expressions
over the kernel's parameter names, constexprs included, e.g. `(n + 1023) / 1024,1,1`) or,
when none is given, the kernel's IR; produces three expressions for the launcher.

Without `--grid` the grid is derived only where the kernel's shape makes it certain: one
program per block of a one-dimensional kernel — no program_id axis but 0, one block size
(the length of its `tl.arange`s), one integer size argument, no loops (a loop may mean a
persistent or grid-stride kernel) — gives `cdiv(size, BLOCK)`; a kernel that never reads
program_id runs one program.  Anything else asks for `--grid`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tilecc.export import grid_expr
from tilecc.export.variants import (LAUNCHER_NAMES, ExportError, KernelGroup, Variant,
                                    cxx_name)
from tilecc.transpiler.names import is_reserved

HELPERS = set(grid_expr.HELPERS)
_EXAMPLE = "e.g. '(n + 1023) / 1024,1,1' or 'cdiv(n, BLOCK),1,1'"


@dataclass
class Grid:
    exprs: list[str]  # three C++ expressions, launcher argument and constexpr names
    how: str  # for the header comment: "given" or why it was derived
    constexprs: set[str]  # constexpr names the expressions read
    args: list[str] = field(default_factory=list)  # grid-only launcher arguments (int)


def split_grid(text: str) -> list[str]:
    """The three expressions of a `--grid` text, its syntax checked (`grid_expr.parse`);
    missing dimensions are 1."""
    try:
        grid_expr.parse(text)
    except grid_expr.GridError as e:
        raise ExportError(f"--grid {text!r}: {e.message} (column {e.column}); give one to "
                          f"three comma-separated C expressions, {_EXAMPLE}") from None
    parts, depth, cur = [], 0, ""
    for ch in text:  # top-level commas: those inside `cdiv(a, b)` stay
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
            continue
        depth += {"(": 1, ")": -1}.get(ch, 0)
        cur += ch
    parts.append(cur.strip())
    return parts + ["1"] * (3 - len(parts))


def given_grid(text: str, group: KernelGroup, grid_args=()) -> Grid:
    """`grid_args`: names of extra `int` launcher arguments (after the kernel's own) that
    only the grid reads -- the row count of a one-program-per-row kernel, say."""
    exprs = split_grid(text)
    runtime = {p.name: p.cxx_name for p in group.params}
    constexpr_names = set().union(*(v.constexprs for v in group.variants))
    grid_args = list(grid_args)
    for a in grid_args:
        taken = set(runtime.values()) | {cxx_name(n) for n in constexpr_names}
        if (not re.fullmatch(r"[A-Za-z]\w*", a, re.ASCII) or "__" in a or a in runtime
                or a in constexpr_names or a in taken or a in LAUNCHER_NAMES
                or is_reserved(a) or a in (group.symbol, f"{group.symbol}_select")
                or grid_args.count(a) > 1):
            raise ExportError(f"--grid-arg for {group.kernel}: `{a}` must be a new C "
                              "identifier (not a parameter, constexpr, keyword or repeat)")
    params = [p.name for p in group.jit_fn.params]

    def unknown(node) -> None:
        import difflib

        close = difflib.get_close_matches(node.text, params + grid_args + sorted(HELPERS), n=1)
        hint = f"; did you mean `{close[0]}`?" if close else ""
        raise ExportError(
            f"--grid for {group.kernel}: `{node.text}` is not a parameter of the kernel{hint} "
            f"(parameters: {', '.join(params)}; helpers: {', '.join(sorted(HELPERS))})")

    for v in group.variants:
        types = {p.name: "pointer" if p.is_pointer else
                 "float" if p.spec.type.is_floating() else "int" for p in group.params}
        types.update({a: "int" for a in grid_args})
        for name, value in v.constexprs.items():
            if _c_constant(value):
                types[name] = "float" if isinstance(value, float) else "int"
            else:
                types[name] = "int"  # reported below, with its value, if the grid reads it
        for e in exprs:
            try:
                kind = grid_expr.check(grid_expr.parse(e)[0], types, unknown)
            except grid_expr.GridError as err:
                raise ExportError(f"--grid for {group.kernel}: {e!r}: {err.message}") from None
            if kind != "int":
                raise ExportError(f"--grid for {group.kernel}: {e!r} is a floating-point value "
                                  f"(in signature {v.signature!r}); a grid dimension is an "
                                  "integer: compute it in integers, e.g. cdiv(n, BLOCK)")
    used_args: set[str] = set()
    used_constexprs: set[str] = set()
    out = []
    for e in exprs:
        def rename(m: re.Match) -> str:
            word = m.group(0)
            if word in runtime:
                return runtime[word]
            if word in grid_args:
                used_args.add(word)
                return word
            if word in constexpr_names:
                used_constexprs.add(word)
                return cxx_name(word)
            return word  # a helper: every other name was rejected above

        # numeric literals such as 1024u or 1e3 are not identifiers: skip digits' suffixes
        out.append(re.sub(r"\b(?<![\d.])[^\W\d]\w*\b", rename, e))
    for name in used_constexprs:
        for v in group.variants:
            if not _c_constant(v.constexprs.get(name)):
                raise ExportError(f"--grid for {group.kernel}: constexpr `{name}` is "
                                  f"{v.constexprs.get(name)!r} in signature {v.signature!r}; "
                                  "grids can read integer, float and bool constexprs")
    unused = [a for a in grid_args if a not in used_args]
    if unused:
        raise ExportError(f"--grid-arg for {group.kernel}: the grid does not read "
                          f"{', '.join(unused)}")
    how = "given with --grid"
    if grid_args:
        how += f" ({', '.join(grid_args)}: launcher argument{'s' if len(grid_args) > 1 else ''}" \
               " for the grid only)"
    return Grid(out, how, used_constexprs, grid_args)


def _c_constant(value) -> bool:
    return isinstance(value, (bool, int, float))


def derive_grid(group: KernelGroup) -> Grid:
    """`cdiv(size, BLOCK)` for the plain one-dimensional shape, else an ExportError."""
    found = {_derive_one(group, v) for v in group.variants}
    if len(found) != 1:
        raise ExportError(f"{group.kernel}: its specializations would need different grids "
                          f"({', '.join(sorted(str(f) for f in found))}); pass --grid")
    size, block = found.pop()
    if size is None:
        return Grid(["1", "1", "1"], "derived: the kernel never reads program_id, so one "
                    "program", set())
    cname = next(p.cxx_name for p in group.params if p.name == size)
    block_text = cxx_name(block) if isinstance(block, str) else str(block)
    return Grid([f"cdiv({cname}, {block_text})", "1", "1"],
                f"derived: one program per {block} elements of {size}",
                {block} if isinstance(block, str) else set())


def _derive_one(group: KernelGroup, v: Variant):
    k = v.built.kernel
    why = None
    axes, lengths, loops = set(), set(), False
    for op in k.walk():
        if op.kind in ("program_id", "num_programs"):
            axes.add(op.attrs["axis"])
        elif op.kind == "arange":
            lengths.add(op.attrs["end"] - op.attrs["start"])
        elif op.kind in ("for", "while"):
            loops = True
    if not axes:
        return (None, None)
    sizes = [p.name for p in group.params if not p.is_pointer and p.spec.type.is_int()
             and not p.spec.type.is_bool()]
    if axes != {0}:
        why = f"it reads program_id / num_programs on axes {sorted(axes)}"
    elif loops:
        why = "it loops (a persistent or grid-stride kernel needs its own grid)"
    elif len(lengths) != 1:
        why = (f"it uses blocks of {len(lengths)} different lengths" if lengths
               else "it has no tl.arange to take a block size from")
    elif len(sizes) != 1:
        why = (f"it has {len(sizes)} integer arguments ({', '.join(sizes)}), not one size"
               if sizes else "it has no integer size argument")
    if why:
        raise ExportError(f"cannot derive a launch grid for {group.kernel}: {why}; pass "
                          "--grid with C expressions over its parameters, e.g. "
                          "--grid '(n + 1023) / 1024,1,1'")
    (length,) = lengths
    named = [n for n, val in v.constexprs.items()
             if isinstance(val, int) and not isinstance(val, bool) and val == length]
    return (sizes[0], named[0] if len(named) == 1 else length)


def c_constant_decl(name: str, value) -> str:
    """`constexpr int BLOCK_SIZE = 1024;` for a constexpr the grid reads."""
    if isinstance(value, bool):
        return f"constexpr bool {cxx_name(name)} = {'true' if value else 'false'};"
    if isinstance(value, int):
        ctype = "int" if -2**31 <= value < 2**31 else "long long"
        return f"constexpr {ctype} {cxx_name(name)} = {value}{'' if ctype == 'int' else 'll'};"
    return f"constexpr double {cxx_name(name)} = {float(value)!r};"
