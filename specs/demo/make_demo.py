"""Write the demo collection of ``specs/demo.yaml``: graded qrels and four runs of clearly different quality.

    python specs/demo/make_demo.py          # rewrites specs/demo/qrels.txt, qrels.llm.txt and runs/*.run

Everything comes from one ``numpy.random.Generator`` with a fixed seed, so the files are the same on
every machine and every rerun (they are checked in; rerun this only to change the collection).

The collection: 50 queries (``q01``..``q50``), each with 150 candidate documents whose true relevance
grade is 0..3 (mostly 0, at least one relevant per query). About 30 candidates per query are judged:
every relevant one and a random sample of the rest, as pooling would; the rest are unjudged. Each run
scores every candidate as ``skill * query_ease * grade + N(0, 1)`` and keeps its top 45, so runs share
the queries' difficulty (the pairing that significance tests exploit) and differ in skill:

    hybrid (1.6) > dense (0.95) > bm25 (0.8) > random (0)

45 documents per query keeps the four runs and the qrels under 300 KB (100 would take about 600 KB).

Then three seeds of one more method, ``runs/seeds/colbert-seed{1,2,3}.run`` (a directory of their own,
so that ``runs/*.run`` still means the four runs; ``specs/systems.yaml`` makes
them one system): from a generator of their own (so the four runs above stay byte for byte what they
were), each seed scores ``skill_seed * query_ease * grade + noise``, where the noise is half shared by
the three seeds (the method) and half the seed's own, and ``skill_seed`` is 1.1 give or take a
seed-specific 0.1: clearly one method, not three copies.

``qrels.llm.txt`` is a second set of judgments of the same queries, as an LLM judge might give: drawn
afterwards from a generator of its own (``LLM_SEED``), so the files above stay as they were. It leaves
about 8% of the judged pairs unjudged, is lenient (a grade-0 document gets 1 with probability 0.15)
and moves 30% of the other grades one step up or down (within 0..3); it also judges the documents of
bm25's top 10 that ``qrels.txt`` left unjudged, calling half of them relevant (grade 1), as a judge
swayed by lexical overlap might. So it agrees with ``qrels.txt`` only in part, on labels and on the
ranking of the runs (``specs/agreement.yaml`` measures how far).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

SEED = 20240517
QUERIES = 50
CANDIDATES = 150
RETRIEVED = 45
JUDGED = 30
GRADE_P = (0.88, 0.06, 0.04, 0.02)  # grades 0, 1, 2, 3
SKILL = {"bm25": 0.8, "dense": 0.95, "hybrid": 1.6, "random": 0.0}
SEEDS_NAME = "colbert"
SEEDS_SKILL = 1.1
SEEDS = 3
LLM_SEED = 20250214
LLM_SKIP, LLM_LENIENT, LLM_SHIFT = 0.08, 0.15, 0.30


def make_demo(outdir: str | Path = Path(__file__).parent) -> None:
    """Write ``qrels.txt`` and ``runs/<name>.run`` under ``outdir``."""
    out = Path(outdir)
    (out / "runs" / "seeds").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(SEED)
    qrels_lines: list[str] = []
    run_lines: dict[str, list[str]] = {name: [] for name in SKILL}
    topics = []  # what the seeds' runs need of each query, drawn above from the main generator
    for q in range(1, QUERIES + 1):
        qid = f"q{q:02d}"
        docnos = np.array([f"d{n:04d}" for n in rng.choice(10_000, CANDIDATES, replace=False)])
        grades = rng.choice(4, CANDIDATES, p=GRADE_P)
        if not grades.any():
            grades[rng.integers(CANDIDATES)] = 1
        relevant = np.flatnonzero(grades > 0)
        others = rng.permutation(np.flatnonzero(grades == 0))[: max(0, JUDGED - len(relevant))]
        judged = np.sort(np.concatenate([relevant, others]))
        qrels_lines.extend(f"{qid} 0 {docnos[i]} {grades[i]}" for i in judged)
        ease = rng.uniform(0.4, 1.6)  # some queries are hard for every run
        topics.append((qid, docnos, grades, ease))
        for name, skill in SKILL.items():
            scores = np.round(skill * ease * grades + rng.normal(0.0, 1.0, CANDIDATES), 3)
            top = np.lexsort((docnos, -scores))[:RETRIEVED]
            run_lines[name].extend(
                f"{qid} Q0 {docnos[i]} {rank} {scores[i]:.3f} {name}" for rank, i in enumerate(top, start=1)
            )
    (out / "qrels.txt").write_text("\n".join(qrels_lines) + "\n", encoding="utf-8")
    llm = llm_judgments(qrels_lines, run_lines["bm25"])
    (out / "qrels.llm.txt").write_text("\n".join(llm) + "\n", encoding="utf-8")
    for name, lines in run_lines.items():
        (out / "runs" / f"{name}.run").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for name, lines in seed_runs(topics).items():
        (out / "runs" / "seeds" / f"{name}.run").write_text("\n".join(lines) + "\n", encoding="utf-8")


def seed_runs(topics: list[tuple[str, np.ndarray, np.ndarray, float]]) -> dict[str, list[str]]:
    """The lines of the seeds' runs (see the module docstring), from a generator of their own."""
    rng = np.random.default_rng([SEED, 1])
    skills = SEEDS_SKILL + rng.uniform(-0.1, 0.1, SEEDS)
    names = [f"{SEEDS_NAME}-seed{s}" for s in range(1, SEEDS + 1)]
    lines: dict[str, list[str]] = {name: [] for name in names}
    for qid, docnos, grades, ease in topics:
        shared = rng.normal(0.0, 1.0, CANDIDATES)
        for name, skill in zip(names, skills, strict=True):
            noise = np.sqrt(0.5) * shared + np.sqrt(0.5) * rng.normal(0.0, 1.0, CANDIDATES)
            scores = np.round(skill * ease * grades + noise, 3)
            top = np.lexsort((docnos, -scores))[:RETRIEVED]
            lines[name].extend(
                f"{qid} Q0 {docnos[i]} {rank} {scores[i]:.3f} {name}" for rank, i in enumerate(top, start=1)
            )
    return lines


def llm_judgments(qrels_lines: list[str], favoured: list[str]) -> list[str]:
    """A second, partly agreeing set of judgments of the pairs in ``qrels_lines``, and of the unjudged
    documents in the top 10 of the run whose lines are ``favoured`` (see the module docstring)."""
    rng = np.random.default_rng(LLM_SEED)
    judged = {tuple(line.split()[0:3:2]) for line in qrels_lines}
    extra: dict[str, list[str]] = {}
    for line in favoured:
        qid, _, docno, rank = line.split()[:4]
        if int(rank) <= 10 and (qid, docno) not in judged:
            extra.setdefault(qid, []).append(docno)
    out = []
    for line in qrels_lines:
        qid, _, docno, label = line.split()
        grade = int(label)
        skip, lenient, shift, step = rng.random(), rng.random(), rng.random(), rng.choice((-1, 1))
        if skip < LLM_SKIP:
            continue
        if grade == 0 and lenient < LLM_LENIENT:
            grade = 1
        elif grade > 0 and shift < LLM_SHIFT:
            grade = int(np.clip(grade + step, 0, 3))
        out.append(f"{qid} 0 {docno} {grade}")
    for qid, docnos in extra.items():
        out.extend(f"{qid} 0 {docno} {int(rng.random() < 0.5)}" for docno in docnos)
    return sorted(out)


if __name__ == "__main__":
    make_demo()
