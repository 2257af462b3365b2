"""reference/spec-language.md with the grammar irspec parses specs with, read from the package at build
time: the page's ``<!-- grammar -->`` becomes the ``.lark`` file as it ships, so the page shows the
grammar the parser uses, never a copy of it."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import mkdocs_gen_files

PAGE = "reference/spec-language.md"
MARK = "<!-- grammar -->"

(grammar,) = [p for p in Path(str(files("irspec"))).rglob("*.lark")]
source = (Path(__file__).resolve().parents[1] / PAGE).read_text(encoding="utf-8")
assert source.count(MARK) == 1, f"{PAGE} must hold {MARK} once"
with mkdocs_gen_files.open(PAGE, "w") as f:
    f.write(source.replace(MARK, "```text\n" + grammar.read_text(encoding="utf-8").strip() + "\n```"))
