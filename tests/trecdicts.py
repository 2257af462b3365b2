"""pytrec_eval's dicts in tests: TREC files read into them by the simplest code that can do it, for tests
that hand the same files to pytrec_eval (an independent reader of irspec's inputs), and results in its
shape compared with pytrec_eval's."""

from __future__ import annotations

import math
from pathlib import Path

TOL = 0.0
"""How far a value may be from pytrec_eval's: not at all. Both compute in doubles, with the C library's
``log`` and trec_eval's order of operations (ndcg_rel's product before its quotient, a geometric mean's
``log`` not numpy's), so every value is pytrec_eval's to the last bit."""


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


def differences(got: dict, expected: dict, tol: float = TOL) -> list[str]:
    """The differences between two results ``{query: {key: value}}``, in queries, their order, keys, key
    order and values (NaN equal to NaN)."""
    if list(got) != list(expected):
        return [f"queries {list(got)!r} != {list(expected)!r}"]
    out = []
    for q, want in expected.items():
        if list(got[q]) != list(want):
            out.append(f"{q!r}: keys {list(got[q])} != {list(want)}")
            continue
        for key, v in want.items():
            g = got[q][key]
            if not (math.isnan(g) and math.isnan(v)) and not abs(g - v) <= tol:
                out.append(f"{q!r} {key}: {g!r} != pytrec_eval's {v!r}")
    return out


def pytrec_safe(qrels: dict, run: dict) -> dict:
    """``run`` with a non-empty ranking of a judged query first: pytrec_eval's trec_eval misreads an empty
    ranking that is the first it evaluates (its buffers are not allocated yet; see
    ``tests/test_compat_pytrec_eval.py``'s ``test_an_empty_ranking_first_scores_as_anywhere_else``)."""
    first = next((q for q, docs in run.items() if docs and qrels.get(q)), None)
    return run if first is None else {first: run[first], **{q: d for q, d in run.items() if q != first}}
