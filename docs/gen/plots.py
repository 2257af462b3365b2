"""assets/demo/: the demo's report and plots, made at build time by running the demo plan, for the tutorial.

Nothing is committed: each build runs `irspec run specs/demo.yaml` (in a scratch copy of specs/, with the
plan's outputs set to the HTML report and the plots) and puts what it wrote into the site, so the pictures
always show what the code draws today.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import mkdocs_gen_files

ROOT = Path(__file__).resolve().parents[2]
# the plots the tutorial shows (docs/tutorial.md), and the report it links to
FIGURES = ("pr-curves.svg", "differences-nDCG_at_10.svg", "distributions-nDCG_at_10.svg")

with tempfile.TemporaryDirectory() as scratch:
    shutil.copytree(ROOT / "specs", Path(scratch) / "specs", ignore=shutil.ignore_patterns("out"))
    subprocess.run(
        [sys.executable, "-m", "irspec", "run", "specs/demo.yaml",
         "--set", "output=[{format: html, path: out/report.html}, {format: plots, path: out/plots/}]"],
        cwd=scratch, check=True, capture_output=True, text=True,
    )
    out = Path(scratch) / "specs" / "out"
    for name in FIGURES:
        with mkdocs_gen_files.open(f"assets/demo/{name}", "wb") as f:
            f.write((out / "plots" / name).read_bytes())
    with mkdocs_gen_files.open("assets/demo/report.html", "wb") as f:
        f.write((out / "report.html").read_bytes())
