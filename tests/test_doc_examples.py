"""The documentation's examples compute what independent tools compute: the standardised scores and query
groups of docs/how-to/standardize-and-groups.md, and the evaluator, top-k and batch examples of
docs/how-to/evaluator.md, run as written on the demo data (docs/conftest.py runs every example; this file
checks these ones' values).

Expected values come from pytrec_eval (trec_eval's ndcg_cut_10, recip_rank and recall_100 per topic) and
numpy: the z-scores against the two named reference runs, the group means, and the top k as dicts.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
from trecdicts import read_trec_dict

import irspec

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "specs" / "demo"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.DOTALL | re.MULTILINE)


def page_blocks(page: str, language: str) -> list[str]:
    """The blocks of one language of a documentation page, in order."""
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    return [code for lang, code in FENCE.findall(text) if lang == language]


def page_block(page: str, language: str, containing: str) -> str:
    """The one block of ``page`` in ``language`` that contains ``containing``."""
    (block,) = [code for code in page_blocks(page, language) if containing in code]
    return block


@pytest.fixture
def demo(tmp_path, monkeypatch):
    """A scratch directory holding the demo data where the pages find it (specs/demo/), as the working directory."""
    shutil.copytree(DEMO, tmp_path / "specs" / "demo")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _ndcg10(name: str) -> np.ndarray:
    qrels = read_trec_dict(DEMO / "qrels.txt", "qrels")
    got = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(
        read_trec_dict(DEMO / "runs" / f"{name}.run", "run")
    )
    return np.array([got[q]["ndcg_cut_10"] for q in sorted(qrels)])


def test_the_standardize_and_groups_example(demo, capsys):
    page = "how-to/standardize-and-groups.md"
    subprocess.run(["bash", "-c", page_block(page, "sh", "groups.tsv")], check=True)  # the page's groups file
    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)
        exec(page_block(page, "python", "irspec.with_groups("), namespace)
    z, grouped = namespace["z"], namespace["grouped"]
    assert isinstance(z, irspec.ResultSet) and list(z) == ["bm25", "dense", "hybrid"]
    # the reference is bm25 and dense: per topic their mean and sample sd (n - 1 = 1)
    b, d, h = _ndcg10("bm25"), _ndcg10("dense"), _ndcg10("hybrid")
    mean, sd = (b + d) / 2, np.std([b, d], axis=0, ddof=1)
    got = z["hybrid"].values[:, list(map(str, z["hybrid"].metrics)).index("z(nDCG@10)")]
    assert got == pytest.approx((h - mean) / sd, rel=1e-9)
    # with_groups gave a ResultSet back, each run with its group means: the page's groups are the first 25
    # queries (q01..q25, "trec2023") and the last 25 ("trec2024")
    assert isinstance(grouped, irspec.ResultSet) and list(grouped) == ["bm25", "dense", "hybrid"]
    (table,) = [t for t in grouped["dense"].tables if t.title.endswith("nDCG@10")]
    rows = {r[0]: r for r in table.rows}
    assert rows["trec2023"][1] == 25 and rows["trec2024"][1] == 25
    assert rows["trec2023"][2] == pytest.approx(d[:25].mean(), rel=1e-12)
    assert rows["trec2024"][2] == pytest.approx(d[25:].mean(), rel=1e-12)
    assert "Query groups: nDCG@10" in capsys.readouterr().out


def test_the_evaluator_top_k_and_batch_examples(demo):
    """The page's Evaluator, top-k and batch examples, run in order on the demo's qrels and the page's small
    dense index (its corpus is the demo's judged documents, more than the 1,000 asked for, so that no row
    has a -1, as the page's second form needs; -1 padding is tested in tests/test_evaluator.py). Each result
    equals pytrec_eval on the same top k as dicts."""
    page = "how-to/evaluator.md"
    space: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)
        for block in page_blocks(page, "python"):
            exec(block, space)
            if "index.search(query_vectors, 1000)" in block:
                whole = space["res"]
    batched = space["res"]
    qrels = read_trec_dict(DEMO / "qrels.txt", "qrels")
    assert len(space["corpus_ids"]) > 1000
    assert (
        irspec.Evaluator("specs/demo/qrels.txt", "nDCG@10, RR@10, R@100")
        .evaluate("specs/demo/runs/bm25.run")
        .aggregate()
        == irspec.evaluate(
            "specs/demo/qrels.txt", "specs/demo/runs/bm25.run", "nDCG@10, RR@10, R@100"
        ).aggregate()
    )

    def reference(k: int) -> dict[str, dict[str, float]]:
        scores_found, ids_found = space["index"].search(space["query_vectors"], k)  # FAISS's D, I
        ids = space["corpus_ids"]
        run = {
            q: {ids[i]: float(s) for i, s in zip(row, scores, strict=True) if i >= 0}
            for q, row, scores in zip(space["qids"], ids_found, scores_found, strict=True)
        }
        return pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recip_rank", "recall.100"}).evaluate(
            run
        )

    for res, k in ((whole, 1000), (batched, 100)):
        theirs = reference(k)
        assert sorted(res.per_query()) == sorted(theirs)
        for q, values in res.per_query().items():
            assert values["nDCG@10"] == pytest.approx(theirs[q]["ndcg_cut_10"], abs=1e-12)
            assert values["R@100"] == pytest.approx(theirs[q]["recall_100"], abs=1e-12)
