"""Where the generated source's lines may break, marked as the renderer writes them, and the
lines laid out once their indentation is final (`lay_out`, the renderer's last step).

The code that writes a construct knows its parts: a statement's head and body, an
assignment's two sides, a call's arguments, a chain of `&&`, a comment's words.  Between
parts it writes a mark where it would write a space; `lay_out` turns each mark into a space
where the line fits in `WIDTH` columns, else into a line break:

    BODY   the body of a loop's or branch's head: on the next line, two columns in
    BREAK  between a statement's parts: the rest four columns in
    SPACE  inside an expression (after an operator, a call's comma): used only where
           breaking at BREAK left a line too long, the outermost first (`inner`: the
           marks of what goes inside parentheses or brackets, a level deeper)
    WORD   between a comment's words: the rest under the comment's text
    NOTE   before a trailing comment (in place of its two spaces): where the line is too
           long, the comment goes on a line of its own above the code

A mark is only ever written where the text has a space outside any string, so laying out
changes whitespace only.  Nothing here reads C: a line with no marks, or none in reach,
stays as it was written, however long (index arithmetic the layouts write as text, a long
name, a string literal).  The header's notes are laid out the same way (the templates'
`comment` filter marks their words).
"""

from __future__ import annotations

import re

WIDTH = 100
BODY, BREAK, WORD, NOTE = "\x1c", "\x1d", "\x1f", "\x1a"
_LEVELS = [chr(0xE000 + k) for k in range(16)]  # SPACE, one level deeper each
SPACE = _LEVELS[0]
_MARKS = BODY + BREAK + WORD + NOTE + "".join(_LEVELS)
_ANY_MARK = re.compile(f"[{_MARKS}]")  # (a regex substitutes them 4x faster than translate)
_DEEPER = str.maketrans({a: b for a, b in zip(_LEVELS, _LEVELS[1:] + _LEVELS[-1:])})


def inner(text: str) -> str:
    """`text` to go inside parentheses or brackets: its SPACE marks a level deeper, so that
    a line breaks outside them first."""
    return text.translate(_DEEPER)


def joined(parts, sep: str) -> str:
    """`parts` joined by `sep` (", ", " && "), a line break allowed after each separator."""
    return (sep.rstrip() + BREAK).join(map(str, parts))


def words(comment: str) -> str:
    """A `//` comment (or several lines of them) whose words may move to lines of their
    own (the templates' `comment` filter)."""
    out = []
    for line in str(comment).split("\n"):
        lead = re.match(r" *// *", line)
        out.append(line if lead is None else lead.group() + line[lead.end():].replace(" ", WORD))
    return "\n".join(out)


def flat(text: str) -> str:
    """`text` with every mark a space (NOTE two): as written, on one line."""
    if NOTE in text:
        text = text.replace(NOTE, "  ")
    return _ANY_MARK.sub(" ", text)


def _flat_len(text: str) -> int:
    """len(flat(text)), without making it: every mark is one space but NOTE, two."""
    return len(text) + text.count(NOTE)


def lay_out(text: str, width: int = WIDTH) -> str:
    """Each line of `text` in at most `width` columns where its marks allow."""
    if not any(m in text for m in _MARKS):
        return text
    out: list[str] = []
    for line in text.split("\n"):
        out.extend(_line(line, width))
    return "\n".join(out)


def _line(line: str, width: int) -> list[str]:
    plain = flat(line)
    if len(plain) <= width or plain.lstrip().startswith("#"):
        return [plain]
    indent = " " * (len(line) - len(line.lstrip(" ")))
    if NOTE in line:  # the trailing comment above the code
        code, note = line.split(NOTE, 1)
        return _line(indent + note, width) + _line(code, width)
    if BODY in line:  # the head, then its body two columns in (laid out in turn)
        head, body = line.split(BODY, 1)
        return _line(head, width) + _line(indent + "  " + body, width)
    if WORD in line:  # a comment: the rest under its text
        return [flat(x) for x in _fill(line, WORD, re.match(r" *// *", line).group() + "  ",
                                       width)]
    more = indent + "    "
    pieces = _fill(line, BREAK, more, width)
    for level in _LEVELS:  # a line still too long at a statement's parts: its operands apart
        pieces = [x for piece in pieces for x in
                  (_fill(piece, level, more, width) if _flat_len(piece) > width else [piece])]
    return [flat(x) for x in pieces]


def _fill(line: str, marks: str, more: str, width: int) -> list[str]:
    """`line` broken at `marks` (the others kept): as many parts on each line as fit, the
    rest on lines of their own, each starting with `more`."""
    parts = re.split(f"([{marks}])", line)
    lines, current = [], parts[0]
    for part in parts[2::2]:
        if _flat_len(current) + 1 + _flat_len(part) > width and current.strip():
            lines.append(current)
            current = more + part
        else:
            current += " " + part
    lines.append(current)
    return lines
