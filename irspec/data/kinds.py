"""The two kinds of input, qrels and runs: what their value column is called and how a TREC line holds it.

Shared by the text readers (:mod:`irspec.data.trec`), the dict and DataFrame inputs
(:mod:`irspec.data.objects`) and the checks of :mod:`irspec.data`, so that each says "qrels" or "run"
the same way.
"""

from __future__ import annotations

from irspec.errors import label_out_of_range
from irspec.frozen import frozen

__all__ = ["INT64", "QRELS", "RUN", "Kind", "label_out_of_range"]  # the last now irspec.errors', kept here


@frozen
class Kind:
    """Qrels or run: the value column and the fields of a TREC line."""

    kind: str  # "qrels" or "run"
    value: str  # name of the value column: "label" or "score"
    value_field: int  # 0-based index of the value among the fields
    min_fields: int
    max_fields: int | None
    expected: str  # the fields, as an error message names them

    def count_ok(self, n: int) -> bool:
        """Whether a line of ``n`` fields has the right number."""
        return n >= self.min_fields and (self.max_fields is None or n <= self.max_fields)


QRELS = Kind("qrels", "label", 3, 4, 4, "4 fields 'qid iter docno label'")
RUN = Kind("run", "score", 4, 5, None, "at least 5 fields 'qid iter docno rank score [runid]'")


INT64 = (-(2**63), 2**63 - 1)
"""The range of a label: qrels hold their labels as 64-bit integers."""
