"""Every example in the documentation runs: ``python -m pytest docs`` collects the fenced blocks of each page.

Each page runs in a scratch directory of its own holding a copy of the repository's demo data
(``specs/``: the demo runs, qrels and plans) and of irspec-online's example logs, as a user would run the
examples from the repository's root. The blocks of a page run in order, one test each
(``docs/how-to/plans.md::block3-line40-sh``); running one block runs the blocks before it first.

- ```` ```python ````: executed, the page's blocks sharing one namespace (a notebook, in effect). A
  statement whose comment shows a value (``res.aggregate()  # {"nDCG@10": ..., "AP": ...}``, a comment
  that starts with ``{`` or ``[``) must give that value: the expression's, or the name's it assigns, as
  its ``repr``, ``...`` standing for any text and either quote for a quote (``check_shown_values``).
- ```` ```pycon ````: ``>>>`` lines executed in that namespace and their shown output checked (doctest,
  with ``...`` for any text and whitespace normalised).
- ```` ```sh ````: run by bash with ``set -euo pipefail``; any failing command fails the block.
  ``pip install`` commands are checked, not run: each local path must exist and each extra be declared
  in its ``pyproject.toml``.
- ```` ```console ````: ``$ command`` lines run, and the output shown after each (stdout and stderr) is
  checked line by line, ``...`` standing for any text; an exit code other than 0 must show an error.
- A block whose first line is ``# file: PATH`` (Python, YAML, TOML, JSON, text) is written, without that
  line, to that path in the scratch directory, for the blocks after it.
- A YAML block whose first line is ``# from: PATH`` shows a file of the repository: it must read as the
  same data as that file (comments aside). Other ```` ```yaml ```` fragments of a plan are parsed, and
  their top-level keys must be keys of the plan schema; ```` ```toml ```` and ```` ```json ```` blocks
  are parsed.

A block that cannot run where the tests run (it downloads a dataset) is preceded by
``<!-- skip: deliberate: REASON -->``: it is collected and skipped with that reason, which the
repository's ``IRSPEC_STRICT_SKIPS`` rule (conftest.py at the root) accepts. Such blocks are few.

The examples see every installed plugin (the shipped three in CI), although ``tests/conftest.py``
switches plugin autoloading off for irspec's own tests: each page turns it back on while it runs.
"""

from __future__ import annotations

import ast
import doctest
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import tokenize
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import tomllib
import yaml

import irspec
import irspec.plan

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
SKIP = re.compile(r"<!--\s*skip:\s*(?P<reason>.*?)\s*-->\s*$")
FILE = re.compile(r"\A(?:#|//) file: (\S+)\n")
FROM = re.compile(r"\A# from: (\S+)\n")
RUN = {"python", "pycon", "sh", "bash", "console"}
CHECK = {"yaml", "toml", "json", "jsonl"}
AUTOLOAD = "IRSPEC_DISABLE_PLUGIN_AUTOLOAD"


@dataclass
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    lang: str
    body: str
    skip: str | None

    @property
    def file(self) -> str | None:
        m = FILE.match(self.body)
        return m.group(1) if m else None


def blocks(page: Path) -> list[Block]:
    """The page's fenced blocks that run or are checked, in order."""
    text = page.read_text(encoding="utf-8")
    found = []
    for m in FENCE.finditer(text):
        lang = (m.group("info").strip().split() or [""])[0].lower()
        body = textwrap.dedent(m.group("body")) if m.group("indent") else m.group("body")
        line = text.count("\n", 0, m.start()) + 1
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        skip = SKIP.search(before)
        block = Block(page, line, lang, body, skip.group("reason") if skip else None)
        if lang in RUN or lang in CHECK or block.file:
            found.append(block)
    return found


def _registry_cache():
    """The cache of irspec's default registry (the module behind ``irspec.get_registry``), cleared when
    plugin autoloading is switched on or off."""
    module = sys.modules[irspec.get_registry.__module__]
    cached = getattr(module, "_default_registry", None)
    if cached is None or not hasattr(cached, "cache_clear"):
        raise RuntimeError(
            f"docs/conftest.py: {module.__name__}._default_registry is gone; update how the docs "
            "tests switch plugin autoloading back on"
        )
    return cached


EXECUTOR_ENV = f"spark.executorEnv.{AUTOLOAD}"


def _spark_jvm_system():
    """``java.lang.System`` of the JVM an earlier Spark session launched, if there is one."""
    if "pyspark" not in sys.modules:
        return None
    from pyspark import SparkContext

    return None if SparkContext._jvm is None else SparkContext._jvm.java.lang.System


def _spark_environment() -> dict[str, str] | None:
    """The environment the active SparkContext gives its Python workers, if one is running."""
    if "pyspark" not in sys.modules:
        return None
    from pyspark import SparkContext

    context = SparkContext._active_spark_context
    return None if context is None else context.environment


@dataclass
class PageState:
    """What the blocks of one page share: the scratch directory, the namespace, how far they ran."""

    directory: Path
    namespace: dict[str, Any] = field(default_factory=dict)
    done: int = 0  # blocks run so far
    failed: Block | None = None


def scratch(tmp: Path) -> Path:
    shutil.copytree(ROOT / "specs", tmp / "specs", ignore=shutil.ignore_patterns("out"))
    examples = ROOT / "plugins" / "irspec-online" / "examples"
    if examples.is_dir():
        shutil.copytree(examples, tmp / "plugins" / "irspec-online" / "examples")
    return tmp


class MarkdownPage(pytest.File):
    """One page of the documentation: an item per block that runs or is checked."""

    def collect(self):
        for i, block in enumerate(blocks(self.path)):
            yield BlockItem.from_parent(
                self, name=f"block{i + 1}-line{block.line}-{block.lang or 'file'}", block=block, index=i
            )

    def setup(self) -> None:
        self.blocks = blocks(self.path)
        prefix = re.sub(r"\W+", "-", str(self.path.relative_to(DOCS))) + "-"
        self.state = PageState(scratch(Path(tempfile.mkdtemp(prefix=prefix))))
        self.saved_env = os.environ.get(AUTOLOAD)
        os.environ.pop(AUTOLOAD, None)  # the examples see the installed plugins, as a user's session does
        _registry_cache().cache_clear()
        # A Spark JVM started by an earlier test has autoloading off in its environment, which its Python
        # workers inherit: the active context's Python functions carry an override (as the plugins' Spark
        # tests do), and a context the page starts in that JVM reads it from a system property.
        self.spark_environment = _spark_environment()
        if self.spark_environment is not None:
            self.saved_spark = self.spark_environment.get(AUTOLOAD)
            self.spark_environment[AUTOLOAD] = ""
        self.spark_property = _spark_jvm_system()
        if self.spark_property is not None:
            self.saved_property = self.spark_property.getProperty(EXECUTOR_ENV)
            self.spark_property.setProperty(EXECUTOR_ENV, "")
        self.saved_path = list(sys.path)
        sys.path.insert(0, str(self.state.directory))  # modules a page writes (# file: mymetrics/...) import
        self.saved_modules = set(sys.modules)

    def teardown(self) -> None:
        sys.path[:] = self.saved_path
        for name in set(sys.modules) - self.saved_modules:
            module_file = getattr(sys.modules[name], "__file__", None) or ""
            if module_file.startswith(str(self.state.directory)):
                del sys.modules[name]
        if self.saved_env is not None:
            os.environ[AUTOLOAD] = self.saved_env
        _registry_cache().cache_clear()
        if self.spark_environment is not None:
            if self.saved_spark is None:
                self.spark_environment.pop(AUTOLOAD, None)
            else:
                self.spark_environment[AUTOLOAD] = self.saved_spark
        if self.spark_property is not None:
            if self.saved_property is None:
                self.spark_property.clearProperty(EXECUTOR_ENV)
            else:
                self.spark_property.setProperty(EXECUTOR_ENV, self.saved_property)
        shutil.rmtree(self.state.directory, ignore_errors=True)

    def run_through(self, index: int) -> None:
        """Run the page's blocks up to and including ``index``, each once."""
        state = self.state
        while state.done <= index:
            block = self.blocks[state.done]
            state.done += 1
            if state.failed is not None:
                raise BlockError(f"not run: the block at line {state.failed.line} failed first")
            if block.skip is not None:
                continue
            try:
                run_block(block, state)
            except BaseException:
                state.failed = block
                raise


class BlockError(Exception):
    """A block that failed, with what it printed."""


class BlockItem(pytest.Item):
    def __init__(self, *, block: Block, index: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.block, self.index = block, index

    def runtest(self) -> None:
        if self.block.skip is not None:
            pytest.skip(self.block.skip)
        cwd = os.getcwd()
        os.chdir(self.parent.state.directory)
        try:
            self.parent.run_through(self.index)
        finally:
            os.chdir(cwd)

    def repr_failure(self, excinfo, style=None):
        where = f"{self.block.page.relative_to(ROOT)}:{self.block.line} ({self.block.lang or 'file'} block)"
        if isinstance(excinfo.value, BlockError):
            return f"{where}\n{excinfo.value}"
        return f"{where}\n{super().repr_failure(excinfo, style)}"

    def reportinfo(self):
        return self.block.page, self.block.line - 1, f"{self.block.page.relative_to(ROOT)}:{self.block.line}"


def pytest_configure(config):
    # The examples' own warnings (a run that misses qrels queries, few judged documents) are part of what
    # they show; in the summary they would bury an unexpected warning (tests/conftest.py does the same).
    config.addinivalue_line("filterwarnings", "ignore::irspec.IrspecWarning")


def pytest_collect_file(file_path: Path, parent):
    if file_path.suffix == ".md" and DOCS in file_path.parents:
        return MarkdownPage.from_parent(parent, path=file_path)
    return None


# --------------------------------------------------------------------------------------------------
# Running one block


def run_block(block: Block, state: PageState) -> None:
    if block.file:
        target = state.directory / block.file
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(
            FILE.sub("", block.body, count=1), encoding="utf-8"
        )  # its lines numbered as the reader counts them
        check_text(block)
        return
    if block.lang == "python":
        run_python(block.body, state.namespace, str(block.page), block.line)
    elif block.lang == "pycon":
        run_doctest(block, state)
    elif block.lang in ("sh", "bash"):
        run_shell(block, state)
    elif block.lang == "console":
        run_console(block, state)
    else:
        check_text(block)


def shown_value(comment: str) -> str | None:
    """The value a comment shows: the bracketed text it starts with (``{...}``, ``[...]``, up to the bracket
    that closes the first), or None for a comment in words."""
    text = comment.lstrip("#").strip()
    if not text.startswith(("{", "[")):
        return None
    depth, quote = 0, None
    for i, char in enumerate(text):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "{[(":
            depth += 1
        elif char in "}])":
            depth -= 1
            if depth == 0:
                return text[: i + 1]
    return text


def value_matches(shown: str, value: object) -> bool:
    """``repr(value)`` is what the comment shows, ``...`` standing for any text, either quote for a quote and
    whitespace for any whitespace; a dict of another class (pytrec_eval's ``defaultdict``) may be shown by
    its items, as a dict."""

    def plain(text: str) -> str:
        return " ".join(text.replace('"', "'").split())

    pattern = ".*?".join(re.escape(part) for part in plain(shown).split("..."))
    shown_as = [repr(value)] + (
        [repr(dict(value))] if isinstance(value, dict) and type(value) is not dict else []
    )
    return any(re.fullmatch(pattern, plain(text), re.DOTALL) is not None for text in shown_as)


def run_python(code: str, namespace: dict[str, Any], filename: str, line: int) -> None:
    """Run a block of Python statement by statement in ``namespace`` (its lines numbered from ``line``),
    checking each value a comment shows: a statement's own (an expression, evaluated once), or that of
    the name an assignment binds (at any depth: ``qrels = ...`` inside a ``with``, once it has run)."""
    source = "\n" * line + code
    comments = {
        token.start[0]: token.string
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    }

    def check(shown: str | None, value: object, where: int) -> None:
        if shown is not None and not value_matches(shown, value):
            raise BlockError(
                f"{filename}:{where}: the comment shows {shown}\nthe value is {repr(value)[:400]}"
            )

    for statement in ast.parse(source, filename).body:
        shown = shown_value(comments.get(statement.end_lineno or 0, ""))
        if isinstance(statement, ast.Expr) and shown is not None:
            value = eval(compile(ast.Expression(statement.value), filename, "eval"), namespace)
            check(shown, value, statement.end_lineno or 0)
            continue
        exec(compile(ast.Module([statement], type_ignores=[]), filename, "exec"), namespace)
        for node in ast.walk(statement):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                check(
                    shown_value(comments.get(node.end_lineno or 0, "")),
                    namespace.get(node.targets[0].id),
                    node.end_lineno or 0,
                )


def check_text(block: Block) -> None:
    """A YAML, TOML or JSON block parses; a plan fragment uses only the plan's keys."""
    body = FILE.sub("", block.body, count=1)
    if block.lang == "yaml":
        doc = yaml.safe_load(body)
        shown = FROM.match(body)
        if shown:
            assert doc == yaml.safe_load((ROOT / shown.group(1)).read_text(encoding="utf-8")), (
                f"the block differs from {shown.group(1)}: show the file as it is"
            )
        elif not block.file and isinstance(doc, dict):
            schema = irspec.plan.schema()  # with the installed plugins' sections
            unknown = set(doc) - set(schema["properties"])
            assert not unknown, f"keys that are not a plan's: {sorted(unknown)}"
    elif block.lang == "toml":
        tomllib.loads(body)
    elif block.lang == "json":
        json.loads(body)
    elif block.lang == "jsonl":
        for line in body.splitlines():
            if line.strip():
                json.loads(line)


def run_doctest(block: Block, state: PageState) -> None:
    parser = doctest.DocTestParser()
    test = parser.get_doctest(block.body, {}, f"{block.page.name}:{block.line}", str(block.page), block.line)
    test.globs = (
        state.namespace
    )  # DocTest copies the globals it is given: the page's blocks share one namespace
    out = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    result = runner.run(test, out=out.write, clear_globs=False)
    if result.failed:
        raise BlockError(out.getvalue())


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env.pop(AUTOLOAD, None)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # this venv's irspec
    env["PYTHONUNBUFFERED"] = "1"  # stdout and stderr in the order the program wrote them
    env.pop("COLUMNS", None)
    return env


PIP = re.compile(r"^\s*pip install\b(.*)$")


def check_pip(command: str) -> None:
    """``pip install`` arguments that name this repository's packages: the paths exist and the extras are
    declared (``.[test,docs]``, ``-e plugins/irspec-online[spark]``, ``'irspec[datasets]'``)."""
    for arg in re.findall(r"""(?:"([^"]+)"|'([^']+)'|(\S+))""", command):
        text = next(a for a in arg if a)
        if text.startswith("-"):
            continue
        m = re.fullmatch(r"([^\[\]]+)(?:\[([^\]]*)\])?", text)
        assert m, f"pip install argument {text!r} not understood"
        target, extras = m.group(1), [e for e in (m.group(2) or "").split(",") if e]
        if target in (".", "irspec"):
            project = ROOT
        elif (ROOT / target).is_dir():
            project = ROOT / target
        elif (ROOT / "plugins" / target).is_dir():
            project = ROOT / "plugins" / target
        else:
            raise AssertionError(f"pip install {text!r}: neither a path nor a package of this repository")
        declared = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))["project"].get(
            "optional-dependencies", {}
        )
        missing = [e for e in extras if e not in declared]
        assert not missing, (
            f"pip install {text!r}: extras {missing} are not declared in {project / 'pyproject.toml'}"
        )


def shell_script(body: str) -> str:
    """The block with its ``pip install`` commands checked and taken out."""
    lines = []
    for line in body.splitlines():
        parts = re.split(r"\s+&&\s+", line)
        kept = []
        for part in parts:
            m = PIP.match(part)
            if m:
                check_pip(m.group(1).split("#")[0])
            else:
                kept.append(part)
        lines.append(" && ".join(kept) if kept else ":")
    return "\n".join(lines)


def run_shell(block: Block, state: PageState) -> None:
    proc = subprocess.run(
        ["bash", "-c", "set -euo pipefail\n" + shell_script(block.body)],
        check=False,
        cwd=state.directory,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0:
        raise BlockError(
            f"exit code {proc.returncode}\n--- stdout\n{proc.stdout[-3000:]}\n--- stderr\n{proc.stderr[-3000:]}"
        )


def console_steps(body: str) -> list[tuple[str, list[str]]]:
    """``$ command`` lines (a trailing backslash continues one) and the output shown after each."""
    steps: list[tuple[str, list[str]]] = []
    lines = body.splitlines()
    i = 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            raise BlockError(f"console block: expected '$ command', got {lines[i]!r}")
        command = lines[i][2:]
        while command.endswith("\\") and i + 1 < len(lines):
            i += 1
            command = command[:-1] + "\n" + lines[i]
        i += 1
        shown = []
        while i < len(lines) and not lines[i].startswith("$ "):
            shown.append(lines[i])
            i += 1
        steps.append((command, shown))
    return steps


def matches(shown: list[str], printed: str) -> bool:
    """The printed text is what is shown, ``...`` standing for any text (several lines too)."""
    want = "\n".join(line.rstrip() for line in shown).strip("\n")
    got = "\n".join(line.rstrip() for line in printed.splitlines()).strip("\n")
    pattern = ".*?".join(re.escape(part) for part in want.split("..."))
    return re.fullmatch(pattern, got, re.DOTALL) is not None


def run_console(block: Block, state: PageState) -> None:
    for command, shown in console_steps(block.body):
        proc = subprocess.run(
            ["bash", "-c", "set -o pipefail\n" + shell_script(command)],
            check=False,
            cwd=state.directory,
            env=environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=600,
        )
        if not matches(shown, proc.stdout):
            raise BlockError(
                f"$ {command}\n--- shown in the page\n"
                + "\n".join(shown)
                + f"\n--- printed (exit code {proc.returncode})\n{proc.stdout}"
            )
        if proc.returncode != 0 and "error:" not in "\n".join(shown):
            raise BlockError(
                f"$ {command}\nexit code {proc.returncode}, but the page shows no error:\n{proc.stdout}"
            )
