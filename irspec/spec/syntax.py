"""Metric-spec text to a syntax tree, and expressions back to text.

This module is the parsing phase only: it knows the grammar (``grammar/metric.lark``) but no metric
names. :mod:`irspec.spec.registry` binds the tree to registered metric definitions.

The grammar, in EBNF: the rules of ``grammar/metric.lark`` as lark reads them, without the marks that
shape only the tree (``?rule``, ``-> alias``); ``tests/test_spec.py`` compiles both and holds them equal::

    spec_list: spec (","? spec)* ","?
    spec: NAME arguments? ("@" cutoff)?
    arguments: "(" [argument ("," argument)* ","?] ")"
    argument: NAME "=" value | NAME "@" cutoff | value
    value: expr | dict | list | STRING
    dict: "{" [pair ("," pair)* ","?] "}"
    pair: expr ":" expr
    list: "[" [expr ("," expr)* ","?] "]"
    cutoff: NUMBER | NAME | "(" expr ")"
    expr: term | expr "+" term | expr "-" term
    term: factor | term "*" factor | term "/" factor
    factor: NUMBER | NAME | "-" factor | "+" factor | "(" expr ")"

``NUMBER`` is a decimal number (an exponent allowed) not followed by a letter, digit, underscore or dot;
``STRING`` a single- or double-quoted string with backslash escapes; ``NAME`` a word of Unicode letters,
digits and underscores (hyphens join words: ``R-prec``). ``NAME`` also carries trec_eval's dotted
parameter suffix (``P.5,10``, ``ndcg.1=3,2=9``) and pytrec_eval's list after a printed name (``P_5,10``)
verbatim; the binder interprets them. The tree is made of frozen dataclasses, so specs compare by value.
"""

from __future__ import annotations

import functools
import math
import os
import re
from dataclasses import field
from typing import TYPE_CHECKING, Any, cast

from irspec.errors import SpecSyntaxError, shorten
from irspec.frozen import frozen

if TYPE_CHECKING:
    import lark

__all__ = [
    "BinOp",
    "DictLit",
    "Expr",
    "ListLit",
    "Neg",
    "Number",
    "SpecNode",
    "String",
    "Symbol",
    "evaluate_expr",
    "expr_text",
    "free_symbols",
    "parse_syntax",
]


@frozen
class Number:
    """A numeric literal (int or float)."""

    value: int | float


@frozen
class Symbol:
    """A bare identifier: the per-query symbol ``R``, a boolean, or an enumerated choice."""

    name: str


@frozen
class String:
    """A quoted string literal (quotes removed)."""

    value: str


@frozen
class BinOp:
    """Arithmetic ``left op right`` with op one of ``+ - * /``."""

    op: str
    left: Expr
    right: Expr


@frozen
class Neg:
    """Unary minus."""

    operand: Expr


@frozen
class DictLit:
    """A dict literal such as ``{0:0, 1:1, 2:3}`` (used for gain maps)."""

    items: tuple[tuple[Expr, Expr], ...]


@frozen
class ListLit:
    """A list literal such as ``[0.25, 0.5, 0.75]`` (used for recall levels)."""

    items: tuple[Expr, ...]


Expr = Number | Symbol | String | BinOp | Neg | DictLit | ListLit


@frozen
class SpecNode:
    """One spec as written: ``name(args, key=value)@cutoff``.

    ``start``/``end`` locate it in the source text for error messages and do not take part in equality.
    """

    name: str
    args: tuple[Expr, ...] = ()
    kwargs: tuple[tuple[str, Expr], ...] = ()
    cutoff: Expr | None = None
    start: int = field(default=0, compare=False)
    end: int = field(default=0, compare=False)


@functools.cache
def _grammar() -> str:
    """The grammar's text, read beside this module: importlib.resources, which would find it in a
    zipped install too, costs a small evaluation several milliseconds to import (zipfile)."""
    with open(os.path.join(os.path.dirname(__file__), "grammar", "metric.lark"), encoding="utf-8") as f:
        return f.read()


@functools.cache
def _parser() -> lark.Lark:
    # lark is imported here, once, so that `import irspec` stays cheap for tools that never parse.
    import lark

    return lark.Lark(_grammar(), parser="lalr", propagate_positions=True, maybe_placeholders=False)


_TOKEN_WORDS = {
    "NAME": "a metric name",
    "NUMBER": "a number",
    "STRING": "a quoted string",
    "$END": "the end of the text",
}


def _token_word(name: str) -> str:
    """A terminal as the user would type it: ``']'`` for lark's ``RSQB``, words for the named ones."""
    if name in _TOKEN_WORDS:
        return _TOKEN_WORDS[name]
    import lark

    try:
        pattern = _parser().get_terminal(name).pattern
    except KeyError:
        return name
    return repr(pattern.value) if isinstance(pattern, lark.lexer.PatternStr) else name


def _expected(names: set[str]) -> str:
    words = sorted({_token_word(n) for n in names})
    if not words:
        return ""
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " or " + words[-1]


@functools.cache
def _simple_item() -> re.Pattern[str]:
    """One ``name`` or ``name@cutoff`` item of a spec list, built from the grammar's own terminals."""
    grammar = _grammar()
    name = re.search(r"^NAME: /(.*)/$", grammar, re.M).group(1)  # type: ignore[union-attr]
    number = re.search(r"^NUMBER\.2: /(.*)/$", grammar, re.M).group(1)  # type: ignore[union-attr]
    ws = r"[ \t\f\r\n]*"
    # "R" ends where a name would: "P@Rα" is the symbol "Rα" to the grammar, so not "P@R" and "α" here.
    cutoff = rf"(?P<number>{number})|(?P<r>R)(?![\w.\-])"
    return re.compile(rf"{ws}(?P<name>{name})(?:{ws}@{ws}(?:{cutoff}))?{ws}(?P<sep>,|(?=[^ \t\f\r\n(@]|$)|$)")


_BLANKS = " \t\f\r\n"
_IDENTIFIER_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_IDENTIFIER = _IDENTIFIER_START | frozenset("0123456789")
_DOTTED = frozenset("-+.=0123456789")


def _scan_plain(text: str) -> list[SpecNode] | None:
    """The commonest texts read by hand, without compiling :func:`_simple_item`'s pattern (~0.4 ms, paid
    by every command that parses a spec): ASCII names (``official``, ``map ndcg``), trec_eval's dotted
    ones (``P.5,10``, ``map_cut.1,3,5``) and a cutoff of digits or ``R`` right after ``@`` (``nDCG@10``),
    split by commas and blanks. ``None`` for anything else, or anything this reading might take
    otherwise than that pattern does (a letter after a dotted list's number, a blank before ``@``):
    the pattern then reads it. Tests hold the two equal."""
    nodes: list[SpecNode] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in _BLANKS:
            i += 1
        if i == n:
            return nodes or None
        start = i
        if text[i] not in _IDENTIFIER_START:
            return None
        while i < n and text[i] in _IDENTIFIER:
            i += 1
        if i < n and text[i] == ".":  # trec_eval's dotted parameters: P.5,10
            i += 1
            while i < n and text[i] in _DOTTED:
                i += 1
            while i + 1 < n and text[i] == "," and text[i + 1] in _DOTTED:
                i += 1
                while i < n and text[i] in _DOTTED:
                    i += 1
        name_end = i
        cutoff: Expr | None = None
        if i < n and text[i] == "@":
            i += 1
            digits = i
            while i < n and text[i].isdigit() and text[i].isascii():
                i += 1
            if i > digits and i - digits <= 100:
                cutoff = Number(int(text[digits:i]))
            elif i == digits and i < n and text[i] == "R":
                i += 1
                cutoff = Symbol("R")
            else:
                return None
        if i < n and text[i] not in _BLANKS and text[i] != ",":
            # something joined to the item: a letter after a dotted list's number (the pattern gives
            # digits back to a name after them), a number or R going on (1e5, 5.5, R2, Rα), "(", "-"
            return None
        nodes.append(SpecNode(text[start:name_end], (), (), cutoff, start, i))
        while i < n and text[i] in _BLANKS:
            i += 1
        if i < n and text[i] == ",":
            i += 1


def _parse_simple(text: str) -> list[SpecNode] | None:
    """The common texts (``nDCG@10, AP P.5,10 official``: names with at most a number or ``R`` after
    ``@``) without lark, so tools that only name metrics never import it. ``None`` for anything else,
    which the grammar then parses; tests hold both paths equal."""
    scanned = _scan_plain(text)
    if scanned is not None:
        return scanned
    item = _simple_item()
    nodes: list[SpecNode] = []
    pos, end = 0, len(text)
    while pos < end and text[pos:].strip():
        m = item.match(text, pos)
        if m is None or m.end() == pos:
            return None
        number, r = m.group("number"), m.group("r")
        cutoff: Expr | None = None
        if number is not None:
            if len(number) > 100:
                return None
            cutoff = Number(int(number) if number.isdigit() else float(number))
        elif r is not None:
            cutoff = Symbol("R")
        last = m.end("number") if number is not None else m.end("r") if r is not None else m.end("name")
        nodes.append(SpecNode(m.group("name"), (), (), cutoff, m.start("name"), last))
        pos = m.end()
    return nodes or None


def parse_syntax(text: str) -> list[SpecNode]:
    """Parse ``text`` (one spec or a list of specs) into syntax nodes, without resolving any name.

    Raises :class:`~irspec.errors.SpecSyntaxError` with the position of the problem.
    """
    simple = _parse_simple(text)
    if simple is not None:
        return simple
    import lark

    if not text.strip():
        raise SpecSyntaxError(text, len(text), "expected a metric spec, got an empty text")
    try:
        tree = _parser().parse(text)
        specs = cast("lark.Tree", tree.children[0])  # the start rule's one child: the list of specs
        return [_spec(cast("lark.Tree", child), text) for child in specs.children]
    except RecursionError:
        raise SpecSyntaxError(text, 0, "expression nested too deeply") from None
    except lark.exceptions.UnexpectedEOF as e:
        raise SpecSyntaxError(
            text, len(text.rstrip()), f"unexpected end of text, expected {_expected(set(e.expected))}"
        ) from None
    except lark.exceptions.UnexpectedToken as e:
        if e.token.type == "$END":
            raise SpecSyntaxError(
                text, len(text.rstrip()), f"unexpected end of text, expected {_expected(e.expected)}"
            ) from None
        raise SpecSyntaxError(
            text,
            e.token.start_pos,
            f"unexpected {shorten(e.token.value)!r}, expected {_expected(e.expected)}",
        ) from None
    except lark.exceptions.UnexpectedCharacters as e:
        raise SpecSyntaxError(
            text, e.pos_in_stream or 0, f"unexpected character {text[e.pos_in_stream or 0]!r}"
        ) from None


def _spec(tree: lark.Tree, text: str) -> SpecNode:
    import lark

    # Any: lark's stubs make a token's positions optional; this parser always sets them
    name_tok: Any = tree.children[0]  # the grammar's NAME
    args: list[Expr] = []
    kwargs: list[tuple[str, Expr]] = []
    cutoff: Expr | None = None
    inner: Any = None  # the argument "name@cutoff", if one is written so
    for child in tree.children[1:]:
        if isinstance(child, lark.Tree) and child.data == "arguments":
            for arg in child.children:
                if arg.data == "keyword":
                    kwargs.append((str(arg.children[0]), _expr(arg.children[1], text)))
                elif arg.data == "cut":
                    if inner is not None:
                        raise SpecSyntaxError(text, arg.meta.start_pos, "a second argument with a cutoff (@)")
                    inner = arg
                    args.append(Symbol(str(arg.children[0])))
                    cutoff = _expr(arg.children[1], text)
                else:
                    args.append(_expr(arg.children[0], text))
        elif inner is not None:
            # "ips(ctr@10)@5": which of the two was meant cannot be told, and binding takes one @
            raise SpecSyntaxError(
                text,
                child.meta.start_pos,
                f"a second cutoff: the argument of {name_tok}(...) has one already",
            )
        else:
            cutoff = _expr(child, text)
    end = tree.meta.end_pos if not tree.meta.empty else name_tok.end_pos
    return SpecNode(str(name_tok), tuple(args), tuple(kwargs), cutoff, name_tok.start_pos, end)


def _expr(node: lark.Tree | lark.Token, text: str) -> Expr:
    import lark

    if isinstance(node, lark.Token):  # a bare STRING token is not wrapped (single-child alias)
        node = lark.Tree("string", [node])
    kind = node.data
    kids = node.children
    first: Any = kids[0] if kids else None  # a terminal (a token with its position), where the rule has one
    if kind == "number":
        raw = str(kids[0])
        if len(raw) > 100:  # no metric parameter needs it, and int() refuses past 4300 digits anyway
            raise SpecSyntaxError(text, first.start_pos, "number too long")
        return Number(int(raw) if raw.isdigit() else float(raw))
    if kind == "symbol":
        return Symbol(str(kids[0]))
    if kind == "string":
        import ast

        try:
            return String(ast.literal_eval(str(kids[0])))
        except (SyntaxError, ValueError):
            raise SpecSyntaxError(text, first.start_pos, "invalid escape in quoted string") from None
    if kind == "neg":
        inner = _expr(kids[0], text)
        if isinstance(inner, Number):  # fold, so "-1" is a literal and canonical texts stay short
            return Number(-inner.value)
        return Neg(inner)
    if kind in ("add", "sub", "mul", "div"):
        op = {"add": "+", "sub": "-", "mul": "*", "div": "/"}[kind]
        return BinOp(op, _expr(kids[0], text), _expr(kids[1], text))
    if kind == "dict":
        return DictLit(tuple((_expr(p.children[0], text), _expr(p.children[1], text)) for p in kids))
    if kind == "list":
        return ListLit(tuple(_expr(k, text) for k in kids))
    if kind == "factor":  # unary plus
        return _expr(kids[0], text)
    raise AssertionError(f"unhandled grammar rule {kind!r}")  # a grammar/transformer mismatch is a bug


_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2}


def format_number(value: int | float) -> str:
    """The shortest text that reads back as ``value`` (``10``, ``0.3``, ``1e-05``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return repr(value)


def expr_text(e: Expr, parent: int = 0) -> str:
    """Render an expression with the fewest parentheses that keep its meaning."""
    if isinstance(e, Number):
        return format_number(e.value)
    if isinstance(e, Symbol):
        return e.name
    if isinstance(e, String):
        return repr(e.value)
    if isinstance(e, Neg):
        return "-" + expr_text(e.operand, 3)
    if isinstance(e, DictLit):
        return "{" + ",".join(f"{expr_text(k)}:{expr_text(v)}" for k, v in e.items) + "}"
    if isinstance(e, ListLit):
        return "[" + ",".join(expr_text(k) for k in e.items) + "]"
    prec = _PRECEDENCE[e.op]
    # The parser groups from the left, so a right operand of equal precedence keeps its brackets: a-(b-c)
    # is not (a-b)-c, and a+(b+c) is another tree than (a+b)+c, whose doubles may even sum otherwise
    # (the text must read back as the same tree: tests/test_spec_hypothesis.py).
    left, right = expr_text(e.left, prec), expr_text(e.right, prec + 1)
    # A hyphen joins two words into one name ("exp-log2", "R-prec"), so R-R would read back as the
    # symbol 'R-R': a minus between a word and a letter is written with spaces.
    op = " - " if e.op == "-" and left[-1:].isalnum() and right[:1].isalpha() else e.op
    s = f"{left}{op}{right}"
    return f"({s})" if prec < parent else s


def free_symbols(e: Expr) -> set[str]:
    """Names of the symbols an expression uses (``{"R"}`` for ``10+R``)."""
    if isinstance(e, Symbol):
        return {e.name}
    if isinstance(e, BinOp):
        return free_symbols(e.left) | free_symbols(e.right)
    if isinstance(e, Neg):
        return free_symbols(e.operand)
    if isinstance(e, DictLit):
        out: set[str] = set()
        for k, v in e.items:
            out |= free_symbols(k) | free_symbols(v)
        return out
    if isinstance(e, ListLit):
        return set().union(*(free_symbols(k) for k in e.items))
    return set()


def evaluate_expr(e: Expr, env: dict):  # -> number or numpy array
    """Evaluate an arithmetic expression; ``env`` maps symbol names to numbers or numpy arrays.

    Works elementwise when a symbol is bound to an array (``R`` per query), which is how the engine
    evaluates ``bpref(10+R)`` for all queries at once. Division by zero gives ``inf``/``nan``, for
    numbers and arrays alike (numpy's rules; callers silence numpy's warnings with ``np.errstate``);
    callers decide what a non-finite per-query value means.
    """
    if isinstance(e, Number):
        return e.value
    if isinstance(e, Symbol):
        return env[e.name]
    if isinstance(e, Neg):
        return -evaluate_expr(e.operand, env)
    if isinstance(e, BinOp):
        a = evaluate_expr(e.left, env)
        b = evaluate_expr(e.right, env)
        if e.op == "+":
            return a + b
        if e.op == "-":
            return a - b
        if e.op == "*":
            return a * b
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b == 0:
            return math.inf if a > 0 else (-math.inf if a < 0 else math.nan)
        return a / b  # an array on either side: numpy's rules
    raise TypeError(f"not an arithmetic expression: {expr_text(e)}")
