"""Tests of irspec.plan: the plan schema, loading with positioned errors, overrides, running, outputs, CLI.

The comparisons themselves (pairing by query id, corrections, Tukey) are tested in test_compare.py."""

from __future__ import annotations

import filecmp
import io
import json
import runpy
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import irspec
from irspec.cli import main
from irspec.errors import EvaluationError, IrspecError, PlanError
from irspec.evaluation.context import Options
from irspec.experiment.compare import compare_results
from irspec.experiment.records import Compare, Comparison
from irspec.plan.execute import PlanReport, render_outputs, run_plan, write_outputs
from irspec.plan.load import load_plan, schema
from irspec.plan.model import SCHEMA_PATH, Output, Plan

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import make_result

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "specs"
DEMO = SPECS / "demo"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A directory holding a copy of the demo collection (``demo/qrels.txt``, ``demo/runs/*.run``)."""
    shutil.copytree(DEMO, tmp_path / "demo", ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    return tmp_path


def write_plan(directory: Path, text: str, name: str = "plan.yaml") -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def problems_of(path: Path, overrides: tuple[str, ...] = ()) -> list[str]:
    with pytest.raises(PlanError) as info:
        load_plan(path, overrides)
    return info.value.problems


def run_irspec(*args: str, timeout: float | None = None) -> subprocess.CompletedProcess[str]:
    """``irspec ARGS`` in a new interpreter running this checkout (to see its exit code and stderr whole)."""
    return subprocess.run(
        [sys.executable, "-m", "irspec", *args],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
    )


GOOD = """
qrels: demo/qrels.txt
runs:
  - {name: bm25, path: demo/runs/bm25.run}
  - demo/runs/dense.run
  - demo/runs/h*.run
metrics: [nDCG@10, AP]
"""


# --------------------------------------------------------------------------------------------------
# The schema


def test_schema_is_a_valid_draft_2020_12_schema():
    from jsonschema import Draft202012Validator

    doc = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(doc)
    assert schema() == doc


def _object_schemas(node, path="$"):
    if isinstance(node, dict):
        if node.get("type") == "object" or "properties" in node:
            yield path, node
        for key, value in node.items():
            yield from _object_schemas(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _object_schemas(value, f"{path}[{i}]")


def test_schema_closes_every_object_and_describes_every_property():
    objects = [(p, o) for p, o in _object_schemas(schema()) if not p.endswith((".if", ".then"))]
    # A map of free keys (Spark's properties, the named sets of qrels) is open by nature: its values' type
    # is what is checked.
    maps = [
        p for p, o in objects if isinstance(o.get("additionalProperties"), dict) and "properties" not in o
    ]
    assert sorted(maps) == sorted(
        ["$.properties.qrels.oneOf[1]", "$.properties.engine.properties.spark.properties.config"]
    )
    objects = [(p, o) for p, o in objects if p not in maps]
    # (a plugin's plan section, irspec-online's ab, is held to the same rules by the plugin's tests)
    # the plan, a run entry, a system, a fused run, options, engine, engine.spark, compare, an output,
    # standardize, power, a diff, reproduce; recsys, its run entry, its propensity and columns
    assert len(objects) == 17
    for path, obj in objects:
        assert obj.get("additionalProperties") is False, path
        for name, prop in obj["properties"].items():
            assert prop.get("description"), f"{path}.properties.{name} has no description"


@pytest.mark.parametrize(
    "doc, ok",
    [
        ({"qrels": "q", "runs": ["a.run", {"name": "b", "path": "b.run"}], "metrics": "AP"}, True),
        ({"qrels": "q", "runs": ["a"], "metrics": ["AP"], "compare": {}}, True),
        ({"qrels": "q", "runs": ["a"], "metrics": ["AP"], "compare": {"baseline": None}}, True),
        ({"qrels": "q", "runs": ["a"], "metrics": ["AP"], "options": {"depth": None}}, True),
        (
            {
                "qrels": "q",
                "runs": ["a"],
                "metrics": ["AP"],
                "output": [{"format": "trec", "content": "comparisons"}],
            },
            False,
        ),
        ({"qrels": "q", "runs": ["a"], "metrics": ["AP"], "compare": {"alpha": 1}}, False),
        ({"qrels": "q", "runs": [], "metrics": ["AP"]}, False),
        ({"qrels": "q", "runs": ["a"]}, False),
        ({"qrels": "q", "runs": [{"name": "x"}], "metrics": "AP"}, False),
    ],
)
def test_schema_accepts_and_rejects(doc, ok):
    from jsonschema import Draft202012Validator

    assert Draft202012Validator(schema()).is_valid(doc) is ok


# --------------------------------------------------------------------------------------------------
# The demo and the example plan


def test_demo_plan_validates_runs_and_writes(tmp_path):
    out = tmp_path / "deep" / "dir" / "results.json"
    reports = [out.parent / name for name in ("table.tex", "table.md", "report.html")]
    plan = load_plan(SPECS / "demo.yaml", [f"output[{i}].path={p}" for i, p in enumerate([out, *reports], 1)])
    assert plan.run_names == ("bm25", "dense", "hybrid", "random")
    assert [str(m) for m in plan.metrics] == [
        "nDCG@10",
        "AP",
        "P@10",
        "Bpref(nonrel=10+R)",
        "Rprec(recall=0.3)",
    ]
    assert plan.compare == Compare(baseline="bm25", test="t", correction="holm", alpha=0.05)
    assert plan.outputs[1] == Output("json", out, per_query=True)

    report = run_plan(plan)
    stdout = io.StringIO()
    assert write_outputs(report, stdout=stdout) == [out, *reports]
    assert r"\begin{tabular}" in reports[0].read_text() and "| hybrid |" in reports[1].read_text()

    table = stdout.getvalue()
    assert "bm25 (baseline)" in table
    assert "▲" in table and "▼" in table
    assert "paired t-test" in table and "Holm" in table and "alpha 0.05" in table and "50 queries" in table

    doc = json.loads(out.read_text(encoding="utf-8"))
    means = {r["name"]: r["aggregate"]["nDCG@10"] for r in doc["runs"]}
    assert means["hybrid"] > means["dense"] > means["bm25"] > means["random"]  # clearly different quality
    assert len(doc["runs"][0]["per_query"]) == 50
    assert doc["compare"]["test"] == "t" and doc["compare"]["correction"] == "holm"
    assert len(doc["comparisons"]) == 3 * 5
    for c in doc["comparisons"]:
        assert list(c) == list(Comparison.COLUMNS)  # the published columns, in order (tests/test_compare.py)
        assert c["b"] == "bm25" and c["family_size"] == 3 and c["n"] == 50
        for key in (
            "p_value",
            "p_adjusted",
            "ci_low",
            "ci_high",
            "effect_size",
            "hedges_g",
            "mean_difference",
        ):
            assert isinstance(c[key], float), key
        assert c["p_adjusted"] >= c["p_value"]
    assert not list(out.parent.glob(".*.tmp"))  # no temporary file left behind


def test_demo_data_is_small_and_regenerated_byte_for_byte(tmp_path):
    files = [DEMO / "qrels.txt", *sorted((DEMO / "runs").glob("*.run"))]
    assert [f.name for f in files[1:]] == ["bm25.run", "dense.run", "hybrid.run", "random.run"]
    assert sum(f.stat().st_size for f in files) < 300_000
    runpy.run_path(str(DEMO / "make_demo.py"))["make_demo"](tmp_path)  # run_path writes no bytecode
    for f in files:
        assert filecmp.cmp(f, tmp_path / f.relative_to(DEMO), shallow=False), f.name
    qrels = irspec.data.read_qrels(DEMO / "qrels.txt")
    assert len(qrels.query_ids) == 50
    assert set(qrels.frame.get_column("label").unique().to_list()) == {0, 1, 2, 3}


def test_example_randomization_plan_expands_its_glob_in_sorted_order():
    plan = load_plan(SPECS / "example-randomization.yaml")
    assert plan.run_names == ("bm25", "dense", "hybrid", "random")
    assert plan.runs[0].entry == "runs[0]" and plan.runs[0].path.name == "bm25.run"
    assert plan.compare is not None and plan.compare.test == "randomization" and plan.compare.baseline is None
    assert plan.compare.family == "all"
    assert [o.content for o in plan.outputs].count("comparisons") == 2


def test_paths_are_relative_to_the_plan_file_not_the_working_directory(workspace, tmp_path, monkeypatch):
    plan_path = write_plan(workspace, GOOD)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    plan = load_plan(plan_path)
    assert plan.qrels == workspace / "demo" / "qrels.txt"
    assert plan.run_names == ("bm25", "dense", "hybrid")  # names from stems; the glob sorted
    assert plan.outputs == (Output("table"),)  # default output
    assert plan.compare is None


# --------------------------------------------------------------------------------------------------
# Problems, with lines and paths, all at once


def test_every_problem_is_reported_at_once_with_file_line_and_path(workspace):
    path = write_plan(
        workspace,
        """
        qrels: demo/qrels.txt
        runs:
          - {name: bm25, path: demo/runs/bm25.run}
          - {name: dense, path: demo/runs/missing.run}
          - {name: bm25, path: demo/runs/hybrid.run}
        metricz: [AP]
        metrics:
          - nDCG@10
          - "bpref(10+"
          - ndcgg@5
        options: {depth: ten}
        compare:
          baseline: bm26
        """,
    )
    problems = problems_of(path)
    expected = [
        f"{path}:4: runs[1].path: run file not found",
        f"{path}:5: runs[2].name: duplicate run name 'bm25'",
        f"{path}:6: metricz: unknown key 'metricz'; did you mean 'metrics'?",
        f"{path}:9: metrics[1]: bad metric spec 'bpref(10+'",
        f"{path}:10: metrics[2]: bad metric spec 'ndcgg@5': unknown metric 'ndcgg'",
        f"{path}:11: options.depth: expected an integer or null, got 'ten'",
        f"{path}:13: compare.baseline: baseline 'bm26' is not a run of this plan; did you mean 'bm25'?",
    ]
    assert len(problems) == len(expected), problems
    for fragment, problem in zip(expected, problems, strict=True):
        assert problem.startswith(fragment), (fragment, problem)
    assert "runs[0] at line 3 already uses it" in problems[1]
    with pytest.raises(PlanError) as info:
        load_plan(path)
    message = str(info.value)
    assert message.startswith(f"{path}: 7 problems\n")


@pytest.mark.parametrize(
    "text, line, fragment",
    [
        # unknown keys, with did-you-mean, at any depth
        (
            "qrels: demo/qrels.txt\nruns: [demo/runs/*.run]\nmetrics: AP\ncompare: {tset: t}\n",
            4,
            "compare.tset: unknown key 'tset'; did you mean 'test'?",
        ),
        (
            "qrels: demo/qrels.txt\nruns:\n  - {name: a, path: demo/runs/bm25.run, weight: 2}\nmetrics: AP\n",
            3,
            "runs[0].weight: unknown key 'weight'; allowed keys: name, path",
        ),
        # wrong types and values
        (
            "qrels: demo/qrels.txt\nruns: [demo/runs/bm25.run]\nmetrics: AP\noptions:\n  relevance_level: yes\n",
            5,
            "options.relevance_level: expected an integer, got true",
        ),
        (
            "qrels: demo/qrels.txt\nruns: [demo/runs/bm25.run, 7]\nmetrics: AP\n",
            2,
            "runs[1]: expected a string or a mapping, got 7",
        ),
        (
            "qrels: demo/qrels.txt\nruns: [demo/runs/bm25.run]\nmetrics: 5\n",
            3,
            "metrics: expected a string or a list, got 5",
        ),
        ("qrels: demo/qrels.txt\nruns: [demo/runs/bm25.run]\nmetrics: []\n", 3, "metrics: must not be empty"),
        (
            "qrels: demo/qrels.txt\nruns: [demo/runs/bm25.run]\nmetrics: AP\noptions: {missing_queries: skipp}\n",
            4,
            "options.missing_queries: 'skipp' is not one of: zero, skip, error; did you mean 'skip'?",
        ),
        (
            "qrels: demo/qrels.txt\nruns: [demo/runs/*.run]\nmetrics: AP\ncompare: {}\noutput:\n  - {format: trec, content: comparisons}\n",
            6,
            "output[0].content: content 'comparisons' is not available with this format",
        ),
        ("runs: [demo/runs/bm25.run]\nmetrics: AP\n", 1, "missing required key 'qrels'"),
        # what the schema cannot see
        (
            "qrels: demo/qrels.txt\nruns: [demo/runs/bm25.run]\n\nmetrics: 'AP, P@10x'\n",
            4,
            "metrics: bad metric spec 'AP, P@10x'",
        ),
        (
            "qrels: demo/qrels.txt\nruns:\n  - demo/runs/bm25.run\n  - demo/nothing/*.run\nmetrics: AP\n",
            4,
            "runs[1]: glob 'demo/nothing/*.run' matches no file",
        ),
        (
            "qrels: demo/qrelz.txt\nruns: [demo/runs/bm25.run]\nmetrics: AP\n",
            1,
            "qrels: qrels file not found",
        ),
        (
            "qrels: demo\nruns: [demo/runs/bm25.run]\nmetrics: AP\n",
            1,
            "qrels: qrels 'DIR/demo' is a directory",
        ),
        (
            "qrels: demo/qrels.txt\nruns: [demo/runs/bm25.run, demo/runs/*.run]\nmetrics: AP\n",
            2,
            "runs[1]: duplicate run name 'bm25' (from 'DIR/demo/runs/bm25.run', matched by 'demo/runs/*.run')",
        ),
        (
            "qrels: demo/qrels.txt\nruns: [demo/runs/*.run]\nmetrics: AP\ncompare:\n  baseline: BM25\n",
            5,
            "compare.baseline: baseline 'BM25' is not a run of this plan; did you mean 'bm25'?",
        ),
        (
            "qrels: demo/qrels.txt\nruns: [demo/runs/bm25.run]\nmetrics: AP\ncompare: {}\n",
            4,
            "compare: comparing needs at least 2 runs; the plan has 1",
        ),
        (
            "qrels: demo/qrels.txt\nruns: [demo/runs/*.run]\nmetrics: AP\ncompare: {test: tukey, correction: holm}\n",
            4,
            "compare.correction: test tukey adjusts for all pairs of runs itself",
        ),
        (
            "qrels: demo/qrels.txt\nruns: [demo/runs/*.run]\nmetrics: AP\noutput:\n  - {format: csv, content: comparisons}\n",
            5,
            "output[0].content: comparisons asked for, but the plan has no compare section",
        ),
        (
            "qrels: demo/qrels.txt\nruns: [demo/runs/*.run]\nmetrics: AP\noutput:\n  - {format: csv, path: demo/runs/dense.run}\n",
            5,
            "output[0].path: 'DIR/demo/runs/dense.run' is an input of this plan",
        ),
        (
            "qrels: demo/qrels.txt\nruns: [demo/runs/*.run]\nmetrics: AP\noutput:\n  - {format: csv, path: o.csv}\n  - {format: json, path: o.csv}\n",
            6,
            "output[1].path: output[0] already writes 'DIR/o.csv'",
        ),
        # YAML itself
        (
            "qrels: demo/qrels.txt\nruns: [demo/runs/bm25.run\nmetrics: AP\n",
            3,
            "YAML syntax error: expected ',' or ']'",
        ),
        (
            "qrels: demo/qrels.txt\nruns: [demo/runs/bm25.run]\nmetrics: AP\nqrels: demo/qrels.txt\n",
            4,
            "qrels: duplicate key 'qrels' (first given at line 1)",
        ),
        (
            "qrels: demo/qrels.txt\nruns: !!python/object/apply:os.system ['echo pwned']\nmetrics: AP\n",
            2,
            "YAML syntax error: could not determine a constructor for the tag",
        ),
        ("- qrels\n", 1, "a plan must be a mapping of keys"),
        # what the bounded loader refuses, before anything walks the tree
        (
            "qrels: demo/qrels.txt\nruns: &r [demo/runs/bm25.run, *r]\nmetrics: AP\n",
            2,
            "alias *r refers to a value that contains it",
        ),
        (
            "qrels: demo/qrels.txt\nruns: [demo/runs/bm25.run]\nmetrics: AP\noptions: "
            + "[" * 3000
            + "]" * 3000
            + "\n",
            4,
            "nested more than 50 levels deep",
        ),
        # each a<k> is a list holding a<k-1>: a0 is 2 levels (list, string), a<k> is k + 2; the alias of
        # a<k-1> sits 2 levels down (the plan, a<k>'s list) and reaches 2 + (k + 1), past 50 at k = 48
        (
            "a0: &a0 [x]\n" + "".join(f"a{k}: &a{k} [*a{k - 1}]\n" for k in range(1, 60)),
            49,
            "alias *a47 nests the plan more than 50 levels deep",
        ),
    ],
)
def test_one_problem_with_its_line(workspace, capfd, text, line, fragment):
    path = write_plan(workspace, text)
    problems = problems_of(path)
    fragment = fragment.replace("DIR", str(workspace))
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{path}:{line}: "), problems[0]
    assert fragment in problems[0], problems[0]
    assert "pwned" not in capfd.readouterr().out  # safe loading: nothing was executed


def test_an_empty_plan_is_one_problem_unless_options_fill_it(tmp_path):
    path = write_plan(tmp_path, "# nothing yet\n")
    assert problems_of(path) == [
        f"{path}:1: the plan is empty; expected a mapping of keys (qrels, runs, metrics, ...)"
    ]
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n")
    assert problems_of(path, ("qrels=q.txt",)) == [
        f"{path}:1: missing required key '{k}'" for k in ("runs", "metrics")
    ]


@pytest.mark.parametrize("command", ["validate", "run"])
@pytest.mark.parametrize(
    "case, content, expected",
    [
        ("missing", None, "{path}: no such file"),
        ("directory", None, "{path}: is a directory, not a plan file"),
        ("empty", b"", "{path}:1: the plan is empty; expected a mapping of keys (qrels, runs, metrics, ...)"),
        # 0xe9 is Latin-1's e-acute; after "qrels: q\n" (9 bytes) and "runs: [caf" (10) it is byte 19
        (
            "latin-1",
            b"qrels: q\nruns: [caf\xe9]\nmetrics: AP\n",
            "{path}:2: not UTF-8 text (invalid continuation byte: byte 0xe9 at offset 19)",
        ),
        (
            "tabs",
            b"qrels: q\n\truns: [a]\n",
            "{path}:2: YAML syntax error: found character '\\t' that cannot start any token (YAML indents with spaces, never tabs)",
        ),
        (
            "a list",
            b"- qrels: q\n- runs: [a]\n",
            "{path}:1: a plan must be a mapping of keys (qrels, runs, metrics, ...), not a list",
        ),
    ],
)
def test_a_plan_file_that_is_no_plan_is_one_located_line(tmp_path, capsys, command, case, content, expected):
    path = tmp_path / "plan.yaml"
    if case == "directory":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    assert main([command, str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"irspec: error: {expected.format(path=path)}\n"
    assert captured.out == ""


def _alias_bomb(levels: int, width: int) -> str:
    """``a0`` a list of one string; each ``a<i>`` a list of ``width`` aliases of ``a<i-1>``, line ``i+1``."""
    lines = ['a0: &a0 ["lol"]']
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\nqrels: q.txt\nruns: [r.run]\nmetrics: AP\n"


# An anchored list stands for its own value plus its items, aliases expanded; the loader refuses the
# alias that takes the values aliases repeat past 10,000.
#   9 wide: a0 = 2 values; a1 = 1 + 9*2 = 19 (line 2 repeats 9*2 = 18); a2 = 1 + 9*19 = 172 (line 3
#   repeats 171, 189 in all); a3 = 1 + 9*172 = 1549 (line 4: 1548, 1737 in all); on line 5 each *a3
#   repeats 1549: after five 1737 + 5*1549 = 9482, the sixth brings 11031.
#   12 wide: a1 = 25 (24), a2 = 301 (300, 324 in all), a3 = 3613 (3612, 3936 in all); on line 5 the
#   first *a3 brings 7549, the second 11162.
@pytest.mark.parametrize(
    "levels, width, refused",
    [(9, 9, "{path}:5: alias *a3 repeats 1549 values"), (12, 12, "{path}:5: alias *a3 repeats 3613 values")],
)
@pytest.mark.parametrize("command", ["validate", "run"])
def test_an_alias_bomb_is_refused_at_its_alias(tmp_path, command, levels, width, refused):
    path = tmp_path / "bomb.yaml"
    path.write_text(_alias_bomb(levels, width), encoding="utf-8")
    # The timeout is only a safety net: unbounded, the 9x9 bomb expands to 9**9 values and would hang
    # here for minutes, with gigabytes.
    proc = run_irspec(command, str(path), timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.startswith("irspec: error: " + refused.format(path=path) + ", which takes"), (
        proc.stderr
    )
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_an_alias_bomb_in_an_override_is_refused(workspace):
    # small enough to expand in a moment were it not refused: 10 wide, a0 = [x] is 2 values, a1 = 21
    # (20 repeated), a2 = 211 (210, 230 in all), a3 = 2111 (2110, 2340 in all); in a4 the aliases
    # of a3 bring 4451, 6562, 8673, then 10784
    path = write_plan(workspace, GOOD)
    bomb = (
        "["
        + ", ".join(["&a0 [x]"] + [f"&a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 5)])
        + "]"
    )
    (problem,) = problems_of(path, (f"compare.baseline={bomb}",))
    shown = f"compare.baseline={bomb}"[:97] + "..."  # an override is quoted to 100 characters
    assert problem.startswith(
        f"{path}: --set {shown}: cannot read the value as YAML: alias *a3 repeats 2111 values"
    )


def test_aliases_may_repeat_up_to_the_budget_and_no_more(tmp_path):
    from irspec.plan.load import _ALIAS_BUDGET

    # an anchored list of n - 1 numbers stands for n values; two aliases of it repeat 2n = the budget
    n = _ALIAS_BUDGET // 2
    anchor = "big: &big [" + ", ".join(["0"] * (n - 1)) + "]\n"
    two = write_plan(tmp_path, anchor + "qrels: [*big, *big]\n", "two.yaml")
    assert not [p for p in problems_of(two) if ": alias *" in p]  # other problems, but no alias refused
    three = write_plan(tmp_path, anchor + "qrels: [*big, *big]\nruns: *big\n", "three.yaml")
    assert problems_of(three) == [
        f"{three}:3: alias *big repeats {n} values, which takes the values aliases repeat past {_ALIAS_BUDGET}; "
        "expected aliases of small parts of the plan, such as a shared options mapping (is this an alias bomb?)"
    ]


def test_a_plan_sharing_values_through_anchors_and_aliases_loads(workspace):
    path = write_plan(
        workspace,
        GOOD
        + """
options: &opts {relevance_level: 1, depth: 1000}
output:
  - &csv {format: csv, path: out/a.csv, per_query: false, decimals: &d 3}
  - {<<: *csv, path: out/b.csv}
  - {format: table, decimals: *d}
""",
    )
    plan = load_plan(path)
    assert plan.options.depth == 1000
    assert plan.outputs == (
        Output("csv", workspace / "out" / "a.csv", per_query=False, decimals=3),
        Output("csv", workspace / "out" / "b.csv", per_query=False, decimals=3),
        Output(
            "table", None, decimals=3, intervals="t"
        ),  # table, markdown, html: t intervals unless told none
    )


def test_a_missing_plan_file_is_a_plan_error(tmp_path):
    assert problems_of(tmp_path / "nope.yaml") == [f"{tmp_path / 'nope.yaml'}: no such file"]


def test_a_spec_error_keeps_its_caret_under_the_problem(workspace):
    path = write_plan(
        workspace, "qrels: demo/qrels.txt\nruns: [demo/runs/bm25.run]\nmetrics: ['bpref(10+']\n"
    )
    (problem,) = problems_of(path)
    assert problem.splitlines()[1:] == ["      bpref(10+", "               ^"]


# --------------------------------------------------------------------------------------------------
# Overrides


def test_overrides_apply_before_validation(workspace):
    path = write_plan(workspace, GOOD + "compare: {baseline: bm25, test: bogus}\n")
    assert any("compare.test: 'bogus' is not one of" in p for p in problems_of(path))
    plan = load_plan(
        path,
        ["compare.test=randomization", "compare.seed=7", "compare.permutations=1000.0", "options.depth=100"],
    )
    assert plan.compare == Compare(baseline="bm25", test="randomization", seed=7, permutations=1000)
    assert plan.options.depth == 100 and isinstance(plan.options.depth, int)
    assert plan.overrides == (
        "compare.test=randomization",
        "compare.seed=7",
        "compare.permutations=1000.0",
        "options.depth=100",
    )


def test_overrides_create_sections_and_address_list_items(workspace, tmp_path):
    path = write_plan(workspace, GOOD)
    plan = load_plan(
        path,
        [
            "compare.test=randomization",  # the plan has no compare section: it is created
            "compare.baseline=null",
            "runs[1]=demo/runs/random.run",
            "runs.0.name=base",
            "metrics=[P@10, 'bpref(10+R)']",
            f"output=[{{format: json, path: {tmp_path / 'x.json'}}}]",
        ],
    )
    assert plan.compare == Compare(test="randomization")
    assert plan.run_names == ("base", "random", "hybrid")
    assert [str(m) for m in plan.metrics] == ["P@10", "Bpref(nonrel=10+R)"]
    assert plan.outputs == (Output("json", tmp_path / "x.json", per_query=True),)


def test_problems_quote_long_values_and_overrides_short(workspace):
    # issue 21: jsonschema's message held a 400-digit number whole, and a --set override was echoed whole
    nines, long_text = "9" * 400, "x" * 5000
    path = write_plan(
        workspace, GOOD + f"options: {{judged_warning: {nines}}}\ncompare: {{baseline: bm25}}\n"
    )
    problems = problems_of(
        path,
        (f"compare.permutations={nines}", f"compare.test={long_text}", f"compare.correction: {long_text}"),
    )
    assert len(problems) == 4
    assert all(len(p) - len(str(path)) < 400 for p in problems), [len(p) for p in problems]  # not 5,000
    assert (
        problems[0].startswith(f"{path}:")
        and "options.judged_warning: 999" in problems[0]
        and "... is greater than" in problems[0]
    )
    assert (
        f"--set compare.permutations={'9' * 30}" in problems[1]
        and "is greater than the maximum of" in problems[1]
    )
    assert "--set compare.test=xxx" in problems[2] and "is not one of" in problems[2]
    assert "--set compare.correction: xxx" in problems[3] and "expected KEY=VALUE" in problems[3]


@pytest.mark.parametrize(
    ("override", "fragment"),
    [
        ("compare.alpha=" + "9" * 400, "compare.alpha: 999"),  # float() of it was an OverflowError
        (
            "power={delta: .nan}",
            "power.delta: delta must be a number, not .nan",
        ),  # NaN passes the schema's bounds
        ("power={delta: 0.1, alpha: .nan}", "power.alpha: alpha must be a number, not .nan"),
        ("compare.baseline=" + "y" * 3000, "compare.baseline: baseline 'yyy"),
    ],
)
def test_hostile_compare_and_power_values_are_problems(workspace, override, fragment):
    path = write_plan(workspace, GOOD + "compare: {baseline: bm25}\n")
    (problem,) = problems_of(path, (override,))
    assert fragment in problem and len(problem) - len(str(path)) < 400


def test_problems_from_overrides_name_the_override(workspace):
    path = write_plan(workspace, GOOD)
    problems = problems_of(
        path,
        (
            "compare.tst=t",
            "compare.seed=-1",
            "runs[7]=x.run",
            "runs.name=x",
            "nothing",
            "metrics=[AP, ndcg@x]",
        ),
    )
    src = str(path)
    assert problems == [  # in the order of the options
        f"{src}: --set compare.tst=t: compare.tst: unknown key 'tst'; did you mean 'test'?",
        f"{src}: --set compare.seed=-1: compare.seed: -1 is less than the minimum of 0",
        f"{src}: --set runs[7]=x.run: runs has 3 items; no index 7",
        f"{src}: --set runs.name=x: runs is a list; use an index such as runs[0]",
        f"{src}: --set nothing: expected KEY=VALUE, such as compare.test=randomization",
        f"{src}: --set metrics=[AP, ndcg@x]: metrics[1]: bad metric spec 'ndcg@x': "
        + problems[-1].split("'ndcg@x': ", 1)[1],
    ]


# --------------------------------------------------------------------------------------------------
# Outputs


def test_outputs_carry_every_number(workspace):
    path = write_plan(
        workspace,
        GOOD
        + """
compare: {test: randomization, permutations: 500, seed: 3, correction: bh}
output:
  - {format: table}
  - {format: table, content: comparisons}
  - {format: csv, path: out/per_query.csv}
  - {format: tsv, path: out/comparisons.tsv, content: comparisons}
  - {format: json, path: out/only_comparisons.json, content: comparisons}
  - {format: trec, path: out/trec.txt}
""",
    )
    report = run_plan(load_plan(path))
    texts = [t for _, t in render_outputs(report, stdout=io.StringIO())]
    table, comparison_table, per_query, tsv, only, trec = texts
    assert "(a) bm25" in table and "letters: significantly better than the run with that letter" in table
    assert "sign-flip randomization test, 500 permutations, seed 3" in table
    assert "Benjamini-Hochberg correction over the 3 comparisons of each metric" in table
    assert comparison_table.splitlines()[0].split()[:3] == ["metric", "a", "b"]
    assert per_query.splitlines()[0] == "run,query,metric,value"
    assert len(per_query.splitlines()) == 1 + 3 * (50 + 1) * 2
    header = tsv.splitlines()[0].split("\t")
    assert header == list(Comparison.COLUMNS)
    assert len(tsv.splitlines()) == 1 + 3 * 2
    row = dict(zip(header, tsv.splitlines()[1].split("\t"), strict=True))
    assert row["test"] == "randomization" and row["permutations"] == "500" and row["seed"] == "3"
    assert row["correction"] == "bh" and float(row["p_adjusted"]) >= float(row["p_value"])
    doc = json.loads(only)
    assert set(doc) == {"plan", "overrides", "compare", "comparisons", "notes", "warnings", "provenance"}
    assert len(doc["comparisons"]) == 6
    # trec_eval's lines, each run's block started by its runid line (the plan's names, in its order)
    heads = [line.split("\t") for line in trec.splitlines() if line.startswith("runid")]
    assert [h[2] for h in heads] == [r.run_name for r in report.results] and len(heads) == 3
    assert trec.splitlines()[1].split()[:2] == ["map", "all"]


def test_the_figures_metrics_are_an_evaluation_of_their_own(workspace):
    """An output that draws makes the plan evaluate what the figures read (IPrec at 11 levels, AP,
    recall and fall-out, ...) apart from its own metrics: the results hold the plan's metrics, and the
    warnings every output shows speak of them alone."""
    # The demo's labels go up to 3 (0, 1, 2, 3 in qrels.txt): at level 4 nothing is relevant, which the
    # engine says once per level, naming the metrics that take a relevance level. Of nDCG@10 (which
    # takes none) and P@10, that is P@10; the figures' IPrec, AP, R@k, ... are not the plan's.
    path = write_plan(
        workspace,
        GOOD.replace("[nDCG@10, AP]", "[nDCG@10, P@10]")
        + "options: {relevance_level: 4}\noutput: [{format: html, path: out/r.html}, {format: json, path: out/r.json}]\n",
    )
    with pytest.warns(irspec.IrspecWarning):
        report = run_plan(load_plan(path))
    assert report.curves is not None and set(report.curves) == {"bm25", "dense", "hybrid"}
    assert [str(m) for m in report.results[0].metrics] == ["nDCG@10", "P@10"]
    level = [w for w in report.warnings if w.startswith("relevance level 4")]
    assert level == [
        "relevance level 4 (P@10): no document in the qrels is relevant (no label >= 4; the highest is 3), "
        "so every query has R = 0"
    ]


def test_a_table_with_no_baseline_marks_the_runs_each_run_beats():
    rng = np.random.default_rng(0)
    qids = [f"q{i}" for i in range(40)]
    base = rng.random(40)
    results = [
        make_result(n, qids, base + s + rng.normal(0, 0.01, 40))
        for n, s in [("lo", 0), ("hi", 0.3), ("same", 0)]
    ]
    comparisons, notes = compare_results(results, Compare(test="t"))
    plan = Plan("p.yaml", Path("q"), (), results[0].metrics, Options(), Compare(test="t"), (Output("table"),))
    ((_, table),) = render_outputs(PlanReport(plan, tuple(results), tuple(comparisons), tuple(notes)))
    rows = {line.split()[1]: line.split()[2:] for line in table.splitlines()[2:5]}
    assert rows["hi"] == [
        f"{results[1].aggregate()['AP']:.4f}",
        "ac",
        f"{results[1].aggregate()['P@10']:.4f}",
        "ac",
    ]
    assert all(cell.replace(".", "").isdigit() for cell in rows["lo"] + rows["same"])  # they beat nobody


def test_a_failed_run_leaves_no_output_behind(workspace, monkeypatch):
    path = write_plan(
        workspace,
        GOOD
        + """
compare: {baseline: bm25}
output:
  - {format: csv, path: out/a.csv}
  - {format: json, path: out/b.json}
""",
    )
    (workspace / "out").mkdir()
    (workspace / "out" / "b.json").write_text("previous\n")

    # the comparisons fail after the evaluation: nothing is written
    import irspec.experiment.compare
    import irspec.plan.execute as plan_module

    def boom(*args, **kwargs):
        raise EvaluationError("comparison failed")

    # (the plan imports the compare step when it has a compare section)
    monkeypatch.setattr(irspec.experiment.compare, "compare_results", boom)
    assert main(["run", str(path)]) == 2
    assert not (workspace / "out" / "a.csv").exists()
    assert (workspace / "out" / "b.json").read_text() == "previous\n"
    monkeypatch.undo()

    # the last output fails to render: the first, already rendered, is not written either
    real = plan_module._render

    def fail_on_json(report, output, *terminal):
        if output.format == "json":
            raise RuntimeError("disk full of opinions")
        return real(report, output, *terminal)

    monkeypatch.setattr(plan_module, "_render", fail_on_json)
    report = run_plan(load_plan(path))
    with pytest.raises(RuntimeError):
        write_outputs(report, stdout=io.StringIO())
    assert sorted(p.name for p in (workspace / "out").iterdir()) == ["b.json"]
    assert (workspace / "out" / "b.json").read_text() == "previous\n"
    monkeypatch.undo()

    # and a run file that is broken fails the evaluation before anything is written
    (workspace / "demo" / "runs" / "hybrid.run").write_text("q01 Q0 d1 1 not-a-score x\n")
    assert main(["run", str(path)]) == 2
    assert sorted(p.name for p in (workspace / "out").iterdir()) == ["b.json"]


class _TableAfterFiles(io.StringIO):
    """Standard output that holds, at each write, that every file output is already in place."""

    def __init__(self, files: list[Path]) -> None:
        super().__init__()
        self.files = files

    def write(self, text: str) -> int:
        assert all(f.exists() for f in self.files), [f for f in self.files if not f.exists()]
        return super().write(text)


def test_a_plans_outputs_are_written_all_or_nothing(workspace, monkeypatch):
    pytest.importorskip("matplotlib")
    from irspec.report import files as report_module  # where the temporary files are made

    outputs = [
        "{format: table}",
        "{format: csv, path: out/a.csv}",
        "{format: json, path: out/b.json}",
        "{format: html, path: out/report.html}",
        "{format: plots, path: out/plots}",
        "{format: latex, path: fresh/sub/t.tex}",
        "{format: markdown, path: last/t.md}",  # the one made to fail, after the others
    ]
    path = write_plan(
        workspace, GOOD + "compare: {baseline: bm25}\noutput:\n" + "".join(f"  - {o}\n" for o in outputs)
    )
    out, last = workspace / "out", workspace / "last"
    report = run_plan(load_plan(path))  # drawn once: the plots of one report are shared by its outputs
    real_temporary = report_module._temporary

    def denied(target, *, directory):
        if target.name == "t.md":  # as root, a read-only directory would not stop us; the system's error
            raise PermissionError(13, "Permission denied", str(target.parent))
        return real_temporary(target, directory=directory)

    def break_markdown():
        real = plan_module._render
        monkeypatch.setattr(
            plan_module, "_render", lambda r, o, *a: 1 / 0 if o.format == "markdown" else real(r, o, *a)
        )

    import irspec.plan.execute as plan_module

    failures = {
        "its directory is a file": (lambda: last.write_text("a file\n"), f"not a directory: '{last}'"),
        "its path is a directory": (lambda: (last / "t.md").mkdir(parents=True), "is a directory"),
        "permission denied": (
            lambda: monkeypatch.setattr(report_module, "_temporary", denied),
            f"permission denied: '{last}'",
        ),
        "the plots directory is a file": (lambda: (out / "plots").write_text("a file\n"), "not a directory"),
        "a render fails": (break_markdown, None),
    }
    for case, (breaking, why) in failures.items():
        shutil.rmtree(out, ignore_errors=True)
        shutil.rmtree(last, ignore_errors=True)
        last.unlink(missing_ok=True)
        out.mkdir()
        (out / "b.json").write_text("previous\n")
        breaking()
        before = sorted(p.relative_to(workspace) for p in workspace.rglob("*"))
        stdout = io.StringIO()
        with pytest.raises(IrspecError if why else ZeroDivisionError) as info:
            write_outputs(report, stdout=stdout)
        if why is not None:
            target = out / "plots" if "plots" in case else last / "t.md"
            assert str(info.value) == f"cannot write '{target}': {why}", case
        assert sorted(p.relative_to(workspace) for p in workspace.rglob("*")) == before, (
            case
        )  # no file, no .tmp
        assert not (workspace / "fresh").exists(), case  # nor the directories made for them
        assert (out / "b.json").read_text() == "previous\n", case
        assert stdout.getvalue() == "", case
        monkeypatch.undo()

    files = [
        out / "a.csv",
        out / "b.json",
        out / "report.html",
        out / "plots",
        workspace / "fresh" / "sub" / "t.tex",
        last / "t.md",
    ]
    stdout = _TableAfterFiles(files)
    assert write_outputs(report, stdout=stdout) == files
    assert "bm25 (baseline)" in stdout.getvalue()
    assert json.loads((out / "b.json").read_text())["compare"]["baseline"] == "bm25"
    assert {p.suffix for p in (out / "plots").iterdir()} == {".png", ".svg"}
    assert '<svg class="chart"' in (out / "report.html").read_text() and (
        last / "t.md"
    ).read_text().startswith("|")
    assert not [p for p in workspace.rglob("*") if p.name.endswith(".tmp")]


def test_cli_run_names_the_output_it_cannot_write(workspace, capsys):
    path = write_plan(
        workspace, GOOD + "output:\n  - {format: csv, path: out/a.csv}\n  - {format: csv, path: last/b.csv}\n"
    )
    (workspace / "last").write_text("a file\n")
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert (
        err.splitlines()[-1]
        == f"irspec: error: cannot write '{workspace / 'last' / 'b.csv'}': not a directory: '{workspace / 'last'}'"
    )
    assert "Traceback" not in err and "irspec: wrote" not in err
    assert not (workspace / "out").exists()


def test_writing_replaces_files_atomically_and_creates_directories(workspace):
    path = write_plan(workspace, GOOD + "output:\n  - {format: csv, path: a/b/c/out.csv}\n")
    target = workspace / "a" / "b" / "c" / "out.csv"
    report = run_plan(load_plan(path))
    assert write_outputs(report) == [target]
    first = target.read_text()
    assert first.startswith("run,query,metric,value\n")
    assert write_outputs(report) == [target]
    assert target.read_text() == first
    assert [p.name for p in target.parent.iterdir()] == ["out.csv"]


# --------------------------------------------------------------------------------------------------
# Command line


def test_cli_validate_ok_and_problems(workspace, capsys):
    good = write_plan(workspace, GOOD, "good.yaml")
    assert main(["validate", str(good)]) == 0
    assert capsys.readouterr().out == "ok: 3 runs, 2 metrics\n"

    bad = write_plan(workspace, GOOD.replace("metrics:", "metricz:"), "bad.yaml")
    assert main(["validate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:6: metricz: unknown key 'metricz'; did you mean 'metrics'?" in err
    assert f"{bad}:1: missing required key 'metrics'" in err
    assert "Traceback" not in err

    assert main(["validate", str(good), "--set", "compare.baseline=nope"]) == 2
    assert (
        "--set compare.baseline=nope: compare.baseline: baseline 'nope' is not a run"
        in capsys.readouterr().err
    )


def test_cli_run_writes_outputs_and_prints_the_table(workspace, capsys):
    path = write_plan(
        workspace,
        GOOD
        + "compare: {baseline: bm25}\noutput:\n  - {format: table}\n  - {format: json, path: out/r.json}\n",
    )
    assert main(["run", str(path), "--set", "compare.test=randomization", "--set", "compare.seed=7"]) == 0
    captured = capsys.readouterr()
    assert "bm25 (baseline)" in captured.out and "seed 7" in captured.out
    assert f"irspec: wrote {workspace / 'out' / 'r.json'}" in captured.err
    doc = json.loads((workspace / "out" / "r.json").read_text())
    assert doc["compare"]["seed"] == 7 and doc["overrides"] == [
        "compare.test=randomization",
        "compare.seed=7",
    ]


def test_cli_bad_yaml_exits_2_without_a_traceback(workspace):
    path = write_plan(workspace, "qrels: demo/qrels.txt\nruns: [a\nmetrics: AP\n")
    proc = run_irspec("run", str(path))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert f"{path}:3: YAML syntax error" in proc.stderr
    assert proc.stdout == ""


def test_yaml_and_jsonschema_load_with_the_plan_loader_not_with_irspec():
    # plan.load imports them at its top (tests/test_architecture.py: laziness lives at the face)
    code = (
        "import sys, irspec\n"
        "seen = lambda: sorted(m for m in ('yaml', 'jsonschema') if m in sys.modules)\n"
        "before = seen(); irspec.load_plan; print(before, seen())"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "[] ['jsonschema', 'yaml']", (
        proc.stderr or proc.stdout
    )


def test_the_shipped_schema_is_the_one_in_specs():
    """specs/plan.schema.json is for editors; the package ships the same bytes for validation."""
    from pathlib import Path

    from irspec.plan import SCHEMA_PATH

    specs_copy = Path(__file__).resolve().parents[1] / "specs" / "plan.schema.json"
    assert SCHEMA_PATH.read_bytes() == specs_copy.read_bytes()


def test_a_plan_takes_level_and_depth_0_as_trec_eval_does(tmp_path):
    """The schema allows what Options allows: -l 0 (every judged document relevant) and -M 0 (empty
    rankings), with trec_eval's values: at depth 0 nothing is retrieved, so P@10 is 0 on every query."""
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"qrels: {DEMO / 'qrels.txt'}\nruns: [{DEMO / 'runs' / 'bm25.run'}]\nmetrics: [P@10, NumRet]\n"
        "options: {relevance_level: 0, depth: 0}\n",
        encoding="utf-8",
    )
    report = run_plan(load_plan(plan))
    assert report.plan.options.relevance_level == 0 and report.plan.options.depth == 0
    assert report.results[0].aggregate() == {"P@10": 0.0, "NumRet": 0.0}


def test_an_output_shows_confidence_intervals_beside_the_means(tmp_path):
    """``intervals: t`` in a table, Markdown or HTML output of a plan puts scipy's 95% t interval of
    each run's mean beside it; an output that has no means to put it beside is a located problem."""
    import scipy.stats

    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"qrels: {DEMO / 'qrels.txt'}\nruns: [{DEMO / 'runs' / 'bm25.run'}]\nmetrics: [AP]\n"
        "output:\n  - {format: table, intervals: t}\n  - {format: markdown, path: t.md, intervals: t}\n"
        "  - {format: html, path: r.html, intervals: t}\n",
        encoding="utf-8",
    )
    report = run_plan(load_plan(plan))
    ap = report.results[0].column("AP")
    low, high = scipy.stats.t.interval(0.95, len(ap) - 1, loc=ap.mean(), scale=scipy.stats.sem(ap))
    shown = f"[{low:.4f}, {high:.4f}]"
    rendered = {out.format: text for out, text in render_outputs(report)}
    for fmt in ("table", "markdown", "html"):
        assert shown in rendered[fmt], fmt
    plan.write_text(plan.read_text().replace("{format: table, intervals: t}", "{format: json, intervals: t}"))
    with pytest.raises(IrspecError, match=r"plan.yaml:5: output\[0\]\.intervals: intervals are shown"):
        load_plan(plan)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="deliberate: a POSIX device")
@pytest.mark.parametrize("key", ["qrels", "groups", "standardize"])
def test_a_plan_path_that_is_a_device_reaches_its_reader(workspace, key):
    # /dev/zero was "groups file not found", which it is not: a pipe or device a shell hands over
    # (/dev/stdin, <(zcat qrels.gz)) is read like a file, and the reader refuses what it reads
    lines = {"qrels": "demo/qrels.txt", "runs": "[demo/runs/bm25.run]", "metrics": "AP"}
    lines[key] = "{file: /dev/zero}" if key == "standardize" else "/dev/zero"
    plan = write_plan(workspace, "".join(f"{k}: {v}\n" for k, v in lines.items()))
    result = run_irspec("run", str(plan), timeout=120)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "not found" not in result.stderr
    assert result.stderr.startswith(  # binary data: whichever the reader meets first
        ("irspec: error: /dev/zero:1: line longer than 1 MiB", "irspec: error: /dev/zero:1: a NUL byte")
    ), result.stderr


def test_a_wrong_compare_section_is_reported_at_its_keys_not_as_missing(workspace):
    """compare: {alpha: 1.5} is a compare section: the power section and a comparisons output were told
    to add one, and the power section's own numbers went unchecked."""
    path = write_plan(
        workspace,
        """
        qrels: demo/qrels.txt
        runs: [demo/runs/bm25.run, demo/runs/dense.run]
        metrics: [nDCG@10]
        compare: {alpha: 1.5}
        power: {delta: 0.1, power: 0.01}
        output:
          - {format: table, content: comparisons}
        """,
    )
    assert problems_of(path) == [
        f"{path}:4: compare.alpha: 1.5 is greater than or equal to the maximum of 1",
        f"{path}:5: power.power: the target power (0.01) must be more than alpha (0.05): a test has power "
        "alpha when there is no difference at all",
    ]


def test_validate_finds_every_two_entries_writing_one_file(workspace):
    """What the writer refuses at run time (report.files: by resolved path), validate reports at the
    entry: a diff onto an output's file, two diffs onto one, two outputs reaching one file through a
    linked directory. /dev/null is written in place and may take several."""
    (workspace / "real").mkdir()
    (workspace / "lnk").symlink_to("real", target_is_directory=True)
    path = write_plan(
        workspace,
        """
        qrels: demo/qrels.txt
        runs: [demo/runs/bm25.run, demo/runs/dense.run]
        metrics: [nDCG@10]
        output:
          - {format: json, path: real/x.json}
          - {format: csv, path: lnk/x.json}
          - {format: markdown, path: real/y.md}
          - {format: table, path: /dev/null}
          - {format: csv, path: /dev/null}
        diff:
          - {a: bm25, b: dense, path: real/y.md, format: markdown}
          - {a: bm25, b: dense, path: real/z.html}
          - {a: bm25, b: dense, path: real/z.html}
        """,
    )
    real = workspace / "real"
    assert problems_of(path) == [
        f"{path}:6: output[1].path: output[0] already writes '{real}/x.json', the same file as "
        f"'{workspace}/lnk/x.json'",
        f"{path}:11: diff[0].path: output[2] already writes '{real}/y.md'",
        f"{path}:13: diff[2].path: diff[1] already writes '{real}/z.html'",
    ]


def test_the_writers_error_for_two_outputs_on_one_file_says_what_to_do(tmp_path):
    from irspec.report.files import write_all_atomic

    with pytest.raises(IrspecError) as info:
        write_all_atomic([(tmp_path / "a.txt", "1"), (tmp_path / "a.txt", "2")])
    assert str(info.value) == (
        f"cannot write '{tmp_path}/a.txt': another output of this command writes it too; give each output a "
        "path of its own"
    )
    assert not (tmp_path / "a.txt").exists()


@pytest.mark.parametrize(
    ("metrics", "line", "where", "why"),
    [
        ("[GMAP, AP]", 3, "metrics[0]: GMAP", "its aggregate is a geometric mean"),
        ("[AP, relstring]", 3, "metrics[1]: relstring@10", "it has text values, no numbers"),
        ("\n  - AP\n  - gm_bpref", 5, "metrics[1]: gm_bpref", "its aggregate is a geometric mean"),
    ],
)
def test_validate_finds_a_metric_a_standardize_section_cannot_standardise(
    workspace, metrics, line, where, why
):
    """A geometric mean or a text metric has no z-scores: run failed after evaluating, naming no file or
    line; validate says so at the metric's entry."""
    path = write_plan(
        workspace,
        "qrels: demo/qrels.txt\nruns: [demo/runs/bm25.run, demo/runs/dense.run]\n"
        f"metrics: {metrics}\nstandardize: true\n",
    )
    assert problems_of(path) == [
        f"{path}:{line}: {where}: cannot standardise it: {why}"
        + (" (standardise the arithmetic-mean measure instead)" if "geometric" in why else "")
        + "; the plan's standardize section standardises every metric"
    ]


def test_a_number_with_an_exponent_and_no_point_is_a_number_as_yaml_1_2_reads_it(workspace):
    """PyYAML reads YAML 1.1, where ``1e-3`` is text: ``alpha: 1e-3`` was refused as "a string", though
    YAML 1.2 and the schema editors read a number. Quoted, it stays text."""
    plan = write_plan(workspace, """
        qrels: demo/qrels.txt
        runs: [demo/runs/bm25.run, demo/runs/dense.run]
        metrics: [AP]
        compare: {baseline: bm25, alpha: 1e-3, permutations: 2E+3, test: randomization}
    """)  # fmt: skip
    compare = load_plan(plan).compare
    assert compare is not None and compare.alpha == 0.001 and compare.permutations == 2000
    assert load_plan(plan, ("compare.alpha=5e-2",)).compare.alpha == 0.05
    assert any("got '1e-3'" in p for p in problems_of(plan, ("compare.alpha='1e-3'",)))


def test_an_error_of_a_plans_metrics_or_comparison_names_the_plan_and_its_section(workspace):
    """Fallout without a collection size, a comparison of runs that share one query: each said its
    problem without naming the plan (the reproduce section's already did)."""
    fallout = write_plan(workspace, """
        qrels: demo/qrels.txt
        runs: [demo/runs/bm25.run]
        metrics: [Fallout@10]
    """)  # fmt: skip
    with pytest.raises(irspec.EvaluationError) as info:
        run_plan(load_plan(fallout))
    assert str(info.value).startswith(f"{fallout}: Fallout@10 needs the collection size")
    (workspace / "one.qrels").write_text("q1 0 d1 1\n")
    (workspace / "a.run").write_text("q1 Q0 d1 1 2.0 a\n")
    (workspace / "b.run").write_text("q1 Q0 d2 1 2.0 b\n")
    compared = write_plan(workspace, """
        qrels: one.qrels
        runs: [a.run, b.run]
        metrics: [AP]
        compare: {baseline: a}
    """)  # fmt: skip
    with pytest.raises(irspec.EvaluationError) as info:
        run_plan(load_plan(compared))
    assert str(info.value).startswith(f"{compared}: compare: cannot compare b with a on AP: need at least 2")
