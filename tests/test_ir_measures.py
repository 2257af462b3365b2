"""Every ir_measures spelling, read by irspec, and its values beside ir_measures' own.

The walk goes through ir_measures' registry as installed (``ir_measures.measures.registry``): every
registered name (aliases and spellings included: ``MAP``, ``NDCG``, ``RPrec``, ``SetRelP``...), alone
and with each of its ``SUPPORTED_PARAMS`` set to every value of ``VALUES`` (of the type ir_measures
declares: cutoffs and other ints, floats such as ``0.25``, ``1.0`` and ``2.0``, bools, every quoted
string choice, a gain map), written as ir_measures writes it (``str(measure)``, under the registered
spelling: ``nDCG(judged_only=True)@10``, ``SetP(relative=True)``, ``NumRet(rel=2)``, ``P(rel=2)@10``,
``NRBP(beta=0.25)``, ``nDCG(dcg='exp-log2')``). Each text must round-trip through
``ir_measures.parse_measure`` (so the walk reads ir_measures' real forms) and parse in irspec to exactly
one metric, except a value outside the range the measure's definition gives its parameter (``DOMAIN``:
a persistence above 1, ``NRBP(beta=2.0)``), which irspec refuses naming the parameter, and a form
ir_measures itself refuses to compute (``SDCG(dcg='exp-log2')``), which irspec refuses too. A parameter
the walk has no values for fails the walk: a new ir_measures version cannot slip a form past it.

Then, on random adversarial data (``tests/randomdata.py``: ties, graded and negative labels,
unjudged documents, queries without relevant documents, short and long rankings), every form that
ir_measures can compute here (its pytrec_eval provider, and its Python providers) is computed by both,
and irspec's per-query values must equal ir_measures' (within 1e-9) on every query of the run, empty
rankings included (a query given with no document). ir_measures' pytrec_eval misreads an empty ranking
that is the first it evaluates (the run is ordered with a non-empty one first: ``tests/trecdicts.py``'s
``pytrec_safe``) and an all-negative query (none is drawn; irspec's values there are tested in
``tests/test_differential.py``). A qrels query
the run lacks gets 0 on every measure from ir_measures, and from irspec trec_eval's -c values (its empty
ranking's: 1 for NumQ, R for NumRel): those queries are not compared.

The walk runs with the installed plugins loaded (as a user's irspec runs): CI installs every plugin in
``plugins/``, and some of ir_measures' names (ERR, RBP) are theirs.

Left out of the value comparison, by name, with the reason (docs/reference/exactness.md lists them):
``DELIBERATE`` (irspec follows trec_eval 10 where ir_measures' provider does not) and
``AWAITED_FROM_PARALLEL_WORK``. ``OWN_TIE_ORDER`` names forms whose ir_measures provider breaks score
ties its own way: they are compared on the run re-scored without ties in trec_eval's order. Compat and
Accuracy are compared in ``tests/test_preference.py``, query by query (ir_measures' Accuracy stops with
ZeroDivisionError on a top k without a non-relevant document).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from randomdata import random_case, untied
from trecdicts import pytrec_safe

import irspec
from irspec.testing import registered_plugin

im = pytest.importorskip("ir_measures")
from ir_measures.measures.base import _NOT_PROVIDED  # noqa: E402

AWAITED_FROM_PARALLEL_WORK: frozenset[str] = frozenset()
"""ir_measures names that plugins written in parallel will bring: excluded from the walk until they are
merged, when this set is emptied (``test_awaited_names_are_still_awaited`` fails as soon as one parses)."""

DELIBERATE: dict[str, str] = {
    "IPrec": "trec_eval 10 finds the c-th relevant document with c = lround(x*R), pytrec_eval's trec_eval 9 "
    "with floor(x*R + 0.9); and where -J empties a ranking trec_eval gives -nan (ir_measures NaN), irspec 0 "
    "(tests/test_differential.py checks irspec against trec_eval 10's rule)",
    "Judged": "irspec divides by k even when the ranking is shorter and counts a negative label as unjudged "
    "(trec_eval's convention); ir_measures divides by min(k, n), counts any qrels line as judged and breaks "
    "score ties by docno ascending",
    "ERR": "ir_measures computes it with gdeval (the TREC Web track's script), which needs a cutoff, numeric "
    "query ids (the random cases' are not) and labels of at most 4 (it counts a negative one as 0) and prints "
    "five decimals; irspec's ERR is the irspec-usermodel plugin's, equal to gdeval's printed digits where "
    "gdeval runs (tests/test_compat_ir_measures.py)",
}
"""Names whose values irspec deliberately computes otherwise than the provider ir_measures uses here:
not compared (each is still walked and parsed). docs/reference/exactness.md lists them."""

OWN_TIE_ORDER: dict[str, str] = {
    "RR@": "ir_measures computes RR with a cutoff by its msmarco provider, which breaks score ties by docno "
    "ascending (trec_eval: descending); compared on a run whose scores are made distinct in trec_eval's order",
    "RBP": "ir_measures computes RBP by its cwl_eval provider, which keeps the run's order for tied scores "
    "(irspec: trec_eval's, docno descending); compared on the untied run",
}
"""Forms (a prefix ending in ``@``: with a cutoff) whose ir_measures provider orders tied scores its own
way: compared on the same run re-scored without ties, in trec_eval's order (irspec's for every measure)."""

FLOATS = (0.5, 0.25, 1.0, 2.0)
"""The floats every float parameter is walked with: fractions, an integral float (ir_measures prints 1.0)
and one above 1 (F's beta; outside a probability's range, see DOMAIN)."""

VALUES: dict[str, tuple[object, ...]] = {
    "cutoff": (10, 1),
    "rel": (2,),  # 1 is the default; 0 pytrec_eval refuses ("relevance_level should be positive")
    "judged_only": (True, False),
    "relative": (True, False),
    "normalize": (False, True),
    "p": FLOATS,
    "beta": FLOATS,
    "alpha": FLOATS,
    "recall": FLOATS,
    "T": FLOATS,
    "dcg": ("exp-log2", "log2"),  # quoted strings: every choice any measure has, on every measure
    "gains": ({0: 0, 1: 1, 2: 3, 3: 3, 4: 7},),
    "min_rel": (1,),
    "max_rel": (3,),
}
"""The values each of ir_measures' parameters is walked with, of the type it declares (cutoffs and other
ints, floats, bools, quoted strings, a gain map): every form ``str(measure)`` prints for them is walked."""

DOMAIN: dict[tuple[str, str], tuple[float, float, str]] = {
    ("*", "p"): (0, 1, "a persistence, the probability of going on (RBP, NERR10, Compat)"),
    ("*", "alpha"): (0, 1, "the probability that a document covering a subtopic again is redundant"),
    ("*", "recall"): (0, 1, "a recall level"),
    ("NRBP", "beta"): (0, 1, "NRBP's patience, the probability of going on (not F's beta)"),
    ("nNRBP", "beta"): (0, 1, "NRBP's patience, the probability of going on (not F's beta)"),
}
"""Ranges ir_measures does not check (its ParamInfo has a type, no range) but its measures' definitions
imply, by (NAME or "*", parameter). A walked form outside one means nothing in the measure's model
(pyndeval computes NRBP(beta=2.0) as 0 on every query, test_an_out_of_range_value_means_nothing_there):
irspec refuses it with an error naming the parameter and its range, rather than computing something."""

TOL = 1e-9


def _domain(measure_name: str, param: str) -> tuple[float, float, str] | None:
    return DOMAIN.get((measure_name, param)) or DOMAIN.get(("*", param))


def _walk() -> tuple[list[tuple[str, str]], list[tuple[str, str, str]], list[str], list[str]]:
    """Every spelling and parameter form: (registered name, text) of the forms irspec must read; (name,
    text, parameter) of those with a value outside DOMAIN; the texts ir_measures itself refuses (its
    validate_params); and the problems found (a parameter with no values to walk, a value of the wrong
    type, a choice not walked, a text ir_measures does not read back)."""
    forms: dict[str, str] = {}
    outside: dict[str, tuple[str, str]] = {}
    refused: set[str] = set()
    problems: list[str] = []
    for name, measure in sorted(im.measures.registry.items()):
        if name in AWAITED_FROM_PARALLEL_WORK:
            continue
        supported = measure.SUPPORTED_PARAMS
        unknown = [k for k in supported if k not in VALUES]
        if unknown:
            problems.append(f"{name}: no values to walk for {unknown}")
            continue
        for k, info in supported.items():
            wrong = [v for v in VALUES[k] if info.dtype is not None and not isinstance(v, info.dtype)]
            unwalked = (
                [c for c in info.choices if c not in VALUES[k]] if info.choices is not _NOT_PROVIDED else []
            )
            if wrong or unwalked:
                problems.append(
                    f"{name}.{k}: values not of type {info.dtype} {wrong}, choices not walked {unwalked}"
                )
        # a registry entry may be a measure with parameters already set (SetRelP is SetP(relative=True))
        preset = {k: v for k, v in measure.params.items() if v is not _NOT_PROVIDED}
        required = {k: VALUES[k][0] for k, info in supported.items() if info.required and k not in preset}
        variants = [required] + [
            {**required, k: v}
            for k in supported
            if k not in preset
            for v in VALUES[k]
            if required.get(k, _NOT_PROVIDED) != v
        ]
        for params in variants:
            m = measure(**params) if params else measure
            text = str(m)
            # str() prints the measure's NAME; the walk writes the registered spelling (MAP, NDCG, SetRelP)
            text = name + text[len(m.NAME) :]
            try:
                m.validate_params()
            except AssertionError:  # ir_measures' own refusal (a value not among its choices)
                refused.add(text)
                continue
            try:
                back = im.parse_measure(text)
            except Exception as e:
                problems.append(f"{text}: ir_measures does not read it back ({e})")
                continue
            if back != m and str(back) != str(m):
                problems.append(f"{text}: ir_measures reads it back as {back}")
                continue
            out = [
                k
                for k, v in params.items()
                if isinstance(v, float)
                and _domain(m.NAME, k)
                and not _domain(m.NAME, k)[0] <= v <= _domain(m.NAME, k)[1]
            ]
            if out:
                outside.setdefault(text, (name, out[0]))
            else:
                forms.setdefault(text, name)
    return (
        [(n, t) for t, n in forms.items()],
        [(n, t, k) for t, (n, k) in outside.items()],
        sorted(refused),
        problems,
    )


FORMS, OUTSIDE, REFUSED_BY_IR_MEASURES, PROBLEMS = _walk()


@pytest.fixture(autouse=True, scope="module")
def installed_plugins():
    """The registry a user has: the installed plugins too (ERR and RBP come from irspec-usermodel), which
    the suite's conftest otherwise keeps out of irspec's own tests."""
    with registered_plugin(load_entry_points=True) as registry:
        yield registry


def test_the_walk_reads_every_name_and_parameter():
    assert not PROBLEMS, PROBLEMS
    walked = {name for name, _ in FORMS} | AWAITED_FROM_PARALLEL_WORK
    assert walked == set(im.measures.registry), "every registered name is walked or awaited"
    # the forms the issues name are among them: issue 15's, read; issue 21's, each with every type of value
    texts = {t for _, t in FORMS}
    for expected in (
        "nDCG(judged_only=True)",
        "SetP(relative=True)",
        "NumRet(rel=2)",
        "P(rel=2)@10",
        "AP(rel=2)",
        "Judged@10",
        "SetRelP(relative=True)",
        "Compat(p=0.5)",
        "Accuracy@10",
        "IPrec@0.5",
        "NRBP(beta=0.25)",
        "nNRBP(beta=1.0)",
        "SetF(beta=2.0)",
        "RBP(p=1.0)",
        "nDCG(dcg='exp-log2')",
        "NDCG(dcg='exp-log2')",
        "P@1",
        "Compat(normalize=False)",
        "BPM(max_rel=3,T=0.25)@10",
        "alpha_nDCG(alpha=1.0)",
    ):
        assert expected in texts, expected
    assert {"NRBP(beta=2.0)", "nNRBP(beta=2.0)", "IPrec@2.0", "RBP(p=2.0)"} <= {t for _, t, _ in OUTSIDE}
    assert "SDCG(max_rel=3,dcg='exp-log2')@10" in REFUSED_BY_IR_MEASURES
    assert len(FORMS) > 150


def _plugin_of(name: str) -> str | None:
    """The plugin module that registers ``name``, for the names no built-in metric has."""
    if name in PLUGIN_TESTED:
        return (
            "irspec_usermodel"
            if name in ("BPM", "INST", "INSQ", "NERR8", "NERR9", "NERR10", "NERR11", "SDCG")
            else "irspec_diversity"
        )
    return None


@pytest.mark.parametrize("name,text", FORMS, ids=[t for _, t in FORMS])
def test_every_ir_measures_spelling_parses(name, text):
    if _plugin_of(name):  # not deliberate: CI installs the plugins, and a skip fails there
        pytest.importorskip(
            _plugin_of(name), reason=f"{_plugin_of(name)} is not installed (plugins/, README's test command)"
        )
    metrics = irspec.parse_many(text)
    assert len(metrics) == 1, metrics
    # the canonical text is irspec's own and reads back as the same metric
    assert irspec.parse(str(metrics[0])) == metrics[0]


@pytest.mark.parametrize("name,text,param", OUTSIDE, ids=[t for _, t, _ in OUTSIDE])
def test_a_value_outside_its_range_is_refused_naming_it(name, text, param):
    """ir_measures prints and takes NRBP(beta=2.0) unchecked; its beta is a probability there (DOMAIN), so
    irspec refuses the form, saying which parameter and what range, as it refuses any out-of-range value."""
    if _plugin_of(name):
        pytest.importorskip(
            _plugin_of(name), reason=f"{_plugin_of(name)} is not installed (plugins/, README's test command)"
        )
    with pytest.raises(irspec.ParameterError) as info:
        irspec.parse(text)
    assert f"parameter {param!r}: got 2.0, expected a number" in str(info.value) and "<= 1" in str(info.value)


def test_an_out_of_range_value_means_nothing_there():
    """Why DOMAIN's forms are refused rather than computed: ir_measures (pyndeval, ndeval's arithmetic)
    gives NRBP(beta=2.0) = 0 for every ranking, since NRBP's normaliser 1 - (1 - alpha) beta is 0 at the
    default alpha = 0.5, and nNRBP(beta=2.0) = 0 / 0: values that say nothing of the run."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip(
        "pyndeval", reason="pyndeval (ir_measures' provider of NRBP) is in the diversity plugin's test extra"
    )
    qrels = pd.DataFrame(
        {
            "query_id": ["1", "1", "1", "2", "2"],
            "iteration": ["1", "2", "1", "1", "2"],
            "doc_id": ["a", "b", "c", "a", "d"],
            "relevance": [1, 1, 1, 1, 0],
        }
    )
    run = pd.DataFrame(
        {
            "query_id": ["1", "1", "1", "2", "2"],
            "doc_id": ["a", "b", "c", "d", "a"],
            "score": [3.0, 2.0, 1.0, 2.0, 1.0],
        }
    )
    # one measure per call: ir_measures' pyndeval provider mixes up NRBPs of different betas in one call
    got = {
        (str(m.measure), m.query_id): m.value
        for t in ("NRBP(beta=2.0)", "nNRBP(beta=2.0)", "NRBP(beta=0.5)")
        for m in im.iter_calc([im.parse_measure(t)], qrels, run)
    }
    assert [v for (t, _), v in got.items() if t == "NRBP(beta=2.0)"] == [0.0, 0.0]
    # nNRBP divides that 0 by the ideal ranking's 0: 0 or NaN, as the provider's run goes
    assert all(v == 0 or math.isnan(v) for (t, _), v in got.items() if t == "nNRBP(beta=2.0)")
    assert got["NRBP", "1"] > 0 and got["NRBP", "2"] > 0  # at beta = 0.5 the same run scores


@pytest.mark.parametrize("text", REFUSED_BY_IR_MEASURES)
def test_what_ir_measures_refuses_irspec_refuses(text):
    """SDCG(dcg='exp-log2'): ir_measures prints it, and refuses to compute it (dcg's choices are ['log2'])."""
    with pytest.raises(AssertionError, match="invalid param"):
        im.parse_measure(text).validate_params()
    pytest.importorskip(
        "irspec_usermodel", reason="irspec-usermodel is not installed (plugins/, README's test command)"
    )
    with pytest.raises(irspec.ParameterError, match="dcg"):
        irspec.parse(text)


def test_awaited_names_are_still_awaited():
    """The set is for names no plugin registers yet: one that parses must leave it (and be walked)."""
    assert set(im.measures.registry) >= AWAITED_FROM_PARALLEL_WORK
    parsed = []
    for name in sorted(AWAITED_FROM_PARALLEL_WORK):
        try:
            irspec.parse(name)
        except irspec.UnknownMetricError:
            continue
        parsed.append(name)
    assert not parsed, f"remove {parsed} from AWAITED_FROM_PARALLEL_WORK: irspec reads them now"


def test_the_issues_parameter_forms_mean_what_ir_measures_means():
    """The forms of issue 15, each to the irspec metric that computes the same thing."""
    assert str(irspec.parse("SetP(relative=True)")) == "relP"
    assert str(irspec.parse("SetRelP")) == "relP"
    assert str(irspec.parse("SetRelP(relative=False)")) == "P"
    assert str(irspec.parse("SetP(relative=False)")) == "P"
    assert str(irspec.parse("NumRet(rel=1)")) == "NumRelRet(rel=1)"
    assert str(irspec.parse("NumRet")) == "NumRet"
    assert str(irspec.parse("nDCG(judged_only=True)@10")) == "nDCG(judged_only=true)@10"
    assert str(irspec.parse("AP(judged_only=False)")) == "AP"
    with pytest.raises(irspec.ParameterError, match="relative"):
        irspec.parse("SetP(relative=2)")
    with pytest.raises(irspec.ParameterError, match="relative"):
        irspec.parse("AP(relative=True)")  # only P and relP take it


def _matches(text: str, key: str) -> bool:
    """Whether the walked text is the measure ``key`` names (by ir_measures' NAME: MRR is RR)."""
    base = im.parse_measure(text).NAME
    if key.endswith("@"):
        return base == key[:-1] and "@" in text
    return base == key


def _reason(text: str, table: dict[str, str]) -> str | None:
    return next((reason for key, reason in table.items() if _matches(text, key)), None)


def _ir_measures_inputs(seed: int) -> tuple[dict, dict]:
    """A random case, empty rankings (a query with an empty dict) included, without what ir_measures'
    pytrec_eval misreads: an empty ranking first (moved after a non-empty one) and all-negative qrels
    queries (random_case draws none without all_negative=True)."""
    qrels, run = random_case(seed)
    return qrels, pytrec_safe(qrels, run)


PREFERENCE = ("Compat", "Accuracy")  # compared in tests/test_preference.py, query by query
PLUGIN_TESTED = (
    # ndeval's measures need qrels with subtopics: compared with pyndeval (and through ir_measures' pyndeval
    # provider, whose judged_only crashes) in plugins/irspec-diversity/tests/test_ndeval_reference.py
    "alpha_nDCG",
    "α_nDCG",
    "alpha_DCG",
    "α_DCG",
    "ERR_IA",
    "nERR_IA",
    "NRBP",
    "nNRBP",
    "P_IA",
    "AP_IA",
    "MAP_IA",
    "StRecall",
    # cwl_eval's measures: compared with cwl_eval through ir_measures, on its gain mapping (max_rel), in
    # plugins/irspec-usermodel/tests/test_cwl_differential.py
    "BPM",
    "INST",
    "INSQ",
    "NERR8",
    "NERR9",
    "NERR10",
    "NERR11",
    "SDCG",
)


def _compared(tied: bool) -> list[str]:
    """The walked forms compared on the raw run (``tied``) or on the untied run."""
    out = []
    for name, text in FORMS:
        if name in PREFERENCE or name in PLUGIN_TESTED or _reason(text, DELIBERATE):
            continue
        if (_reason(text, OWN_TIE_ORDER) is None) == tied:
            out.append(text)
    return out


def test_every_exception_names_walked_forms():
    for table in (DELIBERATE, OWN_TIE_ORDER):
        for key in table:
            assert any(_matches(t, key) for _, t in FORMS), key


def _theirs(texts: list[str], qrels: dict, run: dict) -> tuple[set[str], dict[tuple[str, str], float]]:
    """ir_measures' per-query values of the texts it can compute here, on the queries of the run (its
    pipeline gives qrels queries the run lacks its measures' default, 0, where trec_eval -c gives num_q 1
    and num_rel R: irspec's missing-query rule is tested against trec_eval in test_differential.py)."""
    computed, values = set(), {}
    for text in texts:
        try:
            got = list(im.iter_calc([im.parse_measure(text)], qrels, run))
        except ValueError as e:  # no provider installed here computes it (RBP: cwl_eval or trectools)
            assert "unsupported measures" in str(e).lower(), e
            continue
        computed.add(text)
        values.update({(text, v.query_id): v.value for v in got if v.query_id in run})
    return computed, values


def _disagreements(texts: list[str], qrels: dict, run: dict) -> tuple[set[str], list[str]]:
    computed, theirs = _theirs(texts, qrels, run)
    ours = irspec.evaluate(qrels, run, [irspec.parse(t) for t in sorted(computed)]).per_query()
    bad = []
    for (text, q), value in sorted(theirs.items()):
        mine = ours[q][str(irspec.parse(text))]
        if not math.isclose(mine, value, rel_tol=0, abs_tol=TOL):
            bad.append(f"{text} query {q}: irspec {mine!r}, ir_measures {value!r}")
    return computed, bad


def test_the_cases_hold_judged_empty_rankings():
    """The comparisons below meet empty rankings of judged queries, which pytrec_eval scores."""
    cases = [_ir_measures_inputs(seed) for seed in range(12)]
    assert sum(1 for qrels, run in cases for q, docs in run.items() if not docs and q in qrels) >= 3


@pytest.mark.parametrize("seed", range(12))
def test_values_agree_with_ir_measures(seed):
    qrels, run = _ir_measures_inputs(seed)
    computed, bad = _disagreements(_compared(tied=True), qrels, run)
    assert len(computed) > 60, sorted(set(_compared(tied=True)) - computed)
    assert not bad, "\n".join(bad[:30])


@pytest.mark.parametrize("seed", range(12))
def test_values_agree_with_ir_measures_without_ties(seed):
    qrels, run = _ir_measures_inputs(seed)
    computed, bad = _disagreements(_compared(tied=False), qrels, untied(run))
    # ir_measures' cwl_eval provider computes RBP only with a relevance level (rel=)
    uncomputable = {t for t in _compared(tied=False) if t.startswith("RBP") and "rel=" not in t}
    assert set(_compared(tied=False)) - computed <= uncomputable
    assert not bad, "\n".join(bad[:30])


def _keyword_cutoff(text: str) -> str:
    """``P(rel=2)@10`` as ``P(rel=2,cutoff=10)``: ir_measures' keyword spelling of the @ value."""
    head, _, cutoff = text.rpartition("@")
    if "(" in head:
        return f"{head[:-1]},cutoff={cutoff})"
    return f"{head}(cutoff={cutoff})"


AT_CUTOFF = [(n, t) for n, t in FORMS if "@" in t and "cutoff" in im.measures.registry[n].SUPPORTED_PARAMS]
"""The walked forms whose @ value is ir_measures' cutoff parameter (IPrec's is its recall)."""


@pytest.mark.parametrize("name,text", AT_CUTOFF, ids=[t for _, t in AT_CUTOFF])
def test_the_cutoff_keyword_is_the_at_value(name, text):
    keyword = _keyword_cutoff(text)
    assert im.parse_measure(keyword) == im.parse_measure(text)  # ir_measures reads both as one measure
    if _plugin_of(name):
        pytest.importorskip(
            _plugin_of(name), reason=f"{_plugin_of(name)} is not installed (plugins/, README's test command)"
        )
    assert irspec.parse(keyword) == irspec.parse(text)
