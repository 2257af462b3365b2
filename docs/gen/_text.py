"""Docstrings (reStructuredText as irspec writes it) as Markdown, for the generated reference pages.

irspec's docstrings use a small part of reStructuredText: ``literal`` text, roles such as
:func:`irspec.evaluate`, ``>>>`` examples and ``::`` literal blocks. Markdown reads double backticks as
code already; roles become code, linked to the API page where the target is documented there; examples
and literal blocks become fenced code.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable

ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj):`~?([^`]+)`")
CODE = re.compile(r"(`+)(.+?)\1")


def anchor(name: str) -> str:
    """An HTML id for ``name`` (a metric or an API name): lower case, runs of other characters as ``-``."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "x"


def roles(text: str, link: Callable[[str], str | None] = lambda target: None) -> str:
    """``:func:`~a.b.c``` as `` `c` `` (or `` `a.b.c` `` without the tilde), linked where ``link`` gives a URL."""

    def one(m: re.Match[str]) -> str:
        target = m.group(1).strip()
        tilde = m.group(0).split("`")[0].endswith("~") or "`~" in m.group(0)
        shown = target.rsplit(".", 1)[-1] if tilde else target
        url = link(target)
        return f"[`{shown}`]({url})" if url else f"`{shown}`"

    return ROLE.sub(one, text)


def escape(text: str) -> str:
    """Prose for Markdown: ``*``, ``_`` and ``<`` outside code spans are the formula's, not emphasis or HTML
    (``r_i``, ``2*R``, ``i<k``)."""
    bullet = re.match(r"\s*\* ", text)  # a list item's marker stays one
    if bullet:
        return bullet.group(0) + escape(text[bullet.end() :])
    out, last = [], 0
    for m in CODE.finditer(text):
        out.append(_escape_prose(text[last : m.start()]))
        out.append(m.group(0))
        last = m.end()
    out.append(_escape_prose(text[last:]))
    return "".join(out)


# RST's **strong** and *emphasis*, Markdown's too: kept, where a lone * (2*R) is the formula's
EMPHASIS = re.compile(r"(?<![\w*])(\*\*?)([^\s*][^*]*?)\1(?![\w*])")


def _escape_prose(text: str) -> str:
    out, last = [], 0
    for m in EMPHASIS.finditer(text):
        out.append(_escape_plain(text[last : m.start()]))
        out.append(f"{m.group(1)}{_escape_plain(m.group(2))}{m.group(1)}")
        last = m.end()
    out.append(_escape_plain(text[last:]))
    return "".join(out)


def _escape_plain(text: str) -> str:
    return text.replace("\\", "\\\\").replace("*", "\\*").replace("_", "\\_").replace("<", "&lt;")


def markdown(doc: str, link: Callable[[str], str | None] = lambda target: None) -> str:
    """A docstring (already dedented, as :func:`inspect.getdoc` gives it) as Markdown."""
    out: list[str] = []
    lines = doc.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith(">>>"):
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i])
                i += 1
            out += ["", "```pycon", *textwrap.dedent("\n".join(block)).splitlines(), "```", ""]
            continue
        if line.rstrip().endswith("::") and not line.strip().startswith(".."):
            # a literal block follows: the indented lines after a blank line
            head = line.rstrip()[:-1]  # "text::" reads "text:"; a lone "::" line disappears
            if head.strip() != ":":
                out.append(roles(escape(head), link))
            i += 1
            while i < len(lines) and not lines[i].strip():
                i += 1
            block = []
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith((" ", "\t"))):
                block.append(lines[i])
                i += 1
            while block and not block[-1].strip():
                block.pop()
            out += ["", "```text", *textwrap.dedent("\n".join(block)).splitlines(), "```", ""]
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and re.fullmatch(r"\s*(-{3,}|={3,})\s*", nxt):
            # a numpy-style section header ("Parameters" over dashes): a label, not a heading of the page
            out += ["", f"**{roles(escape(line.strip()), link)}**", ""]
            i += 2
            continue
        if line.strip() and not line.startswith((" ", "\t", "* ", "- ")) and nxt.startswith((" ", "\t")) and nxt.strip():
            # a definition ("term:" then its indented description): one item of a list
            i += 1
            body = []
            while i < len(lines) and lines[i].startswith((" ", "\t")) and lines[i].strip():
                body.append(lines[i].strip())
                i += 1
            if not out or out[-1].strip():
                out.append("")
            term = line.strip().rstrip(":")
            term = roles(escape(term), link) if "`" in term else f"`{term}`"  # a bare name, or text with its own code
            out.append(f"- **{term}**: " + roles(escape(" ".join(body)), link))
            continue
        out.append(roles(escape(line), link))
        i += 1
    return "\n".join(out).strip() + "\n"


def cell(text: object) -> str:
    """Text for one cell of a Markdown table: one line, pipes escaped."""
    return escape(" ".join(str(text).split())).replace("|", "\\|")
