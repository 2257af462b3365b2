"""TREC files read into pytrec_eval's dicts by the simplest code that can do it, for tests that hand the
same files to pytrec_eval (an independent reader of irspec's inputs)."""

from __future__ import annotations

from pathlib import Path


def read_trec_dict(path: Path, kind: str) -> dict[str, dict[str, int | float]]:
    """``{qid: {docno: label}}`` of a qrels file (``kind="qrels"``) or ``{qid: {docno: score}}`` of a run."""
    out: dict[str, dict[str, int | float]] = {}
    for line in Path(path).read_text().splitlines():
        f = line.split()
        if kind == "qrels":
            out.setdefault(f[0], {})[f[2]] = int(f[3])
        else:
            out.setdefault(f[0], {})[f[2]] = float(f[4])
    return out
