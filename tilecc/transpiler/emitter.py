"""Writing C: a line at the current indentation, a block that opens and closes itself, and
a body captured apart from the output (a lambda's, written under its header later).

    with self.block("{"):            # "{", the body two spaces in, "}"
        self.line("int x = 0;")
    with self.own_names(), self.lambda_body() as body:
        self.region(region)          # the lambda's statements, into `body`

A mixin of `render.Renderer`, which holds the state it writes: `lines` (the output),
`depth` (levels of two spaces), `last_stmt` (the statement last commented) and `in_lambda`
(no statement comments inside a lambda), `taken` (the C names in use).  Indentation is
paired by the `with`, never by hand.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator


class CEmitter:
    lines: list[str]
    depth: int
    last_stmt: tuple[str, int] | None
    in_lambda: bool
    taken: set[str]

    def line(self, text: str) -> None:
        """`text` (several lines where it holds newlines) at the current indentation;
        pragmas and empty lines stay at the margin."""
        pad = "  " * self.depth
        for part in text.split("\n"):
            self.lines.append(pad + part if part and not part.startswith("#pragma") else part)

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

    @contextmanager
    def own_names(self) -> Iterator[None]:
        """Names taken in the `with` are its own (a lambda captures nothing: its parameters
        and locals may reuse the kernel's names); the kernel's are back after it."""
        saved, self.taken = self.taken, set()
        try:
            yield
        finally:
            self.taken = saved
