"""Time recommender evaluation: irspec.evaluate_topk against implicit's ranking_metrics_at_k, RecBole's and
Microsoft Recommenders' evaluators, side by side in one invocation, and irspec.evaluate_scores on a score
matrix given in chunks (time, peak memory).

    python benchmarks/bench_recsys.py [--users 100000] [--items 20000] [--k 100] [--repeat 3]
                                      [--score-users 20000] [--peers implicit,recbole,recommenders]
                                      [--engine] [--threads]

Data (made in each child from a fixed seed, untimed): a users × items held-out matrix (about 10 items a
user, binary), a disjoint training matrix (about 50 a user), and each user's top k items (training items
left out, some held-out items in), as int32 item indices.

Each tool's modules are loaded before its clock starts (implicit's by its import, irspec's by a tiny
evaluation first), so that the times are of the evaluation.

- ``topk``: ``irspec.evaluate_topk(test, top, "nDCG@K, AP(den=min)@K, relP@K")`` (the three metrics
  implicit computes, by its definitions), with and without ``exclude=train``, against implicit 0.7's
  ``ranking_metrics_at_k(model, train, test, K)``, whose model gives the same lists (its ``recommend`` a
  lookup); implicit leaves the filtering of training items to the model, so its time has none.
- ``topk``, the metrics of RecBole and Recommenders: ``irspec-7`` computes seven metrics,
  ``nDCG@K, AP(den=min)@K, relP@K, R@K, P@K, Success@K, RR@K``, the union of RecBole's six (NDCG, MAP,
  Precision, Recall, Hit, MRR) and Recommenders' four (``ndcg_at_k``, ``map_at_k``, ``precision_at_k``,
  ``recall_at_k``), each of which computes only its own. RecBole 1.2.1 (``IRSPEC_RECBOLE_PATH``, default
  ``.ci-recbole``; torch from the environment): its ``Evaluator.evaluate`` of the six at K, given the
  ``rec.topk`` tensor its collector makes (each list entry a hit or not, and each user's number of
  held-out items), made here untimed as the collector makes it (``recbole``), and that tensor made
  inside the clock too, a batch of 4,096 users at a time, from a dense batch × items matrix of the held-out
  items gathered at the lists' items, as its collector makes it (``recbole+hits``). Microsoft Recommenders
  1.2.1 (``IRSPEC_RECOMMENDERS_PATH``, default ``.ci-recommenders``): its four functions on pandas frames
  of the held-out interactions and of the lists (scores k, k - 1, ... by place), made untimed.
- ``topk``, ``irspec-engine`` (``--engine``): the same lists given a hole in their second place, which
  ``evaluate_topk`` evaluates through the engine (qrels made from the matrix, the top k joined with
  them) rather than its direct context: the same ranking and values, the path this change avoids.
- ``topk``, ``irspec-threads`` (``--threads``): implicit's three metrics with ``irspec.recsys.ranked.WORKERS
  = None``, the lists looked up on a thread per core (at most 4; by default on the calling thread alone).
- ``scores``: ``irspec.evaluate_scores(test, chunks, "nDCG@K", exclude=train)`` on ``--score-users``
  users' float32 scores of every item, made chunk by chunk (256 users at a time) inside the timed
  call: time, and the peak memory above the data, against the size of the dense matrix it never holds.

Each (workload, tool) runs in a child process of its own, tools alternating within each repetition; the
median of ``--repeat`` runs is reported with its ratio to implicit's, and the best (least) of them with
the ratio of the bests. The machine is shared: only ratios measured side by side mean much, and the load
average is printed at the start and the end. Peak memory: the child's maximum resident set less its size once the
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


SEVEN = "nDCG@{k}, AP(den=min)@{k}, relP@{k}, R@{k}, P@{k}, Success@{k}, RR@{k}"
"""The union of RecBole's six metrics and Recommenders' four, with implicit's relP."""

HERE = os.path.dirname(os.path.abspath(__file__))


def _peer_path(variable: str, folder: str) -> str:
    """A peer's ``pip install --target`` folder: ``variable``, or scripts/test's folder in the repository."""
    return os.environ.get(variable) or os.path.join(HERE, "..", folder)


def _recbole(test, top, k: int, hits_timed: bool):
    import numpy as np

    sys.path.insert(0, _peer_path("IRSPEC_RECBOLE_PATH", ".ci-recbole"))
    np.float = float  # RecBole 1.2.1's metrics name np.float, the alias of float numpy 1.24 removed
    import torch
    from recbole.evaluator import Evaluator
    from recbole.evaluator.collector import DataStruct

    names = ["ndcg", "map", "precision", "recall", "hit", "mrr"]
    evaluator = Evaluator({"metrics": names, "topk": [k], "metric_decimal_place": 15})
    lists = torch.from_numpy(np.asarray(top, dtype=np.int64))
    present = lists >= 0  # a short list's -1: no item, no hit (torch would read -1 as the last item)
    lists = lists.clamp(min=0)

    def hits():
        # as RecBole's collector makes "rec.topk" for each batch of users: the held-out items as a dense
        # batch × items matrix, gathered at the lists' items, and each user's count of them
        parts = []
        for start in range(0, test.shape[0], 4096):
            block = test[start : start + 4096]
            rows = torch.from_numpy(np.repeat(np.arange(block.shape[0]), np.diff(block.indptr)))
            positives = torch.zeros((block.shape[0], test.shape[1]), dtype=torch.int)
            positives[rows, torch.from_numpy(block.indices.astype(np.int64))] = 1
            found = torch.gather(positives, 1, lists[start : start + 4096]) * present[start : start + 4096]
            parts.append(torch.cat((found, positives.sum(dim=1, keepdim=True)), dim=1))
        struct = DataStruct()
        struct.set("rec.topk", torch.cat(parts))
        return struct

    # users with nothing held out are not evaluated, as RecBole's data loaders leave them out
    kept = torch.from_numpy(np.diff(test.indptr) > 0)
    if not hits_timed:
        struct = hits()
        struct.set("rec.topk", struct.get("rec.topk")[kept])
    start = time.perf_counter()
    if hits_timed:
        struct = hits()
        struct.set("rec.topk", struct.get("rec.topk")[kept])
    found = evaluator.evaluate(struct)
    wall = time.perf_counter() - start
    return wall, {name: found[f"{name}@{k}"] for name in ("ndcg", "map", "recall", "precision")}


def _recommenders(test, top, k: int):
    import numpy as np
    import pandas as pd

    sys.path.insert(0, _peer_path("IRSPEC_RECOMMENDERS_PATH", ".ci-recommenders"))
    from recommenders.evaluation import python_evaluation as ev

    rows, cols = test.nonzero()
    true = pd.DataFrame({"userID": rows, "itemID": cols, "rating": np.ones(len(rows))})
    width = top.shape[1]
    users = np.repeat(np.arange(top.shape[0]), width)
    score = np.tile(np.arange(width, 0, -1), top.shape[0]).astype(float)
    given = top.ravel() >= 0
    pred = pd.DataFrame({"userID": users[given], "itemID": top.ravel()[given], "prediction": score[given]})
    start = time.perf_counter()
    values = {
        "ndcg": ev.ndcg_at_k(true, pred, k=k),
        "map": ev.map_at_k(true, pred, k=k),
        "precision": ev.precision_at_k(true, pred, k=k),
        "recall": ev.recall_at_k(true, pred, k=k),
    }
    return time.perf_counter() - start, values


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
    elif tool in ("recbole", "recbole+hits"):
        wall, values = _recbole(test, top, k, hits_timed=tool == "recbole+hits")
    elif tool == "recommenders":
        wall, values = _recommenders(test, top, k)
    else:
        import irspec
        import irspec.recsys.ranked

        if tool == "irspec-threads":
            irspec.recsys.ranked.WORKERS = None
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
        elif tool == "irspec-engine":
            # the same lists with a hole in their second place: evaluate_topk's engine path (qrels made
            # from the matrix, the top k joined with them), the same ranking and values
            holes = np.full((top.shape[0], top.shape[1] + 1), -1, dtype=top.dtype)
            holes[:, 0], holes[:, 2:] = top[:, 0], top[:, 1:]
            start = time.perf_counter()
            res = irspec.evaluate_topk(test, holes, metrics)
        else:
            wanted = SEVEN.format(k=k) if tool == "irspec-7" else metrics
            res = irspec.evaluate_topk(test, top, wanted, exclude=train if tool == "irspec+exclude" else None)
        wall = time.perf_counter() - start
        means = res.aggregate()
        values = {"ndcg": means[f"nDCG@{k}"], "map": means.get(f"AP(den=min)@{k}")}
        if tool == "irspec-7":
            values |= {"recall": means[f"R@{k}"], "precision": means[f"P@{k}"]}
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"wall": wall, "peak_mib": (peak - base) / 1024, "values": values}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=int, default=100_000)
    ap.add_argument("--items", type=int, default=20_000)
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--score-users", type=int, default=20_000)
    ap.add_argument(
        "--peers",
        default="implicit,recbole,recommenders",
        help="the peers to time beside irspec (comma-separated): implicit, recbole, recommenders",
    )
    ap.add_argument(
        "--engine",
        action="store_true",
        help="also time evaluate_topk's engine path (irspec-engine: the lists given a hole, same values)",
    )
    ap.add_argument(
        "--threads",
        action="store_true",
        help="also time implicit's three metrics with the lists looked up on a thread per core (irspec-threads)",
    )
    ap.add_argument("--child", nargs=2, metavar=("WORKLOAD", "TOOL"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(_child(*args.child, args.users, args.items, args.k, args.score_users)))
        return
    peers = {p.strip() for p in args.peers.split(",") if p.strip()}
    plan = [("topk", "implicit")] if "implicit" in peers else []
    plan += [("topk", "irspec"), ("topk", "irspec+exclude"), ("topk", "irspec-7")]
    plan += [("topk", "irspec-engine")] if args.engine else []
    plan += [("topk", "irspec-threads")] if args.threads else []
    plan += [("topk", "recbole"), ("topk", "recbole+hits")] if "recbole" in peers else []
    plan += [("topk", "recommenders")] if "recommenders" in peers else []
    plan += [("scores", "irspec")]
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
    median = {key: statistics.median(found) for key, found in times.items()}
    best = {key: min(found) for key, found in times.items()}
    print(f"{args.users:,} users × {args.items:,} items, top {args.k}; median (best) of {args.repeat}")
    for workload, tool in plan:
        t = median[workload, tool]
        ratio = ""
        # each peer against the irspec run of the same metrics: implicit's three, or the seven
        if tool in ("implicit", "recbole", "recbole+hits", "recommenders") and ("topk", "irspec") in median:
            ours = "irspec" if tool == "implicit" else "irspec-7"
            ratio = f"irspec {median['topk', ours] / t:.3f}x ({best['topk', ours] / best[workload, tool]:.3f}x) of it"
            if tool == "implicit" and ("topk", "irspec-threads") in median:
                ratio += f", threads {median['topk', 'irspec-threads'] / t:.3f}x"
        dense = args.score_users * args.items * 4 / 2**20
        size = f" (dense float32 scores: {dense:,.0f} MiB)" if workload == "scores" else ""
        print(
            f"{workload:7} {tool:15} {t:8.3f} s ({best[workload, tool]:.3f})  {ratio:30} "
            f"peak +{statistics.median(peaks[workload, tool]):.0f} MiB{size}  {values[workload, tool]}"
        )


if __name__ == "__main__":
    main()
