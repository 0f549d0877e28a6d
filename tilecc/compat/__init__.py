"""Compatibility mode: unmodified Triton code runs through tilecc.

    import tilecc.compat
    tilecc.compat.install()          # before anything imports triton
    import my_triton_library         # its `import triton` is tilecc now

or, without touching the program, `python -m tilecc.compat script.py [args]` (also
`-m module` and `-c code`).  While installed, `import triton` and its submodules resolve to
tilecc's own modules:

    triton[.runtime[.jit|.autotuner|.errors|.driver]|.errors|.testing|.tools[.*]
           |.profiler[.viewer|...]]
                                     → tilecc.compat.triton[...], a module for each of
                                       Triton's, holding tilecc's objects under Triton's
                                       names (jit, autotune, Config, driver, do_bench...)
    triton.language[.*]              → tilecc.language[.*] (core, math, random, standard,
                                       extra...)

Their names are Triton 3.6's, enumerated from the installed Triton
(`tests/data/triton_surface.json`): each is provided with Triton's parameters or refused
(`tilecc.compat.refused`: Triton's compiler, its IR and launchers).  Reaching a refused
name raises an error that says why and what to use instead; a module that neither has
(`triton.experimental...`) raises ModuleNotFoundError, as where Triton is not installed.
`triton.__version__` is "3.6.0", the Triton release whose language tilecc implements, so
that libraries' version checks take the 3.6 paths.

Install it before Triton is imported: a program that already holds Triton's modules would
mix the two, so `install()` refuses then.
"""

from __future__ import annotations

import importlib
import importlib.abc
import pkgutil
import sys

from tilecc.compat.refused import REFUSED, RefusedAttribute, refusal_of
from tilecc.language import dtypes
from tilecc.runtime.options import ENVIRONMENT_DEFAULTS

TRITON_VERSION = "3.6.0"
TRITON_FP_FUSION = "TRITON_DEFAULT_FP_FUSION"


def _aliases() -> dict[str, str]:
    """Triton's module name -> tilecc's, for every module of tilecc.compat.triton and of
    tilecc.language."""
    import tilecc.compat.triton as api
    import tilecc.language as language

    table = {"triton": api.__name__, "triton.language": language.__name__}
    for package, prefix in ((api, "triton."), (language, "triton.language.")):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            table[prefix + info.name[len(package.__name__) + 1:]] = info.name
    return table


def _refusal_error(fullname: str) -> ModuleNotFoundError:
    refusal = refusal_of(fullname)
    text = refusal.message(fullname) if refusal is not None else (
        f"No module named '{fullname}': tilecc's compatibility mode provides Triton 3.6's "
        "triton, triton.language, triton.runtime, triton.testing, triton.tools and "
        "triton.profiler modules")
    return ModuleNotFoundError(text, name=fullname)


class _Refuse(importlib.abc.MetaPathFinder):
    """Answers every `triton.*` import that the aliases do not cover with a
    ModuleNotFoundError (an ImportError) that says what that part of Triton is and what to
    use instead (rather than finding Triton, or tilecc's files under Triton's names)."""

    def find_spec(self, fullname, path, target=None):
        if fullname != "triton" and not fullname.startswith("triton."):
            return None
        raise _refusal_error(fullname)


def _attribute_hook(alias: str, original):
    """A module `__getattr__` (called only for names the module lacks) that gives the
    refusal of a refused name, else the module's own answer."""
    def __getattr__(name: str):
        refusal = refusal_of(f"{alias}.{name}")
        if refusal is not None:
            raise AttributeError(refusal.message(f"{alias}.{name}"))
        if original is not None:
            return original(name)
        raise AttributeError(f"module '{alias}' has no attribute '{name}'")
    return __getattr__


def _classes() -> dict[str, type]:
    """Triton's classes whose members the refusal table names -> tilecc's classes."""
    import tilecc.language as tl
    from tilecc.runtime.autotune import Autotuner, Config, Heuristics
    from tilecc.runtime.compiled import CompiledKernel
    from tilecc.runtime.jit import JITFunction, KernelParam

    return {"triton.runtime.jit.JITFunction": JITFunction,
            "triton.runtime.jit.KernelParam": KernelParam,
            "triton.runtime.autotuner.Autotuner": Autotuner,
            "triton.runtime.autotuner.Heuristics": Heuristics,
            "triton.runtime.autotuner.Config": Config,
            "triton.compiler.compiler.CompiledKernel": CompiledKernel,
            "triton.language.core.tensor": tl.tensor, "triton.language.core.dtype": tl.dtype,
            "triton.language.core.constexpr": tl.constexpr,
            "triton.language.core.tensor_descriptor": tl.tensor_descriptor}


_installed: list[str] = []
_hooked: list[tuple] = []  # (module, its __getattr__ before) / (class, member name)


def install() -> None:
    """Make `import triton` (and its submodules) resolve to tilecc.  Idempotent."""
    if _installed:
        return
    held = sorted(n for n in sys.modules if n == "triton" or n.startswith("triton."))
    if held:
        raise RuntimeError(
            f"Triton is already imported ({', '.join(held[:3])}{', ...' if len(held) > 3 else ''}):"
            " call tilecc.compat.install() before anything imports triton, or run the program "
            "with `python -m tilecc.compat script.py`")
    dtypes.REPR_MODULE[0] = "triton.language"  # repr(tl.int8) as Triton's: evaluates here
    for alias, real in _aliases().items():
        module = importlib.import_module(real)
        sys.modules[alias] = module
        _installed.append(alias)
        original = module.__dict__.get("__getattr__")
        module.__getattr__ = _attribute_hook(alias, original)
        _hooked.append((module, original))
    for path, cls in _classes().items():
        for key, refusal in REFUSED.items():
            name = key[len(path) + 1:]
            # (never over one of tilecc's own members: the surface test reports the clash)
            if key.startswith(path + ".") and "." not in name and not hasattr(cls, name):
                setattr(cls, name, RefusedAttribute(key, refusal))
                _hooked.append((cls, name))
    sys.meta_path.insert(0, _Refuse())
    _hide_from_torch()
    from tilecc.compat.triton.runtime.jit import follow_triton_interpret

    follow_triton_interpret()  # TRITON_INTERPRET=1 given to the program: it interprets
    # Triton's default of enable_fp_fusion, read at each compile as Triton's compiler reads it
    ENVIRONMENT_DEFAULTS["enable_fp_fusion"].append(TRITON_FP_FUSION)


# PyTorch's compiler (torch.compile's inductor) writes Triton kernels for Triton's own
# compiler and, when `import triton` succeeds, imports that compiler's internals as soon as
# torch._dynamo loads (transformers loads it).  Under compatibility mode it is told there is
# no Triton, as on a machine without it: the program's own Triton kernels run on tilecc,
# torch.compile falls back as it does there.  The probes are patched when the program
# imports them (at install() if it has already), so a program that never imports PyTorch
# does not pay for importing it.
_TORCH_PROBES_MODULE = "torch.utils._triton"
_TORCH_PROBES = ("has_triton_package", "has_triton")
# modules of PyTorch that import Triton's compiler internals whenever `import triton`
# succeeds (inductor's runtime, which torch.compile loads): they are loaded as on a
# machine without Triton, where they define their own stand-ins
_TORCH_WITHOUT_TRITON = ("torch._inductor.runtime.triton_compat",)
_torch_saved: dict[str, object] = {}


def _patch_probes(probes) -> None:
    for name in _TORCH_PROBES:
        if hasattr(probes, name):
            _torch_saved[name] = getattr(probes, name)
            setattr(probes, name, lambda *args, **kwargs: False)


class _PatchOnImport(importlib.abc.Loader):
    """The loader of torch.utils._triton, then the probes patched."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module) -> None:
        if module.__name__ in _TORCH_WITHOUT_TRITON:
            saved = sys.modules.get("triton")
            sys.modules["triton"] = None  # `import triton` raises ImportError in there
            try:
                self.loader.exec_module(module)
            finally:
                sys.modules["triton"] = saved
            return
        self.loader.exec_module(module)
        _patch_probes(module)


class _TorchProbes(importlib.abc.MetaPathFinder):
    """Finds torch.utils._triton (and the modules that must not see Triton) where Python
    would, and hands them over patched."""

    def find_spec(self, fullname, path, target=None):
        if fullname != _TORCH_PROBES_MODULE and fullname not in _TORCH_WITHOUT_TRITON:
            return None
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _PatchOnImport(spec.loader)
        return spec


def _hide_from_torch() -> None:
    probes = sys.modules.get(_TORCH_PROBES_MODULE)
    if probes is not None:
        _patch_probes(probes)
    sys.meta_path.insert(0, _TorchProbes())


def _show_to_torch() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _TorchProbes)]
    probes = sys.modules.get(_TORCH_PROBES_MODULE)
    for name, fn in _torch_saved.items():
        if probes is not None:
            setattr(probes, name, fn)
    _torch_saved.clear()


def uninstall() -> None:
    """Undo `install()`: `import triton` finds Triton (if installed) again."""
    for alias in _installed:
        sys.modules.pop(alias, None)
    _installed.clear()
    dtypes.REPR_MODULE[0] = "tilecc.language"
    for owner, what in reversed(_hooked):
        if isinstance(owner, type):
            delattr(owner, what)
        elif what is None:
            del owner.__getattr__
        else:
            owner.__getattr__ = what
    _hooked.clear()
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _Refuse)]
    _show_to_torch()
    fp_fusion = ENVIRONMENT_DEFAULTS["enable_fp_fusion"]
    fp_fusion[:] = [v for v in fp_fusion if v != TRITON_FP_FUSION]


def installed() -> bool:
    return bool(_installed)
