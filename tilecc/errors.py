"""Errors that point at the user's Python: file, line, column, the line itself, a caret."""

from __future__ import annotations

import linecache
import os
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Loc:
    """A place in the user's source: 1-based line, 0-based column (as libcst reports)."""

    file: str
    line: int
    col: int = 0
    function: str = ""
    stmt: int = 0  # first line of the enclosing statement: groups ops for comments

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col + 1}"

    def source_line(self) -> str:
        from tilecc import source

        text = source.line(self.file, self.line)  # as imported, though the file changed since
        if text is None:
            text = linecache.getline(self.file, self.line)
        return text.rstrip("\n")


class CompilationError(Exception):
    """A kernel could not be compiled; the message shows where in the user's source."""

    # the Python exception a frontend check raised ("ValueError", "TypeError"...), which
    # Triton wraps in its CompilationError the same way; None for the frontend's own
    python_error: str | None = None

    def __init__(self, message: str, loc: Loc | None = None, *, log: str = ""):
        self.message = message
        self.loc = loc
        self.log = log
        super().__init__(self._format())

    def _format(self) -> str:
        return _at(self.loc, self.message)

    @property
    def error_message(self) -> str:
        """The message alone, without the place (Triton's attribute of this name)."""
        return self.message


def _at(loc: Loc | None, message: str) -> str:
    """`message` after the place: file:line:col, the line, a caret under the column."""
    if loc is None:
        return message
    where = f"{loc}" + (f" in {loc.function}" if loc.function else "")
    text = loc.source_line()
    if not text:
        return f"{where}: {message}"
    stripped = text.lstrip()
    indent = len(text) - len(stripped)
    caret = " " * (4 + max(0, loc.col - indent)) + "^"
    return f"{where}:\n    {stripped}\n{caret}\n{message}"


def python_cause(e: BaseException) -> BaseException | None:
    """The Python exception a compile error wraps (a frontend check's ValueError...), kept
    as its `__cause__` when tilecc re-raises the error without its own frames: Triton's
    CompilationError has the same cause, and programs read its message there."""
    cause = e.__cause__
    if isinstance(e, CompilationError) and cause is not None and cause.__traceback__ is None:
        return cause
    return None


class CompileTimeAssertionFailure(CompilationError):
    """A `tl.static_assert` failed (Triton's class of the same name)."""


class UnsupportedLanguageConstruct(CompilationError):
    """Python the kernel language does not have (Triton's class of the same name):
    `break`, `return` inside a loop, a `with` or `try` statement..."""


class InterpreterError(Exception):
    """A kernel run on the interpreter did something illegal (an out-of-bounds access,
    a failed device assertion); the message names the user's line."""

    def __init__(self, message: str, loc: Loc | None = None):
        self.message = message
        self.loc = loc
        super().__init__(_at(loc, message))


class OutOfResources(CompilationError):
    """A kernel needs more of a per-program resource than the target has: raised before
    the native compiler runs (Triton's `triton.runtime.errors.OutOfResources`, same
    message).  `required` and `limit` are bytes; `name` says which resource; the
    autotuner skips configurations that raise it."""

    def __init__(self, required: int, limit: int, name: str, details: str = ""):
        self.required, self.limit, self.name, self.details = required, limit, name, details
        message = (f"out of resource: {name}, Required: {required}, Hardware limit: {limit}. "
                   "Reducing block sizes or `num_stages` may help.")
        super().__init__(message + (f"\n{details}" if details else ""))

    def __reduce__(self):  # picklable, as Triton's
        return (type(self), (self.required, self.limit, self.name, self.details))


class LaunchError(TypeError):
    """A launch whose arguments do not fit the kernel (a misspelt keyword, a Python list
    where an array goes, a missing argument...).  The message names the launch's line in
    the user's code (the first frame outside tilecc), and launches re-raise it without
    tilecc's frames behind it.  A TypeError, as Python's own for a call that does not bind."""

    def __init__(self, message: str, loc: Loc | None = None):
        self.message = message
        self.loc = loc if loc is not None else caller_loc()
        super().__init__(_at(self.loc, message))


class HostArrayError(LaunchError, ValueError):
    """A GPU launch given a host array (NumPy, a CPU tensor): a LaunchError, and a
    ValueError as Triton's launch raises for it."""


class OptionError(ValueError, AssertionError):
    """A compile or launch option out of its range (`num_warps=3`): a ValueError, and an
    AssertionError too, as Triton checks its options with asserts ("num_warps must be a
    power of 2")."""


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def caller_loc() -> Loc | None:
    """Where the user's code called into tilecc: the innermost frame outside the package
    (its column from the instruction's position, Python 3.11+)."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame = frame.f_back
    if frame is None:
        return None
    code, col = frame.f_code, 0
    positions = getattr(code, "co_positions", None)
    if positions is not None:
        for i, (_, _, start, _) in enumerate(positions()):
            if i == frame.f_lasti // 2:
                col = start or 0
                break
    function = "" if code.co_name == "<module>" else code.co_name
    return Loc(code.co_filename, frame.f_lineno, col, function)


class PTXASError(CompilationError):
    """ptxas rejected the generated PTX (Triton's class of the same name; tilecc reports
    its native compilers' errors as CompilationErrors at the user's line, so this one is
    for code that catches Triton's)."""


class AutotunerError(ValueError):
    """An autotuner was left with nothing to try: `early_config_prune` returned no
    configuration (Triton's class of the same name)."""


class NoDeviceError(RuntimeError):
    """A GPU launch on a machine where no usable CUDA driver or GPU was found."""


class OutOfRegisters(CompilationError):
    """A block value would give each thread more elements than tilecc compiles (their
    register arrays: ptxas spills them and takes minutes).  `required` and `limit` are
    elements per thread, `name` is "registers", as Triton's OutOfResources has them; an
    autotuner skips such a config like any compile error."""

    def __init__(self, message: str, loc: Loc | None, required: int, limit: int):
        self.required, self.limit, self.name = required, limit, "registers"
        super().__init__(message, loc)


# What each optional part needs (pyproject.toml's extras, which a test keeps equal).  No
# package index serves tilecc itself, so a hint names the packages, and the extra to give
# pip from a checkout.
EXTRAS = {"cuda": ("cupy-cuda13x>=13", "nvidia-cuda-nvrtc>=13"),
          "nvrtc": ("nvidia-cuda-nvrtc>=13",),
          "hip": ("hip-python==6.2.0.499.16",),
          "testing": ("hypothesis>=6.90", "pytest>=7")}


def install_hint(extra: str) -> str:
    """How to install what `extra` adds: `pip install 'pkg>=v' ... (in a checkout of
    tilecc: pip install '.[extra]')`."""
    packages = " ".join(f"'{p}'" for p in EXTRAS[extra])
    return f"pip install {packages} (in a checkout of tilecc: pip install '.[{extra}]')"
