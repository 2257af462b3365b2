"""The ``irspec`` command line. Thin: it parses arguments, calls the library, formats, sets exit codes.

``irspec eval`` (and ``irspec power --from``) maps its arguments to a :class:`~irspec.plan.model.Plan`
and runs it through :mod:`irspec.plan.execute`, the pipeline ``irspec run`` runs a plan file through:
one place for every step, whichever command asks for it.

This module is an edge of the import layering (ARCHITECTURE.md): at the top it imports only the light
layers (errors, spec, registry, plugins), so ``irspec parse`` and ``irspec --version`` load no numpy;
each subcommand imports the modules it runs (engine, reader, report, plan) inside its function.

Exit codes: 0 success, 2 bad usage or bad input (an :class:`~irspec.errors.IrspecError`, printed
without a traceback), 1 an unexpected internal error.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import gc
import math
import os
import re
import signal
import sys
import warnings
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from irspec.errors import VALUE_WIDTH, EvaluationError, IrspecError, IrspecWarning, quote, shorten
from irspec.progress import terminal_columns
from irspec.spec.plugins import get_registry, plugin_report
from irspec.version import __version__

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["main"]


def _cmd_parse(args: argparse.Namespace) -> int:
    from irspec.spec.catalog import metric_record

    metrics = get_registry().parse(args.specs)
    if args.json:
        import json  # only these listings print JSON

        print(json.dumps([metric_record(m) for m in metrics], indent=2, sort_keys=True))
    else:
        for m in metrics:
            print(m)
    return 0


def _cmd_metrics(args: argparse.Namespace) -> int:
    from irspec.spec.catalog import catalog_text, fusion_records, fusion_text, metric_records

    registry = get_registry()
    if args.fusion:  # the fusion methods (irspec fuse --method), listed as the metrics are
        records, text = fusion_records, fusion_text
    else:
        records, text = metric_records, catalog_text
    if args.json:
        import json  # only these listings print JSON

        print(json.dumps(records(registry), indent=2, sort_keys=True))
    else:
        sys.stdout.write(text(registry))
    return 0


def _cmd_plugins(args: argparse.Namespace) -> int:
    import json  # only these listings print JSON

    print(json.dumps(plugin_report(), indent=2, sort_keys=True))
    return 0


def _cmd_eval(args: argparse.Namespace) -> int:
    from irspec.plan.execute import write_outputs

    if args.recsys is not None or args.topk is not None:
        return _eval_recsys(args)
    _trec_eval_flags(args)
    given = [flag for dest, flag in _RECSYS_ONLY.items() if getattr(args, dest) is not None]
    if given:
        raise EvaluationError(
            f"{', '.join(given)} need{'s' if len(given) == 1 else ''} --recsys: "
            f"{'it is an option' if len(given) == 1 else 'they are options'} of recommendations from "
            "tables (--recsys TEST --topk RECS), not of qrels and runs"
        )
    # irspec eval is a plan built from its arguments, run as irspec run runs a plan file
    report = _run_plan(_agreement_plan(args) if args.agreement else _eval_plan(args))
    _print_warnings([report])
    write_outputs(report, make_dirs=False)  # -o as a shell's > would, into a directory that exists
    return 0


_NOT_RECSYS = {
    "system": "--system",
    "fuse": "--fuse",
    "c": "-c",
    "missing_queries": "--missing-queries",
    "depth": "-M/--depth",
    "judged_only": "-J/--judged-only",
    "collection_size": "-N/--collection-size",
    "memory": "--memory",
    "standardize": "--standardize",
    "zscores": "-Z/--zscores",
    "z_cdf": "--z-cdf",
    "groups": "--groups",
    "agreement": "--agreement",
    "write_z": "--write-z",  # one run: no per-topic deviation to write
    "rel_info_format": "-R",
    "results_format": "-T",
    "debug_level": "-D",
}
"""The options of ``irspec eval`` that have no meaning for recommendations (``--recsys``), by ``dest``."""

_RECSYS_ONLY = {
    "exclude": "--exclude",
    "popularity": "--popularity",
    "propensity": "--propensity",
    "features": "--features",
    "expected": "--expected",
    "empty_users": "--empty-users",
    "columns": "--columns",
}
"""The options of ``irspec eval`` that only recommendations read (``--recsys``), by ``dest``: the
reverse of :data:`_NOT_RECSYS`, refused without it rather than ignored (each defaults to ``None``, so
that one given with its default value is refused too)."""


def _eval_recsys(args: argparse.Namespace) -> int:
    """``irspec eval --recsys TEST --topk RECS``: the plan of a ``recsys`` section with one system, run
    as ``irspec run`` runs one (:func:`irspec.recsys.evaluate_tables`: the tables read over one index of
    users and items, each user by their own id) and written by the report writers of every
    ``irspec eval``."""
    from irspec.data.datasets import parse_specs
    from irspec.data.trec import stem
    from irspec.evaluation.context import Options
    from irspec.plan.execute import write_outputs
    from irspec.plan.model import Plan, PlanRun, RecsysSection
    from irspec.report.files import check_writable

    if args.recsys is None or args.topk is None:
        raise EvaluationError(
            "--recsys TEST and --topk RECS go together: the held-out interactions and the lists"
        )
    if args.qrels is not None or args.runs:
        raise EvaluationError(
            "--recsys reads tables, not qrels and runs: give --recsys TEST --topk RECS alone"
        )
    given = [flag for dest, flag in _NOT_RECSYS.items() if getattr(args, dest) not in (None, False, [])]
    if args.judged_warning != 0.5:
        given.append("--judged-warning")
    if given:
        raise EvaluationError(f"--recsys does not take {', '.join(given)}")
    if not args.measures:
        raise EvaluationError('--recsys needs the metrics: give -m, e.g. -m "nDCG@10, R@20, Coverage@10"')
    outputs = [_main_output(args)]
    metrics = parse_specs(args.measures, None, trec=True)
    section = RecsysSection(
        args.recsys,
        exclude=args.exclude,
        popularity=args.popularity,
        propensity=_propensity_arg(args.propensity, args.popularity or args.exclude),
        empty_users=args.empty_users or "skip",
        columns=_columns_arg(args.columns),
        features=args.features,
        expected=args.expected,
    )
    run = PlanRun(stem(args.topk) or args.topk, args.topk, args.topk)  # the lists, named by their file's stem
    options = Options(relevance_level=args.level)
    plan = Plan(None, None, (run,), tuple(metrics), options, None, tuple(outputs), recsys=section)
    check_writable(*(o.path for o in outputs if o.path is not None), inputs=plan.inputs)  # before reading
    report = _run_plan(plan)
    _print_warnings([report])
    write_outputs(report, make_dirs=False)
    return 0


def _propensity_arg(text: str | None, training: str | None) -> tuple[float, float] | None:
    """``--propensity A,B``: Jain et al.'s model's two parameters, as a plan's ``recsys.propensity``
    holds them; the model is fitted to ``training`` (``--popularity``'s table, else ``--exclude``'s)."""
    if text is None:
        return None
    parts = text.split(",")
    try:
        values = [float(p) for p in parts]
    except ValueError:
        values = []
    if len(values) != 2 or not all(math.isfinite(v) and v > 0 for v in values):
        raise EvaluationError(
            f"--propensity {quote(text)}: expected A,B, two finite numbers > 0, such as 0.55,1.5 (Jain et al.'s "
            "values in general; 0.6,2.6 for Amazon, 0.5,0.4 for Wikipedia)"
        )
    if training is None:
        raise EvaluationError(
            "--propensity: the model is fitted to the training interactions: give --popularity TRAIN or "
            "--exclude TRAIN"
        )
    return values[0], values[1]


def _columns_arg(text: str | None) -> tuple[tuple[str, str], ...]:
    """``--columns user=U,item=I,...``: the tables' column names given, as a plan's ``recsys.columns``
    holds them (``(role, name)`` pairs, each role a field of :class:`irspec.recsys.tables.Columns`)."""
    from irspec.recsys.tables import Columns

    if text is None:
        return ()
    known = [f.name for f in dataclasses.fields(Columns)]
    found: dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.strip().partition("=")
        if not sep or key not in known or not value:
            raise EvaluationError(
                f"--columns {quote(text)}: expected ROLE=NAME[,ROLE=NAME...] with ROLE one of {', '.join(known)}, "
                "e.g. user=user_id,item=movie_id,label=rating"
            )
        found[key] = value
    return tuple(sorted(found.items()))


def _trec_eval_flags(args: argparse.Namespace) -> None:
    """Refuse trec_eval's ``-R``, ``-T`` and ``-D`` where they ask for what irspec does not do: read
    preference judgments (``-R prefs``), another run format, or print trec_eval's debugging output."""
    formats = {"rel_info_format": ("-R", "qrels", ("prefs", "qrels_prefs", "qrels_jg")),
               "results_format": ("-T", "trec_results", ())}  # fmt: skip
    for dest, (flag, read, known) in formats.items():
        given = getattr(args, dest, None)
        if given is None or given == read:
            continue
        what = "a trec_eval format irspec does not read" if given in known else "not a trec_eval format"
        raise EvaluationError(f"{flag} {quote(given)}: {what}; irspec reads {read} alone")
    level = getattr(args, "debug_level", None)
    if level is not None and level.strip() != "0":
        raise EvaluationError(
            f"-D {quote(level)}: irspec prints no trec_eval debugging output (-D 0, none, is accepted)"
        )


def _eval_plan(args: argparse.Namespace) -> Any:
    """The plan of ``irspec eval QRELS RUNS...``: its flags checked, before anything is read."""
    from irspec.data.datasets import parse_specs
    from irspec.data.stream import parse_memory
    from irspec.plan.model import Output

    specs = args.measures or ["official"]
    # trec_eval prints its runid line with its own measure sets, and for -m runid (a line, not a
    # measure); keep that for scripts that parse it.
    runid = any(s.strip() in ("runid", "official", "set", "all_trec") for s in specs)
    specs = [s for s in specs if s.strip() != "runid"]
    if not specs:
        raise EvaluationError(
            "-m runid prints the run's runid line above its measures: ask for a measure too"
        )
    metrics = parse_specs(specs, args.qrels, trec=True)  # -m irds-official with irds:<id> qrels
    options = _options(args)
    memory = None
    if args.memory is not None:
        try:
            memory = parse_memory(args.memory)
        except EvaluationError as e:
            raise EvaluationError(f"--memory: {e}") from None
    output = _main_output(args, runid=runid)
    systems = [_system_arg(text) for text in args.system or ()]
    fused = [_fuse_arg(text) for text in args.fuse or ()]
    members = [p for _, paths in systems for p in paths] + [p for r in fused for p in r.path.paths]
    if (list(args.runs) + members).count("-") + (args.qrels == "-") > 1:
        raise EvaluationError("standard input ('-') can be read only once")
    outputs = [output]
    if args.write_z:  # the runs' per-topic means and deviations, for -Z elsewhere
        outputs.append(Output("zscores", _path(args.write_z)))
    z, groups = _standardize_arg(args), args.groups
    return _writable(
        _plan(
            args.qrels,
            args.runs,
            metrics,
            options,
            outputs,
            memory=memory,
            systems=systems,
            fused=fused,
            standardize=z,
            groups=groups,
        )
    )


def _main_output(args: argparse.Namespace, *, runid: bool = False) -> Any:
    """The output of ``irspec eval``'s ``-f``, ``-o``, ``-q``, ``--ci`` and ``--decimals``, checked: the
    intervals in a format that shows them, a binary format into a file."""
    from irspec.plan.model import Output
    from irspec.report import BINARY_FORMATS
    from irspec.report.formats import WITH_INTERVALS, default_intervals

    if args.ci not in (None, "none") and args.format not in WITH_INTERVALS:
        raise EvaluationError(
            f"--ci shows intervals in the {', '.join(WITH_INTERVALS)} formats, not in --format {args.format}"
        )
    if not args.output and args.format in BINARY_FORMATS:
        raise IrspecError(f"--format {args.format} writes a binary file, not text: give -o FILE")
    if args.no_summary and args.format != "trec":
        raise EvaluationError(
            f"-n leaves out trec_eval's summary lines: it goes with --format trec, not {args.format}"
        )
    intervals = default_intervals(args.format, args.ci)
    return Output(
        args.format,
        _path(args.output),
        args.per_query,
        decimals=args.decimals,
        intervals=intervals,
        runid=runid,
        summary=not args.no_summary,
    )


def _writable(plan: Any) -> Any:
    """``plan``, once its outputs are seen to be writable (none a file it reads, none a directory, each
    in a directory that exists): before the evaluation, not after it."""
    paths = [o.path for o in plan.outputs if o.path is not None]
    if paths:  # (a table on standard output alone loads neither the writer's module nor pathlib)
        from irspec.report.files import check_writable

        check_writable(*paths, inputs=plan.inputs)
    return plan


def _agreement_plan(args: argparse.Namespace) -> Any:
    """The plan of ``irspec eval QRELS... RUNS... --agreement``: every run against each set of judgments
    (told from the runs by their content, in any order; each named by its file's stem), compared
    pairwise (paired t-test, Holm: a plan's comparisons without a compare section), and the agreement."""
    from irspec.data import split_kinds
    from irspec.data.datasets import parse_specs
    from irspec.data.trec import stem
    from irspec.plan.model import Output
    from irspec.report.agreement import COMBINED_FORMATS

    if args.format not in COMBINED_FORMATS:
        raise EvaluationError(
            f"--agreement reports in the {', '.join(COMBINED_FORMATS)} formats, not --format {args.format}"
        )
    if args.ci is not None or args.memory is not None or args.no_summary:
        raise EvaluationError("--agreement does not take --ci, --memory or -n")
    if args.write_z:
        raise EvaluationError(
            "--agreement does not take --write-z: the runs have per-topic means under each set of judgments"
        )
    paths = [args.qrels, *args.runs]
    if "-" in paths:
        raise EvaluationError("--agreement reads files only, not standard input ('-')")
    qrels_paths, runs = split_kinds(paths)
    if len(qrels_paths) < 2 or len(runs) < 2:
        raise EvaluationError(
            f"--agreement needs at least 2 qrels files and 2 runs; got {len(qrels_paths)} qrels and {len(runs)} runs "
            "(told apart by their content)"
        )
    names = [stem(p) or p for p in qrels_paths]  # qrels.human.txt is qrels.human, as a run's name is its stem
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise EvaluationError(
            f"--agreement names each qrels set by its file name; {', '.join(twice)} is given twice"
        )
    metrics = parse_specs(args.measures or ["official"], qrels_paths[0], trec=True)
    options = _options(args)
    systems = [_system_arg(text) for text in args.system or ()]
    output = Output(args.format, _path(args.output), args.per_query, decimals=args.decimals)  # no intervals
    z, groups, sets = _standardize_arg(args), args.groups, tuple(zip(names, qrels_paths, strict=True))
    return _writable(
        _plan(
            qrels_paths[0],
            runs,
            metrics,
            options,
            [output],
            systems=systems,
            standardize=z,
            groups=groups,
            qrels_sets=sets,
        )
    )


def _plan(
    qrels: str,
    runs: Sequence[str],
    metrics: Sequence[Any],
    options: Any,
    outputs: Sequence[Any] = (),
    *,
    systems: Sequence[tuple[str, list[str]]] = (),
    fused: Sequence[Any] = (),
    **fields: Any,
) -> Any:
    """The plan of a command line: no file (``source`` ``None``), paths as typed, each run named as it is
    read, then the fused runs (``--fuse``); ``fields`` are the plan's others (``memory``, ``standardize``,
    ``groups``, ``qrels_sets``)."""
    from irspec.plan.model import Plan, PlanRun, PlanSystem

    named = tuple(
        PlanSystem(name, tuple(PlanRun(None, p, p) for p in paths), f"--system {name}")
        for name, paths in systems
    )
    runs_typed = tuple(PlanRun(None, path, path) for path in runs) + tuple(fused)
    return Plan(
        None, qrels, runs_typed, tuple(metrics), options, None, tuple(outputs), systems=named, **fields
    )


def _path(text: str | None) -> Path | None:
    if not text:
        return None
    # imported here: pathlib's import (with urllib's) is ~3% of a small evaluation, which makes no path
    from pathlib import Path

    return Path(text)


def _standardize_arg(args: argparse.Namespace) -> Any:
    """``--standardize`` (reference: the runs given) or ``-Z FILE`` (with ``--z-cdf``), or ``None``."""
    from irspec.plan.model import Standardize

    if args.standardize and args.zscores:
        raise EvaluationError("--standardize takes the runs given as the reference and -Z a file: give one")
    if args.z_cdf and not (args.standardize or args.zscores):
        raise EvaluationError("--z-cdf maps z-scores: give --standardize or -Z FILE too")
    if not (args.standardize or args.zscores):
        return None
    return Standardize(file=args.zscores, cdf=args.z_cdf)


def _system_arg(text: str) -> tuple[str, list[str]]:
    """``--system NAME=PATHS``: the name and the run files (comma-separated paths or globs, which irspec
    expands, since a shell does not expand ``dense=runs/*.run``)."""
    from irspec.evaluation.systems import expand_runs

    name, sep, paths = text.partition("=")
    if not sep or not name or not paths:
        raise EvaluationError(
            f"--system {quote(text)}: expected NAME=PATH[,PATH...] (paths or globs), e.g. dense=runs/dense-seed*.run"
        )
    return name, expand_runs(name, [p for p in paths.split(",") if p])


def _fuse_arg(text: str) -> Any:
    """``--fuse NAME=SPEC:PATHS``: a fused run (a plan's run whose path is a ``FusedRun``), its spec bound
    now, so that a bad one stops the command before anything is read."""
    from irspec.plan.model import FusedRun, PlanRun
    from irspec.spec.fusion import parse_fusion

    name, sep, rest = text.partition("=")
    depth, cut = 0, -1
    for i, ch in enumerate(rest):  # the spec's own brackets may hold anything but its end
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == ":" and depth == 0:
            cut = i
            break
    paths = [p for p in rest[cut + 1 :].split(",") if p] if cut > 0 else []
    if not sep or not name or len(paths) < 2:
        raise EvaluationError(
            f"--fuse {quote(text)}: expected NAME=SPEC:PATH,PATH[,PATH...], e.g. hybrid=rrf(k=60):bm25.run,dense.run"
        )
    try:
        method = parse_fusion(rest[:cut], get_registry())
    except IrspecError as e:
        raise EvaluationError(f"--fuse {name}: {e}") from None
    from pathlib import Path

    members = tuple(Path(p).name for p in paths)
    return PlanRun(name, FusedRun(members, tuple(paths), method), f"--fuse {name}")


def _options(args: argparse.Namespace) -> Any:
    """The evaluation options of ``irspec eval``'s flags."""
    from irspec.evaluation.context import Options

    # One default for every format, so that --format never changes a mean: "zero", as trec_eval -c (the
    # library's default; trec_eval 10 without -c stops at a qrels query the run lacks).
    if args.c and args.missing_queries not in (None, "zero"):
        raise EvaluationError(
            f"-c scores missing queries 0; it contradicts --missing-queries {args.missing_queries}"
        )
    return Options(
        relevance_level=args.level,
        depth=args.depth,
        judged_only=args.judged_only,
        missing_queries=args.missing_queries or "zero",
        collection_size=args.collection_size,
        judged_warning=args.judged_warning or None,
    )


def _print_warnings(results: Sequence[Any]) -> None:  # Any: the CLI imports no heavy layer at its top
    from irspec.evaluation.evaluated import collect_warnings
    from irspec.evaluation.notes import summarised

    for w in summarised(collect_warnings(results)):  # many runs' Judged@10 warnings said as one
        print(f"irspec: warning: {w}", file=sys.stderr)


def _cmd_run(args: argparse.Namespace) -> int:
    from irspec.plan.execute import write_outputs
    from irspec.plan.load import load_plan

    plan = load_plan(args.plan, overrides=args.set or ())
    report = _run_plan(plan)
    _print_warnings([report])
    if not any(o.format == "table" and o.path is None for o in plan.outputs):  # its legend has the notes
        for n in report.notes:
            print(f"irspec: note: {n}", file=sys.stderr)
    for path in write_outputs(report):
        print(f"irspec: wrote {path}", file=sys.stderr)
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    from irspec.plan.load import load_plan

    plan = load_plan(args.plan, overrides=args.set or ())
    n, m = len(plan.runs), len(plan.metrics)
    log = ", a log" if plan.log is not None else ""
    k = len(plan.systems)
    systems = f", {k} system{'s' if k != 1 else ''} of several runs" if k else ""
    print(f"ok: {n} run{'s' if n != 1 else ''}{systems}{log}, {m} metric{'s' if m != 1 else ''}")
    return 0


def _cmd_power(args: argparse.Namespace) -> int:
    settings = {name: _unit_number(name, getattr(args, name)) for name in ("delta", "alpha", "power")}
    if (args.plan is None) == (args.sources is None):
        raise EvaluationError("give a plan or --from qrels and runs (one of them)")
    if args.plan is not None:
        if args.measures or args.baseline:
            raise EvaluationError(
                "-m and --baseline go with --from; a plan names its metrics and baseline itself"
            )
        from irspec.plan.execute import plan_power
        from irspec.plan.load import load_plan

        report = _run_plan(load_plan(args.plan, overrides=args.set or ()))
        _print_warnings([report])
        analysis = plan_power(report, **settings)
    else:
        analysis = _power_from_files(args, settings)
    out = {"table": analysis.to_table, "markdown": analysis.to_markdown, "latex": analysis.to_latex}
    sys.stdout.write(
        analysis.to_json() if args.format == "json" else out[args.format](decimals=args.decimals)
    )
    return 0


def _cmd_diff(args: argparse.Namespace) -> int:
    from irspec.experiment.diff import diff
    from irspec.report import check_writable, write_atomic

    if [args.qrels, args.run_a, args.run_b].count("-") > 1:
        raise EvaluationError("standard input ('-') can be read only once")
    inputs = [args.qrels, args.run_a, args.run_b]
    if args.output:  # before the evaluation, not after it
        check_writable(args.output, inputs=inputs)
    _start_up_over()
    found = diff(
        args.qrels,
        args.run_a,
        args.run_b,
        args.measures or ["nDCG@10"],
        top=args.top,
        depth=args.depth,
        relevance_level=args.level,
        missing_queries=args.missing_queries,
        queries=args.queries,
    )
    for w in found.warnings:
        print(f"irspec: warning: {w}", file=sys.stderr)
    if args.format == "json":
        out = found.to_json(queries=args.queries)
    elif args.format == "html":
        out = found.to_html(queries=args.queries, decimals=args.decimals)
    else:  # text and Markdown show the 10 largest losses and gains unless told
        render = found.to_markdown if args.format == "markdown" else found.to_text
        out = render(queries=args.queries or 10, decimals=args.decimals)
    if args.output:
        write_atomic(args.output, out, make_dirs=False, inputs=inputs)
    else:
        sys.stdout.write(out)
    return 0


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from irspec.experiment.reproduce import reproduce
    from irspec.report.files import check_writable, write_atomic

    inputs = [args.qrels, *args.original, *args.reproduced, args.reproduced_qrels]
    if args.output:  # before the evaluation, not after it
        check_writable(args.output, inputs=inputs)
    rep = reproduce(
        args.qrels,
        original=args.original,
        reproduced=args.reproduced,
        metrics=args.measures,
        reproduced_qrels=args.reproduced_qrels,
        p=_rbo_p(args.rbo_p),
        depth=args.depth,
    )
    for w in rep.warnings:
        print(f"irspec: warning: {w}", file=sys.stderr)
    text = rep.render(args.format, decimals=args.decimals)
    if args.output:
        # as a shell's > would: into a directory that exists
        write_atomic(args.output, text.encode("utf-8"), make_dirs=False, inputs=inputs)
    else:
        sys.stdout.write(text)
    return 0


def _rbo_p(text: str) -> float:
    """``--rbo-p`` as a number in (0, 1], or an error naming the flag."""
    try:
        value = float(text)
    except ValueError:
        raise EvaluationError(f"--rbo-p must be a number, not {quote(text)}") from None
    if not 0 < value <= 1:
        raise EvaluationError(f"--rbo-p must be a number in (0, 1], not {quote(text)}")
    return value


def _unit_number(name: str, text: str | None) -> float | None:
    """``--delta``/``--alpha``/``--power`` as a number (checked by the analysis), or an error naming the flag."""
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        raise EvaluationError(f"--{name} must be a number, not {quote(text)}") from None
    if name == "delta" and not 0 < value < float("inf"):
        raise EvaluationError(
            f"--delta must be a number > 0 (the minimum difference of interest), not {quote(text)}"
        )
    if name != "delta" and not 0 < value < 1:
        raise EvaluationError(f"--{name} must be a number strictly between 0 and 1, not {quote(text)}")
    return value


def _power_from_files(args: argparse.Namespace, settings: dict[str, float | None]) -> Any:  # PowerAnalysis
    """The power analysis of runs given with ``--from`` (qrels and runs in any order, told apart by
    their content), evaluated on ``-m``'s metrics (default nDCG@10) as a plan that compares nothing."""
    from irspec.data import split_kinds
    from irspec.data.datasets import parse_specs
    from irspec.evaluation.context import Options
    from irspec.experiment.power import power

    qrels, runs = split_kinds(args.sources)
    if len(qrels) != 1:
        shown = ", ".join(map(quote, (qrels or runs)[:4])) + (", ..." if len(qrels or runs) > 4 else "")
        found = f": {shown}" if qrels else f" (each file read as a run: {shown})"
        raise EvaluationError(
            f"--from takes exactly one qrels file and the runs, told apart by their content; found "
            f"{len(qrels)} qrels{found}"
        )
    if len(runs) < 2:
        raise EvaluationError(f"--from needs at least 2 runs to design comparisons for; found {len(runs)}")
    metrics = parse_specs(args.measures or ["nDCG@10"], qrels[0], trec=True)
    report = _run_plan(_plan(qrels[0], runs, metrics, Options()))
    _print_warnings([report])
    chosen = {k: v for k, v in settings.items() if v is not None}
    return power(list(report.results), baseline=args.baseline, **chosen)


class _Parser(argparse.ArgumentParser):
    """argparse's parser, its usage errors quoting a long argument cut short: argparse echoes a bad
    value whole (``invalid int value: '...'``, ``invalid choice: 999...``), however long."""

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse makes a formatter for every option it adds (to check its metavar), and one made without
        # a width imports shutil for the terminal's (terminal_columns); the width argparse would take.
        # Every formatter of argparse's takes one; its stubs' type of formatter_class names prog alone.
        return self.formatter_class(prog=self.prog, width=terminal_columns() - 2)  # type: ignore[call-arg]

    def error(self, message: str) -> NoReturn:
        """Print the usage and the message, each long word of it cut to a short excerpt, and exit 2."""
        super().error(
            # %-format: an f-string would have to double the quantifier's braces
            re.sub(r"\S{%d,}" % (VALUE_WIDTH + 1), lambda m: shorten(m.group(0), VALUE_WIDTH), message)  # noqa: UP031
        )


def _cmd_fuse(args: argparse.Namespace) -> int:
    from irspec.fusion.engine import fuse_to_file

    if args.depth is not None and args.depth < 1:
        raise EvaluationError(f"--depth must be a positive number of documents, got {args.depth}")
    if args.runs.count("-") > 1:
        raise EvaluationError("standard input ('-') can be read only once")
    if args.optimize is not None and args.qrels is None:
        raise EvaluationError(
            "--optimize searches parameters on training queries: give them with --qrels TRAIN"
        )
    if args.output not in (None, "-"):  # before training or tuning, which read the runs
        from irspec.report.files import check_writable

        # a trained or tuned run's provenance goes beside it (fuse_to_file checks both again)
        side = [args.output + ".provenance.json"] if args.qrels is not None else []
        check_writable(args.output, *side, inputs=[*args.runs, args.qrels], make_dirs=True)
    runs: list[Any] = list(args.runs)
    if "-" in runs and args.qrels is not None:
        # Tuning and training read the runs before they are fused, and standard input can be read
        # only once: it is read whole, here.
        from irspec.data import read_run

        runs[runs.index("-")] = read_run("-")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", IrspecWarning)
        spec = args.method
        if args.optimize is not None:
            from irspec.fusion.tuning import tune_fusion

            spec = tune_fusion(runs, args.method, args.optimize, args.qrels, memory=args.memory)
            print(f"irspec: chose {spec.fusion}: {spec.note}", file=sys.stderr)
        fusion = fuse_to_file(
            runs,
            spec,
            args.output,
            depth=args.depth,
            runid=args.runid,
            memory=args.memory,
            qrels=args.qrels,
        )
    for w in caught:
        print(f"irspec: warning: {w.message}", file=sys.stderr)
    if args.output not in (None, "-"):
        how = f" ({fusion.note})" if fusion.note else ""
        print(f"irspec: fused {len(args.runs)} runs by {fusion}{how} into {args.output}", file=sys.stderr)
    return 0


def _decimals_arg(p: argparse.ArgumentParser, help: str) -> None:
    """``--decimals N`` (0-10, default 4), as every command that prints numbers spells it."""
    p.add_argument("--decimals", type=int, default=4, choices=range(11), metavar="N", help=help)


def _level_arg(p: argparse.ArgumentParser, *trec_eval: str) -> None:
    """``-l/--relevance-level L``, trec_eval's flag, as every command that reads labels spells it (and
    ``trec_eval``'s other spellings of it, for the command that takes its command line)."""
    p.add_argument(
        "-l",
        "--relevance-level",
        *trec_eval,
        dest="level",
        type=int,
        default=1,
        metavar="L",
        help="labels >= L are relevant (default 1)",
    )


_SET_HELP = "override a plan value before validation, e.g. compare.test=randomization (value read as YAML); repeatable"


def _add_parse(sub: Any) -> None:
    p = sub.add_parser("parse", help="parse metric specs and print their canonical text")
    p.add_argument("specs", nargs="+", help='metric specs, e.g. "ndcg@10, bpref(10+R)"')
    p.add_argument("--json", action="store_true", help="print the bound specs as JSON")
    p.set_defaults(func=_cmd_parse)


def _add_metrics(sub: Any) -> None:
    p = sub.add_parser("metrics", help="list every registered metric (--fusion: every fusion method)")
    p.add_argument("--json", action="store_true", help="print as JSON")
    p.add_argument(
        "--fusion", action="store_true", help="list the fusion methods (irspec fuse --method) instead"
    )
    p.set_defaults(func=_cmd_metrics)


def _add_plugins(sub: Any) -> None:
    p = sub.add_parser("plugins", help="list installed plugins and what they register (JSON)")
    p.set_defaults(func=_cmd_plugins)


def _add_eval(sub: Any, *, recsys: bool = False) -> None:
    """``irspec eval``'s declaration; with ``recsys`` (a command line with ``--recsys``), the qrels and
    runs are optional, as the tables take their place."""
    p = sub.add_parser(
        "eval",
        help="evaluate runs against qrels (accepts trec_eval's flags)",
        description="Evaluate one or more runs against qrels. trec_eval's command line works unchanged: "
        "-m (repeatable, attached forms such as -mndcg_cut.10 too), -q, -n, -c, -l, -M, -J, -N, -Z, and their "
        "long forms (--measure, --query_eval_wanted, --nosummary, ...).",
    )
    p.add_argument(
        "qrels",
        nargs="?" if recsys else None,
        help="qrels file (gzip or plain; - for standard input), or irds:<id>, an ir_datasets dataset's qrels",
    )
    p.add_argument("runs", nargs="*" if recsys else "+", help="run files (- for standard input)")
    p.add_argument(
        "--system",
        action="append",
        metavar="NAME=PATHS",
        help="a system of several runs of one method (seeds, folds), reported as the mean of its runs per topic, "
        "after the runs: NAME=runs/dense-seed*.run or NAME=a.run,b.run (globs expanded by irspec); repeatable",
    )
    p.add_argument(
        "--fuse",
        action="append",
        metavar="NAME=SPEC:PATHS",
        help="a run fused from run files, evaluated after the runs: NAME=rrf(k=60):bm25.run,dense.run "
        "(the spec as irspec fuse --method takes it); repeatable",
    )
    p.add_argument(
        "-m",
        "--measure",
        dest="measures",
        action="append",
        metavar="SPEC",
        help="metric spec(s), repeatable; trec_eval names and sets (official, set, all_trec) work, and irds-official "
        "(the dataset's official measures) with irds: qrels; default official",
    )
    # trec_eval's long options (its getopt_long names) are read too: a script written for it runs unchanged
    p.add_argument(
        "-q", "--per-query", "--query_eval_wanted", action="store_true", help="also print per-query values"
    )
    p.add_argument(
        "-n",
        "--no-summary",
        "--nosummary",
        action="store_true",
        help="print no summary (all) lines, the per-query ones alone with -q (trec_eval -n; with --format trec)",
    )
    p.add_argument(
        "-c",
        "--complete_rel_info_wanted",
        dest="c",
        action="store_true",
        help="score qrels queries missing from a run as 0 (trec_eval -c; irspec's default)",
    )
    p.add_argument(
        "--missing-queries",
        choices=("zero", "skip", "error"),
        help="what a qrels query missing from a run gets, in every format (default zero, as trec_eval -c)",
    )
    _level_arg(p, "--level_for_rel")
    p.add_argument(
        "-M",
        "--depth",
        "--Max_retrieved_per_topic",
        dest="depth",
        type=int,
        default=None,
        metavar="N",
        help="evaluate only the top N documents of each ranking",
    )
    p.add_argument(
        "-J",
        "--judged-only",
        "--Judged_docs_only",
        dest="judged_only",
        action="store_true",
        help="drop unjudged documents before measuring",
    )
    p.add_argument(
        "-N",
        "--collection-size",
        "--Number_docs_in_coll",
        dest="collection_size",
        type=int,
        default=None,
        metavar="N",
        help="number of documents in the collection (for fall-out)",
    )
    # trec_eval's flags for its input formats and debugging, read so that its command lines run unchanged:
    # the formats irspec reads are the defaults, the others are refused naming them (_trec_eval_flags)
    p.add_argument(
        "-R", "--Rel_info_format", dest="rel_info_format", metavar="FORMAT",
        help="trec_eval's qrels format: qrels, the only one read (prefs, qrels_prefs and qrels_jg are not)",
    )  # fmt: skip
    p.add_argument(
        "-T", "--Results_format", dest="results_format", metavar="FORMAT",
        help="trec_eval's run format: trec_results, the only one",
    )  # fmt: skip
    p.add_argument(
        "-D", "--Debug_level", dest="debug_level", metavar="N",
        help="trec_eval's debugging output, which irspec does not print (0: none, accepted)",
    )  # fmt: skip
    p.add_argument(
        "-v", "--version", action="version", version=f"irspec {__version__}",
        help="print irspec's version and exit (trec_eval -v)",
    )  # fmt: skip
    p.add_argument(
        "--judged-warning",
        type=float,
        default=0.5,
        metavar="F",
        help="warn that a run's scores are likely underestimated when under this fraction of its top 10 "
        "documents are judged (Judged@10; default 0.5, 0 for never)",
    )
    p.add_argument(
        "-f",
        "--format",
        choices=("table", "json", "jsonl", "csv", "tsv", "trec", "latex", "markdown", "parquet"),
        default="table",
        help="output format (default: an aligned table; latex and markdown: the means, best in bold; "
        "jsonl: ir_measures' records; parquet: long rows run, query_id, metric, value, text, to a file given by -o)",
    )
    p.add_argument(
        "--ci",
        nargs="?",
        const="t",
        choices=("t", "bootstrap", "none"),
        default=None,
        help="the 95%% confidence interval beside each mean: t (Student's t over the queries), bootstrap (BCa) "
        "or none; table and markdown show t intervals by default, latex only with --ci",
    )
    _decimals_arg(p, "decimal places in table, latex and markdown output (0-10, default 4)")
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write to FILE (atomically; its directory must exist) instead of standard output",
    )
    p.add_argument(
        "--memory",
        metavar="SIZE",
        help="cap the working set, e.g. 1GiB or 500MB: a larger run is evaluated in blocks of whole queries, "
        "with the same values (default: half the available memory, at most 2GiB)",
    )
    p.add_argument(
        "--standardize",
        action="store_true",
        help="per-topic z-scores, (x - topic mean) / topic sd over the runs given (sample sd; Webber et al. 2008)",
    )
    p.add_argument(
        "-Z",
        "--zscores",
        "--Zscore",
        dest="zscores",
        metavar="FILE",
        help="per-topic z-scores from trec_eval's -Z file of lines 'query_id measure mean sd'",
    )
    p.add_argument(
        "--z-cdf",
        action="store_true",
        help="map the z-scores through the standard normal CDF, into [0, 1] (off by default, as trec_eval -Z)",
    )
    p.add_argument(
        "--write-z",
        metavar="FILE",
        help="write the runs' per-topic means and sample sds in trec_eval's -Z format, for -Z elsewhere",
    )
    p.add_argument(
        "--groups",
        metavar="FILE",
        help="per-group means with 95%% t intervals, from a file of lines 'query_id group' (a query may be in several groups)",
    )

    p.add_argument(
        "--agreement",
        action="store_true",
        help="several sets of judgments: give two or more qrels and two or more runs, in any order (told apart "
        "by their content); every run is evaluated against each set and compared (paired t-test, Holm), then "
        "how the sets agree: rankings (Kendall's tau, tau_AP, swapped pairs), labels (kappa, alpha) and "
        "significance (formats table, json, markdown, latex)",
    )
    recommendations = p.add_argument_group(
        "recommendations",
        "Evaluate a recommender from interaction tables (Parquet: user, item and optionally label or rating; the "
        "lists: user, item and rank or score) instead of qrels and runs: irspec eval --recsys test.parquet --topk "
        'recs.parquet --exclude train.parquet -m "nDCG@10, Coverage@10". Users are reported by their own ids; '
        "-m, -q, -l, -f, --ci, --decimals and -o apply; the other options of this group need --recsys.",
    )
    recommendations.add_argument(
        "--recsys", metavar="TEST", help="the held-out interactions (Parquet), in place of the qrels"
    )
    recommendations.add_argument(
        "--topk",
        metavar="RECS",
        help="the recommendations (Parquet: user, item, rank or score), in place of the runs; named by the file's stem",
    )
    recommendations.add_argument(
        "--exclude",
        metavar="TRAIN",
        help="training interactions (Parquet): removed from each list before any cutoff",
    )
    recommendations.add_argument(
        "--popularity",
        metavar="TRAIN",
        help="interactions (Parquet, usually the training ones) whose users per item are its popularity "
        "(ARP@k, APLT@k, Novelty@k)",
    )
    recommendations.add_argument(
        "--propensity",
        metavar="A,B",
        help="Jain et al.'s propensity model for PSP@k, PSDCG@k and PSnDCG@k, fitted to --popularity's table, "
        "else --exclude's: its A,B (0.55,1.5 in general; 0.6,2.6 for Amazon; 0.5,0.4 for Wikipedia)",
    )
    recommendations.add_argument(
        "--features",
        metavar="ITEMS",
        help="the items' features (Parquet: item, then a number, a boolean or a list of numbers a column), for "
        "ILD@k",
    )
    recommendations.add_argument(
        "--expected",
        metavar="EXPECTED",
        help="the items each user expects (Parquet: user, item), for Serendipity(expected=items)@k",
    )
    recommendations.add_argument(
        "--empty-users",
        choices=("skip", "zero"),
        help="a user without a relevant held-out item: left out (skip, the default) or 0 on every metric",
    )
    recommendations.add_argument(
        "--columns",
        metavar="ROLE=NAME,...",
        help="the tables' column names where they are not user, item, label (or rating), rank, score: "
        "e.g. user=user_id,item=movie_id,label=rating",
    )
    p.set_defaults(func=_cmd_eval, ends_start_up=True)


def _add_diff(sub: Any) -> None:
    p = sub.add_parser(
        "diff",
        help="compare two runs query by query: the largest losses and gains, and why",
        description="Compare RUN_B with RUN_A query by query: both runs' values and B minus A on each metric, "
        "the queries B loses and wins most on the first metric, and for each the top K of both rankings side by "
        "side (label or unjudged, rank in the other run or not retrieved), with the relevant documents gained "
        "and lost in the top K and the unjudged ones. A qrels query one run lacks is scored as an empty ranking "
        "(--missing-queries skip leaves it out); either way a warning names it.",
    )
    p.add_argument("qrels", help="qrels file (gzip or plain; - for standard input), or irds:<id>")
    p.add_argument("run_a", help="the run compared against (the baseline)")
    p.add_argument("run_b", help="the run compared with it; differences are B minus A")
    p.add_argument(
        "-m",
        "--measure",
        dest="measures",
        action="append",
        metavar="SPEC",
        help="metric spec(s), repeatable; the queries are sorted by the first (default nDCG@10)",
    )
    p.add_argument(
        "--top",
        type=int,
        default=10,
        metavar="K",
        help="documents of each ranking shown, and the cut for relevant documents gained and lost (default 10)",
    )
    p.add_argument(
        "--queries",
        type=int,
        default=None,
        metavar="N",
        help="how many of the largest losses and of the largest gains to show (default 10 each in text and "
        "markdown, every query in json and html)",
    )
    p.add_argument(
        "-M",
        "--depth",
        dest="depth",
        type=int,
        default=None,
        metavar="N",
        help="evaluate and compare only the top N documents of each ranking (trec_eval -M); below it a document "
        "is not retrieved",
    )
    _level_arg(p)
    p.add_argument(
        "--missing-queries",
        choices=("zero", "skip"),
        default="zero",
        help="a qrels query one run lacks: zero scores it as an empty ranking (trec_eval -c, the default), "
        "skip leaves the query out of the comparison",
    )
    p.add_argument(
        "-f",
        "--format",
        choices=("text", "markdown", "json", "html"),
        default="text",
        help="output format (html: a self-contained page whose query table sorts by any column and shows a "
        "query's two rankings when clicked)",
    )
    _decimals_arg(p, "decimal places in text, markdown and html (0-10, default 4)")
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write to FILE (atomically; its directory must exist) instead of standard output",
    )
    p.set_defaults(func=_cmd_diff, ends_start_up=True)


def _add_run(sub: Any) -> None:
    p = sub.add_parser("run", help="run an evaluation plan (YAML): evaluate, compare, write the outputs")
    p.add_argument("plan", help="the plan file, e.g. specs/demo.yaml")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help=_SET_HELP)
    p.set_defaults(func=_cmd_run, ends_start_up=True)


def _add_power(sub: Any) -> None:
    p = sub.add_parser(
        "power",
        help="power of the comparisons and the topics a minimum difference needs (Sakai's topic set size design)",
        description="The power of each comparison (paired t-test) and of a one-way ANOVA over all runs per metric: "
        "achieved power for --delta, the minimum detectable difference at --power, and the topics --delta needs. "
        "From a plan (its compare section's comparisons; its power section's delta, alpha and power unless given "
        "here) or from --from qrels and runs in any order.",
    )
    p.add_argument("plan", nargs="?", help="the plan file, e.g. specs/demo.yaml")
    p.add_argument(
        "--from",
        dest="sources",
        nargs="+",
        metavar="FILE",
        help="one qrels file and the runs, in any order (told apart by their content)",
    )
    p.add_argument(
        "-m",
        "--measure",
        dest="measures",
        action="append",
        metavar="SPEC",
        help="metric spec(s) with --from, repeatable (default nDCG@10)",
    )
    p.add_argument(
        "--baseline",
        metavar="RUN",
        help="with --from: design every run against this one (default: all pairs)",
    )
    p.add_argument("--delta", metavar="D", help="the minimum difference of interest, on the metric's scale")
    p.add_argument("--alpha", metavar="A", help="significance level (default 0.05, or the plan's)")
    p.add_argument("--power", metavar="P", help="target power (default 0.8, or the plan's)")
    p.add_argument(
        "-f",
        "--format",
        choices=("table", "json", "markdown", "latex"),
        default="table",
        help="output format",
    )
    _decimals_arg(p, "decimal places (0-10, default 4)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help=_SET_HELP)
    p.set_defaults(func=_cmd_power, ends_start_up=True)


def _add_fuse(sub: Any) -> None:
    p = sub.add_parser(
        "fuse",
        help="fuse runs into one (RRF, CombMNZ, a weighted sum, ...): a TREC run or Parquet",
        description="Fuse two runs or more into one by a fusion spec, written like a metric spec: "
        '"rrf(k=60)", "mnz(norm=min-max)", "wsum(weights=[0.3,0.7], norm=zmuv)" (ranx\'s names as spelled). '
        "Scores are written at full precision, so the fused run read back ranks as it was fused. Runs larger "
        "than memory are fused in blocks of queries.",
    )
    p.add_argument(
        "runs", nargs="+", metavar="RUN", help="the runs (TREC text or Parquet; '-' standard input)"
    )
    p.add_argument("--method", required=True, metavar="SPEC", help='the fusion method, e.g. "rrf(k=60)"')
    p.add_argument(
        "-o", "--output", metavar="OUT", help="the fused run (Parquet if it ends in .parquet; default stdout)"
    )
    p.add_argument("--depth", type=int, metavar="K", help="keep the top K documents of each query")
    p.add_argument("--runid", metavar="NAME", help="the fused run's runid column (default fused)")
    p.add_argument("--memory", metavar="SIZE", help="memory budget, e.g. 1GiB (default: from the machine)")
    p.add_argument(
        "--qrels",
        metavar="TRAIN",
        help="training judgments: a method that learns (probfuse, posfuse, ...) is trained on them",
    )
    p.add_argument(
        "--optimize",
        metavar="METRIC",
        help="search the parameters the spec leaves out (ranx's grids) for the best METRIC on the --qrels "
        "queries; the choice is printed and, with -o OUT, written to OUT.provenance.json",
    )
    p.set_defaults(func=_cmd_fuse)


def _add_reproduce(sub: Any) -> None:
    p = sub.add_parser(
        "reproduce",
        help="how closely reproduced runs reproduce the original ones (KTU, RBO, RMSE, ER, ΔRI, t-tests)",
        description="Breuer et al.'s measures (SIGIR 2020; the values of repro_eval) of an original baseline and "
        "advanced run against their reproductions: on the same qrels (reproducibility) the per-topic KTU and RBO, "
        "RMSE and nRMSE of the per-topic scores and the paired t-test; on another collection's qrels "
        "(--reproduced-qrels: replicability) the unpaired t-test; in both, the effect ratio (ER, ideally 1) and "
        "delta relative improvement (ΔRI, ideally 0).",
    )
    p.add_argument("qrels", help="the original qrels (and the reproductions', without --reproduced-qrels)")
    p.add_argument(
        "--original", nargs=2, required=True, metavar=("BASELINE", "ADVANCED"), help="the original runs"
    )
    p.add_argument(
        "--reproduced", nargs=2, required=True, metavar=("BASELINE", "ADVANCED"), help="their reproductions"
    )
    p.add_argument(
        "-m",
        "--measure",
        dest="measures",
        action="append",
        required=True,
        metavar="SPEC",
        help="metric spec(s), repeatable: per-topic scores in [0, 1] averaged by a mean (nDCG@10, AP, P@10)",
    )
    p.add_argument(
        "--reproduced-qrels",
        metavar="QRELS",
        help="the reproductions' qrels, of another collection: replicability (ER, ΔRI, unpaired t-test)",
    )
    p.add_argument("--rbo-p", default="0.95", metavar="P", help="RBO's persistence p (default 0.95)")
    p.add_argument(
        "--depth", type=int, default=1000, metavar="K", help="RBO's depth and KTU's cut (default 1000)"
    )
    p.add_argument(
        "-f",
        "--format",
        choices=("text", "markdown", "latex", "json", "html"),
        default="text",
        help="output format",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the report to FILE (atomically; its directory must exist) instead of standard output",
    )
    _decimals_arg(p, "decimal places (0-10, default 4)")
    p.set_defaults(func=_cmd_reproduce)


def _add_validate(sub: Any) -> None:
    p = sub.add_parser("validate", help="check an evaluation plan and list every problem in it")
    p.add_argument("plan", help="the plan file")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help=_SET_HELP)
    p.set_defaults(func=_cmd_validate)


_COMMANDS: dict[str, Callable[[Any], None]] = {
    "parse": _add_parse,
    "metrics": _add_metrics,
    "plugins": _add_plugins,
    "eval": _add_eval,
    "diff": _add_diff,
    "run": _add_run,
    "power": _add_power,
    "fuse": _add_fuse,
    "reproduce": _add_reproduce,
    "validate": _add_validate,
}
"""Each subcommand's declaration, in the order ``irspec --help`` lists them."""


def build_parser(command: str | None = None, *, recsys: bool = False) -> argparse.ArgumentParser:
    """The argument parser of the ``irspec`` command (exposed for documentation and tests).

    With ``command``, one of the subcommands' names, only that subcommand is declared: ``irspec eval``
    need not build nine other parsers, whose help texts argparse translates (gettext looks for catalogues
    on disk each time) before it parses anything (issue 23's start-up). Its help and errors are the same.
    The subcommands plugins register follow irspec's own (:func:`_plugin_commands`).
    With ``recsys``, ``irspec eval`` takes its tables (``--recsys``) without qrels and runs.
    """
    parser = _Parser(prog="irspec", description="Evaluate ranked retrieval.")
    parser.add_argument("--version", action="version", version=f"irspec {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    plugins = _plugin_commands(command)
    if command not in _COMMANDS and command not in plugins:
        command = None  # no such command: all of them declared, for argparse's list of choices
    for name, declare in _COMMANDS.items():
        if name == "eval" and recsys:
            _add_eval(sub, recsys=True)
        elif command is None or name == command:
            declare(sub)
    for name, plugin_command in plugins.items():
        if command is None or name == command:
            _add_plugin_command(sub, plugin_command)
    return parser


# --- the subcommands plugins register (irspec_register_commands) -------------------------------------


def _plugin_commands(command: str | None) -> dict[str, Any]:
    """The subcommands the plugins register (``irspec interleave``, ...), by name; none when ``command``
    is one of irspec's own, so that ``irspec eval`` builds no registry before it parses."""
    from irspec.errors import RegistryError

    if command in _COMMANDS:
        return {}
    found = get_registry().commands
    for name, plugin_command in found.items():
        if name in _COMMANDS:
            raise RegistryError(
                f"plugin {plugin_command.plugin!r} registers the command {name!r}, which is irspec's own"
            )
    return found


def _add_plugin_command(sub: Any, command: Any) -> None:
    """Declare a plugin's command (a :class:`irspec.plugin_api.Command`), every argument of which has a
    role: an output that no role names would escape the guard of :func:`_run_plugin_command`."""
    import pkgutil

    from irspec.errors import RegistryError

    p = sub.add_parser(command.name, help=command.summary, description=command.description or command.summary)
    declare = command.declare if callable(command.declare) else pkgutil.resolve_name(command.declare)
    declare(p)
    dests = [a.dest for a in p._actions if not isinstance(a, (argparse._HelpAction, argparse._VersionAction))]
    unplaced = [dest for dest in dests if dest not in command.roles]
    if unplaced:
        raise RegistryError(
            f"plugin {command.plugin!r}: command {command.name!r}: argument {unplaced[0]!r} has no role in its "
            "roles (input, output or other)"
        )
    p.set_defaults(func=lambda args: _run_plugin_command(command, args))


def _run_plugin_command(command: Any, args: argparse.Namespace) -> int:
    """Run a plugin's command once its outputs are seen to be writable: none one of its inputs (however
    spelled) or another output, each in a directory that exists, as irspec's own commands check before
    anything is read; its ``run`` writes through :func:`irspec.report.files.write_all_atomic` with the
    same inputs, which checks again."""
    import pkgutil

    from irspec.report.files import Inputs, check_writable

    def files(role: str) -> list[str]:
        found: list[str] = []
        pending = [getattr(args, dest, None) for dest, r in command.roles.items() if r == role]
        while pending:
            value = pending.pop(0)
            if isinstance(value, (list, tuple)):
                pending[:0] = list(value)
            elif isinstance(value, str) and value not in ("", "-"):
                found.append(value)
        return found

    inputs = Inputs(files("input"))
    check_writable(*files("output"), inputs=inputs)
    run = command.run if callable(command.run) else pkgutil.resolve_name(command.run)
    return run(args, inputs)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``irspec`` command; returns the exit code."""
    global _collecting, _freezing
    argv = list(sys.argv[1:] if argv is None else argv)
    # Start-up (numpy, polars, the registry, argparse, the command's modules) makes a few hundred
    # thousand objects and no garbage, and the cyclic collector's passes over them cost ~8% of
    # evaluating a 50-topic run (issue 23). It is off until the command has loaded what it needs
    # (_start_up_over), and what start-up made is then frozen out of its later passes.
    # An embedder's own frozen objects (a server that froze what it preloaded, a test runner its collected
    # tests) stay frozen: main then freezes nothing, since it could not unfreeze its own objects alone.
    _collecting, _freezing = gc.isenabled(), gc.get_freeze_count() == 0
    gc.disable()
    previous = _on_terminate()
    stdout = sys.stdout
    sys.stdout = _Guarded(stdout)  # a writer's stand-in, see _Guarded
    try:
        command = argv[0] if argv and not argv[0].startswith("-") else None
        # irspec eval --recsys takes tables in place of the qrels and runs its positionals require
        recsys = command == "eval" and any(a == "--recsys" or a.startswith("--recsys=") for a in argv)
        parser = build_parser(command, recsys=recsys)
        args = parser.parse_args(argv)
        with warnings.catch_warnings():
            # The commands print the results' warnings themselves, as "irspec: warning: ...".
            warnings.simplefilter("ignore", IrspecWarning)
            if not getattr(args, "ends_start_up", False):
                # only a command declared to call _start_up_over itself keeps the collector off in its
                # handler: every other command's work, however large, runs with it on
                _start_up_over()
            status = args.func(args)
            sys.stdout.flush()  # a full disk said here, as an error, rather than at the process's exit
            return status
    except IrspecError as e:
        print(f"irspec: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `irspec eval ... | head` is normal use
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:  # Ctrl-C: temporary files are gone by now (each owner removes its own)
        print("irspec: error: interrupted", file=sys.stderr)
        return 130
    except _Terminated:  # kill, timeout, a scheduler's stop: the same, as 128 + SIGTERM
        print("irspec: error: terminated", file=sys.stderr)
        return 143
    finally:
        sys.stdout = stdout
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        if _collecting:  # as it was: main may be called in a process that goes on (tests, embedders)
            if _freezing:
                gc.unfreeze()
            gc.enable()


class _Guarded:
    """Standard output while :func:`main` runs: what is written goes to ``stream``, and a failure to write
    it (a full disk, ``/dev/full``, an encoding without the table's arrows) is an :class:`IrspecError`
    saying so, which :func:`main` prints as one line with status 2, rather than Python's traceback. A
    closed pipe stays a :class:`BrokenPipeError` (``irspec eval ... | head`` is normal use). Its binary
    ``buffer`` is guarded the same way; anything else is the stream's."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, data: Any) -> Any:
        try:
            return self._stream.write(data)  # what the stream returns (a notebook's may return None)
        except BrokenPipeError:
            raise
        except (OSError, UnicodeEncodeError) as e:
            raise _unwritable(self._stream, e) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as e:
            raise _unwritable(self._stream, e) from None

    @property
    def buffer(self) -> Any:
        buffer = getattr(self._stream, "buffer", None)
        return None if buffer is None else _Guarded(buffer)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _unwritable(stream: Any, error: OSError | UnicodeEncodeError) -> IrspecError:
    """The error of standard output that could not be written: its encoding lacks a character, or the
    system's reason (a full disk). For the latter, the stream's descriptor is pointed at the null
    device: what its buffer still holds is dropped at the process's exit, where writing it again failed
    again (Python's "Exception ignored" lines, and status 120 for the 2 the error had)."""
    if isinstance(error, UnicodeEncodeError):
        encoding = getattr(stream, "encoding", None) or "its encoding"
        text = error.object[error.start : error.end] if isinstance(error.object, str) else ""
        return IrspecError(
            f"cannot write to standard output: its encoding, {encoding}, has no {quote(text)}; set "
            "PYTHONIOENCODING=utf-8, or write to a file (-o)"
        )
    with contextlib.suppress(AttributeError, OSError, ValueError):  # a stream without a descriptor
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, stream.fileno())
        finally:
            os.close(null)
    reason = error.strerror or str(error)
    return IrspecError(f"cannot write to standard output: {reason[:1].lower()}{reason[1:]}")


class _Terminated(Exception):
    """SIGTERM, raised where the command is, as Ctrl-C raises KeyboardInterrupt."""


def _terminated(signum: int, frame: Any) -> None:
    raise _Terminated


def _on_terminate() -> Any:
    """SIGTERM raises :class:`_Terminated` while :func:`main` runs, so that the owners of temporary
    files (a spilled run, a spool of standard input) remove them as on Ctrl-C: Python's default ends the
    process at once, and left gigabytes behind. Returns the handler to restore; None where another was
    set (an embedder's) or signals cannot be handled (a thread other than the main one)."""
    try:
        if signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
            return None
        return signal.signal(signal.SIGTERM, _terminated)
    except ValueError:  # not the main thread
        return None


_collecting = False
"""Whether the cyclic garbage collector was on when :func:`main` was called (it is off during start-up)."""
_freezing = True
"""Whether :func:`main` freezes what start-up made: only where nothing was frozen when it was called."""


def _start_up_over() -> None:
    """Called by a command once it has loaded what it needs, before it evaluates: the objects made so
    far frozen, the cyclic collector back on (when it was on) for the work, which may make garbage in bulk.
    A command that calls it declares so (``ends_start_up=True`` in its parser's defaults); for every
    other command :func:`main` calls it before the handler."""
    if _collecting and not gc.isenabled():
        if _freezing:
            gc.freeze()
        gc.enable()


def _run_plan(plan: Any) -> Any:
    """:func:`irspec.plan.execute.run_plan`, start-up over (:func:`_start_up_over`)."""
    from irspec.plan.execute import run_plan

    _start_up_over()
    return run_plan(plan)


def run() -> NoReturn:
    """The ``irspec`` command (``python -m irspec``): :func:`main`, then the process ends (:func:`end`)."""
    one_blas_thread(os.environ, sys.modules)
    keep_freed_memory(os.environ)
    fewer_collections()
    end(main())


YOUNG_THRESHOLD = 10_000
"""How many objects the ``irspec`` command's process makes between passes of the cyclic garbage
collector over its youngest objects (:func:`fewer_collections`); Python's default is 700."""


def fewer_collections() -> None:
    """Have the collector pass over the youngest objects every :data:`YOUNG_THRESHOLD` new objects, in
    the ``irspec`` command's own process. :func:`main` keeps it off during start-up; the work after it
    (the registry built, the inputs read into dicts and arrays) makes tens of thousands of objects that
    live until the output is written, and at Python's default of 700 the collector passed over them 24
    times, ~2 ms of a 100 ms evaluation of 50 topics. It still runs, so cyclic garbage stays bounded; the
    older generations keep their thresholds."""
    gc.set_threshold(YOUNG_THRESHOLD, *gc.get_threshold()[1:])


BLAS_THREADS = "OPENBLAS_NUM_THREADS"
"""The variable that sets how many threads OpenBLAS, numpy's linear algebra, starts when numpy loads."""


def one_blas_thread(environ: MutableMapping[str, str], modules: Mapping[str, Any]) -> None:
    """Have numpy's OpenBLAS start one thread, in the ``irspec`` command's own process, unless the user
    set :data:`BLAS_THREADS` or numpy is loaded already. OpenBLAS starts a thread per core when numpy
    is imported, which took ~40 ms of CPU of a 50-topic evaluation's ~150 (its threads wait busily for
    work) and more on a machine of many cores, while irspec's only calls into it are products of a
    vector or of small matrices, which a single thread does as fast."""
    if "numpy" not in modules:
        environ.setdefault(BLAS_THREADS, "1")


MMAP_THRESHOLD = 32 << 20
"""Blocks of at least this many bytes are mapped afresh by glibc's allocator, and unmapped when freed, in
the ``irspec`` command's process (:func:`keep_freed_memory`); its own default starts at 128 KiB."""

TRIM_THRESHOLD = 64 << 20
"""Free memory at the top of glibc's heap kept for the next allocations, in the ``irspec`` command's
process, up to this many bytes (:func:`keep_freed_memory`), rather than given back to the system."""


def keep_freed_memory(environ: Mapping[str, str]) -> bool:
    """Have glibc's allocator keep the memory numpy's temporaries free for the next ones, in the
    ``irspec`` command's own process: blocks below :data:`MMAP_THRESHOLD` from its heap, and up to
    :data:`TRIM_THRESHOLD` of free heap kept. Reading and evaluating allocate and free arrays of a few
    hundred kilobytes to a few megabytes by the dozen; glibc mapped each afresh or gave the heap's top
    back to the system, and every page touched again was a page fault, ~2 µs each here: 2,800 of the
    9,700 faults of a 50-topic evaluation (~5% of its time) and 10,000 of a 1M-line run's 25,000, for
    1-3 MB more at the peak. Whatever the user set (``MALLOC_*``, ``GLIBC_TUNABLES``) is left to rule;
    elsewhere than glibc's Linux nothing is done. Returns whether the settings were made."""
    if not sys.platform.startswith("linux") or "GLIBC_TUNABLES" in environ:
        return False
    if any(name.startswith("MALLOC_") for name in environ):
        return False
    import ctypes  # numpy imports it anyway

    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return False
    if not hasattr(libc, "gnu_get_libc_version"):  # not glibc (musl's mallopt does nothing)
        return False
    # mallopt's parameters (malloc.h): M_TRIM_THRESHOLD -1, M_MMAP_THRESHOLD -3; setting them stops
    # glibc adjusting them itself, so both are set
    return bool(libc.mallopt(-3, MMAP_THRESHOLD)) and bool(libc.mallopt(-1, TRIM_THRESHOLD))


def end(status: int) -> NoReturn:
    """End the process with ``status`` once its output is flushed and its exit handlers have run, without
    the interpreter's teardown: freeing the modules and objects of numpy, polars and irspec one by one
    took ~35 ms of the ~300 ms of a 50-topic evaluation (issue 23), and once the output is out nothing
    of it is needed. A process with another thread still running (not a daemon), or whose output cannot
    be flushed (a closed pipe), ends as Python ends it."""
    import atexit
    import os

    # a thread of Python's is started by threading's module: a process that never imported it has none
    threading = sys.modules.get("threading")
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe or stream: Python's own exit says what it says
        sys.exit(status)
    others = (
        []
        if threading is None
        else [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
    )
    if others:
        sys.exit(status)
    atexit._run_exitfuncs()  # what a plugin (or polars) registered runs as at any exit
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(status)


if __name__ == "__main__":  # pragma: no cover
    run()
