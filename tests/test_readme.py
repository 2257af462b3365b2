"""The README's Python examples run as written (those of standardised scores and query groups, for now),
on the demo data copied under the file names the README uses; and it says what the tests need.

Expected values come from pytrec_eval (trec_eval's ndcg_cut_10 per topic) and numpy: the z-scores
against the two named reference runs, and the group means.
"""

from __future__ import annotations

import re
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval

import irspec

from trecdicts import read_trec_dict

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "specs" / "demo"
FENCE = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def readme_block(containing: str) -> str:
    """The one Python block of the README that contains ``containing``."""
    (block,) = [code for code in FENCE.findall((ROOT / "README.md").read_text(encoding="utf-8")) if containing in code]
    return block


@pytest.fixture
def demo_files(tmp_path, monkeypatch):
    """The demo's qrels and three runs as the README names them, a groups file, as the working directory."""
    shutil.copy(DEMO / "qrels.txt", tmp_path / "qrels.txt")
    for name in ("bm25", "dense", "hybrid"):
        shutil.copy(DEMO / "runs" / f"{name}.run", tmp_path / f"{name}.run")
    queries = sorted(read_trec_dict(DEMO / "qrels.txt", "qrels"))
    groups = {q: "odd" if i % 2 else "even" for i, q in enumerate(queries)}
    (tmp_path / "groups.tsv").write_text("".join(f"{q}\t{g}\n" for q, g in groups.items()), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return groups


def _ndcg10(name: str) -> np.ndarray:
    qrels = read_trec_dict(DEMO / "qrels.txt", "qrels")
    got = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(read_trec_dict(DEMO / "runs" / f"{name}.run", "run"))
    return np.array([got[q]["ndcg_cut_10"] for q in sorted(qrels)])


def test_standardize_and_groups_example(demo_files, capsys):
    namespace: dict = {"irspec": irspec}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)
        exec(readme_block("irspec.with_groups("), namespace)
    z, grouped = namespace["z"], namespace["grouped"]
    assert isinstance(z, irspec.ResultSet) and list(z) == ["bm25", "dense", "hybrid"]
    # the reference is bm25 and dense: per topic their mean and sample sd (n - 1 = 1)
    b, d, h = _ndcg10("bm25"), _ndcg10("dense"), _ndcg10("hybrid")
    mean, sd = (b + d) / 2, np.std([b, d], axis=0, ddof=1)
    got = z["hybrid"].values[:, list(map(str, z["hybrid"].metrics)).index("z(nDCG@10)")]
    assert got == pytest.approx((h - mean) / sd, rel=1e-9)
    # with_groups gave a ResultSet back, each run with its group means (numpy over pytrec_eval's values)
    assert isinstance(grouped, irspec.ResultSet) and list(grouped) == ["bm25", "dense", "hybrid"]
    (table,) = [t for t in grouped["dense"].tables if t.title.endswith("nDCG@10")]
    rows = {r[0]: r for r in table.rows}
    for group, start in (("even", 0), ("odd", 1)):
        assert rows[group][2] == pytest.approx(d[start::2].mean(), rel=1e-12)
    assert "Query groups: nDCG@10" in capsys.readouterr().out


def test_the_readme_says_what_the_tests_need():
    """Every system package .ci/run installs for the tests is named in the README, which says where
    ../shared/trec_eval_test comes from and counts the plugins that ship in plugins/."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    packages = [p for group in re.findall(r"missing\+=\(([^)]*)\)", ci) for p in group.split()]
    assert len(packages) == 5  # chromium, two texlive packages, poppler-utils, the JRE
    assert [p for p in packages if p not in readme] == []
    assert "https://github.com/usnistgov/trec_eval" in readme and "../shared/trec_eval_test" in readme
    plugins = sorted(p.name for p in (ROOT / "plugins").iterdir() if (p / "pyproject.toml").exists())
    words = {2: "both", 3: "three"}
    assert f"{words[len(plugins)]} plugins" in readme and (len(plugins) == 2 or "both plugins" not in readme)
    assert all(f"plugins/{p}" in readme for p in plugins)
