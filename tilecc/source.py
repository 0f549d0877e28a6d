"""The source of `@jit` functions as Python imported them.

`@tilecc.jit` runs right after Python compiled the function from its file, so the file's
text at that moment is the text of the function Python runs (as Triton does, the source
is captured there).  A file edited afterwards must not change what compiles, nor where
an error's caret points: the frontend parses the captured lines, the disk cache keys on
them, and `Loc.source_line` reads them.
"""

from __future__ import annotations

import linecache
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
