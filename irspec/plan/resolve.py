"""Resolving a plan: the checks a schema cannot make, and the :class:`~irspec.plan.model.Plan` built.

Metric specs are parsed and bound, files and globs resolved (relative to the plan file), run names must
be distinct, the baseline must name a run, an output must not overwrite an input. Every problem goes to
the :class:`~irspec.plan.problems.Problems` of the plan, so that all are reported together.
"""

from __future__ import annotations

import contextlib
import glob
import importlib.util
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from irspec.data.datasets import check_qrels, is_dataset_id, parse_specs
from irspec.data.stream import parse_memory
from irspec.data.trec import stem
from irspec.errors import EvaluationError, InputError, IrspecError, SpecError, quote, suggest
from irspec.evaluation.context import Options
from irspec.evaluation.judgments import reads_qrels
from irspec.experiment.records import TUKEY_TESTS, Compare
from irspec.plan.model import (
    FusedRun,
    Output,
    Plan,
    PlanDiff,
    PlanRun,
    PlanSystem,
    PowerDesign,
    RecsysSection,
    ReproduceSection,
    SparkEngine,
    Standardize,
)
from irspec.plan.problems import PlanPath, Problems, path_text
from irspec.report.agreement import COMBINED_FORMATS
from irspec.report.files import Inputs, in_place
from irspec.report.formats import WITH_INTERVALS, default_intervals
from irspec.spec.fusion import parse_fusion
from irspec.spec.plugins import get_registry

# The outputs whose results tables can show a confidence interval beside each mean.
_INTERVAL_FORMATS = (*WITH_INTERVALS, "html")

__all__ = ["resolve"]


def resolve(data: dict[str, Any], base: Path, problems: Problems, overrides: tuple[str, ...]) -> Plan | None:
    """Check and resolve files, globs, metrics, names and options; ``None`` when something is wrong."""

    def local(p: str) -> Path:
        return Path(os.path.normpath(os.path.join(base, os.path.expanduser(p))))

    qrels: Path | str | None = None
    if is_dataset_id(data.get("qrels")):  # irds:<id>, an ir_datasets dataset's qrels: no file
        qrels = data["qrels"]
        _check_dataset(data["qrels"], problems)
    elif isinstance(data.get("qrels"), str) and data["qrels"]:
        qrels = local(data["qrels"])
        _check_file(qrels, ("qrels",), "qrels", problems)
    qrels_sets = _resolve_qrels_sets(data, local, problems)
    if qrels_sets:
        qrels = qrels_sets[0][1]  # the first set stands for the plan's qrels (metric parsing, provenance)

    log = None
    if isinstance(data.get("log"), str) and data["log"]:
        log = local(data["log"])
        _check_file(log, ("log",), "log", problems)

    metrics = _resolve_metrics(data.get("metrics"), problems, qrels)
    recsys = _resolve_recsys(data, local, problems)
    catalogue = [str(m) for m in metrics or () if m.catalogue]
    if catalogue and "standardize" in data:  # z-scores are per topic (user); these have none
        problems.add(
            ("standardize",),
            f"{', '.join(catalogue)}: catalogue-level, one value per system and none per user, so there "
            "is nothing to standardise; drop them or standardize",
        )
    raw_runs = data["recsys"].get("runs") if recsys is not None else data.get("runs")
    at: PlanPath = ("recsys", "runs") if recsys is not None else ("runs",)
    runs, names_complete = _resolve_runs(raw_runs, base, local, problems, at=at)
    if "runs" not in data and "systems" in data:
        names_complete = True  # a study of systems alone: no run is missing, every name is the systems'
    runs = runs + _resolve_fused(data, runs, names_complete, problems, local)
    systems, systems_complete = _resolve_systems(data.get("systems"), runs, base, local, problems)
    names_complete = names_complete and systems_complete
    if metrics:
        _check_inputs(data, metrics, problems)

    options = None
    raw_options = data.get("options", {})
    if isinstance(raw_options, dict):
        try:
            options = Options(
                relevance_level=_int(raw_options.get("relevance_level", 1)),
                depth=_int(raw_options.get("depth")),
                judged_only=raw_options.get("judged_only", False),
                missing_queries=raw_options.get("missing_queries", "zero"),
                collection_size=_int(raw_options.get("collection_size")),
                judged_warning=raw_options.get("judged_warning", 0.5),
            )
        except (IrspecError, TypeError, ValueError) as e:
            if not problems:  # the schema has already said what is wrong otherwise
                problems.add(("options",), str(e))
    engine = _resolve_engine(data.get("engine"))
    if isinstance(raw_options, dict) and raw_options.get("judged_warning") and engine is not None:
        problems.add(
            ("options", "judged_warning"),
            "Spark gives no Judged@10 warning (it would need every query's top 10 on this machine); "
            "drop judged_warning, or evaluate without engine",
        )
    memory = None
    if isinstance(raw_options, dict) and raw_options.get("memory") is not None:
        try:
            memory = parse_memory(raw_options["memory"])
        except IrspecError as e:
            problems.add(("options", "memory"), str(e))

    compare = _resolve_compare(data, [*runs, *systems], names_complete, problems)
    standardize = _resolve_standardize(
        data.get("standardize"), [*runs, *systems], names_complete, local, problems
    )
    if standardize is not None and metrics:
        _check_standardisable(data.get("metrics"), metrics, qrels, problems)
    groups = None
    if isinstance(data.get("groups"), str) and data["groups"]:
        groups = local(data["groups"])
        _check_file(groups, ("groups",), "groups", problems)
    outputs = _resolve_outputs(data.get("output"), local, "compare" in data, problems)
    if qrels_sets:
        _check_several_sets(data, [*runs, *systems], outputs or [], problems)
    diffs = _resolve_diffs(data.get("diff"), runs, names_complete, metrics, qrels, local, problems)
    if diffs and qrels_sets:
        problems.add(("diff",), "a diff compares two runs under one set of judgments; this plan has several")

    reproduce = _resolve_reproduce(data, runs, qrels_sets, local, problems)
    # The plan as far as it resolved, so that an output onto an input is reported with the other problems.
    plan = Plan(
        source=problems.source,
        qrels=qrels,
        runs=tuple(runs),
        metrics=tuple(metrics or ()),
        options=options or Options(),
        compare=compare,
        outputs=tuple(outputs or ()),
        overrides=overrides,
        log=log,
        engine=engine,
        memory=memory,
        standardize=standardize,
        groups=groups,
        systems=tuple(systems),
        power=_resolve_power(data, problems),
        reproduce=reproduce,
        qrels_sets=tuple(qrels_sets),
        sections=tuple((key, data[key]) for key in data if key in get_registry().sections),
        diffs=tuple(diffs),
        recsys=recsys,
    )
    _check_overwrites(plan, data, local, problems)
    given = qrels is not None or log is not None or recsys is not None
    if problems or not given or metrics is None or options is None or outputs is None:
        return None
    return plan


# What a plan with a recsys section cannot have: the keys that read qrels and runs, or evaluate them
# otherwise than from the tables' matrices; and the options of trec_eval's runs.
_NOT_RECSYS = ("qrels", "runs", "systems", "fused", "log", "diff", "reproduce", "engine")
_RECSYS_OPTIONS = ("relevance_level",)


def _resolve_recsys(data: dict[str, Any], local: Any, problems: Problems) -> RecsysSection | None:
    """The ``recsys`` section (the schema has checked its shape): its tables found, and what a plan of
    recommendations cannot have besides it named, each at its key."""
    raw = data.get("recsys")
    if not isinstance(raw, dict):
        return None
    for key in _NOT_RECSYS:
        if key in data:
            problems.add(
                (key,),
                f"a plan with recsys evaluates recommendations from its tables (recsys.test and recsys.runs); "
                f"drop {key}",
                key=True,
            )
    options = data.get("options")
    for key in options if isinstance(options, dict) else ():
        if key not in _RECSYS_OPTIONS:
            problems.add(
                ("options", key),
                f"{key} has no meaning for recommendations; of the options a plan with recsys takes "
                f"{', '.join(_RECSYS_OPTIONS)}",
                key=True,
            )
    paths: dict[str, Path] = {}
    for key in ("test", "exclude", "popularity", "features", "expected"):
        if isinstance(raw.get(key), str) and raw[key]:
            paths[key] = local(raw[key])
            _check_file(paths[key], ("recsys", key), "table", problems)
    propensity = None
    if isinstance(raw.get("propensity"), dict):
        if "popularity" not in paths and "exclude" not in paths:
            problems.add(
                ("recsys", "propensity"),
                "the propensity model is fitted to the training interactions: give recsys.popularity or "
                "recsys.exclude",
            )
        given = raw["propensity"]
        values = {key: given.get(key, default) for key, default in (("A", 0.55), ("B", 1.5))}
        for key, value in values.items():
            # .nan and .inf pass the schema's bound (every comparison with NaN is false)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isfinite(value):
                problems.add(("recsys", "propensity", key), f"{key} must be a finite number > 0, not {value}")
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values.values()):
            propensity = (float(values["A"]), float(values["B"]))  # else the schema has said what is wrong
    if "test" not in paths:
        return None  # the schema has said so
    columns: dict[str, Any] = raw["columns"] if isinstance(raw.get("columns"), dict) else {}
    return RecsysSection(
        paths["test"],
        paths.get("exclude"),
        paths.get("popularity"),
        propensity,
        raw.get("empty_users", "skip"),
        tuple(sorted((str(k), str(v)) for k, v in columns.items())),
        paths.get("features"),
        paths.get("expected"),
    )


def _check_overwrites(plan: Plan, data: dict[str, Any], local: Any, problems: Problems) -> None:
    """Each ``path`` of the ``output`` and ``diff`` entries that would overwrite a file the plan reads
    (:attr:`Plan.inputs`), or that an earlier entry already writes, located at the entry: compared as
    the writer compares them (:mod:`irspec.report.files`), by resolved path, so that a path through a
    linked directory is the file it reaches; by device and inode too for an input. A special file
    (``/dev/null``) is written in place and may take several outputs."""
    inputs = Inputs(plan.inputs)
    writers: dict[str, tuple[str, Path]] = {}
    for section in ("output", "diff"):
        entries = data.get(section)
        for i, entry in enumerate(entries if isinstance(entries, list) else ()):
            if not isinstance(entry, dict) or not isinstance(entry.get("path"), str) or not entry["path"]:
                continue
            path = local(entry["path"])
            found = inputs.find(path)
            if found is not None:
                what = "a diff would overwrite it" if section == "diff" else "it would be overwritten"
                same = "" if str(path) == found else f" (the same file as {found!r})"
                problems.add((section, i, "path"), f"{str(path)!r} is an input of this plan{same}; {what}")
            if in_place(path):
                continue
            key = os.path.realpath(path)
            if key in writers:
                earlier, written = writers[key]
                same = "" if written == path else f", the same file as {str(path)!r}"
                problems.add((section, i, "path"), f"{earlier} already writes {str(written)!r}{same}")
            writers.setdefault(key, (path_text((section, i)), path))


def _resolve_diffs(
    raw: Any,
    runs: list[PlanRun],
    names_complete: bool,
    metrics: list[Any] | None,
    qrels: Path | str | None,
    local: Any,
    problems: Problems,
) -> list[PlanDiff]:
    """The ``diff`` section (the schema has checked its shape): each pair names two runs of the plan (a
    system of several runs has no one ranking), its metrics can be compared, its file is no input."""
    from irspec.experiment.diff import check_comparable

    if not isinstance(raw, list):
        return []
    names = [r.name for r in runs if r.name is not None]  # a plan file names every run
    found = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict) or not all(isinstance(item.get(k), str) for k in ("a", "b")):
            continue
        for side in ("a", "b"):
            if names_complete and item[side] not in names:
                close = suggest(item[side], names, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else f"; the runs are {', '.join(names)}"
                problems.add(("diff", i, side), f"{item[side]!r} is not a run of this plan{hint}")
        own = (
            _resolve_metrics(item["metrics"], problems, qrels, ("diff", i, "metrics"))
            if "metrics" in item
            else []
        )
        chosen = own or metrics or []
        if own is not None and chosen:
            try:
                check_comparable(chosen)
            except IrspecError as e:
                problems.add(("diff", i, "metrics") if own else ("metrics",), str(e))
        path = local(item["path"]) if isinstance(item.get("path"), str) else None
        found.append(
            PlanDiff(
                item["a"],
                item["b"],
                tuple(own or ()),
                item.get("top", 10),
                item.get("queries"),
                item.get("format", "html"),
                path,
                item.get("decimals", 4),
            )
        )
    return found


def _resolve_standardize(
    raw: Any,
    runs: Sequence[PlanRun | PlanSystem],
    names_complete: bool,
    local: Any,
    problems: Problems,
) -> Standardize | None:
    """The plan's ``standardize`` (the schema has checked its shape): ``true``, or a reference (run names,
    at least two, each a run of the plan) or a -Z ``file``, not both."""
    if raw is True:
        if len(runs) < 2 and names_complete:
            problems.add(("standardize",), "standardising against the plan's runs needs at least 2 runs")
        return Standardize()
    if not isinstance(raw, dict):
        return None
    cdf = bool(raw.get("cdf", False))
    if "reference" in raw and "file" in raw:
        problems.add(("standardize",), "give a reference (run names) or a file, not both")
        return None
    if isinstance(raw.get("file"), str):
        path = local(raw["file"])
        _check_file(path, ("standardize", "file"), "z-score", problems)
        return Standardize(file=path, cdf=cdf)
    reference = raw.get("reference")
    if isinstance(reference, list):
        names = [r.name for r in runs if r.name is not None]  # all of them when names_complete
        for i, name in enumerate(reference):
            if names_complete and name not in names:
                close = suggest(str(name), names, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else f"; the runs are {', '.join(names)}"
                problems.add(("standardize", "reference", i), f"{name!r} is not a run of this plan{hint}")
        return Standardize(reference=tuple(reference), cdf=cdf)
    return Standardize(cdf=cdf)


def _check_standardisable(raw: Any, metrics: list[Any], qrels: Path | str | None, problems: Problems) -> None:
    """Each metric a ``standardize`` section cannot make z-scores of (a geometric mean, a text metric),
    at the ``metrics`` entry that names it; a catalogue-level one is said under ``standardize``."""
    from irspec.experiment.standardize import StandardizedMetric  # numpy: for a plan that standardises

    entries: list[tuple[PlanPath, str]] = [(("metrics",), raw)] if isinstance(raw, str) else []
    if isinstance(raw, list):
        entries = [(("metrics", i), text) for i, text in enumerate(raw) if isinstance(text, str)]
    for m in metrics:
        if m.catalogue:
            continue
        try:
            StandardizedMetric.of(m)
        except EvaluationError as e:
            where: PlanPath = ("metrics",)
            for at, text in entries:
                with contextlib.suppress(IrspecError):  # each parsed before; the metric's own entry
                    if m in parse_specs(text, qrels):
                        where = at
                        break
            problems.add(where, f"{e}; the plan's standardize section standardises every metric")


def _check_name(name: str, where: PlanPath, problems: Problems) -> None:
    """A name the reports show (a run's, a system's, a fused run's, a set of judgments'): no blank at its
    start or end, no line break or other control character. Names that differ by those alone read the same
    in every report ("bm25" and "bm25 " were two runs shown alike), and a line break breaks a text table."""
    if name != name.strip() or any(ord(c) < 32 or ord(c) == 127 for c in name):
        problems.add(
            where,
            f"a name has no blank at its start or end and no line break or control character, got {quote(name)}",
        )


def _resolve_qrels_sets(data: dict[str, Any], local: Any, problems: Problems) -> list[tuple[str, Path | str]]:
    """``qrels`` as a mapping ``{name: path}``: several sets of judgments, each resolved as one."""
    raw = data.get("qrels")
    if not isinstance(raw, dict):
        return []
    found: list[tuple[str, Path | str]] = []
    for name, value in raw.items():
        if not isinstance(value, str) or not value:
            continue  # the schema has said so
        _check_name(str(name), ("qrels",), problems)  # (the path would show the name itself)
        if is_dataset_id(value):
            _check_dataset(value, problems)
            found.append((str(name), value))
            continue
        path = local(value)
        _check_file(path, ("qrels", name), "qrels", problems)
        found.append((str(name), path))
    return found


def _check_several_sets(
    data: dict[str, Any], runs: list[Any], outputs: list[Output], problems: Problems
) -> None:
    """What several sets of judgments need: two runs or systems to rank, outputs that can hold every set, no Spark."""
    if len(runs) < 2:
        problems.add(
            ("runs",),
            f"several sets of judgments compare the rankings of the runs: give at least 2 runs, not {len(runs)}",
        )
    if data.get("engine") is not None:
        problems.add(("engine",), "several sets of judgments are evaluated in this process; drop engine")
    for i, o in enumerate(outputs):
        if o.format not in (*COMBINED_FORMATS, "html", "plots"):
            problems.add(
                ("output", i, "format"),
                f"with several sets of judgments the outputs are {', '.join(COMBINED_FORMATS)}, html and plots, not {o.format}",
            )


def _resolve_engine(raw: Any) -> SparkEngine | None:
    """The plan's ``engine`` (the schema has checked its shape)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("spark"), dict):
        return None
    spark = raw["spark"]
    return SparkEngine(
        spark.get("master"), tuple(sorted(spark.get("config", {}).items())), spark.get("partitions")
    )


def _check_inputs(data: dict[str, Any], metrics: list[Any], problems: Problems) -> None:
    """Each metric's input is in the plan (qrels and runs, or the log), and each input has a metric."""
    has_runs = any(key in data for key in ("qrels", "runs", "systems", "recsys"))
    # a metric over qrels a plugin reads (with subtopics) is computed from qrels and runs too
    kinds = {"run" if reads_qrels(m.definition.needs) else m.definition.needs for m in metrics}
    for m in metrics:
        needs = "run" if reads_qrels(m.definition.needs) else m.definition.needs
        if needs == "run" and not has_runs:
            problems.add(
                ("metrics",), f"{m} is computed from qrels and runs, and the plan has none (only a log)"
            )
        elif needs == "log" and "log" not in data:
            problems.add(("metrics",), f"{m} is computed from an interaction log; give one with the log key")
        elif needs not in ("run", "log"):
            problems.add(("metrics",), f"{m} is computed from a {needs!r} input, which a plan cannot name")
    if "log" in data and "log" not in kinds:
        problems.add(
            ("log",), "no metric of the plan is computed from the log (such as CTR, from irspec-online)"
        )
    elif "log" in data:
        try:
            get_registry().reader("log")
        except IrspecError as e:
            problems.add(("log",), str(e))
    if has_runs and "run" not in kinds:
        problems.add(
            ("metrics",), "no metric of the plan is computed from the runs; drop qrels and runs, or add one"
        )
    if "compare" in data and "runs" not in data and "systems" not in data and "log" in data:
        problems.add(("compare",), "comparing needs runs; a log's arms are compared with an ab section")
    for key, section in get_registry().sections.items():  # a plugin's section sets its reader's options
        if key in data and section.reader not in data:
            said = (
                section.summary
                or f"the {key} section sets the options of the {section.reader} input's reader"
            )
            problems.add((key,), f"{said}; give one with the {section.reader} key")


def _int(value: Any) -> Any:
    # the schema accepts 10.0 as an integer (JSON has one number type); the engine wants an int
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _check_file(path: Path, where: PlanPath, what: str, problems: Problems) -> bool:
    if path.is_dir():
        problems.add(where, f"{what} {str(path)!r} is a directory, not a file")
    elif not path.exists():
        problems.add(where, f"{what} file not found: {str(path)!r}")
    else:
        # a regular file, or a pipe or device a shell hands over (/dev/stdin, <(zcat qrels.gz)): its
        # reader says what is wrong with what it reads (binary data from /dev/zero, say)
        return True
    return False


def _check_dataset(qrels: str, problems: Problems) -> None:
    try:
        check_qrels(qrels)
    except IrspecError as e:
        problems.add(("qrels",), str(e))


def _resolve_metrics(
    raw: Any, problems: Problems, qrels: Path | str | None, key: PlanPath = ("metrics",)
) -> list[Any] | None:
    if isinstance(raw, str):
        items: list[tuple[PlanPath, str]] = [(key, raw)]
    elif isinstance(raw, list):
        items = [((*key, i), s) for i, s in enumerate(raw) if isinstance(s, str)]
    else:
        return None
    bound: list[Any] = []
    ok = True
    for where, text in items:
        if not text.strip():
            continue  # the schema reports empty strings
        try:
            found = parse_specs(text, qrels)  # irds-official: the official measures of irds: qrels
        except SpecError as e:
            problems.add(where, f"bad metric spec {text!r}: {e}")
            ok = False
            continue
        except InputError:  # irds-official of a dataset that cannot be loaded: said under qrels
            ok = False
            continue
        bound.extend(m for m in found if m not in bound)
    if ok and not bound and items and not problems:
        problems.add(key, "no metrics given")
        return None
    return bound if ok else None


def _has_magic(text: str) -> bool:
    return any(c in text for c in "*?[")


def _resolve_runs(
    raw: Any, base: Path, local: Any, problems: Problems, at: PlanPath = ("runs",), distinct: bool = True
) -> tuple[list[PlanRun], bool]:
    """The plan's runs (globs expanded) and whether every name could be determined; ``at`` is where the
    list is in the plan, and ``distinct`` whether two runs of one name are a problem (a system's runs
    are never named in a report, so theirs may repeat)."""
    if not isinstance(raw, list):
        return [], False
    runs: list[PlanRun] = []
    complete = True
    first: dict[str | None, PlanRun] = {}  # None: a run of irspec eval, named when read

    def add(run: PlanRun, where: PlanPath, origin: str) -> None:
        if run.name in first and distinct:
            other = first[run.name]
            at = f" at line {other.line}" if other.line else ""
            problems.add(where, f"duplicate run name {run.name!r}{origin}; {other.entry}{at} already uses it")
        else:
            first[run.name] = run
        runs.append(run)

    for i, entry in enumerate(raw):
        where: PlanPath = (*at, i)
        line = problems.line_of(where)
        if isinstance(entry, dict):
            name, path = entry.get("name"), entry.get("path")
            if not isinstance(name, str) or not name or not isinstance(path, str) or not path:
                complete = complete and isinstance(name, str) and bool(name)
                continue  # the schema reports it
            _check_name(name, (*where, "name"), problems)
            resolved = local(path)
            _check_file(resolved, (*where, "path"), "run", problems)
            add(PlanRun(name, resolved, path_text(where), line), (*where, "name"), "")
        elif isinstance(entry, str) and entry:
            literal = local(entry)
            if _has_magic(entry) and not literal.exists():
                pattern = (
                    entry
                    if os.path.isabs(os.path.expanduser(entry))
                    else os.path.join(glob.escape(str(base)), entry)
                )
                matches = sorted(
                    p for p in glob.glob(os.path.expanduser(pattern), recursive=True) if os.path.isfile(p)
                )
                if not matches:
                    problems.add(where, f"glob {entry!r} matches no file (looked for {str(literal)!r})")
                    complete = False
                for m in matches:
                    p = Path(os.path.normpath(m))
                    origin = f" (from {str(p)!r}, matched by {entry!r})"
                    add(PlanRun(stem(m) or m, p, path_text(where), line), where, origin)
            else:
                _check_file(literal, where, "run", problems)
                add(
                    PlanRun(stem(entry) or entry, literal, path_text(where), line),
                    where,
                    f" (the stem of {entry!r})",
                )
        else:
            complete = False
    return runs, complete


def _resolve_fused(
    data: dict[str, Any], runs: list[PlanRun], names_complete: bool, problems: Problems, local: Any
) -> list[PlanRun]:
    """The plan's fused runs (``fused``): each a :class:`PlanRun` whose path is a :class:`FusedRun`, its
    members the plan's runs by name and its method a bound fusion spec (its errors located here)."""
    raw = data.get("fused")
    if not isinstance(raw, list):
        return []
    if isinstance(data.get("engine"), dict) and "spark" in data["engine"]:
        problems.add(("fused",), "fused runs are made in this process; a plan on Spark cannot have them")
    by_name = {r.name: r for r in runs}
    fused: list[PlanRun] = []
    for i, entry in enumerate(raw):
        where: PlanPath = ("fused", i)
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"]:
            continue  # the schema reports it
        name, members, text = entry["name"], entry.get("runs"), entry.get("method")
        _check_name(name, (*where, "name"), problems)
        if name in by_name:
            problems.add((*where, "name"), f"duplicate name {name!r}; {by_name[name].entry} already uses it")
        if not isinstance(members, list) or not all(isinstance(m, str) for m in members):
            continue  # the schema reports it
        for k, member in enumerate(members):
            if member not in by_name and names_complete:
                hint = suggest(member, [n for n in by_name if n is not None])
                more = f"; did you mean {hint[0]!r}?" if hint else ""
                problems.add((*where, "runs", k), f"no run is named {member!r}{more}")
        if not isinstance(text, str) or not text:
            continue  # the schema reports it
        optimize = entry.get("optimize") if isinstance(entry.get("optimize"), str) else None
        try:
            method = parse_fusion(text, get_registry(), searched=optimize is not None)
        except SpecError as e:
            problems.add((*where, "method"), str(e))
            continue
        given = {n for n, _ in method.params}
        if (
            optimize is not None
            and not method.definition.learns
            and all(n in given for n, _ in method.definition.grid)
        ):
            problems.add(
                (*where, "optimize"),
                f"{method} has nothing to tune: it learns nothing and sets every parameter it could search",
            )
        if optimize is not None:
            from irspec.fusion.tuning import objective

            try:
                objective(get_registry().parse(optimize), optimize)
            except (SpecError, EvaluationError) as e:
                problems.add((*where, "optimize"), str(e))
        train = local(entry["train"]) if isinstance(entry.get("train"), str) else None
        if train is not None and not (method.definition.learns or optimize is not None):
            problems.add(
                (*where, "train"),
                f"{method} learns nothing and searches nothing: it needs no training qrels",
            )
        if train is not None and "folds" in entry:
            problems.add(
                (*where, "folds"),
                "folds cross-validate over the plan's queries: with train, they are not used",
            )
        weights = method.get("weights") if method.definition.weighted else None
        if weights is not None and len(weights) != len(members):
            problems.add(
                (*where, "method"),
                f"{len(weights)} weights for {len(members)} runs; give one weight per run",
            )
        paths = tuple(by_name[m].path for m in members if m in by_name)
        depth = entry.get("depth") if isinstance(entry.get("depth"), int) else None
        folds = entry.get("folds") if isinstance(entry.get("folds"), int) else 5
        source = FusedRun(tuple(members), paths, method, depth, optimize, train, folds)  # type: ignore[arg-type]
        run = PlanRun(name, source, path_text(where), problems.line_of(where))
        by_name[name] = run
        fused.append(run)
    return fused


def _resolve_systems(
    raw: Any, runs: list[PlanRun], base: Path, local: Any, problems: Problems
) -> tuple[list[PlanSystem], bool]:
    """The plan's systems of several runs (each ``runs`` a glob or a list of paths and globs), and
    whether every name is known; a system's name must differ from every run's and system's."""
    if not isinstance(raw, list):
        return [], True
    systems: list[PlanSystem] = []
    taken = {r.name: r.entry for r in runs}
    complete = True
    for i, entry in enumerate(raw):
        where: PlanPath = ("systems", i)
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"]:
            complete = False
            continue  # the schema reports it
        name, paths = entry["name"], entry.get("runs")
        _check_name(name, (*where, "name"), problems)
        if name in taken:
            problems.add((*where, "name"), f"duplicate name {name!r}; {taken[name]} already uses it")
        taken.setdefault(name, path_text(where))
        items = [paths] if isinstance(paths, str) else paths
        if not isinstance(items, list) or not all(isinstance(p, str) and p for p in items):
            continue  # the schema reports it
        found, _ = _resolve_runs(items, base, local, problems, at=(*where, "runs"), distinct=False)
        systems.append(PlanSystem(name, tuple(found), path_text(where), problems.line_of(where)))
    return systems, complete


def _resolve_compare(
    data: dict[str, Any], runs: list[Any], names_complete: bool, problems: Problems
) -> Compare | None:
    raw = data.get("compare")
    if "compare" not in data or not isinstance(raw, dict):
        return None
    defaults = Compare()
    test = raw.get("test", defaults.test)
    baseline = raw.get("baseline")
    baselines = raw.get("baselines")
    names = [r.name for r in runs]
    given = [(("compare", "baseline"), baseline)] + [
        (("compare", "baselines", i), b) for i, b in enumerate(baselines or ())
    ]
    for where, base_name in given:
        if isinstance(base_name, str) and names_complete and base_name not in names:
            close = suggest(base_name, names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; the runs are {', '.join(names)}"
            problems.add(where, f"baseline {quote(base_name)} is not a run of this plan{hint}")
    if baseline is not None and baselines:
        problems.add(("compare", "baselines"), "give baseline or baselines, not both")
    if (
        names_complete
        and (
            isinstance(data.get("runs"), list)
            or isinstance(data.get("systems"), list)
            or isinstance(data.get("recsys"), dict)
        )
        and len(runs) < 2
    ):
        problems.add(("compare",), f"comparing needs at least 2 runs; the plan has {len(runs)}")
    correction = raw.get("correction", "none" if test in TUKEY_TESTS else defaults.correction)
    if test in TUKEY_TESTS and correction != "none":
        problems.add(
            ("compare", "correction"),
            f"test {test} adjusts for all pairs of runs itself; drop correction {correction!r} (or give none)",
        )
    family = raw.get("family", defaults.family)
    if test in TUKEY_TESTS and family != "per-metric":
        problems.add(
            ("compare", "family"),
            f"test {test} adjusts over the pairs of runs of each metric; family must be per-metric",
        )
    try:
        return Compare(
            baseline=baseline,
            test=test,
            permutations=_int(raw.get("permutations", defaults.permutations)),
            seed=_int(raw.get("seed", defaults.seed)),
            correction=correction,
            alpha=float(raw.get("alpha", defaults.alpha)),
            family=family,
            baselines=tuple(baselines) if isinstance(baselines, list) else (),
        )
    except (TypeError, ValueError, OverflowError, IrspecError) as e:  # OverflowError: an alpha of 400 digits
        if not problems:  # the schema, or the checks above, have said what is wrong otherwise
            problems.add(("compare",), str(e))
        return None


def _resolve_outputs(raw: Any, local: Any, has_compare: bool, problems: Problems) -> list[Output] | None:
    """The ``output`` entries; ``has_compare``: whether the plan has a compare section, valid or not (an
    invalid one is reported at its own keys, not as missing)."""
    if raw is None:
        return [Output("table")]
    if not isinstance(raw, list):
        return None
    outputs: list[Output] = []
    for i, entry in enumerate(raw):
        where: PlanPath = ("output", i)
        if not isinstance(entry, dict) or not isinstance(entry.get("format"), str):
            continue
        fmt = entry["format"]
        path = None
        if isinstance(entry.get("path"), str) and entry["path"]:
            path = local(entry["path"])  # two entries writing one file: _check_overwrites
            if fmt == "plots" and path.exists() and not path.is_dir():
                problems.add((*where, "path"), f"{str(path)!r} is a file; plots are written into a directory")
            elif fmt != "plots" and path.is_dir():
                problems.add((*where, "path"), f"{str(path)!r} is a directory")
        if fmt == "plots" and importlib.util.find_spec("matplotlib") is None:
            from irspec.report.plots import MISSING_MATPLOTLIB  # the figures' code, only for this case

            problems.add((*where, "format"), MISSING_MATPLOTLIB)
        content = entry.get("content", "results")
        if content == "comparisons" and not has_compare:
            problems.add((*where, "content"), "comparisons asked for, but the plan has no compare section")
        per_query = entry.get("per_query", fmt in ("json", "csv", "tsv", "parquet"))
        decimals = _int(entry.get("decimals", 4))
        decimals = (
            decimals if isinstance(decimals, int) and not isinstance(decimals, bool) else 4
        )  # else reported
        intervals = entry.get("intervals")
        if intervals not in (None, "none") and (fmt not in _INTERVAL_FORMATS or content != "results"):
            problems.add(
                (*where, "intervals"),
                f"intervals are shown beside the means of the {', '.join(_INTERVAL_FORMATS)} formats' results",
            )
        intervals = default_intervals(fmt, intervals) if content == "results" else None
        outputs.append(Output(fmt, path, bool(per_query), content, decimals, intervals))
    return outputs


def _resolve_reproduce(
    data: dict[str, Any],
    runs: list[PlanRun],
    qrels_sets: list[Any],
    local: Any,
    problems: Problems,
) -> ReproduceSection | None:
    """The ``reproduce`` section (the schema has checked its shape): four of the plan's runs by name,
    and the reproductions' qrels file when given."""
    raw = data.get("reproduce")
    if not isinstance(raw, dict):
        return None
    names = {r.name for r in runs}
    ok = True
    for key in ("original", "reproduced"):
        given = raw.get(key)
        if not isinstance(given, list) or len(given) != 2 or not all(isinstance(n, str) for n in given):
            return None  # the schema has said what is wrong
        for i, name in enumerate(given):
            if name not in names:
                close = suggest(name, sorted(n for n in names if n))
                hint = f"; did you mean {' or '.join(close)}?" if close else ""
                problems.add(("reproduce", key, i), f"{quote(name)} is not a run of the plan{hint}")
                ok = False
    if qrels_sets:
        problems.add(
            ("reproduce",), "a reproduction is measured on one set of judgments; the plan has several"
        )
        ok = False
    qrels = None
    if isinstance(raw.get("qrels"), str) and raw["qrels"]:
        qrels = local(raw["qrels"])
        ok = _check_file(qrels, ("reproduce", "qrels"), "qrels", problems) and ok
    rbo_p, depth = raw.get("rbo_p", 0.95), raw.get("depth", 1000)
    if not ok or isinstance(rbo_p, bool) or not isinstance(rbo_p, (int, float)) or not 0 < rbo_p <= 1:
        return None  # the schema has said what is wrong with a number
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        return None
    return ReproduceSection(tuple(raw["original"]), tuple(raw["reproduced"]), qrels, float(rbo_p), depth)


def _resolve_power(data: dict[str, Any], problems: Problems) -> PowerDesign | None:
    """The ``power`` section (the schema has checked its numbers); it designs the compare section's
    comparisons, so it needs one. A compare section that is there but wrong is reported at its own keys,
    and the design is still checked."""
    raw = data.get("power")
    if not isinstance(raw, dict):
        return None
    if "compare" not in data:
        problems.add(("power",), "a power analysis designs the plan's comparisons; add a compare section")
        return None
    try:
        found = PowerDesign(
            delta=float(raw["delta"]), alpha=float(raw.get("alpha", 0.05)), power=float(raw.get("power", 0.8))
        )
    except OverflowError:  # an integer of hundreds of digits, which the schema takes for a number > 0
        problems.add(
            ("power", "delta"), f"{quote(raw['delta'])} is no finite number (a float holds at most 1.8e308)"
        )
        return None
    except (KeyError, TypeError, ValueError):
        return None  # the schema has said what is wrong
    nan = [k for k in ("delta", "alpha", "power") if math.isnan(getattr(found, k))]
    for key in nan:  # .nan passes the schema's bounds (every comparison with NaN is false)
        problems.add(("power", key), f"{key} must be a number, not .nan")
    if nan:
        return None
    if math.isinf(found.delta):  # .inf passes the schema's exclusive minimum of 0; the design refuses it
        problems.add(("power", "delta"), "delta must be a finite number > 0, not .inf")
        return None
    if 0 < found.alpha < 1 and 0 < found.power < 1:  # else the schema has said so
        from irspec.stats.design import check_target  # scipy's optimize and stats: a plan with power only

        try:
            check_target(found.power, found.alpha)
        except IrspecError as e:
            problems.add(("power", "power" if "power" in raw else "alpha"), str(e))
            return None
    return found
