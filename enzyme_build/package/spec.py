"""The `--export` spec language: `f(x[n], n, k)`, `g(inout:y[m*n], m, n)`, parsed into dataclasses.

A length is an expression over integer literals and parameter names with + - * / and
parentheses; it is parsed here once and evaluated by `evaluate` (no eval, no shell).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import EnzymeBuildError

TOKEN = re.compile(r"\s*(?:(?P<number>\d+)|(?P<name>[A-Za-z_]\w*)|(?P<op>[-+*/()\[\],:]))")
SPEC_HINT = ("write each export as NAME(PARAM, …), one entry per C parameter in order, "
             "e.g. --export 'energy(x[n], n, k)'; a pointer needs its length: x[n], A[m*n]; "
             "'inout:' before a name marks an in-out array")


@dataclass(frozen=True)
class Length:
    """A length expression: ("num", 3) | ("name", "n") | (op, left, right)."""

    tree: tuple
    text: str

    def names(self) -> set[str]:
        return set(_names(self.tree))


@dataclass(frozen=True)
class ParamSpec:
    name: str
    length: Length | None  # None: a scalar
    inout: bool = False


@dataclass(frozen=True)
class ExportSpec:
    function: str
    params: tuple[ParamSpec, ...]
    text: str


def _names(tree: tuple):
    if tree[0] == "name":
        yield tree[1]
    elif tree[0] != "num":
        yield from _names(tree[1])
        yield from _names(tree[2])


def evaluate(length: Length, values: dict[str, int]) -> int:
    """The value of a length expression given the integer parameters' values."""
    def walk(tree):
        kind = tree[0]
        if kind == "num":
            return tree[1]
        if kind == "name":
            return int(values[tree[1]])
        left, right = walk(tree[1]), walk(tree[2])
        if kind == "+":
            return left + right
        if kind == "-":
            return left - right
        if kind == "*":
            return left * right
        if right == 0:
            raise ZeroDivisionError(f"division by zero in length {length.text}")
        return left // right
    return walk(length.tree)


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens: list[tuple[str, object, int]] = []
        position = 0
        stripped = text.rstrip()
        while position < len(stripped):
            match = TOKEN.match(stripped, position)
            if not match:
                self.fail(f"unexpected character {stripped[position:].lstrip()[:1]!r}", position)
            kind = match.lastgroup
            value = match.group(kind)
            self.tokens.append((kind, int(value) if kind == "number" else value, match.start(kind)))
            position = match.end()
        self.index = 0

    def fail(self, what: str, position: int | None = None):
        if position is None:
            position = self.tokens[self.index][2] if self.index < len(self.tokens) else len(self.text)
        raise EnzymeBuildError(f"bad export spec {self.text!r}: {what} (at column {position + 1})",
                               hint=SPEC_HINT)

    def peek(self):
        return self.tokens[self.index][1] if self.index < len(self.tokens) else None

    def parse_optional_op(self, op: str) -> bool:
        if self.index < len(self.tokens) and self.tokens[self.index][0] == "op" \
                and self.tokens[self.index][1] == op:
            self.index += 1
            return True
        return False

    def parse_op(self, op: str) -> None:
        if not self.parse_optional_op(op):
            found = self.peek()
            self.fail(f"expected {op!r}, found {found!r}" if found is not None
                      else f"expected {op!r} before the end")

    def parse_name(self, what: str) -> str:
        if self.index < len(self.tokens) and self.tokens[self.index][0] == "name":
            self.index += 1
            return self.tokens[self.index - 1][1]
        found = self.peek()
        self.fail(f"expected {what}, found {found!r}" if found is not None
                  else f"expected {what} before the end")

    def parse_export(self) -> ExportSpec:
        function = self.parse_name("a function name")
        self.parse_op("(")
        params: list[ParamSpec] = []
        if not self.parse_optional_op(")"):
            while True:
                params.append(self.parse_param())
                if self.parse_optional_op(")"):
                    break
                self.parse_op(",")
        if self.index != len(self.tokens):
            self.fail(f"unexpected {self.peek()!r} after ')'")
        seen: set[str] = set()
        for param in params:
            if param.name in seen:
                self.fail(f"parameter {param.name!r} listed twice", 0)
            seen.add(param.name)
        return ExportSpec(function, tuple(params), self.text)

    def parse_param(self) -> ParamSpec:
        name = self.parse_name("a parameter name")
        inout = False
        if name == "inout" and self.parse_optional_op(":"):
            inout = True
            name = self.parse_name("a parameter name after 'inout:'")
        length = None
        if self.parse_optional_op("["):
            start = self.index
            tree = self.parse_sum()
            end_position = self.tokens[self.index][2] if self.index < len(self.tokens) else len(self.text)
            text = self.text[self.tokens[start][2]:end_position].strip()
            self.parse_op("]")
            length = Length(tree, text)
        elif inout:
            self.fail(f"'inout:{name}' needs a length, e.g. inout:{name}[n]")
        return ParamSpec(name, length, inout)

    def parse_sum(self) -> tuple:
        tree = self.parse_product()
        while self.peek() in ("+", "-"):
            op = self.tokens[self.index][1]
            self.index += 1
            tree = (op, tree, self.parse_product())
        return tree

    def parse_product(self) -> tuple:
        tree = self.parse_factor()
        while self.peek() in ("*", "/"):
            op = self.tokens[self.index][1]
            self.index += 1
            tree = (op, tree, self.parse_factor())
        return tree

    def parse_factor(self) -> tuple:
        if self.index >= len(self.tokens):
            self.fail("expected a length (a number or a parameter name) before the end")
        kind, value, _ = self.tokens[self.index]
        if kind == "number":
            self.index += 1
            return ("num", value)
        if kind == "name":
            self.index += 1
            return ("name", value)
        if self.parse_optional_op("("):
            tree = self.parse_sum()
            self.parse_op(")")
            return tree
        self.fail(f"expected a number or a parameter name in a length, found {value!r}")


def parse_export(text: str) -> ExportSpec:
    """Parse one `--export` value; an EnzymeBuildError names what is wrong and where."""
    if not text.strip():
        raise EnzymeBuildError("empty export spec", hint=SPEC_HINT)
    return _Parser(text).parse_export()
