"""The report's figures as irspec writes them in SVG (irspec.report.charts, irspec.report.svg): the values
drawn, read back from each chart's marks, are the results' own values; the marks sit where their values
say; every text is escaped; the charts are light to make and to import.

Expected values come from the results (``Result.column``, ``aggregate``) and from arithmetic written
here (quartiles by numpy's percentile, histogram counts by counting), never from irspec.report.figures.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from irspec.plan import load_plan, run_plan
from irspec.report import charts, figures, plots, svg

ROOT = Path(__file__).resolve().parents[1]
NS = {"s": "http://www.w3.org/2000/svg"}
DEMO = ROOT / "specs" / "demo"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo plan's runs (4 runs, 5 metrics, 50 queries) with the figures' own evaluation."""
    folder = tmp_path_factory.mktemp("demo")
    plan = folder / "demo.yaml"
    plan.write_text(
        (ROOT / "specs" / "demo.yaml")
        .read_text(encoding="utf-8")
        .replace("demo/", f"{DEMO.as_posix()}/")
        .split("output:")[0]
        + "output:\n  - {format: html, path: report.html}\n",
        encoding="utf-8",
    )
    return run_plan(load_plan(plan))


def _drawn(report, anchor=None) -> dict[str, ET.Element]:
    found = figures.report_figures(
        list(report.results), curves=report.curves, data=report.figure_data, baseline="bm25"
    )
    return {f.name: ET.fromstring(charts.chart(f, anchor)) for f in found}


def _marks(root: ET.Element, attribute: str) -> list[ET.Element]:
    return [e for e in root.iter() if f"data-{attribute}" in e.attrib]


def _f(e: ET.Element, name: str) -> float:
    return float(e.attrib[f"data-{name}"])


def test_every_figure_of_the_matplotlib_report_has_its_svg(demo):
    drawn = _drawn(demo)
    metrics = ["nDCG_at_10", "AP", "P_at_10", "Bpref_nonrel_10+R", "Rprec_recall_0.3"]
    assert list(drawn) == [
        "pr-curves",
        "roc-curves",
        "ap-histograms",
        "confusion-at-10",
        *[f"{kind}-{m}" for m in metrics for kind in ("differences", "distributions")],
    ]
    for name, root in drawn.items():
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
        # an accessible name and description, and hover text on every data mark
        assert root.find("s:title", NS).text and root.find("s:desc", NS).text
        title_id, desc_id = root.attrib["aria-labelledby"].split()
        assert (title_id, desc_id) == (
            root.find("s:title", NS).attrib["id"],
            root.find("s:desc", NS).attrib["id"],
        )
        marks = [
            e
            for e in root.iter()
            if any(k.startswith("data-") and k not in ("data-series", "data-run") for k in e.attrib)
            and e.tag != root.tag
        ]
        marks = [e for e in marks if not e.tag.endswith("}g")]
        assert marks, name
        for e in marks:
            title = e.find("s:title", NS)
            assert title is not None and title.text, (name, e.attrib)


def test_curves_are_the_runs_mean_values(demo):
    import irspec

    drawn = _drawn(demo)
    by_run = {r.run_name: r.aggregate() for r in demo.results}
    evaluated = {r.run_name: r for r in demo.results}
    assert set(by_run) == {"bm25", "dense", "hybrid", "random"}
    points = _marks(drawn["pr-curves"], "y")
    assert len(points) == 4 * 11
    figures_eval = {r.run_name: r for r in _figures_evaluation(demo)}
    for p in points:
        level = _f(p, "x")
        spec = str(irspec.parse(f"IPrec@{level:.1f}"))
        assert _f(p, "y") == figures_eval[p.attrib["data-run"]].aggregate()[spec]
    roc = _marks(drawn["roc-curves"], "cutoff")
    assert len(roc) == 4 * (1 + len(figures.ROC_CUTOFFS))
    for p in roc:
        k = int(p.attrib["data-cutoff"])
        agg = figures_eval[p.attrib["data-run"]].aggregate()
        expected = (0.0, 0.0) if k == 0 else (agg[f"Fallout(judged=true)@{k}"], agg[f"R@{k}"])
        assert (_f(p, "x"), _f(p, "y")) == expected
    assert evaluated  # the tables' results are the plan's metrics only


def _figures_evaluation(report):
    """The runs evaluated on the figures' metrics, as the plan did (irspec.evaluate, independently)."""
    import irspec

    runs = {r.run_name: str(DEMO / "runs" / f"{r.run_name}.run") for r in report.results}
    found = irspec.evaluate(
        str(DEMO / "qrels.txt"),
        runs,
        list(figures.figure_metrics(None)),
        relevance_level=1,
        missing_queries="zero",
    )
    return list(found.values())


def test_histograms_count_each_runs_ap_per_tenth(demo):
    root = _drawn(demo)["ap-histograms"]
    bars = _marks(root, "count")
    ap = {r.run_name: r.column("AP") for r in _figures_evaluation(demo)}
    assert len(bars) == 4 * 10
    for bar in bars:
        i, values = int(bar.attrib["data-bin"]), ap[bar.attrib["data-run"]]
        # counted here: [i/10, (i+1)/10), the last tenth closed
        expected = sum(1 for v in values if i / 10 <= v < (i + 1) / 10 or (i == 9 and v == 1.0))
        assert int(bar.attrib["data-count"]) == expected


def test_confusion_cells_are_the_counts(demo):
    cells = _marks(_drawn(demo)["confusion-at-10"], "value")
    assert len(cells) == 4 * 4
    runs = {r.run_name: r for r in _figures_evaluation(demo)}
    for cell in cells:
        res = runs[cell.attrib["data-run"]]
        retrieved_relevant = round(float(np.sum(res.column("P@10") * 10)))
        relevant = int(np.sum(res.column("NumRel")))
        retrieved = int(np.sum(np.minimum(res.column("NumRet"), 10)))
        expected = {
            (0, 0): retrieved_relevant,
            (0, 1): retrieved - retrieved_relevant,
            (1, 0): relevant - retrieved_relevant,
            (1, 1): "",  # unknown without the collection size
        }[int(cell.attrib["data-row"]), int(cell.attrib["data-col"])]
        assert cell.attrib["data-value"] == str(expected)


def test_differences_are_each_topics_values_sorted_and_link_to_its_row(demo):
    drawn = _drawn(demo, anchor=lambda q: f"#row-{q}")
    runs = {r.run_name: r for r in demo.results}
    base = runs["bm25"]
    for metric in ("nDCG@10", "AP", "P@10"):
        root = drawn[f"differences-{figures.slug(metric)}"]
        bars = _marks(root, "v")
        assert len(bars) == 3 * 50
        for run in ("dense", "hybrid", "random"):
            mine = [b for b in bars if _ancestor_run(root, b) == run]
            assert len(mine) == 50
            diffs = [_f(b, "v") for b in mine]
            assert diffs == sorted(diffs, reverse=True)
            for b in mine:
                q = b.attrib["data-q"]
                a = float(runs[run].column(metric)[runs[run].query_ids.index(q)])
                bv = float(base.column(metric)[base.query_ids.index(q)])
                assert (_f(b, "a"), _f(b, "b"), _f(b, "v")) == (a, bv, a - bv)
                assert b.find("s:title", NS).text.startswith(f"{q}: {run} ")
            # drawn to one scale: each bar's height is its difference's size (to the tenth of a pixel)
            tallest = max(mine, key=lambda b: abs(_f(b, "v")))
            scale = float(tallest.attrib["height"]) / abs(_f(tallest, "v"))
            for b in mine:
                if _f(b, "v"):
                    assert float(b.attrib["height"]) == pytest.approx(abs(_f(b, "v")) * scale, abs=0.11)
        links = list(root.iter("{http://www.w3.org/2000/svg}a"))
        assert len(links) == 150 and all(a.attrib["href"] == f"#row-{a[0].attrib['data-q']}" for a in links)


def _ancestor_run(root: ET.Element, mark: ET.Element) -> str:
    for group in root.iter("{http://www.w3.org/2000/svg}g"):
        if "data-run" in group.attrib and any(e is mark for e in group.iter()):
            return group.attrib["data-run"]
    raise AssertionError("a bar outside a run's panel")


def test_distributions_are_each_topics_value_and_tukeys_box(demo):
    drawn = _drawn(demo)
    for res in demo.results:
        for metric in ("nDCG@10", "Rprec(recall=0.3)"):
            root = drawn[f"distributions-{figures.slug(metric)}"]
            values = res.column(metric)
            (box,) = [b for b in _marks(root, "q1") if b.attrib["data-run"] == res.run_name]
            q1, median, q3 = np.percentile(values, [25, 50, 75])
            iqr = q3 - q1
            inside = values[(values >= q1 - 1.5 * iqr) & (values <= q3 + 1.5 * iqr)]
            assert [_f(box, k) for k in ("q1", "median", "q3", "low", "high")] == [
                q1,
                median,
                q3,
                inside.min(),
                inside.max(),
            ]
            (mean,) = [m for m in _marks(root, "mean") if m.attrib["data-run"] == res.run_name]
            assert _f(mean, "mean") == pytest.approx(float(np.mean(values)), abs=1e-15)
    dots = _marks(drawn["distributions-AP"], "q")
    assert len(dots) == 4 * 50
    shown = sorted((d.attrib["data-q"], _f(d, "v")) for d in dots)
    expected = sorted(
        (q, float(v)) for r in demo.results for q, v in zip(r.query_ids, r.column("AP"), strict=True)
    )
    assert shown == expected


def test_texts_are_escaped_and_the_file_is_well_formed(demo):
    odd = '<script>alert(1)</script> & "q"'
    results = [dataclasses.replace(demo.results[0], run_name=odd), *demo.results[1:2]]
    drawn = plots.render(results, formats=("svg",), baseline=odd)
    for plot in drawn:
        text = plot.svg.decode("utf-8")
        assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<svg ')
        assert "<script" not in text
        root = ET.fromstring(plot.svg)
        assert any(odd in "".join(e.itertext()) for e in root.iter())  # shown as written


def test_same_results_same_bytes_and_no_matplotlib(demo, monkeypatch):
    code = "import sys, time\nfrom irspec.report import charts, figures\nprint('matplotlib' in sys.modules, 'numpy' in sys.modules)"
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert proc.stdout.split() == ["False", "True"], proc.stderr  # figures needs numpy; no drawing library
    # another test of this process may have loaded pyplot (torchmetrics' plot examples): set aside for this one
    monkeypatch.delitem(sys.modules, "matplotlib.pyplot", raising=False)
    first = plots.render(list(demo.results), curves=demo.curves, data=demo.figure_data, formats=("svg",))
    again = plots.render(list(demo.results), curves=demo.curves, data=demo.figure_data, formats=("svg",))
    assert [p.svg for p in first] == [p.svg for p in again]
    assert "matplotlib.pyplot" not in sys.modules


def test_fourteen_figures_in_well_under_a_second(demo):
    found = figures.report_figures(
        list(demo.results), curves=demo.curves, data=demo.figure_data, baseline="bm25"
    )
    start = time.perf_counter()
    for f in found:
        charts.chart(f, lambda q: "#" + q)
    assert time.perf_counter() - start < 0.5  # about 30 ms on a quiet 2-core machine; matplotlib took 3-4 s


def test_thousands_of_topics_are_an_outline_and_a_path_not_thousands_of_marks():
    import irspec
    from irspec.evaluation.context import Options
    from irspec.evaluation.result import Result

    rng = np.random.default_rng(3)
    qids = tuple(f"t{i:04d}" for i in range(2000))
    bound = (irspec.parse("AP"),)
    results = [Result(name, "x", bound, qids, rng.random((2000, 1)), Options()) for name in ("a", "b")]
    (diff,) = [f for f in figures.report_figures(results, baseline="a") if f.kind == "differences"]
    text = charts.chart(diff, lambda q: "#" + q)
    assert len(text) < 40_000 and "<a " not in text and "2000 topics, sorted by difference" in text
    assert charts.MAX_BARS < 2000
    # and the box plots' dots one path per run, a round dot per topic
    (dots,) = [f for f in figures.report_figures(results, baseline="a") if f.kind == "distributions"]
    root = ET.fromstring(charts.chart(dots, lambda q: "#" + q))
    paths = [
        p for p in root.iter("{http://www.w3.org/2000/svg}path") if p.attrib.get("stroke-linecap") == "round"
    ]
    assert [p.attrib["d"].count("h0") for p in paths] == [2000, 2000]
    assert len(charts.chart(dots)) < 60_000 and not list(root.iter("{http://www.w3.org/2000/svg}a"))


def test_ticks_are_round_and_cover_the_range():
    assert svg.ticks(0, 1) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert (
        svg.ticks(-0.93, 0.61, most=6) == [-0.5 * 2, -0.5, 0.0, 0.5]
        or svg.ticks(-0.93, 0.61, most=6)[0] >= -0.93
    )
    for low, high in ((0, 0.31), (-1.05, 1.05), (3, 4711), (0.001, 0.0042)):
        found = svg.ticks(low, high)
        assert 2 <= len(found) <= 7 and all(low - 1e-12 <= v <= high + 1e-12 for v in found)
        steps = {round(b - a, 12) for a, b in itertools.pairwise(found)}
        assert len(steps) == 1
        mantissa = next(iter(steps)) / 10 ** math.floor(math.log10(next(iter(steps))))
        assert round(mantissa, 9) in (1, 2, 2.5, 5)
    assert [svg.tick_text(v, [0, 0.25, 0.5]) for v in (0, 0.25, 0.5)] == ["0.00", "0.25", "0.50"]
    assert svg.tick_text(-0.0, [-0.5, 0.0, 0.5]) == "0.0"
    assert svg.text_width("iii", 10) < svg.text_width("WWW", 10)


def _svg_of(figure) -> ET.Element:
    return ET.fromstring(charts.chart(figure))


def test_power_agreement_and_reproduction_charts_draw_their_values():
    import warnings

    import irspec

    runs = {n: str(DEMO / "runs" / f"{n}.run") for n in ("bm25", "dense", "hybrid", "random")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)
        results = irspec.evaluate(str(DEMO / "qrels.txt"), runs, "nDCG@10, AP")
        found = irspec.power(results, delta=0.05, baseline="bm25")
        judged = irspec.agreement(
            {"human": str(DEMO / "qrels.txt"), "llm": str(DEMO / "qrels.llm.txt")}, runs, "P@10, AP"
        )
        rep = irspec.reproduce(
            DEMO / "qrels.txt",
            original=(runs["bm25"], runs["dense"]),
            reproduced=(runs["hybrid"], runs["random"]),
            metrics="nDCG@10, AP",
        )
    # power: every curve's points, each (topics, power) as the analysis gives it
    curves = found.curves()
    (power,) = figures.power_figures(curves, found.power)
    points = _marks(_svg_of(power), "y")
    assert sorted((_f(p, "x"), _f(p, "y")) for p in points) == sorted(
        (float(t), float(v)) for c in curves for t, v in zip(c.topics, c.power, strict=True)
    )
    # agreement: each run's mean under one set (x) and the other (y), as the agreement's means say
    means = {(s, run, m): v for s, run, m, v in judged.means}
    scatters = figures.agreement_figures(judged)
    assert [f.name for f in scatters] == ["agreement-P_at_10-human-llm", "agreement-AP-human-llm"]
    for figure, metric in zip(scatters, ("P@10", "AP"), strict=True):
        drawn = {p.attrib["data-run"]: (_f(p, "x"), _f(p, "y")) for p in _marks(_svg_of(figure), "y")}
        assert drawn == {r: (means["human", r, metric], means["llm", r, metric]) for r in runs}
    # a reproduction: per-topic KTU and RBO of both pairs, then ER against delta RI per metric
    order, effects = figures.reproduction_figures(rep)
    marks = _marks(_svg_of(order), "measure")
    for pair in rep.pairs:
        for measure, values in (("KTU", pair.ktu), ("RBO", pair.rbo)):
            drawn = sorted(
                (m.attrib["data-q"], _f(m, "v"))
                for m in marks
                if m.attrib["data-measure"] == measure and pair.role in m.find("s:title", NS).text
            )
            expected = sorted(
                (q, float(v)) for q, v in zip(pair.query_ids, values, strict=True) if math.isfinite(v)
            )
            assert drawn == expected
    drawn = {p.attrib["data-metric"]: (_f(p, "x"), _f(p, "y")) for p in _marks(_svg_of(effects), "metric")}
    assert drawn == {m: (float(rep.delta_ri[m]), float(rep.er[m])) for m in ("nDCG@10", "AP")}


def test_differences_count_and_colour_wins_in_the_metrics_direction():
    """Search length is better lower: a run lower than the baseline on three topics and higher on one is
    better on three, and those bars are green (the title said 1 better, 3 worse)."""
    import irspec
    from irspec.evaluation.context import Options
    from irspec.evaluation.result import Result

    qids = ("t1", "t2", "t3", "t4", "t5")
    bound = (irspec.parse("SL"), irspec.parse("P@10"))
    a = np.array([[2.0] * 2] * 5)
    b = np.array([[1.0] * 2, [1.0] * 2, [1.0] * 2, [9.0] * 2, [2.0] * 2])
    results = [Result("a", "x", bound, qids, a, Options()), Result("b", "x", bound, qids, b, Options())]
    found = {f.args[1]: f for f in figures.report_figures(results, baseline="a") if f.kind == "differences"}
    # b - a is -1 on t1-t3 (b lower: better in SL, worse in P@10), +7 on t4, 0 on t5
    expected = {
        "SL": ("3 better, 1 tied, 1 worse", charts.GOOD),
        "P@10": ("1 better, 1 tied, 3 worse", charts.BAD),
    }
    for metric, (words, colour) in expected.items():
        root = ET.fromstring(charts.chart(found[metric], lambda q: "#" + q))
        assert words in "".join(root.itertext()), metric
        (bar,) = [m for m in _marks(root, "v") if m.attrib["data-q"] == "t1"]
        assert bar.attrib["fill"] == colour, metric
