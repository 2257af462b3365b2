"""assets/demo/: the demo's report and plots, made at build time by running the demo plan, for the tutorial.

Nothing is committed: each build runs the demo plan (``specs/demo.yaml``, in a scratch copy of specs/, its
outputs set to the HTML report) and puts the report into the site, with three of the figures the
``plots`` output writes as files, so the pictures always show what the code draws today.

The figures are the SVG files of the ``plots`` output, byte for byte (the report's figures,
:func:`irspec.plan.execute.report_figures`, drawn unlinked), without the PNG files the output draws
with matplotlib beside them, which the site never shows: they were nine tenths of the plan's time
(issue 35: 9 s of CPU of a build).
The plan runs in this process, from the scratch copy as a user runs it from the repository's root, so
the report names its inputs by the same relative paths as ``irspec run specs/demo.yaml`` does.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from pathlib import Path

import mkdocs_gen_files

from irspec import IrspecWarning
from irspec.plan import load_plan, render_outputs, run_plan
from irspec.plan.execute import report_figures
from irspec.report.plots import render_figures

ROOT = Path(__file__).resolve().parents[2]
# the plots the tutorial shows (docs/tutorial.md), and the report it links to
FIGURES = ("pr-curves", "differences-nDCG_at_10", "distributions-nDCG_at_10")

with tempfile.TemporaryDirectory() as scratch:
    shutil.copytree(ROOT / "specs", Path(scratch) / "specs", ignore=shutil.ignore_patterns("out"))
    here = os.getcwd()
    os.chdir(scratch)
    try:
        # the random run's few judged documents: a warning the report shows at its top, not the build's
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", IrspecWarning)
            plan = load_plan("specs/demo.yaml", ["output=[{format: html, path: out/report.html}]"])
            report = run_plan(plan)
            [(_, page)] = render_outputs(report)
        # the figures as the plots output draws them (without links), as SVG alone
        drawn = {p.name: p.svg for p in render_figures(report_figures(report), formats=("svg",))}
    finally:
        os.chdir(here)
for name in FIGURES:
    with mkdocs_gen_files.open(f"assets/demo/{name}.svg", "wb") as f:
        f.write(drawn[name])
with mkdocs_gen_files.open("assets/demo/report.html", "wb") as f:
    f.write(page.encode("utf-8"))  # as irspec writes a text output
