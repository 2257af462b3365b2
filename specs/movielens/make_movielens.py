"""Write the MovieLens-shaped data set of the recommender examples, tests and ``specs/recsys.yaml``.

    python specs/movielens/make_movielens.py    # rewrites specs/movielens/*.parquet

Everything comes from one ``numpy.random.Generator`` with a fixed seed and integer arithmetic, so the
tables are the same on every machine and every rerun (they are checked in; rerun this only to change
the data). It needs numpy, scipy and polars.

The data, shaped like MovieLens 100K but smaller (600 users, 900 movies, about 29,000 ratings):

- **items** have a long-tail popularity (a Zipf law, exponent 0.9, over shuffled ids) and each user a
  long-tail activity (log-normal, 8 to 300 ratings); a user picks movies by popularity and by taste
  (eight latent factors), and rates them 1 to 5 (a user's and a movie's bias, the taste, noise);
- **timestamps**: each user rates over a span of their own within two years (Unix seconds);
- **the split is by time**: every rating before the 80th percentile of the timestamps is training
  (``train.parquet``: user, item, rating, timestamp), every later one held out (``test.parquet``: the
  same columns and ``label``, 1 for a rating of 4 or 5 and 0 below: a judged, non-relevant item). So
  some users have nothing held out, some nothing in training (they arrived late), and 20 movies, released
  after the cut (their earlier ratings dropped), are held out but in nobody's training, as in a real
  temporal split.

Two models' top 50 for every user of either table (a row per user, item and ``rank``, 1 the best):

- ``popularity.parquet``: the 50 movies with the most training ratings, the same list for everyone,
  movies the user has seen included (``exclude=`` removes them before the cut);
- ``cooccurrence.parquet``: item-to-item co-occurrence, personalised: a movie's score for a user sums,
  over the user's training movies, the number of training users who rated it together with each, and
  is divided by the square root of its popularity (so that the most popular movies do not win every
  list; :func:`cooccurrence_scores`, in integers, so exact everywhere), ties broken by popularity and
  then by the lower item id; the user's training movies are left out of the list, as a model's own
  filter would.

Both lists order equal scores by the lower item id, as ``irspec.evaluate_scores`` does, so that the
co-occurrence list is the top 50 that ``evaluate_scores`` finds in :func:`cooccurrence_scores`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import polars as pl
import scipy.sparse as sp

SEED = 20261129
USERS = 600
ITEMS = 900
FACTORS = 8
ZIPF = 0.9
SPAN = 2 * 365 * 86400  # two years, in seconds
START = 1_700_000_000  # the first timestamp (November 2023)
TRAIN_SHARE = 0.8  # ratings before this quantile of the timestamps are training
TOP = 50
NEW = 20  # movies released after the cut, held out alone
RELEVANT = 4  # a held-out rating of 4 or 5 is relevant (label 1)


def make_movielens(outdir: str | Path = Path(__file__).parent) -> None:
    """Write ``train.parquet``, ``test.parquet``, ``popularity.parquet`` and ``cooccurrence.parquet``."""
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    train, test = ratings()
    train.write_parquet(out / "train.parquet")
    test.write_parquet(out / "test.parquet")
    users = np.unique(np.concatenate([train["user"].to_numpy(), test["user"].to_numpy()]))
    items = np.unique(np.concatenate([train["item"].to_numpy(), test["item"].to_numpy()]))
    seen = train.select("user", "item")
    counts = _counts(seen, items)
    popular = items[np.lexsort((items, -counts))[:TOP]]
    _lists(users, np.tile(popular, (len(users), 1))).write_parquet(out / "popularity.parquet")
    scores = cooccurrence_scores(seen["user"].to_numpy(), seen["item"].to_numpy(), users, items)
    scores[_matrix(seen, users, items).toarray() > 0] = -1  # the user's own movies: never recommended
    # by score descending, then item index ascending (the items are sorted by id): a stable sort
    order = np.argsort(-scores, axis=1, kind="stable")[:, :TOP]
    _lists(users, items[order]).write_parquet(out / "cooccurrence.parquet")


def ratings() -> tuple[pl.DataFrame, pl.DataFrame]:
    """The ratings drawn and split by time: (training, held out)."""
    rng = np.random.default_rng(SEED)
    item_ids = rng.permutation(ITEMS) + 1  # popularity rank -> movie id: the popular ones are not 1, 2, 3
    weight = np.empty(ITEMS)
    weight[item_ids - 1] = 1.0 / np.arange(1, ITEMS + 1) ** ZIPF
    taste_u = rng.normal(size=(USERS, FACTORS)) / np.sqrt(FACTORS)
    taste_i = rng.normal(size=(ITEMS, FACTORS))
    bias_u = rng.normal(0, 0.4, USERS)
    bias_i = rng.normal(0, 0.5, ITEMS)
    activity = np.clip(np.round(rng.lognormal(3.4, 0.9, USERS)), 8, 300).astype(np.int64)
    begin = rng.integers(0, SPAN * 2 // 3, USERS)
    length = rng.integers(SPAN // 20, SPAN // 2, USERS)
    rows = []
    for u in range(USERS):
        affinity = taste_i @ taste_u[u]
        p = weight * np.exp(1.5 * affinity)
        chosen = rng.choice(ITEMS, size=activity[u], replace=False, p=p / p.sum())
        noise = rng.normal(0, 0.7, len(chosen))
        stars = np.clip(np.round(3.1 + bias_u[u] + bias_i[chosen] + 0.8 * affinity[chosen] + noise), 1, 5)
        times = START + begin[u] + np.sort(rng.integers(0, length[u], len(chosen)))
        rows.append((np.full(len(chosen), u + 1), chosen + 1, stars.astype(np.int64), times))
    user, item, rating, timestamp = (np.concatenate(c) for c in zip(*rows, strict=True))
    frame = pl.DataFrame(
        {"user": user, "item": item, "rating": rating, "timestamp": timestamp},
        schema={"user": pl.Int32, "item": pl.Int32, "rating": pl.Int8, "timestamp": pl.Int64},
    ).sort("user", "timestamp", "item")
    cut = int(np.quantile(timestamp, TRAIN_SHARE))
    # movies released after the cut: their earlier ratings never happened, so they are held out alone
    released = rng.choice(item_ids[ITEMS // 10 :], NEW, replace=False)
    frame = frame.filter(~(pl.col("item").is_in(released.tolist()) & (pl.col("timestamp") < cut)))
    train = frame.filter(pl.col("timestamp") < cut)
    test = frame.filter(pl.col("timestamp") >= cut).with_columns(
        label=(pl.col("rating") >= RELEVANT).cast(pl.Int8)
    )
    return train, test


def cooccurrence_scores(
    users: Sequence[int] | np.ndarray,
    items: Sequence[int] | np.ndarray,
    user_index: Sequence[int] | np.ndarray,
    item_index: Sequence[int] | np.ndarray,
) -> np.ndarray:
    """The co-occurrence model's scores, a dense users × items int64 array over ``user_index`` and
    ``item_index`` (sorted ids), from the training interactions ``users[i]`` rated ``items[i]``:
    ``(1000 Σ_j C[i, j]) // isqrt(n_i + 10) * (number of users + 1) + n_i``, the sum over the user's
    movies j, ``C[i, j]`` the training users of both i and j (``C[i, i] = 0``), ``n_i`` the training
    users of i: co-occurrence damped by popularity first, popularity to break its ties."""
    seen = pl.DataFrame({"user": np.asarray(users), "item": np.asarray(items)})
    user_index, item_index = np.asarray(user_index), np.asarray(item_index)
    x = _matrix(seen, user_index, item_index).astype(np.int64)
    together = (x.T @ x).tolil()
    together.setdiag(0)
    counts = np.asarray(x.sum(axis=0)).ravel()
    # an integer square root (math.isqrt, item by item): the scores stay integers, equal on every machine
    damp = np.array([math.isqrt(int(n) + 10) for n in counts], dtype=np.int64)
    return (x @ together.tocsr()).toarray() * 1000 // damp[None, :] * (len(user_index) + 1) + counts[None, :]


def _matrix(seen: pl.DataFrame, users: np.ndarray, items: np.ndarray) -> sp.csr_array:
    """Users × items 0/1 matrix of the (user, item) pairs of ``seen``, over the sorted ids given."""
    rows = np.searchsorted(users, seen["user"].to_numpy())
    cols = np.searchsorted(items, seen["item"].to_numpy())
    m = sp.csr_array((np.ones(len(rows), dtype=np.int64), (rows, cols)), shape=(len(users), len(items)))
    m.sum_duplicates()
    m.data[:] = 1
    return m


def _counts(seen: pl.DataFrame, items: np.ndarray) -> np.ndarray:
    return np.bincount(np.searchsorted(items, seen["item"].to_numpy()), minlength=len(items))


def _lists(users: np.ndarray, lists: np.ndarray) -> pl.DataFrame:
    """A recommendations table: a row per user, item and rank (1 the best)."""
    depth = lists.shape[1]
    return pl.DataFrame(
        {
            "user": np.repeat(users, depth),
            "item": lists.ravel(),
            "rank": np.tile(np.arange(1, depth + 1), len(users)),
        },
        schema={"user": pl.Int32, "item": pl.Int32, "rank": pl.Int16},
    )


if __name__ == "__main__":
    make_movielens()
