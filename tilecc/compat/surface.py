"""Triton's public surface as data: what `scripts/triton_surface.py` records from an
installed Triton, and what the compatibility mode is checked against
(`tests/test_triton_surface.py`).

A module's public names are those in its `__all__`, and otherwise the names Triton itself
defines (its functions, classes, kernels, dtypes, constants; not what it imported from the
standard library or typing).  A class's public names are its attributes and methods and
the attributes its methods assign to `self` (read from the source), without leading
underscores.  Each name is described by its kind and, for callables, its parameters: name,
kind and default, in order (not for exception classes: compilers raise them and libraries
catch them, and each compiler's take what it knows).  Triton's private parameters (`_semantic`, `_generator`...),
which user code never passes, are left out.

This module imports neither Triton nor the rest of tilecc: the recording script loads it by
path from a Python that has Triton (and none of tilecc's dependencies).
"""

from __future__ import annotations

import ast
import enum
import functools
import importlib
import inspect
import textwrap
import types
from typing import Any

# The modules walked, and the classes whose members are recorded (by where Triton defines
# them).
MODULES = (
    "triton", "triton.language", "triton.language.core", "triton.language.math",
    "triton.language.standard", "triton.language.random", "triton.language.extra",
    "triton.language.extra.libdevice", "triton.language.extra.cuda",
    "triton.language.extra.cuda.libdevice", "triton.language.extra.hip",
    "triton.language.extra.hip.libdevice", "triton.runtime", "triton.runtime.jit",
    "triton.runtime.autotuner", "triton.runtime.driver", "triton.runtime.errors",
    "triton.runtime.cache", "triton.testing", "triton.tools", "triton.tools.tensor_descriptor",
    "triton.tools.mxfp", "triton.profiler", "triton.profiler.profile", "triton.profiler.scope",
    "triton.profiler.state", "triton.profiler.context", "triton.profiler.flags",
    "triton.profiler.specs", "triton.profiler.viewer")
# Libraries that Triton's modules import only to run (its profile viewer's hatchet and
# pandas): where they are not installed, stand-ins let the module import, since only its
# signatures are read.
OPTIONAL_IMPORTS = ("hatchet", "hatchet.query", "pandas")
CLASSES = (
    "triton.runtime.jit.JITFunction", "triton.runtime.jit.KernelParam",
    "triton.runtime.autotuner.Autotuner", "triton.runtime.autotuner.Heuristics",
    "triton.runtime.autotuner.Config", "triton.compiler.compiler.CompiledKernel",
    "triton.language.core.tensor", "triton.language.core.dtype",
    "triton.language.core.constexpr", "triton.language.core.tensor_descriptor",
    "triton.tools.tensor_descriptor.TensorDescriptor")

_PARAM_KINDS = {inspect.Parameter.POSITIONAL_ONLY: "positional",
                inspect.Parameter.POSITIONAL_OR_KEYWORD: "",
                inspect.Parameter.VAR_POSITIONAL: "*",
                inspect.Parameter.KEYWORD_ONLY: "keyword",
                inspect.Parameter.VAR_KEYWORD: "**"}
_PLAIN = (bool, int, float, str, type(None))


# --- describing one object ------------------------------------------------------------------

def default_text(value: Any) -> str:
    """A parameter's default in words that Triton's objects and tilecc's share: plain
    values by repr, dtypes by name, enum members by class and member."""
    if isinstance(value, _PLAIN):
        return repr(value)
    if isinstance(value, (tuple, list)):
        return f"{type(value).__name__}({', '.join(default_text(v) for v in value)})"
    kind = type(value).__name__
    if kind == "constexpr" and hasattr(value, "value"):
        return f"constexpr({default_text(value.value)})"
    if kind in ("dtype", "pointer_type", "block_type") and hasattr(value, "name"):
        return f"dtype {value.name}"
    if isinstance(value, enum.Enum) or (hasattr(type(value), "__members__") and
                                        hasattr(value, "name")):
        return f"enum member {value.name}"  # (Triton's enums are C++ ones, named otherwise)
    return f"<{kind}>"


def parameters(obj: Any) -> list[list] | None:
    """[name, kind, default] per parameter that callers may pass (None: no signature)."""
    target = obj
    inner = getattr(obj, "fn", None)
    if not isinstance(obj, type) and inspect.isfunction(inner):
        target = inner  # a kernel (Triton's JITFunction, tilecc's) or constexpr function
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return None
    out = []
    for p in sig.parameters.values():
        if p.name.startswith("_"):
            continue
        default = None if p.default is inspect.Parameter.empty else default_text(p.default)
        out.append([p.name, _PARAM_KINDS[p.kind], default])
    return out


def kind_of(obj: Any) -> str:
    if isinstance(obj, types.ModuleType):
        return "module"
    if isinstance(obj, type):
        return "exception" if issubclass(obj, BaseException) else "class"
    name = type(obj).__name__
    if name in ("dtype", "pointer_type", "block_type") and hasattr(obj, "name"):
        return "dtype"
    if name == "constexpr":
        return "constexpr"
    if isinstance(obj, _PLAIN):
        return "value"
    if callable(obj):
        return "function"
    return "object"


def describe(obj: Any) -> dict:
    entry: dict[str, Any] = {"kind": kind_of(obj)}
    if entry["kind"] in ("function", "class"):
        params = parameters(obj)
        if params is not None:
            entry["params"] = params
    if entry["kind"] == "value":
        entry["value"] = repr(obj)
    return entry


def describe_member(cls: type, name: str) -> dict:
    """A class attribute as the class holds it (a property is not evaluated)."""
    raw = inspect.getattr_static(cls, name)
    if isinstance(raw, (property, functools.cached_property)):
        return {"kind": "property"}
    if isinstance(raw, staticmethod):
        return {"kind": "function", **_params_entry(raw.__func__)}
    if isinstance(raw, classmethod):
        return {"kind": "method", **_params_entry(getattr(cls, name))}
    if inspect.isfunction(raw):
        return {"kind": "method", **_params_entry(raw)}
    if isinstance(raw, type):
        return {"kind": "class"}
    if callable(raw):
        return {"kind": "method", **_params_entry(raw)}
    return {"kind": "attribute"}


def _params_entry(fn) -> dict:
    params = parameters(fn)
    return {} if params is None else {"params": params}


# --- walking ---------------------------------------------------------------------------------

def _defined_here(module: types.ModuleType) -> set[str]:
    """Names a module's own source assigns at its top level (constants such as
    `TRITON_MAX_TENSOR_NUMEL`, which carry no `__module__`)."""
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError):
        return set()
    names = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) else []
        names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def public_names(module: types.ModuleType) -> list[str]:
    """What `module` offers: its `__all__`, else what it defines itself: its functions,
    classes and kernels, the objects and constants its top level makes, its submodules
    (not what it imported from elsewhere, Triton's other modules included); a package
    also offers the functions and classes it takes from its own submodules (`proton.start`
    is `triton.profiler.profile.start`)."""
    # (Triton's `extra.__all__` holds full module names: only attributes count)
    listed = {n for n in getattr(module, "__all__", ()) if hasattr(module, n)}
    if listed:  # and the submodules, which attribute access reaches too
        return sorted(listed | {n for n, obj in vars(module).items() if isinstance(
            obj, types.ModuleType) and obj.__name__ == f"{module.__name__}.{n}"
            and not n.startswith("_")})
    here = _defined_here(module)
    names = set()
    for name, obj in vars(module).items():
        if name.startswith("_") or type(obj).__name__ in ("TypeVar", "_Feature") or \
                type(obj).__module__ == "typing":
            continue
        if isinstance(obj, types.ModuleType):
            mine = obj.__name__ == f"{module.__name__}.{name}"
        elif isinstance(obj, (type, types.FunctionType)) or hasattr(obj, "__qualname__"):
            home = getattr(obj, "__module__", None) or ""
            mine = home == module.__name__ or (hasattr(module, "__path__") and
                                               home.startswith(module.__name__ + "."))
        else:  # a constant or an object: made here if the top level assigns it
            mine = name in here and not isinstance(obj, bool)
        if mine:
            names.add(name)
    return sorted(names)


def self_attributes(cls: type, package: str = "triton") -> set[str]:
    """Attributes the methods of `cls` (and of its bases in `package`) assign to `self`."""
    found = set()
    for klass in cls.__mro__:
        if not (klass.__module__ or "").startswith(package):
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError):
            continue
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
            for target in targets:
                for t in ast.walk(target):
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and \
                            t.value.id == "self":
                        found.add(t.attr)
    return found


def class_members(cls: type, package: str = "triton") -> dict[str, dict]:
    members = {}
    for name in dir(cls):
        if not name.startswith("_"):
            members[name] = describe_member(cls, name)
    fields = {n for klass in cls.__mro__ if (klass.__module__ or "").startswith(package)
              for n in vars(klass).get("__annotations__", {})}  # dataclass fields
    for name in self_attributes(cls, package) | fields:
        if not name.startswith("_") and name not in members:
            members[name] = {"kind": "attribute"}
    return dict(sorted(members.items()))


def record(modules=MODULES, classes=CLASSES) -> dict:
    """The surface of the `triton` that imports here (run with Triton installed)."""
    with _stand_ins(OPTIONAL_IMPORTS):
        loaded = [importlib.import_module(name) for name in modules]  # all first: attributes
    out: dict[str, Any] = {"triton_version": importlib.import_module("triton").__version__,
                           "modules": {}, "classes": {}}  # that are submodules exist then
    for module in loaded:
        out["modules"][module.__name__] = {n: describe(getattr(module, n))
                                           for n in public_names(module)}
    for path in classes:
        module_name, _, cls_name = path.rpartition(".")
        cls = getattr(importlib.import_module(module_name), cls_name)
        out["classes"][path] = class_members(cls)
    return out


def _placeholder(module: str, attr: str):
    if attr.startswith("__"):  # (what the import system asks of a module: not there)
        raise AttributeError(attr)
    return type(attr, (), {"__module__": module})


class _stand_ins:
    """Placeholder modules for those of `names` that cannot be imported, while a block
    runs (any attribute of one is a placeholder class)."""

    def __init__(self, names):
        self.names = names
        self.added: list[str] = []

    def __enter__(self):
        import importlib.util
        import sys

        for name in self.names:
            try:
                found = importlib.util.find_spec(name) is not None
            except (ImportError, AttributeError):  # its parent is missing (or a stand-in)
                found = False
            if not found and name not in sys.modules:
                stand_in = types.ModuleType(name)
                stand_in.__getattr__ = functools.partial(_placeholder, name)
                sys.modules[name] = stand_in
                self.added.append(name)

    def __exit__(self, *exc):
        import sys

        for name in self.added:
            sys.modules.pop(name, None)


# --- comparing -------------------------------------------------------------------------------

def signature_problem(recorded: list[list] | None, provided: list[list] | None) -> str | None:
    """What keeps a call written for Triton's signature from binding the same way to
    tilecc's (None: nothing): Triton's parameters, in order, with the same names, kinds
    and defaults; tilecc may add parameters after them that have defaults."""
    if recorded is None:
        return None
    if provided is None:
        return "tilecc's has no signature to compare"
    for i, want in enumerate(recorded):
        if i >= len(provided):
            return f"parameter {_show(want)} is missing"
        if provided[i] != want:
            return f"parameter {i + 1} is {_show(provided[i])}, Triton's is {_show(want)}"
    extra = [p for p in provided[len(recorded):] if p[2] is None and p[1] not in ("*", "**")]
    if extra:
        return f"tilecc's requires {_show(extra[0])}, which Triton's does not have"
    return None


def _show(param: list) -> str:
    name, kind, default = param
    text = {"*": "*", "**": "**"}.get(kind, "") + name
    text += "" if default is None else f"={default}"
    return text + (" (keyword-only)" if kind == "keyword" else
                   " (positional-only)" if kind == "positional" else "")


# --- checking an implementation against the record -------------------------------------------

class Refusal:
    """A name tilecc does not provide: why, and what to use instead."""

    def __init__(self, why: str, instead: str = ""):
        self.why, self.instead = why, instead

    def message(self, name: str) -> str:
        text = f"`{name}` is not provided by tilecc: {self.why}"
        return text + (f"; {self.instead}" if self.instead else "")


def _refusal_problem(path: str, refusal: Refusal, access) -> str | None:
    try:
        access()
    except (AttributeError, ImportError) as e:
        return None if refusal.why in str(e) else \
            f"refused, but the error does not give the reason: {e}"
    return "refused in the table, but provided"


def _kind_problem(recorded: dict, obj: Any) -> str | None:
    kind = recorded["kind"]
    if kind == "module" and not isinstance(obj, types.ModuleType):
        return f"Triton's is a module, tilecc's a {type(obj).__name__}"
    if kind == "class" and not isinstance(obj, type):
        return f"Triton's is a class, tilecc's a {type(obj).__name__}"
    if kind == "exception" and not (isinstance(obj, type) and issubclass(obj, BaseException)):
        return f"Triton's is an exception class, tilecc's a {type(obj).__name__}"
    if kind == "function" and not callable(obj):
        return f"Triton's is callable, tilecc's a {type(obj).__name__}"
    if kind == "value" and repr(obj) != recorded.get("value"):
        return f"Triton's value is {recorded.get('value')}, tilecc's {obj!r}"
    if kind in ("function", "class") and "params" in recorded:
        problem = signature_problem(recorded["params"], parameters(obj))
        if problem:
            return problem
    return None


def check(surface: dict, refused: dict[str, Refusal], classes: dict[str, tuple]) -> dict:
    """Every recorded name against the running process (the compatibility mode installed):
    {dotted name: problem}, empty when each is provided as Triton's or refused with its
    reason.  `classes`: recorded class path -> (tilecc's class, an instance or None), for
    the members of classes that are not reachable by their Triton path (and instances,
    for the attributes their methods set)."""
    problems = {}
    for module, names in surface["modules"].items():
        for name, recorded in names.items():
            path = f"{module}.{name}"
            refusal = _refused(path, refused)
            if refusal is not None:
                problem = _refusal_problem(path, refusal, lambda m=module, n=name:
                                           getattr(importlib.import_module(m), n))
            else:
                try:
                    obj = getattr(importlib.import_module(module), name)
                except (AttributeError, ImportError) as e:
                    problems[path] = f"missing ({type(e).__name__}: {e})"
                    continue
                problem = _kind_problem(recorded, obj)
            if problem:
                problems[path] = problem
    for cls_path, members in surface["classes"].items():
        cls, instance = classes[cls_path]
        for name, recorded in members.items():
            path = f"{cls_path}.{name}"
            holder = instance if instance is not None else cls
            refusal = refused.get(path)  # (the module a class is recorded under may be refused)
            if refusal is not None:
                problem = _refusal_problem(path, refusal,
                                           lambda h=holder, n=name: getattr(h, n))
            else:
                problem = _member_problem(cls, instance, name, recorded)
            if problem:
                problems[path] = problem
    return problems


def _refused(path: str, refused: dict[str, Refusal]) -> Refusal | None:
    """The refusal of `path` or of a module or class that holds it."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        hit = refused.get(".".join(parts[:i]))
        if hit is not None:
            return hit
    return None


def _member_problem(cls: type, instance: Any, name: str, recorded: dict) -> str | None:
    try:
        inspect.getattr_static(instance if instance is not None else cls, name)
    except AttributeError:
        try:
            inspect.getattr_static(cls, name)
        except AttributeError:
            return "missing"
    if recorded["kind"] in ("method", "function") and "params" in recorded:
        if _on_class(cls, name):
            return signature_problem(recorded["params"], describe_member(cls, name).get("params"))
        bound = parameters(getattr(instance, name))  # set on the instance: without `self`
        want = recorded["params"]
        return signature_problem(want[1:] if want and want[0][0] == "self" else want, bound)
    return None


def _on_class(cls: type, name: str) -> bool:
    try:
        inspect.getattr_static(cls, name)
        return True
    except AttributeError:
        return False
