"""Hostile input to every public function that takes data (issue 33): a table that goes on growing.

Each row gives one function of the face (``irspec.evaluate``, ``irspec.Evaluator`` and its
``evaluate``, ``evaluate_topk`` and ``combine``, ``irspec.read_qrels``, ``irspec.read_run``,
``irspec.fuse``, ``irspec.compare``) or of the pytrec_eval drop-in (``RelevanceEvaluator`` and its
``evaluate``) a bad input (empty, NaN and infinities, huge numbers, longdouble, float16, object and bool
dtypes, odd ids: integers, ``None``, lone surrogates, very long ids, empty strings, whitespace, missing
and duplicate keys, nested wrong types) and what must come of it:

- :class:`Refused`: an :class:`~irspec.errors.IrspecError` (for the drop-in, pytrec_eval's exception type
  too, checked against pytrec_eval itself where it does not crash) whose message says where (the source,
  the query, the row or document) and what, in at most :data:`MESSAGE_MAX` characters, never a
  traceback from deep inside;
- :class:`Gives`: a documented value, checked by arithmetic written in the row, or, for the drop-in,
  :class:`AsPytrec`: pytrec_eval's own value for the same input.

Whatever the outcome, the input is unchanged afterwards (:func:`fingerprint`, taken before and after:
dicts key by key in order with their types, arrays by their bytes). A row that reproduces a defect of
the issue names it (``defect``): each failed on the main branch of the day it was filed.

Where the drop-in departs from pytrec_eval on purpose, :data:`DEPARTURES` says why, each is checked
to behave as documented (and pytrec_eval as said, where it does not crash), and
``docs/coming-from/pytrec_eval.md`` lists it. :func:`test_the_drop_in_agrees_with_pytrec_eval_on_odd_random_collections`
runs the differential on ``tests/randomdata.py``'s collections with the odd inputs pytrec_eval reads.

A new row: a :class:`Case` in :data:`CASES` (or a :data:`DEPARTURES` entry for the drop-in); a new
public function: a :data:`TARGETS` entry and its rows.
"""

from __future__ import annotations

import collections
import fractions
import functools
import math
import struct
import subprocess
import sys
import types
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from randomdata import random_case
from trecdicts import differences, pytrec_safe

import irspec
import irspec.compat.pytrec_eval as compat
from irspec.data import read_qrels, read_run
from irspec.errors import EvaluationError, InputError, InputTypeError, IrspecError, IrspecWarning, SpecError

ROOT = Path(irspec.__file__).resolve().parent.parent
MESSAGE_MAX = 300
"""The longest message a refusal may have besides its source's name (a path as long as the user's):
where, what, and a short excerpt of the input."""
TOL = 1e-12

# q1: d2 (0.9, label 0), d1 (0.5, label 1), d3 (0.1, label 2): R = 2, AP = (1/2 + 2/3) / 2, P@2 = 1/2.
# q2: d4 (1.0, label 1), d5 (unjudged): AP = 1, P@2 = 1/2. Query 7 (docnos 1 and 2) is not in the run:
# it is there for ids given as integers.
QRELS = {"q1": {"d1": 1, "d2": 0, "d3": 2}, "q2": {"d1": 0, "d4": 1}, "7": {"1": 1, "2": 0}}
RUN = {"q1": {"d1": 0.5, "d2": 0.9, "d3": 0.1}, "q2": {"d4": 1.0, "d5": 0.5}}
METRICS = "AP, P@2"
AP_Q1 = (1 / 2 + 2 / 3) / 2
EV = irspec.Evaluator(QRELS, METRICS)
"""The evaluator the Evaluator methods' rows use (combine's results must come from it)."""

PYTREC_MEASURES = {"map", "P_2", "num_rel", "num_ret", "recip_rank"}


def _dropin_new(module: Any, qrels: Any, measures: Any = None, level: int = 1, run: Any = None) -> Any:
    """``RelevanceEvaluator(qrels, measures, level).evaluate(run)`` of ``module`` (the drop-in or
    pytrec_eval), with :data:`PYTREC_MEASURES` and :data:`RUN` by default."""
    evaluator = module.RelevanceEvaluator(qrels, PYTREC_MEASURES if measures is None else measures, level)
    return evaluator.evaluate(RUN if run is None else run)


def _dropin_evaluate(module: Any, run: Any) -> Any:
    """``RelevanceEvaluator(QRELS, ...).evaluate(run)`` of ``module``."""
    return module.RelevanceEvaluator(QRELS, PYTREC_MEASURES).evaluate(run)


TARGETS: dict[str, Callable[..., Any]] = {
    "read_qrels": read_qrels,
    "read_run": read_run,
    "evaluate(qrels)": lambda qrels: irspec.evaluate(qrels, RUN, METRICS),
    "evaluate(run)": lambda run: irspec.evaluate(QRELS, run, METRICS),
    "Evaluator(qrels)": lambda qrels: irspec.Evaluator(qrels, METRICS),
    "Evaluator.evaluate": lambda run: EV.evaluate(run),
    "Evaluator.evaluate_topk": lambda q, d, s: EV.evaluate_topk(q, d, s),
    "Evaluator.combine": lambda results: EV.combine(results),
    "fuse": lambda runs: irspec.fuse(runs, "rrf(k=60)"),
    "compare": lambda results: irspec.compare(results),
    "RelevanceEvaluator": lambda *a: _dropin_new(compat, *a),
    "RelevanceEvaluator.evaluate": lambda run: _dropin_evaluate(compat, run),
}
"""Each public function that takes data, as a function of a row's arguments."""

PYTREC_TARGETS: dict[str, Callable[..., Any]] = {
    "RelevanceEvaluator": _dropin_new,
    "RelevanceEvaluator.evaluate": _dropin_evaluate,
}
"""The drop-in's targets, as functions of the module (the drop-in or pytrec_eval) and the arguments."""


# --------------------------------------------------------------------------------------------------
# Outcomes


@dataclass(frozen=True)
class Refused:
    """An error of type ``error`` whose message holds every one of ``says``. ``irspec``: it is an
    IrspecError too (not for an argument that is no data: the drop-in's relevance level).
    ``pytrec``: the type pytrec_eval raises for the same input, checked against it."""

    error: type[BaseException]
    says: tuple[str, ...] = ()
    irspec: bool = True
    pytrec: type[BaseException] | None = None


@dataclass(frozen=True)
class Gives:
    """A documented value: ``check`` asserts it (arithmetic written in the row)."""

    check: Callable[[Any], None]
    why: str = ""


@dataclass(frozen=True)
class AsPytrec:
    """The drop-in's value is pytrec_eval's for the same input (within 1e-12)."""

    why: str = ""


@dataclass(frozen=True)
class Case:
    """One bad input to one function: ``data(tmp_path)`` makes its arguments afresh."""

    target: str
    name: str
    data: Callable[[Path], tuple[Any, ...]]
    outcome: Refused | Gives | AsPytrec
    defect: str | None = None
    """The defect of issue 33 the row reproduces (it failed on that day's main)."""


def refused(error: type[BaseException], *says: str, **kw: Any) -> Refused:
    return Refused(error, says, **kw)


def args(*a: Any) -> Callable[[Path], tuple[Any, ...]]:
    """A row's arguments, made afresh for each use (they are compared before and after)."""
    import copy

    return lambda _tmp: copy.deepcopy(a)


def values_of(query: str, expected: dict[str, float]) -> Callable[[Any], None]:
    """A check: the result's values of ``query`` are ``expected``."""

    def check(result: Any) -> None:
        got = result.per_query()[query]
        assert got == pytest.approx(expected, abs=TOL), got

    return check


def same_as(run: Any) -> Callable[[Any], None]:
    """A check: the result is the one ``run`` (the same data spelled plainly) gives."""

    def check(result: Any) -> None:
        assert result.per_query() == EV.evaluate(run).per_query()

    return check


def frame_rows(expected: list[tuple[Any, ...]]) -> Callable[[Any], None]:
    """A check: the qrels' or run's rows (query, docno, value) are ``expected``."""

    def check(read: Any) -> None:
        assert [r[:3] for r in read.frame.rows()] == expected

    return check


ld = np.longdouble
HUGE_LD = (ld("1e400"), ld("1e401"))  # finite as longdouble, beyond a double: both inf after a cast
INT64 = "labels are 64-bit integers, -9223372036854775808 to 9223372036854775807"
SURROGATE = "lone surrogate (U+D800)"
LONG = "x" * 100_000


def _qrels_cases() -> list[Case]:
    """The same bad qrels given to every function that reads qrels."""
    rows: list[tuple[str, Any, Refused | None, str | None]] = [
        ("None", None, refused(InputTypeError, "cannot read qrels from None"), None),
        ("a number", 5, refused(InputTypeError, "cannot read qrels from 5 (int)"), None),
        ("a list for judgments", {"q1": [1, 0]}, refused(InputError, "<dict>: query 'q1'", "docno -> label, got list"), None),
        ("1 and '1'", {1: {"d1": 1}, "1": {"d2": 0}}, refused(InputError, "query '1' is given twice, as 1 and '1'"), None),
        ("a None query id", {None: {"d1": 1}}, refused(InputError, "query ids must be strings (or integers), got None"), None),
        ("a None docno", {"q1": {None: 1}}, refused(InputError, "query 'q1'", "docnos must be strings (or integers), got None"), None),
        ("a tuple query id", {("q",): {"d1": 1}}, refused(InputError, "got ('q',)"), None),
        ("a surrogate docno", {"q1": {"d\ud800": 1}}, refused(InputError, "query 'q1'", "docno 'd\\ud800' is not valid text", SURROGATE), "7"),
        ("a surrogate query id", {"q\ud800": {"d1": 1}}, refused(InputError, "query id 'q\\ud800' is not valid text", SURROGATE), "7"),
        ("a fractional label", {"q1": {"d1": 1.5}}, refused(InputError, "query 'q1'", "label must be an integer, got 1.5 for docno 'd1'"), None),
        ("a NaN label", {"q1": {"d1": math.nan}}, refused(InputError, "label must be an integer, got nan"), None),
        ("label 2**63", {"q1": {"d1": 2**63}}, refused(InputError, "label 9223372036854775808 is out of range", INT64), "8"),
        ("label 2**63 beside -1", {"q1": {"d1": 2**63, "d2": -1}}, refused(InputError, "label 9223372036854775808 is out of range", INT64), "8"),
        ("label -2**63 - 1", {"q1": {"d1": -(2**63) - 1}}, refused(InputError, "label -9223372036854775809 is out of range", INT64), None),
        ("label 10**30 beside 1.0", {"q1": {"d1": 10**30, "d2": 1.0}}, refused(InputError, "label 1000000000000000000000000000000 is out of range"), None),
        ("label 1e19", {"q1": {"d1": 1e19}}, refused(InputError, "label 1e+19 is out of range", INT64), None),
        ("a bool label", {"q1": {"d1": True}}, refused(InputError, "label must be an integer, got True"), None),
        ("a label '1'", {"q1": {"d1": "1"}}, refused(InputError, "label must be an integer, got '1'"), None),
        ("a dict for a label", {"q1": {"d1": {"x": 1}}}, refused(InputError, "label must be an integer, got {'x': 1}"), None),
        ("a long query id with a bad label", {LONG: {"d1": 0.5}}, refused(InputError, "'xxxxxxxx", "...", "got 0.5"), None),
        # float() refuses a signalling NaN: it raised ValueError from inside the reader
        ("a signalling NaN Decimal label", {"q1": {"d1": Decimal("sNaN")}}, refused(InputError, "query 'q1'", "label must be an integer, got Decimal('sNaN')"), None),
        # polars' reader of ids panicked on a NaN Decimal (a BaseException, with a Rust backtrace)
        ("a Decimal NaN docno", {"q1": {Decimal("NaN"): 1}}, refused(InputError, "query 'q1'", "docnos must be strings (or integers), got Decimal('NaN')"), None),
    ]  # fmt: skip
    cases = []
    for target in ("read_qrels", "evaluate(qrels)", "Evaluator(qrels)"):
        for name, data, outcome, defect in rows:
            assert outcome is not None
            cases.append(Case(target, name, args(data), outcome, defect))
    return cases


def _qrels_values() -> list[Case]:
    """Odd qrels read as documented."""
    return [
        Case("read_qrels", "integer ids are their decimal text", args({1: {2: 1}}), Gives(frame_rows([("1", "2", 1)]))),
        Case("read_qrels", "empty ids", args({"": {"": 1}}), Gives(frame_rows([("", "", 1)]))),
        Case("read_qrels", "ids with blanks and newlines, as given", args({" q\n1": {"d\t1 ": 1}}),
             Gives(frame_rows([(" q\n1", "d\t1 ", 1)]), "a dict's ids are whatever strings it holds")),
        Case("read_qrels", "a very long id", args({LONG: {"d1": 1}}), Gives(frame_rows([(LONG, "d1", 1)]))),
        Case("read_qrels", "a bool among integers is its number", args({"q1": {"d1": 2, "d2": True}}),
             Gives(frame_rows([("q1", "d1", 2), ("q1", "d2", 1)]), "numpy's reading: refusing it would cost a pass over every label")),
        Case("read_qrels", "a longdouble label", args({"q1": {"d1": ld(2)}}), Gives(frame_rows([("q1", "d1", 2)])), "2"),
        Case("read_qrels", "a float16 label", args({"q1": {"d1": np.float16(3)}}), Gives(frame_rows([("q1", "d1", 3)]))),
        Case("read_qrels", "label -2**63", args({"q1": {"d1": -(2**63)}}), Gives(frame_rows([("q1", "d1", -(2**63))]))),
        Case("read_qrels", "a query without judgments", args({"q1": {}}), Gives(frame_rows([]))),
        Case("read_qrels", "no queries", args({}), Gives(frame_rows([]))),
        Case("read_qrels", "a polars Boolean label column",
             lambda _t: (pl.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "relevance": [True]}),),
             refused(InputError, "<DataFrame>", "column 'relevance' must hold integers, not Boolean")),
        Case("read_qrels", "a polars UInt64 label 2**63",
             lambda _t: (pl.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "relevance": pl.Series([2**63], dtype=pl.UInt64)}),),
             refused(InputError, "<DataFrame>: query 'q1': row 0: label 9223372036854775808 is out of range", INT64), "8"),
        Case("read_qrels", "a frame label 9.3e18",
             lambda _t: (pl.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "relevance": [9.3e18]}),),
             refused(InputError, "row 0: label 9.3e+18 is out of range", INT64), "8"),
    ]  # fmt: skip


def _run_cases() -> list[Case]:
    """The same bad runs given to every function that reads a run (``evaluate`` and the evaluator's
    read a dict whose values are not dicts as runs by name: their rows are apart)."""
    rows: list[tuple[str, Any, Refused, str | None]] = [
        ("1 and '1'", {1: {"d1": 1.0}, "1": {"d2": 1.0}}, refused(InputError, "query '1' is given twice, as 1 and '1'"), None),
        ("docno 1 and '1'", {"q1": {1: 1.0, "1": 2.0}}, refused(InputError, "query 'q1'", "duplicate docno '1'"), None),
        ("a None query id", {None: {"d1": 1.0}}, refused(InputError, "query ids must be strings (or integers), got None"), None),
        ("a float docno", {"q1": {1.5: 1.0}}, refused(InputError, "query 'q1'", "docnos must be strings (or integers), got 1.5"), None),
        ("a NaN score", {"q1": {"d1": math.nan}}, refused(InputError, "<dict>: query 'q1': NaN score for docno 'd1'"), None),
        ("an infinite score", {"q1": {"d1": 1.0}, "q2": {"d4": -math.inf}}, refused(InputError, "query 'q2'", "infinite score -inf (scores must be finite; a number beyond ±1.8e308 reads as infinite) for docno 'd4'"), None),
        ("a score of 10**400", {"q1": {"d1": 10**400, "d2": 1.0}}, refused(InputError, "query 'q1'", "is too large for a double", "for docno 'd1'"), "8"),
        ("longdouble scores beyond a double", {"q1": {"d1": HUGE_LD[0], "d2": HUGE_LD[1]}},
         refused(InputError, "query 'q1': score np.longdouble('1e+400') is too large for a double", "for docno 'd1'"), "2"),
        ("a longdouble beyond a double after a float", {"q1": {"d1": 1.0, "d2": HUGE_LD[0]}},
         refused(InputError, "score np.longdouble('1e+400') is too large for a double", "for docno 'd2'"), "2"),
        ("a float16 infinity", {"q1": {"d1": np.float16("inf")}}, refused(InputError, "infinite score inf"), None),
        ("a bool score", {"q1": {"d1": True}}, refused(InputError, "score must be a number, got True for docno 'd1'"), None),
        ("a score '0.5'", {"q1": {"d1": "0.5"}}, refused(InputError, "score must be a number, got '0.5' for docno 'd1'"), None),
        ("a None score", {"q1": {"d1": None}}, refused(InputError, "score must be a number, got None"), None),

        ("a complex score", {"q1": {"d1": 1j}}, refused(InputError, "score must be a number, got 1j"), None),
        ("a surrogate docno", {"q1": {"d\ud800": 1.0}}, refused(InputError, "query 'q1'", "docno 'd\\ud800' is not valid text", SURROGATE), "7"),
        ("a surrogate docno among good ones", {"q1": {"d1": 1.0, "d\udcff": 0.5}}, refused(InputError, "docno 'd\\udcff' is not valid text", "U+DCFF"), "7"),
        ("a surrogate query id", {"q\ud800": {"d1": 1.0}}, refused(InputError, "query id 'q\\ud800' is not valid text", SURROGATE), "7"),
        ("a long docno with a bad score", {"q1": {LONG: "high"}}, refused(InputError, "'xxxxxxxx", "...", "score must be a number"), None),
        # Decimals first went to polars' reader, which panicked (a BaseException, with a Rust backtrace) on a
        # NaN or an infinity and failed with a RuntimeError beyond 38 digits; they are named as floats are
        ("a Decimal infinity docno", {"q1": {"d1": 1.0, Decimal("Infinity"): 1.0}},
         refused(InputError, "query 'q1'", "docnos must be strings (or integers), got Decimal('Infinity')"), None),
        ("a Decimal NaN query id", {Decimal("NaN"): {"d1": 1.0}}, refused(InputError, "query ids must be strings (or integers), got Decimal('NaN')"), None),
        ("a Decimal NaN score", {"q1": {"d1": Decimal("NaN"), "d2": 1.0}}, refused(InputError, "<dict>: query 'q1': NaN score for docno 'd1'"), None),
        ("a Decimal sNaN score after a float", {"q1": {"d1": 1.0, "d2": Decimal("sNaN")}}, refused(InputError, "query 'q1': NaN score for docno 'd2'"), None),
        ("a Decimal NaN after a float32", {"q1": {"d1": np.float32(1), "d2": Decimal("NaN")}}, refused(InputError, "query 'q1': NaN score for docno 'd2'"), None),
        ("a Decimal infinity", {"q1": {"d1": Decimal("-Infinity")}},
         refused(InputError, "query 'q1': infinite score Decimal('-Infinity') (scores must be finite", "for docno 'd1'"), None),
        ("a Decimal score of 1e400", {"q1": {"d1": Decimal("1e400"), "d2": Decimal("1")}},
         refused(InputError, "query 'q1': score Decimal('1E+400') is too large for a double", "for docno 'd1'"), None),
    ]  # fmt: skip
    cases = []
    for target in ("read_run", "evaluate(run)", "Evaluator.evaluate"):
        for name, data, outcome, defect in rows:
            cases.append(Case(target, name, args(data), outcome, defect))
        cases.append(
            Case(
                target, "None", args(None), refused(InputTypeError, "cannot read a run from None (NoneType)")
            )
        )
        cases.append(
            Case(target, "a number", args(5), refused(InputTypeError, "cannot read a run from 5 (int)"))
        )
    cases.append(
        Case("read_run", "a list of scores", args({"q1": [0.5, 0.2]}),
             refused(InputError, "<dict>: query 'q1'", "expected a mapping docno -> score, got list"))
    )  # fmt: skip
    for target in ("evaluate(run)", "Evaluator.evaluate"):
        cases.append(
            Case(target, "a list of scores", args({"q1": [0.5, 0.2]}),
                 refused(InputTypeError, "run 'q1': cannot read a run from [0.5, 0.2] (list)", "read as {name: run}"))
        )  # fmt: skip
    return cases


def _run_values() -> list[Case]:
    """Odd runs read as documented."""
    q1 = {"AP": AP_Q1, "P@2": 0.5}
    return [
        Case("Evaluator.evaluate", "integer ids are their decimal text", args({7: {1: 0.5, 2: 0.9}}),
             Gives(values_of("7", {"AP": 0.5, "P@2": 0.5}))),
        Case("read_run", "integer ids are their decimal text", args({7: {1: 0.5}}), Gives(frame_rows([("7", "1", 0.5)]))),
        Case("Evaluator.evaluate", "a score of 10**39 is a double", args({"q1": {"d3": 10**39, "d1": 0.5, "d2": 0.9}}),
             Gives(values_of("q1", {"AP": (1 + 2 / 3) / 2, "P@2": 0.5})), "8"),  # d3 (label 2), d2 (label 0), d1 (label 1)
        Case("read_run", "a score of 10**39 alone", args({"q1": {"d1": 10**39}}), Gives(frame_rows([("q1", "d1", 1e39)])), "8"),
        Case("Evaluator.evaluate", "an integer score beside floats", args({"q1": {"d1": 5, "d2": 0.9, "d3": 0.1}}),
             Gives(values_of("q1", {"AP": (1 + 2 / 3) / 2, "P@2": 0.5}))),
        Case("Evaluator.evaluate", "longdouble scores a double holds", args({"q1": {"d1": ld("0.5"), "d2": ld("0.9"), "d3": ld("0.1")}}),
             Gives(values_of("q1", q1)), "2"),
        Case("Evaluator.evaluate", "longdouble scores equal as doubles tie",
             args({"q1": {"d1": ld(1) + ld(2) ** -60, "d2": ld(1), "d3": ld(0)}}),
             Gives(values_of("q1", {"AP": AP_Q1, "P@2": 0.5}), "scores are doubles: d2 before d1, docno descending")),
        Case("Evaluator.evaluate", "integers beyond 2**53 equal as doubles tie",
             args({"q1": {"d1": 2**62 + 1, "d2": 2**62, "d3": 0}}),
             Gives(values_of("q1", {"AP": AP_Q1, "P@2": 0.5}), "scores are doubles: 2**62 + 1 rounds to 2**62")),
        Case("Evaluator.evaluate", "float32 and float16 scores", args({"q1": {"d1": np.float32(0.5), "d2": np.float16(0.875), "d3": 0.1}}),
             Gives(values_of("q1", q1))),
        Case("Evaluator.evaluate", "a Decimal score beside floats", args({"q1": {"d1": 0.5, "d2": Decimal("0.9"), "d3": 0.1}}),
             Gives(values_of("q1", q1), "any real number, as float() reads it")),
        # d3 (label 2), d2 (label 0), d1 (label 1): polars' Decimal reader failed on 1e39 and 41 digits
        Case("Evaluator.evaluate", "Decimal scores beyond 38 digits are doubles",
             args({"q1": {"d3": Decimal("1e39"), "d1": Decimal("0.50000000000000000000000000000000000000001"), "d2": Decimal("0.9")}}),
             Gives(values_of("q1", {"AP": (1 + 2 / 3) / 2, "P@2": 0.5}), "each as float() reads it")),
        # 0.1000...625 is the exact value of the double nearest 0.1 (55 digits): float() gives 0.1
        Case("read_run", "Decimal scores are what float() gives", args({"q1": {"d1": Decimal("1e30"), "d2": Decimal("0.1000000000000000055511151231257827021181583404541015625")}}),
             Gives(frame_rows([("q1", "d1", 1e30), ("q1", "d2", 0.1)]))),
        Case("Evaluator.evaluate", "a Fraction score", args({"q1": {"d1": fractions.Fraction(1, 3), "d2": 0.9, "d3": 0.1}}),
             Gives(values_of("q1", q1))),
        Case("Evaluator.evaluate", "a bool among numbers is its number", args({"q1": {"d1": 0.5, "d2": True, "d3": 0.1}}),
             Gives(values_of("q1", q1), "numpy's and polars' reading: refusing it would cost a pass over every score")),
        Case("Evaluator.evaluate", "an empty ranking", args({"q1": {}}), Gives(values_of("q1", {"AP": 0.0, "P@2": 0.0}))),
        Case("Evaluator.evaluate", "no queries", args({}), Gives(values_of("q2", {"AP": 0.0, "P@2": 0.0}))),
        Case("read_run", "empty and blank ids", args({"": {"": 1.0}, " q1\n": {"d\t1": 1.0}}),
             Gives(frame_rows([("", "", 1.0), (" q1\n", "d\t1", 1.0)]), "a dict's ids are whatever strings it holds")),
        Case("Evaluator.evaluate", "numpy string and integer ids", args({np.str_("q1"): RUN["q1"], np.int64(7): {np.int64(1): 1.0}}),
             Gives(lambda r: (values_of("q1", q1)(r), values_of("7", {"AP": 1.0, "P@2": 0.5})(r)))),
        Case("evaluate(run)", "a dict of dicts of dicts is runs by name", args({"mine": {"q1": {"d1": 1.0}}}),
             Gives(lambda r: assert_run_names(r, ["mine"]))),
        Case("read_run", "a pandas longdouble column beyond a double", lambda _t: (_pandas_run(np.array(HUGE_LD, dtype=ld)),),
             refused(InputError, "<DataFrame>: row 0: column 'score' holds np.longdouble('1e+400'), too large for a double"), "2"),
        Case("read_run", "a pandas longdouble column", lambda _t: (_pandas_run(np.array([ld(2), ld(1)], dtype=ld)),),
             Gives(frame_rows([("q1", "d1", 2.0), ("q1", "d2", 1.0)])), "2"),
        Case("read_run", "a pandas object id column of strings and integers",
             lambda _t: (_pandas_run([0.5, 0.25], docs=np.array(["d1", 7], dtype=object)),),
             Gives(frame_rows([("q1", "d1", 0.5), ("q1", "7", 0.25)]), "integers are their decimal text, as in a dict"), "7"),
        Case("read_run", "a pandas surrogate", lambda _t: (_pandas_run([0.5, 0.25], docs=np.array(["d1", "d\ud800"], dtype=object)),),
             refused(InputError, "<DataFrame>: row 1: column 'doc_id': id 'd\\ud800' is not valid text", SURROGATE), "7"),
        Case("read_run", "a polars Boolean score column",
             lambda _t: (pl.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "score": [True]}),),
             refused(InputError, "<DataFrame>", "column 'score' must hold numbers, not Boolean")),
        Case("read_run", "named tuples with a score of 10**39 among floats", lambda _t: ([_ScoredDoc("q1", "d1", 10**39), _ScoredDoc("q1", "d2", 0.5)],),
             Gives(frame_rows([("q1", "d1", 1e39), ("q1", "d2", 0.5)])), "8"),
        Case("read_run", "named tuples with longdouble scores", lambda _t: ([_ScoredDoc("q1", "d1", ld(2)), _ScoredDoc("q1", "d2", HUGE_LD[0])],),
             refused(InputError, "<rows>: query 'q1': row 1: score np.longdouble('1e+400') is too large for a double"), "2"),
        Case("read_run", "named tuples with integer and float scores", lambda _t: ([_ScoredDoc("q1", "d1", 1), _ScoredDoc(7, "d2", 0.5)],),
             Gives(frame_rows([("q1", "d1", 1.0), ("7", "d2", 0.5)]))),
        Case("read_run", "a pandas object score column of mixed numbers", lambda _t: (_pandas_run(np.array([1, ld("0.5")], dtype=object)),),
             Gives(frame_rows([("q1", "d1", 1.0), ("q1", "d2", 0.5)]))),
        # pandas takes Decimal('NaN') for a missing value: it was "missing score"
        Case("read_run", "a pandas object column holding a Decimal NaN", lambda _t: (_pandas_run(np.array([Decimal("NaN"), Decimal(1)], dtype=object)),),
             refused(InputError, "<DataFrame>: query 'q1': row 0: NaN score for docno 'd1'")),
        Case("read_run", "a pandas object column holding a Decimal sNaN", lambda _t: (_pandas_run(np.array([Decimal(1), Decimal("sNaN")], dtype=object)),),
             refused(InputError, "<DataFrame>: query 'q1': row 1: NaN score for docno 'd2'")),
        Case("read_run", "a pandas object column holding a Decimal infinity", lambda _t: (_pandas_run(np.array([Decimal("Infinity"), Decimal(1)], dtype=object)),),
             refused(InputError, "<DataFrame>: query 'q1': row 0: infinite score Decimal('Infinity')")),
        Case("read_run", "a pandas object column of Decimals", lambda _t: (_pandas_run(np.array([Decimal("1e39"), Decimal("1.5")], dtype=object)),),
             Gives(frame_rows([("q1", "d1", 1e39), ("q1", "d2", 1.5)]))),
        Case("read_run", "named tuples with a Decimal NaN", lambda _t: ([_ScoredDoc("q1", "d1", Decimal(2)), _ScoredDoc("q1", "d2", Decimal("NaN"))],),
             refused(InputError, "<rows>: query 'q1': row 1: NaN score for docno 'd2'")),
        Case("read_run", "named tuples with a surrogate",
             lambda _t: ([_ScoredDoc("q1", "d\ud800", 1.0)],), refused(InputError, "<rows>: row 0: column 'doc_id'", SURROGATE), "7"),
        Case("read_run", "a Parquet file with a column named query", _parquet_with_query_column,
             refused(InputError, "no query id column", "the columns are 'query', 'docno', 'score'",
                     "expected query_id, doc_id, score (ir_measures); qid, docno, score (PyTerrier); a column 'query' "
                     "is read when columns={'query': 'query'} names it"), "8"),
        Case("read_run", "a frame of a thousand columns, none of them a run's",
             lambda _t: (pl.DataFrame({f"column {i}": [1] for i in range(1000)}),),
             refused(InputError, "no query id or docno or score column", "... (1000 in all)")),
    ]  # fmt: skip


_ScoredDoc = collections.namedtuple("_ScoredDoc", "query_id doc_id score")


def _pandas_run(scores: Any, docs: Any = None) -> Any:
    pd = pytest.importorskip("pandas")
    n = len(scores)
    return pd.DataFrame(
        {"query_id": ["q1"] * n, "doc_id": docs if docs is not None else ["d1", "d2"][:n], "score": scores}
    )


def _parquet_with_query_column(tmp: Path) -> tuple[Path]:
    path = tmp / "run.parquet"
    pl.DataFrame({"query": ["q1"], "docno": ["d1"], "score": [1.0]}).write_parquet(path)
    return (path,)


def assert_queries(result: Any, expected: set[str]) -> None:
    assert set(result.query_ids) == expected, result.query_ids


def assert_run_names(results: Any, expected: list[str]) -> None:
    assert list(results) == expected


def _topk_cases() -> list[Case]:
    """A retriever's top k: query ids, document ids and scores as arrays."""
    s2 = np.array([[0.5, 0.9]])
    q1_d1_d2 = {"AP": 0.25, "P@2": 0.5}  # d2 (label 0) before d1 (label 1); d3 (label 2) not retrieved
    return [
        Case("Evaluator.evaluate_topk", "longdouble scores beyond a double", args(["q1"], np.array([["d1", "d2"]]), np.array([HUGE_LD], dtype=ld)),
             refused(InputError, "<topk>: query 'q1': row 0, column 0: score np.longdouble('1e+400') is too large for a double"), "2"),
        Case("Evaluator.evaluate_topk", "longdouble scores a double holds", args(["q1"], np.array([["d1", "d2"]]), np.array([[0.5, 0.9]], dtype=ld)),
             Gives(values_of("q1", q1_d1_d2)), None),
        Case("Evaluator.evaluate_topk", "longdouble scores equal as doubles tie",
             args(["q1"], np.array([["d2", "d1"]]), np.array([[ld(1) + ld(2) ** -60, ld(1)]], dtype=ld)),
             Gives(values_of("q1", q1_d1_d2), "scores are doubles: a tie, docno descending puts d2 first")),
        Case("Evaluator.evaluate_topk", "int64 scores equal as doubles tie",
             args(["q1"], np.array([["d2", "d1"]]), np.array([[2**62 + 1, 2**62]])),
             Gives(values_of("q1", q1_d1_d2), "scores are doubles")),
        Case("Evaluator.evaluate_topk", "float16 scores", args(["q1"], np.array([["d1", "d2"]]), s2.astype(np.float16)),
             Gives(values_of("q1", q1_d1_d2))),
        Case("Evaluator.evaluate_topk", "bool scores", args(["q1"], np.array([["d1", "d2"]]), np.array([[True, False]])),
             refused(InputError, "<topk>: scores must be numbers, got an array of bool")),
        Case("Evaluator.evaluate_topk", "object scores", args(["q1"], np.array([["d1", "d2"]]), s2.astype(object)),
             refused(InputError, "scores must be numbers, got an array of object")),
        Case("Evaluator.evaluate_topk", "a NaN score", args(["q1"], np.array([["d1", "d2"]]), np.array([[0.5, np.nan]])),
             refused(InputError, "<topk>: query 'q1': row 0, column 1: NaN score")),
        Case("Evaluator.evaluate_topk", "a NaN score of no document", args(["7"], np.array([[1, -1]]), np.array([[0.5, np.nan]])),
             Gives(values_of("7", {"AP": 1.0, "P@2": 0.5}), "a -1 entry is skipped with its score")),
        Case("Evaluator.evaluate_topk", "object ids holding integers", args(["7"], np.array([[1, 2]], dtype=object), s2),
             Gives(values_of("7", {"AP": 0.5, "P@2": 0.5}), "an integer is its decimal text in any array"), "7"),
        Case("Evaluator.evaluate_topk", "object ids mixing strings and integers", args(["q1"], np.array([["d1", 5]], dtype=object), s2),
             Gives(same_as({"q1": {"d1": 0.5, "5": 0.9}})), "7"),
        Case("Evaluator.evaluate_topk", "object ids padded with -1", args(["q1"], np.array([["d1", -1]], dtype=object), s2),
             Gives(same_as({"q1": {"d1": 0.5}}), "-1 is no result in any array"), "7"),
        Case("Evaluator.evaluate_topk", "object ids holding numpy integers and -1", args(["7"], np.array([[np.int64(2), np.int64(-1)]], dtype=object), s2),
             Gives(values_of("7", {"AP": 0.0, "P@2": 0.0})), "7"),
        Case("Evaluator.evaluate_topk", "an object id of -2", args(["q1"], np.array([["d1", -2]], dtype=object), s2),
             refused(InputError, "<topk>: query 'q1': row 0, column 1: doc id -2; an integer id must be >= 0, or -1 for no result")),
        Case("Evaluator.evaluate_topk", "a None doc id", args(["q1"], np.array([["d1", None]], dtype=object), s2),
             refused(InputError, "row 0, column 1: doc ids must be strings (or integers), got None")),
        Case("Evaluator.evaluate_topk", "object query ids holding integers", args(np.array([7], dtype=object), np.array([["2", "1"]]), s2),
             Gives(values_of("7", {"AP": 1.0, "P@2": 0.5})), "7"),
        Case("Evaluator.evaluate_topk", "query ids 1 and '1'", args(np.array([1, "1"], dtype=object), np.array([["d1"], ["d2"]]), np.array([[1.0], [2.0]])),
             refused(InputError, "<topk>: query '1' is given twice (rows 0 and 1)"), "7"),
        Case("Evaluator.evaluate_topk", "a surrogate doc id", args(["q1"], np.array([["d1", "d\ud800"]]), s2),
             refused(InputError, "<topk>: doc_ids[0, 1]: id 'd\\ud800' is not valid text", SURROGATE), "7"),
        Case("Evaluator.evaluate_topk", "a surrogate doc id in an object array", args(["q1"], np.array([["d1", "d\ud800"]], dtype=object), s2),
             refused(InputError, "<topk>: query 'q1': row 0, column 1: doc id 'd\\ud800' is not valid text", SURROGATE), "7"),
        Case("Evaluator.evaluate_topk", "a surrogate query id", args(["q\ud800"], np.array([["d1", "d2"]]), s2),
             refused(InputError, "<topk>: query_ids[0]: id 'q\\ud800' is not valid text", SURROGATE), "7"),
        Case("Evaluator.evaluate_topk", "no rows", args(np.array([], dtype=str), np.zeros((0, 0), dtype=np.int64), np.zeros((0, 0))),
             Gives(values_of("q1", {"AP": 0.0, "P@2": 0.0}))),
        Case("Evaluator.evaluate_topk", "shapes that do not match", args(["q1"], np.array([["d1", "d2"]]), np.array([[0.5]])),
             refused(InputError, "shapes do not match")),
        Case("Evaluator.evaluate_topk", "bytes ids", args(["q1"], np.array([[b"d1", b"d2"]]), s2),
             refused(InputError, "doc_ids must hold strings or integers, got an array of |S2")),
        Case("Evaluator.evaluate_topk", "a uint64 id beyond int64", args(["q1"], np.array([[2**64 - 1]], dtype=np.uint64), np.array([[1.0]])),
             Gives(same_as({"q1": {"18446744073709551615": 1.0}}))),
        Case("Evaluator.evaluate_topk", "very long ids", args(["q1"], np.array([[LONG, "d1"]]), s2),
             Gives(values_of("q1", {"AP": 0.5, "P@2": 0.5}))),  # d1 (label 1) first; d3 not retrieved
    ]  # fmt: skip


def _combine_fuse_compare_cases() -> list[Case]:
    def results(*runs: Any) -> Callable[[Path], tuple[Any, ...]]:
        return lambda _t: ([EV.evaluate(r) for r in runs],)

    other = irspec.Evaluator(QRELS, METRICS)
    return [
        Case("Evaluator.combine", "no results", args([]), refused(EvaluationError, "combine: no results to combine")),
        Case("Evaluator.combine", "a string for a result", args(["x"]), refused(EvaluationError, "combine: result 0 ('str')", "was not made by this evaluator")),
        Case("Evaluator.combine", "None for a result", args([None]), refused(EvaluationError, "result 0 ('NoneType')")),
        Case("Evaluator.combine", "another evaluator's result", lambda _t: ([other.evaluate(RUN)],), refused(EvaluationError, "was not made by this evaluator")),
        Case("Evaluator.combine", "one query in two results", results({"q1": RUN["q1"]}, {"q1": RUN["q1"]}),
             refused(EvaluationError, "combine: query 'q1' is in result 0 and in result 1")),
        Case("Evaluator.combine", "two batches", results({"q1": RUN["q1"]}, {"q2": RUN["q2"]}), Gives(values_of("q1", {"AP": AP_Q1, "P@2": 0.5}))),
        Case("fuse", "no runs", args([]), refused(EvaluationError, "fusion needs two runs or more, got 0")),
        Case("fuse", "one run", args([RUN]), refused(EvaluationError, "got 1")),
        Case("fuse", "None for the runs", args(None), refused(InputTypeError, "runs: expected a list of runs or a mapping {name: run}, not NoneType")),
        Case("fuse", "a path for the runs", args("bm25.run"), refused(InputTypeError, "not str 'bm25.run'")),
        Case("fuse", "integer run names", args({1: RUN, 2: RUN}), refused(InputTypeError, "runs: run names must be strings, not int 1")),
        Case("fuse", "None for a run", args([RUN, None]), refused(InputTypeError, "cannot read a run from None")),
        Case("fuse", "a NaN score", args([RUN, {"q1": {"d1": math.nan}}]), refused(InputError, "<dict>: query 'q1': NaN score for docno 'd1'")),
        Case("fuse", "a surrogate docno", args([RUN, {"q1": {"d\ud800": 1.0}}]), refused(InputError, SURROGATE), "7"),
        Case("fuse", "longdouble beyond a double", args([RUN, {"q1": {"d1": HUGE_LD[0]}}]), refused(InputError, "too large for a double"), "2"),
        Case("fuse", "an empty run", args([RUN, {}]), refused(InputError, "has no scored documents")),
        Case("compare", "no results", args([]), refused(EvaluationError, "comparing needs at least 2 runs, got 0")),
        Case("compare", "strings for results", args(["a", "b"]), refused(EvaluationError, "results[0] is a str, not an evaluated result")),
        Case("compare", "None for a result", lambda _t: ({"a": EV.evaluate(RUN), "b": None},), refused(EvaluationError, "results['b'] is a NoneType")),
        Case("compare", "integer names", lambda _t: ({1: EV.evaluate(RUN), 2: EV.evaluate(RUN)},), refused(EvaluationError, "run names must be strings, not int")),
        Case("compare", "two runs of one name", results(RUN, RUN), refused(EvaluationError, "'run' is given more than once")),
    ]  # fmt: skip


CASES: list[Case] = [
    *_qrels_cases(),
    *_qrels_values(),
    *_run_cases(),
    *_run_values(),
    *_topk_cases(),
    *_combine_fuse_compare_cases(),
]


# --------------------------------------------------------------------------------------------------
# The pytrec_eval drop-in: pytrec_eval's exception types and values, checked against pytrec_eval


def _dropin_cases() -> list[Case]:
    tq, tr = "RelevanceEvaluator", "RelevanceEvaluator.evaluate"
    key, doc, dictionary, label = (
        "Expected string as key",
        "Expected mapping of document id",
        "Expected dictionary as value",
        "Expected relevance to be integer",
    )
    scores = "Unable to extract query/object scores"
    return [
        Case(tq, "an integer query id", args({1: {"d1": 1}}), refused(InputTypeError, f"query_relevance: {key}: query id 1 is an int, not a string", pytrec=TypeError), "1"),
        Case(tq, "an integer document id", args({"q1": {1: 1}}), refused(InputTypeError, f"query_relevance: query 'q1': {doc}", "document id 1 is an int", pytrec=TypeError), "1"),
        Case(tq, "a None query id", args({None: {"d1": 1}}), refused(InputTypeError, key, "query id None is None", pytrec=TypeError)),
        Case(tq, "a list for judgments", args({"q1": [1]}), refused(InputTypeError, f"query 'q1': {dictionary}: its judgments are a list [1], not a dict", pytrec=TypeError)),
        Case(tq, "a number for judgments", args({"q1": 5}), refused(InputTypeError, dictionary, "query 'q1' has an int 5", pytrec=TypeError)),
        Case(tq, "a fractional label", args({"q1": {"d1": 1.5}}), refused(InputTypeError, f"query 'q1': {label}: document 'd1' has a float 1.5", pytrec=TypeError)),
        Case(tq, "a label '1'", args({"q1": {"d1": "1"}}), refused(InputTypeError, label, "a str '1'", pytrec=TypeError)),
        Case(tq, "a None label", args({"q1": {"d1": None}}), refused(InputTypeError, label, "has None", pytrec=TypeError)),
        Case(tq, "a NaN label", args({"q1": {"d1": math.nan}}), refused(InputTypeError, label, "a float nan", pytrec=TypeError)),
        Case(tq, "a numpy bool label", args({"q1": {"d1": np.bool_(True)}}), refused(InputTypeError, label, pytrec=TypeError)),
        Case(tq, "bool labels", args({"q1": {"d1": True, "d2": False, "d3": True}, "q2": {"d4": True}}), AsPytrec("pytrec_eval reads them as 1 and 0"), "8"),
        Case(tq, "an integer query id without judgments", args({**QRELS, 1: {}}), AsPytrec("pytrec_eval leaves out a query without judgments, whatever its key")),
        Case(tq, "empty and blank ids", args({"": {"": 1}, " q1\n": {"d\t1": 1}, **QRELS}), AsPytrec()),
        Case(tq, "an OrderedDict of judgments", args({"q1": collections.OrderedDict(d1=1, d3=0)}), AsPytrec()),
        Case(tq, "relevance level 0", args(QRELS, None, 0), refused(TypeError, "Argument relevance_level should be positive.", irspec=False, pytrec=TypeError)),
        Case(tq, "relevance level 2**31", args(QRELS, None, 2**31), refused(TypeError, "at most 2147483647 (a C int), got 2147483648", irspec=False, pytrec=TypeError)),
        Case(tq, "relevance level 1.5", args(QRELS, None, 1.5), refused(TypeError, irspec=False, pytrec=TypeError)),
        Case(tq, "relevance level True", args(QRELS, None, True), AsPytrec("a bool is an int")),
        Case(tq, "relevance level 2**31 - 1", args(QRELS, None, 2**31 - 1), AsPytrec("nothing is relevant")),
        Case(tr, "an integer query id the qrels lack", args({**RUN, 1: {"d1": 1.0}}), refused(InputTypeError, f"scores: {scores}: query id 1 is an int, not a string", pytrec=TypeError), "1"),
        Case(tr, "an integer document id", args({"q1": {1: 1.0}}), refused(InputTypeError, f"scores: query 'q1': {scores}: document id 1 is an int", pytrec=TypeError), "1"),
        Case(tr, "an integer query id of an empty ranking", args({**RUN, 5: {}}), refused(InputTypeError, "query id 5", pytrec=TypeError)),
        Case(tr, "None for a ranking", args({"q1": None}), refused(InputTypeError, "query 'q1'", "its scores are None, not a dict", pytrec=TypeError)),
        Case(tr, "a list for a ranking", args({"q1": []}), refused(InputTypeError, "its scores are a list [], not a dict", pytrec=TypeError)),
        Case(tr, "a score 'x'", args({"q1": {"d1": "x"}}), refused(InputTypeError, "query 'q1'", "the score of document 'd1' is a str 'x'", pytrec=TypeError)),
        Case(tr, "a None score", args({"q1": {"d1": None, "d2": 1.0}}), refused(InputTypeError, "is None, not a number", pytrec=TypeError)),
        Case(tr, "a Decimal score", args({"q1": {"d1": Decimal(1)}}), refused(InputTypeError, "a Decimal", pytrec=TypeError)),
        Case(tr, "a numpy bool score", args({"q1": {"d1": np.bool_(True)}}), refused(InputTypeError, "a bool", pytrec=TypeError)),
        Case(tr, "a list for the run", args([("q1", {"d1": 1.0})]), refused(InputTypeError, "scores: Argument object scores should be of type dictionary.", pytrec=TypeError)),
        Case(tr, "bool scores", args({"q1": {"d1": True, "d2": False, "d3": True}, "q2": {"d4": False, "d5": True}}), AsPytrec("pytrec_eval reads them as 1.0 and 0.0"), "8"),
        Case(tr, "bool scores among floats", args({"q1": {"d1": 0.5, "d2": True, "d3": False}}), AsPytrec()),
        Case(tr, "integer scores", args({"q1": {"d1": 3, "d2": 2, "d3": 1}, "q2": {"d4": -5, "d5": 7}}), AsPytrec()),
        Case(tr, "an integer score of 10**39", args({"q1": {"d1": 10**39, "d2": 0.5}}), AsPytrec("beyond a C float: inf there, which still ranks first")),
        Case(tr, "numpy float64 scores", args({"q1": {d: np.float64(s) for d, s in RUN["q1"].items()}}), AsPytrec()),
        Case(tr, "numpy string ids", args({np.str_("q1"): {np.str_("d1"): 0.5, "d3": 0.7}}), AsPytrec()),
        Case(tr, "empty and blank ids", args({"": {"": 1.0}, "q1": {" d1": 0.5, "d1\n": 0.4, "d3": 0.1}}), AsPytrec()),
        Case(tr, "an OrderedDict ranking", args({"q1": collections.OrderedDict(d3=0.2, d1=0.1)}), AsPytrec()),
        Case(tr, "a very long docno", args({"q1": {LONG: 2.0, "d1": 1.0}}), AsPytrec()),
    ] + [
        Case(tq, f"measure {m}", args(QRELS, {m}), AsPytrec("trec_eval 9 computes it; irspec's own specs refuse it"), "8")
        for m in ("set_F.0", "Rprec_mult.0", "11pt_avg.2", "11pt_avg.0.5,2", "iprec_at_recall.1.5", "iprec_at_recall.1.05", "utility.1")
    ]  # fmt: skip


@dataclass(frozen=True)
class Departure:
    """Where the drop-in departs from pytrec_eval on purpose: ``case`` is what the drop-in does (checked
    with the other rows), ``pytrec`` what pytrec_eval does (an exception type, ``"value"`` when it gives
    one, or ``"crash"``: not run), ``why`` the reason, and ``doc`` a phrase of
    ``docs/coming-from/pytrec_eval.md``'s table, which lists it."""

    case: Case
    pytrec: type[BaseException] | str
    why: str
    doc: str


def _departures() -> list[Departure]:
    tq, tr = "RelevanceEvaluator", "RelevanceEvaluator.evaluate"
    dual = "NaN or infinite scores"
    return [
        Departure(Case(tr, "a NaN score", args({"q1": {"d1": math.nan, "d2": 0.5}}), refused(InputError, "query 'q1': NaN score for docno 'd1'")),
                  "value", "a NaN score has no rank", dual),
        Departure(Case(tr, "an infinite score", args({"q1": {"d1": math.inf, "d2": 0.5}}), refused(InputError, "infinite score inf")),
                  "value", "an infinite score ties with every other", dual),
        Departure(Case(tr, "a score of 10**400", args({"q1": {"d1": 10**400}}), refused(InputError, "is too large for a double")),
                  SystemError, "beyond a double; pytrec_eval fails inside its C code", "too large for a double"),
        Departure(Case(tr, "float32 scores", args({"q1": {d: np.float32(s) for d, s in RUN["q1"].items()}}),
                       Gives(values_of_dropin("q1", {"map": AP_Q1, "P_2": 0.5}))),
                  TypeError, "numpy numbers of any precision are read, as irspec reads them", "numpy numbers"),
        Departure(Case(tr, "a Fraction score", args({"q1": {"d1": fractions.Fraction(1, 2), "d2": 0.9, "d3": 0.1}}),
                       Gives(values_of_dropin("q1", {"map": AP_Q1, "P_2": 0.5}))),
                  TypeError, "any real number is read", "numpy numbers"),
        Departure(Case(tq, "numpy integer labels", args({"q1": {"d1": np.int64(1), "d2": np.int32(0), "d3": np.uint8(2)}}),
                       Gives(values_of_dropin("q1", {"map": AP_Q1, "P_2": 0.5}))),
                  TypeError, "numpy integers and integral floats are read as the integers they are", "numpy integers"),
        Departure(Case(tq, "integral float labels", args({"q1": {"d1": 1.0, "d2": 0.0, "d3": 2.0}}),
                       Gives(values_of_dropin("q1", {"map": AP_Q1, "P_2": 0.5}))),
                  TypeError, "an integral float is the integer it holds", "numpy integers"),
        Departure(Case(tr, "a mapping that is no dict", lambda _t: ({"q1": types.MappingProxyType(dict(RUN["q1"]))},),
                       Gives(values_of_dropin("q1", {"map": AP_Q1, "P_2": 0.5}))),
                  TypeError, "any mapping is read", "any mapping"),
        Departure(Case(tq, "a list for the qrels", args([("q1", {"d1": 1})]), refused(TypeError, "Argument query_relevance should be of type dictionary.", irspec=False)),
                  AttributeError, "a TypeError, as for a run that is no mapping", "any mapping"),
        Departure(Case(tq, "a label beyond a C int", args({"q1": {"d1": 2**40, "d2": 0, "d3": 2}}),
                       Gives(values_of_dropin("q1", {"map": AP_Q1, "P_2": 0.5}))),
                  "value", "read as a 64-bit integer; pytrec_eval misreads it, differently from one measure to another", "beyond a C int"),
        Departure(Case(tq, "a label beyond 64 bits", args({"q1": {"d1": 2**63}}), refused(InputError, "label 9223372036854775808 is out of range", INT64)),
                  SystemError, "labels are 64-bit integers", "beyond a C int"),
        Departure(Case(tq, "a surrogate docno", args({"q1": {"d\ud800": 1}}), refused(InputError, "query_relevance: query 'q1': docno 'd\\ud800' is not valid text", SURROGATE), "7"),
                  "crash", "UTF-8 cannot encode it", "lone surrogate"),
        Departure(Case(tr, "a surrogate docno", args({"q1": {"d\ud800": 1.0}}), refused(InputError, "scores: query 'q1': docno 'd\\ud800' is not valid text"), "7"),
                  "crash", "UTF-8 cannot encode it", "lone surrogate"),
        Departure(Case(tr, "a surrogate query id the qrels lack", args({**RUN, "q\ud800": {"d1": 1.0}}), refused(InputError, "scores: query id 'q\\ud800' is not valid text"), "7"),
                  "crash", "UTF-8 cannot encode it", "lone surrogate"),
        Departure(Case(tq, "ids holding a NUL", args({"q\x001": {"d\x001": 1}, "q\x002": {"d\x002": 0}}, None, 1, {"q\x001": {"d\x002": 1.0}, "q\x002": {"d\x002": 1.0}}),
                       Gives(lambda got: assert_maps(got, {"q\x001": 0.0, "q\x002": 0.0}))),
                  "crash", "pytrec_eval cuts ids at the NUL (C strings): two queries that differ after it abort it", "NUL"),
        Departure(Case(tq, "relevance level -1", args(QRELS, None, -1), refused(TypeError, "should be positive, got -1", "4294967295", irspec=False), "8"),
                  "crash", "pytrec_eval reads it as 4294967295 (nothing relevant) and crashes on bpref", "relevance_level"),
        Departure(Case(tr, "an integer document id in a query the qrels lack", args({**RUN, "q9": {1: 1.0}}),
                       Gives(lambda got: assert_maps(got, {"q1": AP_Q1, "q2": 1.0}))),
                  TypeError, "reading what is not evaluated would cost as much as evaluating it", "do not judge"),
        Departure(Case(tr, "a bad score in a query the qrels lack", args({**RUN, "q9": {"d1": "x"}}),
                       Gives(lambda got: assert_maps(got, {"q1": AP_Q1, "q2": 1.0}))),
                  TypeError, "as above", "do not judge"),
        Departure(Case(tr, "scores equal in single precision", args({"q1": {"d1": 1.0000000001, "d2": 1.0, "d3": 0.0}}),
                       Gives(values_of_dropin("q1", {"map": (1 + 2 / 3) / 2, "P_2": 0.5}))),
                  "value", "pytrec_eval reads scores into a C float, where they tie", "single precision"),
    ]  # fmt: skip


def values_of_dropin(query: str, expected: dict[str, float]) -> Callable[[Any], None]:
    def check(got: dict[str, dict[str, float]]) -> None:
        assert {k: got[query][k] for k in expected} == pytest.approx(expected, abs=TOL), got

    return check


def assert_maps(got: dict[str, Any], maps: dict[str, float]) -> None:
    """The drop-in's result holds these queries, with these values of ``map``."""
    assert {q: v["map"] for q, v in got.items()} == pytest.approx(maps, abs=TOL), got


DEPARTURES = _departures()
DROPIN = _dropin_cases()
ALL = CASES + DROPIN + [d.case for d in DEPARTURES]


# --------------------------------------------------------------------------------------------------
# The tests


def fingerprint(x: Any) -> Any:
    """``x`` as a comparable value that sees every change: types, key order, float bits, array bytes."""
    if isinstance(x, np.ndarray):
        return (
            "ndarray",
            x.dtype.str,
            x.shape,
            fingerprint(x.tolist()) if x.dtype == object else x.tobytes(),
        )
    if isinstance(x, np.generic):
        return (type(x).__name__, x.tobytes())
    if isinstance(x, float):
        return ("float", struct.pack("<d", x))
    if isinstance(x, Mapping):
        return (type(x).__name__, tuple((fingerprint(k), fingerprint(v)) for k, v in x.items()))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(fingerprint(v) for v in x))
    if isinstance(x, Path):
        return ("path", str(x), x.read_bytes())
    if isinstance(x, pl.DataFrame):
        return ("polars", str(x.schema), fingerprint(x.to_dict(as_series=False)))
    if type(x).__name__ == "DataFrame":  # pandas
        return ("pandas", tuple(map(str, x.dtypes)), fingerprint({c: x[c].to_numpy() for c in x.columns}))
    if isinstance(x, irspec.Result):
        return ("Result", id(x), x.values.tobytes(), x.query_ids)
    return (type(x).__name__, repr(x))


def _call(case: Case, made: tuple[Any, ...]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrspecWarning)
        return TARGETS[case.target](*made)


def _pytrec() -> Any:
    return pytest.importorskip("pytrec_eval")


@pytest.mark.parametrize("case", ALL, ids=[f"{c.target}: {c.name}" for c in ALL])
def test_hostile_input(case: Case, tmp_path: Path) -> None:
    made = case.data(tmp_path)
    before = fingerprint(made)
    outcome = case.outcome
    if isinstance(outcome, Refused):
        with pytest.raises(outcome.error) as info:
            _call(case, made)
        message = str(info.value)
        source = (
            getattr(info.value, "source", None) or ""
        )  # a path as long as the user's, besides the message
        assert len(message) - len(source) <= MESSAGE_MAX, message
        assert not outcome.irspec or isinstance(info.value, IrspecError), repr(info.value)
        for part in outcome.says:
            assert part in message, message
    else:
        got = _call(case, made)
        if isinstance(outcome, Gives):
            outcome.check(got)
        else:
            theirs = PYTREC_TARGETS[case.target](_pytrec(), *case.data(tmp_path))
            assert not differences(got, theirs), differences(got, theirs)
    assert fingerprint(made) == before, "the input was changed"


REFUSED_BY_PYTREC = [c for c in ALL if isinstance(c.outcome, Refused) and c.outcome.pytrec is not None]


@pytest.mark.parametrize("case", REFUSED_BY_PYTREC, ids=[f"{c.target}: {c.name}" for c in REFUSED_BY_PYTREC])
def test_pytrec_eval_refuses_them_too(case: Case, tmp_path: Path) -> None:
    """The drop-in's refusals that claim pytrec_eval's exception type: pytrec_eval raises it."""
    assert isinstance(case.outcome, Refused) and case.outcome.pytrec is not None
    with pytest.raises(case.outcome.pytrec):
        PYTREC_TARGETS[case.target](_pytrec(), *case.data(tmp_path))


PYTREC_RUNS = [d for d in DEPARTURES if d.pytrec != "crash"]


@pytest.mark.parametrize(
    "departure", PYTREC_RUNS, ids=[f"{d.case.target}: {d.case.name}" for d in PYTREC_RUNS]
)
def test_pytrec_eval_does_what_each_departure_says(departure: Departure, tmp_path: Path) -> None:
    """pytrec_eval gives a value where a departure says so, and raises where it says it raises (in a
    child process where pytrec_eval fails inside its C code)."""
    case = departure.case
    if departure.pytrec == "value":
        PYTREC_TARGETS[case.target](_pytrec(), *case.data(tmp_path))
        return
    assert isinstance(departure.pytrec, type)
    with pytest.raises(departure.pytrec):
        PYTREC_TARGETS[case.target](_pytrec(), *case.data(tmp_path))


@pytest.mark.in_a_child
def test_pytrec_eval_crashes_where_a_departure_says_so() -> None:
    """The departures whose pytrec_eval side is a crash, each in a child process (a surrogate
    segfaults pytrec_eval; a negative relevance level with bpref too)."""
    _pytrec()
    programs = {
        "a surrogate docno": "pe.RelevanceEvaluator({'q1': {'d\\ud800': 1}}, {'map'})",
        "a surrogate query id": "pe.RelevanceEvaluator({'q1': {'d1': 1}}, {'map'}).evaluate({'q\\ud800': {'d1': 1.0}})",
        "relevance level -1": "pe.RelevanceEvaluator({'q1': {'d1': 1, 'd2': 0}}, {'bpref'}, -1).evaluate({'q1': {'d1': 1.0, 'd2': 2.0}})",
        "ids holding a NUL": "pe.RelevanceEvaluator({'q\\x001': {'d1': 1}, 'q\\x002': {'d1': 0}}, {'map'})",
    }
    for name, program in programs.items():
        done = subprocess.run(
            [sys.executable, "-c", f"import pytrec_eval as pe\n{program}"],
            capture_output=True,
            timeout=120,
            check=False,
        )
        assert done.returncode < 0, (name, done.returncode, done.stderr[-500:])  # ended by a signal


def test_every_departure_is_on_the_pytrec_eval_page() -> None:
    page = (ROOT / "docs" / "coming-from" / "pytrec_eval.md").read_text()
    missing = sorted({d.doc for d in DEPARTURES if d.doc not in page})
    assert not missing, f"docs/coming-from/pytrec_eval.md does not list: {missing}"


# --------------------------------------------------------------------------------------------------
# The differential on random collections, with the odd inputs pytrec_eval reads


def _odd(qrels: dict, run: dict, rng: np.random.Generator) -> tuple[dict, dict]:
    """``qrels`` and ``run`` with odd inputs pytrec_eval reads as it reads the plain ones: labels 0 and 1
    as bools, integral scores as ints or bools, scores as numpy float64, docnos with blanks, newlines, an
    empty one and a very long one, str subclasses for ids, OrderedDicts for dicts."""
    rename: dict[str, str] = {}

    def docno(d: str) -> str:
        if d not in rename:
            style = rng.integers(0, 6)
            rename[d] = [d, f" {d}", f"{d}\n", f"{d}\t{d}", np.str_(d), d * 2000][style]
        return rename[d]

    odd_qrels: dict = {}
    for q, docs in qrels.items():
        judged = {docno(d): (bool(v) if v in (0, 1) and rng.random() < 0.5 else v) for d, v in docs.items()}
        odd_qrels[np.str_(q) if rng.random() < 0.3 else q] = (
            collections.OrderedDict(judged) if rng.random() < 0.3 else judged
        )
    if qrels and rng.random() < 0.5:  # an empty docno, judged in a query of its own
        odd_qrels["q-empty"] = {"": 1}
    odd_run: dict = {}
    for q, docs in run.items():
        ranked = {}
        for d, s in docs.items():
            if s in (0.0, 1.0) and rng.random() < 0.3:
                s = bool(s)
            elif float(s).is_integer() and rng.random() < 0.5:
                s = int(s)
            elif rng.random() < 0.3:
                s = np.float64(s)
            ranked[docno(d)] = s
        odd_run[q] = ranked
    if "q-empty" in odd_qrels:
        odd_run["q-empty"] = {"": 1.0, "other": 2.0}
    return odd_qrels, odd_run


@functools.cache
def _odd_case(seed: int) -> tuple[dict, dict]:
    """``random_case(seed)`` made odd (:func:`_odd`) and ``pytrec_safe``, once for the module: the test
    below runs once a reader (conftest's ``_reader``), and neither evaluator changes what it is given."""
    rng = np.random.default_rng(1000 + seed)
    qrels, run = _odd(*random_case(seed), rng)
    return qrels, pytrec_safe(qrels, run)


@functools.cache
def _odd_pytrec_eval(seed: int, measures: frozenset[str], level: int) -> dict:
    """pytrec_eval's answer on ``_odd_case(seed)``, once: it does not depend on irspec's reader."""
    qrels, run = _odd_case(seed)
    return _pytrec().RelevanceEvaluator(qrels, set(measures), level).evaluate(run)


@pytest.mark.parametrize("seed", range(12))
def test_the_drop_in_agrees_with_pytrec_eval_on_odd_random_collections(seed: int) -> None:
    """``tests/randomdata.py``'s collections (ties, graded and negative labels, unjudged documents,
    empty rankings) with odd inputs pytrec_eval reads (:func:`_odd`): the same queries, keys and values,
    for every measure pytrec_eval has and the parameter forms irspec's own specs refuse."""
    qrels, run = _odd_case(seed)
    for measures in ({"all_trec"}, {"set_F.0"}, {"Rprec_mult.0,0.4"}, {"11pt_avg.0.5,1.05,2"},
                     {"iprec_at_recall.0.3,1.05,1.5,40"}, {"utility.2,1"}):  # fmt: skip
        for level in (1, 2):
            theirs = _odd_pytrec_eval(seed, frozenset(measures), level)
            got = compat.RelevanceEvaluator(qrels, measures, level).evaluate(run)
            problems = differences(got, theirs)
            assert not problems, f"seed {seed}, {measures}, level {level}: " + "; ".join(problems[:5])


# --- session 29: a flag given as text, measures given as objects, empty pandas frames ---------------


@pytest.mark.parametrize("flag", ["false", "no", "0", 0, None, 1])
def test_judged_only_is_a_flag_not_text(flag):
    # any non-empty string was true: judged_only="false" turned on trec_eval's -J in silence
    qrels, run = {"q": {"d1": 1, "d2": 1, "d3": 1}}, {"q": {"x1": 3.0, "x2": 2.0, "d1": 1.0}}
    with pytest.raises(irspec.EvaluationError, match="judged_only must be True or False, got"):
        irspec.evaluate(qrels, run, "P@2", judged_only=flag)
    assert irspec.evaluate(qrels, run, "P@2", judged_only=False, judged_warning=None).aggregate() == {
        "P@2": 0.0
    }


def test_ir_measures_measures_are_read_by_their_text_and_other_objects_are_refused():
    ir_measures = pytest.importorskip("ir_measures")
    qrels, run = {"q": {"d1": 1, "d2": 2}}, {"q": {"d2": 2.0, "d1": 1.0}}
    ours = irspec.evaluate(qrels, run, [ir_measures.nDCG @ 10, ir_measures.AP(rel=2)])
    assert ours.aggregate() == irspec.evaluate(qrels, run, ["nDCG@10", "AP(rel=2)"]).aggregate()
    assert irspec.parse_many([ir_measures.nDCG @ 10]) == irspec.parse_many("nDCG@10")
    for bad, shown in ((None, "NoneType None"), (5, "int 5"), (["AP", None], "NoneType None")):
        with pytest.raises(SpecError, match=f"a metric spec is a text \\(such as 'nDCG@10'\\), got {shown}"):
            irspec.evaluate(qrels, run, bad)


def test_an_empty_pandas_frame_is_read_as_an_empty_run_or_qrels():
    pd = pytest.importorskip("pandas")
    qrels = pd.DataFrame({"query_id": ["q"], "doc_id": ["d1"], "relevance": [1]})
    run = pd.DataFrame({"query_id": ["q"], "doc_id": ["d1"], "score": [1.0]})
    for empty in (
        run.iloc[:0],
        pd.DataFrame(columns=["query_id", "doc_id", "score"]),
    ):  # object columns, no row
        with pytest.warns(irspec.IrspecWarning, match="no lines"):
            assert irspec.evaluate(qrels, empty, "AP").aggregate() == {"AP": 0.0}
    for empty in (qrels.iloc[:0], pd.DataFrame(columns=["query_id", "doc_id", "relevance"])):
        with pytest.warns(irspec.IrspecWarning, match="has no judgments"):
            assert irspec.evaluate(empty, run, "AP").query_ids == ()
