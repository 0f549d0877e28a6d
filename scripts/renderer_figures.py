"""The figures of the renderer and the compile target, as one table.

    PYTHONPATH=. python scripts/renderer_figures.py

Counts read from the source (tilecc/), plus one measured figure: how many times a compile
resolves its target (calls of target.py's resolvers during `kernel.source()` and during a
cold `kernel.compile()`, NVRTC permitting).  The design notes quote them before -> after.
"""

from __future__ import annotations

import ast
import collections
import io
import os
import re
import sys
import tempfile
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "tilecc"
# the renderer: its writers, and the emitter they write through
RENDER_FILES = sorted((PACKAGE / "transpiler").glob("render*.py")) + \
    [p for p in [PACKAGE / "transpiler" / "emitter.py"] if p.exists()]
TEMPLATES = sorted((PACKAGE / "templates" / "c_like").glob("*.j2"))


def py_files():
    return sorted(PACKAGE.rglob("*.py"))


def rel(p: Path) -> str:
    return str(p.relative_to(ROOT))


# --- the compile target ------------------------------------------------------------------

# arch text read apart: prefixes, suffixes, digits (the target module's one parser excepted
# only where it is the target module's own; every site counts)
ARCH_PARSE = re.compile(r"\barch\w*\s*(?:\.\s*(?:startswith|endswith|removeprefix|removesuffix|"
                        r"rstrip|lstrip|split)\(|\[\s*-?\d*\s*:)")
TARGET_NAME = re.compile(r"""[!=]=\s*["'](?:cuda|hip)["']|\bin\s*\(\s*["'](?:cuda|hip)["']""")


def code_lines(path: Path):
    """(line number, text) of the lines that hold code, docstrings and comments left out."""
    text = path.read_text()
    skip = docstring_lines(text)
    for i, line in enumerate(text.splitlines(), 1):
        if i not in skip:
            yield i, line.split("#", 1)[0] if '"' not in line and "'" not in line else line


def arch_parsing_sites():
    return [(rel(p), i) for p in py_files() for i, line in code_lines(p) if ARCH_PARSE.search(line)]


def target_name_comparisons():
    by_file = collections.Counter()
    for p in py_files():
        for _, line in code_lines(p):
            by_file[rel(p)] += len(TARGET_NAME.findall(line))
    return {f: n for f, n in by_file.items() if n}


def default_sites():
    """Places other than runtime/options.py that write a literal default for num_warps or
    num_stages: parameter defaults, class fields, `.get("num_warps", 4)`."""
    out = {"num_warps": [], "num_stages": []}
    for p in py_files():
        if p == PACKAGE / "runtime" / "options.py":
            continue
        for node in ast.walk(ast.parse(p.read_text())):
            pairs = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                a = node.args
                positional = a.posonlyargs + a.args
                pairs += zip(positional[len(positional) - len(a.defaults):], a.defaults)
                pairs += [(k, d) for k, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
                pairs = [(x.arg, d) for x, d in pairs]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) \
                    and node.value is not None:
                pairs = [(node.target.id, node.value)]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "get" and len(node.args) == 2 \
                    and isinstance(node.args[0], ast.Constant):
                pairs = [(node.args[0].value, node.args[1])]
            for name, value in pairs:
                if name in out and isinstance(value, ast.Constant) and isinstance(value.value, int):
                    out[name].append(f"{rel(p)}:{node.lineno}")
    return out


def target_resolutions() -> dict[str, int | str]:
    """How often one kernel.source() and one cold kernel.compile() resolve the target:
    target-row look-ups (`get_target`) from outside the target module, and compile targets
    built (`CompileTarget`, where the module has one)."""
    sys.path.insert(0, str(ROOT))
    os.environ["TILECC_CACHE"] = "0"
    import tilecc
    from tilecc.transpiler import target as T

    lookup = T.get_target.__code__
    built = getattr(T, "CompileTarget", None)
    count = [0]

    def profile(frame, event, arg):
        if event != "call":
            return
        code = frame.f_code
        if code is lookup and frame.f_back is not None and \
                frame.f_back.f_code.co_filename != T.__file__:
            count[0] += 1
        elif built is not None and code.co_name == "__init__" and \
                type(frame.f_locals.get("self")) is built:
            count[0] += 1

    source = ("import tilecc\nimport tilecc.language as tl\n\n@tilecc.jit\n"
              "def figures_add(x, y, out, n, BLOCK: tl.constexpr):\n"
              "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
              "    m = offs < n\n"
              "    s = tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m)\n"
              "    tl.store(out + offs, s, mask=m)\n")
    d = tempfile.mkdtemp()
    Path(d, "figures_kernel.py").write_text(source)
    sys.path.insert(0, d)
    import figures_kernel

    sig = "*fp32, *fp32, *fp32, i32"
    out = {}
    for what, call in (("source", lambda: figures_kernel.figures_add.source(sig, BLOCK=128)),
                       ("compile", lambda: figures_kernel.figures_add.compile(sig, BLOCK=256))):
        count[0] = 0
        sys.setprofile(profile)
        try:
            call()
            out[what] = count[0]
        except Exception as e:  # no NVRTC here
            out[what] = f"n/a ({type(e).__name__})"
        finally:
            sys.setprofile(None)
    del tilecc
    return out


# --- the renderer ------------------------------------------------------------------------

EMIT = re.compile(r"\bself\.(?:out\.)?line\(|(?<![\w.])L\(")


def emission_calls():
    return {p.name: len(EMIT.findall(p.read_text())) for p in RENDER_FILES}


def docstring_lines(text: str) -> set[int]:
    """The lines of the module's, classes' and functions' docstrings (prose, not C)."""
    lines = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                lines |= set(range(body[0].lineno, body[0].end_lineno + 1))
    return lines


def _c_literals():
    """(file name, literal) of each string literal (f-strings included) of the renderer
    that carries C: a `;`, `{` or `}` outside the f-string's replacement fields
    (docstrings left out)."""
    for p in RENDER_FILES:
        text = p.read_text()
        docs = docstring_lines(text)
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type != tokenize.STRING or tok.start[0] in docs:
                continue
            body = tok.string
            prefix = body[:body.index(body.lstrip("rbfuRBFU")[0])].lower()
            if "f" in prefix:
                body = re.sub(r"\{\{|\}\}", "B", body)  # escaped braces are C braces
                body = re.sub(r"\{[^{}]*\}", "", body).replace("B", "{")
            if any(c in body for c in ";{}"):
                yield p.name, tok.string


def c_strings():
    """How many C-bearing string literals each renderer file holds."""
    return dict(collections.Counter(name for name, _ in _c_literals()))


def c_text_shares() -> tuple[int, int]:
    """(characters of the C-bearing string literals of the renderer's Python, characters
    of its templates less their `{# #}` comments): where the C is spelled."""
    in_python = sum(len(literal) for _, literal in _c_literals())
    in_templates = sum(len(re.sub(r"\{#.*?#\}", "", p.read_text(), flags=re.S).strip())
                       for p in TEMPLATES)
    return in_python, in_templates


def long_functions(limit: int = 60):
    out = []
    for p in RENDER_FILES:
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > limit:
                    out.append((length, f"{p.name}:{node.name}"))
    return sorted(out, reverse=True)


MUTATORS = {"add", "append", "clear", "discard", "extend", "insert", "pop", "remove",
            "setdefault", "update"}


def _written_from_outside(node: ast.expr) -> bool:
    """Whether `node` (written, or mutated in place) is an attribute of an object reached
    through another's attributes (`self.exprs.inline`, `r.names.taken[k]`): some other
    part's state.  An attribute of `self`, or of an object made here (`tmp.layout`, a
    local's), is not."""
    while isinstance(node, ast.Subscript):
        node = node.value
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)


def writer_state():
    """(the attributes each class of the renderer's files assigns on `self`, by class;
    the writes of another object's attributes, `obj.x = ..`, `obj.x[k] = ..`, `obj.x += ..`
    or `obj.x.add(..)` with `obj` not `self` (a writer's state written from outside its
    class), as `file:line`; hand-paired depth changes)."""
    state, outside, depth = {}, [], 0
    for p in RENDER_FILES:
        tree = ast.parse(p.read_text())
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            names = {t.attr for node in ast.walk(cls)
                     for t in (node.targets if isinstance(node, ast.Assign) else
                               [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign))
                               else [])
                     for t in ast.walk(t) if isinstance(t, ast.Attribute)
                     and isinstance(t.value, ast.Name) and t.value.id == "self"}
            # Writer (the base) and Renderer hold the references to the parts, not state
            if names and cls.name not in ("Writer", "Renderer"):
                state[cls.name] = len(names)
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
                if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Attribute) \
                        and node.target.attr == "depth":
                    depth += 1
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr in MUTATORS:
                targets = [node.func.value]
            for t in targets:
                for sub in (t.elts if isinstance(t, ast.Tuple) else [t]):
                    if _written_from_outside(sub):
                        outside.append(f"{p.name}:{node.lineno}")
    return state, outside, depth


def main() -> None:
    rows = []
    arch = arch_parsing_sites()
    rows.append(("arch-text parsing sites", len(arch), ", ".join(f"{f}:{i}" for f, i in arch)))
    names = target_name_comparisons()
    rows.append(('== "cuda" / == "hip" comparisons', sum(names.values()),
                 f"{len(names)} files: " + ", ".join(f"{f.removeprefix('tilecc/')} {n}"
                                                    for f, n in sorted(names.items()))))
    defaults = default_sites()
    for name, sites in defaults.items():
        rows.append((f"{name} default sites outside options.py", len(sites), ", ".join(sites)))
    resolutions = target_resolutions()
    for what, n in resolutions.items():
        rows.append((f"target resolutions per {what}", n, ""))
    emits = emission_calls()
    rows.append(("self.(out.)line / L( emission calls", sum(emits.values()),
                 ", ".join(f"{f} {n}" for f, n in emits.items())))
    strings = c_strings()
    rows.append(("C-bearing string literals", sum(strings.values()),
                 ", ".join(f"{f} {n}" for f, n in strings.items())))
    jinja = {p.name: len(p.read_text().splitlines()) for p in TEMPLATES}
    rows.append(("kernel Jinja lines", sum(jinja.values()),
                 ", ".join(f"{f} {n}" for f, n in jinja.items())))
    in_python, in_templates = c_text_shares()
    rows.append(("C text in templates (chars, % of all)", in_templates,
                 f"{100 * in_templates // (in_python + in_templates)}% (Python's C-bearing "
                 f"literals: {in_python})"))
    longs = long_functions()
    rows.append(("renderer functions over 60 lines", len(longs),
                 ", ".join(f"{name} {n}" for n, name in longs)))
    state, outside, depth = writer_state()
    rows.append(("writer state attributes", sum(state.values()),
                 ", ".join(f"{c} {n}" for c, n in state.items())))
    rows.append(("  written from outside their class", len(outside), ", ".join(outside)))
    rows.append(("hand-paired depth += / -=", depth, ""))
    width = max(len(r[0]) for r in rows)
    for label, n, detail in rows:
        print(f"{label:<{width}}  {n!s:>6}  {detail}")


if __name__ == "__main__":
    main()
