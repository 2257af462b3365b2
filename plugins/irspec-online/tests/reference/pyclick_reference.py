"""PyClick's click-model parameters on a click log, the reference irspec-online's click models are held to.

PyClick (https://github.com/markovi/PyClick) is not on the package registry, and its code stays out of
this repository: this script runs outside it, with PyClick's source on ``sys.path``, and writes what
PyClick gives as test data (``pyclick_values.json``), with the commit that gave it.

    # 1. the data set, with irspec's environment (numpy): written into this folder
    python pyclick_reference.py make
    # 2. PyClick's values, in a plain Python 3 environment holding PyClick's source at COMMIT
    git clone https://github.com/markovi/PyClick /tmp/PyClick && git -C /tmp/PyClick checkout COMMIT
    PYTHONPATH=/tmp/PyClick python pyclick_reference.py fit          # or: fit PBM DBN-fixed ...

The data set (``clicklog.jsonl.gz``, irspec-online's log format) is simulated: 40 queries, each with 16
documents of their own, a random attractiveness and satisfaction per query-document pair, and sessions of
10 results drawn from a noisy ranking of the pool (so that documents appear at many ranks), clicked by a
DBN user (continuation 0.85). The first 75% of the sessions (in file order) train, the rest, restricted
to queries seen in training as PyClick's example does, are held out for log-likelihood and perplexity.

``fit`` trains PBM, CM (cascade), DCM, UBM and DBN as released, and DBN once more with three of its
departures from the model mended (``DBN_FIXES``), and writes each model's parameters, its
log-likelihood and perplexity (per rank) on the held-out sessions as PyClick computes them, and its
training time.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "clicklog.jsonl.gz")
VALUES = os.path.join(HERE, "pyclick_values.json")
QUERIES, POOL, SHOWN, SESSIONS, SEED, GAMMA = 40, 16, 10, 4000, 20260, 0.85


def make() -> None:
    """Simulate the data set (numpy) and write it, gzip-compressed JSON Lines, one session per line."""
    import numpy as np

    rng = np.random.default_rng(SEED)
    attractive = rng.beta(1.2, 2.5, size=(QUERIES, POOL))
    satisfying = rng.beta(1.5, 2.0, size=(QUERIES, POOL))
    quality = attractive + rng.normal(0, 0.15, size=(QUERIES, POOL))  # the production ranking's view
    lines = []
    for s in range(SESSIONS):
        q = int(rng.integers(QUERIES))
        noisy = quality[q] + rng.normal(0, 0.25, size=POOL)
        shown = [int(d) for d in np.argsort(-noisy)[:SHOWN]]
        clicks = []
        for rank, d in enumerate(shown):  # the DBN user: examine, maybe click, maybe satisfied, maybe go on
            if rng.random() < attractive[q, d]:
                clicks.append({"doc": f"q{q}-d{d}", "rank": rank + 1})
                if rng.random() < satisfying[q, d]:
                    break
            if rng.random() >= GAMMA:
                break
        lines.append(
            json.dumps(
                {
                    "session": f"s{s}",
                    "query": f"q{q}",
                    "timestamp": 1714521600 + s,
                    "results": [f"q{q}-d{d}" for d in shown],
                    "clicks": clicks,
                }
            )
        )
    with gzip.open(DATA, "wt", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def sessions():
    """The data set as PyClick's search sessions, split as described above."""
    from pyclick.search_session.SearchResult import SearchResult
    from pyclick.search_session.SearchSession import SearchSession

    out = []
    with gzip.open(DATA, "rt", encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            session = SearchSession(rec["query"])
            clicked = {c["rank"] for c in rec["clicks"]}
            session.web_results = [
                SearchResult(d, int(r + 1 in clicked)) for r, d in enumerate(rec["results"])
            ]
            out.append(session)
    split = int(len(out) * 0.75)
    train = out[:split]
    seen = {s.query for s in train}
    return train, [s for s in out[split:] if s.query in seen]


DBN_FIXES = """PyClick's DBN with three departures from the model mended, as irspec-online's DBN computes it:

1. ``DBN._get_tail_clicks(session, start, params)`` reads the parameters of ranks ``0, 1, ...`` for the
   ranks ``start, start + 1, ...`` (``session_params[rank]``, ``rank`` counted from ``start``), so the
   continuation's update weighs the clicks after a rank with the parameters of the top documents;
   mended: ``session_params[start + rank]``.
2. ``DBN._get_continuation_factor`` multiplies ``P(C_r = 0 | E_r = 0)`` by ``1 - attr``, where it is 1 (a
   result not examined is not clicked, whatever its attractiveness); mended.
3. The attractiveness update (``DBNAttrEM.update``) after the last click uses the examination probability
   of the rank not given the clicks above it (``_get_session_exam``), where the posterior
   ``attr (1 - e) / (1 - e car)`` needs ``e = P(E_r = 1 | C_<r)`` (``_get_tail_clicks(session, 0,
   params)[1]``, as PyClick's conditional click probabilities use it); and a session without a click
   counts no rank as after its last click (``get_last_click_rank`` is then the number of results), so it
   adds 0 for each result, as if each had been examined and found unattractive. Mended: the posterior
   with ``e = P(E_r = 1 | C_<r)`` for every unclicked result after the last click, or of a session
   without a click.
"""


def _mend_dbn():
    """Patch PyClick's DBN as DBN_FIXES says (this script's code, not PyClick's); returns the undo."""
    import importlib
    import itertools

    module = importlib.import_module("pyclick.click_models.DBN")  # the package's DBN is the class
    DBN = module.DBN
    names = DBN.param_names

    def values(p):
        return p[names.attr].value(), p[names.sat].value(), p[names.cont].value()

    def tail(cls, search_session, start_rank, session_params):
        exam, click_probs, exam_probs = 1.0, [], [1.0]
        for offset, result in enumerate(search_session.web_results[start_rank:]):
            attr, sat, cont = values(session_params[start_rank + offset])
            if result.click:
                click_prob, exam = attr * exam, cont * (1 - sat)
            else:
                click_prob = 1 - attr * exam
                exam *= cont * (1 - attr) / click_prob
            click_probs.append(click_prob)
            exam_probs.append(exam)
        return click_probs, exam_probs

    def factor_of(cls, search_session, rank, session_params):
        click = search_session.web_results[rank].click
        attr, sat, cont = values(session_params[rank])
        clicks = search_session.get_clicks()
        later = any(clicks[rank + 1 :])
        exam = cls._get_tail_clicks(search_session, 0, session_params)[1][rank]
        if rank + 1 < len(clicks):
            after = math.prod(cls._get_tail_clicks(search_session, rank + 1, session_params)[0])
        else:
            after = 1.0

        def factor(x, y, z):
            p = exam if x else 1 - exam
            if click:  # examined, attracted; satisfied (then no further examination) or not
                if not x:
                    return 0.0
                p *= attr * (sat if y else (1 - sat) * (cont if z else 1 - cont))
                if y and z:
                    return 0.0
            else:  # not satisfied; examined and not attracted, or not examined (and none after)
                if y or (not x and z):
                    return 0.0
                if x:
                    p *= (1 - attr) * (cont if z else 1 - cont)
            return p * (after if z else float(not later))

        return factor

    def cont_update(self, search_session, rank, session_params):
        factor = DBN._get_continuation_factor(search_session, rank, session_params)
        total = sum(factor(*p) for p in itertools.product([0, 1], repeat=3))
        self._numerator += factor(1, 0, 1) / total
        self._denominator += (factor(1, 0, 0) + factor(1, 0, 1)) / total

    def attr_update(self, search_session, rank, session_params):
        clicks = search_session.get_clicks()
        last = max((r for r, c in enumerate(clicks) if c), default=-1)
        if clicks[rank]:
            self._numerator += 1
        elif rank > last:
            attr = session_params[rank][names.attr].value()
            exam = DBN._get_tail_clicks(search_session, 0, session_params)[1][rank]
            car = session_params[rank][names.car].value()
            self._numerator += (1 - exam) * attr / (1 - exam * car)
        self._denominator += 1

    saved = (
        DBN.__dict__["_get_tail_clicks"],
        DBN.__dict__["_get_continuation_factor"],
        module.DBNContEM.update,
        module.DBNAttrEM.update,
    )
    DBN._get_tail_clicks, DBN._get_continuation_factor = classmethod(tail), classmethod(factor_of)
    module.DBNContEM.update, module.DBNAttrEM.update = cont_update, attr_update

    def undo():
        DBN._get_tail_clicks, DBN._get_continuation_factor = saved[0], saved[1]
        module.DBNContEM.update, module.DBNAttrEM.update = saved[2], saved[3]

    return undo


MODELS = ("PBM", "CM", "DCM", "UBM", "DBN", "DBN-fixed")


def fit(names: list[str]) -> None:
    """Train PyClick's models (``names``, default all) and write their parameters, log-likelihood,
    perplexity and times into the values file, each model as soon as it is trained (the file's other
    models kept: the released DBN alone takes half an hour)."""
    from pyclick.click_models.CM import CM
    from pyclick.click_models.DBN import DBN
    from pyclick.click_models.DCM import DCM
    from pyclick.click_models.Evaluation import LogLikelihood, Perplexity
    from pyclick.click_models.PBM import PBM
    from pyclick.click_models.UBM import UBM

    made = {"PBM": PBM, "CM": CM, "DCM": DCM, "UBM": UBM, "DBN": DBN, "DBN-fixed": DBN}
    train, test = sessions()
    out = {"models": {}}
    if os.path.exists(VALUES):
        with open(VALUES, encoding="utf-8") as f:
            out = json.load(f)
    out.update(
        {
            "pyclick_commit": _commit(),
            "python": platform.python_version(),
            "train_sessions": len(train),
            "test_sessions": len(test),
            "em_iterations": 50,
            "dbn_fixes": DBN_FIXES,
        }
    )
    for name in names or MODELS:
        undo = _mend_dbn() if name == "DBN-fixed" else None
        model = made[name]()
        start = time.perf_counter()
        model.train(train)
        seconds = time.perf_counter() - start
        perplexity, per_rank = Perplexity().evaluate(model, test)
        out["models"][name] = {
            "seconds": seconds,
            "params": _params(model),
            "log_likelihood": LogLikelihood().evaluate(model, test),
            "perplexity": perplexity,
            "perplexity_at_rank": per_rank,
        }
        if undo is not None:
            undo()
        print(f"{name}: {seconds:.1f} s", file=sys.stderr)
        with open(VALUES, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1, sort_keys=True)
            f.write("\n")


def _params(model) -> dict:
    """Every parameter of a trained model by name: per query and document ``{query: {doc: value}}``, per
    rank a list, per rank and previous click a list of lists, a single one a number."""
    out = {}
    for name, container in model.params.items():
        inner = container._container
        if isinstance(inner, dict):
            out[name.name] = {q: {d: p.value() for d, p in docs.items()} for q, docs in inner.items()}
        elif isinstance(inner, list) and inner and isinstance(inner[0], list):
            out[name.name] = [[p.value() for p in row] for row in inner]
        elif isinstance(inner, list):
            out[name.name] = [p.value() for p in inner]
        else:
            out[name.name] = inner.value()
    return out


def _commit() -> str:
    import pyclick

    root = os.path.dirname(os.path.dirname(os.path.abspath(pyclick.__file__)))
    try:
        return subprocess.run(
            ["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return os.environ.get("PYCLICK_COMMIT", "unknown")


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make()
    else:
        fit(sys.argv[2:])
