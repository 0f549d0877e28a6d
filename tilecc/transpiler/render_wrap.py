"""Breaks the generated source's long lines (over `WIDTH` columns) where a person would.

Only whitespace changes: a line breaks at a space outside string and character literals,
so the compiler sees the same tokens.  Comments wrap at words, their continuation indented
under their text; code breaks after a comma or semicolon, before a binary operator, or
after a loop's or branch's head, preferring the shallowest parenthesis level, and its
continuation lines up after the open parenthesis it is inside (or four columns in).
Preprocessor lines (and macro continuations) stay as they are; so does anything with no
break point in reach, such as one long word.

Prose the templates write knowing its column (the kernel's header notes) is laid out as it
is written, by the `comment` filter (`comment_lines`); this pass then finds those lines
short and leaves them.
"""

from __future__ import annotations

WIDTH = 100
_OPERATORS = ("&& ", "|| ", "? ", ": ", "+ ", "- ", "& ", "| ", "< ", "<= ", "> ", ">= ",
              "== ", "!= ")


def wrap_source(text: str, width: int = WIDTH) -> str:
    out: list[str] = []
    continued = False  # the previous line ended with a backslash
    for line in text.split("\n"):
        stripped = line.lstrip()
        if len(line) <= width or continued or stripped.startswith("#"):
            out.append(line)
        elif stripped.startswith("//"):
            out.extend(_wrap_comment(line, width))
        else:
            out.extend(_wrap_code(line, width))
        continued = line.endswith("\\")
    return "\n".join(out)


def comment_lines(line: str, width: int = WIDTH) -> str:
    """A `//` comment line, at most `width` columns where its words allow: continuation
    lines indented under its text (the `comment` filter of the templates)."""
    return line if len(line) <= width else "\n".join(_wrap_comment(line, width))


def _wrap_comment(line: str, width: int) -> list[str]:
    indent = line[:len(line) - len(line.lstrip())]
    body = line.lstrip()[2:]
    text = body.lstrip()
    lead = indent + "//" + body[:len(body) - len(text)]
    more = lead + "  "
    lines, current = [], lead
    for word in text.split(" "):
        candidate = current + word if current in (lead, more) else current + " " + word
        if len(candidate) > width and current not in (lead, more):
            lines.append(current)
            current = more + word
        else:
            current = candidate
    lines.append(current)
    return lines


def _code_and_comment(line: str) -> tuple[str, str]:
    """The line's code and its trailing `//` comment ('' if none)."""
    quote = None
    i = 0
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif line.startswith("//", i):
            return line[:i].rstrip(), line[i:]
        i += 1
    return line, ""


def _break_points(line: str, start: int) -> list[tuple[int, int, int, int, int]]:
    """(where the first part ends, where the rest starts, depth, the open parenthesis it is
    inside (-1: none or a brace, -2: after a loop's or branch's head), rank:
    3 after a head, 2 after a comma, semicolon or `=`, 1 before an operator, 0 before a `:`) for
    each place after `start` where the line may break."""
    points, stack, quote, heads, templates = [], [], None, [], 0
    i = 0
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = None
            i += 1
            continue
        if c in "\"'":
            quote = c
        elif c == "<" and i and (line[i - 1].isalnum() or line[i - 1] == "_") \
                and line[i + 1:i + 2] not in (" ", "<", "="):
            templates += 1  # a template's arguments: never broken
        elif c == ">" and templates and line[i - 1] != "-":
            templates -= 1
        elif templates:
            pass
        elif c in "([{":
            stack.append(i)
            word = line[:i].rstrip().rsplit(" ", 1)[-1]
            heads.append(c == "(" and word in ("for", "if", "while"))
        elif c in ")]}":
            if stack:
                stack.pop()
                head = heads.pop()
                if head and not stack and line.startswith(" ", i + 1):
                    points.append((i + 1, i + 2, 0, -2, 3))  # after a loop's or branch's head
        elif c == " " and i > start:
            after = line[i - 1] in ",;" or line[i - 2:i] == " ="  # break after it
            before = any(line.startswith(op, i + 1) for op in _OPERATORS)
            if after or before:
                # inside parentheses the continuation lines up after them; in braces, four in
                inner = stack[-1] if stack and line[stack[-1]] != "{" else -1
                rank = 2 if after else 0 if line.startswith(": ", i + 1) else 1
                points.append((i, i + 1, len(stack), inner, rank))
        i += 1
    return points


def _wrap_code(line: str, width: int) -> list[str]:
    code, comment = _code_and_comment(line)
    indent = len(code) - len(code.lstrip())
    lines = [" " * indent + comment] if comment else []
    points = _break_points(code, indent + 1)
    # the physical lines so far: (where each starts in `code`, the column it is shown at)
    starts, cols = [0], [0]
    body = indent  # the statement's indentation (a loop's body's, once that has moved)

    def column_of(pos: int) -> int:  # where `code[pos]` is shown
        k = max(n for n, s in enumerate(starts) if s <= pos)
        return cols[k] + pos - starts[k]

    while column_of(len(code)) > width:
        reach = [p for p in points if p[1] > starts[-1] and p[0] > starts[-1]
                 and column_of(p[0]) <= width]
        if not reach:
            break
        # the shallowest level; there the last comma, semicolon or `=` in reach, else the
        # last operator (a conditional's `:` last)
        depth = min(p[2] for p in reach)
        end, rest, _, paren, _ = max((p for p in reach if p[2] == depth),
                                     key=lambda p: (p[4], p[0]))
        if paren == -2:
            column = body = indent + 2  # a loop's or branch's body
        elif paren >= 0 and column_of(paren) + 1 <= width // 2:
            column = column_of(paren) + 1  # lined up after the open parenthesis
        else:
            column = body + 4
        piece = code[starts[-1]:end].rstrip()
        lines.append(piece if len(starts) == 1 else " " * cols[-1] + piece.lstrip())
        starts.append(rest)
        cols.append(column)
    lines.append(" " * cols[-1] + code[starts[-1]:].lstrip() if len(starts) > 1 else code)
    return lines
