"""Several runs' results as one mapping, and :func:`evaluate` (``irspec.evaluate``), which returns them.

>>> res = irspec.evaluate("qrels.txt", "run.txt", "nDCG@10, AP")            # doctest: +SKIP
>>> res                          # in a notebook: the means with 95% confidence intervals  # doctest: +SKIP
>>> many = irspec.evaluate("qrels.txt", {"bm25": "bm25.run", "dense": df})  # doctest: +SKIP
>>> many["bm25"].aggregate(), many.to_frame(wide=True)                      # doctest: +SKIP
>>> many.show(intervals="bootstrap")                                        # doctest: +SKIP

:func:`evaluate` is the engine's evaluation (:func:`irspec.evaluation.evaluate.evaluate_many`) of one
run, which gives its :class:`~irspec.evaluation.result.Result`, or of several at once (a mapping
``{name: run}`` or a list of paths), which give a :class:`ResultSet`: shown as one table in a
notebook through the report layer (:class:`~irspec.report.notebook.Shown`), as a result is.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from irspec.evaluation.context import MissingQueries, Options
from irspec.evaluation.evaluate import evaluate_many, one_mapping_run, several_runs
from irspec.evaluation.evaluated import collect_warnings, results_frame
from irspec.evaluation.result import Result
from irspec.frozen import frozen
from irspec.report.notebook import Shown
from irspec.spec.registry import Metric

__all__ = ["ResultSet", "evaluate", "one_mapping_run", "several_runs"]


@frozen
class ResultSet(Mapping[str, Result]):
    """The results of several runs evaluated against the same qrels: a mapping run name -> :class:`Result`
    in the order given, shown as one table (a row per run) in a notebook and by ``str()``.

    :func:`irspec.compare` takes it as it is (``irspec.compare(many, baseline="bm25")``).
    """

    results: tuple[Result, ...]

    def __getitem__(self, name: str) -> Result:
        for res in self.results:
            if res.run_name == name:
                return res
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return (res.run_name for res in self.results)

    def __len__(self) -> int:
        return len(self.results)

    def __repr__(self) -> str:
        return f"ResultSet({', '.join(map(repr, self))})"

    @property
    def warnings(self) -> tuple[str, ...]:
        """Every run's warnings, each once."""
        return tuple(collect_warnings(self.results))

    def aggregate(self) -> dict[str, dict[str, float]]:
        """``{run: {metric: mean}}``: each run's :meth:`~irspec.evaluation.result.Result.aggregate`."""
        return {res.run_name: res.aggregate() for res in self.results}

    def to_frame(self, wide: bool = False, backend: str = "polars") -> Any:
        """Every run's per-query values in one data frame, long (``run, query_id, metric, value``) or
        ``wide`` (a column per metric): :func:`irspec.evaluation.evaluated.results_frame`."""
        return results_frame(self.results, wide=wide, backend=backend)

    def show(self, *, intervals: str | None = "t", decimals: int = 4) -> Shown:
        """The runs as a notebook shows them, with ``intervals`` ``"t"``, ``"bootstrap"`` or ``None``."""
        return Shown(self.results, intervals=intervals, decimals=decimals)

    def __str__(self) -> str:
        return str(self.show(intervals=None))

    def _repr_html_(self) -> str:
        return self.show()._repr_html_()

    def _repr_markdown_(self) -> str:
        return self.show()._repr_markdown_()


def evaluate(
    qrels: Any,
    run: Any,
    metrics: str | Metric | Iterable[str | Metric],
    *,
    relevance_level: int = 1,
    depth: int | None = None,
    judged_only: bool = False,
    missing_queries: MissingQueries = "zero",
    collection_size: int | None = None,
    judged_warning: float | None = 0.5,
    columns: Mapping[str, str] | None = None,
    memory: str | int | None = None,
) -> Result | ResultSet:
    """Evaluate one run, or several, against qrels.

    ``qrels`` and ``run`` are file paths (gzip or plain; ``"-"`` for standard input), ``{qid: {docno:
    label}}`` / ``{qid: {docno: score}}`` dicts, pandas or polars DataFrames, or
    :class:`~irspec.data.Qrels` / :class:`~irspec.data.Run` objects; ``qrels`` may also be
    ``"irds:<dataset id>"``, an ir_datasets dataset's (:mod:`irspec.data.datasets`). One run gives a :class:`Result`.
    Several runs give a :class:`ResultSet`: a mapping ``{name: run}`` (the names label the runs) or a
    list of runs (named by their file's stem, standard input by its runid; two of one name become ``name``
    and ``name (2)``);
    the qrels are read and indexed once. ``metrics`` is a spec text (``"nDCG@10, AP"``), a list of
    texts, or bound :class:`~irspec.Metric` objects; with ``irds:`` qrels, ``"irds-official"`` stands
    for the dataset's official measures. See :class:`~irspec.evaluation.context.Options` for the
    keyword options.

    Frames (pandas, polars, polars LazyFrames) and iterables of named tuples (ir_measures' ``Qrel`` and
    ``ScoredDoc``, ir_datasets' ``TrecQrel``) are read by their columns' or fields' names: ir_measures'
    (``query_id, doc_id, relevance | score``), PyTerrier's (``qid, docno, label | score``), or the
    names ``columns`` maps irspec's (``query``, ``docno``, ``label``, ``score``) to, for qrels and runs
    alike: ``columns={"query": "topic"}``; so are Arrow data and Parquet files (given by their path too).
    A TREC text file's fields are fixed: ``columns`` with one is an error. For different names in the
    qrels and the run, read each with :func:`~irspec.data.read_qrels` or :func:`~irspec.data.read_run`
    and its own ``columns``.

    Every result has the run's Judged@10 (``judged_at_10``); under ``judged_warning`` (0.5; ``None``
    for never) it gets a warning that the run's scores are likely underestimated.

    ``memory`` caps the working set (bytes, or ``"1GiB"``, ``"500MB"``): a run file
    too large for it (or above 16 MiB) is evaluated in blocks of whole queries (:mod:`irspec.data.stream`),
    with the same values; by default half the available memory, at most 2 GiB.
    """
    options = Options(relevance_level, depth, judged_only, missing_queries, collection_size, judged_warning)
    several = several_runs(run, columns)
    evaluated = evaluate_many(
        qrels, [run] if several is None else several, metrics, options=options, columns=columns, memory=memory
    )
    if several is None:
        return evaluated[0]
    return ResultSet(tuple(evaluated))
