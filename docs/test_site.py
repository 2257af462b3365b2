"""The documentation site, built and looked at in headless Chromium.

The site is built with ``mkdocs build --strict`` (or taken from ``IRSPEC_DOCS_SITE``, a site CI has just
built) and opened in headless Chromium, driven through the DevTools protocol over a pipe (no driver, no
package beyond the standard library), served over HTTP and read from disk (``file://``, as a reader opens
site/index.html from a file manager), at 1280 px.

- Over HTTP, on the home page, the metric reference and a how-to guide: the navigation leads where it
  says, the search finds a metric and a how-to, every code block has a copy button, the tutorial's plots
  load; a screenshot of each page (``IRSPEC_DOCS_SCREENSHOTS=DIR`` keeps them).
- From disk: every relative link of every page names a file of the site (never a folder, which a browser
  shows as a listing); the search box is shown and finds a metric, its result and each navigation tab
  open their page, and every link of the tutorial opens a page.
- At 1280 px, on every page: nothing spills out of the column unless a box scrolls it into view, nothing
  is cut off, and a code block's copy button covers none of its text.
- Tables render as written: no cell shows an escaped pipe, and each cell of each hand-written page is the
  text its Markdown gives (GitHub's reading of a table row).

Expected values come from the registry as ``irspec metrics --json`` lists it and from the pages' own
Markdown, never from the built HTML.

The site is also built where only ``irspec[docs]`` is installed (the README's command in a new
environment), and must have every page and anchor of the full build but the plugins' own metrics.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the tests' DevTools client, when this file runs alone too
from browser import started  # noqa: E402

AUTOLOAD = "IRSPEC_DISABLE_PLUGIN_AUTOLOAD"
# the page's title, without the permalink mark after it
H1 = "(() => { const h = document.querySelector('.md-content h1').cloneNode(true); h.querySelector('.headerlink')?.remove(); return h.textContent.trim(); })()"


def _environment() -> dict[str, str]:
    """What a user's shell has: every installed plugin loads (tests/conftest.py switches them off)."""
    env = {k: v for k, v in os.environ.items() if k != AUTOLOAD}
    env.update(DISABLE_MKDOCS_2_WARNING="true", NO_MKDOCS_2_WARNING="1")
    return env


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The built site: ``IRSPEC_DOCS_SITE`` if CI built it already, else built here (strict)."""
    given = os.environ.get("IRSPEC_DOCS_SITE")
    if given:
        return Path(given)
    pytest.importorskip("mkdocs", reason="mkdocs is not installed (pip install -e '.[docs]')")
    out = tmp_path_factory.mktemp("site")
    _build(sys.executable, out, _environment())
    return out


def _build(python: str | Path, out: Path, env: dict[str, str]) -> str:
    """``mkdocs build --strict`` into ``out`` by ``python``; what it printed on standard error."""
    proc = subprocess.run(
        [str(python), "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        check=False,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stderr


@pytest.fixture(scope="module")
def server(site):
    """The site over HTTP on a free local port."""
    handler = functools.partial(_Quiet, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # the test's output is the assertions, not the access log
        pass


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    yield from started(tmp_path_factory)


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    """Where the screenshots go: ``IRSPEC_DOCS_SCREENSHOTS`` to keep them, else a temporary directory."""
    kept = os.environ.get("IRSPEC_DOCS_SCREENSHOTS")
    if kept:
        Path(kept).mkdir(parents=True, exist_ok=True)
        return Path(kept)
    return tmp_path_factory.mktemp("screenshots")


def _registered_metrics() -> list[str]:
    out = subprocess.run(
        [sys.executable, "-m", "irspec", "metrics", "--json"],
        env=_environment(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [m["name"] for m in json.loads(out)]


def _plugin_commands() -> set[str]:
    """The subcommands of ``irspec`` that installed plugins add (``irspec plugins``)."""
    out = subprocess.run([sys.executable, "-m", "irspec", "plugins"], env=_environment(), capture_output=True,
                         text=True, check=True).stdout  # fmt: skip
    return {c for plugin in json.loads(out) for c in plugin["commands"]}


def _assert_copy_buttons(browser) -> int:
    count = """(() => {
        const blocks = [...document.querySelectorAll('.md-content pre')];
        return {blocks: blocks.length, buttons: blocks.filter(p => p.querySelector('button.md-clipboard, button[data-md-type="copy"]')).length};
    })()"""
    with contextlib.suppress(TimeoutError):  # Material's script adds the buttons once the page has loaded
        browser.wait_for(
            f"(() => {{ const c = {count}; return c.blocks > 0 && c.buttons == c.blocks; }})()", timeout=15
        )
    counts = browser.js(count)
    assert counts["blocks"] > 0 and counts["buttons"] == counts["blocks"], counts
    return counts["blocks"]


def test_the_home_page_leads_to_the_tutorial_the_guides_and_the_reference(site, server, browser, shots):
    browser.open(f"{server}/index.html")
    browser.screenshot(shots / "home.png")
    assert browser.js(H1) == "irspec"
    tabs = browser.js("[...document.querySelectorAll('.md-tabs__link')].map(a => a.textContent.trim())")
    assert tabs == ["Home", "Tutorial", "How-to guides", "Coming from", "Reference"]
    _assert_copy_buttons(browser)
    # a click on a tab loads its page
    browser.js(
        "[...document.querySelectorAll('.md-tabs__link')].find(a => a.textContent.trim() == 'How-to guides').click()"
    )
    browser.wait_for("location.pathname.endsWith('/how-to/index.html') && document.readyState === 'complete'")
    assert browser.js(H1) == "How-to guides"
    # and each guide listed in the page's table is one click away, its link leading to a page with that guide
    links = browser.js("[...document.querySelectorAll('.md-content table a')].map(a => a.href)")
    guides = sorted(p.stem for p in (ROOT / "docs" / "how-to").glob("*.md") if p.stem != "index")
    assert sorted({re.sub(r".*/how-to/([^/#?]+)\.html.*", r"\1", h) for h in links}) == guides
    browser.js(
        "[...document.querySelectorAll('.md-content table a')].find(a => a.href.includes('/power.html')).click()"
    )
    browser.wait_for("location.pathname.endsWith('/how-to/power.html') && document.readyState === 'complete'")
    assert browser.js(H1) == "Power and topic-set size"


def test_the_metric_reference_lists_every_registered_metric_and_the_search_finds_one(
    site, server, browser, shots
):
    browser.open(f"{server}/reference/metrics.html")
    browser.screenshot(shots / "metrics.png")
    ids = set(browser.js("[...document.querySelectorAll('.md-content h3[id]')].map(h => h.id)"))
    names = _registered_metrics()
    assert len(names) >= 60  # the built-in metrics and the three plugins' (CI installs them)
    missing = [n for n in names if re.sub(r"[^a-z0-9]+", "-", n.lower()).strip("-") not in ids]
    assert missing == []
    # the search: type a metric's name, get its section of the reference
    browser.js("document.querySelector('label.md-search__icon, .md-search__input').click()")
    browser.js("""(() => { const q = document.querySelector('.md-search__input'); q.focus();
                          q.value = 'bpref'; q.dispatchEvent(new Event('input', {bubbles: true})); })()""")
    hits = browser.wait_for("""(() => { const a = [...document.querySelectorAll('.md-search-result__item a')].map(a => a.href);
                                        return a.length ? a : null; })()""")
    # the result's link carries the search term to highlight (?h=bpref) before the section's anchor
    assert any(re.search(r"/reference/metrics\.html(\?[^#]*)?#bpref$", h) for h in hits), hits[:10]
    browser.screenshot(shots / "search.png")


def test_a_how_to_guide_has_copy_buttons_and_the_search_finds_it(site, server, browser, shots):
    browser.open(f"{server}/how-to/significance.html")
    browser.screenshot(shots / "how-to.png")
    fenced = (
        len(
            re.findall(
                r"^```", (ROOT / "docs" / "how-to" / "significance.md").read_text(encoding="utf-8"), re.M
            )
        )
        // 2
    )
    assert _assert_copy_buttons(browser) == fenced
    browser.js("""(() => { const q = document.querySelector('.md-search__input'); q.focus();
                          q.value = 'randomization test'; q.dispatchEvent(new Event('input', {bubbles: true})); })()""")
    hits = browser.wait_for("""(() => { const a = [...document.querySelectorAll('.md-search-result__item a')].map(a => a.href);
                                        return a.length ? a : null; })()""")
    assert any(re.search(r"/how-to/significance\.html(\?|#|$)", h) for h in hits), hits[:10]


def test_the_tutorials_plots_are_drawn_where_it_talks_about_them(site, server, browser, shots):
    browser.open(f"{server}/tutorial.html")
    browser.js("document.querySelector('img[src*=\"pr-curves\"]').scrollIntoView()")
    images = browser.wait_for("""(() => { const i = [...document.querySelectorAll('.md-content img')];
        return i.length && i.every(x => x.complete) ? i.map(x => [x.getAttribute('src'), x.naturalWidth]) : null; })()""")
    assert sorted(Path(src).name for src, _ in images) == sorted(
        ["pr-curves.svg", "differences-nDCG_at_10.svg", "distributions-nDCG_at_10.svg"]
    )
    assert all(width > 100 for _, width in images), images  # each SVG decoded to a picture
    browser.screenshot(shots / "tutorial-plots.png")
    # the report the tutorial links to is the demo's, made when the site was built
    report = browser.js("document.querySelector('a[href*=\"report.html\"]').href")
    browser.open(report)
    assert "irspec report" in browser.js("document.title")


# --- The site read from disk ---------------------------------------------------------------------------------
# site/index.html opened from a file manager: no server to turn a folder into its index.html, no web worker
# started from a file. Every page is a file (use_directory_urls: false) and the search index a script (the
# offline plugin, its worker shim shipped with the site).


def _pages(site: Path) -> list[Path]:
    """The site's pages: every HTML file but the 404 page (which a server sends for an unknown address, so
    that its links are from the site's root) and the demo's report (a page of its own, not the theme's)."""
    return sorted(
        p for p in site.rglob("*.html") if p.name != "404.html" and not p.is_relative_to(site / "assets")
    )


LINK = re.compile(r"""\b(?:href|src)="([^"]*)\"""")


def test_every_link_of_the_site_read_from_disk_leads_to_a_file(site):
    """Each page's relative links (pages, stylesheets, scripts, images) name a file of the site: read from
    disk, a link to a folder would show the folder's listing."""
    from html import unescape
    from urllib.parse import unquote, urlsplit

    broken, count = {}, 0
    for page in _pages(site):
        for url in map(unescape, LINK.findall(page.read_text(encoding="utf-8"))):
            parts = urlsplit(url)
            if parts.scheme or parts.netloc or not parts.path:  # another site's, or an anchor of this page
                continue
            count += 1
            target = (page.parent / unquote(parts.path)).resolve()
            if not (target.is_file() and target.is_relative_to(site.resolve())):
                broken.setdefault(str(page.relative_to(site)), []).append(url)
    assert count > 1000  # every page links the others through its navigation
    assert broken == {}


def _page_of(browser) -> dict:
    """What the browser shows: its address, and the page's title (or a folder listing's heading)."""
    return browser.js("""(() => { const h = document.querySelector('.md-content h1');
        if (h) { const c = h.cloneNode(true); c.querySelector('.headerlink')?.remove(); return {href: location.href, h1: c.textContent.trim()}; }
        return {href: location.href, h1: null, title: document.title, listing: document.body.innerText.slice(0, 200)}; })()""")


def _follow(browser, link: str) -> None:
    """Click a link (a JavaScript expression for it) and wait for the page it opens to load: a new
    document, even when the link leads to the page already shown (the Home tab on the home page)."""
    browser.js("window.__leaving = true")
    browser.js(f"({link}).click()")
    browser.wait_for("window.__leaving === undefined && document.readyState === 'complete'")


def test_the_site_read_from_disk_searches_and_its_links_open_pages(site, browser, shots):
    home = (site / "index.html").as_uri()
    browser.open(home)
    # the search box is shown (Material hides it where its search cannot start) and finds a metric
    shown = browser.js("""(() => { const s = document.querySelector('.md-search');
        const r = s.getBoundingClientRect(); return !s.hidden && getComputedStyle(s).display != 'none' && r.width > 0 && r.height > 0; })()""")
    assert shown
    browser.js("""(() => { const q = document.querySelector('.md-search__input'); q.focus();
                          q.value = 'bpref'; q.dispatchEvent(new Event('input', {bubbles: true})); })()""")
    hits = browser.wait_for("""(() => { const a = [...document.querySelectorAll('.md-search-result__item a')].map(a => a.href);
                                        return a.length ? a : null; })()""")
    assert all(h.startswith("file://") for h in hits), hits[:5]
    assert any(re.search(r"/reference/metrics\.html(\?[^#]*)?#bpref$", h) for h in hits), hits[:10]
    browser.screenshot(shots / "search-from-disk.png")
    # its result opens the metric's section of the page (a click, as a reader does)
    _follow(
        browser,
        "[...document.querySelectorAll('.md-search-result__item a')].find(a => /#bpref$/.test(a.href))",
    )
    assert browser.js("location.pathname").endswith("/reference/metrics.html")
    assert _page_of(browser)["h1"] == "Metrics"
    assert browser.js("location.hash") == "#bpref"
    # each tab of the navigation opens its page
    browser.open(home)
    tabs = browser.js(
        "[...document.querySelectorAll('.md-tabs__link')].map(a => [a.textContent.trim(), a.href])"
    )
    assert [name for name, _ in tabs] == ["Home", "Tutorial", "How-to guides", "Coming from", "Reference"]
    for name, href in tabs:
        browser.open(home)
        _follow(
            browser,
            f"[...document.querySelectorAll('.md-tabs__link')].find(a => a.href == {json.dumps(href)})",
        )
        page = _page_of(browser)
        assert page["href"] == href
        assert page["h1"], (name, page)
    # and every link of the tutorial's text opens a page: the site's (with its title) or the demo's report
    tutorial = (site / "tutorial.html").as_uri()
    browser.open(tutorial)
    links = browser.js(
        "[...document.querySelectorAll('.md-content a[href]')].map(a => a.href).filter(h => h.startsWith('file:'))"
    )
    targets = sorted({h.split("#")[0] for h in links} - {tutorial})
    assert len(targets) >= 10
    for href in targets:
        browser.open(href)
        page = _page_of(browser)
        if href.endswith("/assets/demo/report.html"):
            assert "irspec report" in browser.js("document.title"), page
        else:
            assert page["h1"], page


# --- How the pages look at 1280 px --------------------------------------------------------------------------
# A reader's laptop: the navigation at the left, the table of contents at the right, and between them a
# column too narrow for a 160-character table of results. Such a block scrolls sideways, and nothing of it
# is hidden: the copy button sits in a gutter of its own, and nothing spills out of the column or is cut.

LAYOUT = """(() => {
    const content = document.querySelector('.md-content');
    const box = content.getBoundingClientRect();
    const scrolls = e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX);
    const name = e => e.tagName.toLowerCase() + (e.className && typeof e.className == 'string' ? '.' + e.className.trim().split(/\\s+/).join('.') : '')
        + ': ' + (e.textContent || '').trim().slice(0, 60);
    const out = {spills: [], cut: [], covered: [], blocks: 0, scrolling: 0};
    for (const e of content.querySelectorAll('*')) {
        const r = e.getBoundingClientRect();
        if (!r.width || !r.height) continue;
        const style = getComputedStyle(e);
        // content cut off by a box that does not scroll
        if (['hidden', 'clip'].includes(style.overflowX) && e.scrollWidth > e.clientWidth + 1) out.cut.push(name(e));
        if (r.right <= box.right + 0.5 && r.left >= box.left - 0.5) continue;
        // out of the column: only inside a box that scrolls it into view
        let a = e.parentElement;
        while (a && a !== content && !scrolls(a)) a = a.parentElement;
        if (!a || a === content) out.spills.push(name(e));
    }
    for (const pre of content.querySelectorAll('pre')) {
        const code = pre.querySelector(':scope > code');
        const button = pre.querySelector('.md-code__nav');
        if (!code || !button) continue;
        out.blocks += 1;
        if (code.scrollWidth > code.clientWidth) out.scrolling += 1;
        const c = code.getBoundingClientRect(), b = button.getBoundingClientRect();
        if (b.left < c.right && c.left < b.right && b.top < c.bottom && c.top < b.bottom) out.covered.push(name(code));
    }
    return out;
})()"""


@pytest.fixture(scope="module")
def layouts(site, browser) -> dict[str, dict]:
    """Each page opened from disk at 1280 px, once its script has added the code blocks' buttons: what
    spills out of the column, what is cut, which code blocks the copy button covers."""
    found = {}
    assert browser.js("innerWidth") == 1280
    for page in _pages(site):
        browser.open(page.as_uri())
        with contextlib.suppress(TimeoutError):
            browser.wait_for(
                "document.querySelectorAll('.md-content pre').length == document.querySelectorAll('.md-content pre .md-code__nav').length",
                timeout=10,
            )
        found[str(page.relative_to(site))] = browser.js(LAYOUT)
    return found


def test_at_1280_px_nothing_spills_out_of_a_page_or_is_cut(layouts):
    assert {p: (x["spills"], x["cut"]) for p, x in layouts.items() if x["spills"] or x["cut"]} == {}


def test_at_1280_px_wide_code_blocks_scroll_and_the_copy_button_covers_no_text(layouts, site, browser, shots):
    assert {p: x["covered"] for p, x in layouts.items() if x["covered"]} == {}
    blocks = sum(x["blocks"] for x in layouts.values())
    wide = {p: x["scrolling"] for p, x in layouts.items() if x["scrolling"]}
    assert blocks > 200 and "how-to/diff.html" in wide  # the diff's report is wider than the column
    browser.open((site / "how-to" / "diff.html").as_uri())
    browser.screenshot(shots / "wide-code-1280.png")


# --- Tables render as written --------------------------------------------------------------------------------
# A cell is what GitHub shows for the page's Markdown (GFM): `\|` is a pipe in the cell, inside code too.
# Python-Markdown keeps the backslash inside code (`zero\|skip`), and GitHub splits the row at a bare pipe
# inside code, so a page writes such a cell otherwise: `--missing-queries {zero,skip}` (argparse's usage),
# or <code>X &#124; Y</code>. Each table of each hand-written page is read from the Markdown
# (the snippets it includes put in), its cells made text by Python-Markdown one at a time (not in a table),
# and compared with the built page's cells.

TABLE_ROW = re.compile(r"^[ \t]*\|.*\|[ \t]*$")
TABLE_RULE = re.compile(r"^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(\|[ \t]*:?-{3,}:?[ \t]*)*\|?[ \t]*$")
SNIPPET = re.compile(r'^[ \t]*--8<-- "([^":]+)(?::([\w-]+))?"[ \t]*$', re.M)
CODE_FENCE = re.compile(r"^([ \t]*)(`{3,}|~{3,})[^\n]*\n.*?^\1\2[ \t]*$", re.M | re.S)


def _with_snippets(text: str) -> str:
    """The page's Markdown with each ``--8<-- "file:section"`` line replaced by what it includes."""

    def include(m: re.Match) -> str:
        lines = (ROOT / m.group(1)).read_text(encoding="utf-8").splitlines()
        if m.group(2) is None:
            return "\n".join(lines)
        marker = re.compile(r"--8<-- \[(start|end):([\w-]+)\]")
        kept, inside = [], False
        for line in lines:
            found = marker.search(line)
            if found and found.group(2) == m.group(2):
                inside = found.group(1) == "start"
            elif inside and not found:
                kept.append(line)
        return "\n".join(kept)

    return SNIPPET.sub(include, text)


def _gfm_cells(row: str) -> list[str]:
    """A table row's cells as GFM splits them: at every pipe not escaped, then ``\\|`` is a pipe."""
    inner = row.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", inner)]


def _source_tables(page: Path) -> list[list[list[str]]]:
    text = CODE_FENCE.sub(
        lambda m: "\n" * m.group(0).count("\n"), _with_snippets(page.read_text(encoding="utf-8"))
    )
    lines, tables, i = text.splitlines(), [], 0
    while i + 1 < len(lines):
        if TABLE_ROW.match(lines[i]) and TABLE_RULE.match(lines[i + 1]):
            rows, j = [_gfm_cells(lines[i])], i + 2
            while j < len(lines) and TABLE_ROW.match(lines[j]):
                rows.append(_gfm_cells(lines[j]))
                j += 1
            tables.append(rows)
            i = j
        else:
            i += 1
    return tables


def _text(html_text: str) -> str:
    """The text a browser shows for some HTML, whitespace made single spaces."""
    from html.parser import HTMLParser

    class Text(HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.parts: list[str] = []

        def handle_data(self, data: str) -> None:
            self.parts.append(data)

    parser = Text()
    parser.feed(html_text)
    return " ".join("".join(parser.parts).split())


def _built_tables(page: Path) -> list[list[list[str]]]:
    """The tables of a built page's article, as the text of their cells."""
    article = (
        page.read_text(encoding="utf-8")
        .split('<article class="md-content__inner', 1)[1]
        .split("</article>")[0]
    )
    tables = []
    for table in re.findall(r"<table\b.*?</table>", article, re.S):
        rows = re.findall(r"<tr\b.*?</tr>", table, re.S)
        tables.append([[_text(c) for c in re.findall(r"<t[hd]\b[^>]*>(.*?)</t[hd]>", r, re.S)] for r in rows])
    return tables


def test_no_table_cell_of_the_site_shows_an_escaped_pipe(site):
    shown = {
        str(p.relative_to(site)): cell
        for p in _pages(site)
        for table in _built_tables(p)
        for row in table
        for cell in row
        if "\\|" in cell
    }
    assert shown == {}


def test_the_metric_reference_says_which_values_are_better_in_words(site):
    """A metric whose better side depends on its parameters (irspec-usermodel's RBP) says so, in words:
    its function's repr, with an address that changes each build, was shown once."""
    page = (site / "reference" / "metrics.html").read_text(encoding="utf-8")
    assert "&lt;function" not in page and " at 0x" not in page
    assert "higher at its defaults; it depends on the parameters (RBP: higher is better" in page


def test_the_api_reference_is_the_same_on_every_build(site):
    """The API pages show values as the same text on every build: no memory address (irspec.hookimpl's
    was), and a set's members in order, in a dict too (pytrec_eval's supported_measures and
    supported_nicknames came in each process's string hashing order)."""
    from irspec.compat.pytrec_eval import supported_measures, supported_nicknames

    pages = {
        name: (site / "reference" / name).read_text(encoding="utf-8") for name in ("api.html", "modules.html")
    }
    assert not [name for name, page in pages.items() if " at 0x" in page]
    assert "irspec.hookimpl = <irspec.spec.hooks.HookimplMarker object>" in _text(pages["api.html"])
    modules = _text(pages["modules.html"])
    assert "supported_measures = {" + ", ".join(sorted(map(repr, supported_measures)))[:250] in modules
    official = ", ".join(sorted(map(repr, supported_nicknames["official"])))
    assert "supported_nicknames = {'official': {" + official[:200] in modules


def test_every_table_of_the_pages_renders_as_its_markdown_is_written(site):
    import markdown

    def expected(cell: str) -> str:
        return _text(markdown.markdown(cell, extensions=["attr_list", "md_in_html", "pymdownx.inlinehilite"]))

    differ, compared = [], 0
    for source in sorted((ROOT / "docs").rglob("*.md")):
        relative = source.relative_to(ROOT / "docs")
        built = site / relative.with_suffix(".html")
        wanted, got = _source_tables(source), _built_tables(built)
        assert len(wanted) == len(got), (str(relative), len(wanted), len(got))
        for table, shown in zip(wanted, got, strict=True):
            for row, shown_row in zip(table, shown, strict=True):
                cells = [expected(c) for c in row]
                compared += len(cells)
                if cells != shown_row:
                    differ.append((str(relative), cells, shown_row))
    assert compared > 500
    assert differ == []


# --- The site built where only the docs extra is installed --------------------------------------------------
# The README's command is `pip install -e ".[docs]" && mkdocs build --strict`. A fresh virtual environment
# per run would download the world, so the test makes one in a second, holding only what that command
# installs: the distributions `irspec[docs]` requires, found from the installed metadata (requirements,
# extras and markers, followed transitively) and linked into a new venv's site-packages. pytest, Spark's
# pyarrow and pyspark, pandas and the plugins are then not installed there, for imports and for
# importlib.metadata alike (the plugins' entry points are gone too), as in the user's new environment.


def _installed() -> dict[str, object]:
    """The distributions installed in this environment's site-packages by canonical name: what pip put
    there (not the ``irspec.egg-info`` a source checkout on the path may hold, whose requirements may be
    older than the installed ones)."""
    import importlib.metadata as md

    from packaging.utils import canonicalize_name

    sites = [p for p in sys.path if p.endswith("site-packages")]
    found: dict[str, object] = {}
    for dist in md.distributions(path=sites):
        found.setdefault(canonicalize_name(dist.metadata["Name"]), dist)
    return found


def _requirement_closure(installed: dict, root: str, extras: set[str]) -> set[str]:
    """The distributions ``pip install root[extras]`` installs, by canonical name, read from ``installed``."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    expanded: dict[str, set[str]] = {}  # a distribution, and the extras of it already followed
    todo = [(root, set(extras))]
    while todo:
        name, wanted = todo.pop()
        key = canonicalize_name(name)
        first, new = key not in expanded, wanted - expanded.get(key, set())
        if not first and not new:
            continue
        expanded.setdefault(key, set()).update(wanted)
        for text in installed[key].requires or ():
            req = Requirement(text)
            if req.marker is None:
                applies = first
            else:  # a plain requirement the first time; one of an extra when that extra is new
                applies = (first and req.marker.evaluate({"extra": ""})) or any(
                    req.marker.evaluate({"extra": e}) for e in new
                )
            if applies:
                todo.append((req.name, set(req.extras)))
    return set(expanded)


def _docs_only_python(where: Path) -> tuple[Path, set[str]]:
    """A new virtual environment at ``where`` holding only ``irspec[docs]`` (linked from this one's files);
    its python, and the distributions in it."""
    import venv

    installed = _installed()
    if "irspec" not in installed:
        pytest.skip(
            "irspec is not installed (pip install -e '.[docs]'): no metadata to find the docs extra from"
        )
    keep = _requirement_closure(installed, "irspec", {"docs"})
    venv.EnvBuilder(with_pip=False, symlinks=True).create(where)
    python = where / "bin" / "python"
    target = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    # which distributions own each top-level entry of the site-packages (a namespace package may be shared)
    owners: dict[Path, set[str]] = {}
    for name, dist in installed.items():
        for f in dist.files or ():
            if f.parts and f.parts[0] != "..":
                owners.setdefault(Path(dist.locate_file(f.parts[0])), set()).add(name)
    for name in keep:
        dist = installed[name]
        for f in dist.files or ():
            if not f.parts or f.parts[0] == "..":  # a script in bin/: run as python -m instead
                continue
            top = Path(dist.locate_file(f.parts[0]))
            whole = owners[top] <= keep
            source, link = (top, target / f.parts[0]) if whole else (Path(dist.locate_file(f)), target / f)
            if source.exists() and not link.is_symlink():
                link.parent.mkdir(parents=True, exist_ok=True)
                link.symlink_to(source)
    return python, keep


def test_the_site_builds_where_only_the_docs_extra_is_installed(site, tmp_path):
    pytest.importorskip("mkdocs", reason="mkdocs is not installed (pip install -e '.[docs]')")
    python, keep = _docs_only_python(tmp_path / "venv")
    env = {k: v for k, v in _environment().items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"
    # faithful: exactly the docs extra's distributions, and what the test or Spark extras or a plugin would
    # bring cannot be imported
    probe = """
import importlib.metadata as md, importlib.util, json, sys
from packaging.utils import canonicalize_name
names = {canonicalize_name(d.metadata["Name"]) for d in md.distributions(path=[p for p in sys.path if "site-packages" in p])}
gone = [m for m in ("pytest", "pyarrow", "pyspark", "pandas", "irspec_online", "irspec_diversity", "irspec_usermodel") if importlib.util.find_spec(m)]
print(json.dumps({"names": sorted(names), "importable": gone, "plugins": [e.name for e in md.entry_points(group="irspec")]}))
"""
    seen = json.loads(
        subprocess.run([str(python), "-c", probe], env=env, capture_output=True, text=True, check=True).stdout
    )
    assert set(seen["names"]) == keep and seen["importable"] == [] and seen["plugins"] == []
    out = tmp_path / "site"
    said = _build(python, out, env)
    assert "irspec.evaluation.spark read from its source (pyarrow is not installed)" in said

    def ids(root: Path) -> dict[str, set[str]]:
        return {
            str(p.relative_to(root)): set(re.findall(r'\bid="([^"]+)"', p.read_text(encoding="utf-8")))
            for p in root.rglob("*.html")
        }

    # every page and anchor of the full site is there (those other pages link to, metrics.md#online, too)
    # but the sections of the metrics only plugins register, which the reference describes where installed
    full, bare = ids(site), ids(out)
    assert set(bare) == set(full)
    listed = subprocess.run(
        [str(python), "-m", "irspec", "metrics", "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    plugins_only = set(_registered_metrics()) - {m["name"] for m in json.loads(listed.stdout)}
    for page, anchors in full.items():
        lost = anchors - bare[page]
        if page == "reference/metrics.html":
            lost -= {re.sub(r"[^a-z0-9]+", "-", m.lower()).strip("-") for m in plugins_only}
        if page == "reference/cli.html":  # and the subcommands plugins add (irspec-online's), likewise
            lost -= {f"irspec-{c}" for c in _plugin_commands()}
        assert not lost, (page, sorted(lost)[:10])
    for anchor in ("online", "diversity", "usermodel"):
        assert anchor in bare["reference/metrics.html"]
    assert "ab" in bare["reference/plan.html"]
    modules = (out / "reference" / "modules.html").read_text(encoding="utf-8")
    assert "Register plugins until the end of the test" in modules  # irspec.testing's fixture, without pytest
    assert "Evaluate Spark DataFrames of qrels and runs" in modules  # Spark's module, without pyspark
