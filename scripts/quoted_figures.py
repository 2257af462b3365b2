"""Copy the passages of benchmarks/README.md that the README quotes into the README.

Every speed figure the README and the documentation quote comes from one place, the passages of
benchmarks/README.md's section "The figures quoted elsewhere", each between snippet markers::

    <!-- --8<-- [start:NAME] -->
    ...
    <!-- --8<-- [end:NAME] -->

The site includes a passage where a page quotes it (``--8<-- "benchmarks/README.md:NAME"``). GitHub
shows the README without including anything, so the README holds a copy, between::

    <!-- copied from benchmarks/README.md:NAME by scripts/quoted_figures.py: edit it there -->
    ...
    <!-- end of the copy -->

    python scripts/quoted_figures.py          # write the passages' text into the README's copies
    python scripts/quoted_figures.py --check  # say which copies differ, exit 1 if any does

A copy is the passage as pymdownx.snippets includes it: the lines between its markers, without the
markers of the passages nested in it. tests/test_quoted_figures.py holds the copies equal to the passages.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
# a section's name as pymdownx.snippets reads it: a letter, then letters, digits, "-" and "_"
MARKER = re.compile(r"--8<-- \[(start|end):([a-z][-_0-9a-z]*)\]", re.I)
COPY = re.compile(
    r"^<!-- copied from (?P<source>[^\s:]+):(?P<name>[a-z][-_0-9a-z]*) [^\n]*-->\n(?P<body>.*?)^<!-- end of the copy -->$",
    re.M | re.S,
)


def passage(text: str, name: str) -> str:
    """The passage ``name`` of a file's text, as pymdownx.snippets includes it; ValueError if it has none."""
    kept: list[str] = []
    inside = found = False
    for line in text.splitlines():
        marker = MARKER.search(line)
        if marker and marker.group(2) == name:
            inside = marker.group(1) == "start"
            found = found or inside
        elif inside and not marker:
            kept.append(line)
    if not found:
        raise ValueError(f"no passage {name!r} (no '--8<-- [start:{name}]' marker)")
    return "\n".join(kept) + "\n"


def passage_names(text: str) -> list[str]:
    """The names of the passages a file's text marks, in order."""
    return [m.group(2) for m in MARKER.finditer(text) if m.group(1) == "start"]


def copies(readme: str) -> list[re.Match[str]]:
    """The README's copies of passages, in order."""
    return list(COPY.finditer(readme))


def refreshed(readme: str) -> str:
    """The README's text with each copy replaced by its passage's text as it is now."""

    def fill(m: re.Match[str]) -> str:
        source = (ROOT / m.group("source")).read_text(encoding="utf-8")
        head = m.group(0).split("\n", 1)[0]
        return f"{head}\n{passage(source, m.group('name'))}<!-- end of the copy -->"

    return COPY.sub(fill, readme)


def main(argv: list[str]) -> int:
    readme = README.read_text(encoding="utf-8")
    if not copies(readme):
        print("README.md: no copy of a passage ('<!-- copied from FILE:NAME ... -->')", file=sys.stderr)
        return 1
    new = refreshed(readme)
    if "--check" in argv:
        stale = [
            m.group("name")
            for m, n in zip(copies(readme), copies(new), strict=True)
            if m.group(0) != n.group(0)
        ]
        for name in stale:
            print(f"README.md: the copy of {name} differs from its passage", file=sys.stderr)
        return 1 if stale else 0
    if new != readme:
        README.write_text(new, encoding="utf-8")
        print("README.md: copies written")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
