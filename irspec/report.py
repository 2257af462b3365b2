"""Formatting evaluation results: terminal table, JSON, CSV/TSV, trec_eval's own lines, LaTeX, Markdown, HTML.

Formatters return text and write nothing; :func:`write_atomic` puts text into a file (and
:func:`write_files_atomic` files into a directory) so that a failed run never leaves a half-written
file behind. The tables of a plan (significance marks, legends, one row per comparison) are made here
too, from the plan's comparisons; :mod:`irspec.plots` draws the figures.
"""

from __future__ import annotations

import errno
import json
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from irspec.engine import Result, collect_warnings
from irspec.errors import IrspecError
from irspec.version import __version__

__all__ = [
    "FORMATS",
    "format_results",
    "to_json",
    "to_trec",
    "to_delimited",
    "to_table",
    "to_latex",
    "to_markdown",
    "to_html",
    "marked_table",
    "comparisons_table",
    "comparisons_delimited",
    "significance_marks",
    "Marks",
    "provenance",
    "sha256_file",
    "check_writable",
    "write_atomic",
    "write_all_atomic",
    "write_files_atomic",
]

FORMATS = ("table", "json", "csv", "tsv", "trec", "latex", "markdown")
"""Output formats of ``irspec eval``."""

# trec_eval prints these only in the summary: a per-query num_q or geometric mean means nothing.
_SUMMARY_ONLY = {"NumQ", "GMAP", "gm_bpref"}


def _label(metric: Any, trec: bool) -> str:
    return (metric.trec_name or str(metric)) if trec else str(metric)


def _number(value: float, metric: Any) -> str:
    if math.isnan(value):
        return "nan"
    if metric.aggregate == "sum" and float(value).is_integer():
        return str(int(value))
    return f"{value:6.4f}"


# trec_eval prints measures in the order of its internal table (measures.c), not the order asked.
TREC_ORDER = (
    "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P relstring "
    "recall infAP gm_bpref Rprec_mult utility 11pt_avg binG G dcg ideal_dcg ndcg ndcg_rel Rndcg ndcg_cut "
    "map_cut relative_P success set_P set_relative_P set_recall set_map set_F num_nonrel_judged_ret yaap rbp "
    "rbp_resid unj"
).split()
_TREC_RANK = {name: i for i, name in enumerate(TREC_ORDER)}


def trec_order(metrics: Sequence[Any]) -> list[Any]:
    """Metrics in trec_eval's output order (cutoffs ascending); those trec_eval lacks keep their order, last."""

    from irspec.registry import split_trec_name

    def key(item: tuple[int, Any]) -> tuple[int, float, int]:
        i, m = item
        if m.trec_name is None:
            return (len(TREC_ORDER), 0.0, i)
        root, param = split_trec_name(m.trec_name)
        try:
            value = float(param)
        except ValueError:  # a parameter list (utility_2,-1,0,0) or none: keep the order given
            value = 0.0
        return (_TREC_RANK.get(root, len(TREC_ORDER)), value, i)

    return [m for _, m in sorted(enumerate(metrics), key=key)]


def to_trec(results: Sequence[Result], *, per_query: bool = False, runid: bool = False, summary: bool = True) -> str:
    """trec_eval's output: ``measure<TAB>qid<TAB>value`` lines, the name left-aligned to 22 columns.

    Per-query lines come first (queries in order, each with its measures), then the summary (``all``);
    ``runid`` adds trec_eval's ``runid all NAME`` line, as its official and all_trec sets do.
    """
    lines: list[str] = []
    for res in results:
        ordered = [(res.metrics.index(m), m) for m in trec_order(res.metrics)]
        if per_query:
            for i, qid in enumerate(res.query_ids):
                for j, m in ordered:
                    if m.aggregate == "none":  # relstring: a quoted string, per query only
                        lines.append(f"{_label(m, True):<22}\t{qid}\t'{res.texts[str(m)][i]}'")
                        continue
                    if m.name in _SUMMARY_ONLY or math.isnan(res.values[i, j]):
                        continue
                    lines.append(f"{_label(m, True):<22}\t{qid}\t{_number(res.values[i, j], m)}")
        if summary:
            if runid:
                lines.append(f"{'runid':<22}\tall\t{res.run_name}")
            agg = res.aggregate()
            for _, m in ordered:
                if m.aggregate == "none":
                    continue
                lines.append(f"{_label(m, True):<22}\tall\t{_number(agg[str(m)], m)}")
    return "\n".join(lines) + ("\n" if lines else "")


def _clean(value: float) -> float | None:
    return None if math.isnan(value) else value


def to_json(results: Sequence[Result], *, per_query: bool = False, extra: dict | None = None) -> str:
    """One JSON document: metrics (canonical), options, warnings, and per run its aggregate (and per query).

    ``warnings`` at the top lists every warning once; each run's entry has its own ``warnings`` too.
    """
    first = results[0] if results else None
    names: list[str] = []  # every metric of every result (a log's beside the runs'), first seen first
    for res in results:
        names.extend(str(m) for m in res.metrics if str(m) not in names)
    doc: dict[str, Any] = {
        "metrics": names,
        "options": first.options.as_dict() if first else {},
        "warnings": collect_warnings(results),
        "runs": [],
    }
    for res in results:
        entry: dict[str, Any] = {
            "name": res.run_name,
            "path": res.run_source,
            "warnings": list(res.warnings),
            "aggregate": res.aggregate(),
        }
        if per_query:
            entry["per_query"] = {
                q: {k: _clean(v) for k, v in row.items()} for q, row in res.per_query().items()
            }
        doc["runs"].append(entry)
    if extra:
        doc.update(extra)
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"


def to_delimited(results: Sequence[Result], *, sep: str = ",", per_query: bool = False) -> str:
    """Long-format CSV/TSV: ``run, query, metric, value`` rows (``query`` is ``all`` for the summary)."""
    import csv
    import io

    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=sep, lineterminator="\n")
    writer.writerow(["run", "query", "metric", "value"])
    for res in results:
        if per_query:
            for i, qid in enumerate(res.query_ids):
                for j, m in enumerate(res.metrics):
                    v = res.values[i, j]
                    writer.writerow([res.run_name, qid, str(m), "" if math.isnan(v) else repr(float(v))])
        for name, v in res.aggregate().items():
            writer.writerow([res.run_name, "all", name, repr(float(v))])
    return buf.getvalue()


def to_table(results: Sequence[Result], *, per_query: bool = False, decimals: int = 4) -> str:
    """An aligned text table: runs as rows (with per-query rows under each run), metrics as columns.

    Results with different metrics (a plan's runs and its log) get one table each, a blank line apart.
    """
    if not results:
        return ""
    blocks: list[list[Result]] = []
    for res in results:
        if blocks and blocks[-1][0].metrics == res.metrics:
            blocks[-1].append(res)
        else:
            blocks.append([res])
    if len(blocks) > 1:
        return "\n".join(to_table(b, per_query=per_query, decimals=decimals) for b in blocks)
    metrics = results[0].metrics
    header = ["run", "query"] if per_query else ["run"]
    header += [str(m) for m in metrics]
    rows: list[list[str]] = []

    def fmt(v: float, m: Any) -> str:
        if math.isnan(v):
            return "-"
        if m.aggregate == "sum" and float(v).is_integer():
            return str(int(v))
        return f"{v:.{decimals}f}"

    for res in results:
        agg = res.aggregate()
        if per_query:
            for i, qid in enumerate(res.query_ids):
                rows.append([res.run_name, qid] + [fmt(res.values[i, j], m) for j, m in enumerate(metrics)])
        rows.append([res.run_name] + (["all"] if per_query else []) + [fmt(agg[str(m)], m) for m in metrics])
    widths = [max(len(r[c]) for r in [header, *rows]) for c in range(len(header))]
    text_cols = 2 if per_query else 1

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i < text_cols else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    out = [line(header), "  ".join("-" * w for w in widths)] + [line(r) for r in rows]
    return "\n".join(s.rstrip() for s in out) + "\n"


def format_results(
    results: Sequence[Result],
    fmt: str,
    *,
    per_query: bool = False,
    runid: bool = False,
    decimals: int = 4,
    provenance: dict[str, Any] | None = None,
) -> str:
    """Format results in one of :data:`FORMATS`; ``provenance`` (see :func:`provenance`) goes into JSON.

    ``decimals`` applies to the table, LaTeX and Markdown; LaTeX and Markdown show the aggregates only.
    """
    if fmt == "trec":
        return to_trec(results, per_query=per_query, runid=runid)
    if fmt == "json":
        return to_json(results, per_query=per_query, extra={"provenance": provenance} if provenance else None)
    if fmt == "latex":
        return to_latex(results, decimals=decimals)
    if fmt == "markdown":
        return to_markdown(results, decimals=decimals)
    if fmt in ("csv", "tsv"):
        return to_delimited(results, sep="," if fmt == "csv" else "\t", per_query=per_query)
    if fmt == "table":
        return to_table(results, per_query=per_query, decimals=decimals)
    raise ValueError(f"unknown format {fmt!r}")


def _temporary(target: Path, *, directory: bool) -> tuple[int, str]:
    """A new temporary file (open, as ``(fd, path)``) or directory (``(-1, path)``) beside ``target``.

    Created with the usual modes (0o666, 0o777) less the umask, as a plain ``open`` would, so the
    renamed output is readable as any other file (:func:`tempfile.mkstemp` would make it private).
    An error names the directory, where the user can act, not the temporary name.
    """
    import secrets

    for _ in range(100):
        name = str(target.parent / f".{target.name}.{secrets.token_hex(4)}.tmp")
        try:
            if directory:
                os.mkdir(name, 0o777)
                return -1, name
            return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666), name
        except FileExistsError:
            continue
        except OSError as e:
            raise OSError(e.errno, e.strerror, str(target.parent)) from None
    raise FileExistsError(errno.EEXIST, "cannot create a temporary file", str(target.parent))


def write_atomic(path: str | os.PathLike[str], text: str, *, make_dirs: bool = True) -> None:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file and a rename.

    Readers never see a half-written file. Missing directories are created, unless ``make_dirs`` is
    false. An error (an :class:`~irspec.errors.IrspecError`, ``cannot write 'path': why``) leaves any
    previous file untouched and no temporary file behind; see :func:`write_all_atomic`.
    """
    write_all_atomic([(path, text)], make_dirs=make_dirs)


def write_all_atomic(
    outputs: Sequence[tuple[str | os.PathLike[str], str | dict[str, bytes]]], *, make_dirs: bool = True
) -> None:
    """Write every output or none: each ``(path, text)`` for a file, or ``(path, {name: bytes})`` for
    files in a directory (other files in it are left alone).

    Each output is checked (a file's path must not be a directory, nor a directory's a file) and
    written in full to a temporary file or directory beside its target; only when all are written are
    they renamed into place. An error before then removes the temporaries and the directories made
    for them, so every target is as it was, and is raised as an :class:`~irspec.errors.IrspecError`
    (``cannot write 'path': why``) when it is the system's. The renames themselves, within one
    directory each, can fail only with the file system; the outputs renamed by then stay.
    """
    staged: list[_Staged] = []
    created: list[Path] = []  # directories made for the outputs, parents first
    target: Any = None
    try:
        for target, content in outputs:
            staged.append(_Staged(Path(target)))
            staged[-1].write(content, make_dirs, created)
        for item in staged:
            target = item.target
            item.commit()
    except BaseException as e:
        for item in staged:
            item.discard()
        for directory in reversed(created):
            try:
                directory.rmdir()
            except OSError:  # an output was renamed into it
                pass
        if isinstance(e, OSError):
            raise _cannot_write(target, e) from None
        raise


def check_writable(path: str | os.PathLike[str]) -> None:
    """Raise the error :func:`write_atomic` with ``make_dirs=False`` would for ``path`` when it can
    be seen already (a directory, a directory missing or not one), so a long run fails first."""
    target = Path(path)
    try:
        _file_target(target, False, [])
    except OSError as e:
        raise _cannot_write(target, e) from None


def _cannot_write(target: Any, error: OSError) -> IrspecError:
    reason = error.strerror or str(error)
    reason = reason[:1].lower() + reason[1:]
    if error.filename is not None and os.fspath(error.filename) != os.fspath(target):
        reason += f": {os.fspath(error.filename)!r}"
    return IrspecError(f"cannot write {os.fspath(target)!r}: {reason}")


def _make_parent(directory: Path, make_dirs: bool, created: list[Path]) -> None:
    """Make sure ``directory`` exists (creating it and its missing parents, recorded in ``created``)."""
    missing = []
    while not directory.is_dir():
        if directory.exists() or directory == directory.parent:
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", str(directory))
        missing.append(directory)
        directory = directory.parent
    if missing and not make_dirs:
        raise FileNotFoundError(errno.ENOENT, "No such directory", str(missing[0]))
    for directory in reversed(missing):
        os.mkdir(directory)
        created.append(directory)


def _file_target(target: Path, make_dirs: bool, created: list[Path]) -> None:
    """Make sure ``target`` can become a file: not a directory, in a directory (made if need be)."""
    _make_parent(target.parent, make_dirs, created)
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, "Is a directory", str(target))


class _Staged:
    """One output on its way: written to ``tmp`` beside ``target`` (:meth:`write`), then renamed over it
    (:meth:`commit`) or removed (:meth:`discard`). ``names`` are the files of a directory output."""

    def __init__(self, target: Path) -> None:
        self.target = target
        self.tmp: Path | None = None
        self.names: list[str] | None = None

    def write(self, content: str | dict[str, bytes], make_dirs: bool, created: list[Path]) -> None:
        target = self.target
        if isinstance(content, str):
            _file_target(target, make_dirs, created)
            fd, tmp = _temporary(target, directory=False)
            self.tmp = Path(tmp)
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
                f.write(content)
            return
        for name in content:
            if os.sep in name or (os.altsep and os.altsep in name) or name in ("", ".", ".."):
                raise ValueError(f"not a file name: {name!r}")
            if (target / name).is_dir():
                raise IsADirectoryError(errno.EISDIR, "Is a directory", str(target / name))
        _make_parent(target.parent, make_dirs, created)
        if target.exists() and not target.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", str(target))
        self.tmp = Path(_temporary(target, directory=True)[1])
        self.names = list(content)
        for name, data in content.items():
            (self.tmp / name).write_bytes(data)

    def commit(self) -> None:
        if self.names is None or not self.target.exists():
            os.replace(self.tmp, self.target)  # a new directory appears whole, in one step
        else:
            for name in self.names:
                os.replace(self.tmp / name, self.target / name)
            self.tmp.rmdir()
        self.tmp = None

    def discard(self) -> None:
        import shutil

        if self.tmp is not None and self.names is None:
            self.tmp.unlink(missing_ok=True)
        elif self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
        self.tmp = None


# --------------------------------------------------------------------------------------------------
# Significance marks and the words that explain them, shared by the text table, LaTeX, Markdown and HTML
#
# ``comparisons`` below are :class:`irspec.plan.Comparison` objects and ``compare`` the settings that
# made them (:class:`irspec.plan.Compare`); report.py reads their attributes and imports neither.

def direction(metric: Any) -> int:
    """+1 when a higher value of ``metric`` is better, -1 when a lower one is, 0 when neither is (its
    definition's ``better``)."""
    definition = getattr(metric, "definition", None)
    return {"higher": 1, "lower": -1, "neither": 0}[getattr(definition, "better", "higher")]


def letters(n: int) -> list[str]:
    """``a, b, ..., z, aa, ab, ...``: the letters naming ``n`` runs in tables without a baseline."""
    out = []
    for i in range(n):
        s, i = "", i + 1
        while i:
            i, r = divmod(i - 1, 26)
            s = chr(ord("a") + r) + s
        out.append(s)
    return out


@dataclass(frozen=True)
class Marks:
    """Which run is significantly better than which, per ``(run, metric)`` cell of a results table.

    With a ``baseline``, ``cells`` holds ``"better"`` or ``"worse"`` (than the baseline). Without one,
    every run has a letter (``letter``) and ``cells`` holds the letters of the runs it is significantly
    better than, in run order. Cells without a significant difference are absent.
    """

    baseline: str | None
    letter: dict[str, str]
    cells: dict[tuple[str, str], str]

    def __bool__(self) -> bool:
        return self.baseline is not None or bool(self.letter)


def significance_marks(results: Sequence[Result], comparisons: Sequence[Any], compare: Any) -> Marks:
    """The marks of a results table: from the significant ``comparisons``, in the metrics' direction."""
    if compare is None:
        return Marks(None, {}, {})
    ways = {str(m): direction(m) for res in results for m in res.metrics}
    cells: dict[tuple[str, str], str] = {}
    if compare.baseline is not None:
        for c in comparisons:
            way = ways.get(c.metric, 1) * ((c.mean_difference > 0) - (c.mean_difference < 0))
            if c.significant and way:
                cells[(c.a, c.metric)] = "better" if way > 0 else "worse"
        return Marks(compare.baseline, {}, cells)
    names = [r.run_name for r in results if any(r.run_name in (c.a, c.b) for c in comparisons)]
    names = names or [r.run_name for r in results]
    letter = dict(zip(names, letters(len(names))))
    beaten: dict[tuple[str, str], set[str]] = {}
    for c in comparisons:
        way = ways.get(c.metric, 1) * ((c.mean_difference > 0) - (c.mean_difference < 0))
        if c.significant and way and c.a in letter and c.b in letter:
            winner, loser = (c.a, c.b) if way > 0 else (c.b, c.a)
            beaten.setdefault((winner, c.metric), set()).add(letter[loser])
    order = list(letter.values())
    return Marks(None, letter, {k: "".join(sorted(v, key=order.index)) for k, v in beaten.items()})


TEST_NAMES = {
    "t": "paired t-test",
    "randomization": "sign-flip randomization test",
    "bootstrap": "paired bootstrap test",
    "wilcoxon": "Wilcoxon signed-rank test, whose null is symmetry around 0, not a zero mean",
    "sign": "sign test, whose null is P(a>b) = P(a<b), not a zero mean",
    "tukey": "paired Tukey HSD, two-way ANOVA of runs x queries",
    "randomized-tukey": "randomised Tukey HSD of Carterette (2012)",
}
"""Each significance test in words, as legends and captions name it."""

CORRECTION_NAMES = {
    "none": "no correction",
    "bonferroni": "Bonferroni correction",
    "holm": "Holm correction",
    "bh": "Benjamini-Hochberg correction",
    "by": "Benjamini-Yekutieli correction",
}
"""Each multiple-comparison correction in words."""

_TUKEY_TESTS = ("tukey", "randomized-tukey")


def query_count(results: Sequence[Result], comparisons: Sequence[Any] = ()) -> str:
    """``"50 queries"`` (or ``"48-50 queries"``): those compared, else those evaluated (by the results with
    the first result's metrics: the runs, not a log reported beside them)."""
    ns = sorted({c.n for c in comparisons} or {len(r.query_ids) for r in results if r.metrics == results[0].metrics})
    if not ns:
        return "no queries"
    if len(ns) == 1:
        return f"{ns[0]} quer{'y' if ns[0] == 1 else 'ies'}"
    return f"{ns[0]}-{ns[-1]} queries"


def method_parts(results: Sequence[Result], comparisons: Sequence[Any], compare: Any) -> tuple[str, str, float, str]:
    """The test, the correction and its family, alpha, and the number of queries, in words."""
    test = TEST_NAMES.get(compare.test, compare.test)
    if compare.test in ("randomization", "bootstrap", "randomized-tukey"):
        if comparisons and all(c.exact for c in comparisons):
            test += ", exact enumeration"
        else:
            what = "resamples" if compare.test == "bootstrap" else "permutations"
            test += f", {compare.permutations} {what}, seed {compare.seed}"
    compared = {n for c in comparisons for n in (c.a, c.b)} or {r.run_name for r in results}
    metrics = {c.metric for c in comparisons} or {str(m) for m in results[0].metrics}
    correction_name = CORRECTION_NAMES.get(compare.correction, compare.correction)
    if compare.test in _TUKEY_TESTS:
        n_runs = len(compared)
        correction = f"adjusted over all {n_runs * (n_runs - 1) // 2} pairs of runs of each metric"
    elif compare.family == "all":
        n = len(comparisons)
        correction = f"{correction_name} over all {n} comparison{'s' if n != 1 else ''}"
    else:
        per = len(comparisons) // max(1, len(metrics))
        correction = f"{correction_name} over the {per} comparison{'s' if per != 1 else ''} of each metric"
    return test, correction, compare.alpha, query_count(results, comparisons)


def _marks_legend(
    results: Sequence[Result],
    marks: Any,
    comparisons: Sequence[Any],
    compare: Any,
    escape: Callable[[str], str],
    better_worse: str,
    alpha_format: str,
) -> str:
    """The sentence that explains a results table's significance marks, in one markup: ``escape``
    escapes text, ``better_worse`` is the markup of the two baseline marks, ``alpha_format`` shows alpha."""
    test, correction, alpha, queries = method_parts(results, comparisons, compare)
    if marks.baseline is not None:
        what = f"{better_worse}: significantly better/worse than {escape(marks.baseline)}"
    else:
        what = "Superscript letters: significantly better than the run with that letter"
    compared = "" if queries == query_count(results) else f"; compared on {queries}"
    return f"{what} ({escape(test)}; {escape(correction)}; {alpha_format.format(alpha)}{compared})."


def method_text(results: Sequence[Result], comparisons: Sequence[Any], compare: Any) -> str:
    """The test, correction and family, alpha and number of queries in one line, as legends say it."""
    test, correction, alpha, queries = method_parts(results, comparisons, compare)
    return f"{test}; {correction}; alpha {alpha:g}; {queries}"


def _blocks(results: Sequence[Result]) -> list[list[Result]]:
    """Consecutive results with the same metrics: one table each."""
    blocks: list[list[Result]] = []
    for res in results:
        if blocks and blocks[-1][0].metrics == res.metrics:
            blocks[-1].append(res)
        else:
            blocks.append([res])
    return blocks


def _value_text(value: float, metric: Any, decimals: int) -> str:
    """A value as tables show it: ``decimals`` places, counts as integers, ``-`` when undefined."""
    if math.isnan(value):
        return "-"
    if metric.aggregate == "sum" and float(value).is_integer():
        return str(int(value))
    return f"{value:.{decimals}f}"


def _best(block: Sequence[Result], decimals: int) -> dict[tuple[str, str], bool]:
    """The cells holding the best value of their column, as shown (ties at the shown precision all count)."""
    out: dict[tuple[str, str], bool] = {}
    if len(block) < 2:
        return out
    for m in block[0].metrics:
        way = direction(m)
        if not way:
            continue
        shown = {}
        for res in block:
            v = res.aggregate()[str(m)]
            if not math.isnan(v):
                shown[res.run_name] = float(_value_text(v, m, decimals))
        if len(set(shown.values())) < 2:
            continue  # all equal: nothing stands out
        top = max(shown.values()) if way > 0 else min(shown.values())
        for name, v in shown.items():
            if v == top:
                out[(name, str(m))] = True
    return out


def _check_decimals(decimals: int) -> None:
    if isinstance(decimals, bool) or not isinstance(decimals, int) or not 0 <= decimals <= 10:
        raise ValueError(f"decimals must be an integer from 0 to 10, got {decimals!r}")


# --------------------------------------------------------------------------------------------------
# The plan's text tables: results with marks, and one row per comparison


def _align(header: list[str], rows: list[list[str]], text_cols: int) -> list[str]:
    widths = [max(len(r[c]) for r in [header, *rows]) for c in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i < text_cols else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    return [s.rstrip() for s in [line(header), "  ".join("-" * w for w in widths), *(line(r) for r in rows)]]


def marked_table(
    results: Sequence[Result],
    comparisons: Sequence[Any],
    compare: Any,
    *,
    notes: Sequence[str] = (),
    per_query: bool = False,
    arrows: tuple[str, str] = ("▲", "▼"),
    decimals: int = 4,
) -> str:
    """The text table with significance marks after the values, and a legend.

    With a baseline, ``arrows`` (▲/▼) after a run's value: significantly better/worse than the baseline.
    Without one, each run gets a letter and a value is followed by the letters of the runs it is
    significantly better than.
    """
    _check_decimals(decimals)
    marks = significance_marks(results, comparisons, compare)
    up, down = arrows
    shown = {k: (up if v == "better" else down) if marks.baseline is not None else v for k, v in marks.cells.items()}
    width = max((len(m) for m in shown.values()), default=1)

    def label(name: str) -> str:
        if marks.baseline is not None:
            return name + (" (baseline)" if name == marks.baseline else "")
        return f"({marks.letter[name]}) {name}" if name in marks.letter else name

    lines: list[str] = []
    for block in _blocks(results):
        metrics = block[0].metrics
        header = ["run", "query"] if per_query else ["run"]
        header += [str(m) for m in metrics]
        rows: list[list[str]] = []
        for res in block:
            if per_query:
                for i, qid in enumerate(res.query_ids):
                    values = [_value_text(res.values[i, j], m, decimals) + " " * (width + 1) for j, m in enumerate(metrics)]
                    rows.append([res.run_name, qid, *values])
            agg = res.aggregate()
            cells = [
                _value_text(agg[str(m)], m, decimals) + " " + shown.get((res.run_name, str(m)), "").ljust(width)
                for m in metrics
            ]
            rows.append([label(res.run_name)] + (["all"] if per_query else []) + cells)
        if lines:
            lines.append("")
        lines.extend(_align(header, rows, 2 if per_query else 1))
    lines.append("")
    if marks.baseline is not None:
        what = f"{up}/{down}: significantly better/worse than {marks.baseline}"
    else:
        what = "letters: significantly better than the run with that letter"
    lines.append(f"{what} ({method_text(results, comparisons, compare)}).")
    lines.extend(f"note: {n}" for n in notes)
    return "\n".join(lines) + "\n"


def _p(p: float) -> str:
    return f"{p:.4f}" if p >= 1e-3 or p == 0 else f"{p:.1e}"


def comparison_rows(comparisons: Sequence[Any], *, decimals: int = 4) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the comparison table: difference, interval, effect size, W/T/L, p, adjusted p."""
    header = ["metric", "a", "b", "mean a", "mean b", "diff", "CI", "d", "W/T/L", "p", "p adj", "sig"]
    rows = []
    for c in comparisons:
        ci = "-" if c.ci_low is None or c.ci_high is None else f"[{c.ci_low:+.{decimals}f}, {c.ci_high:+.{decimals}f}]"
        rows.append(
            [
                c.metric,
                c.a,
                c.b,
                f"{c.mean_a:.{decimals}f}",
                f"{c.mean_b:.{decimals}f}",
                f"{c.mean_difference:+.{decimals}f}",
                ci,
                "-" if c.effect_size is None else f"{c.effect_size:+.2f}",
                f"{c.wins}/{c.ties}/{c.losses}",
                _p(c.p_value),
                _p(c.p_adjusted),
                "*" if c.significant else "",
            ]
        )
    return header, rows


def _comparison_legend(results: Sequence[Result], comparisons: Sequence[Any], compare: Any) -> str:
    c0 = comparisons[0]
    return (
        f"diff = mean a - mean b with its {c0.confidence:.0%} CI ({c0.ci_method}); d = paired Cohen's d; "
        f"* = adjusted p <= {c0.alpha:g} ({method_text(results, comparisons, compare)})."
    )


def comparisons_table(
    results: Sequence[Result], comparisons: Sequence[Any], compare: Any, *, notes: Sequence[str] = (), decimals: int = 4
) -> str:
    """One aligned row per comparison: the difference, its interval, effect size, W/T/L, p and adjusted p."""
    header, rows = comparison_rows(comparisons, decimals=decimals)
    lines = _align(header, rows, 3)
    if comparisons:
        lines.append("")
        lines.append(_comparison_legend(results, comparisons, compare))
        lines.extend(f"note: {n}" for n in notes)
    return "\n".join(lines) + "\n"


def comparisons_delimited(comparisons: Sequence[Any], *, sep: str = ",") -> str:
    """CSV/TSV of the comparisons: one row each, every field of :class:`irspec.plan.Comparison`."""
    import csv
    import dataclasses
    import io

    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=sep, lineterminator="\n")
    fields: list[str] = []
    for c in comparisons:
        fields = [f.name for f in dataclasses.fields(c)]
        break
    if not fields:
        from irspec.plan import Comparison

        fields = [f.name for f in dataclasses.fields(Comparison)]
    writer.writerow(fields)
    for c in comparisons:
        row = []
        for name in fields:
            v = getattr(c, name)
            if v is None:
                v = ""
            elif isinstance(v, bool):
                v = "true" if v else "false"
            elif isinstance(v, float):
                v = repr(v)
            row.append(v)
        writer.writerow(row)
    return buf.getvalue()


# --------------------------------------------------------------------------------------------------
# LaTeX

_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    # not special, but the default OT1 font encoding prints these as other glyphs
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped, for a table cell or a caption.

    ``@`` needs no escaping outside macro names; a line break becomes a space, and ``--`` stays two
    hyphens (not an en dash).
    """
    escaped = "".join(_LATEX_SPECIALS.get(ch, ch) for ch in " ".join(str(text).splitlines()))
    return escaped.replace("--", "-{}-").replace("--", "-{}-")


def _latex_number(text: str) -> str:
    return "$-$" + text[1:] if text.startswith("-") and text != "-" else ("--" if text == "-" else text)


_LATEX_MARKS = {"better": r"$\dagger$", "worse": r"$\downarrow$"}


def _run_label(name: str, marks: Any, escape: Callable[[str], str]) -> str:
    """A run's row label: ``bm25 (baseline)``, ``(a) bm25`` when runs are lettered, or the name."""
    if marks.baseline is not None and name == marks.baseline:
        return escape(name) + " (baseline)"
    if name in marks.letter:
        return f"({marks.letter[name]}) " + escape(name)
    return escape(name)


def to_latex(
    results: Sequence[Result],
    *,
    comparisons: Sequence[Any] = (),
    compare: Any = None,
    notes: Sequence[str] = (),
    decimals: int = 4,
    content: str = "results",
) -> str:
    r"""A LaTeX ``table`` (booktabs): runs as rows, metrics as columns, the best value of each column in
    bold, significance marks as superscripts, and a caption stating the test, correction, alpha and
    number of queries.

    With a baseline, a dagger marks a run significantly better than the baseline and a down arrow one
    significantly worse; without one, each run has a letter and a value carries the letters of the runs
    it is significantly better than, as IR papers do. The marks have a column of their own (``r@{}l``)
    so that the numbers of a column stay aligned. The preamble needs ``\usepackage{booktabs}``.
    ``content="comparisons"`` gives one row per comparison instead.
    """
    _check_decimals(decimals)
    if content == "comparisons":
        return _latex_comparisons(results, comparisons, compare, notes, decimals)
    marks = significance_marks(results, comparisons, compare)
    blocks = _blocks(results)
    out = [r"% irspec results table; the preamble needs \usepackage{booktabs}", r"\begin{table}[tbp]", r"  \centering"]
    caption = [f"Mean over {query_count(results)}."]
    if any(_best(b, decimals) for b in blocks):
        caption.append("The best value of each metric is in bold.")
    if marks:
        dagger_arrow = r"\textsuperscript{$\dagger$}/\textsuperscript{$\downarrow$}"
        caption.append(_marks_legend(results, marks, comparisons, compare, latex_escape, dagger_arrow, r"$\alpha = {:g}$"))
    out.append(r"  \caption{" + " ".join(caption) + "}")
    for n, block in enumerate(blocks):
        metrics = block[0].metrics
        best = _best(block, decimals)
        # a value and its marks in two columns (r@{}l), so that the numbers align
        marked = any(marks.cells.get((r.run_name, str(m))) for r in block for m in metrics)
        if n:
            out.append(r"  \medskip")
        out.append(r"  \begin{tabular}{l" + ("r@{}l" if marked else "r") * len(metrics) + "}")
        out.append(r"    \toprule")
        heads = [latex_escape(str(m)) for m in metrics]
        if marked:
            heads = [r"\multicolumn{2}{c}{" + h + "}" for h in heads]
        out.append("    Run & " + " & ".join(heads) + r" \\")
        out.append(r"    \midrule")
        for res in block:
            agg = res.aggregate()
            name = res.run_name
            cells = [_run_label(name, marks, latex_escape)]
            for m in metrics:
                key = (name, str(m))
                cell = _latex_number(_value_text(agg[str(m)], m, decimals))
                if best.get(key):
                    cell = r"\textbf{" + cell + "}"
                if marked:
                    mark = marks.cells.get(key, "")
                    mark = _LATEX_MARKS.get(mark, mark) if marks.baseline is not None else mark
                    cell += " &" + (r" \textsuperscript{" + mark + "}" if mark else "")
                cells.append(cell)
            out.append("    " + " & ".join(cells) + r" \\")
        out.append(r"    \bottomrule")
        out.append(r"  \end{tabular}")
    out.append(r"\end{table}")
    out.extend(f"% note: {' '.join(n.splitlines())}" for n in notes)
    return "\n".join(out) + "\n"


def _latex_p(p: float) -> str:
    text = _p(p)
    if "e" not in text:
        return text
    mantissa, exponent = text.split("e")
    return f"${mantissa} \\times 10^{{{int(exponent)}}}$"


def _latex_comparisons(
    results: Sequence[Result], comparisons: Sequence[Any], compare: Any, notes: Sequence[str], decimals: int
) -> str:
    header, rows = comparison_rows(comparisons, decimals=decimals)
    header = [r"Metric", "Run", "vs.", "Mean", "Mean vs.", r"$\Delta$", "CI", "$d$", "W/T/L", "$p$", r"$p_{\mathrm{adj}}$", ""]
    out = ["% irspec comparisons table; the preamble needs \\usepackage{booktabs}", r"\begin{table}[tbp]", r"  \centering"]
    if comparisons:
        c0 = comparisons[0]
        test, correction, alpha, queries = method_parts(results, comparisons, compare)
        out.append(
            "  \\caption{"
            + f"Pairwise comparisons: $\\Delta$ = mean $-$ mean vs.\\ with its {c0.confidence:.0%} CI "
            f"({latex_escape(c0.ci_method)}); $d$ = paired Cohen's $d$; W/T/L = queries won, tied, lost; "
            f"$*$: adjusted $p \\le {alpha:g}$ ({latex_escape(test)}; {latex_escape(correction)}; {queries}).".replace("%", r"\%")
            + "}"
        )
    out.append(r"  \begin{tabular}{lll" + "r" * 8 + "c}")
    out.append(r"    \toprule")
    out.append("    " + " & ".join(header) + r" \\")
    out.append(r"    \midrule")
    for c, row in zip(comparisons, rows):
        cells = [latex_escape(v) for v in row[:3]]
        cells += [_latex_number(v) for v in row[3:6]]
        cells.append(row[6].replace("-", "$-$") if row[6] != "-" else "--")
        cells += [_latex_number(row[7]), row[8]]
        cells += [_latex_p(c.p_value), _latex_p(c.p_adjusted)]
        cells.append("$*$" if row[11] else "")
        out.append("    " + " & ".join(cells) + r" \\")
    out.append(r"    \bottomrule")
    out.append(r"  \end{tabular}")
    out.append(r"\end{table}")
    out.extend(f"% note: {' '.join(n.splitlines())}" for n in notes)
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------------
# Markdown

_MARKDOWN_MARKS = {"better": "†", "worse": "↓"}


def markdown_escape(text: str) -> str:
    """``text`` safe in a GitHub-flavoured Markdown table cell: no emphasis, links, HTML or cell breaks."""
    entities = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
    out = []
    for ch in " ".join(str(text).splitlines()):
        if ch in entities:
            out.append(entities[ch])
        elif ch in "\\`*_[]|#~":
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def to_markdown(
    results: Sequence[Result],
    *,
    comparisons: Sequence[Any] = (),
    compare: Any = None,
    notes: Sequence[str] = (),
    decimals: int = 4,
    content: str = "results",
) -> str:
    """A GitHub-flavoured Markdown table with the content and marks of :func:`to_latex`, and a legend.

    The best value of each metric is in bold; ``†``/``↓`` after a value: significantly better/worse than
    the baseline; without a baseline, superscript letters name the runs a value is significantly
    better than. ``content="comparisons"`` gives one row per comparison instead.
    """
    _check_decimals(decimals)
    if content == "comparisons":
        header, rows = comparison_rows(comparisons, decimals=decimals)
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join([":---"] * 3 + ["---:"] * 8 + [":---:"]) + "|"]
        # names escaped; the numbers need no escaping
        lines += ["| " + " | ".join([markdown_escape(v) for v in row[:3]] + row[3:11] + [markdown_escape(row[11])]) + " |" for row in rows]
        if comparisons:
            lines += ["", markdown_escape(_comparison_legend(results, comparisons, compare)).replace("&lt;=", "≤")]
            if notes:
                lines += [""] + [f"- note: {markdown_escape(n)}" for n in notes]
        return "\n".join(lines) + "\n"
    marks = significance_marks(results, comparisons, compare)
    lines: list[str] = []
    any_best = False
    for block in _blocks(results):
        metrics = block[0].metrics
        best = _best(block, decimals)
        any_best = any_best or bool(best)
        if lines:
            lines.append("")
        lines.append("| Run | " + " | ".join(markdown_escape(str(m)) for m in metrics) + " |")
        lines.append("|:---|" + "---:|" * len(metrics))
        for res in block:
            agg = res.aggregate()
            name = res.run_name
            cells = [_run_label(name, marks, markdown_escape)]
            for m in metrics:
                key = (name, str(m))
                cell = _value_text(agg[str(m)], m, decimals)
                if best.get(key):
                    cell = f"**{cell}**"
                mark = marks.cells.get(key)
                if mark:
                    cell += f"<sup>{_MARKDOWN_MARKS[mark] if marks.baseline is not None else mark}</sup>"
                cells.append(cell)
            lines.append("| " + " | ".join(cells) + " |")
    legend = [f"Mean over {query_count(results)}."]
    if any_best:
        legend.append("The best value of each metric is in **bold**.")
    if marks:
        legend.append(_marks_legend(results, marks, comparisons, compare, markdown_escape, "<sup>†</sup>/<sup>↓</sup>", "α = {:g}"))
    lines += ["", " ".join(legend)]
    if notes:
        lines += [""] + [f"- note: {markdown_escape(n)}" for n in notes]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------------
# Provenance


def _digest(path: str | os.PathLike[str]) -> str:
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


_PENDING: dict[tuple[str, int, int], Any] = {}


def _file_key(path: str | os.PathLike[str]) -> tuple[str, int, int]:
    st = os.stat(path)
    return (os.path.realpath(path), st.st_size, st.st_mtime_ns)


def hash_in_background(paths: Sequence[str | os.PathLike[str]]) -> None:
    """Start hashing ``paths`` on a worker thread, so that provenance costs no wall time.

    hashlib releases the GIL while it hashes, so this runs beside reading and evaluation on another
    core; :func:`sha256_file` then picks the result up (or hashes itself for any file not started here).
    """
    from concurrent.futures import ThreadPoolExecutor

    files = [p for p in paths if os.fspath(p) != "-" and os.path.isfile(p)]
    if not files:
        return
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="irspec-sha256")
    for p in files:
        _PENDING[_file_key(p)] = pool.submit(_digest, p)
    pool.shutdown(wait=False)


def sha256_file(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file's bytes (as stored: a gzip file's compressed bytes), in hex."""
    future = _PENDING.pop(_file_key(path), None)
    return future.result() if future is not None else _digest(path)


_SEEDED_TESTS = ("randomization", "bootstrap", "randomized-tukey")


def provenance(
    results: Sequence[Result],
    inputs: Sequence[tuple[str, str | None, Any]],
    *,
    options: Any = None,
    compare: Any = None,
    plan: str | os.PathLike[str] | None = None,
    overrides: Sequence[str] = (),
) -> dict[str, Any]:
    """Where the results come from, so that they can be traced to their inputs and reproduced.

    The versions of irspec, Python, numpy (and scipy, polars), the platform, the canonical metric specs,
    the options, the comparison settings and the seeds that drew random numbers, and per input file
    (``inputs`` as ``(role, name, path)``: ``("qrels", None, path)``, ``("run", "bm25", path)``; the plan
    file is added when ``plan`` is given) its path, size and SHA-256. The files are read again to hash
    them; standard input (``-``) and in-memory data get ``null``. ``options`` (an
    :class:`~irspec.engine.Options`) defaults to the first result's.
    """
    import platform
    from importlib import metadata

    import numpy

    def version(dist: str) -> str | None:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None

    metrics: list[str] = []
    for res in results:
        metrics.extend(str(m) for m in res.metrics if str(m) not in metrics)
    files = []
    entries = ([("plan", None, plan)] if plan is not None else []) + list(inputs)
    for role, name, path in entries:
        entry: dict[str, Any] = {"role": role, "name": name, "path": None, "bytes": None, "sha256": None}
        if isinstance(path, (str, os.PathLike)) and os.fspath(path) != "-":
            entry["path"] = os.fspath(path)
            if os.path.isfile(path):
                entry["bytes"] = os.path.getsize(path)
                entry["sha256"] = sha256_file(path)
        elif path == "-":
            entry["path"] = "-"
        files.append(entry)
    seeds = {}
    if compare is not None and compare.test in _SEEDED_TESTS:
        seeds["compare.seed"] = compare.seed
    return {
        "irspec": __version__,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "scipy": version("scipy"),
        "polars": version("polars"),
        "platform": platform.platform(),
        "plan": os.fspath(plan) if plan is not None else None,
        "overrides": list(overrides),
        "metrics": metrics,
        "options": options.as_dict() if options is not None else results[0].options.as_dict() if results else {},
        "compare": _settings(compare),
        "seeds": seeds,
        "inputs": files,
    }


def _settings(compare: Any) -> dict[str, Any] | None:
    if compare is None:
        return None
    return compare.as_dict() if hasattr(compare, "as_dict") else dict(vars(compare))


# --------------------------------------------------------------------------------------------------
# HTML

_HTML_CSS = """
:root { color-scheme: light; --ink: #1f2328; --muted: #57606a; --line: #d0d7de; --soft: #f6f8fa;
        --good: #1a7f37; --bad: #cf222e; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1280px; padding: 1.5rem 2rem 3rem; color: var(--ink); background: #fff;
       font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
h1 { font-size: 1.6rem; margin: 0 0 .25rem; }
h2 { font-size: 1.25rem; margin: 2rem 0 .5rem; padding-bottom: .25rem; border-bottom: 1px solid var(--line); }
h3 { font-size: 1.05rem; margin: 1.25rem 0 .5rem; }
p, li { max-width: 70rem; }
.muted, .legend, figcaption { color: var(--muted); font-size: .9rem; }
nav a { margin-right: 1rem; }
a { color: #0969da; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: .5rem 0; font-variant-numeric: tabular-nums; }
th, td { padding: .3rem .55rem; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
th { background: var(--soft); font-weight: 600; position: sticky; top: 0; }
th.text, td.text { text-align: left; }
tbody tr:hover { background: #f3f6fa; }
td.best { font-weight: 700; }
table.comparisons { font-size: .875rem; }
table.comparisons th, table.comparisons td { padding: .25rem .45rem; }
sup.mark { font-size: .75em; margin-left: .1em; }
sup.better { color: var(--good); }
sup.worse { color: var(--bad); }
tr.significant td.sig { color: var(--good); font-weight: 700; }
td.neg { color: var(--bad); }
code, pre, td.hash { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .85rem; }
pre { background: var(--soft); padding: .75rem; overflow-x: auto; border-radius: 6px; }
figure { margin: 1rem 0 2rem; }
figure img { display: block; max-width: 100%; height: auto; border: 1px solid var(--line); border-radius: 6px; }
.note { background: #fff8c5; border: 1px solid #d4a72c66; padding: .5rem .75rem; border-radius: 6px; }
.warnings { background: #fff1e5; border: 1px solid var(--bad); border-left-width: 4px; padding: .5rem .75rem;
            border-radius: 6px; margin: 1rem 0; }
.warnings h2 { margin: 0 0 .25rem; border: 0; padding: 0; color: var(--bad); font-size: 1.05rem; }
.warnings ul { margin: 0; padding-left: 1.25rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
dt { font-weight: 600; }
dd { margin: 0; }
""".strip()


def to_html(
    results: Sequence[Result],
    *,
    comparisons: Sequence[Any] = (),
    compare: Any = None,
    notes: Sequence[str] = (),
    decimals: int = 4,
    title: str = "irspec report",
    plots: Sequence[Any] | None = None,
    plots_note: str | None = None,
    provenance: dict[str, Any] | None = None,
) -> str:
    """One self-contained HTML page: the results table with marks, the comparisons with p-values and
    effect sizes, the plots, notes and the provenance. The results' warnings come first, in a box
    above the results, where no reader of the tables can miss them.

    Inline CSS and images (``plots``: objects with ``title``, ``description`` and ``svg`` bytes, as
    :func:`irspec.plots.render` makes them, shown as ``data:`` URIs), so the file opens offline and
    fetches nothing. ``plots_note`` is shown where the plots would be when there are none (matplotlib
    missing, say).
    """
    import base64
    from html import escape

    _check_decimals(decimals)
    marks = significance_marks(results, comparisons, compare)
    warnings = collect_warnings(results)
    e = escape
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{e(title)}</title>",
        f"<style>\n{_HTML_CSS}\n</style>",
        "</head>",
        "<body>",
        f"<h1>{e(title)}</h1>",
    ]
    runs = [r.run_name for r in results]
    metrics: list[str] = []
    for res in results:
        metrics.extend(str(m) for m in res.metrics if str(m) not in metrics)
    summary = f"{len(runs)} run{'s' if len(runs) != 1 else ''}, {len(metrics)} metric{'s' if len(metrics) != 1 else ''}, {query_count(results)}"
    if provenance and provenance.get("plan"):
        summary += f"; plan <code>{e(str(provenance['plan']))}</code>"
    out.append(f'<p class="muted">{summary}.</p>')
    sections = [("warnings", "Warnings")] if warnings else []
    sections.append(("results", "Results"))
    if comparisons:
        sections.append(("comparisons", "Comparisons"))
    sections.append(("plots", "Plots"))
    if notes:
        sections.append(("notes", "Notes"))
    if provenance:
        sections.append(("provenance", "Provenance"))
    out.append("<nav>" + "".join(f'<a href="#{k}">{v}</a>' for k, v in sections) + "</nav>")

    if warnings:
        n = len(warnings)
        out.append(f'<section class="warnings" role="alert"><h2 id="warnings">{n} warning{"s" if n != 1 else ""}</h2><ul>')
        out.extend(f"<li>{e(w)}</li>" for w in warnings)
        out.append("</ul></section>")

    # results
    out.append('<h2 id="results">Results</h2>')
    for block in _blocks(results):
        block_metrics = block[0].metrics
        best = _best(block, decimals)
        out.append('<div class="scroll"><table class="results">')
        out.append('<thead><tr><th class="text">Run</th>' + "".join(f"<th>{e(str(m))}</th>" for m in block_metrics) + "</tr></thead>")
        out.append("<tbody>")
        for res in block:
            agg = res.aggregate()
            name = res.run_name
            label = e(name)
            if marks.baseline is not None and name == marks.baseline:
                label += ' <span class="muted">(baseline)</span>'
            elif name in marks.letter:
                label = f"({marks.letter[name]}) " + label
            cells = [f'<td class="text">{label}</td>']
            for m in block_metrics:
                key = (name, str(m))
                text = e(_value_text(agg[str(m)], m, decimals))
                mark = marks.cells.get(key)
                if mark and marks.baseline is not None:
                    title_text = f"significantly {mark} than {marks.baseline}"
                    text += f'<sup class="mark {mark}" title="{e(title_text)}">{_MARKDOWN_MARKS[mark]}</sup>'
                elif mark:
                    title_text = "significantly better than " + ", ".join(n for n, l in marks.letter.items() if l in mark)
                    text += f'<sup class="mark better" title="{e(title_text)}">{e(mark)}</sup>'
                cells.append(f'<td class="best">{text}</td>' if best.get(key) else f"<td>{text}</td>")
            out.append("<tr>" + "".join(cells) + "</tr>")
        out.append("</tbody></table></div>")
    legend = [f"Mean over {query_count(results)}; the best value of each metric in bold."]
    if marks:
        legend.append(_marks_legend(results, marks, comparisons, compare, e, "<sup>†</sup>/<sup>↓</sup>", "α = {:g}"))
    out.append(f'<p class="legend">{" ".join(legend)}</p>')

    # comparisons
    if comparisons:
        out.append('<h2 id="comparisons">Comparisons</h2>')
        c0 = comparisons[0]
        heads = ["Metric", "Run", "vs.", "Mean", "Mean vs.", "Δ", f"{c0.confidence:.0%} CI", "Rel. change",
                 "Cohen's d", "W/T/L", "n", "p", "p adj.", ""]
        out.append('<div class="scroll"><table class="comparisons">')
        out.append("<thead><tr>" + "".join(
            f'<th class="text">{e(h)}</th>' if i < 3 else f"<th>{e(h)}</th>" for i, h in enumerate(heads)
        ) + "</tr></thead><tbody>")
        for c in comparisons:
            ci = "–" if c.ci_low is None or c.ci_high is None else f"[{c.ci_low:+.{decimals}f}, {c.ci_high:+.{decimals}f}]"
            neg = ' class="neg"' if c.mean_difference < 0 else ""
            d = "–" if c.effect_size is None else f"{c.effect_size:+.2f}"
            row_class = ' class="significant"' if c.significant else ""
            sig = '<span title="significant">✓</span>' if c.significant else ""
            rel = "–" if c.relative_change is None else f"{c.relative_change:+.1%}"
            cells = [
                f'<td class="text">{e(c.metric)}</td>',
                f'<td class="text">{e(c.a)}</td>',
                f'<td class="text">{e(c.b)}</td>',
                f"<td>{c.mean_a:.{decimals}f}</td>",
                f"<td>{c.mean_b:.{decimals}f}</td>",
                f"<td{neg}>{c.mean_difference:+.{decimals}f}</td>",
                f"<td>{ci}</td>",
                f"<td>{rel}</td>",
                f"<td>{d}</td>",
                f"<td>{c.wins}/{c.ties}/{c.losses}</td>",
                f"<td>{c.n}</td>",
                f"<td>{_p(c.p_value)}</td>",
                f"<td>{_p(c.p_adjusted)}</td>",
                f'<td class="sig">{sig}</td>',
            ]
            out.append(f"<tr{row_class}>" + "".join(cells) + "</tr>")
        out.append("</tbody></table></div>")
        out.append(
            f'<p class="legend">Δ = mean − mean vs. with its {c0.confidence:.0%} confidence interval '
            f"({e(c0.ci_method)}); rel. change = Δ / mean vs.; Cohen's d of the paired differences; "
            f"W/T/L = queries won, tied and lost; ✓ = significant: adjusted p ≤ {c0.alpha:g} "
            f"({e(method_text(results, comparisons, compare))}).</p>"
        )

    # plots
    out.append('<h2 id="plots">Plots</h2>')
    if plots:
        for p in plots:
            data = base64.b64encode(p.svg).decode("ascii")
            out.append(f"<h3>{e(p.title)}</h3><figure>")
            out.append(f'<img src="data:image/svg+xml;base64,{data}" alt="{e(p.title)}">')
            out.append(f"<figcaption>{e(p.description)}</figcaption>")
            out.append("</figure>")
    else:
        out.append(f'<p class="note">{e(plots_note or "No plots.")}</p>')

    # notes
    if notes:
        out.append('<h2 id="notes">Notes</h2><ul>')
        out.extend(f"<li>note: {e(n)}</li>" for n in notes)
        out.append("</ul>")

    # provenance
    if provenance:
        out.append('<h2 id="provenance">Provenance</h2>')
        out.append("<dl>")
        versions = ", ".join(
            f"{k} {provenance[k]}" for k in ("irspec", "python", "numpy", "scipy", "polars") if provenance.get(k)
        )
        rows = [("Versions", e(versions)), ("Platform", e(str(provenance.get("platform"))))]
        if provenance.get("plan"):
            rows.append(("Plan", f"<code>{e(str(provenance['plan']))}</code>"))
        if provenance.get("overrides"):
            rows.append(("Overrides", " ".join(f"<code>--set {e(o)}</code>" for o in provenance["overrides"])))
        rows.append(("Metrics", ", ".join(f"<code>{e(m)}</code>" for m in provenance.get("metrics", []))))
        options = provenance.get("options") or {}
        rows.append(("Options", ", ".join(f"{e(k)} = <code>{e(json.dumps(v))}</code>" for k, v in options.items())))
        if provenance.get("compare"):
            rows.append(("Compare", ", ".join(f"{e(k)} = <code>{e(json.dumps(v))}</code>" for k, v in provenance["compare"].items())))
        seeds = provenance.get("seeds") or {}
        rows.append(("Seeds", ", ".join(f"{e(k)} = {e(str(v))}" for k, v in seeds.items()) or "none used"))
        out.extend(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows)
        out.append("</dl>")
        out.append('<h3>Input files</h3><div class="scroll"><table class="inputs">')
        out.append('<thead><tr><th class="text">Role</th><th class="text">Name</th><th class="text">Path</th><th>Bytes</th><th class="text">SHA-256</th></tr></thead><tbody>')
        for f in provenance.get("inputs", []):
            out.append(
                f'<tr><td class="text">{e(f["role"])}</td><td class="text">{e(f["name"] or "")}</td>'
                f'<td class="text"><code>{e(str(f["path"] or "-"))}</code></td>'
                f'<td>{"" if f["bytes"] is None else f["bytes"]}</td>'
                f'<td class="text hash">{e(f["sha256"] or "not available")}</td></tr>'
            )
        out.append("</tbody></table></div>")
        out.append("<details><summary>As JSON</summary><pre>" + e(json.dumps(provenance, indent=2)) + "</pre></details>")
    out.append("</body>")
    out.append("</html>")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------------
# Writing a directory of files


def write_files_atomic(directory: str | os.PathLike[str], files: dict[str, bytes]) -> list[Path]:
    """Write ``files`` (``{name: bytes}``) into ``directory``, creating it; returns the paths written.

    The files are written to a temporary directory beside it first. A directory that does not exist
    yet is then created by renaming that one, in one step; into an existing directory each file is
    renamed over its old version (other files in it are left alone). An error while writing leaves
    the directory as it was (see :func:`write_all_atomic`).
    """
    write_all_atomic([(directory, files)])
    return [Path(directory) / name for name in files]
