"""The ``irspec parse``, ``irspec metrics`` and ``irspec plugins`` commands, through ``irspec.cli.main``."""

from __future__ import annotations

import json
import re

import pytest

import irspec
from irspec.cli import main


@pytest.fixture(autouse=True)
def _no_entry_point_plugins(monkeypatch):
    # Output must not depend on what else happens to be installed.
    monkeypatch.setenv("IRSPEC_DISABLE_PLUGIN_AUTOLOAD", "1")


def test_parse_prints_canonical_lines(capsys):
    spec = "ndcg@10, bpref(10+R), F(beta=2), Rprec(recall=0.3), P(rel=2)@5, P@R, ndcg_cut.10"
    assert main(["parse", spec]) == 0
    out, err = capsys.readouterr()
    # ndcg_cut.10 is nDCG@10 again: printed once
    assert out.splitlines() == [
        "nDCG@10",
        "Bpref(nonrel=10+R)",
        "F(beta=2)",
        "Rprec(recall=0.3)",
        "P(rel=2)@5",
        "P@R",
    ]
    assert err == ""


def test_parse_takes_several_arguments_and_expands_multi_value_forms(capsys):
    assert main(["parse", "P.5,10", "map", "P_5"]) == 0
    assert capsys.readouterr().out.splitlines() == ["P@5", "P@10", "AP"]


def test_parse_output_round_trips(capsys):
    assert main(["parse", "official"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 29
    assert [str(m) for m in irspec.parse_many(lines)] == lines


def test_eval_m_rbp_is_refused_as_trec_evals(capsys, tmp_path):
    (tmp_path / "q").write_text("q1 0 d1 1\n")
    (tmp_path / "r").write_text("q1 Q0 d1 1 1.0 run\n")
    assert main(["eval", str(tmp_path / "q"), str(tmp_path / "r"), "-m", "rbp", "--format", "trec"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("irspec: error: ") and "trec_eval's rbp" in err and len(err.splitlines()) == 1


def test_parse_json(capsys):
    assert main(["parse", "--json", "nDCG(dcg=exp-log2)@10", "bpref(10+R)", "P@5"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["canonical"] for d in data] == ["nDCG(dcg=exp-log2)@10", "Bpref(nonrel=10+R)", "P@5"]
    ndcg, bpref, p5 = data
    assert ndcg["name"] == "nDCG"
    assert ndcg["params"]["dcg"] == "exp-log2"
    assert ndcg["params"]["k"] == 10
    # every declared parameter, defaults included (judged_only: every run metric's, registry.JUDGED_ONLY)
    assert set(ndcg["params"]) == {"k", "dcg", "gains", "judged_only"}
    assert bpref["name"] == "Bpref"
    assert bpref["params"]["nonrel"] == "10+R"  # expressions as canonical text
    assert p5["trec_name"] == "P_5"
    assert p5["plugin"] == "irspec.builtin.sets"
    assert ndcg["trec_name"] is None


def test_parse_json_values_are_plain_json(capsys):
    assert main(["parse", "--json", "nDCG(gains={0:0,1:1,2:3})", "11pt(points=[0.25,0.5])"]) == 0
    ndcg, eleven = json.loads(capsys.readouterr().out)
    assert ndcg["params"]["gains"] == {"0": 0.0, "1": 1.0, "2": 3.0}
    assert eleven["params"]["points"] == [0.25, 0.5]


def test_metrics_lists_ndcg_with_aliases_and_plugin(capsys):
    assert main(["metrics"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    (i,) = [n for n, line in enumerate(lines) if line.startswith("nDCG(")]
    assert "[irspec.builtin.gain]" in lines[i]
    assert "@k" in lines[i] and "dcg=log2" in lines[i]
    block = "\n".join(lines[i : i + 4])
    assert "aliases:" in block and "ndcg_cut" in block and "ndcg_burges" in block
    for name in irspec.metrics():
        assert any(line.startswith(name + "(") for line in lines), name
    assert "official" in out and "all_trec" in out
    assert "trec:" not in out  # internal groups stay hidden


def test_metrics_json(capsys):
    assert main(["metrics", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    by_name = {r["name"]: r for r in rows}
    assert set(by_name) == set(irspec.metrics())
    ndcg = by_name["nDCG"]
    assert {"ndcg_cut", "ndcg_burges"} <= set(ndcg["aliases"])
    assert ndcg["plugin"] == "irspec.builtin.gain"
    assert ndcg["at"] == "k"
    dcg = {p["name"]: p for p in ndcg["params"]}["dcg"]
    assert dcg["default"] == "log2"
    assert "exp-log2" in dcg["allowed"]
    assert by_name["Bpref"]["positional"] == "nonrel"
    assert by_name["NumQ"]["aggregate"] == "sum"
    assert by_name["GMAP"]["aggregate"] == "gmean"


def test_plugins_prints_sorted_json(capsys):
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    report = json.loads(out)
    names = [p["name"] for p in report]
    assert names == sorted(names)
    assert out == json.dumps(report, indent=2, sort_keys=True) + "\n"  # keys sorted too
    builtin = {p["name"]: p for p in report if p["name"].startswith("irspec.builtin.")}
    assert set(builtin) == set(irspec.spec.plugins.DEFAULT_PLUGINS)
    assert all(p["builtin"] for p in builtin.values())
    assert "nDCG" in builtin["irspec.builtin.gain"]["metrics"]
    assert "P" in builtin["irspec.builtin.sets"]["metrics"]
    assert "official" in builtin["irspec.builtin.groups"]["groups"]
    registered = {m for p in report for m in p["metrics"]}
    assert registered == set(irspec.metrics())


@pytest.mark.parametrize(
    ("argv", "fragments"),
    [
        (["parse", "ndcg@"], ["unexpected end of text", "at column 6", "  ndcg@\n", "       ^"]),
        (["parse", "P @ 5 )"], ["unexpected ')'", "      ^"]),
        (["parse", "--json", "P@@5"], ["unexpected '@'", "    ^"]),
    ],
)
def test_syntax_error_exits_2_with_a_caret_and_no_traceback(capsys, argv, fragments):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("irspec: error: ")
    for fragment in fragments:
        assert fragment in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("ndgc@10", "did you mean 'nDCG'"),
        ("P(rel=0)@5", "P: parameter 'rel'"),
        ("P(foo=1)", "no such parameter"),
    ],
)
def test_binding_errors_exit_2_without_traceback(capsys, spec, fragment):
    assert main(["parse", spec]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("irspec: error: ")
    assert fragment in err
    assert "Traceback" not in err


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as info:
        main(["parse"])
    assert info.value.code == 2
    with pytest.raises(SystemExit) as info:
        main(["no-such-command"])
    assert info.value.code == 2


def test_metrics_fusion_lists_every_fusion_method_with_its_parameters(capsys):
    assert main(["metrics", "--fusion"]) == 0
    lines = capsys.readouterr().out.splitlines()
    fusions = irspec.get_registry().fusions
    heads = [line for line in lines if re.match(r"\w+\(", line)]
    assert [h.split("(")[0] for h in heads] == sorted(fusions, key=str.lower)
    (rrf,) = [n for n, line in enumerate(lines) if line.startswith("RRF(")]
    assert lines[rrf] == "RRF(k=60)  [irspec.builtin.fusion]"
    assert lines[rrf + 2] == "    aliases: reciprocal_rank_fusion"
    assert "Cormack" in lines[rrf + 3]
    # a method that learns says so; a required parameter has no default; norm is said once, at the end
    assert (
        "ProbFuse(segments)  [irspec.builtin.fusion_learning]  (learns: give it training qrels, --qrels)"
        in lines
    )
    assert "WSum(weights)  [irspec.builtin.fusion]" in lines
    assert not any("norm=" in h for h in heads)
    assert any(line.startswith("Every method also takes norm=min-max") for line in lines)
    assert max(len(line) for line in lines if line.startswith("    Σ")) <= 104  # docs are wrapped


def test_metrics_fusion_json(capsys):
    assert main(["metrics", "--fusion", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert set(rows) == set(irspec.get_registry().fusions)
    rrf = rows["RRF"]
    assert rrf["plugin"] == "irspec.builtin.fusion" and not rrf["learns"] and not rrf["weighted"]
    params = {p["name"]: p for p in rrf["params"]}
    assert params["k"]["default"] == 60 and params["norm"]["default"] == "min-max"
    assert "zmuv" in params["norm"]["allowed"]
    assert rrf["grid"]["k"] == list(range(10, 101, 10))  # ranx's optimize_fusion grid
    assert "w_bordafuse" in rows["BordaFuse"]["aliases"]
    assert (
        rows["ProbFuse"]["learns"]
        and {"name": "segments"}.items()
        <= {k: v for k, v in rows["ProbFuse"]["params"][1].items() if k == "name"}.items()
    )
    assert rows["WSum"]["weighted"] and rows["WSum"]["params"][1]["required"]


def test_metrics_fusion_lists_a_plugins_method(irspec_plugin, capsys):
    from irspec.plugin_api import FusionDef, hookimpl

    class Plugin:
        @hookimpl
        def irspec_register_fusion(self, register):
            register(
                FusionDef(
                    "Dowdall",
                    "the sum of the reciprocal ranks",
                    lambda t, f: t.hits * 1.0,
                    doc="Σ 1/r (2002)",
                )
            )

    irspec_plugin(Plugin(), name="dowdall")
    assert main(["metrics", "--fusion"]) == 0
    out = capsys.readouterr().out
    assert "Dowdall()  [dowdall]\n    the sum of the reciprocal ranks\n    Σ 1/r (2002)\n" in out


_ARGVS = [
    ["eval", "q.txt", "a.run", "b.run", "-m", "ndcg_cut.10", "-mP.5", "-q", "-c", "-l", "2", "-f", "json"],
    ["eval", "q.txt", "a.run", "--ci", "bootstrap", "--decimals", "3", "--memory", "1GiB"],
    ["fuse", "a.run", "b.run", "--method", "rrf(k=60)", "--depth", "100"],
    ["parse", "ndcg@10", "--json"],
    ["run", "plan.yaml", "--set", "compare.test=t"],
    ["power", "--from", "a.json", "--delta", "0.01"],
]


@pytest.mark.parametrize("argv", _ARGVS, ids=lambda a: a[0])
def test_a_parser_built_for_one_command_reads_its_arguments_as_the_whole_parser_does(argv):
    # main builds only the subcommand in hand (issue 23's start-up): the same namespace, the same handler
    from irspec.cli import _COMMANDS, build_parser

    try:
        whole = vars(build_parser().parse_args(argv))
    except SystemExit:  # an argv this test got wrong would pass vacuously
        pytest.fail(f"the whole parser refuses {argv}")
    alone = build_parser(argv[0])
    (choices,) = (a.choices for a in alone._subparsers._group_actions)
    assert list(choices) == [argv[0]] and argv[0] in _COMMANDS
    assert vars(alone.parse_args(argv)) == whole


def test_every_command_is_declared_by_the_whole_parser_in_order():
    from irspec.cli import _COMMANDS, build_parser

    (choices,) = (a.choices for a in build_parser()._subparsers._group_actions)
    assert (
        list(choices)
        == list(_COMMANDS)
        == ["parse", "metrics", "plugins", "eval", "diff", "run", "power", "fuse", "reproduce", "validate"]
    )
