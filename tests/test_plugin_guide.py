"""The plugin author's guide (``docs/how-to/write-a-plugin.md``) keeps working: its code is run, not just read.

Python blocks that start with ``# file: PATH`` are written to a scratch directory (the example package
``mymetrics`` and its tests); the other Python blocks run in order in one namespace, with that directory
importable and as the working directory; the guide's test files are run with pytest in a subprocess, as
a plugin author would run them. The TOML block must declare the entry point the guide describes, and the
guide must show every hook with its literal signature.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import irspec
from irspec.spec import hooks as hookspecs

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "how-to" / "write-a-plugin.md"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.DOTALL | re.MULTILINE)
FILE_HEADER = re.compile(r"\A# file: (\S+)\n")


def _blocks(language: str) -> list[str]:
    return [code for lang, code in FENCE.findall(GUIDE.read_text(encoding="utf-8")) if lang == language]


def _files_and_snippets() -> tuple[dict[str, str], list[str]]:
    files, snippets = {}, []
    for code in _blocks("python"):
        m = FILE_HEADER.match(code)
        if m:
            files[m.group(1)] = code
        else:
            snippets.append(code)
    return files, snippets


@pytest.fixture
def package(tmp_path, monkeypatch):
    """The guide's files written under ``tmp_path``, importable, as the working directory."""
    files, _ = _files_and_snippets()
    for rel, code in files.items():
        target = tmp_path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(code, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    for name in [n for n in sys.modules if n == "mymetrics" or n.startswith("mymetrics.")]:
        del sys.modules[name]


def test_the_guide_has_the_blocks_this_test_relies_on():
    files, snippets = _files_and_snippets()
    assert {"mymetrics/__init__.py", "mymetrics/perquery.py", "mymetrics/kernels.py", "mymetrics/plugin.py",
            "mymetrics/latency.py", "tests/test_mymetrics.py"} <= set(files)  # fmt: skip
    assert len(snippets) >= 2


def test_every_hook_is_in_the_guide_with_its_literal_signature():
    text = GUIDE.read_text(encoding="utf-8")
    for hook in hookspecs.HOOKS:
        params = ", ".join(hook.__code__.co_varnames[: hook.__code__.co_argcount])
        assert f"`{hook.__name__}({params})`" in text, hook.__name__


def test_the_toml_block_declares_the_entry_point():
    tomllib = pytest.importorskip("tomllib")
    (block,) = _blocks("toml")
    doc = tomllib.loads(block)
    assert doc["project"]["entry-points"]["irspec"] == {"mymetrics": "mymetrics.plugin"}


def test_the_guide_snippets_run(package):
    _, snippets = _files_and_snippets()
    namespace: dict = {"__name__": "guide"}
    for i, code in enumerate(snippets):
        exec(compile(code, f"{GUIDE}:python-block-{i + 1}", "exec"), namespace)
    # the snippets leave irspec as they found it
    with pytest.raises(irspec.UnknownMetricError):
        irspec.parse("AnyRel")


def test_the_guide_test_file_passes_under_pytest(package):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(package), str(ROOT), env.get("PYTHONPATH", "")]).rstrip(
        os.pathsep
    )
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "tests"],
        cwd=package,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    report = textwrap.indent(result.stdout[-3000:] + result.stderr[-2000:], "    ")
    assert result.returncode == 0, report
    assert re.search(r"\b4 passed\b", result.stdout), report
