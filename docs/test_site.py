"""The documentation site, built and looked at in headless Chromium.

The site is built with ``mkdocs build --strict`` (or taken from ``IRSPEC_DOCS_SITE``, a site CI has just
built), served over HTTP (Material's search runs in a web worker, which a ``file://`` page may not start),
and opened in headless Chromium, driven through the DevTools protocol over a pipe (no driver, no package
beyond the standard library). On the home page, the metric reference and a how-to guide it checks that the
navigation leads where it says, that the search finds a metric and a how-to, that every code block has a
copy button, and that the tutorial's plots load; it takes a screenshot of each page
(``IRSPEC_DOCS_SCREENSHOTS=DIR`` keeps them). Expected values come from the registry as ``irspec metrics
--json`` lists it and from the pages' own Markdown, never from the built HTML.

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
    browser.open(f"{server}/")
    browser.screenshot(shots / "home.png")
    assert browser.js(H1) == "irspec"
    tabs = browser.js("[...document.querySelectorAll('.md-tabs__link')].map(a => a.textContent.trim())")
    assert tabs == ["Home", "Tutorial", "How-to guides", "Coming from", "Reference"]
    _assert_copy_buttons(browser)
    # a click on a tab loads its page
    browser.js(
        "[...document.querySelectorAll('.md-tabs__link')].find(a => a.textContent.trim() == 'How-to guides').click()"
    )
    browser.wait_for("location.pathname.endsWith('/how-to/') && document.readyState === 'complete'")
    assert browser.js(H1) == "How-to guides"
    # and each guide listed in the page's table is one click away, its link leading to a page with that guide
    links = browser.js("[...document.querySelectorAll('.md-content table a')].map(a => a.href)")
    guides = sorted(p.stem for p in (ROOT / "docs" / "how-to").glob("*.md") if p.stem != "index")
    assert sorted({re.sub(r".*/how-to/([^/]+)/.*", r"\1", h) for h in links}) == guides
    browser.js(
        "[...document.querySelectorAll('.md-content table a')].find(a => a.href.includes('/power/')).click()"
    )
    browser.wait_for("location.pathname.endsWith('/how-to/power/') && document.readyState === 'complete'")
    assert browser.js(H1) == "Power and topic-set size"


def test_the_metric_reference_lists_every_registered_metric_and_the_search_finds_one(
    site, server, browser, shots
):
    browser.open(f"{server}/reference/metrics/")
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
    assert any(re.search(r"/reference/metrics/(\?[^#]*)?#bpref$", h) for h in hits), hits[:10]
    browser.screenshot(shots / "search.png")


def test_a_how_to_guide_has_copy_buttons_and_the_search_finds_it(site, server, browser, shots):
    browser.open(f"{server}/how-to/significance/")
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
    assert any(re.search(r"/how-to/significance/(\?|#|$)", h) for h in hits), hits[:10]


def test_the_tutorials_plots_are_drawn_where_it_talks_about_them(site, server, browser, shots):
    browser.open(f"{server}/tutorial/")
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
        if page == "reference/metrics/index.html":
            lost -= {re.sub(r"[^a-z0-9]+", "-", m.lower()).strip("-") for m in plugins_only}
        assert not lost, (page, sorted(lost)[:10])
    for anchor in ("online", "diversity", "usermodel"):
        assert anchor in bare["reference/metrics/index.html"]
    assert "ab" in bare["reference/plan/index.html"]
    modules = (out / "reference" / "modules" / "index.html").read_text(encoding="utf-8")
    assert "Register plugins until the end of the test" in modules  # irspec.testing's fixture, without pytest
    assert "Evaluate Spark DataFrames of qrels and runs" in modules  # Spark's module, without pyspark
