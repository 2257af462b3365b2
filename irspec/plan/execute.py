"""Running a plan: evaluate its runs (the qrels read once), compare them, render and write its outputs.

>>> report = run_plan(load_plan("specs/demo.yaml"))      # doctest: +SKIP
>>> write_outputs(report)                                # doctest: +SKIP

The comparisons are the compare step's (:func:`irspec.comparisons.compare_results` with the plan's
:class:`~irspec.comparison.Compare` settings); the formatting is the report layer's (:mod:`irspec.report`,
:mod:`irspec.plots`); this module picks what each output gets. Outputs are computed in full before any
file is touched, then written all or nothing (:func:`irspec.report.write_all_atomic`), so a failed plan
leaves no partial output behind.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from irspec import plots
from irspec import report as fmt
from irspec.comparison import Comparison
from irspec.comparisons import compare_results
from irspec.data import read_qrels
from irspec.engine import Result, collect_warnings, distinct_names, evaluate_many
from irspec.errors import IrspecError
from irspec.inputs import evaluate_input
from irspec.plan.model import Output, Plan
from irspec.progress import Progress

__all__ = ["PlanReport", "run_plan", "render_outputs", "write_outputs"]


@dataclass(frozen=True)
class PlanReport:
    """What :func:`run_plan` produces: the plan, one :class:`~irspec.engine.Result` per run (named as in
    the plan), the comparisons, and notes worth telling the user (queries left out of comparisons).
    ``inputs`` holds the results of the plan's other inputs (its ``log``): their own metrics, one row per
    item of the input, reported after the runs and never compared."""

    plan: Plan
    results: tuple[Result, ...]
    comparisons: tuple[Comparison, ...] = ()
    notes: tuple[str, ...] = ()
    inputs: tuple[Result, ...] = ()
    curves: dict[str, list[float]] | None = None
    """The runs' 11-point precision-recall curves (:func:`irspec.plots.precision_recall`), evaluated
    beside the plan's metrics when an output draws plots; ``None`` otherwise."""
    figure_data: plots.FigureData | None = None
    """The ROC points, AP values and confusion matrices of the other plots
    (:func:`irspec.plots.figure_data`), evaluated with the curves; ``None`` when nothing is drawn."""

    @property
    def warnings(self) -> tuple[str, ...]:
        """The evaluation's warnings, each once (for example qrels queries missing from a run)."""
        return tuple(collect_warnings((*self.results, *self.inputs)))


def run_plan(plan: Plan) -> PlanReport:
    """Evaluate every run of ``plan`` (the qrels read once) and make the comparisons it asks for."""
    results = []
    curves = data = None
    if plan.runs:
        run_metrics = [m for m in plan.metrics if m.definition.needs == "run"]
        # the plots' values (precision-recall and ROC curves, AP, the confusion matrices' counts) come
        # from the same pass over each run
        drawn = any(o.format in ("html", "plots") for o in plan.outputs)
        size = plan.options.collection_size
        extra = [*plots.IPREC_SPECS, *plots.figure_specs(size)] if drawn else []
        results = _evaluate_runs(plan, run_metrics + extra)
        # The plan names the runs; a runid inside the file does not. load_plan rejects two runs of one
        # name; a Plan built in Python is not checked, so its names are made distinct here as well.
        results = distinct_names([dataclasses.replace(res, run_name=r.name) for res, r in zip(results, plan.runs)])
        if drawn:
            curves = plots.precision_recall(results)
            data = plots.figure_data(results, size)
            k = len(run_metrics)
            results = [
                dataclasses.replace(res, metrics=res.metrics[:k], values=res.values[:, :k].copy(), _aggregate={})
                for res in results
            ]
    comparisons: list[Comparison] = []
    notes: list[str] = []
    if plan.compare is not None:
        comparisons, notes = compare_results(results, plan.compare)
    inputs = []
    if plan.log is not None:  # read by whichever plugin registers the "log" input reader
        log_metrics = [m for m in plan.metrics if m.definition.needs == "log"]
        inputs.append(_evaluate_log(plan, log_metrics))
    return PlanReport(plan, tuple(results), tuple(comparisons), tuple(notes), tuple(inputs), curves, data)


# The outputs that show a row per item of an input (a log's query issues), or need them (intervals).
_ROW_FORMATS = ("csv", "tsv", "trec", "parquet", "jsonl")


def _evaluate_log(plan: Plan, metrics: list[Any]) -> Result:
    """The plan's log evaluated by its reader: with an A/B test of its arms when the plan has ``ab:``,
    and streamed in bounded memory (aggregates only) unless an output shows its per-query rows."""
    rows = any(o.per_query or o.intervals or o.format in _ROW_FORMATS for o in plan.outputs)
    options: dict[str, Any] = {"memory": plan.memory} if rows and plan.memory is not None else {}
    if getattr(plan, "ab", None):
        options["ab"] = plan.ab
    return evaluate_input(str(plan.log), metrics, kind="log", options=options or None, per_query=rows)


def _evaluate_runs(plan: Plan, metrics: list[Any]) -> list[Any]:
    """Every run of ``plan`` evaluated, the qrels read once; progress on a terminal, run by run."""
    if plan.engine is not None:
        return _evaluate_on_spark(plan, metrics)
    with Progress("reading qrels", detail=str(plan.qrels)) as progress:
        qrels = read_qrels(str(plan.qrels))
        progress.total = len(plan.runs)
        results = []
        for r in plan.runs:
            progress.update(label="evaluating runs", detail=r.name)
            results.extend(evaluate_many(qrels, [str(r.path)], metrics, options=plan.options, memory=plan.memory))
            progress.advance()
    return results


def _evaluate_on_spark(plan: Plan, metrics: list[Any]) -> list[Any]:
    """Every run of ``plan`` evaluated on Spark (``engine: {spark: ...}``): Spark reads the files, one
    evaluation takes all the runs (a ``run`` column), and the results come back in plan order."""
    try:
        from irspec import spark as irs  # optional: pip install 'irspec[spark]'
    except ImportError as e:
        raise IrspecError(f"{plan.source}: engine 'spark' needs pyspark: pip install 'irspec[spark]' ({e})") from None
    engine = plan.engine
    with Progress("evaluating on Spark", detail=engine.master or "active session"):
        session = irs.session(engine.master, dict(engine.config))
        qrels = irs.read_qrels(session, str(plan.qrels))
        frames = [irs.read_run(session, str(r.path), name=r.name) for r in plan.runs]
        runs = functools.reduce(lambda a, b: a.unionByName(b), frames)
        per_query = irs.evaluate(qrels, runs, metrics, partitions=engine.partitions, **plan.options.as_dict())
        by_name = {res.run_name: res for res in irs.results(per_query)}
    return [dataclasses.replace(by_name[r.name], run_source=str(r.path)) for r in plan.runs]


# --------------------------------------------------------------------------------------------------
# Outputs


def render_outputs(report: PlanReport, *, stdout: IO[str] | None = None) -> list[tuple[Output, str | dict[str, bytes]]]:
    """Every output of the plan as ``(output, content)``, computed without writing anything: its text,
    or for ``plots`` the files of the directory as ``{file name: bytes}``."""
    stream = stdout if stdout is not None else sys.stdout
    return [(o, _render(report, o, _arrows(o, stream))) for o in report.plan.outputs]


def write_outputs(report: PlanReport, *, stdout: IO[str] | None = None) -> list[Path]:
    """Write every output of the plan, all or nothing; returns the files (and plot directories) written.

    All outputs are computed first (the plots drawn in memory), then written together by
    :func:`irspec.report.write_all_atomic`: each to a temporary file (or directory) beside its target,
    renamed into place only once every one is written, so an output that cannot be written (a path
    that is a directory, a denied permission) leaves no file of the plan behind and every previous
    file untouched. Outputs without a path go to ``stdout`` (default :data:`sys.stdout`) only after
    the files are in place.
    """
    stream = stdout if stdout is not None else sys.stdout
    texts = render_outputs(report, stdout=stream)
    files = [(output.path, text) for output, text in texts if output.path is not None]
    fmt.write_all_atomic(files)
    for output, text in texts:
        if output.path is None and isinstance(text, str):
            stream.write(text)
    stream.flush()
    return [path for path, _ in files]


def _arrows(output: Output, stream: IO[str]) -> tuple[str, str]:
    """The up/down marks; ASCII when the text goes to a terminal that cannot show the triangles."""
    if output.path is None:
        try:
            "▲▼".encode(getattr(stream, "encoding", None) or "utf-8")
        except (UnicodeEncodeError, LookupError):
            return "^", "v"
    return "▲", "▼"


def _render(report: PlanReport, output: Output, arrows: tuple[str, str]) -> str | dict[str, bytes]:
    # formatting lives in irspec.report (and irspec.plots); this picks what each output gets
    runs = list(report.results)
    results = runs + list(report.inputs)  # a log's result after the runs
    compare, comparisons, notes = report.plan.compare, report.comparisons, report.notes
    marks = {"comparisons": comparisons, "compare": compare, "notes": notes, "decimals": output.decimals}
    if output.content == "comparisons":
        if output.format == "json":
            doc = {**_comparisons_doc(report), "warnings": list(report.warnings), "provenance": _provenance(report)}
            return json.dumps(doc, indent=2, allow_nan=False) + "\n"
        if output.format in ("csv", "tsv"):
            return fmt.comparisons_delimited(comparisons, sep="," if output.format == "csv" else "\t")
        if output.format == "latex":
            return fmt.to_latex(runs, content="comparisons", **marks)
        if output.format == "markdown":
            return fmt.to_markdown(runs, content="comparisons", **marks)
        return fmt.comparisons_table(runs, comparisons, compare, notes=notes, decimals=output.decimals)
    if output.format == "json":
        extra = {**_comparisons_doc(report), "provenance": _provenance(report)}
        return fmt.to_json(results, per_query=output.per_query, extra=extra)
    intervals = output.intervals
    if output.format == "table":
        if not comparisons:
            return fmt.to_table(results, per_query=output.per_query, decimals=output.decimals, intervals=intervals)
        logs = "\n" + fmt.to_table(list(report.inputs), per_query=output.per_query) if report.inputs else ""
        table = fmt.marked_table(
            runs,
            comparisons,
            compare,
            notes=notes,
            per_query=output.per_query,
            arrows=arrows,
            decimals=output.decimals,
            intervals=intervals,
        )
        return table + logs
    if output.format == "latex":
        return fmt.to_latex(results, intervals=intervals, **marks)
    if output.format == "markdown":
        return fmt.to_markdown(results, intervals=intervals, **marks)
    if output.format == "html":
        figures, note = _plots(report, required=False)
        title = f"irspec report: {os.path.basename(report.plan.source)}"
        return fmt.to_html(
            results, title=title, plots=figures, plots_note=note, provenance=_provenance(report), intervals=intervals, **marks
        )
    if output.format == "plots":
        found, _ = _plots(report, required=True)
        return plots.render_files(found)
    return fmt.format_results(results, output.format, per_query=output.per_query)


def _comparisons_doc(report: PlanReport) -> dict[str, Any]:
    plan = report.plan
    return {
        "plan": plan.source,
        "overrides": list(plan.overrides),
        "compare": plan.compare.as_dict() if plan.compare else None,
        "comparisons": [c.as_dict() for c in report.comparisons],
        "notes": list(report.notes),
    }


# The html and plots outputs of one report share its plots, and the json and html its provenance
# (hashing the inputs once): the last report's are kept, nothing more.
_SHARED: dict[str, Any] = {}


def _shared(report: PlanReport, key: str, make: Any) -> Any:
    if _SHARED.get("report") is not report:
        _SHARED.clear()
        _SHARED["report"] = report
    if key not in _SHARED:
        _SHARED[key] = make()
    return _SHARED[key]


def _provenance(report: PlanReport) -> dict[str, Any]:
    """Versions, specs, options, seeds and the SHA-256 of the plan and every input file."""
    def make() -> dict[str, Any]:
        plan = report.plan
        inputs: list[tuple[str, str | None, Any]] = []
        if plan.qrels is not None:
            inputs.append(("qrels", None, plan.qrels))
        inputs.extend(("run", r.name, r.path) for r in plan.runs)
        if getattr(plan, "log", None) is not None:
            inputs.append(("log", None, plan.log))
        results = list(report.results) + list(report.inputs)
        return fmt.provenance(
            results, inputs, options=plan.options, compare=plan.compare, plan=plan.source, overrides=plan.overrides
        )

    return _shared(report, "provenance", make)


def _plots(report: PlanReport, *, required: bool) -> tuple[list[Any], str | None]:
    """The report's plots (drawn once), or ``[]`` and why not; raises when ``required`` and impossible."""

    def make() -> tuple[list[Any], str | None]:
        try:
            plots.require_matplotlib()
        except IrspecError as e:
            return [], str(e)
        plan = report.plan
        runs = list(report.results)
        inputs = [res for res in report.inputs if res.tables]  # a log's top queries and queries per unit
        if not runs and not inputs:
            return [], "the plan has no runs to plot"
        with Progress("drawing plots") as progress:
            baseline = plan.compare.baseline if plan.compare is not None else None
            # PNG only for a plots directory; the html output embeds the SVG
            formats = ("svg", "png") if any(o.format == "plots" for o in plan.outputs) else ("svg",)
            drawn = plots.render(
                runs,
                curves=report.curves,
                data=report.figure_data,
                baseline=baseline,
                formats=formats,
                progress=progress,
                inputs=inputs,
            )
            return drawn, None

    found, why = _shared(report, "plots", make)
    if required and why is not None:
        raise IrspecError(why)
    return found, None if why is None else f"No plots: {why}."
