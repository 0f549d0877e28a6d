"""What a name means inside a kernel, before anything is traced: the references that are
not kernel values (`TLRef` for a name of the `tl` namespace, by canonical name, so that
`triton.language` and `tilecc.language` spell the same builtins; `OtherModule`,
`PyBuiltin`, `Method`), `reference_for` a global or a module's attribute, `scope_of` a
function, the members of `tl` (`tl_member`: dtypes, vendor and libdevice functions, the
language's functions written in `tl`), and `wrap_item` / `describe` / `is_none` for the
values the tracer holds.
"""

from __future__ import annotations

import builtins as pybuiltins
import enum
import types
from dataclasses import dataclass
from typing import Any, Callable

import libcst as cst

from tilecc.language import core as language_core
from tilecc.language import dtypes as D
from tilecc.language import microscaling as language_microscaling
from tilecc.language import random as language_random
from tilecc.language.core import KernelFunction, constexpr as ConstexprClass
from tilecc.transpiler import builtins_block_ptr as BP
from tilecc.transpiler import builtins_descriptor as TD
from tilecc.transpiler import kernel_types as KT
from tilecc.transpiler.builtin_registry import did_you_mean, not_supported
from tilecc.transpiler.ir import Value
from tilecc.transpiler.semantic import Const, HelperRef


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
    if any(obj is getattr(pybuiltins, n) for n in PY_BUILTINS):
        return PyBuiltin(obj.__name__)
    return obj  # left for the caller to reject with a message


def is_language(fn: Callable) -> bool:
    """`fn` is one of the language's own functions written in `tl` (tilecc.language.*)."""
    return (getattr(fn, "__module__", "") or "").startswith("tilecc.language")


def _language_function(short: str) -> HelperRef | None:
    """`tl.<short>` where the language writes it in `tl` itself (the random numbers of
    `tilecc.language.random`, `tl.dot_scaled`): traced like a user's helper."""
    for module in (language_random, language_microscaling):
        if short in module.FUNCTIONS:
            return HelperRef(getattr(module, short).fn)
    return None


def resolve_static(fn: Callable, node: cst.BaseExpression) -> Any:
    """Resolve a Name/Attribute chain through fn's globals without tracing anything."""
    if isinstance(node, cst.Name):
        g = scope_of(fn)
        return reference_for(g[node.value]) if node.value in g else None
    if isinstance(node, cst.Attribute):
        base = resolve_static(fn, node.value)
        return attribute_of_ref(base, node.attr.value)
    return None


def attribute_of_ref(base: Any, attr: str) -> Any:
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


# Triton's type names: isinstance() tests and annotations (`tl.constexpr`, `tl.tensor`)
_TYPE_NAMES = (*KT.TL_CLASSES, "void")


# constexprs whose Python attributes and methods a kernel may use, at compile time
PLAIN_CONSTEXPRS = (bool, int, float, str, tuple)
PY_BUILTINS = ("range", "min", "max", "float", "int", "bool", "getattr", "hasattr",
               "isinstance", "len", "print")


# --- members of `tl` ------------------------------------------------------------------

def tl_member(ref: TLRef, node: cst.CSTNode, tracer: Any) -> Any:
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


def _vendor_member(short: str, node: cst.CSTNode, tracer: Any) -> TLRef | None:
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


def _libdevice_member(short: str, node: cst.CSTNode, tracer: Any) -> TLRef:
    from tilecc.language.extra.libdevice_table import TABLE

    parts = short.split(".")
    rest = parts[parts.index("libdevice") + 1:]
    if not rest:
        return TLRef("tl.libdevice")
    if len(rest) > 1 or rest[0] not in TABLE:
        raise tracer.error(node, f"`libdevice.{'.'.join(rest)}` is not a libdevice function"
                           f"{did_you_mean(rest[0], TABLE, 'libdevice.')}")
    return TLRef("tl.libdevice." + rest[0])


# --- values as the tracer holds them ---------------------------------------------------

def is_none(x: Any) -> bool:
    return isinstance(x, Const) and x.value is None


def wrap_item(item: Any) -> Any:
    """A Python value (an item of a compile-time tuple, a constexpr argument, a helper's
    default) as the tracer handles values: a @jit function as a helper, so that it can be
    called or be a combine function wherever it came from."""
    if isinstance(item, (Value, Const, TLRef, OtherModule, HelperRef, PyBuiltin, Method,
                         BP.BlockPointer, TD.TensorDescriptor)):
        return item
    if callable(item) and isinstance(reference_for(item), HelperRef):
        return reference_for(item)
    return Const(item)


def describe(x: Any) -> str:
    if isinstance(x, Const):
        return repr(x.value)
    if isinstance(x, TLRef):
        return x.name
    if isinstance(x, TD.TensorDescriptor):
        return "a tensor descriptor (read and write it with desc.load / desc.store)"
    return type(x).__name__
