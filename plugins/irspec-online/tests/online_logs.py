"""Random adversarial logs, written in every form irspec-online reads, and the metrics' definitions
computed record by record (the expected values of the differential tests; nothing from the plugin)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

SPECS = (
    "CTR CTR@1 CTR@3 ZRR Abandonment SessionSuccess(0) SessionSuccess SessionSuccess(59.5) "
    "QueriesPer QueriesPer(minute) QueriesPer(hour) QueriesPer(day)"
)

# Unicode ids, some outside the BMP and some that sort differently in UTF-16 than by code point.
SESSIONS = ("s1", "s2", "séance", "会话", "🙂", "\uff61x", "a b", "0", "Z", "z")
T0 = 1_714_521_600.0  # 2024-05-01T00:00:00Z: units start at multiples of their length


def random_log(seed: int, n: int = 200) -> list[dict]:
    """Records with sessions without clicks, zero-result pages, ties in time within a session, one-event
    sessions, clicks with and without rank or dwell (a rank may name a document not shown), times on unit
    boundaries, and unicode session ids."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        results = [f"d{j}" for j in range(int(rng.choice([0, 0, 1, 3, 6])))]
        clicks = []
        for j, doc in enumerate(results):
            if rng.random() < 0.3:
                dwell = None if rng.random() < 0.2 else float(rng.choice([0, 12.5, 30, 59.5, 60, 300]))
                clicks.append({"doc": doc, "rank": None if rng.random() < 0.5 else j + 1, "dwell": dwell})
        if rng.random() < 0.05:
            clicks.append({"doc": "ad", "rank": int(rng.integers(1, 9)), "dwell": None})
        # coarse times make ties; some sit exactly on a minute, hour or day boundary
        t = T0 + float(rng.integers(0, 3 * 24)) * 3600 + float(rng.choice([0, 0, 30, 59.75, 60, 3599]))
        session = SESSIONS[int(rng.integers(0, len(SESSIONS)))] + str(int(rng.integers(0, 12)))
        out.append(
            {
                "session": session,
                "query": f"query {i} ✓",
                "timestamp": t,
                "results": results,
                "clicks": clicks,
            }
        )
    out.append(
        {"session": "lonely", "query": "", "timestamp": T0, "results": [], "clicks": []}
    )  # one event, no results
    return out


def expected(records: list[dict]) -> dict[str, float]:
    """Each metric of :data:`SPECS`, from its definition in docs/how-to/online.md, record by record."""
    sessions: dict[str, list[dict]] = {}
    for r in records:
        sessions.setdefault(r["session"], []).append(r)

    def rank(r, c):
        return c["rank"] if c.get("rank") is not None else r["results"].index(c["doc"]) + 1

    def units(seconds):
        return {math.floor(r["timestamp"] / seconds) for r in records}

    def ctr(k):
        return sum(any(rank(r, c) <= k for c in r["clicks"]) for r in records) / len(records)

    def success(t):
        won = [
            any(c["dwell"] is not None and c["dwell"] >= t for r in s for c in r["clicks"])
            for s in sessions.values()
        ]
        return sum(won) / len(sessions)

    n = len(records)
    return {
        "CTR": sum(bool(r["clicks"]) for r in records) / n,
        "CTR@1": ctr(1),
        "CTR@3": ctr(3),
        "ZRR": sum(not r["results"] for r in records) / n,
        "Abandonment": sum(not any(r["clicks"] for r in s) for s in sessions.values()) / len(sessions),
        "SessionSuccess(dwell=0)": success(0),
        "SessionSuccess": success(30),
        "SessionSuccess(dwell=59.5)": success(59.5),
        "QueriesPer": n / len(sessions),
        "QueriesPer(unit=minute)": n / len(units(60)),
        "QueriesPer(unit=hour)": n / len(units(3600)),
        "QueriesPer(unit=day)": n / len(units(86400)),
    }


def write_jsonl(records: list[dict], path: Path) -> Path:
    """JSON Lines, with a blank line and keys left out where the format allows."""
    with open(path, "w", encoding="utf-8") as f:
        for i, r in enumerate(records):
            r = dict(r, clicks=[{k: v for k, v in c.items() if v is not None} for c in r["clicks"]])
            if not r["clicks"] and i % 2:
                del r["clicks"]
            f.write(json.dumps(r, ensure_ascii=i % 3 == 0) + "\n" + ("\n" if i == 5 else ""))
    return path


def polars_frame(records: list[dict]):
    """A polars DataFrame of the records, with the log's column types."""
    import polars as pl

    click = pl.Struct({"doc": pl.String, "rank": pl.Int64, "dwell": pl.Float64})
    schema = {"session": pl.String, "query": pl.String, "timestamp": pl.Float64, "results": pl.List(pl.String),
              "clicks": pl.List(click)}  # fmt: skip
    return pl.DataFrame(records, schema=schema)
