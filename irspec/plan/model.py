"""The model of an evaluation plan: what :func:`irspec.plan.load_plan` returns once a plan is valid, and
what ``irspec eval`` builds from its command line, so that both run through :func:`irspec.plan.run_plan`.

Plain frozen dataclasses; loading and validation are :mod:`irspec.plan.load`, running a plan is
:mod:`irspec.plan.execute`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from irspec.evaluation.context import Options
from irspec.frozen import frozen
from irspec.spec.registry import Metric

if TYPE_CHECKING:  # a plan without comparisons (most of `irspec eval`'s) never loads their records
    from pathlib import Path

    from irspec.experiment.records import Compare

__all__ = [
    "SCHEMA_PATH",
    "FusedRun",
    "Output",
    "Plan",
    "PlanDiff",
    "PlanRun",
    "PlanSystem",
    "PowerDesign",
    "RecsysSection",
    "ReproduceSection",
    "SparkEngine",
    "Standardize",
]

SCHEMA_PATH: Path  # made when first read (__getattr__)


def __getattr__(name: str) -> Any:
    """``SCHEMA_PATH``, the plan's JSON Schema (draft 2020-12), the single source of truth for what a plan
    may contain: a :class:`~pathlib.Path` made when first read, as pathlib's import (with urllib's) is ~3%
    of an ``irspec eval`` of a small run, which reads no plan file."""
    if name != "SCHEMA_PATH":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from pathlib import Path

    # Shipped inside the package so an installed irspec can validate; specs/plan.schema.json is the
    # same file for editors (tests/test_plan.py keeps the two identical).
    path = globals()["SCHEMA_PATH"] = Path(__file__).resolve().parent.parent / "schemas" / "plan.schema.json"
    return path


@frozen
class FusedRun:
    """The source of a fused run of a plan (its ``fused`` section): the plan's runs ``members`` (names)
    at ``paths``, fused by ``method`` (a bound :class:`~irspec.spec.definitions.Fusion`) and cut to
    ``depth``; it stands as the :attr:`PlanRun.path` of the fused run, which the plan evaluates like any
    run (:func:`irspec.fuse` makes it, in memory; :func:`irspec.cross_fuse` when it is trained without
    ``train``)."""

    members: tuple[str, ...]
    paths: tuple[Path | str, ...]
    method: Any
    depth: int | None = None
    optimize: str | None = None
    """The metric whose mean the parameter search maximises (``optimize``), if any."""
    train: Path | None = None
    """Training qrels (``train``): without them, a method that learns or a search is cross-validated
    over ``folds`` folds of the plan's queries."""
    folds: int = 5

    @property
    def learns(self) -> bool:
        """Whether the fused run is trained on judged queries (a method that learns, or a search)."""
        return self.optimize is not None or bool(self.method.definition.learns)

    def __str__(self) -> str:
        return f"{self.method} of {', '.join(self.members)}"


@frozen
class PlanRun:
    """One run of a plan: its ``name``, resolved ``path`` and where it was declared (``entry``, e.g.
    ``runs[1]``, and its 1-based ``line`` in the plan; ``None`` when it came from an override).

    A run of ``irspec eval`` has its path as typed (``-``: standard input) and no name: it is named as
    it is read (its file's stem, standard input by its runid), and the report's plan carries that name."""

    name: str | None
    path: Path | str | FusedRun
    entry: str
    line: int | None = None


@frozen
class PlanSystem:
    """A system of several runs of one method (seeds, folds): its ``name``, its runs (each a
    :class:`PlanRun` named by its file's stem) and where it was declared (``entry``, ``line``). It is
    reported and compared as one run whose per-topic values are its runs' means
    (:mod:`irspec.evaluation.systems`)."""

    name: str
    runs: tuple[PlanRun, ...]
    entry: str
    line: int | None = None


@frozen
class Output:
    """One output: ``format`` (table, json, csv, tsv, trec, latex, markdown, html, plots, parquet; and
    ``irspec eval``'s jsonl, and zscores: the runs' per-topic means and sample sds as evaluated, in
    trec_eval's -Z format), ``path`` (``None``: standard output; for plots, a directory), ``per_query``,
    ``content`` (``results`` or ``comparisons``), ``decimals`` (of the values in table, latex, markdown
    and html), ``intervals`` (``"t"`` or ``"bootstrap"``: the 95% confidence interval beside each mean
    in those formats), ``runid`` (trec: trec_eval's ``runid`` line, which ``irspec eval`` prints
    with trec_eval's own measure sets) and ``summary`` (trec: ``False`` leaves out the ``all`` lines,
    as trec_eval's ``-n`` does, which ``irspec eval -n`` sets)."""

    format: str
    path: Path | None = None
    per_query: bool = False
    content: str = "results"
    decimals: int = 4
    intervals: str | None = None
    runid: bool = False
    summary: bool = True


@frozen
class PlanDiff:
    """One pair of a plan's ``diff`` section: run ``b`` compared with run ``a`` query by query
    (:func:`irspec.diff`) on ``metrics`` (empty: the plan's), showing the ``top`` documents of each
    ranking and the ``queries`` largest losses and gains (``None``: the format's default), written as
    ``format`` (text, markdown, json, html) to ``path`` (``None``: standard output)."""

    a: str
    b: str
    metrics: tuple[Metric, ...] = ()
    top: int = 10
    queries: int | None = None
    format: str = "html"
    path: Path | None = None
    decimals: int = 4


@frozen
class SparkEngine:
    """A plan's ``engine: {spark: ...}``: evaluate on Spark (:mod:`irspec.evaluation.spark`) with the session of
    ``master`` and ``config`` (the active session when both are empty), in ``partitions`` buckets."""

    master: str | None = None
    config: tuple[tuple[str, str | int | float | bool], ...] = ()
    partitions: int | None = None


@frozen
class Standardize:
    """A plan's ``standardize``: per-topic z-scores (:func:`irspec.standardize`) against the runs named in
    ``reference`` (``None``: every run of the plan) or the trec_eval -Z ``file``; ``cdf`` maps them
    through the standard normal CDF."""

    reference: tuple[str, ...] | None = None
    file: Path | str | None = None
    cdf: bool = False


@frozen
class PowerDesign:
    """A plan's ``power`` section: the minimum difference of interest ``delta`` (on the metric's scale),
    the significance level ``alpha`` and the target ``power`` of :func:`irspec.power`."""

    delta: float
    alpha: float = 0.05
    power: float = 0.8


@frozen
class ReproduceSection:
    """A plan's ``reproduce`` section: the ``original`` baseline and advanced runs and their
    ``reproduced`` runs (names of the plan's runs), the reproductions' ``qrels`` when they are another
    collection's, and RBO's ``rbo_p`` and ``depth`` (:func:`irspec.reproduce`)."""

    original: tuple[str, str]
    reproduced: tuple[str, str]
    qrels: Path | None = None
    rbo_p: float = 0.95
    depth: int = 1000


@frozen
class RecsysSection:
    """A plan's ``recsys`` section: recommenders evaluated from interaction tables
    (:func:`irspec.recsys.read_tables`, then :func:`irspec.evaluate_topk`). ``test`` the held-out
    interactions; the plan's :attr:`Plan.runs` are the systems' recommendations tables (a ``rank`` or a
    ``score`` column), read over one index of users and items; ``exclude`` the training interactions
    removed from each list before the cut; ``popularity`` the interactions whose counts are the items'
    popularity (ARP@k, APLT@k, Novelty@k); ``features`` the items' features (ILD@k) and ``expected`` the
    items each user expects (Serendipity(expected=items)@k); ``propensity`` Jain et al.'s ``(A, B)``, the model fitted
    to ``popularity``'s table (else ``exclude``'s; N the users it lists) for PSP@k and PSnDCG@k; ``empty_users`` ``skip`` or
    ``zero``; ``columns`` the tables' column names as ``(role, name)`` pairs
    (:class:`irspec.recsys.Columns`' fields)."""

    test: Path | str
    exclude: Path | str | None = None
    popularity: Path | str | None = None
    propensity: tuple[float, float] | None = None
    empty_users: str = "skip"
    columns: tuple[tuple[str, str], ...] = ()
    features: Path | str | None = None
    expected: Path | str | None = None

    @property
    def named_tables(self) -> tuple[tuple[str, Path | str], ...]:
        """The tables it reads besides the recommendations, each with its key (``test``, ``exclude``,
        ``popularity``, ``features``, ``expected``), in that order: one path may stand for two keys."""
        found = (
            ("test", self.test),
            ("exclude", self.exclude),
            ("popularity", self.popularity),
            ("features", self.features),
            ("expected", self.expected),
        )
        return tuple((key, path) for key, path in found if path is not None)

    @property
    def tables(self) -> tuple[Path | str, ...]:
        """The tables it reads (not the recommendations'), each once, in order."""
        return tuple(dict.fromkeys(path for _, path in self.named_tables))


@frozen
class Plan:
    """A loaded, validated evaluation plan (see :func:`irspec.plan.load_plan`). Paths are resolved against the
    plan file's directory; ``metrics`` are bound :class:`~irspec.Metric` objects. ``qrels`` is a path, the
    text ``irds:<id>`` (an ir_datasets dataset's qrels, :mod:`irspec.data.datasets`), or ``None`` (and ``runs``
    empty) in a plan that evaluates only an interaction ``log``.

    ``source`` is the plan file; ``None`` for the plan ``irspec eval`` builds from its command line
    (paths as typed, runs named as they are read), whose JSON then says nothing of a plan."""

    source: str | None
    qrels: Path | str | None
    runs: tuple[PlanRun, ...]
    metrics: tuple[Metric, ...]
    options: Options
    compare: Compare | None
    outputs: tuple[Output, ...]
    overrides: tuple[str, ...] = ()
    log: Path | None = None
    engine: SparkEngine | None = None
    """``None``: the runs are evaluated in this process."""
    memory: int | None = None
    """The cap on the working set in bytes (``options.memory``); None for the default."""
    standardize: Standardize | None = None
    """``None``: the runs' raw scores are reported."""
    groups: Path | str | None = None
    """A file of ``query_id group`` lines: per-group means with intervals beside each run (``None``: none)."""
    systems: tuple[PlanSystem, ...] = ()
    """Systems of several runs, reported and compared after ``runs``."""
    power: PowerDesign | None = None
    """The ``power`` section; ``None``: no power tables."""
    reproduce: ReproduceSection | None = None
    """The ``reproduce`` section; ``None``: no reproduction measured."""
    qrels_sets: tuple[tuple[str, Path | str], ...] = ()
    """Several sets of judgments (``qrels`` given as a mapping ``{name: path}``), in plan order: every run
    is evaluated against each and the sets' agreement reported; ``qrels`` is then the first set's.
    Empty for a plan with one qrels."""
    sections: tuple[tuple[str, Any], ...] = ()
    """The plugins' sections of the plan (:class:`~irspec.spec.definitions.PlanSection`: irspec-online's
    ``ab:``, an A/B test of the log's arms) as ``(key, value)`` in plan order: each value goes to the
    ``log``'s reader as the keyword argument of its key."""
    diffs: tuple[PlanDiff, ...] = ()
    """The ``diff`` section: pairs of runs compared query by query, each written as an output of its own."""
    recsys: RecsysSection | None = None
    """The ``recsys`` section: ``runs`` are then recommendations tables, evaluated against its held-out
    interactions (``qrels`` is ``None``); ``None`` for a plan of qrels and runs."""

    @property
    def inputs(self) -> tuple[Path | str, ...]:
        """Every file the plan reads, as given: the plan file itself, the qrels (each set), the runs and
        the members of fused runs with their training qrels, the systems' runs, the log, a -Z file, the
        groups, the reproductions' qrels and the ``recsys`` section's tables. No output may overwrite one
        (:class:`irspec.report.files.Inputs`, which passes over ``-`` and ``irds:`` ids)."""
        found: list[Path | str | None] = [self.source, self.qrels, *(path for _, path in self.qrels_sets)]
        for run in (*self.runs, *(r for s in self.systems for r in s.runs)):
            if isinstance(run.path, FusedRun):
                found += [*run.path.paths, run.path.train]
            else:
                found.append(run.path)
        found += [self.log, self.standardize.file if self.standardize else None, self.groups]
        found.append(self.reproduce.qrels if self.reproduce else None)
        found += self.recsys.tables if self.recsys else ()
        return tuple(p for p in found if p is not None)

    @property
    def run_names(self) -> tuple[str | None, ...]:
        """The runs' names, in plan order (``None`` for a run of ``irspec eval`` not yet read)."""
        return tuple(r.name for r in self.runs)
