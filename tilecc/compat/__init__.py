"""Compatibility mode: unmodified Triton code runs through tilecc.

    import tilecc.compat
    tilecc.compat.install()          # before anything imports triton
    import my_triton_library         # its `import triton` is tilecc now

or, without touching the program, `python -m tilecc.compat script.py [args]` (also
`-m module` and `-c code`).  While installed, `import triton` and its submodules resolve to
tilecc's own modules:

    triton                           → tilecc.compat.triton_api (jit, autotune, Config,
                                       heuristics, cdiv, next_power_of_2, errors, __version__)
    triton.language[.*]              → tilecc.language[.*] (math, random, standard, extra...)
    triton.testing                   → tilecc.compat.testing (do_bench, assert_close,
                                       Benchmark, perf_report)
    triton.runtime[.jit|.autotuner|.errors|.driver]
                                     → tilecc.compat.runtime (driver.active...)
    triton.tools.tensor_descriptor   → tilecc.runtime.tensor_descriptor (the host-side
                                       TensorDescriptor)

Anything else under `triton` (the compiler, its IR and assembly, backends) has no meaning
for tilecc, which compiles to CUDA/HIP source: importing it raises an ImportError that says
so and what to use instead.  `triton.__version__` is "3.6.0", the Triton release whose
language tilecc implements, so that libraries' version checks take the 3.6 paths.

Install it before Triton is imported: a program that already holds Triton's modules would
mix the two, so `install()` refuses then.
"""

from __future__ import annotations

import importlib
import importlib.abc
import pkgutil
import sys

TRITON_VERSION = "3.6.0"

# Triton's module → tilecc's; the language's submodules are added by walking the package.
_FIXED = {
    "triton": "tilecc.compat.triton_api",
    "triton.language": "tilecc.language",
    "triton.testing": "tilecc.compat.testing",
    "triton.runtime": "tilecc.compat.runtime",
    "triton.runtime.jit": "tilecc.compat.runtime",
    "triton.runtime.autotuner": "tilecc.compat.runtime",
    "triton.runtime.errors": "tilecc.compat.runtime",
    "triton.runtime.driver": "tilecc.compat.runtime",
    "triton.tools.tensor_descriptor": "tilecc.runtime.tensor_descriptor",
}

# What to say about the parts of Triton that tilecc does not have.
_INSTEAD = {
    "triton.compiler": "Triton's compiler (its IR, PTX/AMDGCN and cubins) is not part of "
                       "tilecc; read the CUDA/HIP tilecc writes with kernel.source() or "
                       "`tilecc emit`, its binary with kernel.compile()",
    "triton.backends": "tilecc has no Triton backends: it renders CUDA or HIP source and "
                       "compiles it with NVRTC or hiprtc",
    "triton._C": "Triton's C++ extension (MLIR, LLVM) is not part of tilecc",
    "triton.tools": "triton.tools (AOT compile, disassembly) is not provided by tilecc's "
                    "compatibility mode (only its host-side `tensor_descriptor`); `tilecc "
                    "export` writes a kernel as C++ with a host launcher",
    "triton.knobs": "Triton's knobs configure its compiler; tilecc's options are the "
                    "launch options (num_warps, num_stages, debug) and TILECC_* variables",
}


def _aliases() -> dict[str, str]:
    import tilecc.language as language

    table = dict(_FIXED)
    for info in pkgutil.walk_packages(language.__path__, "tilecc.language."):
        table["triton.language." + info.name[len("tilecc.language."):]] = info.name
    return table


class _Refuse(importlib.abc.MetaPathFinder):
    """Answers every `triton.*` import that the aliases do not cover with an ImportError
    that names what to use instead (rather than finding Triton, or tilecc's files under
    Triton's names)."""

    def find_spec(self, fullname, path, target=None):
        if fullname != "triton" and not fullname.startswith("triton."):
            return None
        for prefix, why in _INSTEAD.items():
            if fullname == prefix or fullname.startswith(prefix + "."):
                raise ImportError(f"`{fullname}`: {why}", name=fullname)
        raise ImportError(f"`{fullname}` is not provided by tilecc's compatibility mode "
                          f"(tilecc implements `triton.language`, `triton.jit`, "
                          f"`triton.autotune`/`Config`/`heuristics`, `triton.testing` and "
                          f"`triton.runtime.driver`)", name=fullname)


_installed: list[str] = []


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
    for alias, real in _aliases().items():
        sys.modules[alias] = importlib.import_module(real)
        _installed.append(alias)
    sys.meta_path.insert(0, _Refuse())
    _hide_from_torch()
    from tilecc.compat.runtime import follow_triton_interpret

    follow_triton_interpret()  # TRITON_INTERPRET=1 given to the program: it interprets


# PyTorch's compiler (torch.compile's inductor) writes Triton kernels for Triton's own
# compiler and, when `import triton` succeeds, imports that compiler's internals as soon as
# torch._dynamo loads (transformers loads it).  Under compatibility mode it is told there is
# no Triton, as on a machine without it: the program's own Triton kernels run on tilecc,
# torch.compile falls back as it does there.  The probes are patched when the program
# imports them (at install() if it has already), so a program that never imports PyTorch
# does not pay for importing it.
_TORCH_PROBES_MODULE = "torch.utils._triton"
_TORCH_PROBES = ("has_triton_package", "has_triton")
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
        self.loader.exec_module(module)
        _patch_probes(module)


class _TorchProbes(importlib.abc.MetaPathFinder):
    """Finds torch.utils._triton where Python would, and hands it over patched."""

    def find_spec(self, fullname, path, target=None):
        if fullname != _TORCH_PROBES_MODULE:
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
    else:
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
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _Refuse)]
    _show_to_torch()


def installed() -> bool:
    return bool(_installed)
