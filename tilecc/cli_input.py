"""What the command line reads and writes, checked before any work: the user's kernel file
(`FILE.py:KERNEL`), signatures, architectures, output files and folders.

Each problem is a `UsageError` whose message is one line that names the file (and line,
where there is one) and says what to do; `tilecc.cli.main` prints it as
`tilecc: error: ...`.  Kernel files written against `triton.language` load even where
Triton is not installed: `triton`, `triton.language`, `triton.language.math` and
`triton.language.random`, `triton.language.extra[.cuda|.hip].libdevice` then resolve to
tilecc's own.
"""

from __future__ import annotations

import difflib
import importlib.abc
import importlib.util
import linecache
import os
import re
import sys
import traceback
import types

from tilecc.runtime.options import arch_problem


class UsageError(Exception):
    """Bad input to the command line: the message is one line, printed without traceback."""


def _suggest(name: str, candidates, what: str = "", n: int = 3) -> str:
    close = difflib.get_close_matches(name, list(candidates), n=n, cutoff=0.6)
    if not close:
        return ""
    return f"; did you mean {' or '.join(f'`{c}`' for c in close)}{what}?"


# --- the user's file -----------------------------------------------------------------------

class _TritonAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves `import triton[.language[.math|.random|.extra[.cuda|.hip].libdevice]]` from
    tilecc when Triton is absent."""

    NAMES = {"triton": "tilecc", "triton.language": "tilecc.language",
             "triton.language.math": "tilecc.language.math",
             "triton.language.random": "tilecc.language.random",
             **{f"triton.language.extra{sub}": f"tilecc.language.extra{sub}"
                for sub in ("", ".libdevice", ".cuda", ".cuda.libdevice", ".hip",
                            ".hip.libdevice")}}

    def find_spec(self, fullname, path, target=None):
        if fullname in self.NAMES:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        real = importlib.import_module(self.NAMES[spec.name])
        module = types.ModuleType(spec.name)
        module.__dict__.update({k: v for k, v in real.__dict__.items() if not k.startswith("__")})
        if spec.name == "triton":
            module.__path__ = []
        return module

    def exec_module(self, module):
        if module.__name__ in ("triton.language", "triton.language.extra",
                               "triton.language.extra.cuda", "triton.language.extra.hip"):
            module.__path__ = []


def load_kernel(ref: str):
    """`path/to/file.py:kernel_name` → the JITFunction defined there."""
    path, sep, name = ref.rpartition(":")
    if not sep and ref.endswith(".py"):
        path, name = ref, ""
    elif not sep or not path.endswith(".py") or not re.fullmatch(r"[A-Za-z_]\w*", name):
        raise UsageError(f"expected FILE.py:KERNEL, got {ref!r} (e.g. "
                         "examples/vector_add.py:add_kernel)")
    module = load_file(path)
    kernels = _kernels_in(module)
    listed = (f"the kernels in {path}: {', '.join(kernels)}" if kernels
              else f"{path} defines no @jit kernel")
    if not name:
        raise UsageError(f"{ref}: name the kernel as {path}:KERNEL ({listed})")
    obj = getattr(module, name, _MISSING)
    if obj is _MISSING:
        raise UsageError(f"{path} defines no `{name}`{_suggest(name, kernels)} ({listed})")
    kernel = _as_jit(obj)
    if kernel is None:
        what = ("a plain function: decorate it with @tilecc.jit (or @triton.jit)"
                if isinstance(obj, types.FunctionType) else
                f"wrapped in @autotune / @heuristics ({type(obj).__name__}): the command "
                "line compiles a @jit kernel for one signature; give the @jit function under "
                "it a name of its own and name that"
                if hasattr(obj, "fn") else f"not a @jit kernel (a value of type "
                f"{type(obj).__name__})")
        raise UsageError(f"`{name}` in {path} is {what} ({listed})")
    return kernel


_MISSING = object()


def _as_jit(obj):
    from tilecc.runtime.jit import JITFunction

    if isinstance(obj, JITFunction):
        return obj
    if type(obj).__name__ == "JITFunction" and isinstance(getattr(obj, "fn", None),
                                                         types.FunctionType):
        return JITFunction(obj.fn)  # an installed Triton's
    return None


def _kernels_in(module) -> list[str]:
    return [n for n, v in vars(module).items() if not n.startswith("_") and _is_jit(v)]


def _is_jit(v) -> bool:
    return type(v).__name__ == "JITFunction" and hasattr(v, "fn")


def load_file(path: str) -> types.ModuleType:
    """Execute the user's file as a module; a missing file or one that does not load is a
    UsageError naming the file, its line and the exception."""
    if not os.path.exists(path):
        folder = os.path.dirname(path) or "."
        names = [f for f in _listdir(folder) if f.endswith(".py")]
        hint = _suggest(os.path.basename(path), names, " (in " + folder + ")", n=1)
        raise UsageError(f"{path}: no such file{hint}")
    if os.path.isdir(path):
        raise UsageError(f"{path} is a folder; give a Python file, FILE.py:KERNEL")
    if importlib.util.find_spec("triton") is None and \
            not any(isinstance(f, _TritonAlias) for f in sys.meta_path):
        sys.meta_path.insert(0, _TritonAlias())
    module_name = "_tilecc_cli_" + re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:  # also IndentationError, TabError
        del sys.modules[module_name]
        where = f"{e.filename}:{e.lineno}" + (f":{e.offset}" if e.offset else "")
        via = _user_line(e, path)
        via = f" (imported at {path}:{via})" if via and not _same_file(e.filename, path) else ""
        raise UsageError(f"{where}: {type(e).__name__}: {e.msg}{via}") from None
    except (Exception, SystemExit) as e:
        from tilecc.errors import CompilationError

        del sys.modules[module_name]
        if isinstance(e, CompilationError):  # a kernel checked when defined: as it is
            raise e.with_traceback(None) from None
        line = _user_line(e, path)
        where = f"{path}:{line}" if line else path
        message = (str(e).strip().splitlines() or [""])[0]
        raised = f"{type(e).__name__}: {message}" if message else type(e).__name__
        last = traceback.extract_tb(e.__traceback__)[-1:]
        if last and line and not _same_file(last[0].filename, path):
            raised += f" (raised at {last[0].filename}:{last[0].lineno})"
        todo = (f"install `{e.name}` or fix the import" if isinstance(e, ModuleNotFoundError)
                and e.name else "fix the file (TILECC_TRACEBACK=1 shows the traceback)")
        raise UsageError(f"{where}: loading it raised {raised}; {todo}") from None
    return module


def _same_file(a: str | None, b: str) -> bool:
    return bool(a) and os.path.abspath(a) == os.path.abspath(b)


def _user_line(e: BaseException, path: str) -> int | None:
    """The line of the user's file where the exception went through last."""
    lines = [f.lineno for f in traceback.extract_tb(e.__traceback__)
             if _same_file(f.filename, path)]
    return lines[-1] if lines else None


def _listdir(folder: str) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


def def_line(fn) -> int:
    """The line of `def` of a function (its code's first line is its first decorator's)."""
    code = fn.__code__
    for n in range(code.co_firstlineno, code.co_firstlineno + 50):
        text = linecache.getline(code.co_filename, n)
        if not text:
            break
        if re.match(r"\s*(async\s+)?def\s", text):
            return n
    return code.co_firstlineno


# --- signatures and architectures ----------------------------------------------------------

def check_signature(kernel, signature: str) -> None:
    """The signature parses for this kernel; else one line naming the kernel's file and line."""
    from tilecc.transpiler import specialize

    try:
        specialize.specs_from_signature(kernel.params, signature, {}, kernel.fn.__name__)
    except ValueError as e:
        fn = kernel.fn
        raise UsageError(f"{fn.__code__.co_filename}:{def_line(fn)}: {e}") from None


def check_arch(target: str, arch: str | None) -> None:
    problem = arch_problem(target, arch)
    if problem:
        raise UsageError(problem)


# --- output ------------------------------------------------------------------------------

def check_output_file(path: str, flag: str = "-o", example: str = "out") -> None:
    """`path` can be written as a file (checked before compiling, so that a typo costs no
    compile): not a folder, in a folder that exists and is writable."""
    if os.path.isdir(path):
        raise UsageError(f"{flag} {path} is a folder; give a file name, e.g. "
                         f"{os.path.join(path, example)}")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        what = "is not a folder" if os.path.exists(folder) else "does not exist"
        raise UsageError(f"cannot write {path}: {folder} {what}; create the folder or give "
                         f"another {flag}")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise UsageError(f"cannot write {path}: permission denied; give a writable {flag}")


def check_output_folder(path: str, flag: str = "-o") -> None:
    """`path` is a writable folder or can be created as one."""
    if os.path.exists(path):
        if not os.path.isdir(path):
            raise UsageError(f"{flag} {path} is a file, not a folder; give a folder to write to")
        if not os.access(path, os.W_OK):
            raise UsageError(f"cannot write into {path}: permission denied; give a writable "
                             f"{flag}")
        return
    parent = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise UsageError(f"cannot create folder {path}: {parent} is a file; give another {flag}")
    if not os.access(parent, os.W_OK):
        raise UsageError(f"cannot create folder {path}: {parent} is not writable (permission "
                         f"denied); give another {flag}")


def write_output(path: str, data: bytes | str, flag: str = "-o") -> None:
    mode = "wb" if isinstance(data, bytes) else "w"
    try:
        with open(path, mode) as f:
            f.write(data)
    except OSError as e:
        raise UsageError(f"cannot write {path}: {e.strerror or e}; give another {flag}") from None
