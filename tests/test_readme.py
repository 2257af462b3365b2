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


class ExactIndex:
    """A stand-in for a FAISS index, exact inner-product search in numpy: ``search(x, k)`` gives scores
    ``D`` and positions ``I`` (n × k) best first, padded with ``-1`` (and -inf) past the corpus, as FAISS
    pads them."""

    def __init__(self, vectors: np.ndarray) -> None:
        self.vectors = vectors

    def search(self, x: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        scores = (x @ self.vectors.T).astype(np.float32)
        order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        D = np.take_along_axis(scores, order, 1)
        pad = k - order.shape[1]
        I = np.pad(order, ((0, 0), (0, pad)), constant_values=-1)
        return np.pad(D, ((0, 0), (0, pad)), constant_values=-np.inf), I


def test_the_evaluator_examples_run(demo_files):
    """The README's Evaluator, top-k and batch examples, on the demo's qrels and a small dense index whose
    corpus is the demo's judged documents (more than the 1,000 asked for, so that no row has a -1, as the
    README's second form needs; -1 padding is tested in tests/test_evaluator.py). Each result equals
    pytrec_eval on the same top k as dicts."""
    qrels = read_trec_dict(DEMO / "qrels.txt", "qrels")
    corpus_ids = np.array(sorted({d for docs in qrels.values() for d in docs}))
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(len(corpus_ids), 8))
    qids = np.array(sorted(qrels))
    query_ids, query_vectors = qids, rng.normal(size=(len(qids), 8))
    index = ExactIndex(vectors)
    assert len(corpus_ids) > 1000
    space = {"irspec": irspec, "np": np, "qrels": "qrels.txt", "run": "bm25.run", "epochs": 2, "index": index,
             "query_vectors": query_vectors, "query_ids": query_ids, "corpus_ids": corpus_ids, "vectors": query_vectors, "qids": qids}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)
        exec(readme_block("for epoch in range(epochs)"), space)
        assert space["res"].aggregate() == irspec.evaluate("qrels.txt", "bm25.run", "nDCG@10, RR@10, R@100").aggregate()
        exec(readme_block("D, I = index.search(query_vectors, 1000)"), space)
        whole = space["res"]
        exec(readme_block("ev.combine(parts)"), space)
        batched = space["res"]

    def reference(k: int) -> dict[str, dict[str, float]]:
        D, I = index.search(query_vectors, k)
        run = {q: {corpus_ids[i]: float(s) for i, s in zip(row, scores) if i >= 0} for q, row, scores in zip(qids, I, D)}
        return pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recip_rank", "recall.100"}).evaluate(run)

    for res, k in ((whole, 1000), (batched, 100)):
        theirs = reference(k)
        for q, values in res.per_query().items():
            assert values["nDCG@10"] == pytest.approx(theirs[q]["ndcg_cut_10"], abs=1e-12)
            assert values["R@100"] == pytest.approx(theirs[q]["recall_100"], abs=1e-12)
