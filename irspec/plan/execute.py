"""Running a plan: evaluate its runs (the qrels read once), compare them, render and write its outputs.

>>> report = run_plan(load_plan("specs/demo.yaml"))      # doctest: +SKIP
>>> write_outputs(report)                                # doctest: +SKIP

This is the one pipeline: ``irspec run`` runs a plan file, and ``irspec eval`` builds a
:class:`~irspec.plan.model.Plan` from its command line and runs it here too. The comparisons are the
compare step's (:func:`irspec.experiment.compare.compare_results` with the plan's
:class:`~irspec.experiment.records.Compare` settings); the formatting is the report layer's (:mod:`irspec.report`,
:mod:`irspec.report.plots`); this module picks what each output gets. Outputs are computed in full before any
file is touched, then written all or nothing (:func:`irspec.report.write_all_atomic`), so a failed plan
leaves no partial output behind.

A step a plan does not use is not loaded: comparing, power, agreement and groups (which import scipy),
standardising, diffs, drawing and a log's reading are imported when the plan has them, so that ``irspec eval`` starts as fast
as it evaluates.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import sys
import warnings
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any

from irspec import report as fmt
from irspec.data import read_run
from irspec.data.plain import PlainReading
from irspec.data.small import small_inputs
from irspec.data.stream import RunBlocks, closing_early, open_runs, read_early
from irspec.data.trec import stem
from irspec.errors import EvaluationError, IrspecError, IrspecWarning, PlanError
from irspec.evaluation.evaluate import distinct_names, evaluate_many
from irspec.evaluation.evaluated import collect_warnings
from irspec.evaluation.judgments import Judgments, read_judgments, reads_qrels
from irspec.evaluation.result import Result, StreamedResult
from irspec.frozen import frozen
from irspec.plan.model import FusedRun, Output, Plan, PlanDiff, PlanRun
from irspec.progress import Progress

if TYPE_CHECKING:
    from pathlib import Path

    from irspec.experiment.agreement import Agreement
    from irspec.experiment.diff import Diff
    from irspec.experiment.power import PowerAnalysis
    from irspec.experiment.records import Comparison
    from irspec.experiment.reproduce import Reproduction
    from irspec.experiment.standardize import ZTable
    from irspec.report.figures import FigureData

__all__ = ["PlanReport", "plan_power", "render_outputs", "report_figures", "run_plan", "write_outputs"]

# The outputs that draw figures, and those whose provenance hashes the input files.
_DRAWN = ("html", "plots")
_HASHED = ("json", "html")


@frozen
class PlanReport:
    """What :func:`run_plan` produces: the plan, one :class:`~irspec.evaluation.result.Result` per run (named as in
    the plan), the comparisons, and notes worth telling the user (queries left out of comparisons).
    ``inputs`` holds the results of the plan's other inputs (its ``log``): their own metrics, one row per
    item of the input, reported after the runs and never compared. ``plan`` is the plan run, its runs
    named (a run of ``irspec eval`` by the name it was read with)."""

    plan: Plan
    results: tuple[Result, ...]
    comparisons: tuple[Comparison, ...] = ()
    notes: tuple[str, ...] = ()
    inputs: tuple[Result | StreamedResult, ...] = ()
    curves: dict[str, list[float]] | None = None
    """The runs' 11-point precision-recall curves (:func:`irspec.report.figures.precision_recall`), from the
    figures' own evaluation of the runs (:func:`irspec.report.figures.figure_metrics`) when an output draws
    plots; ``None`` otherwise."""
    figure_data: FigureData | None = None
    """The ROC points, AP values and confusion matrices of the other plots
    (:func:`irspec.report.figures.figure_data`), from the same evaluation as the curves; ``None`` when nothing is drawn."""
    power: PowerAnalysis | None = None
    """The power analysis of the comparisons (the plan's ``power`` section); ``None`` without one."""
    reproduction: Reproduction | None = None
    """The plan's ``reproduce`` section measured (:func:`irspec.reproduce`); ``None`` without one."""
    by_qrels: tuple[tuple[str, PlanReport], ...] = ()
    """With several sets of judgments (``plan.qrels_sets``): each set's name and its own report (the
    plan run with that set as its qrels); the fields above are then the first set's."""
    agreement: Agreement | None = None
    """With several sets of judgments, their agreement (:func:`irspec.experiment.agreement.agreement_of`)."""
    zscores: ZTable | None = None
    """The runs' per-topic means and sample sds as evaluated (before any standardising), when an output
    writes them in trec_eval's -Z format (``irspec eval --write-z``); ``None`` otherwise."""
    diffs: tuple[tuple[PlanDiff, Diff], ...] = ()
    """The ``diff`` section's pairs, each with its :class:`~irspec.experiment.diff.Diff`."""

    @property
    def warnings(self) -> tuple[str, ...]:
        """The evaluation's warnings, each once (for example qrels queries missing from a run)."""
        others = [r for _, sub in self.by_qrels for r in sub.results]
        found = collect_warnings((*self.results, *self.inputs, *others))
        reproduced = self.reproduction.warnings if self.reproduction is not None else ()
        return tuple(dict.fromkeys([*found, *(w for _, d in self.diffs for w in d.warnings), *reproduced]))


def run_plan(plan: Plan) -> PlanReport:
    """Evaluate every run of ``plan`` (the qrels read once) and make the comparisons it asks for; with
    several sets of judgments, once per set, then their agreement."""
    if plan.qrels_sets:
        return _run_several(plan)
    return _run_one(plan)


def _run_metrics(plan: Plan) -> list[Any]:
    """The plan's metrics computed from qrels and runs (those of qrels a plugin reads, with subtopics,
    too). Without a log, every metric goes to the runs, and one that needs another input is the engine's
    error (``irspec eval -m`` a log's metric)."""
    if plan.log is None:
        return list(plan.metrics)
    return [m for m in plan.metrics if m.definition.needs == "run" or reads_qrels(m.definition.needs)]


def _run_one(plan: Plan, judgments: Judgments | None = None) -> PlanReport:
    """:func:`run_plan` of a plan with one set of judgments, evaluated against ``judgments`` when they
    are given (already read), else against the plan's qrels, read here."""
    results: list[Any] = []
    curves = data = zscores = None
    if plan.recsys is not None:
        results = _evaluate_recsys(plan)
    elif plan.runs or plan.systems:
        size = plan.options.collection_size
        drawn = any(o.format in _DRAWN for o in plan.outputs)
        # The figures declare the metrics they read, and get an evaluation of their own: the results the
        # tables show hold the plan's metrics, and their warnings are the plan's metrics' alone.
        wanted = {"results": _run_metrics(plan)}
        if drawn:
            from irspec.report import figures

            wanted["figures"] = list(figures.figure_metrics(size))
        with _in_section(plan):  # a metric's needs (Fallout's collection size), a fused run's training
            plan, evaluated = _evaluate_runs(plan, wanted, judgments)
        results = evaluated["results"]
        if drawn:
            curves = figures.precision_recall(evaluated["figures"])
            data = figures.figure_data(evaluated["figures"], size)
        if any(o.format == "zscores" for o in plan.outputs):
            from irspec.experiment.standardize import z_table

            zscores = z_table(
                results
            )  # of the runs as evaluated, the reference another evaluation's -Z reads
    results = _standardized(plan, results)
    if plan.groups is not None and results:
        from irspec.experiment.groups import with_groups

        results = with_groups(results, plan.groups)
    comparisons: list[Comparison] = []
    notes: list[str] = []
    if plan.compare is not None:
        from irspec.experiment.compare import compare_results

        with _in_section(plan, "compare"):
            comparisons, notes = compare_results(results, plan.compare)
    inputs = []
    if plan.log is not None:  # read by whichever plugin registers the "log" input reader
        log_metrics = [m for m in plan.metrics if m.definition.needs == "log"]
        inputs.append(_evaluate_log(plan, log_metrics))
    report = PlanReport(
        plan,
        tuple(results),
        tuple(comparisons),
        tuple(notes),
        tuple(inputs),
        curves,
        data,
        zscores=zscores,
        diffs=_diffs(plan),
    )
    if plan.reproduce is not None:
        report = dataclasses.replace(report, reproduction=_reproduction(plan))
    return dataclasses.replace(report, power=plan_power(report)) if plan.power is not None else report


def _evaluate_recsys(plan: Plan) -> list[Result]:
    """The ``recsys`` section's systems (the plan's runs: recommendations tables) evaluated against its
    held-out interactions, every table read over one index (:func:`irspec.recsys.evaluate_tables`)."""
    from irspec.recsys.tables import Columns, evaluate_tables

    section = plan.recsys
    assert section is not None  # the caller's test
    with Progress("evaluating recommendations", detail=str(section.test)):
        return evaluate_tables(
            str(section.test),
            {str(r.name): str(r.path) for r in plan.runs},
            list(plan.metrics),
            exclude=None if section.exclude is None else str(section.exclude),
            popularity=None if section.popularity is None else str(section.popularity),
            propensity=section.propensity,
            empty_users="zero" if section.empty_users == "zero" else "skip",
            relevance_level=plan.options.relevance_level,
            columns=Columns(**dict(section.columns)),
            features=None if section.features is None else str(section.features),
            expected=None if section.expected is None else str(section.expected),
        )


def _reproduction(plan: Plan) -> Reproduction:
    """The ``reproduce`` section measured on the plan's metrics, its runs read again by path; an error
    (a metric it cannot compare) names the plan's section."""
    from irspec.experiment.reproduce import reproduce

    section = plan.reproduce
    assert section is not None
    sources = {r.name: r for r in plan.runs}

    def named(name: str) -> Any:  # the plan's name, not the file's stem; a fused run made again
        src = _run_source(sources[name], plan)
        return dataclasses.replace(read_run(src() if callable(src) else src), name=name)

    try:
        return reproduce(
            plan.qrels,
            original=tuple(named(n) for n in section.original),
            reproduced=tuple(named(n) for n in section.reproduced),
            metrics=[m for m in plan.metrics if m.definition.needs == "run"],
            reproduced_qrels=section.qrels,
            p=section.rbo_p,
            depth=section.depth,
            options=plan.options,  # the relevance level and depth cut of the plan's own table
        )
    except EvaluationError as e:
        raise EvaluationError(f"{plan.source}: reproduce: {e}") from None


@contextlib.contextmanager
def _in_section(plan: Plan, section: str | None = None) -> Iterator[None]:
    """An :class:`EvaluationError` (not an input's, which names its file) said with the plan file, and the
    ``section`` when it is the section's, as :func:`_reproduction`'s are: "cannot compare a with b on AP"
    and "Fallout@10 needs the collection size" named no plan. A plan ``irspec eval`` builds from its
    command line (no file) says it as it is."""
    try:
        yield
    except EvaluationError as e:
        if plan.source is None or type(e) is not EvaluationError or str(e).startswith(plan.source):
            raise
        raise EvaluationError(f"{plan.source}: {section + ': ' if section else ''}{e}") from None


def plan_power(report: PlanReport, **settings: float | None) -> PowerAnalysis:
    """The power analysis of the plan's comparisons, with its ``power`` section's delta, alpha and
    power, each replaced by ``settings`` given (``irspec power --delta``); without a section, delta
    ``None`` and the defaults. Raises :class:`~irspec.errors.PlanError` when the plan compares nothing."""
    from irspec.experiment.compare import Comparisons
    from irspec.experiment.power import power

    plan = report.plan
    if plan.compare is None or len(report.results) < 2:
        why = f"{plan.source}: a power analysis designs the plan's comparisons; it needs a compare section and at least 2 runs"
        raise PlanError(str(plan.source), [why])
    chosen: dict[str, Any] = {"delta": None, "alpha": 0.05, "power": 0.8}
    if plan.power is not None:
        chosen.update(delta=plan.power.delta, alpha=plan.power.alpha, power=plan.power.power)
    chosen.update({k: v for k, v in settings.items() if v is not None})
    found = Comparisons(report.comparisons, plan.compare, report.notes, report.results)
    return power(found, **chosen)


def _standardized(plan: Plan, results: list[Any]) -> list[Any]:
    """The plan's ``standardize``: the results as z-scores against its reference runs or -Z file."""
    if plan.standardize is None or not results:
        return results
    from irspec.experiment.standardize import standardize

    z = plan.standardize
    reference: Any = z.file
    if z.reference is not None:
        reference = list(z.reference)  # run names, which standardize finds among the results
    return standardize(results, reference, cdf=z.cdf)


def _systems(plan: Plan, members: list[Any]) -> list[Any]:
    """The plan's systems of several runs, from their runs' results (in plan order, system by system)."""
    if not plan.systems:  # most plans: the systems' module (~1 ms of start-up) never loaded
        return []
    from irspec.evaluation.systems import combine

    out, start = [], 0
    for system in plan.systems:
        out.append(combine(system.name, members[start : start + len(system.runs)]))
        start += len(system.runs)
    return out


def _run_several(plan: Plan) -> PlanReport:
    """The plan run once per set of judgments (each as a plan with that one qrels), and the agreement:
    significance by the plan's compare settings, or a paired t-test with Holm when it has none."""
    from irspec.experiment.agreement import agreement_of
    from irspec.experiment.records import Compare

    # each set read once: its runs are evaluated against it, and its labels compared with the others'
    judged = {}
    for name, path in plan.qrels_sets:
        with Progress("reading qrels", detail=str(path)):
            judged[name] = read_judgments(str(path), _run_metrics(plan))
    reports = tuple(
        (name, _run_one(dataclasses.replace(plan, qrels=path, qrels_sets=()), judged[name]))
        for name, path in plan.qrels_sets
    )
    with Progress("comparing the sets of judgments"):
        qrels = {name: judgments.qrels for name, judgments in judged.items()}
        found = agreement_of(
            {name: list(sub.results) for name, sub in reports},
            qrels,
            plan.compare or Compare(test="t", correction="holm"),
            comparisons={name: sub.comparisons for name, sub in reports}
            if plan.compare is not None
            else None,
            relevance_level=plan.options.relevance_level,
        )
    first = reports[0][1].plan  # its runs named as they were read
    named = dataclasses.replace(plan, runs=first.runs, systems=first.systems)
    return dataclasses.replace(reports[0][1], plan=named, by_qrels=reports, agreement=found)


# The outputs that show a row per item of an input (a log's query issues), or need them (intervals).
_ROW_FORMATS = ("csv", "tsv", "trec", "parquet", "jsonl")


def _evaluate_log(plan: Plan, metrics: list[Any]) -> Result | StreamedResult:
    """The plan's log evaluated by its reader: with the options the plugins' plan sections give it (an A/B
    test of its arms when the plan has irspec-online's ``ab:``), and streamed in bounded memory (aggregates
    only) unless an output shows its per-query rows."""
    # intervals need rows too, but the default ones are not worth reading a huge log whole for: a streamed
    # log's means are shown without them (an output with per_query: true keeps them)
    from irspec.evaluation.inputs import evaluate_input

    rows = any(o.per_query or o.format in _ROW_FORMATS for o in plan.outputs)
    options: dict[str, Any] = {"memory": plan.memory} if rows and plan.memory is not None else {}
    options.update(plan.sections)
    return evaluate_input(str(plan.log), metrics, kind="log", options=options or None, per_query=rows)


def _evaluate_runs(
    plan: Plan, wanted: dict[str, list[Any]], judgments: Judgments | None = None
) -> tuple[Plan, dict[str, list[Any]]]:
    """Every run of ``plan`` evaluated once per entry of ``wanted`` (``{name: metrics}``), the qrels read
    once (or ``judgments``, read already); each evaluation's results named as the plan names its runs,
    its systems made of their runs' and every name made distinct. Returns the plan with every run named
    and the results by ``wanted``'s names."""
    runs = [*plan.runs, *(r for s in plan.systems for r in s.runs)]
    if plan.engine is not None:
        found = {key: _evaluate_on_spark(plan, metrics, runs) for key, metrics in wanted.items()}
    else:
        found = _evaluate_files(plan, wanted, runs, judgments)
    plan = _named_runs(plan, [res.run_name for res in next(iter(found.values()))])
    runs, n = [*plan.runs, *(r for s in plan.systems for r in s.runs)], len(plan.runs)
    out = {}
    for key, evaluated in found.items():
        # The plan names the runs; a runid inside the file does not. load_plan rejects two runs of one
        # name; a Plan built in Python is not checked, so its names are made distinct here as well.
        named = [dataclasses.replace(res, run_name=r.name) for res, r in zip(evaluated, runs, strict=True)]
        out[key] = distinct_names([*named[:n], *_systems(plan, named[n:])])
    return plan, out


def _named_runs(plan: Plan, read: list[str]) -> Plan:
    """``plan`` with every run named: a run given without a name (``irspec eval``'s) takes the one it
    was read with (``read``, in the order of the runs, then of the systems' runs)."""
    if all(r.name is not None for r in [*plan.runs, *(r for s in plan.systems for r in s.runs)]):
        return plan
    names = iter(read)

    def named(r: PlanRun) -> PlanRun:
        name = next(names)
        return r if r.name is not None else dataclasses.replace(r, name=name)

    runs = tuple(named(r) for r in plan.runs)  # before the systems' runs: the order of ``read``
    systems = tuple(dataclasses.replace(s, runs=tuple(named(r) for r in s.runs)) for s in plan.systems)
    return dataclasses.replace(plan, runs=runs, systems=systems)


def _evaluate_files(
    plan: Plan, wanted: dict[str, list[Any]], runs: list[Any], judgments: Judgments | None
) -> dict[str, list[Any]]:
    """The runs read in this process, one at a time, and each evaluated on every entry of ``wanted``;
    progress on a terminal, run by run."""
    hashed = any(o.format in _HASHED for o in plan.outputs)
    found: dict[str, list[Any]] = {key: [] for key in wanted}
    metrics = [m for key in wanted for m in wanted[key]]
    sources = [_run_source(r, plan) for r in runs]
    # small files (a few MB in all) are read and evaluated without polars: its import would cost more
    small = judgments is None and small_inputs([plan.qrels, *sources])
    if sources and not small:  # a large first run is read on worker threads while the qrels are read
        sources[0] = read_early(sources[0], plan.memory)
    with Progress("reading qrels", detail=str(plan.qrels)) as progress, closing_early(sources[:1]):
        # read_qrels, or a plugin's reader (qrels with subtopics); judgments already read pass through
        # a run begun by numpy wants qrels read without polars too (its import is what it spares)
        plain = isinstance(sources[0] if sources else None, PlainReading)
        qrels = read_judgments(
            judgments if judgments is not None else str(plan.qrels), metrics, small=small, plain=plain
        )
        progress.total = len(runs)
        # each run read while the one before it is evaluated, when it is small (open_runs)
        for i, (r, loaded) in enumerate(zip(runs, open_runs(sources, plan.memory, small=small), strict=True)):
            progress.update(label="evaluating runs", detail=str(r.path))
            if hashed:
                # The provenance hashes the inputs: on a worker thread, once reading (which keeps every
                # core busy) is done, so that it overlaps the single-threaded evaluation.
                own = [] if isinstance(r.path, FusedRun) else [r.path]  # a fused run's members are runs too
                fmt.hash_in_background(([plan.qrels] if i == 0 else []) + own)
            for k, (key, chosen) in enumerate(wanted.items()):
                # a streamed run's blocks are gone once evaluated: it is read again for another evaluation
                src = _run_source(r, plan) if k and isinstance(loaded, RunBlocks) else loaded
                with warnings.catch_warnings():
                    if k:  # the same runs: their warnings are the first evaluation's
                        warnings.simplefilter("ignore", IrspecWarning)
                    found[key].extend(
                        evaluate_many(qrels, [src], chosen, options=plan.options, memory=plan.memory)
                    )
            progress.advance()
    return found


def _run_source(r: PlanRun, plan: Plan) -> Any:
    """What a plan's run is read from: its path, or a callable making the fused run its :class:`FusedRun`
    declares (called at the run's turn, :func:`~irspec.data.stream.open_runs`; trained on other queries
    than the plan reports, when it learns or searches parameters)."""
    if not isinstance(r.path, FusedRun):
        return str(r.path)
    src, name = r.path, r.name or "fused"
    paths = [str(p) for p in src.paths]

    def fused() -> Any:
        if src.learns:
            from irspec.fusion.tuning import fuse_held_out

            where = f"{r.entry}" + (f" (line {r.line})" if r.line else "")
            return fuse_held_out(
                paths,
                src.method,
                src.optimize,
                src.train,
                str(plan.qrels),
                folds=src.folds,
                depth=src.depth,
                name=name,
                where=where,
                options={  # the trials scored as the plan reports the fused run
                    "relevance_level": plan.options.relevance_level,
                    "depth": plan.options.depth,
                    "judged_only": plan.options.judged_only,
                    "collection_size": plan.options.collection_size,
                },
            )
        from irspec.fusion.engine import fuse

        return fuse(paths, src.method, depth=src.depth, name=name)

    return fused
    return str(r.path)


def _evaluate_on_spark(plan: Plan, metrics: list[Any], runs: Any) -> list[Any]:
    """Every run of ``plan`` evaluated on Spark (``engine: {spark: ...}``): Spark reads the files, one
    evaluation takes all the runs (a ``run`` column), and the results come back in plan order."""
    try:
        from irspec.evaluation import spark as irs  # optional: pip install 'irspec[spark]'
    except ImportError as e:
        raise IrspecError(
            f"{plan.source}: engine 'spark' needs pyspark: pip install 'irspec[spark]' ({e})"
        ) from None
    engine = plan.engine
    assert engine is not None  # the caller's test: the plan's engine is Spark
    with Progress("evaluating on Spark", detail=engine.master or "active session"):
        session = irs.session(engine.master, dict(engine.config))
        qrels = irs.read_qrels(session, str(plan.qrels))
        names = [r.name if r.name is not None else stem(str(r.path)) or "run" for r in runs]
        # Each run keyed in the frame by its place in the list, not by its name: a system's runs may
        # share a stem, and a name the plan gives may be any text ("a (1)"), so that no key made from
        # names is sure to differ from every other. Messages name each run by its file, as in memory.
        keys = [f"#{i}" for i in range(len(runs))]
        frames = [irs.read_run(session, str(r.path), name=k) for r, k in zip(runs, keys, strict=True)]
        # one frame of every run, not `runs`: the plan's runs are read again below, and a Spark frame
        # iterated in their place yields its columns (4), which dropped every run after the fourth
        union = functools.reduce(lambda a, b: a.unionByName(b), frames)
        per_query = irs.evaluate(
            qrels,
            union,
            metrics,
            partitions=engine.partitions,
            sources={k: str(r.path) for r, k in zip(runs, keys, strict=True)},
            **plan.options.as_dict(),
        )
        # every run has its Result, one that answers no query too (without rows)
        by_name = {res.run_name: res for res in irs.results(per_query)}
    return [
        dataclasses.replace(by_name[k], run_name=n, run_source=str(r.path))
        for r, k, n in zip(runs, keys, names, strict=True)
    ]


def _diffs(plan: Plan) -> tuple[tuple[PlanDiff, Diff], ...]:
    """The ``diff`` section's pairs of runs compared query by query, with the plan's options."""
    if not plan.diffs:
        return ()
    from irspec.data import read_run
    from irspec.experiment.diff import diff

    paths = {r.name: r.path for r in plan.runs}
    options = plan.options

    def named(name: str) -> Any:  # the run by the plan's name, as every other report names it, not its file's
        return dataclasses.replace(read_run(str(paths[name])), name=name)

    return tuple(
        (
            d,
            diff(
                plan.qrels,
                named(d.a),
                named(d.b),
                list(d.metrics or plan.metrics),
                top=d.top,
                depth=options.depth,
                relevance_level=options.relevance_level,
                missing_queries=options.missing_queries,
                queries=d.queries,
            ),
        )
        for d in plan.diffs
    )


def _diff_text(d: PlanDiff, found: Diff) -> str:
    """One pair of the ``diff`` section in its format."""
    if d.format == "json":
        return found.to_json(queries=d.queries)
    if d.format == "html":
        return found.to_html(queries=d.queries, decimals=d.decimals)
    render = found.to_markdown if d.format == "markdown" else found.to_text
    return render(queries=d.queries or 10, decimals=d.decimals)


# --------------------------------------------------------------------------------------------------
# Outputs


def render_outputs(
    report: PlanReport, *, stdout: IO[str] | None = None
) -> list[tuple[Output, str | bytes | dict[str, bytes]]]:
    """Every output of the plan as ``(output, content)``, computed without writing anything: its text,
    or for ``plots`` the files of the directory as ``{file name: bytes}``."""
    stream = stdout if stdout is not None else sys.stdout
    found = [(o, _render(report, o, _arrows(o, stream), _width(o, stream))) for o in report.plan.outputs]
    # each pair of the diff section is an output of its own, written with the others (all or none)
    return found + [(Output(d.format, d.path), _diff_text(d, diff)) for d, diff in report.diffs]


def write_outputs(
    report: PlanReport,
    *,
    stdout: IO[str] | None = None,
    make_dirs: bool = True,
) -> list[Path]:
    """Write every output of the plan, all or nothing; returns the files (and plot directories) written.

    All outputs are computed first (the plots drawn in memory), then written together by
    :func:`irspec.report.write_all_atomic`: each to a temporary file (or directory) beside its target,
    renamed into place only once every one is written, so an output that cannot be written (a path
    that is a directory, a denied permission) leaves no file of the plan behind and every previous
    file untouched; none may overwrite a file the plan reads (:attr:`Plan.inputs`). Missing directories
    are made, unless ``make_dirs`` is false (``irspec eval -o`` writes as a shell's ``>`` would, into a
    directory that exists). Outputs without a path go to
    ``stdout`` (default :data:`sys.stdout`) only after the files are in place.
    """
    stream = stdout if stdout is not None else sys.stdout
    texts = render_outputs(report, stdout=stream)
    files = [(output.path, text) for output, text in texts if output.path is not None]
    if files:  # (the writer's module and pathlib are not loaded for a table on standard output alone)
        fmt.write_all_atomic(files, make_dirs=make_dirs, inputs=report.plan.inputs)
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


def _width(output: Output, stream: IO[str]) -> int | None:
    """The columns of the terminal a table goes to (``None`` for a file, a pipe, or another format)."""
    if output.path is None and output.format == "table":
        from irspec.report.text import terminal_width

        return terminal_width(stream)
    return None


def _render(
    report: PlanReport, output: Output, arrows: tuple[str, str], width: int | None = None
) -> str | bytes | dict[str, bytes]:
    if report.agreement is not None:
        from irspec.report.agreement import COMBINED_FORMATS, judged_sets_text

        if output.format in COMBINED_FORMATS:
            # each set's output carries its own power tables (rendered here, once); the agreement follows
            texts = {name: str(_render(sub, output, arrows, width)) for name, sub in report.by_qrels}
            return judged_sets_text(texts, report.agreement, output.format, decimals=output.decimals)
    rendered = _render_main(report, output, arrows, width)
    if report.reproduction is not None and isinstance(rendered, str):
        # the reproduction follows the results in every table format (JSON and HTML carry it inside)
        shown = {"table": "text", "markdown": "markdown", "latex": "latex"}
        if output.format in shown:
            rendered += "\n" + report.reproduction.render(shown[output.format], decimals=output.decimals)
    if report.power is None or not isinstance(rendered, str):
        return rendered
    # the power tables follow the results or comparisons in every table format (JSON and HTML carry
    # them inside; see _comparisons_doc and _render_main)
    after = {
        "table": report.power.to_table,
        "markdown": report.power.to_markdown,
        "latex": report.power.to_latex,
    }
    if output.format in after:
        return rendered + "\n" + after[output.format](decimals=output.decimals)
    return rendered


def _render_main(
    report: PlanReport, output: Output, arrows: tuple[str, str], width: int | None = None
) -> str | bytes | dict[str, bytes]:
    # formatting lives in irspec.report (and irspec.report.plots); this picks what each output gets
    runs = list(report.results)
    results = runs + list(report.inputs)  # a log's result after the runs
    compare, comparisons, notes = report.plan.compare, report.comparisons, report.notes
    marks: dict[str, Any] = {
        "comparisons": comparisons,
        "compare": compare,
        "notes": notes,
        "decimals": output.decimals,
    }
    if output.content == "comparisons":
        if output.format == "json":
            doc = {
                **_comparisons_doc(report),
                "warnings": list(report.warnings),
                "provenance": _provenance(report),
            }
            import json  # here: the comparisons' JSON alone needs it

            return json.dumps(doc, indent=2, allow_nan=False) + "\n"
        if output.format in ("csv", "tsv"):
            return fmt.comparisons_delimited(comparisons, sep="," if output.format == "csv" else "\t")
        if output.format == "latex":
            return fmt.to_latex(runs, content="comparisons", **marks)
        if output.format == "markdown":
            return fmt.to_markdown(runs, content="comparisons", **marks)
        return fmt.comparisons_table(runs, comparisons, compare, notes=notes, decimals=output.decimals)
    if output.format == "json":
        # a plan file's JSON says what the plan was; irspec eval's has no plan to speak of
        doc = _comparisons_doc(report) if report.plan.source is not None else {}
        return fmt.to_json(
            results, per_query=output.per_query, extra={**doc, "provenance": _provenance(report)}
        )
    intervals = output.intervals
    if output.format == "table":
        if not comparisons:
            return fmt.to_table(
                results,
                per_query=output.per_query,
                decimals=output.decimals,
                intervals=intervals,
                width=width,
            )
        logs = (
            "\n" + fmt.to_table(list(report.inputs), per_query=output.per_query, width=width)
            if report.inputs
            else ""
        )
        table = fmt.marked_table(
            runs,
            comparisons,
            compare,
            notes=notes,
            per_query=output.per_query,
            arrows=arrows,
            decimals=output.decimals,
            intervals=intervals,
            width=width,
        )
        return table + logs
    if output.format == "latex":
        return fmt.to_latex(results, intervals=intervals, **marks)
    if output.format == "markdown":
        return fmt.to_markdown(results, intervals=intervals, **marks)
    if output.format == "html":
        figures, note = _plots(report, files=False)
        title = f"irspec report: {os.path.basename(report.plan.source or '')}"
        # several sets of judgments: each set's results, comparisons and power in turn, then the agreement
        sets = [
            fmt.JudgedSet(
                name,
                [*sub.results, *sub.inputs],
                sub.comparisons,
                sub.notes,
                _power_sections(sub, output.decimals),
            )
            for name, sub in report.by_qrels
        ]
        return fmt.to_html(
            results,
            title=title,
            plots=figures,
            plots_note=note,
            provenance=_provenance(report),
            intervals=intervals,
            extra=[
                *([] if sets else _power_sections(report, output.decimals)),
                *_reproduce_sections(report, output.decimals),
                *_agreement_sections(report, output.decimals),
            ],
            lead=_judgments_lead(report),
            sets=sets,
            **marks,
        )
    if output.format == "plots":
        from irspec.report.plots import render_files

        found, _ = _plots(report, files=True)
        return render_files(found)
    if output.format == "zscores":
        if report.zscores is None:
            raise IrspecError(
                f"{report.plan.source}: a zscores output gives the runs' per-topic means and sds; the plan has no runs"
            )
        return report.zscores.to_text()
    return fmt.format_results(
        results, output.format, per_query=output.per_query, runid=output.runid, summary=output.summary
    )


def _power_sections(report: PlanReport, decimals: int) -> list[tuple[str, str, Any, Any]]:
    """The HTML page's power section, with the plan's ``power`` section."""
    if report.power is None:
        return []
    from irspec.report.power import power_sections

    return [("power", "Power", power_sections(report.power, decimals=decimals), report.power.notes)]


def _reproduce_sections(report: PlanReport, decimals: int) -> list[tuple[str, str, Any, Any]]:
    """The HTML page's reproduction section, with the plan's ``reproduce`` section."""
    if report.reproduction is None:
        return []
    from irspec.report.reproduce import reproduce_sections

    found = report.reproduction
    return [("reproduce", "Reproduction", reproduce_sections(found, decimals=decimals), found.warnings)]


def _judgments_lead(report: PlanReport) -> str | None:
    """With several sets of judgments, what the page shows under which."""
    if report.agreement is None:
        return None
    sets = report.agreement.sets
    names = ", ".join(sets[:-1]) + f" and {sets[-1]}"
    return (
        f"{len(sets)} sets of judgments, {names}: the results, comparisons and power under each follow in turn, "
        f"titled with its name, then the agreement between the sets. The plots are drawn under the first, {sets[0]}, "
        "but for the scatter of each run's means under one set against the other."
    )


def _agreement_sections(report: PlanReport, decimals: int) -> list[tuple[str, str, Any, Any]]:
    """The HTML page's agreement section, with several sets of judgments (each set's results and
    comparisons above it)."""
    found = report.agreement
    if found is None:
        return []
    return [
        (
            "agreement",
            "Agreement between the sets of judgments",
            found.sections(decimals=decimals),
            found.notes,
        )
    ]


def _comparisons_doc(report: PlanReport) -> dict[str, Any]:
    plan = report.plan
    return {
        "plan": plan.source,
        "overrides": list(plan.overrides),
        "compare": plan.compare.as_dict() if plan.compare else None,
        "comparisons": [c.as_dict() for c in report.comparisons],
        "notes": list(report.notes),
        **({"power": report.power.as_dict()} if report.power is not None else {}),
        **({"reproduction": report.reproduction.as_dict()} if report.reproduction is not None else {}),
    }


# The json and html outputs of one report share its provenance (hashing the inputs once), and its plots
# are drawn once per kind (the page's, the files'): the last report's are kept, nothing more.
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
        if plan.qrels_sets:
            inputs.extend(("qrels", name, path) for name, path in plan.qrels_sets)
        elif plan.qrels is not None:
            inputs.append(("qrels", None, plan.qrels))
        inputs.extend(("run", r.name, r.path) for r in plan.runs if not isinstance(r.path, FusedRun))
        inputs.extend(
            ("fused", f"{r.name}: {r.path}", None) for r in plan.runs if isinstance(r.path, FusedRun)
        )
        inputs.extend(("run", f"{s.name}: {r.name}", r.path) for s in plan.systems for r in s.runs)
        if getattr(plan, "log", None) is not None:
            inputs.append(("log", None, plan.log))
        if plan.recsys is not None:  # its tables by their keys (runs above: the systems' lists)
            inputs.extend(("recsys", key, path) for key, path in plan.recsys.named_tables)
        results = list(report.results) + list(report.inputs)
        return fmt.provenance(
            results,
            inputs,
            options=plan.options,
            compare=plan.compare,
            plan=plan.source,
            overrides=plan.overrides,
        )

    return _shared(report, "provenance", make)


def report_figures(report: PlanReport) -> list[Any]:
    """The figures of a plan's report (:mod:`irspec.report.figures`), not yet drawn: its runs' (the
    per-topic differences from the first baseline) and its inputs', then its power, agreement and
    reproduction figures; ``[]`` when it has no runs and no inputs to plot. The HTML page and the
    ``plots`` output draw these (:func:`irspec.report.plots.render_figures`), as does the documentation's
    build (``docs/gen/plots.py``)."""
    from irspec.report import figures

    runs = list(report.results)
    inputs = [res for res in report.inputs if res.tables]  # a log's top queries and queries per unit
    if not runs and not inputs:
        return []
    plan = report.plan
    # with several baselines, the per-topic differences are drawn from the first
    baseline = plan.compare.baselines[0] if plan.compare is not None and plan.compare.baselines else None
    drawn = figures.report_figures(
        runs, curves=report.curves, data=report.figure_data, baseline=baseline, inputs=inputs
    )
    if report.power is not None:
        drawn += figures.power_figures(report.power.curves(), report.power.power)
    if report.agreement is not None:
        drawn += figures.agreement_figures(report.agreement)
    if report.reproduction is not None:
        drawn += figures.reproduction_figures(report.reproduction)
    return drawn


def _plots(report: PlanReport, *, files: bool) -> tuple[list[Any], str | None]:
    """The report's plots, drawn once per use, or ``[]`` and why not: for the HTML page (SVG, a topic's
    mark linked to its row of the page's per-query table), or with ``files`` for the ``plots`` output
    (SVG and PNG files, unlinked; raises when there is nothing to draw, or no matplotlib for the PNG)."""
    from irspec.report import plots

    def make() -> tuple[list[Any], str | None]:
        drawn = report_figures(report)
        if not drawn:
            return [], "the plan has no runs to plot"
        anchor = None
        if not files:
            from irspec.report.html import query_anchor

            # the figures are the first set's (several sets of judgments): so are the rows they link to
            judged = report.by_qrels[0][0] if report.by_qrels else None
            anchor = lambda query: "#" + query_anchor(query, judged)  # noqa: E731
        with Progress("drawing plots") as progress:
            formats = ("svg", "png") if files else ("svg",)
            return plots.render_figures(drawn, formats=formats, anchor=anchor, progress=progress), None

    found, why = _shared(report, "plot files" if files else "page plots", make)
    if files and why is not None:
        raise IrspecError(why)
    return found, None if why is None else f"No plots: {why}."
