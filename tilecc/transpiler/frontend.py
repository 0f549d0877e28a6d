"""Frontend: a `@tilecc.jit` Python function, specialized, → tile IR (`parse`).

The function's source is parsed with libcst (positions and comments kept).  Names
resolve by qualified name through the function's globals, so `triton.language` and
`tilecc.language` spell the same builtins.  Constexprs fold while tracing: constexpr
`if`s keep one branch, `tl.static_range` unrolls, `@jit` helpers inline.  Every user
error becomes a `CompilationError` at the offending node.

This module owns the `Emitter`, the `FunctionTracer`'s state and its errors, and `parse`;
the tracer's work is in its mixins, one module each:

    frontend_source       reading a function's source (positions, parameters' annotations)
    frontend_names        what a name means in a kernel (`tl` members, globals, modules)
    frontend_statements   statements, assignments, `if`, run-time ternaries
    frontend_loops        `for` / `while` loops and their carried values
    frontend_returns      early `return`s
    frontend_expressions  expressions other than calls
    frontend_calls        calls: builtins, methods, compile-time builtins, helper inlining
"""

from __future__ import annotations

from typing import Any, Callable

import libcst as cst

from tilecc.errors import CompilationError, Loc, UnsupportedLanguageConstruct
from tilecc.language import core as language_core
from tilecc.language import dtypes as D
from tilecc.transpiler import builtins_descriptor as TD
from tilecc.transpiler.frontend_calls import Calls
from tilecc.transpiler.frontend_expressions import Expressions
from tilecc.transpiler.frontend_loops import Loops
from tilecc.transpiler.frontend_names import canonical_name, scope_of, wrap_item  # noqa: F401
from tilecc.transpiler.frontend_returns import EarlyReturns, Return
from tilecc.transpiler.frontend_source import (  # noqa: F401  (declared_params: re-exported)
    ParsedFunction, const_params, declared_params, parse_function)
from tilecc.transpiler.frontend_statements import Statements
from tilecc.transpiler.ir import Kernel, Op, Param, Region, Type, Value
from tilecc.transpiler.semantic import Const
from tilecc.transpiler.specs import ArgSpec, ParamDecl  # noqa: F401  (re-exported)
from tilecc.transpiler.target import CUDA, Target


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


class FunctionTracer(Statements, Loops, Expressions, Calls, EarlyReturns):
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
            tracer.scope[spec.name] = wrap_item(spec.constexpr)
        elif spec.equals_one:  # Triton specializes integer arguments equal to 1
            kernel.params.append(Param(spec.name, None, 1, is_constexpr=True))
            tracer.scope[spec.name] = Const(1)
        else:
            t = spec.type
            if spec.name in read_only and t.is_ptr():
                t = D.pointer_type(t.element_ty, const=True)
            v = Value(Type(t), spec.name)
            kernel.params.append(Param(spec.name, v, divisible_by_16=spec.divisible_by_16,
                                       divisor=spec.divisor))
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
