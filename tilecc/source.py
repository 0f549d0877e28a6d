"""The source of `@jit` functions as Python imported them.

`@tilecc.jit` runs right after Python compiled the function from its file, so the file's
text at that moment is the text of the function Python runs (as Triton does, the source
is captured there).  A file edited afterwards must not change what compiles, nor where
an error's caret points: the frontend parses the captured lines, the disk cache keys on
them, and `Loc.source_line` reads them.
"""

from __future__ import annotations

import linecache
import sys
import types
from typing import Callable

# file -> {line number: text} of every captured function (for error messages)
_lines_by_file: dict[str, dict[int, str]] = {}


def capture(fn: Callable) -> tuple[str, int, list[str]] | None:
    """(file, first line, lines) of `fn` from its first decorator to its last line of
    code, read now; kept on the function.  None where there is no file (a REPL, exec)."""
    code = fn.__code__
    last = last_code_line(code)
    linecache.checkcache(code.co_filename)  # a file rewritten since linecache read it
    lines = linecache.getlines(code.co_filename, fn.__globals__)
    if not lines or len(lines) < last:
        lines = _text_given_to_exec(code)
    if not lines or len(lines) < last:
        return None
    first = code.co_firstlineno
    # the last line of code may open a statement that closes below it (a lone `)`): the
    # function runs on while lines are indented deeper than its `def` (or blank)
    indent = _indent(lines[first - 1])
    end = last
    while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > indent):
        end += 1
    while end > last and not lines[end - 1].strip():
        end -= 1
    snapshot = (code.co_filename, first, lines[first - 1:end])
    fn.__tilecc_source__ = snapshot
    by_line = _lines_by_file.setdefault(code.co_filename, {})
    for i, text in enumerate(snapshot[2]):
        by_line[first + i] = text
    return snapshot


def _text_given_to_exec(code: types.CodeType) -> list[str] | None:
    """The lines of a function that `exec(text)` defined (a kernel written from a template
    at run time): Python keeps no copy of the text, but the code that called exec holds it
    in a variable.  Found from the frame running the exec'd text: its caller's string
    variables, the one whose compiled code holds this function's being the text."""
    if not code.co_filename.startswith("<"):
        return None  # a file: its text is the file's
    frame = sys._getframe(1)
    while frame is not None and not (frame.f_code.co_filename == code.co_filename and
                                     frame.f_code.co_name == "<module>"):
        frame = frame.f_back
    caller = frame.f_back if frame is not None else None
    if caller is None:
        return None
    for value in list(caller.f_locals.values()):
        if not isinstance(value, str) or code.co_name not in value:
            continue
        try:
            compiled = compile(value, code.co_filename, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            continue
        if _holds(compiled, code):
            return value.splitlines(keepends=True)
    return None


def _holds(outer: types.CodeType, code: types.CodeType) -> bool:
    stack = [outer]
    while stack:
        c = stack.pop()
        if c.co_name == code.co_name and c.co_firstlineno == code.co_firstlineno and \
                c.co_code == code.co_code:
            return True
        stack.extend(x for x in c.co_consts if isinstance(x, types.CodeType))
    return False


def with_source(fn: Callable, text: str) -> Callable:
    """A copy of `fn` that compiles from `text` instead of the source Python read (Triton's
    `JITFunction._unsafe_update_src`: a kernel's text edited before it compiles; the
    parameters must stay those of `fn`).  Its lines are numbered from `fn`'s `def`."""
    copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__annotations__ = dict(fn.__annotations__)
    copy.__qualname__, copy.__module__, copy.__doc__ = fn.__qualname__, fn.__module__, fn.__doc__
    old = captured(fn)
    file, first = fn.__code__.co_filename, fn.__code__.co_firstlineno
    if old is not None:
        file, first = old[0], old[1] + next(
            (i for i, line in enumerate(old[2]) if line.lstrip().startswith("def ")), 0)
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    copy.__tilecc_source__ = (file, first, lines)
    return copy


def last_code_line(code: types.CodeType) -> int:
    """The last line that holds code of `code` or of a function nested in it."""
    last = code.co_firstlineno
    stack = [code]
    while stack:
        c = stack.pop()
        last = max([last, *(ln for _, _, ln in c.co_lines() if ln is not None)])
        stack.extend(x for x in c.co_consts if isinstance(x, types.CodeType))
    return last


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def captured(fn: Callable) -> tuple[str, int, list[str]] | None:
    return getattr(fn, "__tilecc_source__", None)


def line(file: str, number: int) -> str | None:
    """The text of a captured line (None where no captured function covers it)."""
    return _lines_by_file.get(file, {}).get(number)
