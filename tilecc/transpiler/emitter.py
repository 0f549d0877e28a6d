"""Writing C: a line at the current indentation, a block that opens and closes itself, and
a body captured apart from the output (a lambda's, written under its header later).

    with out.block("{"):             # "{", the body two spaces in, "}"
        out.line("int x = 0;")
    with names.own_names(), out.lambda_body() as body:
        core.region(region)          # the lambda's statements, into `body`

One `Emitter` per rendering, handed to every writer (render.Renderer); its state is its own
and written only here: `lines` (the output), `depth` (levels of two spaces), `last_stmt`
(the statement last commented) and `in_lambda` (no statement comments inside a lambda).
Indentation is paired by the `with`, never by hand.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator


class Emitter:
    def __init__(self) -> None:
        """An empty output, one level in (a kernel's body)."""
        self.lines: list[str] = []
        self.depth = 1
        self.last_stmt: tuple[str, int] | None = None
        self.in_lambda = False

    def new_statement(self, key: tuple[str, int]) -> bool:
        """Whether statement `key` is to be commented here (not inside a lambda, not the
        statement commented last), and if so, it is now the last."""
        if self.in_lambda or key == self.last_stmt:
            return False
        self.last_stmt = key
        return True

    @contextmanager
    def same_last_statement(self) -> Iterator[None]:
        """The statement last commented is back as it was after the `with` (a nested
        region's statements do not hide the next one of the enclosing region)."""
        saved = self.last_stmt
        try:
            yield
        finally:
            self.last_stmt = saved

    def line(self, text: str) -> None:
        """`text` (several lines where it holds newlines) at the current indentation;
        preprocessor lines (pragmas, #line) and empty lines stay at the margin."""
        pad = "  " * self.depth
        for part in text.split("\n"):
            self.lines.append(pad + part if part and not part.startswith("#") else part)

    def extend(self, lines: list[str]) -> None:
        """Lines already indented (a captured lambda body), as they are."""
        self.lines.extend(lines)

    def at_margin(self, text: str) -> None:
        """One line at the margin, whatever the indentation (a `#line` directive)."""
        self.lines.append(text)

    @contextmanager
    def indented(self) -> Iterator[None]:
        """The lines written in the `with` one level in."""
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    @contextmanager
    def block(self, opener: str = "{", closer: str = "}") -> Iterator[None]:
        """`opener`, the lines written in the `with` one level in, then `closer`."""
        self.line(opener)
        with self.indented():
            yield
        self.line(closer)

    @contextmanager
    def block_if(self, wanted: bool, opener: str, closer: str = "}") -> Iterator[None]:
        """A block where `wanted`, else the lines written in the `with` as they are (a
        loop that would run once is written as its body)."""
        if not wanted:
            yield
            return
        with self.block(opener, closer):
            yield

    @contextmanager
    def captured(self) -> Iterator[list[str]]:
        """The lines written in the `with` go to the list it yields, at zero indentation
        (statement comments as anywhere): text for a template, which places them."""
        saved = self.lines, self.depth
        self.lines, self.depth = [], 0
        try:
            yield self.lines
        finally:
            self.lines, self.depth = saved

    @contextmanager
    def lambda_body(self) -> Iterator[list[str]]:
        """The lines written in the `with` go to the list it yields, one level deeper than
        here and without statement comments (a lambda's body); the output, indentation and
        last statement commented are back as they were after it."""
        saved = self.lines, self.depth, self.last_stmt
        body: list[str] = []
        self.lines, self.depth, self.in_lambda = body, saved[1] + 1, True
        try:
            yield body
        finally:
            self.lines, self.depth, self.last_stmt = saved
            self.in_lambda = False
