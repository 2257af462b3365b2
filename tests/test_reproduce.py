"""irspec.reproduce and `irspec reproduce` against repro_eval (Breuer et al., SIGIR 2020), the reference.

repro_eval (PyPI ``repro-eval``, the test extra) is run whole: its own run and qrels readers, its
evaluation through ir_measures, and its measures (KTU, RBO, RMSE, nRMSE, ER, ΔRI, t-tests), on random
runs with tied scores, runs of different depths, qrels topics no run has and run topics the qrels lack.
Where irspec departs from it (lists of different lengths for KTU, topics one run of a pair lacks, the
mean of a NaN KTU, equal scores), the test says which and why (docs/reference/exactness.md).
"""

from __future__ import annotations

import json
import math
import random
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from browser import chromium, dump_dom

import irspec
from irspec.cli import main
from irspec.stats.similarity import ktu

repro_eval = pytest.importorskip("repro_eval", reason="repro-eval is in the test extra")
ir_measures = pytest.importorskip("ir_measures")

from repro_eval.measure import document_order, effectiveness, overall_effects, statistics  # noqa: E402
from repro_eval.util import evaluate_run, load_qrels, load_run  # noqa: E402

METRICS = ("nDCG@10", "AP", "P@5", "RR")
TOL = 1e-9
DEMO = Path(__file__).resolve().parents[1] / "specs" / "demo"
ORIGINAL = [
    "reproduce",
    str(DEMO / "qrels.txt"),
    "--original",
    str(DEMO / "runs" / "bm25.run"),
    str(DEMO / "runs" / "dense.run"),
]
"""``irspec reproduce`` of the demo qrels with bm25 and dense as the originals; the reproductions follow."""


def _write_qrels(path: Path, topics: list[str], docs: int, rng: random.Random) -> None:
    lines = []
    for t in topics:
        for d in range(docs):
            if rng.random() < 0.5:
                lines.append(f"{t} 0 d{d:03d} {rng.choice([0, 0, 1, 2])}")
    path.write_text("\n".join(lines) + "\n")


def _write_run(path: Path, depths: dict[str, int], docs: int, rng: random.Random, name: str) -> None:
    """A run file sorted by score (as a retriever writes it), scores rounded so that many tie, the tied
    documents in random order: both rankers must order them by docno, descending."""
    lines = []
    for t, depth in depths.items():
        chosen = rng.sample(range(docs), depth)
        scores = sorted((round(rng.random() * 3, 1) for _ in chosen), reverse=True)
        rows = list(zip(chosen, scores, strict=True))
        # shuffle within ties: only the score order is the file's
        rows.sort(key=lambda r: (-r[1], rng.random()))
        for rank, (d, s) in enumerate(rows, 1):
            lines.append(f"{t} Q0 d{d:03d} {rank} {s} {name}")
    path.write_text("\n".join(lines) + "\n")


def _dataset(tmp_path: Path, seed: int, *, same_pair_depths: bool) -> dict[str, Path]:
    """Qrels of 12 topics (two, t10 and t11, in no run), four runs over t00-t09 and t99 (not in the
    qrels), depths from 1 to 40 per topic. ``same_pair_depths``: a reproduction ranks as many documents
    per topic as its original (repro_eval's KTU needs it)."""
    rng = random.Random(seed)
    topics = [f"t{i:02d}" for i in range(12)]
    docs = 60
    paths = {"qrels": tmp_path / "qrels.txt"}
    _write_qrels(paths["qrels"], topics, docs, rng)
    ran = [*topics[:10], "t99"]
    base_depths = {t: rng.randint(1, 40) for t in ran}
    adv_depths = {t: rng.randint(1, 40) for t in ran}
    for name, depths in (("b_orig", base_depths), ("a_orig", adv_depths)):
        _write_run(tmp_path / f"{name}.run", depths, docs, rng, name)
    for name, depths in (("b_rep", base_depths), ("a_rep", adv_depths)):
        own = depths if same_pair_depths else {t: rng.randint(1, 40) for t in ran}
        _write_run(tmp_path / f"{name}.run", own, docs, rng, name)
    for name in ("b_orig", "a_orig", "b_rep", "a_rep"):
        paths[name] = tmp_path / f"{name}.run"
    return paths


def _reference_scores(qrels: Path, run: Path) -> dict:
    measures = [ir_measures.parse_measure(m) for m in METRICS]
    return evaluate_run(measures, load_qrels(str(qrels)), load_run(str(run)))


def _close(ours: float, theirs: float) -> bool:
    if math.isnan(theirs):
        return math.isnan(ours)
    return abs(ours - theirs) <= TOL


def _irspec(paths: dict[str, Path], **kwargs: object) -> irspec.Reproduction:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)
        return irspec.reproduce(
            paths["qrels"],
            original=(paths["b_orig"], paths["a_orig"]),
            reproduced=(paths["b_rep"], paths["a_rep"]),
            metrics=", ".join(METRICS),
            **kwargs,
        )


def _check_scores(ours: irspec.Reproduction, paths: dict[str, Path]) -> None:
    """RMSE, nRMSE, paired p-values, ER and ΔRI against repro_eval's, per metric."""
    s = {k: _reference_scores(paths["qrels"], paths[k]) for k in ("b_orig", "a_orig", "b_rep", "a_rep")}
    for role, o, r in (("baseline", "b_orig", "b_rep"), ("advanced", "a_orig", "a_rep")):
        pair = getattr(ours, role)
        rmse = effectiveness.RMSE(s[o], s[r])
        nrmse = effectiveness.nRMSE(s[o], s[r])
        pvals = statistics.ttest(s[o], s[r], rpd=True)
        for m in METRICS:
            assert _close(pair.rmse[m], rmse[m]), (role, m, pair.rmse[m], rmse[m])
            assert _close(pair.nrmse[m], nrmse[m]), (role, m)
            assert _close(pair.p_value[m], pvals[m]), (role, m, pair.p_value[m], pvals[m])
    er = overall_effects.ER(
        orig_score_a=s["a_orig"], orig_score_b=s["b_orig"], rep_score_a=s["a_rep"], rep_score_b=s["b_rep"]
    )
    dri = overall_effects.DRI(
        orig_score_a=s["a_orig"], orig_score_b=s["b_orig"], rep_score_a=s["a_rep"], rep_score_b=s["b_rep"]
    )
    for m in METRICS:
        assert _close(ours.er[m], er[m]), (m, ours.er[m], er[m])
        assert _close(ours.delta_ri[m], dri[m]), (m, ours.delta_ri[m], dri[m])


@pytest.mark.parametrize("seed", range(6))
def test_reproducibility_equals_repro_eval(tmp_path: Path, seed: int) -> None:
    paths = _dataset(tmp_path, seed, same_pair_depths=True)
    p, depth = (0.95, 1000) if seed % 2 == 0 else (0.8, 7)
    ours = _irspec(paths, p=p, depth=depth)
    assert ours.kind == "reproducibility"
    _check_scores(ours, paths)
    for role, o, r in (("baseline", "b_orig", "b_rep"), ("advanced", "a_orig", "a_rep")):
        pair = getattr(ours, role)
        orig, rep = load_run(str(paths[o])), load_run(str(paths[r]))
        ktus = document_order.KTU(orig, rep, trim_thresh=depth, per_topic=True)
        rbos = document_order.RBO(orig, rep, p=p, depth=depth, pbar=False, per_topic=True)
        # the run topic the qrels lack (t99) is compared too: orderings need no judgments
        assert pair.query_ids == tuple(sorted(rbos)) and "t99" in pair.query_ids
        for q, k, b in zip(pair.query_ids, pair.ktu, pair.rbo, strict=True):
            assert _close(float(k), ktus[q]), (role, q, k, ktus[q])
            assert _close(float(b), rbos[q]), (role, q, b, rbos[q])
        assert _close(pair.rbo_mean, float(np.mean(list(rbos.values()))))
        finite = [v for v in ktus.values() if not math.isnan(v)]
        # repro_eval's mean is NaN as soon as one topic ranks a single document; irspec's leaves it out
        assert _close(pair.ktu_mean, float(np.mean(finite)))


@pytest.mark.parametrize("seed", range(3))
def test_different_depths_in_a_pair(tmp_path: Path, seed: int) -> None:
    """A reproduction that ranks more or fewer documents than its original: repro_eval's KTU fails
    (scipy's kendalltau on two lists of different lengths); irspec's is KTU of both lists cut to the
    shorter one, and every other measure still equals repro_eval's."""
    paths = _dataset(tmp_path, 100 + seed, same_pair_depths=False)
    ours = _irspec(paths)
    _check_scores(ours, paths)
    orig, rep = load_run(str(paths["b_orig"])), load_run(str(paths["b_rep"]))
    rbos = document_order.RBO(orig, rep, p=0.95, depth=1000, pbar=False, per_topic=True)
    assert all(
        _close(float(b), rbos[q]) for q, b in zip(ours.baseline.query_ids, ours.baseline.rbo, strict=True)
    )
    with pytest.raises(ValueError):
        document_order.KTU(orig, rep, per_topic=True)
    orig, rep = document_order.break_ties(orig), document_order.break_ties(rep)
    for q, k in zip(ours.baseline.query_ids, ours.baseline.ktu, strict=True):
        n = min(len(orig[q]), len(rep[q]))
        cut_o = {d: orig[q][d] for d in list(orig[q])[:n]}
        cut_r = {d: rep[q][d] for d in list(rep[q])[:n]}
        theirs = document_order.KTU({q: cut_o}, {q: cut_r}, per_topic=True)[q]
        assert _close(float(k), theirs), (q, k, theirs)


def test_replicability_equals_repro_eval(tmp_path: Path) -> None:
    """Another collection: the reproductions' own qrels and topics; ER, ΔRI and the unpaired t-test."""
    (tmp_path / "orig").mkdir()
    (tmp_path / "rep").mkdir()
    paths = _dataset(tmp_path / "orig", 7, same_pair_depths=True)
    other = _dataset(tmp_path / "rep", 8, same_pair_depths=True)
    paths["b_rep"], paths["a_rep"] = other["b_rep"], other["a_rep"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)
        ours = irspec.reproduce(
            paths["qrels"],
            original=(paths["b_orig"], paths["a_orig"]),
            reproduced=(paths["b_rep"], paths["a_rep"]),
            metrics=list(METRICS),
            reproduced_qrels=other["qrels"],
        )
    assert ours.kind == "replicability" and ours.baseline.rmse is None and ours.baseline.query_ids == ()
    so = {k: _reference_scores(paths["qrels"], paths[k]) for k in ("b_orig", "a_orig")}
    sr = {k: _reference_scores(other["qrels"], other[k]) for k in ("b_rep", "a_rep")}
    kw = {
        "orig_score_a": so["a_orig"],
        "orig_score_b": so["b_orig"],
        "rep_score_a": sr["a_rep"],
        "rep_score_b": sr["b_rep"],
    }
    er, dri = overall_effects.ER(**kw), overall_effects.DRI(**kw)
    p_b = statistics.ttest(so["b_orig"], sr["b_rep"], rpd=False)
    p_a = statistics.ttest(so["a_orig"], sr["a_rep"], rpd=False)
    for m in METRICS:
        assert _close(ours.er[m], er[m]) and _close(ours.delta_ri[m], dri[m]), m
        assert _close(ours.baseline.p_value[m], p_b[m]) and _close(ours.advanced.p_value[m], p_a[m]), m


def test_ktu_is_repro_eval_s_not_a_rank_correlation() -> None:
    """repro_eval's KTU correlates the documents' positions in the sorted union rank by rank, so it
    depends on how the docnos sort: a ranking reversed scores -1 only when its docnos happen to sort in
    rank order. irspec keeps repro_eval's value (exactness page); written out for b a c against c a b:
    positions in the union (a, b, c) are 1 0 2 and 2 0 1; pairs (0,1) concordant, (0,2) discordant,
    (1,2) concordant: tau = (2 - 1) / 3."""
    assert ktu(["b", "a", "c"], ["c", "a", "b"]) == pytest.approx(1 / 3)
    assert ktu(["a", "b", "c"], ["c", "b", "a"]) == -1.0
    theirs = document_order.KTU(
        {"q": {"b": 3, "a": 2, "c": 1}}, {"q": {"c": 3, "a": 2, "b": 1}}, per_topic=True
    )
    assert theirs["q"] == pytest.approx(1 / 3)


def test_equal_scores_give_p_1(tmp_path: Path) -> None:
    """A reproduction that scores exactly as the original has no t (0/0): irspec's p-value is 1 per
    metric. repro_eval gives 1 only when every metric's p is NaN and all scores are equal; one equal
    metric among others is NaN there."""
    run = DEMO / "runs" / "bm25.run"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)
        ours = irspec.reproduce(
            DEMO / "qrels.txt",
            original=(run, DEMO / "runs" / "dense.run"),
            reproduced=(run, DEMO / "runs" / "hybrid.run"),
            metrics="nDCG@10",
        )
    assert ours.baseline.p_value["nDCG@10"] == 1.0 and ours.baseline.rmse["nDCG@10"] == 0.0
    assert ours.baseline.ktu_mean == 1.0


def test_topics_one_run_lacks_are_left_out_with_a_warning(tmp_path: Path) -> None:
    """A reproduction without some topics of its original: scored 0 on those (as repro_eval scores a
    qrels topic a run lacks), and left out of KTU and RBO with a warning naming them. repro_eval fails
    on a topic the reproduction has and the original lacks, and ignores the converse silently."""
    paths = _dataset(tmp_path, 3, same_pair_depths=True)
    lines = paths["b_rep"].read_text().splitlines()
    paths["b_rep"].write_text("\n".join(x for x in lines if not x.startswith(("t01 ", "t02 "))) + "\n")
    with pytest.warns(irspec.IrspecWarning, match=r"b_orig: 2 of its 11 queries .*'t01', 't02'.*left out"):
        ours = irspec.reproduce(
            paths["qrels"],
            original=(paths["b_orig"], paths["a_orig"]),
            reproduced=(paths["b_rep"], paths["a_rep"]),
            metrics=list(METRICS),
        )
    assert "t01" not in ours.baseline.query_ids and "t01" in ours.advanced.query_ids
    _check_scores(ours, paths)


def _demo() -> irspec.Reproduction:
    """bm25 and dense of the demo "reproduced" by hybrid and random: far from a reproduction."""
    runs = DEMO / "runs"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)
        return irspec.reproduce(
            DEMO / "qrels.txt",
            original=(runs / "bm25.run", runs / "dense.run"),
            reproduced=(runs / "hybrid.run", runs / "random.run"),
            metrics="nDCG@10, AP",
        )


def test_readings_and_formats(tmp_path: Path) -> None:
    ours = _demo()
    text = str(ours)
    assert "ER" in text and "1: the same improvement" in text and "0: the same relative improvement" in text
    record = json.loads(ours.render("json"))
    assert record["kind"] == "reproducibility" and record["test"] == "paired t-test"
    assert record["ER"]["AP"] == pytest.approx(ours.er["AP"])
    assert len(record["baseline"]["per_topic"]) == 50
    assert "| KTU |" in ours.render("markdown")
    latex = ours.render("latex")
    assert r"\begin{tabular}" in latex and r"$\Delta$RI" in latex
    page = ours.render("html")
    assert (
        page.count('<svg class="chart"') == 2
        and "<script" not in page
        and "http" not in page.split("<body>")[1]
    )
    frame = ours.to_frame()
    assert frame.columns == ["pair", "query_id", "KTU", "RBO"] and frame.height == 100


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = DEMO / "runs"
    args = [
        str(DEMO / "qrels.txt"),
        "--original",
        str(runs / "bm25.run"),
        str(runs / "dense.run"),
        "--reproduced",
        str(runs / "hybrid.run"),
        str(runs / "random.run"),
        "-m",
        "nDCG@10",
        "-m",
        "AP",
    ]
    assert main(["reproduce", *args, "--format", "json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["metrics"] == ["nDCG@10", "AP"]
    out = tmp_path / "report.html"
    assert main(["reproduce", *args, "-f", "html", "-o", str(out)]) == 0
    assert out.read_text().startswith("<!DOCTYPE html>")
    assert main(["reproduce", *args, "--reproduced-qrels", str(DEMO / "qrels.llm.txt")]) == 0
    assert "Replicability" in capsys.readouterr().out


def _error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert lines[-1].startswith("irspec: error: ") and "Traceback" not in captured.err
    assert captured.out == ""
    return lines[-1]


def test_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = DEMO / "runs"
    base = list(ORIGINAL)
    empty = tmp_path / "empty.run"
    empty.write_text("")
    msg = _error([*base, "--reproduced", str(empty), str(runs / "random.run"), "-m", "AP"], capsys)
    assert "empty.run" in msg and "empty" in msg
    good = [*base, "--reproduced", str(runs / "hybrid.run"), str(runs / "random.run")]
    msg = _error([*good, "-m", "num_rel_ret"], capsys)
    assert "NumRelRet" in msg and "cannot be compared" in msg
    assert "cannot be compared" in _error([*good, "-m", "relstring"], capsys)
    assert "--rbo-p" in _error([*good, "-m", "AP", "--rbo-p", "0"], capsys)
    assert "depth" in _error([*good, "-m", "AP", "--depth", "0"], capsys)
    bad = tmp_path / "bad.run"
    bad.write_text("q01 Q0 d1 1 1.0 x\nq01 Q0 d2 2 high x\n")
    msg = _error([*base, "--reproduced", str(bad), str(runs / "random.run"), "-m", "AP"], capsys)
    assert "bad.run" in msg and ":2" in msg
    # the same file twice: a warning, and the values still come
    assert main([*base, "--reproduced", str(runs / "bm25.run"), str(runs / "random.run"), "-m", "AP"]) == 0
    assert "the same file is given twice" in capsys.readouterr().err


def _renamed(source: Path, target: Path, keep: int = 0) -> Path:
    """``source``'s lines with every topic after the first ``keep`` renamed q.. -> x..: another
    collection's topics, which the demo qrels do not judge."""
    topics: list[str] = []
    lines = []
    for line in source.read_text().splitlines():
        topic = line.split()[0]
        if topic not in topics:
            topics.append(topic)
        lines.append(line if topics.index(topic) < keep else "x" + line[1:])
    target.write_text("\n".join(lines) + "\n")
    return target


def test_a_run_that_ranks_none_of_the_qrels_topics_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Scored 0 on all 50 topics, compared on none of them for document order, with a relative
    # improvement over a mean of 0 (ΔRI -inf): nothing was reproduced, so nothing is reported.
    runs = DEMO / "runs"
    other = _renamed(runs / "bm25.run", tmp_path / "other.run")
    out = tmp_path / "report.txt"
    argv = list(ORIGINAL)
    argv += ["--reproduced", str(other), str(runs / "hybrid.run"), "-m", "AP", "-o", str(out)]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and not out.exists()
    assert captured.err == (
        f"irspec: error: {other}: the run ranks none of the 50 topics of the qrels {str(DEMO / 'qrels.txt')!r} "
        "('q01', 'q02', 'q03', 'q04', 'q05' and 45 more; the run's: 'x01', 'x02', 'x03', 'x04', 'x05' and 45 "
        "more): expected a run of those topics\n"
    )
    with pytest.raises(irspec.InputError, match="the run ranks none of the 50 topics"):  # the library alike
        irspec.reproduce(
            DEMO / "qrels.txt", (runs / "bm25.run", runs / "dense.run"), (other, runs / "hybrid.run"), "AP"
        )
    # on another collection, against the reproductions' own qrels
    assert main([*argv[:-2], "--reproduced-qrels", str(DEMO / "qrels.llm.txt")]) == 2
    assert (
        f"irspec: error: {other}: the run ranks none of the 50 topics of the qrels {str(DEMO / 'qrels.llm.txt')!r}"
        in capsys.readouterr().err
    )
    # qrels without judgments: named, nothing compared
    empty = tmp_path / "empty.qrels"
    empty.write_text("")
    assert main(["reproduce", str(empty), *argv[2:]]) == 2
    assert capsys.readouterr().err == (
        f"irspec: error: {empty}: the qrels have no judgments: expected the judgments of the runs' topics\n"
    )


def test_a_reproduction_of_some_topics_says_how_many_each_pair_compares(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The reproduced baseline ranks 30 of the 50 topics: its document order is compared on those 30,
    # the advanced pair's on all 50, and the header says so rather than one pair's count for both.
    runs = DEMO / "runs"
    some = _renamed(runs / "bm25.run", tmp_path / "some.run", keep=30)
    argv = list(ORIGINAL)
    assert main([*argv, "--reproduced", str(some), str(runs / "hybrid.run"), "-m", "AP"]) == 0
    captured = capsys.readouterr()
    assert (
        "Document order (RBO p=0.95, depth 1000; KTU cut at 1000; baseline 30 topics, advanced 50)"
        in captured.out
    )
    assert "inf" not in captured.out
    assert "irspec: warning: bm25: 20 of its 50 queries not in every run compared" in captured.err
    # one topic, nothing relevant retrieved: the reproduced baseline's mean is 0, and repro_eval's ΔRI,
    # a relative improvement over it, is -inf; kept, and the warning says why
    zero = tmp_path / "zero.run"
    zero.write_text("q01 Q0 nowhere 1 1.0 zero\n")
    assert main([*argv, "--reproduced", str(zero), str(runs / "hybrid.run"), "-m", "AP"]) == 0
    assert (
        "irspec: warning: ΔRI of AP is -inf: the reproduced baseline's mean AP is 0, and a relative improvement "
        "over 0 is a division by 0\n" in capsys.readouterr().err
    )


def test_a_run_file_not_sorted_by_score_is_ranked_as_trec_eval_ranks(tmp_path: Path) -> None:
    """repro_eval ranks a run in its file's order (it breaks ties among adjacent lines only); irspec
    ranks by score, then docno descending, as every other measure does. Written out: the original
    lists d1 (score 1) before d2 (score 3), so it ranks d2 first; the reproduction ranks d2 first too."""
    orig, rep = tmp_path / "orig.run", tmp_path / "rep.run"
    orig.write_text("q1 Q0 d1 1 1.0 o\nq1 Q0 d2 2 3.0 o\nq1 Q0 d3 3 0.5 o\n")
    rep.write_text("q1 Q0 d2 1 3.0 r\nq1 Q0 d1 2 1.0 r\nq1 Q0 d3 3 0.5 r\n")
    ours = irspec.similarity(orig, rep, "KTU, RBO(p=0.5)@1")
    assert ours.per_query()["q1"] == {"KTU": 1.0, "RBO(p=0.5)@1": 1.0}
    theirs = document_order.KTU(load_run(str(orig)), load_run(str(rep)), per_topic=True)
    assert theirs["q1"] == pytest.approx(1 / 3)  # d1 d2 d3 against d2 d1 d3 in repro_eval


def _plan(tmp_path: Path, section: str) -> Path:
    mine = tmp_path / "my_bm25.run"
    # bm25 with its scores to one decimal: ties that fall to docno order, a near reproduction
    mine.write_text(
        "".join(
            " ".join([*f[:4], f"{float(f[4]):.1f}", *f[5:]]) + "\n"
            for f in (line.split() for line in (DEMO / "runs" / "bm25.run").read_text().splitlines())
        )
    )
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"qrels: {DEMO / 'qrels.txt'}\n"
        "runs:\n"
        f"  - {{name: bm25, path: {DEMO / 'runs' / 'bm25.run'}}}\n"
        f"  - {{name: colbert, path: {DEMO / 'runs' / 'seeds' / 'colbert-seed1.run'}}}\n"
        f"  - {{name: my_bm25, path: {mine}}}\n"
        f"  - {{name: my_colbert, path: {DEMO / 'runs' / 'seeds' / 'colbert-seed2.run'}}}\n"
        "metrics: [nDCG@10, AP]\n"
        f"{section}"
        "output:\n"
        "  - {format: table}\n"
        "  - {format: json, path: out/r.json}\n"
        "  - {format: markdown, path: out/r.md}\n"
        "  - {format: latex, path: out/r.tex}\n"
        "  - {format: html, path: out/r.html}\n"
    )
    return plan


def test_plan_section(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A plan's reproduce section: the same values as irspec.reproduce on the runs' files, in every
    output, the runs named as in the plan."""
    plan = _plan(
        tmp_path,
        "reproduce:\n  original: [bm25, colbert]\n  reproduced: [my_bm25, my_colbert]\n  depth: 100\n",
    )
    assert main(["run", str(plan)]) == 0
    out = capsys.readouterr().out
    assert "baseline: bm25 reproduced by my_bm25" in out and "Overall effects" in out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)
        direct = irspec.reproduce(
            DEMO / "qrels.txt",
            original=(DEMO / "runs" / "bm25.run", DEMO / "runs" / "seeds" / "colbert-seed1.run"),
            reproduced=(tmp_path / "my_bm25.run", DEMO / "runs" / "seeds" / "colbert-seed2.run"),
            metrics="nDCG@10, AP",
            depth=100,
        )
    record = json.loads((tmp_path / "out" / "r.json").read_text())["reproduction"]
    assert record["ER"] == direct.er and record["delta_RI"] == direct.delta_ri
    assert record["baseline"]["RBO"] == direct.baseline.rbo_mean and record["rbo"]["depth"] == 100
    assert "| KTU |" in (tmp_path / "out" / "r.md").read_text()
    assert r"$\Delta$RI" in (tmp_path / "out" / "r.tex").read_text()
    page = (tmp_path / "out" / "r.html").read_text()
    assert "Document order" in page and "bm25 reproduced by my_bm25" in page
    assert "Per-topic KTU and RBO" in page and "ER against ΔRI" in page  # the figures among the plots


def test_plan_section_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = _plan(
        tmp_path,
        "reproduce:\n  original: [bm26, colbert]\n  reproduced: [my_bm25, my_colbert]\n"
        "  qrels: missing.txt\n",
    )
    assert main(["validate", str(plan)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("irspec: error: ") and "2 problems" in err and "Traceback" not in err
    assert "plan.yaml:9: reproduce.original[0]: 'bm26' is not a run of the plan; did you mean bm25?" in err
    assert "plan.yaml:11: reproduce.qrels: qrels file not found" in err
    plan = _plan(tmp_path, "reproduce:\n  original: [bm25]\n  reproduced: [my_bm25, my_colbert]\n")
    assert "reproduce.original" in _error(["validate", str(plan)], capsys)
    plan = _plan(tmp_path, "reproduce:\n  original: [bm25, colbert]\n  reproduced: [my_bm25, my_colbert]\n")
    plan.write_text(plan.read_text().replace("metrics: [nDCG@10, AP]", "metrics: [nDCG@10, num_rel]"))
    msg = _error(["run", str(plan)], capsys)
    assert "plan.yaml: reproduce: NumRel: cannot be compared" in msg


def test_rbo_of_equal_rankings_shorter_than_the_depth_is_repro_eval_s() -> None:
    """Two equal rankings of 100 documents: RBO to depth 1000 stays below 1, as repro_eval's
    normaliser sums the weights to the depth; the same value (exactness page)."""
    run = DEMO / "runs" / "bm25.run"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)
        ours = irspec.similarity(run, run, "RBO")
    theirs = document_order.RBO(load_run(str(run)), load_run(str(run)), 0.95, 1000, False, True)
    assert all(_close(v["RBO"], theirs[q]) for q, v in ours.per_query().items())
    assert ours.means()["RBO"] < 0.98


def test_p_value_of_one_equal_metric_among_others() -> None:
    """repro_eval's p-value of a metric whose scores equal the original's is NaN unless every metric's
    is (its rule is over the whole table); irspec's is 1 per metric (exactness page)."""
    orig = {"q1": {"AP": 0.5, "P@5": 0.2}, "q2": {"AP": 0.3, "P@5": 0.4}, "q3": {"AP": 0.1, "P@5": 0.6}}
    rep = {"q1": {"AP": 0.5, "P@5": 0.4}, "q2": {"AP": 0.3, "P@5": 0.4}, "q3": {"AP": 0.1, "P@5": 0.0}}
    theirs = statistics.ttest(orig, rep, rpd=True)
    assert math.isnan(theirs["AP"]) and not math.isnan(theirs["P@5"])
    from irspec.experiment.reproduce import _p_value

    assert _p_value(np.array([0.5, 0.3, 0.1]), np.array([0.5, 0.3, 0.1]), paired=True) == 1.0
    ours = _p_value(np.array([0.2, 0.4, 0.6]), np.array([0.4, 0.4, 0.0]), paired=True)
    assert _close(ours, theirs["P@5"])


_MEASURE = """<script>
window.addEventListener("load", () => {
  const imgs = [...document.querySelectorAll("figure svg.chart")];
  const loaded = imgs.filter(i => i.getBoundingClientRect().width > 300 && i.getBoundingClientRect().height > 150).length;
  const out = document.createElement("pre");
  out.id = "measured";
  out.textContent = JSON.stringify({images: imgs.length, loaded: loaded, tables: document.querySelectorAll("table").length,
                                    page: document.documentElement.scrollWidth});
  document.body.appendChild(out);
});
</script>"""


@pytest.mark.skipif(chromium() is None, reason="no headless Chromium installed")
def test_html_page_in_headless_chromium(tmp_path: Path) -> None:
    """The self-contained page (no script of its own, no network): its tables parse and both figures
    are drawn, in a window 1000 pixels wide without horizontal scrolling."""
    page = _demo().render("html")
    (tmp_path / "measured.html").write_text(page.replace("</body>", _MEASURE + "</body>"), encoding="utf-8")
    dom = dump_dom(tmp_path / "measured.html", "--window-size=1000,1400", "--virtual-time-budget=5000")
    found = re.search(r'<pre id="measured">(.*?)</pre>', dom)
    assert found, dom[-2000:]
    measured = json.loads(found.group(1).replace("&quot;", '"'))
    assert measured == {"images": 2, "loaded": 2, "tables": 4, "page": measured["page"]}
    assert measured["page"] <= 1000


def test_plan_prints_the_reproduction_s_warnings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = _plan(tmp_path, "reproduce:\n  original: [bm25, colbert]\n  reproduced: [my_bm25, my_colbert]\n")
    mine = tmp_path / "my_bm25.run"
    mine.write_text("".join(x + "\n" for x in mine.read_text().splitlines() if not x.startswith("q07 ")))
    assert main(["run", str(plan)]) == 0
    err = capsys.readouterr().err
    assert "irspec: warning: bm25: 1 of its 50 queries not in every run compared ('q07'): left out" in err


def test_output_checked_before_evaluating(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = DEMO / "runs"
    blocker = tmp_path / "file"
    blocker.write_text("")
    argv = list(ORIGINAL)
    argv += ["--reproduced", str(runs / "hybrid.run"), str(tmp_path / "absent.run"), "-m", "AP"]
    # the output's folder is a file: said first, before the missing run is read
    msg = _error([*argv, "-o", str(blocker / "r.html")], capsys)
    assert "absent.run" not in msg and "r.html" in msg


def test_output_into_a_missing_directory_is_refused_as_the_help_says(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # -o writes as a shell's > would (and as irspec eval's and diff's -o do), into a directory that
    # exists: refused before anything is read, nothing made; --help says so.
    runs = DEMO / "runs"
    target = tmp_path / "no" / "report.txt"
    argv = list(ORIGINAL)
    argv += [
        "--reproduced",
        str(runs / "hybrid.run"),
        str(runs / "random.run"),
        "-m",
        "AP",
        "-o",
        str(target),
    ]
    assert (
        _error(argv, capsys)
        == f"irspec: error: cannot write {str(target)!r}: no such directory: {str(target.parent)!r}"
    )
    assert not target.parent.exists()
    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
    assert "(atomically; its directory must exist)" in " ".join(capsys.readouterr().out.split())


def test_plan_reproduction_takes_the_plan_s_relevance_level(tmp_path: Path) -> None:
    """The plan's options (trec_eval -l 2 here) hold for its reproduce section as for its table: the
    measures are repro_eval's on ir_measures' scores at rel=2 (the section once used level 1)."""
    plan = _plan(tmp_path, "reproduce:\n  original: [bm25, colbert]\n  reproduced: [my_bm25, my_colbert]\n")
    plan.write_text(
        plan.read_text().replace("metrics: [nDCG@10, AP]\n", "metrics: [AP]\noptions: {relevance_level: 2}\n")
    )
    assert main(["run", str(plan)]) == 0
    record = json.loads((tmp_path / "out" / "r.json").read_text())["reproduction"]
    runs = {
        "b_orig": DEMO / "runs" / "bm25.run",
        "a_orig": DEMO / "runs" / "seeds" / "colbert-seed1.run",
        "b_rep": tmp_path / "my_bm25.run",
        "a_rep": DEMO / "runs" / "seeds" / "colbert-seed2.run",
    }
    at = {}
    for level in (1, 2):
        measure = ir_measures.parse_measure(f"AP(rel={level})")
        qrels = load_qrels(str(DEMO / "qrels.txt"))
        scores = {k: evaluate_run([measure], qrels, load_run(str(p))) for k, p in runs.items()}
        at[level] = {
            "RMSE": effectiveness.RMSE(scores["b_orig"], scores["b_rep"])[str(measure)],
            "ER": overall_effects.ER(
                orig_score_a=scores["a_orig"],
                orig_score_b=scores["b_orig"],
                rep_score_a=scores["a_rep"],
                rep_score_b=scores["b_rep"],
            )[str(measure)],
        }
    assert abs(at[1]["RMSE"] - at[2]["RMSE"]) > 1e-3  # the level matters on these runs
    assert _close(record["baseline"]["RMSE"]["AP"], at[2]["RMSE"])
    assert _close(record["ER"]["AP"], at[2]["ER"])


def test_the_t_tests_p_values_are_scipys_to_the_bit() -> None:
    """The paired and the unpaired (equal variances) t-tests' p-values are scipy.stats' ttest_rel's and
    ttest_ind's, bit for bit (irspec computes them without importing scipy.stats): random scores, scores on
    a grid of tenths (ties), a constant difference, constant samples and samples of one."""
    from scipy import stats as st

    from irspec.experiment.reproduce import _p_value

    rng = np.random.default_rng(7)
    checked = 0
    for case in range(400):
        n, m = (
            (1 if case % 7 == 0 else int(rng.integers(2, 30))),
            (1 if case % 11 == 0 else int(rng.integers(2, 30))),
        )
        a, b, c = rng.random(n), rng.random(n), rng.random(m)
        pairs = [(a, b), (np.round(a, 1), np.round(b, 1)), (a, a + 0.1)]
        samples = [
            (a, c),
            (np.round(a, 1), np.round(c, 1)),
            (np.full(n, 0.5), np.full(m, 0.5)),
            (np.full(n, 0.2), np.full(m, 0.7)),
        ]
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            for paired, (x, y) in [(True, p) for p in pairs] + [(False, s) for s in samples]:
                if len(x) == len(y) and np.array_equal(x, y):
                    continue
                ours = _p_value(x, y, paired=paired)
                theirs = float((st.ttest_rel if paired else st.ttest_ind)(x, y).pvalue)
                assert ours == theirs or (math.isnan(ours) and math.isnan(theirs)), (
                    paired,
                    x,
                    y,
                    ours,
                    theirs,
                )
                checked += 1
    assert checked > 2500


def test_a_metric_undefined_on_a_topic_or_lower_is_better_is_refused(tmp_path: Path) -> None:
    """Accuracy is undefined (NaN) on a query the run lacks: RMSE and ER left the topic out and the
    t-test gave NaN. Fallout is lower-is-better, where ER and ΔRI read a higher score as an improvement."""
    (tmp_path / "qrels.txt").write_text("".join(f"q{i} 0 a 1\nq{i} 0 b 0\n" for i in (1, 2, 3)))
    full = "".join(f"q{i} Q0 a 1 2 r\nq{i} Q0 b 2 1 r\n" for i in (1, 2, 3))
    for name in ("bo", "ao", "ar"):
        (tmp_path / f"{name}.run").write_text(full)
    (tmp_path / "br.run").write_text("q1 Q0 a 1 2 r\nq1 Q0 b 2 1 r\nq2 Q0 b 1 2 r\nq2 Q0 a 2 1 r\n")  # no q3
    path = {n: str(tmp_path / f"{n}.run") for n in ("bo", "ao", "br", "ar")}
    qrels = str(tmp_path / "qrels.txt")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(irspec.errors.EvaluationError, match=r"Accuracy: undefined for run .* 'q3'"):
            irspec.reproduce(
                qrels,
                original=(path["bo"], path["ao"]),
                reproduced=(path["br"], path["ar"]),
                metrics="Accuracy",
            )
        with pytest.raises(irspec.errors.EvaluationError, match="a lower value is better"):
            irspec.reproduce(
                qrels,
                original=(path["bo"], path["ao"]),
                reproduced=(path["br"], path["ar"]),
                metrics="Fallout(collection_size=10)@1",
            )
