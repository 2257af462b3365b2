"""Conformance with trec_eval 10 on its own test data (../shared/trec_eval_test, see its README).

For each command of the README's table, ``irspec eval ... --format trec`` runs in-process (through
:func:`irspec.cli.main`, stdout captured) and its lines are compared with trec_eval's expected output:

- every ``(measure, query)`` irspec prints must be in the expected file with the same value: the same
  text, or (a value on a rounding boundary of the 4th decimal) irspec's full-precision value, read
  from ``--format json``, within 0.00005 of the printed one. String values (runid, relstring) must be
  equal;
- every expected ``(measure, query)`` must be printed, except the measures allowed to be missing:
  ``rbp`` (trec_eval reads uninitialised memory) and KNOWN_MISSING;
- the lines come in trec_eval's order;
- for ``out.test`` the whole output is identical, line for line.

If a command fails as a whole (say, because one ``-m`` argument names a measure irspec lacks), the
comparison uses what irspec prints without the arguments it rejects, then measure by measure, so
one missing measure does not hide the others; the failure itself is its own test
(``test_command_runs``).

trec_eval's own quirks that are not copied (README): ``rbp`` is not compared even if irspec prints it;
``gm_map``/``gm_bpref`` print only in the summary (irspec does the same; a per-query line would be a
mismatch); under ``-c`` trec_eval's summary ``num_rel`` ignores ``-l``, so that one line is not compared
when a command has both.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import math
import sys
from dataclasses import dataclass, field

import pytest
from shared_data import TREC_EVAL_TEST

import irspec
import irspec.data.small
from irspec.cli import main

DATA = TREC_EVAL_TEST

pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason=f"trec_eval's test data not found at {DATA}")

# name -> (expected output file, trec_eval arguments), from the README's table.
COMMANDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "out.test": ("out.test", ("qrels.test", "results.test")),
    "out.test-with-comments": ("out.test", ("qrels.test.with-comments", "results.test")),
    "out.comment.test": ("out.comment.test", ("qrels.comment.test", "results.comment.test")),
    "out.test.a": ("out.test.a", ("-m", "all_trec", "qrels.test", "results.test")),
    "out.test.aq": ("out.test.aq", ("-m", "all_trec", "-q", "qrels.test", "results.test")),
    "out.test.aqc": ("out.test.aqc", ("-m", "all_trec", "-q", "-c", "qrels.test", "results.trunc")),
    "out.test.aqcM": (
        "out.test.aqcM",
        ("-m", "all_trec", "-q", "-c", "-M100", "qrels.test", "results.trunc"),
    ),
    "out.test.aql": (
        "out.test.aql",
        ("-m", "all_trec", "-mrelstring.20", "-q", "-l2", "qrels.rel_level", "results.test"),
    ),
    "out.test.meas_params": (
        "out.test.meas_params",
        (
            "-q",
            "-miprec_at_recall..10,.20,.25,.75,.50",
            "-m",
            "P.5,7,3",
            "-m",
            "recall.20,2000",
            "-m",
            "Rprec_mult.5.0,0.2,0.35",
            "-mutility.2,-1,0,0",
            "-m",
            "11pt_avg..25,.5,.75",
            "-mndcg.1=3,2=9,4=4.5",
            "-mndcg_cut.10,20,23.4",
            "-msuccess.2,5,20",
            "qrels.test",
            "results.test",
        ),
    ),
}

# Measures trec_eval prints that irspec may leave out (measure name, or prefix ending in "*").
ALLOWED_MISSING = {
    "rbp": "trec_eval's rbp reads uninitialised memory: its value is not reproducible (README)",
}
KNOWN_MISSING: dict[str, str] = {
    # measure name -> reason. Empty: every other measure trec_eval prints here, irspec prints too.
}
# Measures not compared even when irspec prints them.
NOT_COMPARED = {"rbp": "deliberate: trec_eval's value comes from uninitialised memory"}

ROUNDING = 0.00005 + 1e-9


def _matches(name: str, patterns) -> bool:
    return any(name == p or (p.endswith("*") and name.startswith(p[:-1])) for p in patterns)


def _allowed_missing(name: str) -> bool:
    return _matches(name, ALLOWED_MISSING) or _matches(name, KNOWN_MISSING)


# --------------------------------------------------------------------------------------------------
# Running the CLI and reading trec_eval's format.


@dataclass
class CliRun:
    argv: list[str]
    code: int | None
    stdout: str
    stderr: str
    error: BaseException | None = None


def _run_cli(argv: list[str]) -> CliRun:
    out, err = io.StringIO(), io.StringIO()
    code, error = None, None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as e:  # argparse usage errors
            code = e.code if isinstance(e.code, int) else 2
        except Exception as e:
            error = e
    return CliRun(argv, code, out.getvalue(), err.getvalue(), error)


def parse_trec(text: str) -> dict[tuple[str, str], str]:
    """``measure<TAB>qid<TAB>value`` lines as {(measure, qid): value text}; duplicates are an error."""
    out: dict[tuple[str, str], str] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split("\t")
        assert len(parts) == 3, f"line {n} is not measure<TAB>qid<TAB>value: {line!r}"
        key = (parts[0].strip(), parts[1].strip())
        assert key not in out, f"line {n}: {key} printed twice"
        out[key] = parts[2].strip()
    return out


def _keys_in_order(text: str) -> list[tuple[str, str]]:
    keys = []
    for line in text.splitlines():
        if line.strip():
            parts = line.split("\t")
            keys.append((parts[0].strip(), parts[1].strip()))
    return keys


def _split_args(args: tuple[str, ...]) -> tuple[list[str], list[str], list[str]]:
    """(other flags, -m values, file arguments) of a trec_eval command line."""
    flags, measures, files = [], [], []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-m":
            measures.append(args[i + 1])
            i += 2
            continue
        if a.startswith("-m"):
            measures.append(a[2:])
        elif a.startswith("-"):
            flags.append(a)
        else:
            files.append(str(DATA / a))
        i += 1
    return flags, measures, files


def _argv(flags: list[str], measures: list[str], files: list[str], fmt: str = "trec") -> list[str]:
    return ["eval", *flags, *(x for m in measures for x in ("-m", m)), *files, "--format", fmt]


def _single_spec(metric) -> str | None:
    """A -m text that names exactly this one metric (its trec_eval name, else its canonical text)."""
    for text in (metric.trec_name, str(metric)):
        if not text:
            continue
        try:
            if irspec.parse_many([text], trec=True) == [metric]:
                return text
        except Exception:
            continue
    return None


@dataclass
class Outcome:
    """What irspec printed for one README command."""

    exact: CliRun  # the command as written
    text: str  # the output compared (the exact command's, or the fallback's)
    printed: dict[tuple[str, str], str]
    rejected: dict[str, str] = field(default_factory=dict)  # -m value or metric -> why it printed nothing
    fallback: bool = False


def _readers() -> int:
    """The readers in use: conftest's ``_reader`` fixture sets irspec.data.small.SMALL_BELOW, so a value
    computed under one reader is never read back under the other (issue 35)."""
    return irspec.data.small.SMALL_BELOW


def outcome(name: str) -> Outcome:
    """What irspec printed for a command, computed once for each of the readers the test runs with."""
    return _outcome(name, _readers())


@functools.cache
def _outcome(name: str, readers: int) -> Outcome:
    _, args = COMMANDS[name]
    flags, measures, files = _split_args(args)
    exact = _run_cli(_argv(flags, measures, files))
    if exact.code == 0 and exact.error is None:
        return Outcome(exact, exact.stdout, parse_trec(exact.stdout))
    rejected: dict[str, str] = {}
    kept = []
    for m in measures or ["official"]:
        try:
            irspec.parse_many([m], trec=True)
            kept.append(m)
        except Exception as e:
            rejected[m] = f"{type(e).__name__}: {e}"
    # 1. Without the -m values irspec cannot read.
    if kept:
        retry = _run_cli(_argv(flags, kept, files))
        if retry.code == 0 and retry.error is None:
            return Outcome(exact, retry.stdout, parse_trec(retry.stdout), rejected, fallback=True)
    # 2. Metric by metric.
    printed: dict[tuple[str, str], str] = {}
    texts = []
    for m in kept:
        for metric in irspec.parse_many([m], trec=True):
            spec = _single_spec(metric)
            if spec is None:
                rejected[str(metric)] = "no -m text names this metric alone"
                continue
            one = _run_cli(_argv(flags, [spec], files))
            if one.code == 0 and one.error is None:
                printed.update(parse_trec(one.stdout))
                texts.append(one.stdout)
            else:
                rejected[str(metric)] = repr(one.error) if one.error else one.stderr.strip()
    return Outcome(exact, "".join(texts), printed, rejected, fallback=True)


@functools.cache
def expected(name: str) -> dict[tuple[str, str], str]:
    return parse_trec((DATA / COMMANDS[name][0]).read_text())


def precise_values(name: str) -> dict[tuple[str, str], float]:
    """irspec's full-precision values for a command, keyed like trec_eval's lines (from --format json),
    computed once for each of the readers the test runs with."""
    return _precise_values(name, _readers())


@functools.cache
def _precise_values(name: str, readers: int) -> dict[tuple[str, str], float]:
    _, args = COMMANDS[name]
    flags, measures, files = _split_args(args)
    kept = []
    for m in measures or ["official"]:
        try:
            irspec.parse_many([m], trec=True)
            kept.append(m)
        except Exception:
            pass
    res = _run_cli(_argv(flags, kept, files, fmt="json"))
    if res.code != 0 or res.error is not None:
        return {}
    doc = json.loads(res.stdout)
    names = {}
    for canonical in doc["metrics"]:
        try:
            m = irspec.parse(canonical)
        except Exception:
            continue
        names[canonical] = m.trec_name or canonical
    out: dict[tuple[str, str], float] = {}
    for run in doc["runs"]:
        for canonical, v in run["aggregate"].items():
            if canonical in names and v is not None:
                out[(names[canonical], "all")] = float(v)
        for qid, row in (run.get("per_query") or {}).items():
            for canonical, v in row.items():
                if canonical in names and v is not None:
                    out[(names[canonical], qid)] = float(v)
    return out


def _number(text: str) -> float | None:
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def _quirk(name: str, key: tuple[str, str]) -> bool:
    """trec_eval quirks not to compare: -c with -l makes trec_eval's summary num_rel ignore -l."""
    args = COMMANDS[name][1]
    has_c = "-c" in args
    has_l = any(a.startswith("-l") for a in args)
    return has_c and has_l and key == ("num_rel", "all")


def _compared_keys(name: str) -> list[tuple[str, str]]:
    return [k for k in outcome(name).printed if not _matches(k[0], NOT_COMPARED) and not _quirk(name, k)]


def _measure_names(name: str) -> list[str]:
    """Every measure name in the expected output or in irspec's, for per-measure test ids."""
    if not DATA.is_dir():
        return []
    names = dict.fromkeys(k[0] for k in expected(name))
    return list(names)


# --------------------------------------------------------------------------------------------------
# Tests.


def _same_value(name: str, key: tuple[str, str], mine: str, theirs: str) -> bool:
    """The same text, or a number on a rounding boundary: irspec's exact value within 0.00005 of trec_eval's."""
    if mine == theirs:
        return True
    a, b = _number(mine), _number(theirs)
    if a is None or b is None or abs(a - b) > 0.0001 + 1e-9:
        return False
    exact = precise_values(name).get(key)
    return exact is not None and abs(exact - b) <= ROUNDING


@pytest.mark.parametrize("name", list(COMMANDS))
def test_command_runs(name: str) -> None:
    """The README's command line, unchanged, succeeds.

    xfail (not implemented yet) when it fails only because a -m value names a measure that is allowed
    to be missing or raises NotImplementedError.
    """
    out = outcome(name)
    run = out.exact
    if run.code == 0 and run.error is None:
        return
    why = repr(run.error) if run.error else run.stderr.strip()
    only_allowed = bool(out.rejected) and all(_allowed_missing(m.split(".")[0]) for m in out.rejected)
    if isinstance(run.error, NotImplementedError) or only_allowed:
        pytest.xfail(f"not implemented yet: {why}")
    pytest.fail(f"irspec {' '.join(run.argv)} failed (exit {run.code}): {why}")


@pytest.mark.parametrize("name", list(COMMANDS))
def test_printed_values_match(name: str) -> None:
    """Every (measure, query) irspec prints has trec_eval's value, and trec_eval prints that line too."""
    want = expected(name)
    got = outcome(name).printed
    problems = []
    for key in _compared_keys(name):
        if key not in want:
            problems.append(f"{key}: irspec prints {got[key]!r}, trec_eval prints no such line")
        elif not _same_value(name, key, got[key], want[key]):
            problems.append(f"{key}: irspec {got[key]!r}, trec_eval {want[key]!r}")
    assert not problems, f"{len(problems)} of {len(_compared_keys(name))} lines differ:\n" + "\n".join(
        problems[:30]
    )


@pytest.mark.parametrize("name", list(COMMANDS))
def test_nothing_unexpected_missing(name: str) -> None:
    """Every expected (measure, query) is printed, bar ALLOWED_MISSING and KNOWN_MISSING measures."""
    got = outcome(name).printed
    missing = [k for k in expected(name) if k not in got and not _allowed_missing(k[0])]
    names = sorted({k[0] for k in missing})
    assert not missing, (
        f"{len(missing)} expected lines not printed, measures {names}; "
        f"rejected by irspec: {outcome(name).rejected}"
    )


@pytest.mark.parametrize("name", list(COMMANDS))
def test_lines_in_trec_eval_order(name: str) -> None:
    """irspec's lines come in trec_eval's order (comparing the lines both print)."""
    out = outcome(name)
    if out.fallback and not out.text:
        pytest.skip("deliberate: no whole output to order")
    want = expected(name)
    mine = [k for k in _keys_in_order(out.text) if k in want]
    theirs = [k for k in want if k in set(mine)]
    assert mine == theirs


@pytest.mark.parametrize("name", ["out.test", "out.test-with-comments"])
def test_out_test_identical(name: str) -> None:
    """The default (official) output on trec_eval's main test data is identical, line for line."""
    out = outcome(name)
    assert out.exact.code == 0 and out.exact.error is None, out.exact.stderr
    assert out.exact.stdout.splitlines() == (DATA / "out.test").read_text().splitlines()


def test_known_missing_still_missing() -> None:
    """A KNOWN_MISSING entry that irspec now prints should leave the list (so it gets compared)."""
    printed = {k[0] for name in COMMANDS for k in outcome(name).printed}
    stale = sorted(m for m in KNOWN_MISSING if _matches(m, printed) or m in printed)
    assert not stale, f"now printed, remove from KNOWN_MISSING: {stale}"


def _all_params():
    for name in COMMANDS:
        for measure in _measure_names(name):
            yield pytest.param(name, measure, id=f"{name}:{measure}")


@pytest.mark.parametrize("name,measure", list(_all_params()))
def test_measure(name: str, measure: str) -> None:
    """One expected measure of one command: printed for every query trec_eval prints it for, same values."""
    if _matches(measure, NOT_COMPARED):
        pytest.skip(NOT_COMPARED.get(measure, "deliberate: not compared"))
    want = {k: v for k, v in expected(name).items() if k[0] == measure}
    got = {k: v for k, v in outcome(name).printed.items() if k[0] == measure}
    if not got and _allowed_missing(measure):
        reason = (
            ALLOWED_MISSING.get(measure)
            or KNOWN_MISSING.get(measure)
            or next(r for p, r in {**ALLOWED_MISSING, **KNOWN_MISSING}.items() if _matches(measure, [p]))
        )
        pytest.skip(f"deliberate: allowed to be missing: {reason}")
    assert set(got) == set(want), f"queries differ: irspec {sorted(got)}, trec_eval {sorted(want)}"
    bad = []
    for key, theirs in want.items():
        if _quirk(name, key):
            continue
        if not _same_value(name, key, got[key], theirs):
            bad.append(f"{key}: irspec {got[key]!r}, trec_eval {theirs!r}")
    assert not bad, "\n".join(bad)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))


SET_MEASURES = (
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "utility",
    "set_P",
    "set_recall",
    "set_relative_P",
    "set_map",
    "set_F",
)
"""trec_eval's nickname ``set`` (measures.c's set_names, the same in trec_eval 9 and 10)."""


def test_set_prints_trec_evals_lines():
    """``-m set -q`` prints the lines of trec_eval's set measures, in its order: out.test.aq (``-m
    all_trec -q``) holds each of them, so its lines of those measures are what ``-m set -q`` prints."""
    run = _run_cli(
        ["eval", "--format", "trec", "-m", "set", "-q", str(DATA / "qrels.test"), str(DATA / "results.test")]
    )
    assert run.code == 0 and run.error is None, run.stderr
    want = [
        line for line in (DATA / "out.test.aq").read_text().splitlines() if line.split()[0] in SET_MEASURES
    ]
    assert run.stdout.splitlines() == want


def test_no_summary_prints_the_per_query_lines_alone():
    """trec_eval's ``-n`` (no summary): ``-m set -q -n`` prints out.test.aq's per-query lines of the set
    measures and none of its ``all`` lines; ``-n`` without ``-q`` prints nothing, as trec_eval does. It
    leaves out trec_eval's summary, so another format refuses it."""
    args = ["eval", "--format", "trec", "-m", "set", str(DATA / "qrels.test"), str(DATA / "results.test")]
    run = _run_cli([*args, "-q", "-n"])
    assert run.code == 0 and run.error is None, run.stderr
    want = [
        line
        for line in (DATA / "out.test.aq").read_text().splitlines()
        if line.split()[0] in SET_MEASURES and line.split()[1] != "all"
    ]
    assert want and run.stdout.splitlines() == want
    alone = _run_cli([*args, "-n"])
    assert alone.code == 0 and alone.stdout == ""
    table = _run_cli(["eval", "-n", "-m", "map", str(DATA / "qrels.test"), str(DATA / "results.test")])
    assert (
        table.code == 2
        and "-n leaves out trec_eval's summary lines: it goes with --format trec" in table.stderr
    )


def test_trec_evals_long_options_mean_its_short_ones(tmp_path):
    """trec_eval's getopt_long names (``--query_eval_wanted``, ``--level_for_rel=2``, ...) are read as its
    short flags: the command of out.test.aqcM written with them prints what the short flags print (the
    tests above hold that to trec_eval's file), and every other one parses to what its short flag does."""
    short = ["eval", "--format", "trec", "-m", "all_trec", "-q", "-c", "-M100"]
    long = ["eval", "--format", "trec", "--measure", "all_trec", "--query_eval_wanted",
            "--complete_rel_info_wanted", "--Max_retrieved_per_topic=100"]  # fmt: skip
    files = [str(DATA / "qrels.test"), str(DATA / "results.trunc")]
    want = _run_cli([*short, *files])
    assert want.code == 0 and want.stdout
    assert _run_cli([*long, *files]).stdout == want.stdout
    parser = irspec.cli.build_parser("eval")
    pairs = [
        (["--nosummary"], ["-n"]), (["--level_for_rel", "2"], ["-l", "2"]), (["--Judged_docs_only"], ["-J"]),
        (["--Number_docs_in_coll=5000"], ["-N", "5000"]), (["--Zscore", "z.txt"], ["-Z", "z.txt"]),
    ]  # fmt: skip
    for given, meant in pairs:
        assert parser.parse_args(["eval", *given, *files]) == parser.parse_args(["eval", *meant, *files]), (
            given
        )


def test_trec_evals_format_and_debug_flags_at_their_defaults_change_nothing(tmp_path):
    """``-R qrels -T trec_results -D 0`` (trec_eval's defaults, which scripts spell out) were refused as
    unrecognized arguments; what irspec does not do (preference judgments, another run format, trec_eval's
    debugging output) is refused naming it, and -v prints the version, as trec_eval's does."""
    files = [str(DATA / "qrels.test"), str(DATA / "results.test")]
    args = ["eval", "--format", "trec", "-m", "official", *files]
    want = _run_cli(args)
    assert want.code == 0 and want.stdout == (DATA / "out.test").read_text()
    for flags in (["-R", "qrels", "-T", "trec_results", "-D", "0"], ["--Rel_info_format=qrels", "--Results_format",
                                                                   "trec_results", "--Debug_level", "0"]):  # fmt: skip
        assert _run_cli([*args[:1], *flags, *args[1:]]).stdout == want.stdout, flags
    for flags, message in [
        (["-R", "qrels_prefs"], "-R 'qrels_prefs': a trec_eval format irspec does not read; irspec reads qrels alone"),
        (["-R", "trec_results"], "-R 'trec_results': not a trec_eval format; irspec reads qrels alone"),
        (["-T", "qrels"], "-T 'qrels': not a trec_eval format; irspec reads trec_results alone"),
        (["-D", "1"], "-D '1': irspec prints no trec_eval debugging output"),
    ]:  # fmt: skip
        refused = _run_cli([*args[:1], *flags, *args[1:]])
        assert refused.code == 2 and refused.stdout == "" and message in refused.stderr, refused.stderr
    version = _run_cli(["eval", "-v"])
    assert version.code == 0 and version.stdout.startswith("irspec ")
