"""The README, the front door: its taste of the command line and of Python runs as written on the demo
data, its links lead to files of the repository (the documentation's pages), it shares its feature table
and speed figures with the site, and it says what the tests need.

Expected values come from pytrec_eval (trec_eval's ndcg_cut_10 and map per topic, averaged in query-id
order as trec_eval averages them). The documentation's own examples are run by docs/conftest.py and
checked by tests/test_doc_examples.py.
"""

from __future__ import annotations

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


def test_the_python_taste_runs_and_gives_trec_evals_means(repository_copy, capsys):
    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)
        exec(readme_block("python", "irspec.compare("), namespace)
    dense = namespace["runs"]["dense"].aggregate()
    assert dense["nDCG@10"] == pytest.approx(_mean("ndcg_cut.10", "dense"), rel=1e-12)
    assert dense["AP"] == pytest.approx(_mean("map", "dense"), rel=1e-12)
    # the comment's values are these means, rounded
    assert f"'nDCG@10': {dense['nDCG@10']:.4f}" in readme_block("python", "irspec.compare(")
    found = namespace["found"]
    assert [(c.metric, c.a, c.b) for c in found] == [("nDCG@10", "dense", "bm25"), ("AP", "dense", "bm25")]
    assert "p adj" in capsys.readouterr().out


def test_the_command_line_taste_runs(repository_copy):
    script = readme_block("sh", "irspec parse")
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
        env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(repository_copy)},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    # irspec parse prints the canonical texts the comment shows
    parse = next(line for line in script.splitlines() if line.startswith("irspec parse"))
    assert parse.split("#")[1].split() == ["nDCG@10", "Bpref(nonrel=10+R)", "Rprec(recall=0.3)"]
    assert "nDCG@10\nBpref(nonrel=10+R)\nRprec(recall=0.3)\n" in proc.stdout


def test_every_link_leads_to_a_file_of_the_repository():
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README)
    assert len(links) >= 10
    assert [link for link in links if not link.startswith("http") and not (ROOT / link).exists()] == []


def test_the_site_shows_the_readmes_feature_table_and_speed_figures():
    """The site includes the README's sections (pymdownx.snippets), so there is one copy of each."""
    for section, page in (("features", "coming-from/index.md"), ("speed", "reference/speed.md")):
        assert (
            README.count(f"<!-- --8<-- [start:{section}] -->") == 1
            and README.count(f"<!-- --8<-- [end:{section}] -->") == 1
        )
        assert f'--8<-- "README.md:{section}"' in (ROOT / "docs" / page).read_text(encoding="utf-8")
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
