"""Time recommender evaluation: irspec.evaluate_topk against implicit's ranking_metrics_at_k, side by side
in one invocation, and irspec.evaluate_scores on a score matrix given in chunks (time, peak memory).

    python benchmarks/bench_recsys.py [--users 100000] [--items 20000] [--k 100] [--repeat 3]
                                      [--score-users 20000]

Data (made in each child from a fixed seed, untimed): a users × items held-out matrix (about 10 items a
user, binary), a disjoint training matrix (about 50 a user), and each user's top k items (training items
left out, some held-out items in), as int32 item indices.

Each tool's modules are loaded before its clock starts (implicit's by its import, irspec's by a tiny
evaluation first), so that the times are of the evaluation.

- ``topk``: ``irspec.evaluate_topk(test, top, "nDCG@K, AP(den=min)@K, relP@K")`` (the three metrics
  implicit computes, by its definitions), with and without ``exclude=train``, against implicit 0.7's
  ``ranking_metrics_at_k(model, train, test, K)``, whose model gives the same lists (its ``recommend`` a
  lookup); implicit leaves the filtering of training items to the model, so its time has none.
- ``scores``: ``irspec.evaluate_scores(test, chunks, "nDCG@K", exclude=train)`` on ``--score-users``
  users' float32 scores of every item, made chunk by chunk (256 users at a time) inside the timed
  call: time, and the peak memory above the data, against the size of the dense matrix it never holds.

Each (workload, tool) runs in a child process of its own, tools alternating within each repetition; the
median of ``--repeat`` runs is reported with its ratio to implicit's. The machine is shared: only ratios
measured side by side mean much. Peak memory: the child's maximum resident set less its size once the
data were made.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time


def _data(users: int, items: int, k: int):
    import numpy as np
    import scipy.sparse as sp

    rng = np.random.default_rng(36)
    per_user_test, per_user_train = 10, 50
    rows = np.repeat(np.arange(users), per_user_test + per_user_train)
    keys = np.unique(rows * items + rng.integers(0, items, size=len(rows)))  # each (user, item) once
    rows, cols = np.divmod(keys, items)
    taken = sp.csr_array((np.ones(len(rows)), (rows, cols)), shape=(users, items))
    # split each user's items: about one in six held out
    held = rng.random(taken.nnz) < per_user_test / (per_user_test + per_user_train)
    # each its own copy of the arrays: eliminate_zeros works in place
    test = sp.csr_array((taken.data * held, taken.indices.copy(), taken.indptr.copy()), shape=(users, items))
    train = sp.csr_array(
        (taken.data * ~held, taken.indices.copy(), taken.indptr.copy()), shape=(users, items)
    )
    test.eliminate_zeros()
    train.eliminate_zeros()
    # the lists: random items (the same for every user, shifted), a few held-out ones put in, no training item
    top = (rng.integers(0, items, size=(users, 1)) + np.arange(k)[None, :] * 7) % items
    starts, ends = test.indptr[:-1], test.indptr[1:]
    has = ends > starts
    pick = starts[has] + (rng.random(has.sum()) * (ends - starts)[has]).astype(np.int64)
    top[np.flatnonzero(has), rng.integers(0, k, size=has.sum())] = test.indices[pick]
    top = np.array(top, dtype=np.int32)
    seen = train[np.arange(users)[:, None].repeat(k, 1).ravel(), top.ravel()].reshape(users, k) != 0
    dup = np.zeros_like(seen)
    order = np.argsort(top, axis=1, kind="stable")
    srt = np.take_along_axis(top, order, 1)
    same = np.zeros_like(seen)
    same[:, 1:] = srt[:, 1:] == srt[:, :-1]
    np.put_along_axis(dup, order, same, 1)
    gone = seen | dup
    # the lists as a model gives them: its items in order, -1 only after them
    top = np.take_along_axis(top, np.argsort(gone, axis=1, kind="stable"), 1)
    top[np.sort(gone, axis=1)] = -1
    return test, train, top


def sp_module():
    import scipy.sparse

    return scipy.sparse


def _child(workload: str, tool: str, users: int, items: int, k: int, score_users: int) -> dict:
    import numpy as np

    test, train, top = _data(score_users if workload == "scores" else users, items, k)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    metrics = f"nDCG@{k}, AP(den=min)@{k}, relP@{k}"
    if tool == "implicit":
        import scipy.sparse as sp
        from implicit.evaluation import ranking_metrics_at_k

        class Lists:
            def recommend(self, userid, user_items, N=10, **_):
                ids = top[np.asarray(userid), :N]
                return ids, np.zeros(ids.shape, dtype=np.float32)

        test_m, train_m = sp.csr_matrix(test, dtype=np.float32), sp.csr_matrix(train, dtype=np.float32)
        for m in (test_m, train_m):  # implicit reads 32-bit indices
            m.indices, m.indptr = m.indices.astype(np.int32), m.indptr.astype(np.int32)
        start = time.perf_counter()
        found = ranking_metrics_at_k(Lists(), train_m, test_m, K=k, show_progress=False)
        wall = time.perf_counter() - start
        values = {"ndcg": found["ndcg"], "map": found["map"]}
    else:
        import irspec

        # the modules an evaluation loads, loaded before the clock starts, as implicit's import is
        tiny = sp_module().csr_array(np.eye(2, dtype=np.int64))
        irspec.evaluate_topk(tiny, np.array([[0], [1]]), metrics, exclude=tiny)
        irspec.evaluate_scores(tiny, np.eye(2), "nDCG@1", exclude=tiny)
        start = time.perf_counter()
        if workload == "scores":

            def chunks():
                for s in range(0, score_users, 256):
                    n = min(256, score_users - s)
                    yield np.random.default_rng(s).random((n, items), dtype=np.float32)

            res = irspec.evaluate_scores(test, chunks(), f"nDCG@{k}", exclude=train)
        else:
            res = irspec.evaluate_topk(
                test, top, metrics, exclude=train if tool == "irspec+exclude" else None
            )
        wall = time.perf_counter() - start
        means = res.aggregate()
        values = {"ndcg": means[f"nDCG@{k}"], "map": means.get(f"AP(den=min)@{k}")}
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"wall": wall, "peak_mib": (peak - base) / 1024, "values": values}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=int, default=100_000)
    ap.add_argument("--items", type=int, default=20_000)
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--score-users", type=int, default=20_000)
    ap.add_argument("--child", nargs=2, metavar=("WORKLOAD", "TOOL"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(_child(*args.child, args.users, args.items, args.k, args.score_users)))
        return
    plan = [("topk", "implicit"), ("topk", "irspec"), ("topk", "irspec+exclude"), ("scores", "irspec")]
    times: dict[tuple[str, str], list[float]] = {p: [] for p in plan}
    peaks: dict[tuple[str, str], list[float]] = {p: [] for p in plan}
    values = {}
    print(f"load average at start: {os.getloadavg()}", file=sys.stderr)
    for _ in range(args.repeat):
        for workload, tool in plan:
            cmd = [sys.executable, __file__, "--child", workload, tool, "--users", str(args.users)]
            cmd += ["--items", str(args.items), "--k", str(args.k), "--score-users", str(args.score_users)]
            out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
            times[workload, tool].append(out["wall"])
            peaks[workload, tool].append(out["peak_mib"])
            values[workload, tool] = out["values"]
    print(f"load average at end: {os.getloadavg()}", file=sys.stderr)
    reference = statistics.median(times["topk", "implicit"])
    print(f"{args.users:,} users × {args.items:,} items, top {args.k}; median of {args.repeat}")
    for workload, tool in plan:
        t = statistics.median(times[workload, tool])
        ratio = f"{t / reference:.2f}x implicit's" if workload == "topk" else ""
        dense = args.score_users * args.items * 4 / 2**20
        size = f" (dense float32 scores: {dense:,.0f} MiB)" if workload == "scores" else ""
        print(
            f"{workload:7} {tool:15} {t:8.3f} s  {ratio:18} peak +{statistics.median(peaks[workload, tool]):.0f} MiB"
            f"{size}  {values[workload, tool]}"
        )


if __name__ == "__main__":
    main()
