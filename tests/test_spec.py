"""The metric-spec language: canonical texts, aliases, equality, lists, groups, trec_eval names, errors.

The two fixture files are the contract: ``fixtures/canonical_specs.txt`` holds texts that must come
back unchanged from ``str(irspec.parse(text))``, and ``fixtures/spec_aliases.txt`` holds
``input -> canonical`` pairs. Bad inputs are a table of ``(text, column, error class, message
fragments)`` in the style of pytest's ``testing/test_mark_expression.py``.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from shared_data import TREC_EVAL_TEST

import irspec
from irspec import (
    IrspecError,
    ParameterError,
    SpecError,
    SpecSyntaxError,
    UnknownMetricError,
)
from irspec.spec import syntax as spec_ast
from irspec.spec.plugins import get_registry
from irspec.spec.registry import JUDGED_ONLY
from irspec.spec.syntax import parse_syntax

FIXTURES = Path(__file__).parent / "fixtures"


def _fixture_lines(name: str) -> list[tuple[int, str]]:
    out = []
    for lineno, line in enumerate((FIXTURES / name).read_text("utf-8").splitlines(), 1):
        line = line.strip()
        if line and not line.startswith("#"):
            out.append((lineno, line))
    return out


CANONICAL = [text for _, text in _fixture_lines("canonical_specs.txt")]


def _alias_pairs() -> list[tuple[str, list[str]]]:
    pairs = []
    for lineno, line in _fixture_lines("spec_aliases.txt"):
        text, sep, expected = line.rpartition(" -> ")
        if not sep or not text or not expected:
            raise ValueError(f"spec_aliases.txt:{lineno}: expected 'input -> canonical', got {line!r}")
        pairs.append((text, expected.split(", ")))
    return pairs


ALIASES = _alias_pairs()


# --- the fixtures themselves ---------------------------------------------------------------------


def test_fixtures_are_not_empty_and_have_no_duplicates():
    assert len(CANONICAL) > 100
    assert len(set(CANONICAL)) == len(CANONICAL)
    inputs = [text for text, _ in ALIASES]
    assert len(ALIASES) > 150
    assert len(set(inputs)) == len(inputs)


@pytest.mark.parametrize("text", CANONICAL)
def test_canonical_text_round_trips_unchanged(text):
    m = irspec.parse(text)
    assert str(m) == text
    again = irspec.parse(str(m))
    assert again == m
    assert hash(again) == hash(m)
    assert str(again) == text


@pytest.mark.parametrize("text", CANONICAL)
def test_canonical_text_is_a_list_of_one(text):
    assert irspec.parse_many(text) == [irspec.parse(text)]


def test_canonical_fixture_covers_every_registered_metric():
    covered = {irspec.parse(text).name for text in CANONICAL}
    missing = sorted(set(irspec.metrics()) - covered)
    assert not missing, f"canonical_specs.txt has no line for {missing}"


def test_canonical_fixture_sets_every_declared_parameter():
    # Every parameter of every metric is given a non-default value on some line (so every kind:
    # int, float, choice, gains, floats, and R expressions, is exercised through the canonical form).
    covered = set()
    for text in CANONICAL:
        m = irspec.parse(text)
        covered |= {(m.name, k) for k, _ in m.params}
    # judged_only is every run metric's (registry.JUDGED_ONLY, one implementation): a few lines set it
    declared = {(d.name, p.name) for d in irspec.metrics().values() for p in d.params if p is not JUDGED_ONLY}
    assert {n for n, k in covered if k == JUDGED_ONLY.name} >= {"P", "nDCG", "AP", "IPrec"}
    missing = sorted(declared - covered)
    assert not missing, f"canonical_specs.txt never sets {missing}"


def test_canonical_fixture_covers_parameter_kinds():
    kinds = set()
    with_r = set()
    for text in CANONICAL:
        m = irspec.parse(text)
        for k, v in m.params:
            kinds.add(m.definition.param(k).kind)
            if isinstance(v, spec_ast.Expr.__args__) and "R" in spec_ast.free_symbols(v):
                with_r.add(text)
    builtin_kinds = {p.kind for d in irspec.metrics().values() for p in d.params}
    assert builtin_kinds <= kinds
    assert {"P@R", "nDCG@(2*R)", "Bpref(nonrel=10+R)"} <= with_r


@pytest.mark.parametrize(("text", "expected"), ALIASES, ids=[t for t, _ in ALIASES])
def test_spelling_binds_to_canonical(text, expected):
    got = irspec.parse_many(text)
    assert [str(m) for m in got] == expected
    assert got == [irspec.parse(e) for e in expected]
    if len(expected) == 1:
        assert irspec.parse(text) == irspec.parse(expected[0])
        assert hash(irspec.parse(text)) == hash(irspec.parse(expected[0]))


@pytest.mark.parametrize("expected", sorted({e for _, exp in ALIASES for e in exp}))
def test_alias_targets_are_canonical(expected):
    assert str(irspec.parse(expected)) == expected


_DEFAULTS = [
    (d.name, p.name, p.default)
    for d in sorted(get_registry().definitions.values(), key=lambda d: d.name)
    for p in d.params
    if p.default is not None and p is not JUDGED_ONLY  # every metric's: tests/test_ir_measures_forms.py
]


@pytest.mark.parametrize(("name", "param", "default"), _DEFAULTS, ids=[f"{n}.{p}" for n, p, _ in _DEFAULTS])
def test_a_parameter_given_its_default_is_dropped(name, param, default):
    # ... from the text unless it is shown at its default (a default @ value: relstring@10), and in any
    # case the metric is the one its name alone gives
    written = (
        repr(default) if isinstance(default, (str, int, float)) else str(getattr(default, "name", default))
    )
    # a required parameter (IPrec's recall) is given its smallest value, on both sides
    required = "".join(f"{p.name}={p.minimum:g}," for p in get_registry().get(name).params if p.required)
    bare = irspec.parse(f"{name}({required.rstrip(',')})" if required else name)
    text = f"{name}({required}{param}={written})"
    definition = get_registry().definitions[name]
    shown = definition.shown_at_default(definition.param(param))
    assert str(irspec.parse(text)) == (f"{name}@{written}" if shown else str(bare))
    assert irspec.parse(text) == bare


def test_a_default_cutoff_is_shown():
    """A table must show the depth it measured: a default @ value is part of the canonical text (relstring's
    10, trec_eval's default too), so relstring and relstring@10 are one metric with one text, relstring@10;
    trec_eval's printed name is unchanged (relstring, and relstring_20 for another depth)."""
    assert str(irspec.parse("relstring")) == "relstring@10"
    assert irspec.parse("relstring") == irspec.parse("relstring@10") == irspec.parse("relstring(k=10)")
    assert irspec.parse("relstring").trec_name == "relstring"
    assert irspec.parse("relstring@20").trec_name == "relstring_20"


def test_a_parameter_declared_shown_is_shown_at_its_default(irspec_plugin):
    from irspec.spec.registry import MetricDef, Param

    class Plugin:
        @irspec.hookimpl
        def irspec_register_metrics(self, register):
            register(
                MetricDef(
                    "Persist",
                    "a toy",
                    (
                        Param("p", "float", 0.8, "persistence", shown=True),
                        Param("q", "float", 0.5, "not shown"),
                    ),
                    compute="x:y",
                )
            )

    irspec_plugin(Plugin())
    assert str(irspec.parse("Persist")) == "Persist(p=0.8)"
    assert str(irspec.parse("Persist(q=0.5, p=0.8)")) == "Persist(p=0.8)"
    assert irspec.parse("Persist") == irspec.parse("Persist(p=0.8)")
    assert str(irspec.parse("Persist(p=0.9,q=0.25)")) == "Persist(p=0.9,q=0.25)"


# --- spellings that mean something else elsewhere ----------------------------------------------------


@pytest.mark.parametrize("text", ["hits@5", "hits", "HITS@10", "hits.5", "hits_5", "P@5, hits@10"])
def test_hits_is_refused_for_its_two_meanings(text):
    # ranx's hits@k is the number of relevant documents in the top k (ranx/metrics/hits.py); link
    # prediction's Hits@k, and a hit rate, is whether there is one (Success@k): reading either would change
    # the other's meaning without a word
    for trec in (False, True):
        with pytest.raises(SpecError) as info:
            irspec.parse_many(text, trec=trec)
        message = str(info.value)
        assert "ranx" in message and "Success@k" in message and "P@k" in message
        assert isinstance(info.value, IrspecError) and not isinstance(info.value, UnknownMetricError)


@pytest.mark.parametrize("text", ["rbp", "RBP", " rbp "])
def test_trec_evals_rbp_is_refused_on_its_command_line(text):
    # -m rbp is trec_eval's rbp (p = 0.9, m_rbp.c), which irspec does not compute (it reads uninitialised
    # memory): the plugin's RBP (p = 0.8) under that spelling would be another measure
    with pytest.raises(SpecError, match=r"trec_eval's rbp .*RBP\(p=0\.9\)"):
        irspec.parse_many(text, trec=True)


def _base_names(text: str) -> set[str]:
    """The name tokens of a spec list, with and without trec_eval's .v / _v suffix, lower-cased."""
    out = set()
    for node in parse_syntax(text):
        name = node.name.lower()
        out.add(name)
        out.add(name.partition(".")[0])
        out.add(re.sub(r"_[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)$", "", name))
    return out


def test_alias_fixture_covers_every_registered_alias():
    registry = get_registry()
    written = set().union(*(_base_names(text) for text, _ in ALIASES))
    missing = []
    for name, aliases in registry.aliases.items():
        for a in [name, *aliases]:
            a = a if isinstance(a, str) else a.name
            if a.lower() not in written:
                missing.append(a)
    assert not missing, f"spec_aliases.txt has no line for {missing}"


def test_alias_fixture_covers_the_alias_families():
    inputs = {text for text, _ in ALIASES}
    required = {
        # seeds
        "precision", "recall", "MAP", "MRR", "R-prec", "bpref(10+R)", "F1", "ndcg_burges",
        # ir_measures
        "nDCG", "AP", "RR", "P", "R", "SetP", "SetF", "SetR", "Bpref", "Rprec", "IPrec@0.5", "Success@10",
        "Judged@10", "NumRel", "NumQ", "NumRet", "NumRelRet", "AP(rel=2)@10", "nDCG(dcg='exp-log2')@10",
        # trec_eval
        "ndcg_cut.10", "ndcg_cut_10", "P.5", "P_5", "recip_rank", "map_cut.100", "iprec_at_recall_0.10",
        "success.10", "set_F", "num_rel_ret", "Rprec_mult_0.20", "utility.2,-1,0,0", "11pt_avg..25,.5,.75",
        "ndcg.1=3,2=9,4=4.5", "P.5,10",
        # case, order, defaults, folding
        "NDCG@10", "ndcg@10", "P(rel=2)@5", "P(k=5,rel=2)", "F(beta=1)", "Bpref(nonrel=R)", "bpref(R+2*5)",
    }  # fmt: skip
    assert required <= inputs, sorted(required - inputs)


# --- equality -------------------------------------------------------------------------------------

SAME = [
    ("P(rel=2)@5", "P(k=5,rel=2)", "P(rel=2,k=5)", "precision(rel=2)@5", "P_5(rel=2)", "P.5(rel=2)"),
    ("F(beta=2,rel=2)@10", "F(rel=2,beta=2)@10", "F(k=10,rel=2,beta=2)", "SetF(rel=2,k=10,beta=4.0)"),
    ("utility(a=2,b=-2)", "utility(b=-2,a=2)", "utility(b=-2,a=2,c=0,d=0)", "utility(d=0,c=0,b=-2,a=2)"),
    (
        "nDCG(dcg=jk,gains={0:0,1:1})@10",
        "nDCG(gains={1:1,0:0},dcg=jk)@10",
        "ndcg_cut_10(gains={1:1,0:0},dcg=jk)",
    ),
    (
        "Bpref(nonrel=10+R,rel=2)",
        "bpref(10+R,rel=2)",
        "Bpref(rel=2,nonrel=10+R)",
        "BPREF(rel=2,nonrel=2*5+R)",
    ),
    ("F", "F(beta=1)", "F(beta=1.0)", "F1", "set_F", "SetF", "set_F.1"),
]


@pytest.mark.parametrize("texts", SAME, ids=[t[0] for t in SAME])
def test_equality_does_not_depend_on_argument_order_or_spelling(texts):
    metrics = [irspec.parse(t) for t in texts]
    first = metrics[0]
    for t, m in zip(texts, metrics, strict=True):
        assert m == first, t
        assert hash(m) == hash(first), t
        assert str(m) == str(first), t
    assert len(set(metrics)) == 1
    assert len(irspec.parse_many(list(texts))) == 1


def test_different_specs_are_different():
    texts = [
        "P",
        "P@5",
        "P@10",
        "P(rel=2)@5",
        "R@5",
        "AP@5",
        "nDCG@5",
        "nDCG(dcg=jk)@5",
        "Bpref",
        "Bpref(nonrel=10+R)",
    ]
    metrics = [irspec.parse(t) for t in texts]
    assert len(set(metrics)) == len(texts)


def test_metric_is_immutable_and_hashable():
    m = irspec.parse("P(rel=2)@5")
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.name = "R"  # type: ignore[misc]
    assert {m: 1}[irspec.parse("P(k=5, rel=2)")] == 1
    assert m.get("k") == 5
    assert m.get("rel") == 2
    assert irspec.parse("P@5").get("rel") is None  # the default: the evaluation's relevance level


def test_equality_is_not_string_equality():
    # ir_measures compares repr strings; irspec compares values: F(beta=2) and F(beta=2.0) are equal.
    assert irspec.parse("F(beta=2)") == irspec.parse("F(beta=2.0)")
    assert irspec.parse("P@5") != "P@5"


EQUAL_BUT_WRITTEN_WITH_FLOATS = [
    ("bpref(1.0*R)", "bpref(1*R)"),
    ("P@(R+2.0)", "P@(R+2)"),
    ("nDCG@(R*(4/2))", "nDCG@(R*2)"),
]


@pytest.mark.parametrize(("a", "b"), EQUAL_BUT_WRITTEN_WITH_FLOATS)
def test_equal_metrics_have_one_canonical_text(a, b):
    ma, mb = irspec.parse(a), irspec.parse(b)
    assert ma == mb and hash(ma) == hash(mb)
    assert str(ma) == str(mb)


@pytest.mark.parametrize("text", ["P@(R+1/0)", "P@(R*(0/0))", "bpref(R*1e999)"])
def test_constant_folding_to_a_non_finite_number_is_an_error_or_round_trips(text):
    try:
        m = irspec.parse(text)
    except IrspecError:
        return
    assert irspec.parse(str(m)) == m


# --- lists of specs ------------------------------------------------------------------------------


def test_parse_many_expands_and_drops_duplicates_keeping_the_first():
    assert [str(m) for m in irspec.parse_many("P@5, map P.5,10")] == ["P@5", "AP", "P@10"]
    assert irspec.parse_many("P@5, map P.5,10") == [
        irspec.parse("P@5"),
        irspec.parse("AP"),
        irspec.parse("P@10"),
    ]


@pytest.mark.parametrize(
    "text",
    ["P@5, AP", "P@5 AP", "P@5,AP", "P@5 , AP ,", "  P@5\n\tAP  ", "P@5,\nAP,", "p_5 map", "P.5 MAP P@5 ap"],
)
def test_parse_many_accepts_commas_and_whitespace(text):
    assert [str(m) for m in irspec.parse_many(text)] == ["P@5", "AP"]


def test_parse_many_accepts_a_list_of_strings():
    assert [str(m) for m in irspec.parse_many(["P@5", "AP"])] == ["P@5", "AP"]
    assert [str(m) for m in irspec.parse_many(("P@5 AP", "nDCG@10, P.5,10"))] == [
        "P@5",
        "AP",
        "nDCG@10",
        "P@10",
    ]
    assert [str(m) for m in irspec.parse_many(t for t in ["P@5", "P_5", "precision@5"])] == ["P@5"]


def test_parse_many_always_returns_a_list():
    assert isinstance(irspec.parse_many("P@5"), list)
    assert isinstance(irspec.parse_many(["P@5"]), list)
    assert len(irspec.parse_many("P@5")) == 1


@pytest.mark.parametrize(
    "text", ["P.5,10", "official", "P@5 AP", "P@5, AP", "map_cut.5,10", "success.1,5,10"]
)
def test_parse_rejects_text_naming_several_metrics(text):
    with pytest.raises(SpecError, match="parse_many") as info:
        irspec.parse(text)
    assert isinstance(info.value, IrspecError)


def test_parse_of_duplicates_is_one_metric():
    # "P@5 P_5" names one metric twice; parse() sees one after dropping the duplicate.
    assert str(irspec.parse("P@5 P_5")) == "P@5"


UNDERSCORE_LISTS = {  # pytrec_eval's spelling -> trec_eval's
    "P_5,10": "P.5,10",
    "ndcg_cut_20,4": "ndcg_cut.20,4",
    "iprec_at_recall_0.10,0.20": "iprec_at_recall.0.10,0.20",
    "recall_5,10": "recall.5,10",
    "map_cut_5,10": "map_cut.5,10",
    "success_1,5": "success.1,5",
    "relative_P_5,10": "relative_P.5,10",
}


@pytest.mark.parametrize("text", UNDERSCORE_LISTS)
def test_pytrec_evals_underscore_lists_are_its_measures(text):
    """pytrec_eval (and ir_measures' pytrec_eval provider) reads ``P_5,10`` as trec_eval's ``P.5,10``:
    the same measures, under the names pytrec_eval prints for them."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    printed = pytrec_eval.RelevanceEvaluator({"q1": {"d1": 1}}, {text}).evaluate({"q1": {"d1": 1.0}})["q1"]
    metrics = irspec.parse_many(text)
    assert sorted(m.trec_name for m in metrics) == sorted(printed)
    assert metrics == irspec.parse_many(UNDERSCORE_LISTS[text])
    assert irspec.parse_many(text, trec=True) == metrics


# --- trec_eval's groups and defaults ----------------------------------------------------------------

OFFICIAL = [
    "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall_0.00", "iprec_at_recall_0.10", "iprec_at_recall_0.20", "iprec_at_recall_0.30",
    "iprec_at_recall_0.40", "iprec_at_recall_0.50", "iprec_at_recall_0.60", "iprec_at_recall_0.70",
    "iprec_at_recall_0.80", "iprec_at_recall_0.90", "iprec_at_recall_1.00",
    "P_5", "P_10", "P_15", "P_20", "P_30", "P_100", "P_200", "P_500", "P_1000",
]  # fmt: skip


def _trec_eval_names(path: Path) -> list[str]:
    """Measure names of trec_eval's summary lines ("all"), in order, without runid."""
    names = []
    for line in path.read_text("utf-8").splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] == "all" and fields[0] != "runid" and fields[0] not in names:
            names.append(fields[0])
    return names


def test_official_is_trec_evals_29_default_measures_in_order():
    metrics = irspec.parse_many("official")
    assert len(metrics) == 29
    assert [m.trec_name for m in metrics] == OFFICIAL
    assert [str(m) for m in metrics[:9]] == [
        "NumQ",
        "NumRet",
        "NumRel",
        "NumRelRet",
        "AP",
        "GMAP",
        "Rprec",
        "Bpref",
        "RR",
    ]
    assert [str(m) for m in metrics[9:20]] == [
        f"IPrec@{x}" for x in ("0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1")
    ]
    assert [str(m) for m in metrics[20:]] == [f"P@{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]


def test_official_matches_trec_eval_output():
    out = TREC_EVAL_TEST / "out.test"
    if not out.exists():
        pytest.skip("../shared/trec_eval_test is absent")
    assert [m.trec_name for m in irspec.parse_many("official")] == _trec_eval_names(out)


def test_all_trec_matches_trec_eval_output():
    out = TREC_EVAL_TEST / "out.test.a"
    if not out.exists():
        pytest.skip("../shared/trec_eval_test is absent")
    # trec_eval's own rbp reads uninitialised memory (METRICS.md): irspec does not claim its name.
    expected = [n for n in _trec_eval_names(out) if n != "rbp"]
    # relstring is in all_trec but prints per query only, so this summary output lacks it.
    names = [m.trec_name for m in irspec.parse_many("all_trec")]
    assert "relstring" in names
    assert [n for n in names if n != "relstring"] == expected


def test_set_is_trec_evals_set_nickname():
    """trec_eval 9 and 10 define the nickname ``set`` (measures.c's set_names); pytrec_eval exposes the
    list, and prints the measures in trec_eval's order (runid is irspec's output line, not a measure)."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    members = pytrec_eval.supported_nicknames["set"] - {"runid"}
    printed = pytrec_eval.RelevanceEvaluator({"q1": {"d1": 1, "d2": 0}}, {"set"}).evaluate(
        {"q1": {"d1": 1.0, "d3": 0.5}}
    )
    in_order = [name for name in printed["q1"] if name != "runid"]
    assert sorted(in_order) == sorted(members)
    for trec in (False, True):
        assert [m.trec_name for m in irspec.parse_many("set", trec=trec)] == in_order


def test_groups_expand_in_place_and_drop_duplicates():
    metrics = irspec.parse_many("P@7 official P@5 nDCG@10")
    assert [str(m) for m in metrics][:2] == ["P@7", "NumQ"]
    assert str(metrics[-1]) == "nDCG@10"
    assert len(metrics) == 31
    assert [str(m) for m in irspec.parse_many("official official")] == [
        str(m) for m in irspec.parse_many("official")
    ]
    assert irspec.parse_many("OFFICIAL") == irspec.parse_many("official")


TREC_P = ["P_5", "P_10", "P_15", "P_20", "P_30", "P_100", "P_200", "P_500", "P_1000"]


def test_trec_mode_reads_bare_names_with_trec_evals_defaults():
    assert [m.trec_name for m in irspec.parse_many("P", trec=True)] == TREC_P
    # The language itself reads P as the precision of the whole list (trec_eval's set_P).
    p = irspec.parse("P")
    assert p.params == ()
    assert p.trec_name == "set_P"
    assert irspec.parse_many("P") == [p]


@pytest.mark.parametrize(
    ("text", "trec_names"),
    [
        ("recall", [f"recall_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]),
        ("ndcg_cut", [f"ndcg_cut_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]),
        ("map_cut", [f"map_cut_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]),
        ("relative_P", [f"relative_P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]),
        ("success", ["success_1", "success_5", "success_10"]),
        ("unj", ["unj_5", "unj_10", "unj_20"]),
        ("Rprec_mult", [f"Rprec_mult_{m / 10:.2f}" for m in range(2, 21, 2)]),
        ("iprec_at_recall", [f"iprec_at_recall_{r / 10:.2f}" for r in range(11)]),
        # names without trec_eval defaults read as usual
        ("map", ["map"]),
        ("ndcg", ["ndcg"]),
        ("set_P", ["set_P"]),
        ("P.5", ["P_5"]),
        ("P@5", ["P_5"]),
        ("P map", [*TREC_P, "map"]),
    ],
)
def test_trec_mode_defaults(text, trec_names):
    assert [m.trec_name for m in irspec.parse_many(text, trec=True)] == trec_names


def test_trec_mode_does_not_expand_a_name_with_arguments():
    assert [str(m) for m in irspec.parse_many("P(rel=2)", trec=True)] == ["P(rel=2)"]
    assert [str(m) for m in irspec.parse_many("P@5", trec=True)] == ["P@5"]


@pytest.mark.parametrize("text", ["p", "NDCG_CUT", "Recall"])
def test_trec_mode_is_case_insensitive(text):
    canonical_spelling = {"p": "P", "NDCG_CUT": "ndcg_cut", "Recall": "recall"}[text]
    assert irspec.parse_many(text, trec=True) == irspec.parse_many(canonical_spelling, trec=True)


# trec_eval -m arguments and the measure names trec_eval printed for them (out.test.meas_params).
MEAS_PARAMS = [
    ("iprec_at_recall..10,.20,.25,.75,.50", ["iprec_at_recall_0.10", "iprec_at_recall_0.20", "iprec_at_recall_0.25", "iprec_at_recall_0.50", "iprec_at_recall_0.75"]),
    ("P.5,7,3", ["P_3", "P_5", "P_7"]),
    ("recall.20,2000", ["recall_20", "recall_2000"]),
    ("Rprec_mult.5.0,0.2,0.35", ["Rprec_mult_0.20", "Rprec_mult_0.35", "Rprec_mult_5.00"]),
    ("utility.2,-1,0,0", ["utility_2,-1,0,0"]),
    ("11pt_avg..25,.5,.75", ["11pt_avg_.25,.5,.75"]),
    ("ndcg.1=3,2=9,4=4.5", ["ndcg_1=3,2=9,4=4.5"]),
    ("ndcg_cut.10,20,23.4", ["ndcg_cut_10", "ndcg_cut_20", "ndcg_cut_23"]),
    ("success.2,5,20", ["success_2", "success_20", "success_5"]),
]  # fmt: skip


@pytest.mark.parametrize(("arg", "names"), MEAS_PARAMS, ids=[a for a, _ in MEAS_PARAMS])
def test_trec_eval_measure_parameters_give_trec_evals_names(arg, names):
    assert sorted(m.trec_name for m in irspec.parse_many(arg, trec=True)) == names


def test_measure_parameter_names_match_trec_eval_output():
    out = TREC_EVAL_TEST / "out.test.meas_params"
    if not out.exists():
        pytest.skip("../shared/trec_eval_test is absent")
    printed = {line.split()[0] for line in out.read_text("utf-8").splitlines() if line.strip()}
    ours = {m.trec_name for arg, _ in MEAS_PARAMS for m in irspec.parse_many(arg, trec=True)}
    assert ours == printed


# --- trec_eval's output names ----------------------------------------------------------------------

TREC_NAMES = [
    ("P@5", "P_5"),
    ("P@1000", "P_1000"),
    ("AP", "map"),
    ("AP@100", "map_cut_100"),
    ("nDCG", "ndcg"),
    ("nDCG@10", "ndcg_cut_10"),
    ("nDCG(gains={1:3,2:9,4:4.5})", "ndcg_1=3,2=9,4=4.5"),
    ("IPrec@0.1", "iprec_at_recall_0.10"),
    ("IPrec@0", "iprec_at_recall_0.00"),
    ("IPrec@1", "iprec_at_recall_1.00"),
    ("Rprec", "Rprec"),
    ("Rprec(mult=0.2)", "Rprec_mult_0.20"),
    ("F", "set_F"),
    ("P", "set_P"),
    ("R", "set_recall"),
    ("R@10", "recall_10"),
    ("relP", "set_relative_P"),
    ("relP@10", "relative_P_10"),
    ("SetAP", "set_map"),
    ("RR", "recip_rank"),
    ("GMAP", "gm_map"),
    ("Bpref", "bpref"),
    ("gm_bpref", "gm_bpref"),
    ("infAP", "infAP"),
    ("Success@10", "success_10"),
    ("NumQ", "num_q"),
    ("NumRet", "num_ret"),
    ("NumRel", "num_rel"),
    ("NumRelRet", "num_rel_ret"),
    ("NumNonrelJudgedRet", "num_nonrel_judged_ret"),
    ("11pt", "11pt_avg"),
    ("11pt(points=[0.25,0.5,0.75])", "11pt_avg_.25,.5,.75"),
    ("utility", "utility"),
    ("utility(a=2)", "utility_2,-1,0,0"),
    ("unj@5", "unj_5"),
    ("binG", "binG"),
    ("G", "G"),
    ("ndcg_rel", "ndcg_rel"),
    ("Rndcg", "Rndcg"),
    ("rbp_resid", "rbp_resid"),
    # no trec_eval measure for these
    ("nDCG(dcg=exp-log2)", None),
    ("nDCG(dcg=exp-log2)@10", None),
    ("P(rel=2)@5", None),
    ("AP(rel=2)", None),
    ("P@R", None),
    ("nDCG@(2*R)", None),
    ("Bpref(nonrel=10+R)", None),
    ("F(beta=2)", None),
    ("F@10", None),
    ("Rprec(recall=0.3)", None),
    ("Judged@10", None),
    ("DCG@10", None),
    ("SL", None),
    ("Fallout@10", None),
]


@pytest.mark.parametrize(("text", "name"), TREC_NAMES, ids=[t for t, _ in TREC_NAMES])
def test_trec_name(text, name):
    assert irspec.parse(text).trec_name == name


@pytest.mark.parametrize(("text", "name"), [(t, n) for t, n in TREC_NAMES if n is not None and "," not in n])
def test_trec_name_parses_back_to_the_same_metric(text, name):
    # trec_eval's printed names are aliases too (P_5, map_cut_100, iprec_at_recall_0.10, ...).
    assert irspec.parse(name) == irspec.parse(text)


# --- bad input: (text, column, error class, message fragments) ---------------------------------------

BAD = [
    # syntax errors: the column of the offending character, or one past the end for truncated input
    ("ndcg@", 6, SpecSyntaxError, ["unexpected end of text", "expected", "a number"]),
    ("P@@5", 3, SpecSyntaxError, ["unexpected '@'", "expected"]),
    ("nDCG(", 6, SpecSyntaxError, ["unexpected end of text", "')'"]),
    ("P(rel=2", 8, SpecSyntaxError, ["unexpected end of text", "')'"]),
    ("ndcg@10)", 8, SpecSyntaxError, ["unexpected ')'"]),
    ("P @ 5 )", 7, SpecSyntaxError, ["unexpected ')'"]),
    ("{", 1, SpecSyntaxError, ["unexpected '{'", "a metric name"]),
    ("", 1, SpecSyntaxError, ["empty"]),
    ("   ", 4, SpecSyntaxError, ["empty"]),
    ("P(rel=)", 7, SpecSyntaxError, ["unexpected ')'"]),
    ("P@5@6", 4, SpecSyntaxError, ["unexpected '@'"]),
    ("P(rel=2)(rel=3)", 9, SpecSyntaxError, ["unexpected '('"]),
    ("P@-1", 3, SpecSyntaxError, ["unexpected '-'"]),
    ("P.5,,10", 5, SpecSyntaxError, ["unexpected ','"]),
    ('P."', 3, SpecSyntaxError, ["unexpected character"]),
    ("P@5, ;", 6, SpecSyntaxError, ["unexpected character ';'"]),
    ("nDCG(gains={1:'a'})", 15, SpecSyntaxError, ["unexpected"]),
    # expected tokens named as typed: ']' and '[', never lark's RSQB and LSQB
    ("11pt(points=[0.5,)", 18, SpecSyntaxError, ["unexpected ')'", "']'", "a number"]),
    ("11pt(points=[0.5 0.6])", 18, SpecSyntaxError, ["unexpected '0.6'", "']'", "','"]),
    ("nDCG(gains={1:2]", 16, SpecSyntaxError, ["unexpected ']'", "'}'", "','"]),
    ("P(rel=", 7, SpecSyntaxError, ["unexpected end of text", "'['", "'{'"]),
    # an argument's cutoff (issue 37's "ips(ctr@10)") is the spec's one cutoff
    ("P(rel@5)@6", 10, SpecSyntaxError, ["a second cutoff", "the argument of P(...)"]),
    ("P(rel@5) @ (6)", 13, SpecSyntaxError, ["a second cutoff"]),
    ("P(rel@5, b@6)", 10, SpecSyntaxError, ["a second argument with a cutoff"]),
    ("P(rel@)", 7, SpecSyntaxError, ["unexpected ')'", "a number"]),
    ("P(2@5)", 4, SpecSyntaxError, ["unexpected '@'"]),
    ("P(rel=2@5)", 8, SpecSyntaxError, ["unexpected '@'"]),
    # unknown names, with suggestions
    ("ndgc@10", 1, UnknownMetricError, ["unknown metric 'ndgc'", "did you mean", "'nDCG'"]),
    ("P@5, ndgc", 6, UnknownMetricError, ["unknown metric 'ndgc'", "'nDCG'"]),
    ("bperf", 1, UnknownMetricError, ["unknown metric 'bperf'", "'Bpref'"]),
    ("precison@5", 1, UnknownMetricError, ["did you mean", "'precision'"]),
    ("ndcg_cutt.10", 1, UnknownMetricError, ["unknown metric 'ndcg_cutt.10'", "'ndcg_cut'"]),
    ("xyzzy", 1, UnknownMetricError, ["unknown metric 'xyzzy'"]),
    # bad parameters: the metric, the parameter and the allowed values
    ("P(rel=0)@5", 1, ParameterError, ["P: parameter 'rel'", "got 0", "an integer >= 1"]),
    ("P(rel=2.5)", 1, ParameterError, ["P: parameter 'rel'", "an integer >= 1"]),
    ("P@0", 1, ParameterError, ["P: parameter 'k'", "got 0", "an integer >= 1"]),
    ("P@2.5", 1, ParameterError, ["P: parameter 'k'", "got 2.5", "an integer >= 1"]),
    ("P@(1/0)", 1, ParameterError, ["P: parameter 'k'", "an integer >= 1"]),
    ("F(beta=0)", 1, ParameterError, ["F: parameter 'beta'", "a number > 0"]),
    ("F(beta=-1)", 1, ParameterError, ["F: parameter 'beta'", "a number > 0"]),
    ("Rprec(recall=1.5)", 1, ParameterError, ["Rprec: parameter 'recall'", "got 1.5", ">= 0 and <= 1"]),
    ("IPrec@1.5", 1, ParameterError, ["IPrec: parameter 'recall'", ">= 0 and <= 1"]),
    ("nDCG(dcg=exp)", 1, ParameterError, ["nDCG: parameter 'dcg'", "got 'exp'", "log2, exp-log2, jk"]),
    ("nDCG(dcg=1)", 1, ParameterError, ["nDCG: parameter 'dcg'", "log2, exp-log2, jk"]),
    ("SL(unfound=never)", 1, ParameterError, ["SL: parameter 'unfound'", "n_plus_1, skip"]),
    ("P(foo=1)", 1, ParameterError, ["P: parameter 'foo'", "no such parameter", "k, rel"]),
    ("P(1)", 1, ParameterError, ["P:", "positional", "k, rel"]),
    ("bpref(1, 2)", 1, ParameterError, ["Bpref:", "positional"]),
    ("IPrec", 1, ParameterError, ["IPrec: parameter 'recall'", "required", ">= 0 and <= 1"]),
    ("Success", 1, ParameterError, ["Success: parameter 'k'", "required"]),
    ("P@X", 1, ParameterError, ["P: parameter 'k'", "unknown symbol 'X'"]),
    ("Bpref(nonrel=10+X)", 1, ParameterError, ["Bpref: parameter 'nonrel'", "unknown symbol 'X'"]),
    ("Rprec(recall=0.3, mult=2)", 1, ParameterError, ["Rprec", "recall", "mult"]),
    # judged=true ignored the collection size it was given
    (
        "Fallout(judged=true, collection_size=3)@4",
        1,
        ParameterError,
        ["Fallout", "collection_size", "judged=true"],
    ),
    ("nDCG(gains={0.5:1})", 1, ParameterError, ["nDCG: parameter 'gains'", "0.5", "not an integer"]),
    ("nDCG(gains={})", 1, ParameterError, ["nDCG: parameter 'gains'", "label:gain"]),
    ("nDCG(gains={1:1,1:2})", 1, ParameterError, ["nDCG: parameter 'gains'", "twice"]),
    ("nDCG(gains=[1])", 1, ParameterError, ["nDCG: parameter 'gains'"]),
    ("11pt(points=[R])", 1, ParameterError, ["11pt: parameter 'points'", "list of numbers"]),
    ("AP(rel=2, rel=3)", 1, ParameterError, ["AP: parameter 'rel'", "twice"]),
    ("P(k=5)@10", 1, ParameterError, ["P: parameter 'k'", "twice"]),
    ("P.5@10", 1, ParameterError, ["P: parameter 'k'", "twice", "the name 'P.5'", "@"]),
    # what was typed is named, not only the parameter it sets (cutoff= is ir_measures' name for @)
    ("P(cutoff=5)@10", 1, ParameterError, ["P: parameter 'k'", "given twice", "cutoff=", "and @"]),
    ("P(k=5)@10", 1, ParameterError, ["given twice", "k= and @"]),
    ("SetAP@5", 1, ParameterError, ["SetAP", "no @"]),
    ("official(rel=2)", 1, ParameterError, ["official", "no arguments"]),
    ("P.", 1, ParameterError, ["P:", "empty value"]),
    ("P@5 AP P(rel=0)", 8, ParameterError, ["P: parameter 'rel'"]),
]


def _check_error(e: BaseException, text: str, column: int, fragments: list[str]) -> None:
    assert isinstance(e, IrspecError)
    message = str(e)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    assert f"at column {column}" in message, message


@pytest.mark.parametrize(("text", "column", "error", "fragments"), BAD, ids=[repr(b[0]) for b in BAD])
def test_bad_input(text, column, error, fragments):
    with pytest.raises(error) as info:
        irspec.parse(text)
    _check_error(info.value, text, column, fragments)
    with pytest.raises(error):
        irspec.parse_many(text)


@pytest.mark.parametrize(
    ("text", "column"),
    [(t, c) for t, c, e, _ in BAD if e is SpecSyntaxError],
    ids=[repr(b[0]) for b in BAD if b[2] is SpecSyntaxError],
)
def test_syntax_error_has_position_column_and_caret(text, column):
    with pytest.raises(SpecSyntaxError) as info:
        irspec.parse(text)
    e = info.value
    assert e.column == column
    assert e.position == column - 1
    assert e.text == text
    lines = str(e).split("\n")
    assert lines[0].endswith(f"at column {column}")
    assert lines[-2] == "  " + text
    assert lines[-1] == "  " + " " * (column - 1) + "^"


def test_no_lark_terminal_name_reaches_a_message():
    # Every terminal of the grammar, as an error message words it, is a quoted character or a word.
    from irspec.spec import syntax as spec

    for terminal in spec._parser().terminals:
        if terminal.name != "WS":
            word = spec._token_word(terminal.name)
            assert word.startswith("'") or word.startswith("a "), (terminal.name, word)


LONG = "P@5, " * 1000


@pytest.mark.parametrize(
    ("text", "column", "shown"),
    [
        # an error near the end of 5,000 characters: one excerpt, cut at the front, caret under the ']'
        (LONG + "P@(3]", len(LONG) + 5, "P@5, P@5, P@(3]"),
        # near the start: cut at the end
        ("P@(3]" + ", P@5" * 1000, 5, "P@(3], P@5, P@5"),
        # in the middle: cut at both ends
        (LONG + "P@(3]" + ", P@5" * 1000, len(LONG) + 5, "P@5, P@(3], P@5"),
        # a long string token is not echoed whole in "unexpected ..."
        ("P@5 '" + "a" * 3000 + "'", 5, "P@5 'aaaa"),
    ],
    ids=["error-near-the-end", "error-near-the-start", "error-in-the-middle", "long-token"],
)
def test_long_spec_is_echoed_once_shortened_with_the_caret_under_the_error(text, column, shown):
    with pytest.raises(SpecSyntaxError) as info:
        irspec.parse_many(text)
    e = info.value
    assert e.column == column and e.text == text
    lines = str(e).split("\n")
    assert len(lines) == 3 and all(len(line) <= 130 for line in lines), [len(line) for line in lines]
    assert lines[0].endswith(f"at column {column}")
    assert shown in lines[1]
    assert lines[1].startswith("  ...") == (column > 60) and lines[1].endswith("...") == (
        len(text) - column > 30
    )
    caret = lines[2].index("^")
    assert lines[2] == " " * caret + "^"
    assert lines[1][caret] == text[column - 1]  # the caret stands under the offending character


def test_line_breaks_in_a_spec_do_not_break_the_caret_line():
    with pytest.raises(SpecSyntaxError) as info:
        irspec.parse_many("P@5,\nnDCG(\n]")
    lines = str(info.value).split("\n")
    assert lines[1:] == ["  P@5, nDCG( ]", "  " + " " * 11 + "^"]


def test_truncated_input_points_past_the_end():
    for text in ["ndcg@", "nDCG(", "P(rel=2", "P(rel=2,", "nDCG(gains={1:", "11pt(points=[0.5"]:
        with pytest.raises(SpecSyntaxError) as info:
            irspec.parse(text)
        assert info.value.column == len(text) + 1, text


def test_unknown_metric_error_carries_the_name_and_suggestions():
    with pytest.raises(UnknownMetricError) as info:
        irspec.parse("ndgc@10")
    assert info.value.name == "ndgc"
    assert info.value.suggestions[0] == "nDCG"


@pytest.mark.parametrize("text", ["F(beta=R)", "P(rel=R)", "Rprec(mult=2*R)"])
def test_r_where_not_allowed_says_so(text):
    with pytest.raises(ParameterError) as info:
        irspec.parse(text)
    assert "R is not allowed" in str(info.value)


def test_parameter_error_carries_metric_and_parameter():
    with pytest.raises(ParameterError) as info:
        irspec.parse("P(rel=0)@5")
    assert (info.value.metric, info.value.parameter) == ("P", "rel")


def test_every_error_class_is_an_irspec_error():
    for cls in (SpecError, SpecSyntaxError, UnknownMetricError, ParameterError, irspec.RegistryError):
        assert issubclass(cls, IrspecError)
    assert issubclass(SpecSyntaxError, SpecError)
    assert issubclass(UnknownMetricError, SpecError)
    assert issubclass(ParameterError, SpecError)


# Bad input that once escaped as a non-irspec exception (or with a misleading message).
BAD_EDGE_CASES = [
    pytest.param(
        "F(beta=[1])", ["F: parameter 'beta'"],
        id="list-for-number",
    ),
    pytest.param(
        "P(rel=[1])", ["P: parameter 'rel'"],
        id="list-for-int",
    ),
    pytest.param(
        "nDCG(dcg='\\N')", ["invalid escape", "column 10"],
        id="bad-string-escape",
    ),
    pytest.param(
        "nDCG(dcg='\\x')", ["invalid escape", "column 10"],
        id="bad-string-escape-x",
    ),
    pytest.param(
        "set_F.-1", ["F: parameter 'beta'"],
        id="set_F-negative",
    ),
    pytest.param(
        "set_F.=", ["F: parameter 'beta'"],
        id="set_F-not-a-number",
    ),
    pytest.param(
        "11pt_avg.1=2", ["11pt: parameter 'points'"],
        id="11pt_avg-not-a-number",
    ),
    pytest.param(
        "F(beta=1" + "0" * 400 + ")", ["number too long"],
        id="huge-int-float-param",
    ),
    pytest.param(
        "P@1" + "0" * 400, ["number too long"],
        id="huge-int-cutoff",
    ),
    pytest.param(
        "P@(R+1" + "0" * 400 + "/3)", ["number too long"],
        id="huge-int-division",
    ),
    pytest.param(
        "P@1" + "0" * 5000, ["number too long"],
        id="huge-int-literal",
    ),
    pytest.param(
        "P@10R", ["10R"],
        id="number-glued-to-name",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("text", "fragments"), BAD_EDGE_CASES)
def test_bad_input_raises_an_irspec_error_naming_the_problem(text, fragments):
    with pytest.raises(IrspecError) as info:
        irspec.parse_many(text)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"


# --- METRICS.md ------------------------------------------------------------------------------------

# Canonical names of the metric table in ../shared/METRICS.md.
METRICS_MD = [
    "P", "R", "F", "AP", "RR", "Rprec", "Bpref", "nDCG", "DCG", "CG", "IDCG", "IPrec", "11pt", "Success",
    "relP", "infAP", "GMAP", "gm_bpref", "Fallout", "Judged", "SL", "NumQ", "NumRel", "NumRet", "NumRelRet",
    "NumNonrelJudgedRet", "utility", "binG", "unj", "G", "ndcg_rel", "Rndcg", "rbp_resid", "yaap",
]  # fmt: skip


def test_metrics_of_the_catalogue_are_registered():
    assert set(METRICS_MD) <= set(irspec.metrics())


def test_relstring_is_registered():
    assert str(irspec.parse("relstring.20")) == "relstring@20"


def test_rbp_is_left_to_the_usermodel_plugin():
    """trec_eval's rbp reads uninitialised memory; the published RBP ships in plugins/irspec-usermodel."""
    with pytest.raises(UnknownMetricError):
        irspec.parse("rbp")


# --- one grammar -----------------------------------------------------------------------------------


def _compiled_rules(grammar: str) -> set[tuple[str, tuple[str, ...]]]:
    """The rules lark compiles from ``grammar``, as ``(rule, expansion)`` pairs: what the grammar
    accepts, without the marks that shape only the tree (``?rule``, ``-> alias``)."""
    import lark

    rules = lark.Lark(grammar, parser="lalr", start="spec_list").rules
    return {(r.origin.name, tuple(s.name for s in r.expansion)) for r in rules}


def test_the_docstring_grammar_is_the_lark_grammar():
    """The EBNF in irspec.spec.syntax's docstring is grammar/metric.lark's rules: compiled by lark (with
    the file's terminals), both give the same expansions of every rule, so neither drifts alone."""
    import importlib.resources

    source = importlib.resources.files("irspec.spec").joinpath("grammar/metric.lark").read_text("utf-8")
    block = re.search(r"::\n\n((?:    .*\n|\n)+)", spec_ast.__doc__)
    assert block, "the docstring has no indented grammar block"
    shown = "\n".join(line[4:] for line in block.group(1).splitlines())
    # the terminals (regular expressions) and directives are the file's alone; the docstring says
    # them in words
    terminals = "\n".join(line for line in source.splitlines() if re.match(r"(?:[A-Z_]+(?:\.\d+)?:|%)", line))
    file_rules = {rule for rule in _compiled_rules(source) if rule[0] != "start"}
    assert _compiled_rules(shown + "\n" + terminals) == file_rules


@pytest.mark.parametrize(
    ("written", "same"),
    [
        ("ips(ctr@10)", "ips(ctr)@10"),
        ("ips(ctr @ 10), snips(ctr@10)", "ips(ctr)@10 snips(ctr)@10"),
        ("f(x@R)", "f(x)@R"),
        ("f(x@(2*R), y=1)", "f(x, y=1)@(2*R)"),
        ("f(a, x@5,)", "f(a, x)@5"),
        ("f(y=[1,2], x@5) P@3", "f(x, y=[1,2])@5 P@3"),
    ],
)
def test_an_arguments_cutoff_is_the_specs_cutoff(written, same):
    """Issue 37 spells a counterfactual estimate "ips(ctr@10)": the cutoff written in the argument is the
    spec's, so the two spellings are one syntax tree (and so one metric and one canonical text)."""
    assert spec_ast.parse_syntax(written) == spec_ast.parse_syntax(same)
