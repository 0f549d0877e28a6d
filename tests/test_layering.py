"""tilecc's stages import one way (docs/architecture.md, "Stages").

Every import of a tilecc module by another is read from the source (the AST, so imports
inside functions and under `if TYPE_CHECKING:` count as much as those at the top), and
checked against the declared order of the stages:

    base          errors, source, version: anyone may import them; they import only base
    language      the `tl` API and dtypes
    transpiler    frontend -> IR -> passes -> render; specialization, grids
    interpreter   runs the IR on NumPy
    runtime       compile driver, options, caches, native compilers, launch
    top           the package itself (`tilecc.jit`...), the CLI, export, testing

A module may import its own stage and the stages below it, never one above.  The runtime
sits above the interpreter because it dispatches to it (TILECC_INTERPRET=1); the
interpreter never imports the runtime.  No two modules import each other, directly or
through others, even inside one stage: a lazy import is still a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "tilecc"

BASE = {"tilecc.errors", "tilecc.source", "tilecc.version"}
STAGES = ["language", "transpiler", "interpreter", "runtime", "top"]
TOP = {"tilecc", "tilecc.__main__", "tilecc.cli", "tilecc.cli_input", "tilecc.compat",
       "tilecc.export", "tilecc.testing"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def is_module(name: str) -> bool:
    rel = Path(*name.split("."))
    return (PACKAGE.parent / rel).with_suffix(".py").is_file() or \
        (PACKAGE.parent / rel / "__init__.py").is_file()


def stage(name: str) -> int | None:
    """The rank of a module's stage (-1 for base modules), None if undeclared."""
    if name in BASE:
        return -1
    if any(name == t or name.startswith(t + ".") for t in TOP - {"tilecc"}) or name == "tilecc":
        return STAGES.index("top")
    parts = name.split(".")
    if len(parts) > 1 and parts[1] in STAGES[:-1]:
        return STAGES.index(parts[1])
    return None


def imports_of(path: Path) -> set[tuple[str, int]]:
    """(tilecc module imported, line) for every import in the file, nested ones included.
    `from P import x` names the module P.x where x is a module, else P itself."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {(a.name, node.lineno) for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                parent = ".".join(base + ([node.module] if node.module else []))
            else:
                parent = node.module or ""
            for a in node.names:
                sub = f"{parent}.{a.name}"
                found.add((sub if is_module(sub) else parent, node.lineno))
    return {(m, line) for m, line in found if m == "tilecc" or m.startswith("tilecc.")}


def import_graph() -> dict[str, set[tuple[str, int]]]:
    return {module_name(p): imports_of(p) for p in sorted(PACKAGE.rglob("*.py"))}


def cycles(graph: dict[str, set[tuple[str, int]]]) -> list[set[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    edges = {m: {t for t, _ in deps if t in graph and t != m} for m, deps in graph.items()}
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(component)

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_every_module_has_a_stage():
    undeclared = [m for m in import_graph() if stage(m) is None]
    assert not undeclared, (f"modules outside the declared stages: {undeclared}; add them to "
                            "a stage in tests/test_layering.py and docs/architecture.md")


def test_no_import_from_a_lower_stage_to_a_higher_one():
    wrong = []
    for importer, deps in import_graph().items():
        for imported, line in sorted(deps):
            low, high = stage(importer), stage(imported)
            if low is None or high is None:
                continue  # reported by test_every_module_has_a_stage
            if high > low:
                what = "base" if low < 0 else STAGES[low]
                wrong.append(f"{importer} (line {line}, {what}) imports {imported} "
                             f"({'base' if high < 0 else STAGES[high]})")
    assert not wrong, "imports against the stage order:\n  " + "\n  ".join(wrong)


def test_no_import_cycles():
    found = [sorted(c) for c in cycles(import_graph())]
    assert not found, f"import cycles (break them; a lazy import is still one): {found}"


def test_cycles_are_found_however_long():
    """The cycle finder behind the test above, on a made-up graph: a -> b -> c -> a is
    one cycle, d -> a hangs off it, e imports itself only."""
    graph = {"a": {("b", 1)}, "b": {("c", 1)}, "c": {("a", 1)}, "d": {("a", 1)},
             "e": {("e", 1)}}
    assert cycles(graph) == [{"a", "b", "c"}]


@pytest.mark.parametrize("source, expected", [
    ("from tilecc.runtime import jit\n", {("tilecc.runtime.jit", 1)}),
    ("def f():\n    from ..runtime.launch import run\n", {("tilecc.runtime.launch", 2)}),
    ("import tilecc.language as tl\n", {("tilecc.language", 1)}),
    ("from tilecc import __version__\n", {("tilecc", 1)}),
])
def test_imports_are_read_wherever_they_are(tmp_path, monkeypatch, source, expected):
    """The reader behind the tests above: lazy and relative imports count; a name taken
    from a package (not a submodule) is an import of the package."""
    fake = PACKAGE / "transpiler" / "_layering_probe.py"
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: source)
    assert imports_of(fake) == expected
