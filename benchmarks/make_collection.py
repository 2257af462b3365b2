"""Write a synthetic TREC collection (qrels + run) for benchmarks.

    python benchmarks/make_collection.py OUTDIR [--queries 5000] [--docs 1000] [--judged 50] [--seed 0]

writes ``OUTDIR/qrels.txt`` (``qid 0 docno label``) and ``OUTDIR/run.txt``
(``qid Q0 docno rank score runid``, ``queries * docs`` lines). Everything is drawn from one seeded
``numpy.random.Generator``, so the same arguments give byte-identical files.

Shape of the data, chosen to look like a real ad hoc collection:

- about ``judged`` judged documents per query, graded 0..3 (mostly 0); about 70% of them are in the
  run, the rest were judged but not retrieved;
- ``docs`` retrieved documents per query, with scores ``0.6 * label + N(0, 1)`` (unjudged retrieved
  documents count as label 0), rounded to 3 decimals so that equal scores (ties) are common;
- docnos ``D`` + 6 digits, distinct within a query, shared across queries by chance.

String building is vectorised (polars ``write_csv`` with ``' '`` as separator), so 5,000,000 run lines
take a few seconds.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np

LABEL_P = (0.6, 0.2, 0.12, 0.08)  # labels 0, 1, 2, 3
RETRIEVED_JUDGED_P = 0.7


BLOCK_QUERIES = 5000
"""Queries generated at once: the memory of a block (~5M lines at 1,000 documents per query), not of
the whole collection. A collection of at most this many queries is one block."""


def make_collection(
    outdir: str | Path,
    *,
    queries: int = 5000,
    docs: int = 1000,
    judged: int = 50,
    seed: int = 0,
) -> tuple[Path, Path]:
    """Write ``qrels.txt`` and ``run.txt`` into ``outdir``, block by block; return their paths."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    qrels_path, run_path = outdir / "qrels.txt", outdir / "run.txt"
    with open(qrels_path, "wb") as qf, open(run_path, "wb") as rf:
        for qrels, run in blocks(queries=queries, docs=docs, judged=judged, seed=seed):
            write_lines(qrels, qf)
            write_lines(run, rf)
    return qrels_path, run_path


def write_lines(frame: Any, f: IO[bytes]) -> None:
    """Append a block (qrels or run) to an open file as space-separated lines."""
    frame.write_csv(f, separator=" ", include_header=False, quote_style="never", float_precision=3)


def blocks(
    *, queries: int = 5000, docs: int = 1000, judged: int = 50, seed: int = 0, block: int = BLOCK_QUERIES
) -> Iterator[tuple[Any, Any]]:
    """The collection as ``(qrels, run)`` polars frames of up to ``block`` queries each, in query
    order, all drawn from one generator seeded with ``seed``."""
    if queries < 1 or docs < 1 or judged < 0 or block < 1:
        raise ValueError("queries, docs and block must be >= 1, judged >= 0")
    rng = np.random.default_rng(seed)
    for first in range(0, queries, block):
        yield _block(rng, np.arange(first, min(first + block, queries)) + 1, docs, judged)


def _block(rng: np.random.Generator, qids: np.ndarray, docs: int, judged: int) -> tuple[Any, Any]:
    """The qrels and run lines of the queries ``qids``."""
    import polars as pl

    queries = len(qids)

    # Per query: docs + judged distinct doc numbers (strictly increasing by construction, so distinct),
    # then shuffled per row. Columns [0, docs) are retrieved, [docs, docs + judged) are candidates for
    # judged-but-not-retrieved documents.
    width = docs + judged
    gaps = rng.integers(1, 8, size=(queries, width), dtype=np.int64)
    offset = rng.integers(0, 999_999 - 8 * width, size=(queries, 1), dtype=np.int64)
    ids = offset + np.cumsum(gaps, axis=1)
    ids = np.take_along_axis(ids, np.argsort(rng.random((queries, width)), axis=1), axis=1)
    retrieved, outside = ids[:, :docs], ids[:, docs:]

    # How many judged documents of each query were retrieved.
    n_judged_ret = np.minimum(rng.binomial(judged, RETRIEVED_JUDGED_P, size=queries), docs)
    labels_all = rng.choice(len(LABEL_P), p=LABEL_P, size=(queries, judged)).astype(np.int64)
    col = np.arange(judged)[None, :]
    judged_is_ret = col < n_judged_ret[:, None]  # the first n of the judged slots are retrieved docs
    # Slot j is retrieved[q, j] if retrieved, else outside[q, j - n] (distinct: outside has `judged` cols).
    out_idx = np.clip(col - n_judged_ret[:, None], 0, judged - 1)
    judged_ids = np.where(
        judged_is_ret,
        retrieved[:, :judged] if docs >= judged else np.pad(retrieved, ((0, 0), (0, judged - docs))),
        np.take_along_axis(outside, out_idx, axis=1),
    )

    # Relevance of each retrieved doc (0 where unjudged) drives its score.
    ret_label = np.zeros((queries, docs), dtype=np.int64)
    k = min(judged, docs)
    ret_label[:, :k] = np.where(judged_is_ret[:, :k], labels_all[:, :k], 0)
    scores = np.round(0.6 * ret_label + rng.normal(0.0, 1.0, size=(queries, docs)), 3)
    order = np.argsort(-scores, axis=1, kind="stable")
    retrieved = np.take_along_axis(retrieved, order, axis=1)
    scores = np.take_along_axis(scores, order, axis=1)

    qids = qids.astype(np.int64)
    docno = pl.format("D{}", pl.col("d").cast(pl.String).str.zfill(6))

    run = pl.DataFrame(
        {
            "q": np.repeat(qids, docs),
            "d": retrieved.ravel(),
            "rank": np.tile(np.arange(1, docs + 1, dtype=np.int64), queries),
            "score": scores.ravel(),
        }
    ).select(
        pl.col("q"),
        pl.lit("Q0").alias("iter"),
        docno.alias("docno"),
        pl.col("rank"),
        pl.col("score"),
        pl.lit("synthetic").alias("runid"),
    )

    qrels = (
        pl.DataFrame(
            {
                "q": np.repeat(qids, judged),
                "d": judged_ids.ravel(),
                "label": labels_all.ravel(),
            }
        )
        .sort("q", "d")
        .select(pl.col("q"), pl.lit("0").alias("iter"), docno.alias("docno"), pl.col("label"))
    )
    return qrels, run


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--queries", type=int, default=5000)
    ap.add_argument("--docs", type=int, default=1000, help="retrieved documents per query")
    ap.add_argument("--judged", type=int, default=50, help="judged documents per query")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    qrels, run = make_collection(
        args.outdir, queries=args.queries, docs=args.docs, judged=args.judged, seed=args.seed
    )
    print(f"wrote {qrels} and {run} in {time.perf_counter() - t0:.2f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
