"""``import irspec`` and ``irspec.parse`` stay light: no numerical, data-frame, YAML or plotting library.

Each check runs in a fresh interpreter (``sys.executable -c ...``) so that modules imported by other
tests do not hide an import. The wall time is measured and printed, never asserted: speed belongs in
``benchmarks/``.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import irspec

HEAVY = [
    "scipy",
    "yaml",
    "pandas",
    "polars",
    "pyarrow",
    "matplotlib",
    "numpy",
    "ir_datasets",
    "pyspark",
    "py4j",
    "torch",
    "torchmetrics",
]

# The directory holding the irspec package, so the child imports the same code (installed or not).
ROOT = str(Path(irspec.__file__).resolve().parent.parent)


def _run(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["IRSPEC_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # third-party plugins may import what they like
    return subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )


def _loaded_after(code: str) -> set[str]:
    probe = code + "\nimport sys, json\nprint(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    result = _run(probe)
    assert result.returncode == 0, result.stderr
    return set(json.loads(result.stdout.strip().splitlines()[-1]))


def test_parse_imports_no_heavy_module():
    loaded = _loaded_after("import irspec\nm = irspec.parse('ndcg@10')\nassert str(m) == 'nDCG@10'")
    assert "irspec" in loaded
    assert "lark" not in loaded  # a plain name@number takes the grammar-equal simple path
    assert sorted(set(HEAVY) & loaded) == []


def test_arguments_go_through_the_grammar_without_heavy_modules():
    loaded = _loaded_after("import irspec\nassert str(irspec.parse('bpref(10+R)')) == 'Bpref(nonrel=10+R)'")
    assert "lark" in loaded
    assert sorted(set(HEAVY) & loaded) == []


def test_parse_many_and_metrics_import_no_heavy_module():
    loaded = _loaded_after(
        "import irspec\nirspec.parse_many('official, all_trec, bpref(10+R)')\nirspec.metrics()"
    )
    assert sorted(set(HEAVY) & loaded) == []


def test_import_alone_does_not_import_lark():
    loaded = _loaded_after("import irspec")
    assert "lark" not in loaded
    assert sorted(set(HEAVY) & loaded) == []


def test_import_time_is_measured(capsys):
    code = "import irspec; irspec.parse('ndcg@10')"
    _run(code)  # warm the file system cache and the bytecode
    times = []
    for _ in range(5):
        start = time.perf_counter()
        result = _run(code)
        times.append(time.perf_counter() - start)
        assert result.returncode == 0, result.stderr
    baseline = []
    for _ in range(5):
        start = time.perf_counter()
        _run("pass")
        baseline.append(time.perf_counter() - start)
    with capsys.disabled():
        print(
            f'\n[irspec] wall time of python -c "{code}": best {min(times):.3f} s, '
            f"median {sorted(times)[2]:.3f} s (python -c pass: best {min(baseline):.3f} s)"
        )


def test_the_default_table_with_intervals_loads_no_scipy():
    # the first command a user types: a table with t intervals around the means, and no scipy.stats
    code = (
        "import irspec.cli\n"
        "status = irspec.cli.main(['eval', 'specs/demo/qrels.txt', 'specs/demo/runs/bm25.run', '-m', 'nDCG@10, AP'])\n"
        "assert status in (0, None), status"
    )
    loaded = _loaded_after(code)
    assert "numpy" in loaded  # it did evaluate
    assert "scipy" not in loaded
    assert "polars" not in loaded  # small files: read without polars (irspec.data.small)


def test_a_large_input_loads_polars():
    # files above the small readers' size are read by polars (here: every file, SMALL_BELOW = 0)
    code = (
        "import irspec.cli, irspec.data.small\n"
        "irspec.data.small.SMALL_BELOW = 0\n"
        "status = irspec.cli.main(['eval', 'specs/demo/qrels.txt', 'specs/demo/runs/bm25.run', '-m', 'nDCG@10, AP'])\n"
        "assert status in (0, None), status"
    )
    loaded = _loaded_after(code)
    assert "polars" in loaded and "scipy" not in loaded


def test_eval_runs_as_a_plan_without_loading_the_steps_it_lacks():
    # irspec eval builds a plan and runs it; a plan loads compare, power, agreement and groups (scipy)
    # only when it has them, and YAML and the JSON Schema only to read a plan file
    code = (
        "import contextlib, io\nfrom irspec.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['eval', 'specs/demo/qrels.txt', 'specs/demo/runs/bm25.run', '-m', 'nDCG@10', '-f', 'json']) == 0"
    )
    loaded = _loaded_after(code)
    assert sorted({"scipy", "yaml", "jsonschema", "matplotlib", "jinja2", "pandas"} & loaded) == []


@functools.cache
def _modules_after(code: str) -> frozenset[str]:
    """Every module (full dotted names) loaded after ``code`` ran in a fresh interpreter; once per code
    and test process: tests that probe the same code read one interpreter's answer."""
    probe = code + "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    result = _run(probe)
    assert result.returncode == 0, result.stderr
    return frozenset(json.loads(result.stdout.strip().splitlines()[-1]))


_EVAL = (
    "import contextlib, io\nfrom irspec.cli import main\n"
    "with contextlib.redirect_stdout(io.StringIO()):\n"
    "    assert main(['eval', 'specs/demo/qrels.txt', 'specs/demo/runs/bm25.run', '-m', 'official'{}]) == 0"
)
# The renderers of other formats, and what only comparisons need (issue 23: each cost start-up time).
_RENDERERS = {
    "irspec.report.html",
    "irspec.report.latex",
    "irspec.report.markdown",
    "irspec.report.parquet",
    "irspec.report.origin",
    "irspec.report.agreement",
    "irspec.report.data",
    "jinja2",
}
_COMPARING = {"irspec.experiment.records", "irspec.stats.outcome", "irspec.stats.significance"}
# What only a plan with systems of several runs (--system) needs.
_SYSTEMS = {"irspec.evaluation.systems", "irspec.evaluation.result_set"}


def test_eval_format_trec_loads_no_table_renderer_and_no_comparison():
    loaded = _modules_after(_EVAL.format(", '--format', 'trec'"))
    assert "irspec.report.trec" in loaded  # it did render
    table = {"irspec.report.text", "irspec.report.model", "irspec.report.marks", "irspec.stats.student"}
    assert sorted((_RENDERERS | _COMPARING | table) & loaded) == []


def test_the_default_table_loads_its_own_renderer_only():
    loaded = _modules_after(_EVAL.format(""))
    assert {"irspec.report.text", "irspec.report.model", "irspec.stats.student"} <= loaded
    assert sorted((_RENDERERS | _COMPARING | _SYSTEMS) & loaded) == []


def test_the_default_table_on_standard_output_loads_no_file_writer():
    # pathlib (with urllib.parse and ipaddress), shutil (with zlib, bz2 and lzma) and the writer of files:
    # ~5% of a small evaluation's instructions, for nothing when the table goes to standard output
    # (an editable install's path finder imports pathlib as the interpreter starts: what was there is not
    # the command's)
    before = _modules_after("pass")
    loaded = _modules_after(_EVAL.format("")) - before
    assert sorted({"pathlib", "urllib.parse", "shutil", "irspec.report.files"} & loaded) == []
    written = _modules_after(_EVAL.format(", '-o', '/dev/null'"))  # a path: its checks load them
    assert "irspec.report.files" in written and "pathlib" in written | before


def test_a_system_of_runs_loads_the_systems_module_when_given():
    loaded = _modules_after(_EVAL.format(", '--system', 'both=specs/demo/runs/bm25.run'"))
    assert loaded >= _SYSTEMS


@pytest.mark.parametrize("ranked", [True, False])
def test_a_small_run_with_ties_is_evaluated_without_numpy_ma(tmp_path, ranked):
    # polars imports numpy.ma (10-15 ms) for the first numpy array made a Series: the qrels index, a
    # run's judged rows and its tied rows reach polars as lists (issue 23's start-up); a run whose
    # scores are not in order ranks its judged documents another way (a matrix of its queries), whose
    # ties' docnos must reach polars as lists too (issue 23's many runs)
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\nq1 0 d9 2\nq2 0 d3 1\n")
    lines = [
        "q1 Q0 d1 1 2.5 r",
        "q1 Q0 d9 2 2.5 r",
        "q1 Q0 d4 3 1.0 r",
        "q2 Q0 d3 1 0.5 r",
        "q2 Q0 d5 2 0.5 r",
    ]
    if not ranked:
        lines[0], lines[2] = lines[2], lines[0]
    run.write_text("\n".join(lines) + "\n")
    for fmt in ("", ", '--format', 'trec'"):
        code = _EVAL.replace("specs/demo/qrels.txt", str(qrels)).replace("specs/demo/runs/bm25.run", str(run))
        # read by polars (the small readers, which load no polars at all, switched off)
        code = "import irspec.data.small\nirspec.data.small.SMALL_BELOW = 0\n" + code
        loaded = _modules_after(code.format(fmt))
        assert "irspec.evaluation.ranking" in loaded and "polars" in loaded  # it did evaluate, with polars
        assert "numpy.ma" not in loaded


def test_the_report_package_loads_a_renderer_when_its_name_is_used():
    assert sorted(m for m in _modules_after("import irspec.report") if m.startswith("irspec.report.")) == []
    loaded = _modules_after("from irspec.report import to_trec")
    assert "irspec.report.trec" in loaded and "irspec.report.html" not in loaded


def test_start_up_runs_without_the_cyclic_collector_and_main_restores_it():
    # Start-up makes a few hundred thousand objects and no garbage: before issue 23 the collector ran
    # ~100 times over them during `irspec eval` of the demo (93 young and 8 middle collections, counted
    # with this probe); now it is off until the plan runs, and back on (nothing frozen) after main.
    code = (
        "import contextlib, gc, io\nfrom irspec.cli import main\n"
        "count = [0]\n"
        "gc.callbacks.append(lambda phase, info: phase == 'start' and count.__setitem__(0, count[0] + 1))\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['eval', 'specs/demo/qrels.txt', 'specs/demo/runs/bm25.run', '-m', 'official']) == 0\n"
        "assert gc.isenabled() and gc.get_freeze_count() == 0, (gc.isenabled(), gc.get_freeze_count())\n"
        "print(count[0])"
    )
    result = _run(code)
    assert result.returncode == 0, result.stderr
    assert int(result.stdout.split()[-1]) < 30


def test_main_leaves_a_disabled_collector_disabled():
    code = "import gc\ngc.disable()\n" + _EVAL.format("") + "\nassert not gc.isenabled()"
    result = _run(code)
    assert result.returncode == 0, result.stderr


def test_main_leaves_what_its_caller_froze_frozen():
    # main froze start-up's objects and unfroze every object at its end, the caller's too: a process that
    # froze what it preloaded (a server, the test runner its collected tests) had them back in each of the
    # collector's passes after one call. Now main freezes only where nothing was frozen.
    code = (
        "import contextlib, gc, io\nfrom irspec.cli import main\n"
        "kept = [[i] for i in range(1000)]\ngc.freeze()\n"
        # the collector's generations (gc.get_objects) hold no frozen object
        "def thawed():\n    seen = {id(o) for o in gc.get_objects()}\n    return sum(id(x) in seen for x in kept)\n"
        "assert thawed() == 0\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['eval', 'specs/demo/qrels.txt', 'specs/demo/runs/bm25.run', '-m', 'P@10']) == 0\n"
        "assert gc.isenabled() and thawed() == 0, thawed()"
    )
    result = _run(code)
    assert result.returncode == 0, result.stderr


def test_a_command_that_does_not_end_start_up_itself_works_with_the_collector_on():
    # irspec fuse and irspec reproduce never called _start_up_over: their whole work ran with the
    # cyclic collector off. A command now keeps it off only when its parser declares ends_start_up.
    code = (
        "import contextlib, gc, io\nimport irspec.fusion.engine as engine\nfrom irspec.cli import main\n"
        "seen = []\nfuse = engine.fuse_to_file\n"
        "def probe(*a, **k):\n    seen.append(gc.isenabled())\n    return fuse(*a, **k)\n"
        "engine.fuse_to_file = probe\n"
        "runs = ['specs/demo/runs/bm25.run', 'specs/demo/runs/dense.run']\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['fuse', *runs, '--method', 'rrf(k=60)']) == 0\n"
        "assert seen == [True], seen"
    )
    result = _run(code)
    assert result.returncode == 0, result.stderr


_FIGURES = {
    "irspec.report.figures",
    "irspec.report.charts",
    "irspec.report.svg",
    "irspec.report.plots",
    "matplotlib",
}


def _demo_run(folder: Path, outputs: str) -> str:
    """Code that runs the demo plan with ``outputs`` (its ``output:`` list) from ``folder``."""
    plan = folder / "plan.yaml"
    demo = Path(ROOT) / "specs" / "demo"
    text = (
        (Path(ROOT) / "specs" / "demo.yaml")
        .read_text(encoding="utf-8")
        .replace("demo/", f"{demo.as_posix()}/")
    )
    plan.write_text(text.split("output:")[0] + "output:\n" + outputs, encoding="utf-8")
    return (
        f"import contextlib, io, os\nfrom irspec.cli import main\nos.chdir({str(folder)!r})\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        f"    assert main(['run', {str(plan)!r}]) == 0"
    )


_HTML = "  - {format: html, path: r.html}\n"


@pytest.fixture(scope="module")
def html_demo_modules(tmp_path_factory) -> frozenset[str]:
    """The modules the demo plan with an HTML report loads (in a fresh interpreter): two tests read them."""
    return _modules_after(_demo_run(tmp_path_factory.mktemp("html-demo"), _HTML))


def test_a_plan_without_figures_loads_no_figure_code(tmp_path, html_demo_modules):
    # the demo plan with its tables and JSON but no HTML report: nothing of the figures loads (issue 35)
    outputs = "  - {format: table}\n  - {format: json, path: r.json}\n  - {format: markdown, path: r.md}\n"
    loaded = _modules_after(_demo_run(tmp_path, outputs))
    assert "irspec.report.markdown" in loaded  # it did report
    assert sorted(_FIGURES & loaded) == []
    # an HTML report loads the SVG writer and no matplotlib
    loaded = html_demo_modules
    assert {"irspec.report.charts", "irspec.report.svg"} <= loaded and "matplotlib" not in loaded


def test_the_demo_plan_loads_neither_scipy_stats_nor_scipy_optimize(html_demo_modules):
    # the demo's paired t-tests take Student's t from scipy.special (scipy.stats, which imports
    # scipy.optimize, cost several times as much to import: issue 35's demo in seconds); a power section's
    # check loads them when a plan has one
    loaded = html_demo_modules
    assert "irspec.stats.significance" in loaded and "scipy.special" in loaded  # it did compare
    assert sorted({"scipy.stats", "scipy.optimize", "matplotlib"} & loaded) == []


def test_a_reproduction_and_a_sign_test_load_no_scipy_stats():
    # their t-tests' and the sign test's tails come from scipy.special, the functions scipy.stats calls
    # (scipy.stats several times as slow to import: a reproduction of the demo's runs took 2 s with it)
    demo = "specs/demo"
    code = (
        "import contextlib, io\nfrom irspec.cli import main\nfrom irspec.stats.significance import paired\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        f"    assert main(['reproduce', '{demo}/qrels.txt', '--original', '{demo}/runs/bm25.run',\n"
        f"                 '{demo}/runs/seeds/colbert-seed1.run', '--reproduced', '{demo}/runs/dense.run',\n"
        f"                 '{demo}/runs/seeds/colbert-seed2.run', '-m', 'nDCG@10', '-m', 'AP']) == 0\n"
        "assert paired([0.1, 0.5, 0.2], [0.3, 0.2, 0.1], test='sign').p_value == 1.0\n"
    )
    loaded = _modules_after(code)
    assert {"irspec.experiment.reproduce", "scipy.special"} <= loaded  # it did reproduce
    assert "scipy.stats" not in loaded
