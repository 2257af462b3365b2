"""The README, the front door: its taste of the command line and of Python runs as written on the demo
data, its links lead to files of the repository (the documentation's pages), it shares its feature table
and speed figures with the site, and it says what the tests need.

Expected values come from pytrec_eval (trec_eval's ndcg_cut_10 and map per topic, averaged in query-id
order as trec_eval averages them). The documentation's own examples are run by docs/conftest.py and
checked by tests/test_doc_examples.py.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import pytrec_eval
from trecdicts import read_trec_dict

import irspec

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "specs" / "demo"
README = (ROOT / "README.md").read_text(encoding="utf-8")
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.DOTALL | re.MULTILINE)


def readme_block(language: str, containing: str) -> str:
    """The one block of the README in ``language`` that contains ``containing``."""
    (block,) = [code for lang, code in FENCE.findall(README) if lang == language and containing in code]
    return block


@pytest.fixture
def repository_copy(tmp_path, monkeypatch):
    """The demo data and plans where the README finds them (specs/), as the working directory."""
    shutil.copytree(ROOT / "specs", tmp_path / "specs", ignore=shutil.ignore_patterns("out"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _mean(measure: str, name: str) -> float:
    """pytrec_eval's per-topic values of one run, added in query-id order and divided (trec_eval's mean)."""
    qrels = read_trec_dict(DEMO / "qrels.txt", "qrels")
    got = pytrec_eval.RelevanceEvaluator(qrels, {measure}).evaluate(
        read_trec_dict(DEMO / "runs" / f"{name}.run", "run")
    )
    key = {"ndcg_cut.10": "ndcg_cut_10"}.get(measure, measure)
    total = 0.0
    for q in sorted(qrels):
        total += got[q][key]
    return total / len(qrels)


@functools.cache
def _examples():
    """docs/conftest.py, which runs the documentation's examples: the README's run through the same checks
    (a console block's shown output, a Python comment's shown value)."""
    spec = importlib.util.spec_from_file_location("irspec_docs_examples", ROOT / "docs" / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while they are made
    spec.loader.exec_module(module)
    return module


def test_the_python_taste_runs_and_gives_trec_evals_means(repository_copy, capsys):
    namespace: dict = {}
    block = readme_block("python", "irspec.compare(")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)
        # each value a comment shows is the value (runs["dense"].aggregate()  # {'nDCG@10': 0.6254..., ...})
        _examples().run_python(block, namespace, "README.md", README[: README.index(block)].count("\n"))
    dense = namespace["runs"]["dense"].aggregate()
    assert dense["nDCG@10"] == pytest.approx(_mean("ndcg_cut.10", "dense"), rel=1e-12)
    assert dense["AP"] == pytest.approx(_mean("map", "dense"), rel=1e-12)
    # the comment's values are these means, rounded
    assert f"'nDCG@10': {dense['nDCG@10']:.4f}" in block
    found = namespace["found"]
    assert [(c.metric, c.a, c.b) for c in found] == [("nDCG@10", "dense", "bm25"), ("AP", "dense", "bm25")]
    assert "p adj" in capsys.readouterr().out


def _printed_by_line(script: str, cwd: Path) -> dict[int, str]:
    """What each command line of a shell block printed (standard output), by its index in the block."""
    lines = script.splitlines()
    marked = "\n".join(f"{line}\necho '@@ {i}'" for i, line in enumerate(lines) if line.strip())
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", marked],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
        env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(cwd)},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    printed, before = {}, 0
    for m in re.finditer(r"^@@ (\d+)\n", proc.stdout, re.M):
        printed[int(m.group(1))] = proc.stdout[before : m.start()]
        before = m.end()
    return printed


def shown_in_comments(script: str, printed: dict[int, str]) -> list[tuple[str, str]]:
    """(command, printed line) for each line a command prints that its comment shows: a shell block's
    comments say what a command does, and output is shown in a console block, where it is checked whole
    (the README once showed irspec parse's three lines as one, in a comment)."""
    found = []
    for i, line in enumerate(script.splitlines()):
        if " # " not in line or i not in printed:
            continue
        comment = line.split(" # ", 1)[1]
        found += [
            (line, out.strip())
            for out in printed[i].splitlines()
            if len(out.strip()) >= 4 and out.strip() in comment
        ]
    return found


def test_the_command_line_taste_runs_and_its_comments_show_no_output(repository_copy):
    script = readme_block("sh", "irspec eval -q")
    printed = _printed_by_line(script, repository_copy)
    assert len(printed) == 3 and all(printed.values())
    assert shown_in_comments(script, printed) == []


def test_the_readmes_console_blocks_print_what_they_show(repository_copy):
    examples = _examples()
    blocks = [code for lang, code in FENCE.findall(README) if lang == "console"]
    assert any("irspec parse" in b for b in blocks)
    for body in blocks:
        # docs/conftest.py's own runner: each command's output, stdout and stderr, line for line
        block = examples.Block(ROOT / "README.md", README.index(body), "console", body, None)
        examples.run_console(block, examples.PageState(repository_copy))


def test_the_checks_catch_an_output_shown_otherwise_than_printed(repository_copy):
    """The README's first taste of irspec parse showed its output in a comment on one line; it prints three.
    Each check above fails on such a README: its comment, a console block of it, a wrong value comment."""
    examples = _examples()
    old = 'irspec parse "ndcg_cut.10, bpref(10+R), Rprec(recall=0.3)"    # nDCG@10 Bpref(nonrel=10+R) Rprec(recall=0.3)'
    assert shown_in_comments(old, _printed_by_line(old, repository_copy)) == [
        (old, "nDCG@10"),
        (old, "Bpref(nonrel=10+R)"),
        (old, "Rprec(recall=0.3)"),
    ]
    one_line = '$ irspec parse "ndcg_cut.10, bpref(10+R), Rprec(recall=0.3)"\nnDCG@10 Bpref(nonrel=10+R) Rprec(recall=0.3)\n'
    with pytest.raises(examples.BlockError, match="shown in the page"):
        examples.run_console(
            examples.Block(ROOT / "README.md", 1, "console", one_line, None),
            examples.PageState(repository_copy),
        )
    with pytest.raises(examples.BlockError, match="the comment shows"):
        examples.run_python("x = {'nDCG@10': 0.6254}  # {'nDCG@10': 0.5428...}", {}, "README.md", 1)
    examples.run_python("x = {'nDCG@10': 0.6254}  # {'nDCG@10': 0.62...}", {}, "README.md", 1)


def test_every_link_leads_to_a_file_of_the_repository():
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README)
    assert len(links) >= 10
    assert [link for link in links if not link.startswith("http") and not (ROOT / link).exists()] == []


def test_the_site_shows_the_readmes_feature_table():
    """The site includes the README's feature table (pymdownx.snippets), so there is one copy of it. (Its
    speed figures are benchmarks/README.md's, which both quote: tests/test_quoted_figures.py.)"""
    assert (
        README.count("<!-- --8<-- [start:features] -->") == 1
        and README.count("<!-- --8<-- [end:features] -->") == 1
    )
    assert '--8<-- "README.md:features"' in (ROOT / "docs" / "coming-from" / "index.md").read_text(
        encoding="utf-8"
    )
    table = README.split("[start:features]")[1].split("[end:features]")[0]
    assert all(
        tool in table.splitlines()[1]
        for tool in ("trec_eval", "pytrec_eval", "ir_measures", "ranx", "irspec")
    )


def test_the_readmes_test_command_is_cis():
    """The README's second command is scripts/test, and CI's .ci/run runs exactly it."""
    (block,) = [
        code for lang, code in FENCE.findall(README) if lang == "sh" and "irspec run specs/demo" in code
    ]
    assert block.splitlines()[1].split("#")[0].strip() == "scripts/test"
    ci = [
        line
        for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert ci[-1] == "exec scripts/test" and not any(re.search(r"\b(pytest|pip)\b", line) for line in ci)


def test_the_readme_says_what_the_tests_need():
    """Every system package scripts/test installs for the tests is named in the README, which says where
    trec_eval's test data comes from and counts the plugins that ship in plugins/."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / "scripts" / "test").read_text(encoding="utf-8")
    packages = [p for group in re.findall(r"missing\+=\(([^)]*)\)", ci) for p in group.split()]
    assert len(packages) == 5  # chromium, two texlive packages, poppler-utils, the JRE
    assert [p for p in packages if p not in readme] == []
    assert "https://github.com/usnistgov/trec_eval" in readme and "../shared/trec_eval_test" in readme
    plugins = sorted(p.name for p in (ROOT / "plugins").iterdir() if (p / "pyproject.toml").exists())
    words = {2: "both", 3: "three"}
    assert f"{words[len(plugins)]} plugins" in readme and (len(plugins) == 2 or "both plugins" not in readme)
    assert all(f"plugins/{p}" in readme for p in plugins)
