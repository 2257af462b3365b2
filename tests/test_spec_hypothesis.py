"""Property tests of the spec language (after jmespath's ``extra/test_hypothesis.py``).

1. Any text either parses or raises an :class:`irspec.IrspecError`, never another exception.
2. Whatever parses round-trips: ``irspec.parse(str(m)) == m`` and the canonical text is stable.
3. Every parameter of every registered metric, given extreme numbers and R arithmetic, either binds,
   round-trips and evaluates without a numpy warning, or raises an IrspecError.

Texts come from ``st.text()``, from the grammar's alphabet, from mutations of the canonical fixture, and
from a generator that follows the grammar with registered names and parameters (so that many texts
bind). A few bugs are known and have their own strict xfail tests; :func:`_known_bug` recognises
exactly those (by exception type and the irspec function that raised it) so that the properties keep
looking for new ones. When a bug is fixed, its xfail test turns XPASS and fails: delete it and its
entry here.
"""

from __future__ import annotations

import contextlib
import traceback
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, reject, settings
from hypothesis import strategies as st

import irspec
from irspec import IrspecError
from irspec.spec.plugins import get_registry

ALPHABET = "PnDCG@()=,.+-*/{}:[]R0123456789 '\"_α١"  # α: a non-ASCII letter (ir_measures spells α_nDCG); ١: a non-ASCII digit

FIXTURES = Path(__file__).parent / "fixtures"
CANONICAL = [
    line.strip()
    for line in (FIXTURES / "canonical_specs.txt").read_text("utf-8").splitlines()
    if line.strip() and not line.lstrip().startswith("#")
]

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _raised_in(exc: BaseException) -> tuple[str, str]:
    """(file name, function) of the innermost irspec frame of the exception's traceback."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "irspec" in Path(f.filename).parts]
    if not frames:
        return ("", "")
    return (Path(frames[-1].filename).name, frames[-1].name)


def _known_bug(exc: BaseException) -> str | None:
    """The xfail test that documents this non-IrspecError, or None for a new bug (none are known now)."""
    return None


def _known_round_trip_bug(canonical: str) -> str | None:
    return None


def check(text: str, *, trec: bool = False) -> list[irspec.Metric]:
    """Parse ``text``; assert it fails only with IrspecError and that what parses round-trips."""
    try:
        metrics = irspec.parse_many(text, trec=trec)
    except IrspecError:
        return []
    except Exception as e:
        if _known_bug(e):
            reject()
        raise
    assert isinstance(metrics, list) and metrics
    for m in metrics:
        canonical = str(m)
        if _known_round_trip_bug(canonical):
            reject()
        again = irspec.parse(canonical)
        assert again == m, (text, canonical, str(again))
        assert hash(again) == hash(m)
        assert str(again) == canonical, (text, canonical, str(again))
    # The list as a whole round-trips too, in order (duplicates are already gone).
    assert irspec.parse_many(", ".join(str(m) for m in metrics)) == metrics
    return metrics


# --- arbitrary text --------------------------------------------------------------------------------


@SETTINGS
@given(st.text())
@example("")
@example("ndcg@10")
@example("P@5, map P.5,10")
@example("\x00")
@example("P@(R*(1/0))")
def test_arbitrary_text_raises_only_irspec_errors(text):
    check(text)


@SETTINGS
@given(st.text(alphabet=ALPHABET, max_size=30))
@example("P@(R+0/0)")
@example("nDCG@(2*R)")
@example("P.5,10")
def test_grammar_alphabet_text_raises_only_irspec_errors(text):
    check(text)


@SETTINGS
@given(st.text(alphabet=ALPHABET, max_size=30))
def test_grammar_alphabet_text_in_trec_mode(text):
    check(text, trec=True)


# --- mutations of canonical specs ----------------------------------------------------------------


@st.composite
def mutated_canonical(draw) -> str:
    text = draw(st.sampled_from(CANONICAL))
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["insert", "delete", "replace"]))
        ch = draw(st.sampled_from(ALPHABET + "abekpr"))
        if op == "insert":
            text = text[:i] + ch + text[i:]
        elif op == "delete":
            text = text[:i] + text[i + 1 :]
        else:
            text = text[:i] + ch + text[i + 1 :]
    return text


@SETTINGS
@given(mutated_canonical())
def test_mutated_canonical_specs(text):
    check(text)


@SETTINGS
@given(st.lists(st.sampled_from(CANONICAL), min_size=1, max_size=4), st.sampled_from([", ", " ", ",", "\n"]))
def test_lists_of_canonical_specs(texts, sep):
    metrics = check(sep.join(texts))
    assert [str(m) for m in metrics] == list(dict.fromkeys(texts))


# --- texts that follow the grammar ---------------------------------------------------------------

_REGISTRY = get_registry()
_NAMES = sorted(n for n in _REGISTRY.names() if ":" not in n)
_CHOICES = sorted({c for d in _REGISTRY.definitions.values() for p in d.params for c in p.choices})

_numbers = st.one_of(
    st.integers(0, 1200).map(str),
    st.floats(0, 3, allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(["0.5", ".25", "1e-1", "2.", "1e3", "0", "1", "10"]),
)
_atoms = st.one_of(_numbers, st.just("R"), st.sampled_from(["X", "true", "false", *_CHOICES]))
_exprs = st.recursive(
    _atoms,
    lambda sub: st.one_of(
        st.tuples(sub, st.sampled_from("+-*/"), sub).map("".join),
        sub.map(lambda s: f"({s})"),
        sub.map(lambda s: f"-{s}"),
    ),
    max_leaves=5,
)
_values = st.one_of(
    _exprs,
    st.lists(st.tuples(st.integers(-1, 4).map(str), _numbers), max_size=4).map(
        lambda items: "{" + ",".join(f"{k}:{v}" for k, v in items) + "}"
    ),
    st.lists(_numbers, max_size=4).map(lambda items: "[" + ",".join(items) + "]"),
    st.sampled_from(_CHOICES).map(repr),
)
_cutoffs = st.one_of(_numbers, st.just("R"), _exprs.map(lambda s: f"({s})"))
_dotted = st.lists(
    st.sampled_from(["5", "10", ".25", "0.5", "1=3", "2=9", "-1", "0", "2", "23.4", "0.20"]),
    min_size=1,
    max_size=3,
)


def _value_for(param) -> st.SearchStrategy[str]:
    """Mostly well-typed values for a declared parameter, sometimes anything."""
    typed = {
        "int": st.one_of(st.integers(1, 1000).map(str), st.just("R"), _exprs),
        "float": st.one_of(st.floats(0, 1, allow_nan=False).map(repr), st.integers(1, 5).map(str), _exprs),
        "bool": st.sampled_from(["true", "false", "0", "1"]),
        "choice": st.sampled_from(param.choices or ("x",)).flatmap(
            lambda c: st.sampled_from([c, repr(c), c.upper()])
        ),
        "gains": st.lists(st.tuples(st.integers(-1, 4), st.integers(0, 9)), min_size=1, max_size=4).map(
            lambda items: "{" + ",".join(f"{k}:{v}" for k, v in items) + "}"
        ),
        "floats": st.lists(st.floats(0, 1, allow_nan=False).map(repr), min_size=1, max_size=4).map(
            lambda items: "[" + ",".join(items) + "]"
        ),
        "str": st.sampled_from(["'a'", "b", '"c d"']),
    }[param.kind]
    return st.one_of(typed, typed, typed, _values)


@st.composite
def grammatical_spec(draw) -> str:
    name = draw(st.sampled_from(_NAMES))
    try:
        definition = _REGISTRY.get(name)
    except IrspecError:  # a group
        definition = None
    params = list(definition.params) if definition is not None else []
    if draw(st.integers(0, 5)) == 0:
        name += "." + ",".join(draw(_dotted))
    args = []
    if draw(st.integers(0, 5)) == 0:
        args.append(draw(_values))
    if params:
        for p in draw(st.lists(st.sampled_from(params), max_size=3, unique_by=lambda p: p.name)):
            args.append(f"{p.name}={draw(_value_for(p))}")
    if draw(st.integers(0, 9)) == 0:
        args.append(f"foo={draw(_values)}")
    text = name
    if args or draw(st.integers(0, 5)) == 0:
        text += "(" + ",".join(draw(st.permutations(args))) + ")"
    if (definition is not None and definition.at and draw(st.booleans())) or draw(st.integers(0, 9)) == 0:
        text += "@" + draw(_cutoffs)
    return text


@SETTINGS
@given(st.lists(grammatical_spec(), min_size=1, max_size=3), st.sampled_from([", ", " "]))
def test_grammatical_specs_bind_or_raise_irspec_errors(specs, sep):
    check(sep.join(specs))


@SETTINGS
@given(grammatical_spec())
def test_grammatical_specs_in_trec_mode(text):
    check(text, trec=True)


def _successes(strategy: st.SearchStrategy[str], attempt, examples: int) -> int:
    """How many of ``examples`` derandomized texts from ``strategy`` ``attempt`` takes without an error."""
    ok = 0

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True)
    @given(strategy)
    def count(text):
        nonlocal ok
        try:
            attempt(text)
            ok += 1
        except Exception:
            pass

    count()
    return ok


def test_the_generators_reach_valid_specs():
    # Guard against a strategy that only ever produces errors (the round-trip property would be vacuous).
    ok = _successes(grammatical_spec(), irspec.parse_many, 200)
    assert ok >= 30, ok


# --- a bug the properties once found -------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["bpref(R" + "+1" * 3000 + ")", "P@(" + "-" * 3000 + "1)"], ids=["long-sum", "deep-negation"]
)
def test_deeply_nested_expression_raises_an_irspec_error(text):
    with contextlib.suppress(IrspecError):
        irspec.parse(text)


# --- the lark-free path for simple texts is held equal to the grammar -------------------------------


def _by_grammar(text: str):
    from irspec.spec import syntax as spec

    try:
        tree = spec._parser().parse(text)
    except Exception:
        return None
    return [spec._spec(child, text) for child in tree.children[0].children]


def _assert_simple_path_agrees(text: str) -> None:
    from irspec.spec import syntax as spec

    fast = spec._parse_simple(text)
    if fast is None:
        return
    slow = _by_grammar(text)
    assert slow is not None, f"the simple path accepted {text!r}, which the grammar rejects"
    assert fast == slow
    assert [(n.start, n.end) for n in fast] == [(n.start, n.end) for n in slow]


@given(st.text(alphabet="PnDCGapmR@.,_ 0123456789e-=()\t", max_size=30))
@settings(max_examples=400, deadline=None)
def test_simple_path_equals_the_grammar(text):
    _assert_simple_path_agrees(text)


def test_simple_path_equals_the_grammar_on_the_fixtures():
    lines = []
    for name in ("canonical_specs.txt", "spec_aliases.txt"):
        for line in (Path(__file__).parent / "fixtures" / name).read_text("utf-8").splitlines():
            line = line.split(" -> ")[0].strip()
            if line and not line.startswith("#"):
                lines.append(line)
    lines.append(", ".join(lines))
    taken = 0
    for line in lines:
        _assert_simple_path_agrees(line)
        from irspec.spec import syntax as spec

        taken += spec._parse_simple(line) is not None
    assert taken > 50  # the common spellings do take the simple path


# --- absurd numbers, every parameter of every metric, evaluated ----------------------------------------
#
# Specs built from the grammar with every registered parameter (walked from the registry with its
# kind), extreme numbers (0, 2**53 + 1, 1e19, 1e308, 1e400, 5e-324, negatives through unary minus) and
# arithmetic over R. Each spec that parses must round-trip and evaluate, on a run with an R = 0 query,
# a tie, an unjudged and a pooled-unjudged document and a query with an empty ranking, to numbers or an
# IrspecError: no other exception and no numpy RuntimeWarning.

_EXTREME = [
    "0",
    "0.0",
    "1",
    "2",
    "3",
    "10",
    ".5",
    "0.3",
    "1e-9",
    "5e-324",
    "1e-308",
    "2.5",
    "9007199254740992",
    "9007199254740993",
    "1e19",
    "99999999999999999999",
    "1e100",
    "1e155",
    "1e308",
    "1e400",
]
_extreme = st.sampled_from(_EXTREME)
_r_exprs = st.recursive(
    st.one_of(_extreme, st.just("R")),
    lambda sub: st.one_of(
        st.tuples(sub, st.sampled_from(["+", "-", " - ", "*", "/"]), sub).map("".join),
        sub.map(lambda s: f"({s})"),
        sub.map(lambda s: f"-{s}"),
    ),
    max_leaves=4,
)


def _absurd_value(param) -> st.SearchStrategy[str]:
    """Values of a declared parameter's kind, with extreme numbers and R arithmetic."""
    numbers = st.one_of(_extreme, _extreme.map(lambda s: "-" + s))
    return {
        "int": st.one_of(numbers, _r_exprs),
        "float": st.one_of(numbers, _r_exprs),
        "bool": st.sampled_from(["true", "false", "0", "1", "2"]),
        "choice": st.sampled_from(param.choices or ("x",)),
        "gains": st.lists(
            st.tuples(st.sampled_from(["-1", "0", "1", "2", "3", "99999999999999999999"]), numbers),
            min_size=1,
            max_size=3,
        ).map(lambda items: "{" + ",".join(f"{k}:{v}" for k, v in items) + "}"),
        "floats": st.lists(numbers, min_size=1, max_size=3).map(lambda items: "[" + ",".join(items) + "]"),
        "str": st.sampled_from(["'a'", "b"]),
    }[param.kind]


_DEFINITIONS = sorted(_REGISTRY.definitions.values(), key=lambda d: d.name)


@st.composite
def absurd_spec(draw) -> str:
    definition = draw(st.sampled_from(_DEFINITIONS))
    params = [p for p in definition.params if p.name != definition.at]
    chosen = draw(st.lists(st.sampled_from(params), max_size=3, unique_by=lambda p: p.name)) if params else []
    text = definition.name
    if chosen:
        text += "(" + ",".join(f"{p.name}={draw(_absurd_value(p))}" for p in chosen) + ")"
    if definition.at and draw(st.booleans()):
        value = draw(_absurd_value(definition.param(definition.at)))
        text += "@" + (
            value if value.replace(".", "").replace("e", "").isdigit() or value == "R" else f"({value})"
        )
    return text


def _fuzz_data():
    from irspec.data import read_qrels, read_run

    qrels = read_qrels(
        {
            "q1": {"d1": 1, "d2": 0, "d3": 2, "d4": 3, "d9": -1},  # graded, with a pooled-unjudged d9
            "q2": {"d5": 0, "d6": 0},  # R = 0
            "q3": {"d7": 1},  # absent from the run: an empty ranking
        }
    )
    run = read_run(
        {
            "q1": {"d1": 0.9, "d2": 0.8, "d3": 0.8, "dX": 0.7, "d9": 0.6, "d4": 0.1},
            "q2": {"d5": 0.5, "dY": 0.4},
        }
    )
    return qrels, run


_FUZZ_QRELS, _FUZZ_RUN = _fuzz_data()
_FUZZ_OPTIONS = st.sampled_from(
    [{}, {"collection_size": 9007199254740992}, {"collection_size": 1, "depth": 1}, {"judged_only": True}]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(absurd_spec(), _FUZZ_OPTIONS)
@example("nDCG@(R*1e19)", {})
@example("P@(10/R)", {})
@example("P@(R - R)", {})
@example("AP@(0+(R+R))", {})  # printed as AP@(0+R+R) once, which reads back as (0+R)+R
@example("bpref(1/(R - 2))", {})
@example("Rprec(mult=9007199254740992)", {})
@example("Fallout@9007199254740992", {"collection_size": 9007199254740992})
@pytest.mark.filterwarnings("error")
@pytest.mark.filterwarnings("ignore::irspec.IrspecWarning")
def test_absurd_numbers_round_trip_and_evaluate_without_warnings(text, options):
    import warnings

    try:
        metrics = irspec.parse_many(text)
    except IrspecError:
        return
    for m in metrics:
        assert irspec.parse(str(m)) == m, (text, str(m))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy RuntimeWarning is a failure
        warnings.simplefilter("ignore", irspec.IrspecWarning)  # irspec's own notes are expected
        try:
            result = irspec.evaluate(_FUZZ_QRELS, _FUZZ_RUN, metrics, **options)
        except IrspecError:
            return
    for m in metrics:
        if m.aggregate != "none":
            values = result.column(m)
            assert not np.isinf(values).any(), (str(m), values)


def test_the_absurd_generator_reaches_evaluations():
    # The property above must not be vacuous: enough generated specs bind and evaluate.
    evaluated = _successes(absurd_spec(), lambda text: irspec.evaluate(_FUZZ_QRELS, _FUZZ_RUN, text), 150)
    assert evaluated >= 30, evaluated


def _by_pattern(text: str):
    """The simple path's pattern alone (what _parse_simple read before the hand scanner)."""
    from irspec.spec import syntax as spec

    real = spec._scan_plain
    spec._scan_plain = lambda text: None
    try:
        return spec._parse_simple(text)
    finally:
        spec._scan_plain = real


# texts made of the pieces the scanner reads (names, dotted lists, cutoffs, separators) and of what
# comes near them (a letter or an exponent after a number, a blank before "@", a point, a bracket)
_PIECES = st.sampled_from(
    [
        "P",
        "map",
        "nDCG",
        "ndcg_cut",
        "recall",
        "_",
        "x9",
        "R",
        "r",
        "e",
        "E",
        "é",
        "11pt",
        ".",
        ".5",
        ".5,10",
        ",",
        ", ",
        " ",
        "\t",
        "@",
        "@10",
        "@R",
        "@0",
        "@1e3",
        "@.5",
        "5",
        "10",
        "-",
        "+",
        "=",
        "(",
        ")",
        "x",
        "_5",
        ",1",
        ".1,3,5",
    ]
)


@given(
    st.lists(_PIECES, max_size=8).map("".join)
    | st.text(alphabet="PnDCGapmRr@.,_ 0123456789eE-=()\tx\u00e9", max_size=24)
)
@example("official")
@example("map_cut.1,3,5,10,100,1000 ndcg_cut.10")
@example("P.5,10x")
@example("P5,10")
@example("P @10")
@example("P@10.5")
@example("P@r")
@example("P.5e")
@example("P.5,x y")
@example("map (x)")
@settings(max_examples=1000, deadline=None)
def test_the_hand_scanner_reads_what_the_pattern_reads(text):
    from irspec.spec import syntax as spec

    scanned = spec._scan_plain(text)
    if scanned is None:
        return  # declined: the pattern (or the grammar) reads it
    expected = _by_pattern(text)
    assert scanned == expected
    assert [(n.start, n.end) for n in scanned] == [(n.start, n.end) for n in expected]
