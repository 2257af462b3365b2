"""Every speed figure the README and the documentation quote comes from one place, benchmarks/README.md.

Its section "The figures quoted elsewhere" holds passages between snippet markers; a documentation page
includes one (``--8<-- "benchmarks/README.md:NAME"``), and the README holds a copy of one that
scripts/quoted_figures.py writes. These tests fail when:

- the README's copy differs from its passage (run ``python scripts/quoted_figures.py``);
- a page of the documentation, or the README outside its copies, quotes a figure: a time (``0.84 s``,
  ``12.7 ms``), a ratio (``0.28x``, ``3–13×``) or a memory size (``289 MiB``, ``1.1 GiB``), outside code;
  the few sizes that are the program's own limits, not measurements, are listed here with what they are.
  Memory is written in binary units here; a size in decimal ones (``60 MB`` of run text, a report of
  ``0.65 MB``) is the size of a file, not a figure of speed;
- a figure of a passage is not one of those measured in the sections of benchmarks/README.md after it, at
  the precision it is written with (``1.2–1.6 s`` from ``1.21 – 1.61``; ``1.7 GiB`` from ``1,729`` MiB).
  A figure the passage says is approximate (``~650 MiB``, ``about 1.1 GiB``, ``some 5 GiB``) is not
  checked.

Expected values are the measurements as benchmarks/README.md records them, read from its text.
"""

from __future__ import annotations

import importlib.util
import re
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks" / "README.md"
QUOTED = "## The figures quoted elsewhere"
FENCE = re.compile(r"^([ \t]*)(`{3,}|~{3,})[^\n]*\n.*?^\1\2[ \t]*$", re.M | re.S)
CODE = re.compile(r"`[^`]*`")
NUMBER = r"\d(?:,?\d)*(?:\.\d+)?"
# a number (or a range of two) and its unit; "7,000 × 1,000" is a shape, not a ratio
FIGURE = re.compile(
    rf"(?<![\w.,])(?P<value>{NUMBER}(?:\s?[-–]\s?{NUMBER})?)"
    r"(?:(?P<ratio>[x×])(?!\s?\d)|\s(?P<time>s|ms)|\s?(?P<memory>MiB|GiB|KiB))(?![\w@])"
)
APPROXIMATE = re.compile(r"(~|\babout|\bsome|\baround|\bnearly)\s*$")
# sizes the pages give that are irspec's own limits, not measurements
LIMITS = {
    "1 MiB": "the longest line a reader takes (irspec/lines.py)",
    "16 MiB": "the size of text above which a run file is streamed (irspec/data/stream.py's STREAM_ABOVE)",
    "64 MiB": "the size of text up to which a run not grouped by query is still read whole",
    "2 GiB": "the default memory budget's ceiling",
}


def _script():
    spec = importlib.util.spec_from_file_location("quoted_figures", ROOT / "scripts" / "quoted_figures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _prose(text: str) -> str:
    """Text a reader reads as prose: code blocks and code spans blanked, lines kept."""
    text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return CODE.sub(lambda m: " " * len(m.group(0)), text)


def figures(text: str) -> list[str]:
    """The figures quoted in the prose of some Markdown, as written (whitespace made single spaces)."""
    return [" ".join(m.group(0).split()) for m in FIGURE.finditer(_prose(text))]


def _quoted_and_measured() -> tuple[str, str]:
    """benchmarks/README.md's section of passages, and the rest of it (where the figures are measured)."""
    text = BENCHMARKS.read_text(encoding="utf-8")
    start = text.index(QUOTED)
    end = text.index("\n## ", start + len(QUOTED))
    return text[start:end], text[:start] + text[end:]


def test_the_figures_are_found_where_they_are_written():
    """The detector on sentences of the kind the pages write (its expected values written here)."""
    text = (
        "7,000 queries × 1,000 documents in 0.84 s (0.32x), 12.7 ms a call, 3–13× the embedded path's time,\n"
        "at 289\nMiB against 1.1 GiB; `--memory 50MiB` is code, 2026-11-26 a date, 1,000 x 100 dicts a shape.\n"
        "```sh\nirspec eval  # 2.5 s\n```\n"
    )
    assert figures(text) == ["0.84 s", "0.32x", "12.7 ms", "3–13×", "289 MiB", "1.1 GiB"]


def test_the_readmes_copies_are_the_passages_of_benchmarks_readme():
    script = _script()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    copies = script.copies(readme)
    assert [m.group("source") for m in copies] == ["benchmarks/README.md"]
    source = BENCHMARKS.read_text(encoding="utf-8")
    for copy in copies:
        assert copy.group("body") == script.passage(source, copy.group("name")), (
            f"README.md's copy of {copy.group('name')} differs from benchmarks/README.md: "
            "run python scripts/quoted_figures.py"
        )
    assert len(figures(copies[0].group("body"))) >= 30  # the README's speed section, every figure of it


def test_no_page_quotes_a_figure_from_anywhere_else():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    pages = {"README.md": _script().COPY.sub("", readme)}
    for page in sorted((ROOT / "docs").rglob("*.md")):
        pages[str(page.relative_to(ROOT))] = page.read_text(encoding="utf-8")
    elsewhere = {
        page: found
        for page, text in pages.items()
        if (found := [f for f in figures(text) if f not in LIMITS])
    }
    assert elsewhere == {}, (
        "figures quoted outside benchmarks/README.md's passages: measure them there, write a passage in its "
        "section 'The figures quoted elsewhere' and include it (--8<--), or copy it into the README"
    )


def test_every_page_that_quotes_speed_includes_passages_that_exist():
    """Each passage a page includes is one of benchmarks/README.md's (mkdocs checks it too, at build), and
    each passage is quoted somewhere: included by a page, copied into the README, or inside one that is."""
    script = _script()
    quoted, _ = _quoted_and_measured()
    names = script.passage_names(quoted)
    included = set()
    for page in (ROOT / "docs").rglob("*.md"):
        for source, name in re.findall(
            r'^\s*--8<-- "([^":]+):([\w-]+)"', page.read_text(encoding="utf-8"), re.M
        ):
            if source == "benchmarks/README.md":
                assert name in names, f"{page.relative_to(ROOT)} includes {name}, which is no passage"
                included.add(name)
    copied = {m.group("name") for m in script.copies((ROOT / "README.md").read_text(encoding="utf-8"))}
    within = {
        name
        for outer in included | copied
        for block in re.findall(rf"\[start:{outer}\](.*?)\[end:{outer}\]", quoted, re.S)
        for name in script.passage_names(block)
    }
    assert {"readme", "in-memory", "files", "scale-100m", "spark"} <= set(names)
    assert set(names) - included - copied - within == set()


def _numbers(value: str) -> list[Decimal]:
    return [Decimal(n.replace(",", "")) for n in re.findall(NUMBER, value)]


def test_every_figure_of_a_passage_is_one_measured():
    quoted, measured = _quoted_and_measured()
    recorded = [Decimal(n.replace(",", "")) for n in re.findall(NUMBER, measured)]
    kinds = {"MiB": [1], "GiB": [1, Decimal(1) / 1024], "s": [1, Decimal(1) / 1000], "ms": [1, Decimal(1000)]}
    unmeasured, checked = [], 0
    prose = _prose(quoted)
    for m in FIGURE.finditer(prose):
        if APPROXIMATE.search(prose[: m.start()]):
            continue
        unit = m.group("memory") or m.group("time") or ""
        for number in _numbers(m.group("value")):
            half = Decimal(1).scaleb(number.as_tuple().exponent) / 2  # half a unit of its last digit
            checked += 1
            # a GiB figure may be measured in MiB, seconds in ms and the other way round
            if not any(abs(number - r * scale) <= half for r in recorded for scale in kinds.get(unit, [1])):
                unmeasured.append(" ".join(m.group(0).split()))
    assert checked >= 100
    assert unmeasured == [], "figures of passages that benchmarks/README.md does not record as measured"
