"""The frontend's reading of a function's source: `parse_function` parses it with libcst
(positions kept, identifiers NFKC-normalized) into a `ParsedFunction`, which places any
node at its file/line/column; `declared_params` and `const_params` read the parameters'
annotations; `assigned_names` and `small_statements_text` read facts off the syntax tree
that the statement and loop tracers need.
"""

from __future__ import annotations

import inspect
import textwrap
import unicodedata
from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Any, Callable

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from tilecc import source
from tilecc.errors import CompilationError, Loc
from tilecc.language import core as language_core
from tilecc.language.core import constexpr as ConstexprClass
from tilecc.transpiler.frontend_names import TLRef, resolve_static
from tilecc.transpiler.specs import ParamDecl


@dataclass
class ParsedFunction:
    fn: Callable
    file: str
    funcdef: cst.FunctionDef
    module: cst.Module
    positions: Any
    line_offset: int
    col_offset: int

    def loc(self, node: cst.CSTNode, stmt: int = 0) -> Loc:
        pos = self.positions[node].start
        line = pos.line + self.line_offset
        return Loc(self.file, line, pos.column + self.col_offset, self.fn.__name__, stmt or line)

    def code(self, node: cst.CSTNode) -> str:
        """`node` as written, its whitespace runs made single spaces."""
        return _node_code(self.module, node)


@lru_cache(maxsize=8192)  # (a statement's text is wanted again by each specialization)
def _node_code(module: cst.Module, node: cst.CSTNode) -> str:
    return " ".join(module.code_for_node(node).split())


@dataclass
class CalledFrom(ParsedFunction):
    """One of the language's own functions (written in `tl`) as a user's kernel calls it:
    what it emits and any error it raises are placed at the user's call, not at a line of
    tilecc's library (the generated code's comments and the messages show the user's
    line)."""

    call: Loc = None

    def loc(self, node: cst.CSTNode, stmt: int = 0) -> Loc:
        return self.call

    @staticmethod
    def of(pf: ParsedFunction, call: Loc) -> CalledFrom:
        return CalledFrom(**{f.name: getattr(pf, f.name) for f in fields(ParsedFunction)},
                          call=call)


@lru_cache(maxsize=None)
def parse_function(fn: Callable) -> ParsedFunction:
    snapshot = source.captured(fn)  # as @jit read it, when Python imported the function
    if snapshot is not None:
        file, first, lines = snapshot
    else:
        try:
            lines, first = inspect.getsourcelines(fn)
            file = inspect.getsourcefile(fn) or "<unknown>"
        except (OSError, TypeError) as e:
            raise CompilationError(f"cannot read the source of {fn.__qualname__}: {e}") \
                from None
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    col_offset = len(lines[0]) - len(lines[0].lstrip()) if dedented != text else 0
    module = cst.parse_module(dedented)
    if not dedented.isascii():
        module = module.visit(_NormalizeNames())
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    funcdef = next(n for n in module.body if isinstance(n, cst.FunctionDef))
    return ParsedFunction(fn, file, funcdef, module, positions, first - 1, col_offset)


class _NormalizeNames(cst.CSTTransformer):
    """Identifiers as Python compares them (NFKC: `ｘ` and `x` are one name, as in
    `fn.__code__` and `inspect.signature`)."""

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        if updated.value.isascii():
            return updated
        return updated.with_changes(value=unicodedata.normalize("NFKC", updated.value))


def declared_params(fn: Callable) -> list[ParamDecl]:
    """The kernel's parameters, with which are `tl.constexpr` (read from the source)."""
    pf = parse_function(fn)
    sig = inspect.signature(fn)
    out = []
    for p in pf.funcdef.params.params:
        name = p.name.value
        ann = p.annotation.annotation if p.annotation else None
        is_ce = ann is not None and _annotation_is_constexpr(fn, ann)
        out.append(ParamDecl(name, is_ce, sig.parameters[name].default))
    if pf.funcdef.params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or \
            pf.funcdef.params.kwonly_params or pf.funcdef.params.star_kwarg:
        raise CompilationError("kernels take plain positional parameters only",
                               pf.loc(pf.funcdef.params))
    return out


def _annotation_is_constexpr(fn: Callable, ann: cst.BaseExpression) -> bool:
    if isinstance(ann, cst.SimpleString):
        ann = cst.parse_expression(ann.evaluated_value)
    ref = resolve_static(fn, ann)
    if ref is None:
        # a name the function cannot see (under `from __future__ import annotations`, a
        # `tl` imported in the enclosing function that the body never uses): as Triton,
        # which reads the annotation's text, `...constexpr` declares a constexpr
        last = ann.attr if isinstance(ann, cst.Attribute) else ann
        return isinstance(last, cst.Name) and last.value == "constexpr"
    return ref is ConstexprClass or (isinstance(ref, TLRef) and ref.name == "tl.constexpr")


def const_params(fn: Callable) -> set[str]:
    """The parameters annotated `tl.const`: pointers to data the kernel only reads."""
    found = set()
    for p in parse_function(fn).funcdef.params.params:
        ann = p.annotation.annotation if p.annotation else None
        if isinstance(ann, cst.SimpleString):
            ann = cst.parse_expression(ann.evaluated_value)
        if ann is None:
            continue
        ref = resolve_static(fn, ann)
        if ref is None:  # a name the function cannot see: by its text, as Triton
            last = ann.attr if isinstance(ann, cst.Attribute) else ann
            is_const = isinstance(last, cst.Name) and last.value == "const"
        else:
            is_const = ref is language_core.const or ref == TLRef("tl.const")
        if is_const:
            found.add(p.name.value)
    return found


# --- facts read off the syntax tree -------------------------------------------------------

def small_statements_text(pf: ParsedFunction, statements) -> str:
    """`a = 1; b = 2` as written (each statement's code ends with its own `;`)."""
    return "; ".join(pf.code(s).rstrip(";").rstrip() for s in statements)


# --- walking the tree ------------------------------------------------------------------------
# libcst's visitors rebuild every node they pass (`_visit_and_replace_children`), which cost
# most of a kernel's parse; these walks only read, so they go down the dataclass fields.

@lru_cache(maxsize=None)
def _child_fields(node_type: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(node_type))


def descendants(node: cst.CSTNode):
    """`node` and every node below it, parents before their children, in source order."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        below = []
        for name in _child_fields(type(n)):
            v = getattr(n, name)
            if isinstance(v, cst.CSTNode):
                below.append(v)
            elif isinstance(v, (tuple, list)):
                below.extend(x for x in v if isinstance(x, cst.CSTNode))
        stack.extend(reversed(below))


# The parsed trees live as long as their functions (`parse_function` is cached), and the
# same loop body is read again for each specialization: these facts are kept per node
# (nodes hash and compare by identity).
@lru_cache(maxsize=8192)
def assigned_names(node: cst.CSTNode) -> tuple[str, ...]:
    """Names bound by assignments anywhere inside `node`, in order of first appearance."""
    found: list[str] = []

    def add(target) -> None:
        if isinstance(target, cst.Name):
            if target.value not in found:
                found.append(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                add(el.value)

    for n in descendants(node):
        if isinstance(n, cst.Assign):
            for t in n.targets:
                add(t.target)
        elif isinstance(n, (cst.AugAssign, cst.AnnAssign, cst.For)):
            add(n.target)
    return tuple(found)
