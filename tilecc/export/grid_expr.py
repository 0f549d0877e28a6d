"""The C expressions of `--grid`, parsed and checked before they go into a header.

Consumes the `--grid` text; produces one parse tree per dimension (`parse`), and the type of
an expression given the types of the names it reads (`check`).  The grammar is the part of
C a grid needs: integer and floating literals (`1024`, `1024u`, `0x400`, `0.5`), names,
the launcher's helpers `cdiv(a, b)`, `min(a, b)`, `max(a, b)`, parentheses, unary
`+ - ! ~`, binary `* / % + - << >> < <= > >= == != & ^ | && ||` and `c ? a : b`.  So a
typo, an unknown name, a helper with the wrong number of arguments, a pointer, or a
floating-point dimension (which C would truncate without a word) is an error naming the
expression and the column, not a C++ compile error in the user's build.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HELPERS = {"cdiv": 2, "min": 2, "max": 2}  # the launcher's inline functions: their arity

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<number>(?:0[xX][0-9a-fA-F]+|(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\d+)
               [uUlLfF]*)
  | (?P<name>[^\W\d]\w*)
  | (?P<op><<|>>|<=|>=|==|!=|&&|\|\||[-+*/%<>&|^~!?:(),])
""", re.X)

# binary operators by C precedence, loosest first
_LEVELS = [("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", "<=", ">", ">="),
           ("<<", ">>"), ("+", "-"), ("*", "/", "%")]
_INT_ONLY = {"%", "<<", ">>", "&", "^", "|"}
_TRUTH = {"||", "&&", "==", "!=", "<", "<=", ">", ">="}


class GridError(ValueError):
    """A grid expression that is not valid: `message` and the 1-based `column`."""

    def __init__(self, message: str, column: int):
        super().__init__(message)
        self.message = message
        self.column = column


@dataclass
class Node:
    kind: str  # "number", "name", "call", "unary", "binary", "cond"
    col: int  # 1-based column of its first character in the whole --grid text
    text: str = ""  # the number's or name's spelling, the operator
    args: tuple = ()
    is_float: bool = False  # of a number


def parse(text: str) -> list[Node]:
    """One to three comma-separated expressions; GridError on anything else."""
    tokens = []
    at = 0
    while at < len(text):
        m = _TOKEN.match(text, at)
        if m is None:
            raise GridError(f"`{text[at]}` is not part of a grid expression", at + 1)
        if m.lastgroup != "space":
            tokens.append((m.lastgroup, m.group(), at + 1))
        at = m.end()
    parser = _Parser(tokens, len(text) + 1)
    exprs = [parser.expr()]
    while parser.accept(","):
        exprs.append(parser.expr())
    if parser.peek() is not None:
        kind, tok, col = parser.peek()
        what = "an unmatched `)`" if tok == ")" else f"`{tok}` where an operator or the end " \
            "was expected"
        raise GridError(what, col)
    if len(exprs) > 3:
        raise GridError("a grid has one to three dimensions", exprs[3].col)
    return exprs


class _Parser:
    def __init__(self, tokens: list, end: int):
        self.tokens, self.at, self.end = tokens, 0, end

    def peek(self):
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def accept(self, op: str) -> bool:
        t = self.peek()
        if t is not None and t[0] == "op" and t[1] == op:
            self.at += 1
            return True
        return False

    def expect(self, op: str, opened: int | None = None) -> None:
        if not self.accept(op):
            t = self.peek()
            where = t[2] if t else self.end
            found = f"`{t[1]}`" if t else "the end"
            also = f" (to close the `(` at column {opened})" if opened else ""
            raise GridError(f"expected `{op}`{also}, found {found}", where)

    def expr(self) -> Node:
        cond = self.binary(0)
        if self.accept("?"):
            then = self.expr()
            self.expect(":")
            return Node("cond", cond.col, "?", (cond, then, self.expr()))
        return cond

    def binary(self, level: int) -> Node:
        if level == len(_LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        while True:
            t = self.peek()
            if t is None or t[0] != "op" or t[1] not in _LEVELS[level]:
                return left
            self.at += 1
            left = Node("binary", left.col, t[1], (left, self.binary(level + 1)))

    def unary(self) -> Node:
        t = self.peek()
        if t is not None and t[0] == "op" and t[1] in ("+", "-", "!", "~"):
            self.at += 1
            return Node("unary", t[2], t[1], (self.unary(),))
        return self.primary()

    def primary(self) -> Node:
        t = self.peek()
        if t is None:
            raise GridError("the expression ends where a value was expected", self.end)
        kind, tok, col = t
        self.at += 1
        if kind == "number":
            digits = tok.rstrip("uUlLfF")
            is_float = not tok.lower().startswith("0x") and (
                "." in digits or "e" in digits.lower() or "f" in tok[len(digits):].lower())
            return Node("number", col, tok, is_float=is_float)
        if kind == "name":
            if self.accept("("):
                args = []
                if not self.accept(")"):
                    args.append(self.expr())
                    while self.accept(","):
                        args.append(self.expr())
                    self.expect(")", col + len(tok))
                return Node("call", col, tok, tuple(args))
            return Node("name", col, tok)
        if tok == "(":
            inner = self.expr()
            self.expect(")", col)
            return inner
        raise GridError(f"`{tok}` where a value was expected", col)


def check(node: Node, types: dict[str, str], unknown) -> str:
    """"int" or "float": the C type class of `node`.  `types`: name -> "int", "float" or
    "pointer"; `unknown(node)` raises for a name not in it."""
    k = node.kind
    if k == "number":
        return "float" if node.is_float else "int"
    if k == "name":
        if node.text in HELPERS:
            raise GridError(f"`{node.text}` is a function: call it, {node.text}(a, b)", node.col)
        t = types.get(node.text)
        if t is None:
            unknown(node)
        if t == "pointer":
            raise GridError(f"`{node.text}` is a pointer; a grid reads integers", node.col)
        return t
    if k == "call":
        if node.text not in HELPERS:
            if node.text in types:
                raise GridError(f"`{node.text}` is not a function (the helpers are "
                                f"{', '.join(sorted(HELPERS))})", node.col)
            unknown(node)
        n = HELPERS[node.text]
        if len(node.args) != n:
            raise GridError(f"`{node.text}` takes {n} arguments, not {len(node.args)}", node.col)
        for a in node.args:
            if check(a, types, unknown) != "int":
                raise GridError(f"`{node.text}` takes integers (the launcher's helpers are "
                                "long long)", a.col)
        return "int"
    if k == "unary":
        t = check(node.args[0], types, unknown)
        if node.text == "~" and t != "int":
            raise GridError("`~` needs an integer", node.col)
        return "int" if node.text == "!" else t
    if k == "binary":
        a, b = (check(x, types, unknown) for x in node.args)
        if node.text in _INT_ONLY and "float" in (a, b):
            raise GridError(f"`{node.text}` needs integers", node.col)
        if node.text in _TRUTH:
            return "int"
        return "float" if "float" in (a, b) else "int"
    cond, then, other = node.args
    check(cond, types, unknown)
    a, b = check(then, types, unknown), check(other, types, unknown)
    return "float" if "float" in (a, b) else "int"
