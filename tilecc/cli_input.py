"""What the command line reads and writes, checked before any work: the user's kernel file
(`FILE.py:KERNEL`), signatures, architectures, output files and folders.

Each problem is a `UsageError` whose message is one line that names the file (and line,
where there is one) and says what to do; `tilecc.cli.main` prints it as
`tilecc: error: ...`.  Kernel files written against `triton.language` load even where
Triton is not installed: `import triton` then resolves to tilecc (`tilecc.compat`).
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import linecache
import os
import re
import sys
import traceback
import types

from tilecc import compat
from tilecc.runtime.options import OPTIONS, CompileOptions, arch_problem


class UsageError(Exception):
    """Bad input to the command line: the message is one line, printed without traceback."""


def _suggest(name: str, candidates, what: str = "", n: int = 3) -> str:
    close = difflib.get_close_matches(name, list(candidates), n=n, cutoff=0.6)
    if not close:
        return ""
    return f"; did you mean {' or '.join(f'`{c}`' for c in close)}{what}?"


# --- the user's file -----------------------------------------------------------------------

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
    if not compat.installed() and importlib.util.find_spec("triton") is None:
        compat.install()
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
        if os.environ.get("TILECC_TRACEBACK") == "1":  # as the message below promises
            raise
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


# --- compile options: the same flags on emit, compile and export ----------------------------

def option_type(name: str, convert=int):
    """An argparse type that checks a value as the options table does (its message)."""
    def check(text: str):
        try:
            value = convert(text)
        except ValueError:
            value = text
        try:
            return OPTIONS[name].check(value)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    check.__name__ = name  # argparse names the type in its messages
    return check


def add_compile_options(parser: argparse.ArgumentParser, default_arch: str) -> None:
    """The options of kernel.source() / kernel.compile() as flags: --target, --arch,
    --num-warps, --num-stages, --maxnreg, --no-fp-fusion, --debug (`compile_options`
    reads them back)."""
    group = parser.add_argument_group("compile options (as kernel.source() and "
                                      "kernel.compile() take them)")
    group.add_argument("--target", type=option_type("target", str), default="cuda",
                       metavar="{cuda,hip}", help="default: cuda")
    group.add_argument("--arch", help=f"sm_80, sm_90, sm_90a, gfx90a, ... (default: "
                       f"{default_arch})")
    group.add_argument("--num-warps", type=option_type("num_warps"), default=4,
                       help="warps per program (default: 4)")
    group.add_argument("--num-stages", type=option_type("num_stages"), default=None,
                       help="shared-memory stages of tl.dot's pipelined operands (default: 3)")
    group.add_argument("--maxnreg", type=option_type("maxnreg"), default=None,
                       help="at most this many registers per thread (CUDA: __maxnreg__)")
    group.add_argument("--no-fp-fusion", dest="enable_fp_fusion", action="store_false",
                       help="never contract a * b + c into an fma (enable_fp_fusion=False: "
                       "written into the source, whatever flags build it)")
    group.add_argument("--debug", action="store_true", help="keep tl.device_assert checks")


def compile_options(args: argparse.Namespace) -> dict:
    """The Python API's keywords for the compile options given (`add_compile_options`);
    maxnreg and enable_fp_fusion only where they differ from the default.  Checked together
    before anything is built: the architecture against the target, maxnreg on CUDA only."""
    check_arch(args.target, args.arch)
    try:
        CompileOptions(maxnreg=args.maxnreg).native_flags(args.target)
    except ValueError as e:
        raise UsageError(f"--maxnreg: {e}") from None
    given = dict(arch=args.arch, num_warps=args.num_warps, num_stages=args.num_stages,
                 debug=args.debug)
    given.update({k: v for k, v in (("maxnreg", args.maxnreg),
                                    ("enable_fp_fusion", args.enable_fp_fusion))
                  if v != OPTIONS[k].default})
    return given


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
