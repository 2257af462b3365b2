"""irspec-online's subcommands of ``irspec`` (the ``irspec_register_commands`` hook): what each writes,
and the guard every output passes (as tests/test_nothing_lost.py holds irspec's own commands to it: an
output onto any input, however spelled, is refused before anything is read, and every file stays as it
was)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("irspec_online")

from irspec_online import plugin

import irspec
from irspec.cli import build_parser, main
from irspec.testing import registered_plugin

HERE = Path(__file__).resolve().parent
DEMO = HERE.parents[2] / "specs" / "demo"
EXAMPLES = HERE.parent / "examples"


@pytest.fixture(autouse=True)
def online():
    with registered_plugin(plugin) as registry:
        yield registry


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A working folder with two runs and a log (interleaved lists of them, clicked), as the cwd."""
    shutil.copy(DEMO / "runs" / "bm25.run", tmp_path / "a.run")
    shutil.copy(DEMO / "runs" / "dense.run", tmp_path / "b.run")
    shutil.copy(EXAMPLES / "ab.jsonl", tmp_path / "log.jsonl")
    shutil.copy(DEMO / "qrels.txt", tmp_path / "qrels.txt")
    (tmp_path / "pbm.json").write_text(json.dumps({"model": "PBM", "exam": [1.0, 0.6, 0.4, 0.3, 0.2]}))
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _digest(folder: Path) -> dict[str, str]:
    found = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            found[str(path)] = "-> " + os.readlink(path)
        elif stat.S_ISREG(info.st_mode):
            found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


INVOCATIONS = {
    "interleave": [["interleave", "a.run", "b.run", "--seed", "1"]],
    "online": [
        ["online", "log.jsonl", "-m", "CTR"],
        ["online", "log.jsonl", "-m", "CTR", "--counterfactual", "a.run", "--propensity", "pbm.json"],
    ],
    "clickmodel": [["clickmodel", "fit", "log.jsonl", "--model", "pbm"]],
    "simulate": [
        ["simulate", "--qrels", "qrels.txt", "--runs", "a.run", "b.run", "--sessions", "1000"],
        ["simulate", "--clickmodel", "pbm.json", "--runs", "a.run", "b.run", "--sessions", "1000"],
    ],
}
INPUTS = {"a.run", "b.run", "log.jsonl", "pbm.json", "qrels.txt"}


def _outputs(command):
    """The output options of a plugin command, by their first flag."""
    (declared,) = [c for c in plugin.COMMANDS if c.name == command]
    with registered_plugin(plugin):  # at collection, before the fixture; and where autoload is off
        parser = build_parser(command)
    sub = next(a for a in parser._actions if a.dest == "command")
    flags = {a.dest: a.option_strings[0] for a in sub.choices[command]._actions if a.option_strings}
    return [flags[dest] for dest, role in declared.roles.items() if role == "output"]


def _cases():
    for command, argvs in INVOCATIONS.items():
        for argv in argvs:
            for name in [a for a in argv if a in INPUTS]:
                for flag in _outputs(command):
                    yield command, argv, flag, name


def test_every_command_of_the_plugin_has_invocations_reading_each_input():
    """Each command's input roles are read by some invocation here, so that the guard test covers them."""
    for command in plugin.COMMANDS:
        assert command.name in INVOCATIONS, f"irspec {command.name}: give it invocations here"
        parser = build_parser(command.name)
        sub = next(a for a in parser._actions if a.dest == "command")
        actions = {a.dest: a for a in sub.choices[command.name]._actions}
        for dest, role in command.roles.items():
            if role != "input":
                continue
            action = actions[dest]
            used = any(
                (not action.option_strings) or any(f in argv for f in action.option_strings)
                for argv in INVOCATIONS[command.name]
            )
            assert used, f"irspec {command.name}: no invocation reads {dest}"


@pytest.mark.parametrize(("command", "argv", "flag", "name"), list(_cases()))
@pytest.mark.parametrize("spelling", ["typed", "dotdot", "absolute", "symlink", "hardlink"])
def test_an_output_never_overwrites_an_input(folder, capsys, command, argv, flag, name, spelling):
    if spelling == "symlink":
        os.symlink(name, folder / "link")
    elif spelling == "hardlink":
        os.link(folder / name, folder / "hard")
    target = {"typed": name, "dotdot": f"sub/../{name}", "absolute": str(folder / name), "symlink": "link",
              "hardlink": "hard"}[spelling]  # fmt: skip
    before = _digest(folder)
    capsys.readouterr()
    assert main([*argv, flag, target]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(
        f"irspec: error: cannot write {target!r}: it is an input"
    ), err
    assert _digest(folder) == before


# --------------------------------------------------------------------------------------------------
# irspec interleave


def test_interleave_writes_a_line_per_query_with_each_slots_origin(folder, capsys):
    assert main(["interleave", "a.run", "b.run", "--seed", "1", "--depth", "5", "-o", "serve.jsonl"]) == 0
    lines = [json.loads(line) for line in (folder / "serve.jsonl").read_text().splitlines()]
    queries = sorted({line.split()[0] for line in (folder / "a.run").read_text().splitlines()})
    assert [line["qid"] for line in lines] == queries
    first = lines[0]
    assert set(first) == {"qid", "query", "results", "origins", "method", "a", "b"}
    assert (first["method"], first["a"], first["b"]) == ("TeamDraft", "a", "b")
    assert len(first["results"]) == len(first["origins"]) == 5
    assert {o["team"] for line in lines for o in line["origins"]} == {"a", "b"}


def test_interleave_is_deterministic_and_each_query_independent_of_the_others(folder, capsys):
    """The same seed gives the same lists; a query's list does not depend on the other queries served."""
    main(["interleave", "a.run", "b.run", "--seed", "7", "--method", "probabilistic"])
    once = capsys.readouterr().out
    main(["interleave", "a.run", "b.run", "--seed", "7", "--method", "probabilistic"])
    assert capsys.readouterr().out == once
    lines = once.splitlines()
    qid = json.loads(lines[3])["qid"]
    for run in ("a.run", "b.run"):
        text = (folder / run).read_text().splitlines()
        (folder / f"one-{run}").write_text("".join(line + "\n" for line in text if line.split()[0] == qid))
    main(["interleave", "one-a.run", "one-b.run", "--seed", "7", "--method", "probabilistic"])
    alone = json.loads(capsys.readouterr().out)
    assert {**alone, "a": "a", "b": "b"} == json.loads(lines[3])
    main(["interleave", "a.run", "b.run", "--seed", "8", "--method", "probabilistic"])
    assert capsys.readouterr().out != once


def test_interleave_says_which_queries_one_run_lacks(folder, capsys):
    text = (folder / "b.run").read_text().splitlines()
    dropped = text[0].split()[0]
    (folder / "b.run").write_text("".join(line + "\n" for line in text if line.split()[0] != dropped))
    assert main(["interleave", "a.run", "b.run"]) == 0
    out, err = capsys.readouterr()
    assert dropped not in [json.loads(line)["qid"] for line in out.splitlines()]
    assert f"1 queries answered by one run only, not interleaved: {dropped}" in err


@pytest.mark.parametrize(("argv", "message"), [
    (["--method", "team-drift"], "did you mean 'team-draft'?"),
])  # fmt: skip
def test_interleave_refuses_a_bad_option(folder, capsys, argv, message):
    assert main(["interleave", "a.run", "b.run", *argv]) == 2
    assert message in capsys.readouterr().err


# --------------------------------------------------------------------------------------------------
# irspec online


def test_online_prints_the_means_and_tables(folder, capsys):
    assert main(["online", "log.jsonl", "-m", "CTR, Abandonment", "--ab", "control"]) == 0
    out = capsys.readouterr().out
    assert "log: A/B test: treatment against control (unit: user)" in out and "log: Top queries" in out
    assert main(["online", "log.jsonl", "-m", "CTR", "-f", "json", "-o", "out.json"]) == 0
    doc = json.loads((folder / "out.json").read_text())
    import irspec

    assert doc["means"] == irspec.evaluate_input("log.jsonl", "CTR").aggregate()
    assert [t["title"] for t in doc["tables"]] == ["Top queries", "Queries per hour"]


def test_online_reads_several_files_as_one_log(folder, capsys):
    lines = (folder / "log.jsonl").read_text().splitlines(keepends=True)
    (folder / "part1.jsonl").write_text("".join(lines[:200]))
    (folder / "part2.jsonl").write_text("".join(lines[200:]))
    main(["online", "log.jsonl", "-m", "CTR, Abandonment", "-f", "json"])
    whole = json.loads(capsys.readouterr().out)
    main(["online", "part1.jsonl", "part2.jsonl", "-m", "CTR, Abandonment", "-f", "json"])
    parts = json.loads(capsys.readouterr().out)
    assert parts["means"] == whole["means"] and parts["tables"] == whole["tables"]


def test_online_locates_a_bad_record_in_its_own_file(folder, capsys):
    (folder / "bad.jsonl").write_text('{"session": "s"}\n')
    assert main(["online", "log.jsonl", "bad.jsonl", "-m", "CTR"]) == 2
    assert "bad.jsonl:1: missing required key 'query'" in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "message"), [
    (["--unit", "session"], "--unit is the A/B test's"),
    (["--propensity", "pbm.json"], "--propensity and --clip are the counterfactual estimate's"),
])  # fmt: skip
def test_online_refuses_an_option_without_its_test(folder, capsys, argv, message):
    assert main(["online", "log.jsonl", "-m", "CTR", *argv]) == 2
    assert message in capsys.readouterr().err


def test_online_clip_is_deprecated_and_any_other_than_the_metrics_default_refused(folder, capsys):
    """--clip (a plan's online.counterfactual.clip) was checked, then read by no estimate: ClippedIPS
    clipped at its own clip, 10 unless given, so --clip 2 printed the clip-10 values without a word."""
    (folder / "exam.json").write_text(
        json.dumps({"propensities": [1.0, 0.5, 0.3, 0.2, 0.1, 0.08, 0.06, 0.05, 0.04, 0.03]})
    )
    log = str(EXAMPLES / "logged.jsonl.gz")  # bm25's lists, clicked
    argv = ["online", log, "--counterfactual", "b.run", "--propensity", "exam.json", "-f", "json"]
    assert main([*argv, "-m", "ClippedIPS(ctr)@5", "--clip", "2"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "give it in the metric: ClippedIPS(ctr, clip=2)@10" in captured.err
    assert main([*argv, "-m", "ClippedIPS(ctr)@5"]) == 0
    default = json.loads(capsys.readouterr().out)["means"]
    with pytest.warns(DeprecationWarning, match="online.counterfactual.clip"):
        assert main([*argv, "-m", "ClippedIPS(ctr)@5", "--clip", "10"]) == 0
    assert json.loads(capsys.readouterr().out)["means"] == default
    assert main([*argv, "-m", "ClippedIPS(ctr, clip=2)@5"]) == 0
    clipped = json.loads(capsys.readouterr().out)["means"]
    assert clipped["ClippedIPS(clip=2)@5"] < default["ClippedIPS@5"]  # some weight above 2 was clipped
    with pytest.raises(irspec.EvaluationError, match=r"online\.counterfactual\.clip \(--clip\) 2 would not"):
        irspec.evaluate_input(
            log, "ClippedIPS(ctr)@5", options={"online": {"counterfactual": {"run": "b.run", "clip": 2}}}
        )


@pytest.mark.parametrize(("argv", "message"), [
    (["interleave", "a.run", "b.run", "--seed", "-1"], "--seed: expected a seed, an integer from 0"),
    (["interleave", "a.run", "b.run", "--depth", "9" * 20], "--depth: expected a number of documents, an integer from 1 to 100,000"),
    (["interleave", "a.run", "b.run", "--depth", "0"], "--depth: expected a number of documents, an integer from 1"),
    (["interleave", "a.run", "b.run", "--method", "probabilistic(tau=310)"], "'tau': got 310.0, expected a number > 0 and <= 50"),
    (["simulate", "--qrels", "qrels.txt", "--runs", "a.run", "b.run", "--seed", "-1"], "--seed: expected a seed"),
    (["simulate", "--qrels", "qrels.txt", "--runs", "a.run", "b.run", "--sessions", "1e30"],
     "--sessions: expected a whole number of sessions from 2 to 1e+09, got '1e30'"),
    (["simulate", "--qrels", "qrels.txt", "--runs", "a.run", "b.run", "--log", "x.jsonl", "--log-sessions", "1e30"],
     "--log-sessions: expected a whole number of sessions"),
    (["clickmodel", "fit", "log.jsonl", "--iterations", "9" * 20], "--iterations: expected a number of EM iterations"),
    # 0 was said to be allowed (an integer from 0), then refused as "at least 1"
    (["clickmodel", "fit", "log.jsonl", "--iterations", "0"], "--iterations: expected a number of EM iterations, an integer from 1"),
])  # fmt: skip
def test_absurd_numbers_are_refused_naming_the_option(folder, capsys, argv, message):
    # each ended in a traceback (numpy's negative seed, an overflow), or ran for ever (the iterations)
    try:
        code = main(argv)
    except SystemExit as stop:  # argparse's refusal
        code = stop.code
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.splitlines()[-1]) < 200


@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_help_and_version_list_the_commands_without_loading_what_they_run_with(flag):
    # A user's process, the plugin loaded from its entry point: --help and --version declare every
    # command, irspec-online's too, and should not pay numpy's and polars' import (~0.4 s) for it.
    user = {k: v for k, v in os.environ.items() if k != "IRSPEC_DISABLE_PLUGIN_AUTOLOAD"}
    probe = (
        "import contextlib, io, json, sys\n"
        "from irspec.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):\n"
        f"    main([{flag!r}])\n"
        "print(json.dumps({'out': out.getvalue(), 'modules': sorted(sys.modules)}))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], env=user, capture_output=True, text=True, check=True)
    seen = json.loads(done.stdout)
    heavy = {m.split(".")[0] for m in seen["modules"]} & {"numpy", "polars", "pyarrow"}
    assert "irspec_online.plugin" in seen["modules"] and not heavy, sorted(heavy)
    if flag == "--help":
        assert all(c in seen["out"] for c in ("interleave", "online", "clickmodel", "simulate"))


def test_ab_interleaving_counterfactual_and_simulate_load_no_scipy_stats(folder):
    # Their normal and t quantiles and tails, the sample-ratio check's chi-square and the sign test's
    # binomial tail come from scipy.special, the functions scipy.stats' distributions call: importing
    # scipy.stats costs ~0.6 s, more than these commands' work on a small log. One user's process runs
    # all four.
    user = {k: v for k, v in os.environ.items() if k != "IRSPEC_DISABLE_PLUGIN_AUTOLOAD"}
    runs = f"{DEMO / 'runs' / 'bm25.run'!s}", f"{DEMO / 'runs' / 'dense.run'!s}"
    commands = [
        ["run", str(EXAMPLES / "ab.yaml")],
        ["online", str(EXAMPLES / "interleaved.jsonl.gz"), "-m", "Interleaving(team-draft), CTR", "-f", "json"],
        ["online", str(EXAMPLES / "shuffled.jsonl.gz"), "--counterfactual", runs[1], "-m",
         "IPS(ctr)@10, SNIPS(ctr)@10", "-f", "json"],
        ["simulate", "--qrels", "qrels.txt", "--runs", *runs, "--sessions", "1e4", "-f", "json"],
    ]  # fmt: skip
    probe = (
        "import contextlib, io, json, sys\n"
        "from irspec.cli import main\n"
        "codes = []\n"
        f"for argv in {commands!r}:\n"
        "    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        "        codes.append(main(argv))\n"
        "print(json.dumps({'codes': codes, 'modules': sorted(sys.modules)}))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], env=user, capture_output=True, text=True, check=True)
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["codes"] == [0, 0, 0, 0]
    assert "scipy.special" in seen["modules"] and "scipy.stats" not in seen["modules"]


def test_clickmodel_fit_holding_out_every_session_says_so(folder, capsys):
    """It said "the log has no records to fit" of a log of 2,000 records."""
    assert main(["clickmodel", "fit", "log.jsonl", "--holdout", "0.9999"]) == 2
    assert "no session is left to fit: the held-out share, 0.9999, took all" in capsys.readouterr().err
