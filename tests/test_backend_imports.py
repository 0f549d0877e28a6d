"""The transpiler's back end — the IR, the passes, the matrix-unit table, the target and the
renderer — imports one way: no module of it is in an import cycle (imports inside
functions included), so each can be read knowing only what it imports."""

from __future__ import annotations

import ast
import os

import tilecc

ROOT = os.path.dirname(os.path.dirname(tilecc.__file__))
TRANSPILER = os.path.join(ROOT, "tilecc", "transpiler")
BACK_END = ("tilecc.transpiler.ir", "tilecc.transpiler.passes", "tilecc.transpiler.render",
            "tilecc.transpiler.target", "tilecc.transpiler.matrix_units")


def _modules() -> dict[str, str]:
    found = {}
    for folder, _, files in os.walk(TRANSPILER):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(folder, f)
                name = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                found[name.removesuffix(".__init__")] = path
    return found


def _imports(path: str, modules: dict[str, str]) -> set[str]:
    """The transpiler modules `path` imports, anywhere in it (`from pkg import mod` counts
    as importing pkg.mod)."""
    out = set()
    with open(path) as f:
        tree = ast.parse(f.read())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                out.add(sub if sub in modules else node.module)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return {m for m in out if m in modules}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_back_end_modules_are_in_no_import_cycle() -> None:
    modules = _modules()
    graph = {m: _imports(p, modules) - {m} for m, p in modules.items()}
    back_end = [c for c in _cycles(graph) if any(m.startswith(BACK_END) for m in c)]
    assert back_end == []


def test_the_cycle_check_sees_lazy_imports() -> None:
    graph = {"a": {"b"}, "b": {"a"}, "c": {"a"}}
    assert _cycles(graph) == [["a", "b"]]
    modules = _modules()
    # passes.dot used to import passes.layouts inside a function, and layouts dot
    graph = {m: _imports(p, modules) - {m} for m, p in modules.items()}
    graph["tilecc.transpiler.passes.dot"].add("tilecc.transpiler.passes.layouts")
    assert any("tilecc.transpiler.passes.dot" in c for c in _cycles(graph))
