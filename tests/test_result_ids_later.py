"""A result whose query ids are made when first read (irspec.evaluation.result.with_ids_made_later,
what irspec.evaluate_topk returns): of the one result class, its ids made once and then kept, and read,
copied, replaced, refused assignment and pickled as an ordinary result's are.

The reference is an ordinary Result of the same fields, built here with its ids given.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import irspec
from irspec.evaluation.compute import bind_metrics
from irspec.evaluation.context import Options
from irspec.evaluation.result import Result, with_ids_made_later

IDS = ("10", "2", "7")


def _fields(metrics: str | None = "P@1, NumRet") -> dict:
    bound = tuple(bind_metrics(metrics)) if metrics else ()
    values = np.arange(3.0 * len(bound)).reshape(3, len(bound))
    return {"run_name": "r", "run_source": "<s>", "metrics": bound, "values": values, "options": Options()}


class Maker:
    """The ids, and how many times they were asked for."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> tuple[str, ...]:
        self.calls += 1
        return IDS


def test_the_ids_are_made_once_when_first_read():
    make = Maker()
    res = with_ids_made_later(make, **_fields())
    assert type(res) is Result
    assert res.aggregate() == {"P@1": (0.0 + 2.0 + 4.0) / 3, "NumRet": 1.0 + 3.0 + 5.0}
    assert res.column("NumRet").tolist() == [1.0, 3.0, 5.0]
    assert make.calls == 0  # aggregated and read by column: no id needed
    assert res.query_ids == IDS and make.calls == 1
    assert res.query_ids is res.query_ids and make.calls == 1


def test_it_reads_as_a_result_given_its_ids():
    eager = Result(query_ids=IDS, **_fields())
    later = with_ids_made_later(Maker(), **_fields())
    assert later.per_query() == eager.per_query()
    assert later.to_frame().equals(eager.to_frame())
    assert repr(later) == repr(eager) and str(later) == str(eager)
    assert dataclasses.asdict(with_ids_made_later(Maker(), **_fields()))["query_ids"] == IDS


@pytest.mark.parametrize("how", ["replace", "copy", "deepcopy"])
def test_a_copy_has_the_ids(how: str):
    make = Maker()
    res = with_ids_made_later(make, **_fields())
    made = {
        "replace": lambda: dataclasses.replace(res, run_name="other"),
        "copy": lambda: copy.copy(res),
        "deepcopy": lambda: copy.deepcopy(res),
    }[how]()
    assert made.query_ids == IDS and res.query_ids == IDS and make.calls == 1


def test_its_ids_are_never_assigned():
    res = with_ids_made_later(Maker(), **_fields())
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.query_ids = ("x",)  # type: ignore[misc]
    assert res.query_ids == IDS
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.query_ids = ("x",)  # type: ignore[misc]
    with pytest.raises(AttributeError):
        _ = res.no_such_field  # type: ignore[attr-defined]
    assert not hasattr(Result, "query_ids")  # a field without a default, as before


def test_it_pickles_as_a_result_given_its_ids():
    # with no metric: a bound metric holds functions made at binding, which no result pickles with
    later = with_ids_made_later(lambda: IDS, **_fields(None))  # a lambda: unpicklable, and not pickled
    eager = Result(query_ids=IDS, **_fields(None))
    back = pickle.loads(pickle.dumps(later))
    assert back.query_ids == IDS and back.run_name == "r" and back.values.shape == (3, 0)
    assert later.__getstate__().keys() == eager.__getstate__().keys()


def test_evaluate_topk_gives_the_users_ids_when_read():
    test = sp.csr_array(np.array([[1, 0, 0], [0, 1, 0], [0, 0, 0]] + [[1, 1, 0]] * 9))
    top = np.array([[0, 1]] * 12)
    res = irspec.evaluate_topk(test, top, "P@1")
    assert res.query_ids == ("0", "1", "10", "11", "3", "4", "5", "6", "7", "8", "9")
    assert res.per_query()["10"] == {"P@1": 1.0} and res.per_query()["1"] == {"P@1": 0.0}
