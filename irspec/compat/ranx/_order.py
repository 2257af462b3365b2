"""The order in which ranx 0.3.21 ranks a query's documents, ties included.

ranx sorts scores with numba's ``np.argsort``, whose default kind is a quicksort: insertion sort below
16 elements (stable), and above it median-of-three partitions that move equal keys past each other. The
order of tied documents is therefore the input's order for a short list and an accident of the
partitions for a longer one, and ranx's values on ties follow it. irspec breaks ties by document id
(trec_eval's rule), so this module reproduces ranx's order, and the caller hands irspec a ranking whose
tied scores are told apart by that order.

Two sorts appear in ranx: a :class:`Run` or :class:`Qrels` sorts its dicts by the argsort of the negated
scores (``Run.sort``); a plain dict handed to ``evaluate`` is sorted by the argsort of the scores,
reversed (``descending_sort``). The quicksort below follows numba's ``numba/misc/quicksort.py`` step by
step (pivot choice, swaps, the stack of partitions, the insertion sort of small ones), so the
permutation is the same for any input; without ties every sort gives the same order and the fast
paths below are taken.
"""

from __future__ import annotations

from collections.abc import Sequence

_SMALL = 15  # numba's SMALL_QUICKSORT: partitions up to this size are insertion-sorted


def numba_argsort(keys: Sequence[float]) -> list[int]:
    """The permutation numba's default ``np.argsort`` (quicksort) gives ``keys`` (finite floats).

    One function, its loops inlined and its values local: it runs once per query with tied scores, and
    a call per comparison would triple its time."""
    key = list(keys)
    order = list(range(len(key)))
    stack = [(0, len(order) - 1)] if len(order) > 1 else []
    while stack:
        low, high = stack.pop()
        while high - low >= _SMALL:
            # median of three, numba's swaps: low <= mid <= high
            mid = (low + high) >> 1
            if key[order[mid]] < key[order[low]]:
                order[low], order[mid] = order[mid], order[low]
            if key[order[high]] < key[order[mid]]:
                order[high], order[mid] = order[mid], order[high]
            if key[order[mid]] < key[order[low]]:
                order[low], order[mid] = order[mid], order[low]
            pivot = key[order[mid]]
            order[high], order[mid] = order[mid], order[high]
            i, j = low, high - 1
            while True:
                while i < high and key[order[i]] < pivot:
                    i += 1
                while j >= low and pivot < key[order[j]]:
                    j -= 1
                if i >= j:
                    break
                order[i], order[j] = order[j], order[i]
                i += 1
                j -= 1
            order[i], order[high] = order[high], order[i]
            # the larger side waits on the stack, the smaller is sorted first (numba's order)
            if high - i > i - low:
                if high > i:
                    stack.append((i + 1, high))
                high = i - 1
            else:
                if i > low:
                    stack.append((low, i - 1))
                low = i + 1
        for i in range(low + 1, high + 1):  # insertion sort of the small partition (stable)
            item = order[i]
            value = key[item]
            j = i
            while j > low and value < key[order[j - 1]]:
                order[j] = order[j - 1]
                j -= 1
            order[j] = item
    return order


def descending(scores: Sequence[float], *, reversed_argsort: bool = False) -> list[int]:
    """Positions of ``scores`` in ranx's descending order: the argsort of the negated scores (a
    ``Run``'s or ``Qrels``'s sort), or with ``reversed_argsort`` the argsort of the scores reversed (a
    dict given to ``evaluate``)."""
    n = len(scores)
    if len(set(scores)) == n:  # no ties: one order whatever the sort
        return sorted(range(n), key=scores.__getitem__, reverse=True)
    if reversed_argsort:
        if n <= _SMALL:  # insertion sort: stable ascending, then reversed
            return sorted(range(n), key=scores.__getitem__)[::-1]
        return numba_argsort(scores)[::-1]
    negated = [-s for s in scores]
    if n <= _SMALL:
        return sorted(range(n), key=negated.__getitem__)
    return numba_argsort(negated)
