"""Tests of irspec.report.plots: the figures, their files, and that they stay readable with 10 runs.

Readability is checked on the drawn figure itself: the bounding boxes of legend entries, tick labels
and titles (as the renderer lays them out) must not overlap one another, and must lie inside the figure.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import matplotlib

import irspec
from irspec.evaluation.context import Options
from irspec.evaluation.evaluate import evaluate_many
from irspec.evaluation.result import Result
from irspec.report import plots

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "report"
STEMS = ["base", "better", "worse", "same"]


def fixture_results() -> list[Result]:
    return evaluate_many(
        str(FIXTURES / "qrels.txt"), [str(FIXTURES / f"{s}.run") for s in STEMS], ["nDCG@5", "AP"]
    )


def fixture_curves() -> dict[str, list[float]]:
    results = evaluate_many(
        str(FIXTURES / "qrels.txt"), [str(FIXTURES / f"{s}.run") for s in STEMS], ["AP", *plots.IPREC_SPECS]
    )
    return plots.precision_recall(
        [dataclasses.replace(r, run_name=s) for r, s in zip(results, STEMS, strict=True)]
    )


def synthetic(n_runs: int, n_topics: int, metrics: tuple[str, ...] = ("AP",)) -> list[Result]:
    """``n_runs`` runs with long names and random per-topic scores (seeded)."""
    rng = np.random.default_rng(1)
    bound = tuple(irspec.parse(m) for m in metrics)
    qids = tuple(f"topic-{i:03d}" for i in range(n_topics))
    return [
        Result(
            f"run-{i:02d}-a-rather-long-system-name",
            "x",
            bound,
            qids,
            rng.random((n_topics, len(bound))),
            Options(),
        )
        for i in range(n_runs)
    ]


def _read_trec(path: Path, column: int) -> dict[str, dict[str, str]]:
    """``{query: {doc: the value in ``column``}}`` of a qrels or run file (whitespace-separated)."""
    out: dict[str, dict[str, str]] = {}
    for line in path.read_text().split("\n"):
        if line.strip():
            fields = line.split()
            out.setdefault(fields[0], {})[fields[2]] = fields[column]
    return out


def _interpolated_precision(
    qrels: dict[str, dict[str, str]], run: dict[str, dict[str, str]], level: float
) -> float:
    """trec_eval 10's rule, written out: per query, the best precision at any rank by which
    round(``level`` x R) relevant documents are retrieved (trec_eval 10 rounds the level to a number of
    relevant documents; version 9, and so pytrec_eval, compares the recall itself), 0 when no rank
    does; ranking by score descending, ties by docno descending; the mean over the qrels' queries."""
    total = 0.0
    for q, judged in qrels.items():
        relevant = {d for d, label in judged.items() if int(label) > 0}
        ranking = sorted(run.get(q, {}).items(), key=lambda item: (float(item[1]), item[0]), reverse=True)
        needed = math.floor(level * len(relevant) + 0.5)  # C's lround, for a positive number
        best, found = 0.0, 0
        for rank, (doc, _) in enumerate(ranking, start=1):
            found += doc in relevant
            if relevant and found >= needed:
                best = max(best, found / rank)
        total += best
    return total / len(qrels)


def test_precision_recall_is_the_mean_interpolated_precision_and_never_rises():
    qrels = _read_trec(FIXTURES / "qrels.txt", 3)
    curves = fixture_curves()
    assert list(curves) == STEMS
    for stem in STEMS:
        run = _read_trec(FIXTURES / f"{stem}.run", 4)
        expected = [_interpolated_precision(qrels, run, i / 10) for i in range(11)]
        assert curves[stem] == pytest.approx(expected, abs=1e-12)
        assert all(a >= b for a, b in itertools.pairwise(curves[stem]))  # interpolated: non-increasing
    assert (
        plots.IPREC_SPECS[0] == "IPrec@0.0"
        and plots.IPREC_SPECS[-1] == "IPrec@1.0"
        and len(plots.IPREC_SPECS) == 11
    )


def test_precision_recall_needs_results_evaluated_with_the_iprec_specs():
    with pytest.raises(ValueError, match=r"base was evaluated without IPrec@0\.0, IPrec@0\.1, .*IPrec@1\.0"):
        plots.precision_recall([dataclasses.replace(fixture_results()[0], run_name="base")])


def test_plots_only_draws_it_never_evaluates_or_reads():
    """The report layer is handed results: plots.py imports neither the engine nor the readers."""
    import ast

    tree = ast.parse(Path(plots.__file__).read_text(encoding="utf-8"))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not imported & {
        "irspec.evaluation.evaluate",
        "irspec.evaluation.parts",
        "irspec.evaluation.ranking",
        "irspec.data",
        "irspec.evaluation.inputs",
        "irspec.plan",
    }, imported


def test_render_gives_svg_and_png_of_every_plot_and_is_reproducible():
    results = fixture_results()
    first = plots.render(results, curves=fixture_curves(), baseline="base")
    assert [p.name for p in first] == [
        "pr-curves",
        "differences-nDCG_at_5",
        "distributions-nDCG_at_5",
        "differences-AP",
        "distributions-AP",
    ]
    for p in first:
        assert p.png.startswith(b"\x89PNG\r\n\x1a\n")
        root = ET.fromstring(p.svg)
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
        assert b"<dc:date>" not in p.svg and b"matplotlib.org" not in p.svg  # no date, no creator link
        assert p.title and p.description
    # the same results give the same bytes (the SVG, irspec's own writing: drawn again without the PNGs,
    # which the comparison never read)
    again = plots.render(results, curves=fixture_curves(), baseline="base", formats=("svg",))
    assert [p.svg for p in again] == [p.svg for p in first]
    files = plots.render_files(first)
    assert sorted(files) == sorted(f"{p.name}.{ext}" for p in first for ext in ("png", "svg"))


def test_without_a_baseline_the_differences_are_from_the_first_run_and_one_run_has_none():
    results = fixture_results()
    names = [p[0] for p in plots.figures(results[:1])]
    assert names == ["distributions-nDCG_at_5", "distributions-AP"]
    ((_, _, description, _),) = [f for f in plots.figures(results[:2]) if f[0] == "differences-AP"]
    assert "the first run" in description


def test_svg_only_when_asked():
    (p,) = plots.render(fixture_results()[:1][:1], formats=("svg",))[:1]
    assert p.png is None and p.svg
    with pytest.raises(ValueError, match="without png"):
        plots.render_files([p])
    with pytest.raises(ValueError, match="unknown plot formats: pdf"):
        plots.render(fixture_results(), formats=("pdf",))


def test_differences_pair_topics_by_id():
    a, b = fixture_results()[:2]
    # b without its first three topics, the rest in reverse order
    keep = list(range(len(b.query_ids)))[3:][::-1]
    b = dataclasses.replace(b, query_ids=tuple(b.query_ids[i] for i in keep), values=b.values[keep])
    topics, x, y = plots._aligned(b, a, "AP")
    assert len(topics) == len(a.query_ids) - 3
    for t, xv, yv in zip(topics, x, y, strict=True):
        assert xv == b.column("AP")[b.query_ids.index(t)] and yv == a.column("AP")[a.query_ids.index(t)]


# --------------------------------------------------------------------------------------------------
# Readable with 10 runs


def _boxes(fig, artists):
    renderer = fig.canvas.get_renderer()
    return [a.get_window_extent(renderer) for a in artists if a.get_visible() and a.get_text()]


def _no_overlaps(boxes, what):
    for (i, a), (j, b) in itertools.combinations(enumerate(boxes), 2):
        assert not a.overlaps(b), f"{what}: {i} and {j} overlap"


def _inside(fig, boxes, what):
    frame = fig.bbox
    for box in boxes:
        assert (
            frame.x0 - 1 <= box.x0
            and box.x1 <= frame.x1 + 1
            and frame.y0 - 1 <= box.y0
            and box.y1 <= frame.y1 + 1
        ), what


def _draw(fig):
    with matplotlib.rc_context(plots._RC):
        fig.draw_without_rendering()


def test_pr_curves_legend_of_10_runs_is_readable():
    curves = {
        f"run-{i:02d}-a-rather-long-system-name": sorted(np.random.default_rng(i).random(11), reverse=True)
        for i in range(10)
    }
    with matplotlib.rc_context(plots._RC):
        fig = plots.pr_figure(curves)
    _draw(fig)
    (legend,) = fig.legends
    texts = _boxes(fig, legend.get_texts())
    assert [t.get_text().split(" (")[0] for t in legend.get_texts()] == list(curves)
    _no_overlaps(texts, "legend entries")
    _inside(fig, texts, "legend entries")
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    assert not legend.get_window_extent(renderer).overlaps(
        ax.get_window_extent(renderer)
    )  # beside the curves
    _no_overlaps(_boxes(fig, ax.get_xticklabels()), "recall ticks")
    assert ax.get_xlabel() == "Recall" and ax.get_ylabel() == "Interpolated precision"
    styles = {(line.get_color(), line.get_marker(), line.get_linestyle()) for line in ax.get_lines()}
    assert len(styles) == 10  # every run tells apart


def test_distributions_of_10_runs_are_readable():
    results = synthetic(10, 50)
    with matplotlib.rc_context(plots._RC):
        fig = plots.distributions_figure(results, "AP")
    _draw(fig)
    ax = fig.axes[0]
    labels = ax.get_yticklabels()
    assert [t.get_text() for t in labels] == [r.run_name for r in results]  # run names, first on top
    boxes = _boxes(fig, labels)
    _no_overlaps(boxes, "run names")
    _inside(fig, boxes + _boxes(fig, [ax.title, ax.xaxis.label]), "labels")
    assert ax.get_xlabel() == "AP per topic"


def test_differences_of_10_runs_over_50_topics_are_readable():
    results = synthetic(10, 50)
    with matplotlib.rc_context(plots._RC):
        fig = plots.differences_figure(results, "AP", results[0].run_name)
    _draw(fig)
    assert len(fig.axes) == 9
    everything = []
    for ax in fig.axes:
        ticks = _boxes(fig, ax.get_xticklabels())
        assert len(ticks) == 50  # every topic named under its bar
        _no_overlaps(ticks, "topic labels")
        titles = _boxes(fig, [ax.title, ax.xaxis.label, ax.yaxis.label])
        everything.extend([*titles, ticks[0], ticks[-1]])
        assert ax.get_ylabel() == "Δ AP"
    _no_overlaps(everything, "titles, axis labels and tick labels of the panels")
    _inside(fig, everything, "panel texts")


def test_many_topics_are_not_labelled_one_by_one():
    results = synthetic(2, 300)
    with matplotlib.rc_context(plots._RC):
        fig = plots.differences_figure(results, "AP", results[0].run_name)
    assert fig.axes[0].get_xticklabels() == [] or not any(t.get_text() for t in fig.axes[0].get_xticklabels())
    assert "300 topics" in fig.axes[0].get_xlabel()


# --------------------------------------------------------------------------------------------------
# Light and side-effect free


def _python(code: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": ""},
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_importing_plots_does_not_import_matplotlib():
    assert _python("import sys, irspec.report.plots; print('matplotlib' in sys.modules)") == "False"


def test_rendering_uses_agg_without_pyplot_or_a_global_backend():
    code = f"""
import sys, matplotlib
before = matplotlib.rcParams.copy()  # copy() does not resolve the backend (iterating would)
from irspec.report import plots
from irspec.evaluation.evaluate import evaluate_many
r = evaluate_many({str(FIXTURES / "qrels.txt")!r}, [{str(FIXTURES / "base.run")!r}, {str(FIXTURES / "better.run")!r}], "AP")
plots.render(r)
print('matplotlib.pyplot' in sys.modules, matplotlib.rcParams.copy() == before)
"""
    assert _python(code) == "False True"


# --------------------------------------------------------------------------------------------------
# The ROC curves, AP histograms and confusion matrices: their values, by hand

# q1: relevant a and d, judged non-relevant b, c, e; q2: relevant f, judged non-relevant g.
_TINY_QRELS = "q1 0 a 1\nq1 0 b 0\nq1 0 c 0\nq1 0 d 2\nq1 0 e 0\nq2 0 f 1\nq2 0 g 0\n"
# q1 ranks a, x (unjudged), b, c, d; q2 ranks g, f.
_TINY_RUN = "q1 Q0 a 1 5 r\nq1 Q0 x 2 4 r\nq1 Q0 b 3 3 r\nq1 Q0 c 4 2 r\nq1 Q0 d 5 1 r\nq2 Q0 g 1 2 r\nq2 Q0 f 2 1 r\n"


def _tiny_data(tmp_path, collection_size, k=plots.CONFUSION_K):
    (tmp_path / "qrels.txt").write_text(_TINY_QRELS)
    (tmp_path / "r.txt").write_text(_TINY_RUN)  # the run r, named by its file
    results = evaluate_many(
        str(tmp_path / "qrels.txt"),
        [str(tmp_path / "r.txt")],
        list(plots.figure_specs(collection_size, k)),
        options=Options(collection_size=collection_size),
    )
    return plots.figure_data(results, collection_size, k)


def _roc_by_cutoff(points):
    return dict(zip((0, *plots.ROC_CUTOFFS), points, strict=True))


def test_roc_points_without_a_collection_size_count_judged_nonrelevant_only(tmp_path):
    roc = _roc_by_cutoff(_tiny_data(tmp_path, None).roc["r"])
    # (fall-out, recall) per query, then their means. q1: R = 2, judged non-relevant 3; q2: R = 1, 1.
    # k=1: q1 [a] -> (0/3, 1/2); q2 [g] -> (1/1, 0/1)
    # k=2: q1 [a x] -> (0/3, 1/2) (x is unjudged); q2 [g f] -> (1, 1)
    # k=3: q1 [a x b] -> (1/3, 1/2); k>=5: q1 [a x b c d] -> (2/3, 2/2); q2 stays (1, 1)
    expected = {
        0: (0, 0),
        1: (0.5, 0.25),
        2: (0.5, 0.75),
        3: ((1 / 3 + 1) / 2, 0.75),
        5: ((2 / 3 + 1) / 2, 1.0),
    }
    for k, point in expected.items():
        assert roc[k] == pytest.approx(point, abs=1e-12), k
    assert all(roc[k] == pytest.approx(expected[5]) for k in plots.ROC_CUTOFFS if k >= 5)


def test_roc_points_with_a_collection_size_count_every_nonrelevant_document(tmp_path):
    roc = _roc_by_cutoff(_tiny_data(tmp_path, 20).roc["r"])
    # non-relevant in the collection: q1 20 - 2 = 18, q2 20 - 1 = 19; the unjudged x counts as non-relevant
    # non-relevant in the top k: q1 k=1: 0, k=2: 1 (x), k=3: 2 (x b), k=5: 3 (x b c); q2 k=1: 1 (g), k>=2: 1
    assert roc[1] == pytest.approx(((0 / 18 + 1 / 19) / 2, 0.25), abs=1e-12)
    assert roc[2] == pytest.approx(((1 / 18 + 1 / 19) / 2, 0.75), abs=1e-12)
    assert roc[3] == pytest.approx(((2 / 18 + 1 / 19) / 2, 0.75), abs=1e-12)
    assert roc[1000] == pytest.approx(((3 / 18 + 1 / 19) / 2, 1.0), abs=1e-12)


def test_confusion_matrix_counts_by_hand(tmp_path):
    # top 2: q1 [a x] -> 1 relevant, 1 not, d missed, 20 - 2 - 1 = 17 non-relevant left out;
    #        q2 [g f] -> 1 relevant, 1 not, none missed, 20 - 1 - 1 = 18 left out
    assert _tiny_data(tmp_path, 20, k=2).confusion["r"] == plots.Confusion(2, 2, 2, 2, 1, 35)
    # top 10 (all of each ranking): q1 2 relevant, 3 not, 0 missed, 20 - 2 - 3 = 15; q2 1, 1, 0, 18
    assert _tiny_data(tmp_path, 20).confusion["r"] == plots.Confusion(10, 2, 3, 4, 0, 33)
    # without the collection size, the documents neither relevant nor retrieved are unknown
    assert _tiny_data(tmp_path, None).confusion["r"] == plots.Confusion(10, 2, 3, 4, 0, None)


def test_ap_histogram_values_by_hand(tmp_path):
    # q1: relevant at ranks 1 and 5 -> (1/1 + 2/5) / 2 = 0.7; q2: relevant at rank 2 -> (1/2) / 1 = 0.5
    assert _tiny_data(tmp_path, None).ap["r"] == pytest.approx([0.7, 0.5], abs=1e-12)


def test_roc_histogram_and_confusion_figures_are_drawn_without_pyplot(tmp_path, monkeypatch):
    # another test of this process may have loaded pyplot (torchmetrics' plot examples): set aside for this one
    monkeypatch.delitem(sys.modules, "matplotlib.pyplot", raising=False)
    data = _tiny_data(tmp_path, None)
    drawn = plots.render([], data=data, formats=("svg", "png"))
    assert [p.name for p in drawn] == ["roc-curves", "ap-histograms", "confusion-at-10"]
    for p in drawn:
        assert p.png.startswith(b"\x89PNG") and ET.fromstring(p.svg).tag.endswith("svg")
    assert "judged non-relevant documents only" in drawn[0].description
    assert "unknown without the collection size" in drawn[2].description
    sized = plots.render([], data=_tiny_data(tmp_path, 20), formats=("svg",))
    assert "collection of 20" in sized[0].description and "unknown" not in sized[2].description
    assert "matplotlib.pyplot" not in sys.modules


def test_plots_of_one_name_are_written_to_files_of_their_own():
    # sets of judgments "a/b" and "a_b" make the same file name: the second's figure wrote over the first's
    from irspec.report.plots import Plot, render_files

    plots = [
        Plot("agreement-AP-a_b-zz", f"t{i}", "", f"<svg>{i}</svg>".encode(), b"png%d" % i, None)
        for i in range(3)
    ]
    files = render_files(plots)
    assert sorted(files) == [
        "agreement-AP-a_b-zz-2.png", "agreement-AP-a_b-zz-2.svg", "agreement-AP-a_b-zz-3.png",
        "agreement-AP-a_b-zz-3.svg", "agreement-AP-a_b-zz.png", "agreement-AP-a_b-zz.svg",
    ]  # fmt: skip
    assert files["agreement-AP-a_b-zz-3.svg"] == b"<svg>2</svg>"
