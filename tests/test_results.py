"""Results where researchers work (irspec.evaluation.result_set, irspec.data.frames): several runs as one mapping, data
frames out, notebook display through IPython's own formatters, confidence intervals in every table, and
``--format jsonl`` in ir_measures' record shape.

Expected values come from pytrec_eval (per-query values), scipy (t intervals), ir_measures (JSON lines)
and arithmetic written out here; never from the code under test.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
import pytrec_eval
from scipy import stats as scipy_stats

import irspec
from irspec import MetricDef
from irspec.cli import main

FIXTURES = Path(__file__).parent / "fixtures" / "report"
QRELS = str(FIXTURES / "qrels.txt")
RUNS = {name: str(FIXTURES / f"{name}.run") for name in ("base", "better", "worse")}


def _trec(path: str) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for line in Path(path).read_text().splitlines():
        parts = line.split()
        if len(parts) == 4:  # qrels: qid iter docno label
            out.setdefault(parts[0], {})[parts[2]] = int(parts[3])
        elif len(parts) >= 5:  # run: qid iter docno rank score [runid]
            out.setdefault(parts[0], {})[parts[2]] = float(parts[4])
    return out


def _pytrec(run: str, measures: set[str]) -> dict[str, dict[str, float]]:
    return pytrec_eval.RelevanceEvaluator(_trec(QRELS), measures).evaluate(_trec(run))


def _t_interval(values: list[float]) -> tuple[float, float]:
    """scipy's 95% t interval of the mean of ``values``."""
    n = len(values)
    mean = sum(values) / n
    return scipy_stats.t.interval(0.95, n - 1, loc=mean, scale=scipy_stats.sem(values))


# --------------------------------------------------------------------------------------------------
# Frames out


@pytest.mark.parametrize("backend", ["polars", "pandas"])
def test_long_frame_holds_pytrec_evals_values(backend):
    res = irspec.evaluate(QRELS, RUNS["base"], "AP, P@5")
    frame = res.to_frame(backend=backend)
    rows = frame.to_dicts() if backend == "polars" else frame.to_dict("records")
    assert list(rows[0]) == ["run", "query_id", "metric", "value"]
    expected = _pytrec(RUNS["base"], {"map", "P.5"})
    assert len(rows) == 2 * len(expected)
    for row in rows:
        assert row["run"] == "base"
        key = {"AP": "map", "P@5": "P_5"}[row["metric"]]
        assert row["value"] == pytest.approx(expected[row["query_id"]][key], abs=1e-12)
    # queries in id order, metrics in the order asked, within each query
    assert [r["metric"] for r in rows[:4]] == ["AP", "P@5", "AP", "P@5"]
    assert [r["query_id"] for r in rows[::2]] == sorted(expected)


@pytest.mark.parametrize("backend", ["polars", "pandas"])
def test_wide_frame_is_one_row_per_query_and_a_column_per_metric(backend):
    many = irspec.evaluate(QRELS, {"b": RUNS["base"], "w": RUNS["worse"]}, "AP, P@5")
    frame = many.to_frame(wide=True, backend=backend)
    assert list(frame.columns) == ["run", "query_id", "AP", "P@5"]
    rows = frame.to_dicts() if backend == "polars" else frame.to_dict("records")
    assert [r["run"] for r in rows] == ["b"] * 8 + ["w"] * 8
    for name, path in (("b", RUNS["base"]), ("w", RUNS["worse"])):
        expected = _pytrec(path, {"map", "P.5"})
        for r in (r for r in rows if r["run"] == name):
            assert r["AP"] == pytest.approx(expected[r["query_id"]]["map"], abs=1e-12)
            assert r["P@5"] == pytest.approx(expected[r["query_id"]]["P_5"], abs=1e-12)


def test_text_metrics_and_undefined_values_in_frames():
    # q1 ranks d1 (relevant), d2 (not judged), d3 (relevant): relstring@3 is "1-1"; q2 finds nothing
    # relevant (its one document, d5, is unjudged: relstring "-"), so SL(unfound=skip) is undefined there
    qrels = {"q1": {"d1": 1, "d3": 1}, "q2": {"d9": 1}}
    run = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"d5": 1.0}}
    res = irspec.evaluate(qrels, run, ["relstring@3", "SL(unfound=skip)", "P@2"])
    long = res.to_frame()
    assert long.columns == ["run", "query_id", "metric", "value", "text"]
    by = {(r["query_id"], r["metric"]): r for r in long.to_dicts()}
    assert by[("q1", "relstring@3")]["value"] is None and by[("q1", "relstring@3")]["text"] == "1-1"
    assert by[("q1", "P@2")] == {"run": "run", "query_id": "q1", "metric": "P@2", "value": 0.5, "text": None}
    assert by[("q2", "SL(unfound=skip)")]["value"] is None
    wide = res.to_frame(wide=True)
    assert str(wide.schema["relstring@3"]) == "String" and wide.get_column("relstring@3").to_list() == [
        "1-1",
        "-",
    ]
    assert wide.get_column("P@2").to_list() == [0.5, 0.0]
    # without a text metric there is no text column
    assert irspec.evaluate(qrels, run, "P@2").to_frame().columns == ["run", "query_id", "metric", "value"]


def test_frame_backend_errors_are_clear(monkeypatch):
    res = irspec.evaluate(QRELS, RUNS["base"], "AP")
    with pytest.raises(
        irspec.IrspecError, match="backend must be one of polars, pandas, not 'panda'; did you mean 'pandas'"
    ):
        res.to_frame(backend="panda")
    monkeypatch.setitem(sys.modules, "pandas", None)  # as if pandas were not installed
    with pytest.raises(irspec.IrspecError, match=r"needs pandas: pip install pandas"):
        res.to_frame(backend="pandas")
    with pytest.raises(irspec.IrspecError, match=r"needs pandas"):
        irspec.compare([res, irspec.evaluate(QRELS, RUNS["worse"], "AP")]).to_frame("pandas")


# --------------------------------------------------------------------------------------------------
# Several runs at once


def test_a_mapping_of_runs_gives_a_result_set_named_by_its_keys():
    many = irspec.evaluate(QRELS, {"bm25": RUNS["base"], "dense": RUNS["better"]}, "AP")
    assert isinstance(many, irspec.ResultSet) and list(many) == ["bm25", "dense"] and len(many) == 2
    expected = _pytrec(RUNS["better"], {"map"})
    assert many["dense"].aggregate()["AP"] == pytest.approx(
        sum(v["map"] for v in expected.values()) / 8, abs=1e-12
    )
    assert set(many.aggregate()) == {"bm25", "dense"}
    found = irspec.compare(many, baseline="bm25")
    assert [(c.a, c.b) for c in found] == [("dense", "bm25")]
    with pytest.raises(KeyError):
        many["nope"]


def test_a_list_of_paths_gives_a_result_set_named_by_the_runs():
    many = irspec.evaluate(QRELS, [RUNS["base"], RUNS["worse"]], "P@5")
    assert list(many) == ["base", "worse"]
    # base: P@5 per query from pytrec_eval, averaged by hand
    expected = _pytrec(RUNS["base"], {"P.5"})
    assert many["base"].aggregate()["P@5"] == pytest.approx(sum(v["P_5"] for v in expected.values()) / 8)
    text = str(many)
    assert text.splitlines()[0].split() == ["run", "P@5"] and "worse" in text


def test_pytrec_eval_dicts_stay_one_run_and_named_dict_runs_are_several():
    qrels = {"q1": {"d1": 1}}
    one = irspec.evaluate(qrels, {"q1": {"d1": 1.0, "d2": 0.5}}, "P@1")
    assert isinstance(one, irspec.Result) and one.aggregate() == {"P@1": 1.0}
    several = irspec.evaluate(qrels, {"a": {"q1": {"d1": 1.0}}, "b": {"q1": {"d2": 1.0}}}, "P@1")
    assert several.aggregate() == {"a": {"P@1": 1.0}, "b": {"P@1": 0.0}}
    with pytest.raises(irspec.EvaluationError, match="the list of runs is empty"):
        irspec.evaluate(qrels, [], "P@1")
    with pytest.raises(irspec.EvaluationError, match="run names must be strings, not int"):
        irspec.evaluate(qrels, {1: RUNS["base"]}, "P@1")


def test_evaluate_many_reads_its_runs_as_evaluate_reads_them(tmp_path):
    """``evaluate_many`` takes what ``evaluate`` takes, always giving a list. It used to iterate whatever
    it was given: a mapping's keys were read as paths (``{"a.run": "BM25"}`` evaluated a.run, its name
    dropped), a path's characters as paths, a frame's columns as runs."""
    qrels = {"q1": {"d1": 1}, "q2": {"d3": 1}}
    (tmp_path / "a.run").write_text("q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\nq2 Q0 d9 1 1.0 a\n")
    path = str(tmp_path / "a.run")
    one_dict = {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d9": 1.0}}  # P@1: 1 on q1, 0 on q2

    def names_and_means(runs):
        return [(r.run_name, r.aggregate()["P@1"]) for r in irspec.evaluate_many(qrels, runs, "P@1")]

    assert names_and_means(path) == [("a", 0.5)]  # one path, not its characters
    with open(path) as f:  # an open file is one run, not its lines
        assert names_and_means(f) == [("a", 0.5)]
    assert names_and_means(one_dict) == [("run", 0.5)]  # pytrec_eval's shape, one run
    assert names_and_means({"bm25": path, "dense": {"q1": {"d2": 1.0}}}) == [("bm25", 0.5), ("dense", 0.0)]
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(
        {"query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "d2", "d3"], "score": [2.0, 1.0, 1.0]}
    )
    assert names_and_means(frame) == [("run", 1.0)]  # a frame is one run, not its columns
    # lists, tuples and iterators are several runs, as given
    assert names_and_means([path, path]) == [("a", 0.5), ("a (2)", 0.5)]
    assert names_and_means(iter([one_dict])) == [("run", 0.5)]
    assert irspec.evaluate_many(qrels, [], "P@1") == [] == irspec.evaluate_many(qrels, (), "P@1")
    # a name's value that is no run is an error naming it, not a key read as a path
    with pytest.raises(irspec.InputError, match="BM25: no such file"):
        irspec.evaluate_many(qrels, {path: "BM25"}, "P@1")


def test_evaluate_many_refuses_options_given_both_ways():
    """``options=`` and keyword options together: ``depth=1`` beside ``options=Options()`` was dropped
    silently (the whole ranking evaluated). Either way alone is applied: the run ranks d2 (not relevant)
    above d1, so P@2 over the whole ranking is 1/2 and over a ranking cut at depth 1 is 0/2 = 0."""
    from irspec.evaluation.context import Options

    qrels, run = {"q1": {"d1": 1}}, {"q1": {"d2": 2.0, "d1": 1.0}}
    assert irspec.evaluate_many(qrels, run, "P@2")[0].aggregate() == {"P@2": 0.5}
    assert irspec.evaluate_many(qrels, run, "P@2", depth=1)[0].aggregate() == {"P@2": 0.0}
    assert irspec.evaluate_many(qrels, run, "P@2", options=Options(depth=1))[0].aggregate() == {"P@2": 0.0}
    with pytest.raises(
        irspec.EvaluationError, match=r"options given both as options= and as keywords \(depth=\)"
    ):
        irspec.evaluate_many(qrels, run, "P@2", options=Options(), depth=1)


# --------------------------------------------------------------------------------------------------
# Confidence intervals


def test_mean_ci_is_scipys_t_interval():
    values = [0.1, 0.4, 0.35, 0.8, 0.0, 0.55]
    assert irspec.stats.significance.mean_ci(values) == pytest.approx(_t_interval(values), abs=1e-12)
    assert irspec.stats.significance.mean_ci([0.3, 0.3, 0.3]) == (0.3, 0.3)
    with pytest.raises(irspec.EvaluationError, match="at least 2"):
        irspec.stats.significance.mean_ci([0.5])
    with pytest.raises(irspec.EvaluationError, match="method must be one of"):
        irspec.stats.significance.mean_ci(values, method="z")


def test_bootstrap_mean_ci_is_close_to_scipys_bca():
    values = [0.1, 0.4, 0.35, 0.8, 0.0, 0.55, 0.2, 0.9, 0.45, 0.6]
    ours = irspec.stats.significance.mean_ci(values, method="bootstrap", resamples=20_000, seed=3)
    theirs = scipy_stats.bootstrap(
        (values,),
        lambda x: sum(x) / len(x),
        vectorized=False,
        n_resamples=20_000,
        method="BCa",
        random_state=3,
    )
    assert ours == pytest.approx((theirs.confidence_interval.low, theirs.confidence_interval.high), abs=0.01)


def test_the_terminal_table_shows_t_intervals_with_ci(capsys):
    assert main(["eval", QRELS, RUNS["base"], "-m", "AP", "-m", "num_ret", "--ci"]) == 0
    out = capsys.readouterr().out
    low, high = _t_interval([v["map"] for v in _pytrec(RUNS["base"], {"map"}).values()])
    assert f"0.7913 [{low:.4f}, {high:.4f}]" in out
    assert (
        "[low, high]: the 95% confidence interval of the mean (t distribution over the queries, cut at the bounds of the metric)."
        in out
    )
    row = next(line for line in out.splitlines() if line.startswith("base"))
    assert row.split()[-1] == "80"  # a sum has no interval


def test_intervals_in_markdown_and_latex_and_not_elsewhere(capsys):
    assert main(["eval", QRELS, RUNS["base"], "-m", "P@5", "--ci", "--format", "markdown"]) == 0
    low, high = _t_interval([v["P_5"] for v in _pytrec(RUNS["base"], {"P.5"}).values()])
    assert f"| base | 0.6000 [{low:.4f}, {high:.4f}] |" in capsys.readouterr().out
    assert main(["eval", QRELS, RUNS["base"], "-m", "P@5", "--ci", "bootstrap", "--format", "latex"]) == 0
    assert r"0.6000 {\scriptsize [" in capsys.readouterr().out
    assert main(["eval", QRELS, RUNS["base"], "-m", "P@5", "--ci", "--format", "trec"]) == 2
    err = capsys.readouterr().err
    assert (
        err
        == "irspec: error: --ci shows intervals in the table, latex, markdown formats, not in --format trec\n"
    )


def test_the_table_and_markdown_show_t_intervals_by_default_and_latex_on_request(capsys):
    for fmt, shown in (("table", True), ("markdown", True), ("latex", False)):
        assert main(["eval", QRELS, RUNS["base"], "-m", "AP", "--format", fmt]) == 0
        out = capsys.readouterr().out
        assert (
            "the 95% confidence interval of the mean (t distribution" in out.replace("\\", "")
        ) is shown, fmt
        assert main(["eval", QRELS, RUNS["base"], "-m", "AP", "--format", fmt, "--ci", "none"]) == 0
        assert "confidence interval" not in capsys.readouterr().out


def test_ci_none_is_accepted_with_every_format(capsys):
    assert main(["eval", QRELS, RUNS["base"], "-m", "AP", "--format", "trec", "--ci", "none"]) == 0
    assert capsys.readouterr().out.split()[:2] == ["map", "all"]


# --------------------------------------------------------------------------------------------------
# Notebook display, through IPython's own formatters


def _displayed(obj) -> dict[str, str]:
    formatters = pytest.importorskip("IPython.core.formatters")
    data, _ = formatters.DisplayFormatter().format(obj)
    return data


def test_a_result_displays_its_means_with_t_intervals():
    res = irspec.evaluate(QRELS, RUNS["base"], "AP, num_ret")
    data = _displayed(res)
    low, high = _t_interval([v["map"] for v in _pytrec(RUNS["base"], {"map"}).values()])
    html = data["text/html"]
    assert f'<td>0.7913 <span class="ci">[{low:.4f}, {high:.4f}]</span></td><td>80</td>' in html
    assert (
        "confidence interval of the mean (t distribution over the queries, cut at the bounds of the metric)"
        in html
    )
    assert "<!DOCTYPE" not in html  # a fragment, not a page
    markdown = data["text/markdown"]
    assert f"| base | 0.7913 [{low:.4f}, {high:.4f}] | 80 |" in markdown


def test_a_result_set_and_comparisons_display_as_one_table():
    many = irspec.evaluate(
        QRELS, {"base": RUNS["base"], "better": RUNS["better"], "worse": RUNS["worse"]}, "P@5"
    )
    html = _displayed(many)["text/html"]
    assert html.count("<table") == 1 and all(f'<td class="text">{n}</td>' in html for n in many)
    found = irspec.compare(many, baseline="base")
    data = _displayed(found)
    # the runs' table with marks (better is significantly better than base), then the comparisons
    assert data["text/html"].count("<table") == 2
    assert '<sup class="mark better" title="significantly better than base">†</sup>' in data["text/html"]
    assert "| better | **0.8000**<sup>†</sup> [" in data["text/markdown"]
    assert "| P@5 | better | base |" in data["text/markdown"]


def test_bootstrap_intervals_on_request_and_warnings_shown():
    res = irspec.evaluate(
        {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}, {"q1": {"d1": 1.0}, "q2": {"d9": 1.0}}, "P@1"
    )
    shown = _displayed(res.show(intervals="bootstrap"))
    assert "BCa bootstrap over the queries, 10000 resamples, seed 42" in shown["text/html"]
    # q3 is missing from the run: the warning is in both forms, above the table
    assert "1 of the 3 queries of the qrels is missing from the run" in shown["text/html"]
    assert shown["text/markdown"].startswith("- warning: ")
    with pytest.raises(irspec.EvaluationError, match="intervals must be one of t, bootstrap or None"):
        res.show(intervals="z")


def test_a_small_notebook_runs_and_renders(tmp_path):
    # a real notebook kernel when nbclient is there; else the same cells through IPython's shell
    cells = [
        "import irspec",
        f"res = irspec.evaluate({QRELS!r}, {RUNS['base']!r}, 'AP')",
        "res",
    ]
    shell_module = pytest.importorskip("IPython.core.interactiveshell")
    shell = shell_module.InteractiveShell.instance()
    try:
        shown: list[dict] = []
        shell.display_pub.publish = lambda data, metadata=None, **kw: shown.append(data)
        for cell in cells:
            result = shell.run_cell(cell)
            assert result.success, result.error_in_exec
        data, _ = shell.display_formatter.format(result.result)
        assert "text/html" in data and '<span class="ci">[' in data["text/html"]
    finally:
        shell_module.InteractiveShell.clear_instance()


# --------------------------------------------------------------------------------------------------
# JSON lines


def _records(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def test_jsonl_has_ir_measures_record_shape(capsys):
    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures.__main__ import main_cli

    for flags in ([], ["-q"]):
        assert main(["eval", QRELS, RUNS["base"], "-m", "AP nDCG@10 P@5", "--format", "jsonl", *flags]) == 0
        ours = _records(capsys.readouterr().out)
        argv = sys.argv
        sys.argv = ["ir_measures", QRELS, RUNS["base"], "AP nDCG@10 P@5", "-o", "jsonl", *flags]
        try:
            main_cli()
        finally:
            sys.argv = argv
        theirs = _records(capsys.readouterr().out)
        assert ir_measures is not None and [list(r) for r in ours] == [list(r) for r in theirs]

        def key(r):
            return (r.get("query_id", ""), r["measure"])

        assert sorted(map(key, ours)) == sorted(map(key, theirs))
        by = {key(r): r["value"] for r in theirs}
        for r in ours:
            assert r["value"] == pytest.approx(by[key(r)], abs=1e-12)


def test_jsonl_with_several_runs_and_text_metrics(capsys):
    assert (
        main(
            [
                "eval",
                QRELS,
                RUNS["base"],
                RUNS["worse"],
                "-m",
                "P@5",
                "-m",
                "relstring@2",
                "-q",
                "--format",
                "jsonl",
            ]
        )
        == 0
    )
    records = _records(capsys.readouterr().out)
    assert {r["run"] for r in records} == {"base", "worse"} and all(next(iter(r)) == "run" for r in records)
    text = [r for r in records if r["measure"] == "relstring@2"]
    assert len(text) == 16 and all(isinstance(r["value"], str) for r in text)  # per query, no summary
    summary = [r for r in records if r["query_id"] == "all"]
    assert [(r["run"], r["measure"]) for r in summary] == [("base", "P@5"), ("worse", "P@5")]
    assert summary[0]["value"] == pytest.approx(
        sum(v["P_5"] for v in _pytrec(RUNS["base"], {"P.5"}).values()) / 8
    )


# --------------------------------------------------------------------------------------------------
# A plugin's metric appears everywhere with no extra work


class _Half:
    """A plugin metric: 1 for a query whose first document is relevant, 0.5 otherwise."""

    @irspec.hookimpl
    def irspec_register_metrics(self, register):
        register(MetricDef("Half", "1 if the top document is relevant, else 0.5", per_query=_half))


def _half(query, metric) -> float:
    return 1.0 if query.labels and (query.labels[0] or 0) >= 1 else 0.5


def test_a_plugin_metric_appears_in_frames_display_and_jsonl(irspec_plugin, capsys):
    irspec_plugin(_Half())
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}
    run = {"q1": {"d1": 1.0}, "q2": {"d9": 1.0}, "q3": {"d3": 1.0}}
    many = irspec.evaluate(
        qrels, {"a": run, "b": {"q1": {"d9": 1.0}, "q2": {"d9": 1.0}, "q3": {"d9": 1.0}}}, "Half"
    )
    assert many.to_frame(wide=True).get_column("Half").to_list() == [1.0, 0.5, 1.0, 0.5, 0.5, 0.5]
    # mean of a: (1 + 0.5 + 1) / 3; its t interval from scipy
    low, high = _t_interval([1.0, 0.5, 1.0])
    assert f"0.8333 [{low:.4f}, {high:.4f}]" in _displayed(many["a"])["text/markdown"]
    assert math.isclose(many["a"].aggregate()["Half"], 2.5 / 3)
    html = _displayed(irspec.compare(many, baseline="b"))["text/html"]
    assert "<th>Half</th>" in html and '<td class="text">Half</td>' in html


class _Bounded:
    """Two plugin metrics with the same values (1 when the top document is relevant, else 0.5), one
    declaring that its values lie in [0, 1] (``MetricDef.bounds``), one declaring nothing."""

    @irspec.hookimpl
    def irspec_register_metrics(self, register):
        register(MetricDef("HalfB", "as Half, bounded", per_query=_half, bounds=(0.0, 1.0)))
        register(MetricDef("HalfU", "as Half, unbounded", per_query=_half))


def test_a_t_interval_is_cut_at_the_metrics_bounds(irspec_plugin):
    """Three queries scoring 1, 1, 0.5: scipy's t interval of the mean passes 1; a metric bounded by
    [0, 1] shows it cut at 1 (the true mean cannot exceed 1, so the cut keeps the coverage), an
    unbounded one shows it whole."""
    irspec_plugin(_Bounded())
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}
    run = {"q1": {"d1": 1.0}, "q2": {"d9": 1.0}, "q3": {"d3": 1.0}}
    low, high = _t_interval([1.0, 0.5, 1.0])
    assert high > 1.0  # the case the cut is for
    shown = _displayed(irspec.evaluate(qrels, run, "HalfB, HalfU"))["text/markdown"]
    assert f"0.8333 [{low:.4f}, 1.0000]" in shown
    assert f"0.8333 [{low:.4f}, {high:.4f}]" in shown


def test_a_table_without_any_interval_has_no_interval_legend(tmp_path, capsys):
    """One query: no mean has an interval, so no legend says there are some."""
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "r.txt").write_text("q1 Q0 d1 1 1.0 r\n")
    for fmt in ("table", "markdown"):
        assert (
            main(["eval", str(tmp_path / "q.txt"), str(tmp_path / "r.txt"), "-m", "P@1", "--format", fmt])
            == 0
        )
        assert "confidence interval" not in capsys.readouterr().out


def test_print_and_repr_of_one_result_are_short(capsys):
    """print(res) in a plain REPL is the table a ResultSet prints (one row: the run and its means, by
    pytrec_eval); its repr says the run, the metrics and how many queries, never every query id."""
    res = irspec.evaluate(QRELS, RUNS["base"], "AP, P@5")
    ap = _pytrec(RUNS["base"], {"map"})
    p5 = _pytrec(RUNS["base"], {"P_5"})
    mean_ap, mean_p5 = (sum(v[k] for v in d.values()) / len(d) for d, k in ((ap, "map"), (p5, "P_5")))
    print(res)
    out = capsys.readouterr().out
    assert out == str(irspec.ResultSet((res,))) + "\n"
    header, rule, row = out.splitlines()[:3]
    assert header.split() == ["run", "AP", "P@5"] and set(rule) <= {"-", " "}
    assert row.split() == ["base", f"{mean_ap:.4f}", f"{mean_p5:.4f}"]
    assert repr(res) == f"Result('base', metrics=[AP, P@5], queries={len(ap)})"
    assert not any(q in repr(res) for q in ap)
    system = irspec.evaluate(QRELS, {"both": [RUNS["base"], RUNS["better"]]}, "AP")["both"]
    assert repr(system) == f"SystemResult('both', metrics=[AP], queries={len(ap)})"


def test_a_mean_of_no_defined_value_is_undefined_in_every_format(tmp_path, capsys):
    """SL(unfound=skip) leaves a query that finds no relevant document out of the mean; run A finds none
    on either query, so its mean is undefined (not 0.0, which would make it the best run of a metric
    where lower is better). By hand: B finds d1 at ranks 2 and 1 (SL 1.5), C at 1 and 1 (SL 1.0, the
    best); P@5 of A is defined (0)."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d1 1\n")
    lines = {
        "A": ["q1 Q0 x1 1 2 A", "q1 Q0 x2 2 1 A", "q2 Q0 x1 1 2 A"],
        "B": ["q1 Q0 x1 1 2 B", "q1 Q0 d1 2 1 B", "q2 Q0 d1 1 2 B"],
        "C": ["q1 Q0 d1 1 2 C", "q2 Q0 d1 1 2 C"],
    }
    runs = []
    for name, rows in lines.items():
        (tmp_path / f"{name}.run").write_text("".join(r + "\n" for r in rows))
        runs.append(str(tmp_path / f"{name}.run"))
    spec = "SL(unfound=skip), P@5"
    with pytest.warns(irspec.IrspecWarning):  # A's top 10 is unjudged
        res = irspec.evaluate(str(qrels), runs, spec)
    assert math.isnan(res["A"].aggregate()["SL(unfound=skip)"]) and res["A"].aggregate()["P@5"] == 0.0
    assert res["B"].aggregate()["SL(unfound=skip)"] == 1.5 and res["C"].aggregate()["SL(unfound=skip)"] == 1.0

    def out(fmt: str) -> str:
        assert main(["eval", "-m", spec, "-f", fmt, "--ci", "none", str(qrels), *runs]) == 0
        return capsys.readouterr().out

    table = {line.split()[0]: line.split()[1:] for line in out("table").splitlines()[2:5]}
    assert table == {"A": ["-", "0.0000"], "B": ["1.5000", "0.2000"], "C": ["1.0000", "0.2000"]}
    (a, _, _) = json.loads(out("json"))["runs"]
    assert a["aggregate"] == {"SL(unfound=skip)": None, "P@5": 0.0}
    records = [json.loads(line) for line in out("jsonl").splitlines()]
    assert {"run": "A", "measure": "SL(unfound=skip)", "value": None} in records
    assert "A,all,SL(unfound=skip),\n" in out("csv") and "A\tall\tSL(unfound=skip)\t\n" in out("tsv")
    assert "SL(unfound=skip)      \tall\tnan\n" in out("trec")  # as a NaN prints in trec_eval's layout
    markdown = out("markdown")
    assert "| A | - | 0.0000 |" in markdown and "| C | **1.0000** | **0.2000** |" in markdown
    assert "A & -- & 0.0000" in out("latex")
    with pytest.raises(
        irspec.EvaluationError, match=r"A: undefined on every query, so its mean is undefined"
    ):
        irspec.compare(res, baseline="C")
