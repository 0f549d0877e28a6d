"""Frontend: a `@tilecc.jit` Python function, specialized, → tile IR (`parse`).

The function's source is parsed with libcst (positions and comments kept).  Names
resolve by qualified name through the function's globals, so `triton.language` and
`tilecc.language` spell the same builtins.  Constexprs fold while tracing: constexpr
`if`s keep one branch, `tl.static_range` unrolls, `@jit` helpers inline.  Every user
error becomes a `CompilationError` at the offending node.
"""

from __future__ import annotations

import builtins as pybuiltins
import enum
import inspect
import textwrap
import types
import unicodedata
import warnings
from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Any, Callable

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from tilecc import source
from tilecc.errors import CompilationError, Loc, UnsupportedLanguageConstruct
from tilecc.language import core as language_core
from tilecc.language import dtypes as D
from tilecc.language import microscaling as language_microscaling
from tilecc.language import random as language_random
from tilecc.language.core import KernelFunction, constexpr as ConstexprClass
from tilecc.transpiler import builtins_block_ptr as BP
from tilecc.transpiler import builtins_descriptor as TD
from tilecc.transpiler import kernel_types as KT
from tilecc.transpiler import semantic as S
from tilecc.transpiler.builtin_registry import bind, did_you_mean, not_supported
from tilecc.transpiler.builtins_lang import TENSOR_METHODS
from tilecc.transpiler.frontend_returns import Bind, EarlyReturns, Return, contains_return
from tilecc.transpiler.ir import Kernel, Op, Param, Region, Type, Value
from tilecc.transpiler.semantic import Const, HelperRef
from tilecc.transpiler.specs import ArgSpec, ParamDecl  # noqa: F401  (re-exported)
from tilecc.transpiler.target import CUDA, Target


# --- parsed sources -----------------------------------------------------------------------

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
        return " ".join(self.module.code_for_node(node).split())


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
    ref = _resolve_static(fn, ann)
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
        ref = _resolve_static(fn, ann)
        if ref is None:  # a name the function cannot see: by its text, as Triton
            last = ann.attr if isinstance(ann, cst.Attribute) else ann
            is_const = isinstance(last, cst.Name) and last.value == "const"
        else:
            is_const = ref is language_core.const or ref == TLRef("tl.const")
        if is_const:
            found.add(p.name.value)
    return found


# --- references to things that are not kernel values ---------------------------------------

@dataclass(frozen=True)
class TLRef:
    """A name in the `tl` namespace (a module prefix or a builtin), by canonical name."""

    name: str


@dataclass(frozen=True)
class OtherModule:
    module: types.ModuleType


@dataclass(frozen=True)
class PyBuiltin:
    name: str  # range, min, max


@dataclass(frozen=True)
class Method:
    value: Value
    name: str


# the libdevice modules, Triton's and tilecc's, are one namespace: `tl.libdevice.<fn>`
_LIBDEVICE_MODULES = tuple(f"{top}.language.extra{vendor}.libdevice" for top in ("triton", "tilecc")
                           for vendor in ("", ".cuda", ".hip"))
_TL_PREFIXES = ("triton.language.math", "triton.language.core", "triton.language.standard",
                "triton.language", "tilecc.language.math", "tilecc.language.core",
                "tilecc.language.dtypes", "tilecc.language")
_TOP_LEVEL = {"triton.cdiv": "tl.cdiv", "tilecc.cdiv": "tl.cdiv",
              "triton.jit": "jit", "tilecc.jit": "jit"}


def canonical_name(qualname: str) -> str | None:
    """'triton.language.math.exp' → 'tl.exp'; 'tilecc.language' → 'tl'; else None."""
    if qualname in _TOP_LEVEL:
        return _TOP_LEVEL[qualname]
    for module in _LIBDEVICE_MODULES:
        if qualname == module or qualname.startswith(module + "."):
            return "tl.libdevice" + qualname[len(module):]
    for prefix in _TL_PREFIXES:
        if qualname == prefix:
            return "tl"
        if qualname.startswith(prefix + "."):
            return "tl." + qualname[len(prefix) + 1:]
    return None


class AssignedNumber(Const):
    """A Python number a plain assignment bound (`one = 1`): still folded as a constant,
    but Triton makes it a scalar kernel value there, so its `.dtype` is the literal's
    type (int32, int64, fp32, int1...), where a constexpr's has none."""

    def __eq__(self, other):
        return isinstance(other, Const) and type(other.value) is type(self.value) and \
            other.value == self.value

    __hash__ = Const.__hash__


def reference_for(obj: Any) -> Any:
    """What a global (or an attribute of a module) means inside a kernel."""
    if isinstance(obj, ConstexprClass):
        return Const(obj.value)
    if obj is ConstexprClass:
        return TLRef("tl.constexpr")
    if isinstance(obj, (bool, int, float, str, type(None), D.dtype, enum.Enum)) or \
            type(obj).__name__ == "PropagateNan":  # tl.PropagateNan.ALL, tilecc's or Triton's
        return Const(obj)
    if isinstance(obj, KernelFunction):  # @tilecc.jit helpers, the standard library's
        return HelperRef(obj.fn)
    if isinstance(obj, (language_core.ConstexprFunction,
                        language_core.BoundConstexprFunction)):
        return Const(obj)  # called on constexprs at compile time (`call`)
    if isinstance(obj, types.ModuleType):
        name = canonical_name(obj.__name__)
        return TLRef(name) if name in ("tl", "tl.libdevice") else OtherModule(obj)
    builtin_name = getattr(obj, "__tilecc_builtin__", None)
    if builtin_name:
        return TLRef("tl." + builtin_name)
    tmod = type(obj).__module__ or ""
    if tmod.startswith("triton"):  # objects of an installed Triton
        if type(obj).__name__ == "JITFunction":
            # Triton's own `tl` functions written in `tl` (tl.rand...) are tilecc's
            name = canonical_name(f"{obj.fn.__module__}.{obj.fn.__qualname__}")
            own = _language_function(name.rsplit(".", 1)[-1]) if name else None
            return own or HelperRef(obj.fn)
        if type(obj).__name__ == "constexpr":
            return Const(obj.value)
        if type(obj).__name__ == "ConstexprFunction":  # @triton.constexpr_function
            name = canonical_name(f"{obj.fn.__module__}.{obj.fn.__qualname__}")
            return TLRef(name) if name else Const(obj)
        if hasattr(obj, "primitive_bitwidth") and str(obj) in D.BY_TRITON_NAME:
            return Const(D.BY_TRITON_NAME[str(obj)])
    mod, qual = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if mod and qual:
        name = canonical_name(f"{mod}.{qual}")
        if name:
            return TLRef(name)
    if any(obj is getattr(pybuiltins, n) for n in _PY_BUILTINS):
        return PyBuiltin(obj.__name__)
    return obj  # left for the caller to reject with a message


def _is_language(fn: Callable) -> bool:
    """`fn` is one of the language's own functions written in `tl` (tilecc.language.*)."""
    return (getattr(fn, "__module__", "") or "").startswith("tilecc.language")


def _language_function(short: str) -> HelperRef | None:
    """`tl.<short>` where the language writes it in `tl` itself (the random numbers of
    `tilecc.language.random`, `tl.dot_scaled`): traced like a user's helper."""
    for module in (language_random, language_microscaling):
        if short in module.FUNCTIONS:
            return HelperRef(getattr(module, short).fn)
    return None


def _resolve_static(fn: Callable, node: cst.BaseExpression) -> Any:
    """Resolve a Name/Attribute chain through fn's globals without tracing anything."""
    if isinstance(node, cst.Name):
        g = scope_of(fn)
        return reference_for(g[node.value]) if node.value in g else None
    if isinstance(node, cst.Attribute):
        base = _resolve_static(fn, node.value)
        return _attribute_of_ref(base, node.attr.value)
    return None


def _attribute_of_ref(base: Any, attr: str) -> Any:
    if isinstance(base, TLRef):
        name = f"{base.name}.{attr}"
        return TLRef("tl." + attr) if base.name == "tl" else TLRef(name)
    if isinstance(base, OtherModule):
        if not hasattr(base.module, attr):
            return None
        sub = getattr(base.module, attr)
        if isinstance(sub, types.ModuleType):
            name = canonical_name(sub.__name__)
            return TLRef(name) if name in ("tl", "tl.libdevice") else OtherModule(sub)
        name = canonical_name(f"{base.module.__name__}.{attr}")
        return TLRef(name) if name else reference_for(sub)
    return None


def scope_of(fn: Callable) -> dict[str, Any]:
    """The names `fn` sees: its module's globals and its closure's assigned cells."""
    g = dict(fn.__globals__)
    # A closure's cells, read one by one: a cell the enclosing function has not assigned yet
    # (a name defined further down a test body) is empty, and inspect.getclosurevars raises
    # "Cell is empty" on it; such a name is simply not visible to the kernel.
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            g[name] = cell.cell_contents
        except ValueError:
            pass
    return g


# --- the tracer -----------------------------------------------------------------------------

class Emitter:
    """Appends ops to the innermost open region; shared by a kernel and its inlined helpers."""

    def __init__(self, target: Target = None) -> None:
        self.regions: list[Region] = []
        self.loc: Loc | None = None
        self.target = target or CUDA  # what the kernel is traced for

    def emit(self, kind: str, operands: list[Value], type: Type | None, **attrs) -> Value | None:
        if type is not None and type.is_block and type.numel > MAX_BLOCK_NUMEL:
            raise ValueError(f"a block of {type.numel} elements ({list(type.shape)}) is larger "
                             f"than Triton allows ({MAX_BLOCK_NUMEL}, 2**20 elements): use "
                             "smaller blocks and loop over the data")
        results = [Value(type)] if type is not None else []
        self.regions[-1].ops.append(Op(kind, list(operands), results, self.loc, attrs))
        return results[0] if results else None

    def emit_op(self, op: Op) -> Op:
        self.regions[-1].ops.append(op)
        return op


MAX_BLOCK_NUMEL = language_core.TRITON_MAX_TENSOR_NUMEL  # every block shape is checked


class FunctionTracer(EarlyReturns):
    """Traces one Python function (the kernel, or an inlined helper) into the emitter."""

    def __init__(self, pf: ParsedFunction, emitter: Emitter, kernel: Kernel, depth: int = 0):
        self.pf, self.b, self.kernel, self.depth = pf, emitter, kernel, depth
        self.globals = scope_of(pf.fn)
        self.loop_depth = 0  # run-time and static loops around the statement being traced
        self.scope: dict[str, Any] = {}
        self.stmt_line = 0
        self.current_call: cst.Call | None = None

    # errors ------------------------------------------------------------------------------
    def error(self, node: cst.CSTNode, message: str,
              python_error: str | None = None) -> CompilationError:
        """An error at `node`; `python_error`, the Python exception Triton wraps for it."""
        err = CompilationError(message, self.pf.loc(node, self.stmt_line))
        err.python_error = python_error
        return err

    def unsupported(self, node: cst.CSTNode, message: str) -> CompilationError:
        """Python the kernel language does not have (Triton: UnsupportedLanguageConstruct)."""
        return UnsupportedLanguageConstruct(message, self.pf.loc(node, self.stmt_line))

    def _at(self, node: cst.CSTNode, thunk: Callable[[], Any]) -> Any:
        saved = self.b.loc
        self.b.loc = self.pf.loc(node, self.stmt_line)
        try:
            return thunk()
        except (CompilationError, Return):
            raise
        except (TypeError, ValueError, OverflowError, ZeroDivisionError, KeyError,
                AttributeError, IndexError, NotImplementedError) as e:
            msg = e.args[0] if e.args and isinstance(e.args[0], str) else str(e)
            err = self.error(node, msg)
            err.python_error = type(e).__name__  # Triton names it in its message
            raise err from e.with_traceback(None)  # its cause, as Triton's (no frames)
        finally:
            self.b.loc = saved

    # statements ----------------------------------------------------------------------------
    def run_body(self, statements) -> None:
        statements = list(statements)
        self._record_one_line_body(statements)
        i = 0
        while i < len(statements):
            stmt = statements[i]
            if isinstance(stmt, Bind):  # an unrolled static loop's next iteration
                self.scope[stmt.name] = Const(stmt.value)
                i += 1
                continue
            if isinstance(stmt, cst.For) and contains_return(stmt):
                unrolled = self.unroll_returning_static_loop(stmt)
                if unrolled is not None:  # its iterations, then the rest, in one list
                    statements, i = unrolled + statements[i + 1:], 0
                    continue
            if isinstance(stmt, cst.If) and contains_return(stmt):
                # the statements after it run only where it did not return: they are traced
                # into its branches (a constexpr test keeps one branch, then the rest)
                statements, i = self.visit_returning_if(stmt, statements[i + 1:]), 0
                continue
            self.visit_stmt(stmt)
            i += 1

    def run_nested(self, node: cst.CSTNode, statements) -> None:
        """A loop's body, where `return` cannot be honoured (as in Triton)."""
        self.loop_depth += 1
        try:
            self.run_body(statements)
        except Return as r:
            raise self._return_in_loop(r.node or node) from None
        finally:
            self.loop_depth -= 1

    def visit_stmt(self, stmt: cst.CSTNode) -> None:
        self.stmt_line = self.pf.loc(stmt).line
        self._record_statement(stmt)
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self._at(small, lambda s=small: self.visit_small(s))
        elif isinstance(stmt, cst.BaseSmallStatement):
            # the body of a one-line `def f(x): return x`, `if c: x = 1`, `for ...: acc += i`
            self._at(stmt, lambda: self.visit_small(stmt))
        elif isinstance(stmt, cst.If):
            self.visit_if(stmt)
        elif isinstance(stmt, cst.For):
            self.visit_for(stmt)
        elif isinstance(stmt, cst.While):
            self.visit_while(stmt)
        else:
            raise self.unsupported(stmt, f"{type(stmt).__name__} statements are not supported "
                                         "in kernels")

    def _record_statement(self, stmt: cst.CSTNode) -> None:
        comments = [line.comment.value for line in getattr(stmt, "leading_lines", ())
                    if line.comment is not None]
        if isinstance(stmt, cst.SimpleStatementLine):
            text = _small_statements_text(self.pf, stmt.body)
            if stmt.trailing_whitespace.comment:
                comments.append(stmt.trailing_whitespace.comment.value)
        elif isinstance(stmt, cst.If):
            text = f"if {self.pf.code(stmt.test)}:"
        elif isinstance(stmt, cst.For):
            text = f"for {self.pf.code(stmt.target)} in {self.pf.code(stmt.iter)}:"
        elif isinstance(stmt, cst.While):
            text = f"while {self.pf.code(stmt.test)}:"
        else:
            return  # a one-line body's statements: its header's line shows them
        if isinstance(stmt.body, cst.SimpleStatementSuite):  # `if c: x = 1` on one line
            text += " " + _small_statements_text(self.pf, stmt.body.body)
        self.kernel.statements[(self.pf.file, self.stmt_line)] = (text, comments)

    def _record_one_line_body(self, statements: list) -> None:
        """A body on its header's line (`def k(x): tl.store(x, 1.0)`) is that line's
        statement text, unless the header (`if c: x = 1`) has recorded the line."""
        small = []
        for stmt in statements:
            if not isinstance(stmt, cst.BaseSmallStatement) or \
                    (small and self.pf.loc(stmt).line != self.pf.loc(small[0]).line):
                break
            small.append(stmt)
        if small:
            key = (self.pf.file, self.pf.loc(small[0]).line)
            self.kernel.statements.setdefault(key, (_small_statements_text(self.pf, small), []))

    def visit_small(self, s: cst.BaseSmallStatement) -> None:
        if isinstance(s, cst.Assign):
            value = self.eval(s.value)
            if type(value) is Const and isinstance(value.value, (bool, int, float)):
                value = AssignedNumber(value.value)
            for target in s.targets:
                self.assign(target.target, value)
        elif isinstance(s, cst.AnnAssign):
            if s.value is None:
                return
            self.assign(s.target, self.eval(s.value))
        elif isinstance(s, cst.AugAssign):
            fn = _BINOPS.get(type(s.operator).__name__.replace("Assign", ""))
            if fn is None or not isinstance(s.target, cst.Name):
                raise self.error(s, "unsupported augmented assignment")
            current = self.lookup(s.target)
            self.assign(s.target, self.binop(fn, current, self.eval(s.value)))
        elif isinstance(s, cst.Expr):
            if not isinstance(s.value, (cst.SimpleString, cst.ConcatenatedString)):
                self.eval(s.value)
        elif isinstance(s, cst.Return):
            raise Return(self.eval(s.value) if s.value is not None else Const(None), s)
        elif isinstance(s, cst.Pass):
            pass
        elif isinstance(s, cst.Assert):
            msg = self.eval(s.msg) if s.msg is not None else Const("")
            from tilecc.transpiler.builtins import device_assert
            device_assert(self, "device_assert", self.eval(s.test), msg, Const(None))
        elif isinstance(s, (cst.Break, cst.Continue)):
            raise self.unsupported(s, f"`{type(s).__name__.lower()}` is not supported in kernels; "
                                "use a `while` loop with a condition")
        else:
            raise self.unsupported(s, f"{type(s).__name__} statements are not supported in "
                                      "kernels")

    def assign(self, target: cst.BaseAssignTargetExpression, value: Any) -> None:
        if isinstance(target, cst.Name):
            if isinstance(value, Value) and value.name is None:
                value.name = target.value
            self.scope[target.value] = value
        elif isinstance(target, (cst.Tuple, cst.List)):
            items = value.value if isinstance(value, Const) else value
            if not isinstance(items, tuple) or len(items) != len(target.elements):
                raise self.error(target, "cannot unpack this value into "
                                         f"{len(target.elements)} names")
            for el, item in zip(target.elements, items):
                self.assign(el.value, _wrap_item(item))
        else:
            raise self.error(target, "only assignments to plain names are supported in kernels")

    # control flow ------------------------------------------------------------------------------
    def visit_if(self, node: cst.If) -> None:
        cond = self._at(node.test, lambda: S.truthy(self.b, self.eval(node.test)))
        orelse = node.orelse
        else_body = [] if orelse is None else (
            [orelse] if isinstance(orelse, cst.If) else list(orelse.body.body))
        if isinstance(cond, Const):  # constexpr condition: keep one branch, no code for the test
            self.run_body(node.body.body if cond.value else else_body)
            return
        cond = self.scalar_condition(node.test, cond)
        before = dict(self.scope)
        branches = []
        for body in (node.body.body, else_body):
            self.scope = dict(before)
            region = Region()
            self.b.regions.append(region)
            try:
                self.run_nested(node, body)
            finally:
                self.b.regions.pop()
            branches.append((region, self.scope))
        self.scope = before
        names = [n for n in _assigned_names(node) if n in branches[0][1] and n in branches[1][1]
                 and (branches[0][1][n] is not before.get(n) or
                      branches[1][1][n] is not before.get(n))]
        block_pointers = {}  # name -> its value in the then-branch: merged by offsets
        for name in [n for n in names if isinstance(branches[0][1][n], BP.BlockPointer) or
                     isinstance(branches[1][1][n], BP.BlockPointer)]:
            a, c = branches[0][1][name], branches[1][1][name]
            if not (isinstance(a, BP.BlockPointer) and a.same_layout(c)):
                raise self.error(node, f"block pointer `{name}` must point into the same "
                                       "tensor the same way in both branches (only tl.advance "
                                       "may differ); make it before the `if`")
            names.remove(name)
            block_pointers[name] = a
            for key, _ in BP.loop_slots(name, a):
                i = BP.split_slot(key)[1]
                branches[0][1][key], branches[1][1][key] = a.offsets[i], c.offsets[i]
                names.append(key)
        merged = []
        for name in names:
            a, c = branches[0][1][name], branches[1][1][name]
            if isinstance(a, Const) and isinstance(c, Const) and a.value == c.value:
                self.scope[name] = a
                continue
            merged.append(name)
        yields = [[], []]
        for name in merged:
            pair = [branches[i][1][name] for i in (0, 1)]
            types_ = {v.type for v in pair if isinstance(v, Value)}
            if len(types_) > 1:
                # Triton's words first ("Mismatched type for x between then block...")
                raise self.error(node, f"Mismatched type for {name} between then block "
                                       f"({pair[0].type}) and else block ({pair[1].type}); "
                                       "cast one of them")
            for i, v in enumerate(pair):
                if not isinstance(v, (Value, Const)) or not (isinstance(v, Value) or S.is_number(v)):
                    raise self.error(node, f"`{name}` must be a kernel value to be assigned "
                                           "in a run-time `if`")
                if isinstance(v, Const):
                    self.b.regions.append(branches[i][0])
                    try:
                        v = S.constant(self.b, v.value, next(iter(types_)).dtype) if types_ \
                            else S.to_value(self.b, v)
                    finally:
                        self.b.regions.pop()
                yields[i].append(v)
        results = [Value(y.type, n) for y, n in zip(yields[0], merged)]
        branches[0][0].yields, branches[1][0].yields = yields
        self.b.emit_op(Op("if", [cond], results, self.pf.loc(node), {},
                          [branches[0][0], branches[1][0]]))
        self.scope.update(block_pointers)
        for name, r in zip(merged, results):
            if BP.split_slot(name) is not None:
                self._bind_carried([name], [r])
            else:
                self.scope[name] = r

    def run_time_ternary(self, node: cst.IfExp, cond: Value) -> Any:
        """`a if cond else b` on a run-time scalar: an `if` op, as Triton's, so that only
        the branch taken runs (its loads, its stores); both branches give values of one
        type (a number takes the other's type), or both give nothing (calls of void
        functions, run for their effects).  Branches that compute nothing are a select."""
        values, regions = [], []
        for branch in (node.body, node.orelse):
            region = Region()
            self.b.regions.append(region)
            try:
                values.append(self.eval(branch))
            finally:
                self.b.regions.pop()
            regions.append(region)
        if all(isinstance(v, Const) and v.value is None for v in values):
            self.b.emit_op(Op("if", [cond], [], self.pf.loc(node), {}, regions))
            return Const(None)
        types_ = {v.type for v in values if isinstance(v, Value)}
        if len(types_) > 1:
            a, c = values
            raise self.error(node, "Ternary expression with dynamic condition has inconsistent "
                                   f"types {a.type} and {c.type}; cast one of them")
        if not any(r.ops for r in regions) and not any(_is_none(v) for v in values):
            return S.where(self.b, cond, *values)  # nothing to run: a select will do
        for i, v in enumerate(values):
            if not (isinstance(v, Value) or S.is_number(v)):
                raise self.error(node, "the branches of a run-time `... if ... else ...` must "
                                       "both give kernel values (or both nothing), got "
                                       f"{self.describe(values[0])} and "
                                       f"{self.describe(values[1])}")
            if isinstance(v, Const):
                self.b.regions.append(regions[i])
                try:
                    values[i] = S.constant(self.b, v.value, next(iter(types_)).dtype) \
                        if types_ else S.to_value(self.b, v)
                finally:
                    self.b.regions.pop()
        if values[0].type != values[1].type:  # two numbers of different kinds
            raise self.error(node, "Ternary expression with dynamic condition has inconsistent "
                                   f"types {values[0].type} and {values[1].type}; cast one of "
                                   "them")
        for region, v in zip(regions, values):
            region.yields.append(v)
        result = Value(values[0].type)
        self.b.emit_op(Op("if", [cond], [result], self.pf.loc(node), {}, regions))
        return result

    # hooks of EarlyReturns ------------------------------------------------------------------
    def scalar_condition(self, test: cst.CSTNode, cond: Value) -> Value:
        """A run-time `if` test as a scalar: a block of one element tests its element (as
        in Triton); a larger block is an error."""
        if cond.type.is_block and cond.type.numel == 1:
            cond = self._at(test, lambda: _method(self, cond, "item", [], {}, test))
        if cond.type.is_block:
            raise self.unsupported(test, "an `if` condition must be a scalar (or a block of "
                                         "one element): the boolean value of a block of more "
                                         "is ambiguous; for blocks use tl.where or a mask")
        return cond

    @staticmethod
    def run_time_in_triton(test: Any) -> bool:
        """A condition tilecc folds that Triton's code generator does not: a number bound
        by assignment (`a = False`), which Triton makes a scalar kernel value."""
        return isinstance(test, AssignedNumber)

    @staticmethod
    def is_static_range(func: Any) -> bool:
        return func == TLRef("tl.static_range")

    @staticmethod
    def wrap_item(item: Any) -> Any:
        return _wrap_item(item)

    @staticmethod
    def describe(x: Any) -> str:
        return _describe(x)

    def _carried(self, node: cst.CSTNode, names: list[str]) -> tuple[list[str], list[Value]]:
        """Names a loop's body assigns that exist before it, with their initial values.
        A name holding something that cannot be carried (None, a string, a descriptor) is
        left as it is: the body may assign it only under a constexpr test that is false here
        (`if HAS_RES: res_ptr += stride` with `res_ptr=None`), which
        `_check_loop_invariants` confirms once the body is traced."""
        carried, inits = [], []
        for name in names:
            if name not in self.scope:
                continue
            v = self.scope[name]
            if isinstance(v, Const):
                if not S.is_number(v):
                    continue
                v = self._at(node, lambda v=v: S.to_value(self.b, v))
            elif isinstance(v, BP.BlockPointer):  # carried as its offsets
                for key, off in BP.loop_slots(name, v):
                    carried.append(key)
                    inits.append(off)
                continue
            elif not isinstance(v, Value):
                continue
            carried.append(name)
            inits.append(v)
        return carried, inits

    def _check_loop_invariants(self, node, carried: list[str], init_scope: dict) -> None:
        """The names the body assigns but the loop does not carry still hold their value
        from before the loop (the body did not in fact assign them)."""
        for name in _assigned_names(node.body):
            if name in carried or name not in init_scope or \
                    isinstance(init_scope[name], BP.BlockPointer):
                continue
            before, now = init_scope[name], self.scope.get(name)
            if now is before or (isinstance(now, Const) and isinstance(before, Const) and
                                 type(now.value) is type(before.value) and
                                 now.value == before.value):
                continue
            if isinstance(before, Const):
                raise self.error(node, f"`{name}` is reassigned in the loop, but it holds "
                                       f"{before.value!r} before it, which is not a kernel "
                                       "value")
            raise self.error(node, f"`{name}` ({_describe(before)}) cannot be reassigned "
                                   "inside a loop")

    def _bind_carried(self, carried: list[str], values: list[Value]) -> None:
        """Bind a loop's carried names (block pointers' offset slots included) to values."""
        for key, v in zip(carried, values):
            slot = BP.split_slot(key)
            if slot is None:
                self.scope[key] = v
                continue
            v.name = key.replace(".", "_")
            self.scope[slot[0]] = BP.rebind(self.scope[slot[0]], slot[1], v)

    def _carried_now(self, node, key: str, init_scope: dict) -> Any:
        slot = BP.split_slot(key)
        if slot is None:
            return self.scope[key]
        name, i = slot
        return self._at(node, lambda: BP.slot_value(name, i, init_scope[name],
                                                     self.scope.get(name)))

    def _close_loop_body(self, node, region: Region, carried: list[str], inits: list[Value],
                         init_scope: dict):
        self._check_loop_invariants(node, carried, init_scope)
        for name, init in zip(carried, inits):
            v = self._carried_now(node, name, init_scope)
            if isinstance(v, Const):
                v = self._at(node, lambda v=v, t=init.dtype: S.cast(self.b, v, t))
            if not isinstance(v, Value) or v.type != init.type:
                got = v.type if isinstance(v, Value) else v
                raise self.error(node, f"loop-carried variable `{name}` has type {init.type} "
                                       f"before the loop but {got} at the end of its body; "
                                       "give it its final type before the loop")
            region.yields.append(v)

    def visit_for(self, node: cst.For) -> None:
        if not isinstance(node.target, cst.Name):
            raise self.error(node.target, "the loop variable must be a plain name")
        it = node.iter
        func = self.eval(it.func) if isinstance(it, cst.Call) else None
        kind = {PyBuiltin("range"): "range", TLRef("tl.range"): "range",
                TLRef("tl.static_range"): "static"}.get(func) if func is not None else None
        if kind is None:
            raise self.error(it, "kernels can only loop over range(...), tl.range(...) "
                                 "or tl.static_range(...)")
        args = [self.eval(a.value) for a in it.args if a.keyword is None]
        kwargs = {a.keyword.value: self.eval(a.value) for a in it.args if a.keyword is not None}
        if not 1 <= len(args) <= 3:
            raise self.error(it, "range takes 1 to 3 arguments")
        lo, hi, step = (Const(0), args[0], Const(1)) if len(args) == 1 else \
            (args[0], args[1], args[2] if len(args) == 3 else Const(1))
        if "step" in kwargs:
            step = kwargs["step"]
        var = node.target.value
        if kind == "static":
            if not all(isinstance(x, Const) and isinstance(x.value, int) for x in (lo, hi, step)):
                raise self.error(it, "tl.static_range bounds must be constexpr integers")
            for i in pybuiltins.range(lo.value, hi.value, step.value):
                self.scope[var] = Const(i)
                self.run_nested(node, node.body.body)
            return
        if isinstance(step, Const) and step.value == 0:
            raise self.error(it, "range() step must not be zero")
        bounds = []
        for x in (lo, hi, step):
            v = self._at(it, lambda x=x: S.to_value(self.b, x))
            if not v.dtype.is_int() or v.type.is_block:
                raise self.error(it, f"range bounds must be integer scalars, got {v.type}")
            bounds.append(v)
        iv_type = D.int32
        for v in bounds:
            iv_type = D.integer_promote(iv_type, v.dtype)
        bounds = [self._at(it, lambda v=v: S.cast(self.b, v, iv_type)) for v in bounds]
        carried, inits = self._carried(node, _assigned_names(node.body))
        iv = Value(Type(iv_type), var)
        region = Region([iv] + [Value(v.type, n) for v, n in zip(inits, carried)])
        outer = dict(self.scope)
        self.scope[var] = iv
        self._bind_carried(carried, region.args[1:])
        self.b.regions.append(region)
        try:
            self.run_nested(node, node.body.body)
            self._close_loop_body(node, region, carried, inits, outer)
        finally:
            self.b.regions.pop()
        results = [Value(v.type, n) for v, n in zip(inits, carried)]
        step_sign = (1 if step.value > 0 else -1) if isinstance(step, Const) else 1
        self.b.emit_op(Op("for", bounds + inits, results, self.pf.loc(node),
                          {"step_sign": step_sign}, [region]))
        self.scope = outer
        self._bind_carried(carried, results)

    def visit_while(self, node: cst.While) -> None:
        if node.orelse is not None:
            raise self.error(node, "`while ... else` is not supported")
        carried, inits = self._carried(node, _assigned_names(node.body))
        outer = dict(self.scope)
        before = Region([Value(v.type, n) for v, n in zip(inits, carried)])
        self._bind_carried(carried, before.args)
        self.b.regions.append(before)
        try:
            cond = self._at(node.test, lambda: S.truthy(self.b, self.eval(node.test)))
        finally:
            self.b.regions.pop()
        if isinstance(cond, Const):
            if cond.value:
                raise self.error(node.test, "`while True` needs `break`, which kernels do not "
                                            "support; loop on a run-time condition")
            self.scope = outer  # the loop never runs
            return
        if cond.type.is_block:
            raise self.error(node.test, "a `while` condition must be a scalar")
        before.yields = [cond]
        body = Region([Value(v.type, n) for v, n in zip(inits, carried)])
        self.scope = dict(outer)
        self._bind_carried(carried, body.args)
        self.b.regions.append(body)
        try:
            self.run_nested(node, node.body.body)
            self._close_loop_body(node, body, carried, inits, outer)
        finally:
            self.b.regions.pop()
        results = [Value(v.type, n) for v, n in zip(inits, carried)]
        self.b.emit_op(Op("while", inits, results, self.pf.loc(node), {},
                          [before, body]))
        self.scope = outer
        self._bind_carried(carried, results)

    # expressions --------------------------------------------------------------------------------
    def eval(self, node: cst.BaseExpression) -> Any:
        return self._at(node, lambda: self._eval(node))

    def lookup(self, node: cst.Name) -> Any:
        name = node.value
        if name in self.scope:
            return self.scope[name]
        if name in ("True", "False", "None"):
            return Const({"True": True, "False": False, "None": None}[name])
        if name in self.globals:
            ref = reference_for(self.globals[name])
            if isinstance(ref, (Const, TLRef, OtherModule, HelperRef, PyBuiltin)):
                return ref
            raise self.error(node, f"global `{name}` ({type(ref).__name__}) cannot be used in a "
                                   "kernel; pass it as an argument or wrap it in tl.constexpr")
        if name in _PY_BUILTINS:
            return PyBuiltin(name)
        raise self.error(node, f"name `{name}` is not defined", "NameError")

    def _eval(self, node: cst.BaseExpression) -> Any:
        if isinstance(node, cst.Name):
            return self.lookup(node)
        if isinstance(node, (cst.Integer, cst.Float)):
            return Const(node.evaluated_value)
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
            return Const(node.evaluated_value)
        if isinstance(node, cst.Attribute):
            return self.attribute(node)
        if isinstance(node, cst.Call):
            return self.call(node)
        if isinstance(node, cst.BinaryOperation):
            fn = _BINOPS.get(type(node.operator).__name__)
            if isinstance(node.operator, cst.Power):
                return self.power(node)
            if fn is None:
                raise self.error(node, f"operator `{node.operator.__class__.__name__}` is not "
                                       "supported")
            return self.binop(fn, self.eval(node.left), self.eval(node.right))
        if isinstance(node, cst.UnaryOperation):
            x = self.eval(node.expression)
            op = type(node.operator).__name__
            if op == "Plus":
                return x
            if op == "Not" and isinstance(x, Const):  # any constexpr: `not None`, `not ACT`
                return Const(not x.value)
            return S.unary(self.b, {"Minus": "neg", "BitInvert": "invert", "Not": "not"}[op],
                           self._value_or_const(node.expression, x))
        if isinstance(node, cst.BooleanOperation):
            return self.boolean_operation(node)
        if isinstance(node, cst.Comparison):
            return self.compare(node)
        if isinstance(node, (cst.Tuple, cst.List)):
            # Constant items are stored as plain Python values, so that a tuple of
            # constexprs equals the same Python tuple (`x.shape == (BLOCK,)`) and
            # hints take `(16,)`; unpacking and indexing wrap them back in Const.
            items = []
            for e in node.elements:
                v = _unwrap_const(self.eval(e.value))
                if isinstance(e, cst.StarredElement):  # (*x.shape, 1)
                    if not isinstance(v, tuple):
                        raise self.error(e, "only constexpr tuples can be unpacked with `*`")
                    items.extend(v)
                else:
                    items.append(v)
            return Const(tuple(items))
        if isinstance(node, cst.IfExp):
            test = S.truthy(self.b, self.eval(node.test))
            if isinstance(test, Const):
                return self.eval(node.body if test.value else node.orelse)
            if test.type.is_block and test.type.numel > 1:  # elementwise, as tl.where
                return S.where(self.b, test, self.eval(node.body), self.eval(node.orelse))
            return self.run_time_ternary(node, self.scalar_condition(node.test, test))
        if isinstance(node, cst.Subscript):
            base = self.eval(node.value)
            if isinstance(base, Const) and isinstance(base.value, tuple) and \
                    len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
                idx = self.eval(node.slice[0].slice.value)
                if isinstance(idx, Const) and isinstance(idx.value, int):
                    item = base.value[idx.value]
                    return _wrap_item(item)
            if isinstance(base, Const) and isinstance(base.value, tuple) and \
                    len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice):
                sl = node.slice[0].slice  # x.shape[:-1]: a constexpr tuple's slice
                parts = [None if p is None else self.eval(p) for p in (sl.lower, sl.upper,
                                                                        sl.step)]
                if all(p is None or _is_none(p) or (isinstance(p, Const) and
                                                    isinstance(p.value, int)) for p in parts):
                    bounds = [None if p is None or _is_none(p) else p.value for p in parts]
                    return Const(base.value[slice(*bounds)])
            if isinstance(base, Value):
                return self.index_block(node, base)
            raise self.error(node, "only blocks (x[None, :]) and constexpr tuples can be indexed")
        raise self.unsupported(node, f"{type(node).__name__} expressions are not supported in "
                                     "kernels")

    def boolean_operation(self, node: cst.BooleanOperation) -> Any:
        """`and` / `or` as Triton evaluates them: operands left to right; a constexpr that
        decides the result (False for `and`, True for `or`) is the result, whatever ran
        before it; one that does not is dropped; the kernel values left are combined."""
        is_and = isinstance(node.operator, cst.And)

        def decides(x: Const) -> bool:
            return bool(x.value) != is_and

        left = self.eval(node.left)
        if isinstance(left, Const):
            return left if decides(left) else self.eval(node.right)
        right = self.eval(node.right)
        if isinstance(right, Const):
            return right if decides(right) else left
        if any(isinstance(x, Value) and x.type.is_block for x in (left, right)):
            # Triton's warning, at the same place
            where = self.pf.loc(node)
            warnings.warn_explicit("Logical operators 'and' and 'or' are deprecated for "
                                   "non-scalar tensors; please use '&' or '|' instead",
                                   UserWarning, where.file, where.line)
        return S.logical(self.b, "land" if is_and else "lor", left, right)

    def power(self, node: cst.BinaryOperation) -> Const:
        """`**` of two constexprs (Triton's constexpr.__pow__); blocks have no `**`."""
        a, c = self.eval(node.left), self.eval(node.right)
        if isinstance(a, Const) and isinstance(c, Const):
            return Const(a.value ** c.value)
        raise self.error(node, "`**` takes constexpr operands only (as in Triton); for kernel "
                               "values use tl.exp2(y * tl.log2(x)), libdevice.pow, or x * x")

    def index_block(self, node: cst.Subscript, x: Value) -> Value:
        """x[None, :], x[:, None], x[None]: `None` adds an axis of size 1, `:` keeps one."""
        from tilecc.transpiler.builtins_blocks import expand_dims

        axis, kept = 0, 0
        for el in node.slice:
            sl = el.slice
            if isinstance(sl, cst.Index) and not isinstance(sl.value, cst.Ellipsis) and \
                    _is_none(self.eval(sl.value)):
                x = expand_dims(self.b, x, axis)
            elif isinstance(sl, cst.Slice) and all(
                    part is None or _is_none(self.eval(part))
                    for part in (sl.lower, sl.upper, sl.step)):
                kept += 1
            else:
                # as Triton (which has no `...` either): a ValueError at the index
                raise self.error(el, f"unsupported tensor index: `{self.pf.code(el)}`; blocks "
                                     "are indexed only with None and `:` (x[:, None], "
                                     "x[None, :])", "ValueError")
            axis += 1
        if kept > len(x.type.shape) - (axis - kept):
            raise self.error(node, f"too many `:` for a block of rank {len(x.type.shape)}")
        return x

    def _value_or_const(self, node, x):
        if isinstance(x, (Value,)) or S.is_number(x):
            return x
        raise self.error(node, f"expected a kernel value, got {_describe(x)}")

    def binop(self, fn: str, a: Any, c: Any) -> Any:
        for x in (a, c):
            if not (isinstance(x, Value) or S.is_number(x)):
                raise TypeError(f"operator needs kernel values or numbers, got {_describe(x)}")
        return S.binary(self.b, fn, a, c)

    def compare(self, node: cst.Comparison) -> Any:
        left = self.eval(node.left)
        result = None
        for target in node.comparisons:
            right = self.eval(target.comparator)
            op = type(target.operator).__name__
            if op in ("Is", "IsNot") and (_is_none(left) or _is_none(right)):
                # a kernel value, a descriptor, a function... is never None (`if b_ptr is
                # not None:` with an array)
                same = _is_none(left) and _is_none(right)
                r = Const(same == (op == "Is"))
            elif op in ("Is", "IsNot"):
                if not (isinstance(left, Const) and isinstance(right, Const)):
                    raise TypeError("`is` compares constexprs only (e.g. `other is None`)")
                r = Const((left.value is right.value) == (op == "Is"))
            elif op in ("In", "NotIn"):
                if not (isinstance(left, Const) and isinstance(right, Const)):
                    raise TypeError("`in` tests constexprs only (e.g. `ACT in (\"relu\", "
                                    "\"gelu\")`)")
                r = Const((left.value in right.value) == (op == "In"))
            elif op in _CMPOPS and isinstance(left, Const) and isinstance(right, Const):
                # constexprs of any kind (strings, dtypes, None) compare as in Python,
                # e.g. `if ACTIVATION == "relu":` or `if x.dtype == tl.float16:`
                r = Const(S.compare_constants(_CMPOPS[op], left.value, right.value))
            elif op in _CMPOPS:
                r = S.compare(self.b, _CMPOPS[op], self._value_or_const(node.left, left),
                              self._value_or_const(target.comparator, right))
            else:
                raise TypeError(f"comparison `{op}` is not supported in kernels")
            result = r if result is None else S.logical(self.b, "land", result, r)
            left = right
        return result

    def attribute(self, node: cst.Attribute) -> Any:
        base = self.eval(node.value)
        attr = node.attr.value
        if isinstance(base, (TLRef, OtherModule)):
            ref = _attribute_of_ref(base, attr)
            if isinstance(ref, TLRef):
                return _tl_member(ref, node, self)
            if isinstance(ref, (Const, HelperRef)):
                return ref
            raise self.error(node, f"`{self.pf.code(node)}` cannot be used in a kernel")
        if isinstance(base, Value):
            return self.value_attribute(base, attr, node)
        if isinstance(base, TD.TensorDescriptor):
            got = TD.attribute(base, attr)
            if got is not None:
                return got
            if attr in TD.METHODS:
                return Method(base, attr)
            raise self.error(node, f"a tensor descriptor has no attribute `{attr}`",
                             "AttributeError")
        if isinstance(base, Const):
            if isinstance(base.value, (D.dtype, D.pointer_type, D.block_type)) and \
                    hasattr(base.value, attr):
                # Methods stay uncalled until the call: `x.dtype.is_floating()` as in
                # Triton (a bound method of a dtype is called in `call` below).
                return Const(getattr(base.value, attr))
            if isinstance(base.value, type) and issubclass(base.value, enum.Enum) and \
                    attr in base.value.__members__:  # tl.PropagateNan.ALL
                return Const(base.value[attr])
            if S.is_number(base) and attr in _CONSTEXPR_METHODS:  # `BLOCK.to(tl.float32)`
                return Method(S.to_value(self.b, base), attr)
            if isinstance(base.value, _PLAIN_CONSTEXPRS) and not attr.startswith("_") and \
                    hasattr(base.value, attr):
                # as Triton, a constexpr's Python attributes (`ACT.upper()`, `N.bit_length()`)
                return Const(getattr(base.value, attr))
            if _is_scalar_constexpr(base) and attr in ("value", "type"):
                # Triton's constexpr object itself answers these two
                return base if attr == "value" else Const(language_core.constexpr_type(
                    base.value))
            if isinstance(base, AssignedNumber) and attr == "dtype":
                return Const(D.literal_dtype(base.value))
            if _is_scalar_constexpr(base):
                hint = (" (a constexpr is its Python value, which has no dtype; "
                        "tl.to_tensor(x).dtype is the dtype it takes as a kernel value)"
                        if attr == "dtype" else "")
                raise self.error(node, f"`{self.pf.code(node)}`: {type(base.value).__name__!r} "
                                       f"object has no attribute {attr!r}{hint}",
                                 "AttributeError")
        if isinstance(base, Const) and isinstance(base.value, (D.dtype, D.pointer_type,
                                                               D.block_type)):
            raise self.error(node, f"{base.value!r} has no attribute `{attr}`", "AttributeError")
        raise self.error(node, f"`{self.pf.code(node)}` is not supported in kernels",
                         "AttributeError")

    def value_attribute(self, base: Value, attr: str, node: cst.CSTNode) -> Any:
        """`x.dtype`, `x.shape`, `x.type`, `x.numel`, `x.T`, or a method to call."""
        if attr == "dtype":
            return Const(base.dtype)
        if attr == "shape":
            return Const(base.type.shape)
        if attr == "type":  # a block's block_type; a scalar's dtype, as in Triton
            return Const(D.block_type(base.dtype, base.type.shape) if base.type.is_block
                         else base.dtype)
        if attr == "numel":
            return Const(base.type.numel)
        if attr == "T":
            return _method(self, base, "permute", [Const((1, 0))], {}, node)  # as Triton
        return Method(base, attr)

    def call(self, node: cst.Call) -> Any:
        func = self.eval(node.func)
        args, kwargs = [], {}
        for a in node.args:
            if a.star:
                raise self.error(a, "*args / **kwargs are not supported in kernel calls")
            v = self.eval(a.value)
            if a.keyword is not None:
                kwargs[a.keyword.value] = v
            else:
                args.append(v)
        from tilecc.transpiler import builtins as B
        self.current_call = node  # for errors raised while tracing a combine_fn
        if isinstance(func, TLRef):
            return B.call_builtin(self, func.name, args, kwargs, node)
        if isinstance(func, Method):
            return B.call_method(self, func.value, func.name, args, kwargs, node)
        if isinstance(func, Const) and isinstance(getattr(func.value, "__self__", None),
                                                  (D.dtype, D.pointer_type, D.block_type,
                                                   *_PLAIN_CONSTEXPRS)):
            if not all(isinstance(a, Const) for a in [*args, *kwargs.values()]):
                raise self.error(node, f"`{self.pf.code(node.func)}` takes constexpr arguments")
            return _wrap_item(func.value(*[a.value for a in args],
                                         **{k: v.value for k, v in kwargs.items()}))
        if isinstance(func, Const) and (isinstance(func.value, (
                language_core.ConstexprFunction, language_core.BoundConstexprFunction))
                or type(func.value).__name__ == "ConstexprFunction"):
            if not all(isinstance(a, Const) for a in [*args, *kwargs.values()]):
                raise self.error(node, f"`{self.pf.code(node.func)}` is a constexpr function: "
                                       "it takes constexpr arguments")
            return self._at(node, lambda: _wrap_item(func.value(
                *[a.value for a in args], **{k: v.value for k, v in kwargs.items()})))
        if isinstance(func, PyBuiltin) and func.name in _COMPILE_TIME_BUILTINS:
            return self._at(node, lambda: self.compile_time_builtin(func.name, args, kwargs,
                                                                    node))
        if isinstance(func, Const) and callable(func.value) and \
                isinstance(reference_for(func.value), HelperRef):  # a @jit passed as constexpr
            return self.inline(reference_for(func.value).fn, args, kwargs, node)
        if isinstance(func, PyBuiltin) and func.name in ("float", "int", "bool"):
            # float("inf"), int(BLOCK / 2): conversions of compile-time values only
            if len(args) != 1 or kwargs or not isinstance(args[0], Const):
                to = {"float": "float32", "int": "int32", "bool": "int1"}[func.name]
                raise self.error(node, f"{func.name}() takes one compile-time value in kernels; "
                                       f"convert kernel values with x.to(tl.{to})")
            return Const(getattr(pybuiltins, func.name)(args[0].value))
        if isinstance(func, PyBuiltin):
            if func.name in ("min", "max") and len(args) >= 2 and not kwargs:
                out = args[0]
                for x in args[1:]:
                    out = S.min_max(self.b, func.name, out, x)
                return out
            raise self.error(node, f"{func.name}() is only supported as a loop range "
                             if func.name == "range" else f"{func.name}() takes two or more "
                                                          "scalars in kernels")
        if isinstance(func, HelperRef):
            return self.inline(func.fn, args, kwargs, node)
        raise self.error(node.func, f"`{self.pf.code(node.func)}` is not callable in a kernel")

    def compile_time_builtin(self, name: str, args: list, kwargs: dict, node: cst.Call) -> Any:
        """Python's getattr, hasattr, isinstance and len on compile-time values, and print,
        which is tl.device_print in a kernel (as in Triton)."""
        from tilecc.transpiler import builtins as B

        if name == "print":
            return B.call_builtin(self, "tl.device_print", args, kwargs, node)
        if name == "len":
            if len(args) != 1 or kwargs:
                raise TypeError("len() takes one argument")
            x = args[0]
            if isinstance(x, Value) and x.type.is_block:
                return Const(x.type.shape[0])
            if isinstance(x, Const) and isinstance(x.value, (tuple, list, str)):
                return Const(len(x.value))
            raise TypeError(f"len() of {_describe(x)}, which has no length")
        if kwargs:
            raise TypeError(f"{name}() takes no keyword arguments")
        if name == "isinstance":
            if len(args) != 2 or not isinstance(args[1], (Const, TLRef, PyBuiltin)):
                raise TypeError("isinstance() takes a value and a class")
            return Const(KT.is_instance(args[0], _class_of(args[1])))
        if len(args) not in (2, 3) or not all(isinstance(a, Const) for a in args[1:]) or \
                not isinstance(args[1].value, str) or (name == "hasattr" and len(args) != 2):
            raise TypeError(f"{name}() takes an object and a constant attribute name")
        obj, attr = args[0], args[1].value
        try:
            if isinstance(obj, (TLRef, OtherModule)):
                found = _attribute_of_ref(obj, attr)
                if isinstance(found, TLRef):
                    found = _tl_member(found, node, self)
                if found is None:
                    raise AttributeError(attr)
            elif isinstance(obj, Value):
                found = self.value_attribute(obj, attr, node)
                if isinstance(found, Method) and attr not in _TENSOR_MEMBERS:
                    raise AttributeError(attr)
            elif isinstance(TD.unwrap(obj), TD.TensorDescriptor):
                desc = TD.unwrap(obj)
                found = TD.attribute(desc, attr) or (Method(desc, attr) if attr in TD.METHODS
                                                     else None)
                if found is None:
                    raise AttributeError(attr)
            elif isinstance(obj, Const):
                found = _wrap_item(getattr(obj.value, attr))
            else:
                raise AttributeError(attr)
        except (AttributeError, CompilationError):
            if name == "hasattr":
                return Const(False)
            if len(args) == 3:
                return args[2]
            raise AttributeError(f"{_describe(obj)} has no attribute {attr!r}") from None
        return Const(True) if name == "hasattr" else found

    def inline(self, fn: Callable, args: list, kwargs: dict, node: cst.Call) -> Any:
        if self.depth > 32:
            raise self.error(node, "helper calls nest too deeply (recursion is not supported)")
        try:
            bound = bind(fn, args, kwargs, f"{fn.__name__}()")
        except TypeError as e:
            raise self.error(node, str(e), "TypeError") from None
        bound.apply_defaults()
        pf = parse_function(fn)
        if isinstance(self.pf, CalledFrom):  # inside the language: still the user's call
            pf = CalledFrom.of(pf, self.pf.call)
        elif _is_language(fn):
            pf = CalledFrom.of(pf, self.pf.loc(node))
        tracer = FunctionTracer(pf, self.b, self.kernel, self.depth + 1)
        for name, v in bound.arguments.items():  # (a default may be a tl.constexpr)
            tracer.scope[name] = _wrap_item(v.value if isinstance(v, ConstexprClass) else v)
        try:
            tracer.run_body(pf.funcdef.body.body)
        except Return as r:
            return r.value
        except CompilationError as e:
            # a misuse of the language's own functions (tl.rand's seed...) is reported at
            # the user's call, not at a line of tilecc's library
            if _is_language(fn) and not _is_language(self.pf.fn) and e.loc is not None:
                raise self.error(node, f"tl.{fn.__name__}(): {e.message}") from None
            raise
        return Const(None)


def _tl_member(ref: TLRef, node: cst.CSTNode, tracer: FunctionTracer) -> Any:
    if ref.name == "tl":  # the language module itself, reached as `triton.language`
        return ref
    short = ref.name[3:] if ref.name.startswith("tl.") else ref.name
    if short in D.BY_LONG_NAME:
        return Const(D.BY_LONG_NAME[short])
    if isinstance(getattr(language_core, short, None), D.pointer_type):  # tl.pi32_t
        return Const(getattr(language_core, short))
    if "libdevice" in short.split("."):  # tl.extra.cuda.libdevice.tanh → libdevice.tanh
        return _libdevice_member(short, node, tracer)
    vendor = _vendor_member(short, node, tracer)  # tl.extra.cuda.smid → cuda.smid
    if vendor is not None:
        return vendor
    if short in ("math", "extra", "cuda", "hip", "random", "core", "standard") or "." in short:
        if "." not in short:
            return TLRef("tl")
        short = short.rsplit(".", 1)[1]
        return _language_function(short) or TLRef("tl." + short)
    own = _language_function(short)
    if own is not None:
        return own
    if short == "PropagateNan":
        return Const(language_core.PropagateNan)
    if short == "TRITON_MAX_TENSOR_NUMEL":
        return Const(language_core.TRITON_MAX_TENSOR_NUMEL)
    from tilecc.transpiler.builtins import is_builtin
    if short in _TYPE_NAMES or is_builtin(short):
        return ref
    raise tracer.error(node, not_supported(short), "AttributeError")


def _method(tracer: FunctionTracer, value: Value, name: str, args: list, kwargs: dict,
            node: cst.CSTNode) -> Any:
    from tilecc.transpiler import builtins as B

    return B.call_method(tracer, value, name, args, kwargs, node)


_CONSTEXPR_METHODS = ("to", "logical_and", "logical_or")
_TENSOR_MEMBERS = frozenset((*TENSOR_METHODS, "to"))  # hasattr(x, "sum") ...
# constexprs whose Python attributes and methods a kernel may use, at compile time
_PLAIN_CONSTEXPRS = (bool, int, float, str, tuple)


# Triton's type names: isinstance() tests and annotations (`tl.constexpr`, `tl.tensor`)
_TYPE_NAMES = (*KT.TL_CLASSES, "void")

_PY_BUILTINS = ("range", "min", "max", "float", "int", "bool", "getattr", "hasattr",
                "isinstance", "len", "print")
_COMPILE_TIME_BUILTINS = ("getattr", "hasattr", "isinstance", "len", "print")


def _class_of(cls: Any) -> Any:
    """isinstance()'s second argument as `kernel_types.is_instance` takes it."""
    if isinstance(cls, TLRef):
        return cls.name
    if isinstance(cls, PyBuiltin) and cls.name in ("int", "float", "bool"):
        return getattr(pybuiltins, cls.name)
    if isinstance(cls, Const) and isinstance(cls.value, tuple):
        return tuple(_class_of(_wrap_item(c)) for c in cls.value)
    return cls.value if isinstance(cls, Const) else cls


def _is_scalar_constexpr(x: Any) -> bool:
    """A constexpr Triton keeps in its `constexpr` wrapper (a number, string or None; not
    a dtype or a tuple, which are objects of their own)."""
    return isinstance(x, Const) and isinstance(x.value, (bool, int, float, str, type(None)))


def _is_none(x: Any) -> bool:
    return isinstance(x, Const) and x.value is None


def _vendor_member(short: str, node: cst.CSTNode, tracer: FunctionTracer) -> TLRef | None:
    """`tl.extra.cuda` / `tl.extra.hip` and their functions (`extra.cuda.utils.smid`, as
    Triton's modules spell it, too): the vendor builtins, registered as "cuda.smid"; None
    for names outside them."""
    import importlib

    parts = short.split(".")
    if parts[0] == "extra":
        parts = parts[1:]
        if not parts:
            return TLRef("tl.extra")
    if not parts or parts[0] not in ("cuda", "hip"):
        return None
    vendor, rest = parts[0], [p for p in parts[1:] if p not in ("utils", "gdc")]
    if not rest:
        return TLRef(f"tl.extra.{vendor}")
    module = importlib.import_module(f"tilecc.language.extra.{vendor}")
    if len(rest) > 1 or rest[0] not in module.__all__:
        names = [n for n in module.__all__ if n != "libdevice"]
        raise tracer.error(node, f"`tl.extra.{vendor}.{'.'.join(rest)}` is not in Triton's "
                           f"tl.extra.{vendor} (which has {', '.join(names)} and libdevice)"
                           f"{did_you_mean(rest[0], names, f'tl.extra.{vendor}.')}",
                           "AttributeError")
    return TLRef(f"tl.{vendor}.{rest[0]}")


def _libdevice_member(short: str, node: cst.CSTNode, tracer: FunctionTracer) -> TLRef:
    from tilecc.language.extra.libdevice_table import TABLE

    parts = short.split(".")
    rest = parts[parts.index("libdevice") + 1:]
    if not rest:
        return TLRef("tl.libdevice")
    if len(rest) > 1 or rest[0] not in TABLE:
        raise tracer.error(node, f"`libdevice.{'.'.join(rest)}` is not a libdevice function"
                           f"{did_you_mean(rest[0], TABLE, 'libdevice.')}")
    return TLRef("tl.libdevice." + rest[0])


def _unwrap_const(x: Any) -> Any:
    return x.value if isinstance(x, Const) else x


def _wrap_item(item: Any) -> Any:
    """A Python value (an item of a compile-time tuple, a constexpr argument, a helper's
    default) as the tracer handles values: a @jit function as a helper, so that it can be
    called or be a combine function wherever it came from."""
    if isinstance(item, (Value, Const, TLRef, OtherModule, HelperRef, PyBuiltin, Method,
                         BP.BlockPointer, TD.TensorDescriptor)):
        return item
    if callable(item) and isinstance(reference_for(item), HelperRef):
        return reference_for(item)
    return Const(item)


def _describe(x: Any) -> str:
    if isinstance(x, Const):
        return repr(x.value)
    if isinstance(x, TLRef):
        return x.name
    if isinstance(x, TD.TensorDescriptor):
        return "a tensor descriptor (read and write it with desc.load / desc.store)"
    return type(x).__name__


_BINOPS = {"Add": "add", "Subtract": "sub", "Multiply": "mul", "Divide": "div",
           "FloorDivide": "floordiv", "Modulo": "rem", "BitAnd": "and", "BitOr": "or",
           "BitXor": "xor", "LeftShift": "shl", "RightShift": "shr"}
_CMPOPS = {"LessThan": "lt", "LessThanEqual": "le", "GreaterThan": "gt",
           "GreaterThanEqual": "ge", "Equal": "eq", "NotEqual": "ne"}


def _small_statements_text(pf: ParsedFunction, statements) -> str:
    """`a = 1; b = 2` as written (each statement's code ends with its own `;`)."""
    return "; ".join(pf.code(s).rstrip(";").rstrip() for s in statements)


def _assigned_names(node: cst.CSTNode) -> list[str]:
    """Names bound by assignments anywhere inside `node`, in order of first appearance."""
    found: list[str] = []

    class Collector(cst.CSTVisitor):
        def _add(self, target):
            if isinstance(target, cst.Name) and target.value not in found:
                found.append(target.value)
            elif isinstance(target, (cst.Tuple, cst.List)):
                for el in target.elements:
                    self._add(el.value)

        def visit_Assign(self, n):
            for t in n.targets:
                self._add(t.target)

        def visit_AugAssign(self, n):
            self._add(n.target)

        def visit_AnnAssign(self, n):
            self._add(n.target)

        def visit_For(self, n):
            self._add(n.target)

    node.visit(Collector())
    return found


# --- entry point ---------------------------------------------------------------------------------

def parse(fn: Callable, specs: list[ArgSpec], options, target: Target = CUDA) -> Kernel:
    """Trace `fn` under the specialization `specs` into a tile IR kernel compiled with
    `options` (the runtime's CompileOptions: num_warps, num_stages, debug, maxnreg — the
    compiler's value —, enable_fp_fusion) for `target` (which the vendor builtins read:
    tl.extra.cuda.num_threads() is num_warps x its warp size)."""
    pf = parse_function(fn)
    body = Region()
    kernel = Kernel(fn.__name__, [], body, pf.loc(pf.funcdef.name),
                    num_warps=options.num_warps, num_stages=options.num_stages,
                    debug=options.debug, maxnreg=options.maxnreg,
                    fp_fusion=options.enable_fp_fusion)
    emitter = Emitter(target)
    emitter.regions.append(body)
    tracer = FunctionTracer(pf, emitter, kernel)
    read_only = const_params(fn)
    for spec in specs:
        if spec.is_constexpr:
            kernel.params.append(Param(spec.name, None, spec.constexpr, is_constexpr=True))
            tracer.scope[spec.name] = _wrap_item(spec.constexpr)
        elif spec.equals_one:  # Triton specializes integer arguments equal to 1
            kernel.params.append(Param(spec.name, None, 1, is_constexpr=True))
            tracer.scope[spec.name] = Const(1)
        else:
            t = spec.type
            if spec.name in read_only and t.is_ptr():
                t = D.pointer_type(t.element_ty, const=True)
            v = Value(Type(t), spec.name)
            kernel.params.append(Param(spec.name, v, divisible_by_16=spec.divisible_by_16))
            tracer.scope[spec.name] = v
    tracer.b.loc = kernel.loc  # what host-side descriptors emit belongs to the `def` line
    for i, spec in enumerate(specs):  # host-side descriptors: from their parts
        d = spec.descriptor
        if d is not None:
            parts = [tracer.scope.pop(s.name) for s in specs[i:i + 1 + 2 * d.ndim]]
            try:
                tracer.scope[d.param] = TD.from_arguments(
                    tracer, parts, d, kernel.params[i + 1 + d.ndim:])
            except (TypeError, ValueError) as e:
                raise CompilationError(f"argument `{d.param}`: {e}", kernel.loc) from None
    tracer.b.loc = None
    try:
        tracer.run_body(pf.funcdef.body.body)
    except Return as r:
        if not (isinstance(r.value, Const) and r.value.value is None):
            where = tracer.pf.loc(r.node) if r.node is not None else kernel.loc
            raise CompilationError("a kernel cannot return a value: store results through a "
                                   "pointer argument (tl.store(out_ptr + offsets, value)) and "
                                   "end with a bare `return`, or none", where) from None
    return kernel
