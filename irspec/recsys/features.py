"""What intra-list diversity and serendipity read beside the lists: the items' features (or a distance
function) and each user's expected items, checked and made the context's ``"features"`` and
``"expected"`` inputs (:mod:`irspec.builtin.kernels.beyond` reads them).

``features=`` and ``expected=`` of :func:`irspec.evaluate_topk` and :func:`irspec.evaluate_scores` come
here; an error names the argument, and the item or user at fault.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse

from irspec.errors import InputError
from irspec.frozen import frozen

__all__ = ["ItemFeatures", "expected_items", "item_features"]


@frozen
class ItemFeatures:
    """The ``"features"`` input: an items × features CSR matrix (float64, no explicit zeros), or a
    ``function`` ``d(a, b)`` of two arrays of item indices returning their distances; one of the two."""

    matrix: scipy.sparse.csr_array | None = None
    function: Callable[[np.ndarray, np.ndarray], Any] | None = None


def item_features(features: Any, items: int) -> ItemFeatures:
    """``features=`` checked: a distance function, or a matrix with a row per item of the catalogue
    (``items``, the test matrix's columns), numbers, every one finite."""
    if callable(features) and not hasattr(features, "shape"):
        return ItemFeatures(function=features)
    if scipy.sparse.issparse(features):
        matrix = scipy.sparse.csr_array(features, copy=True)
    else:
        dense = np.asarray(features)
        if dense.ndim != 2 or dense.dtype.kind not in "biuf":
            raise InputError(
                "features must be an items × features matrix of numbers (numpy or scipy.sparse) or a "
                f"distance function d(a, b), got shape {dense.shape} of {dense.dtype}",
                "<features>",
            )
        matrix = scipy.sparse.csr_array(dense)
    if matrix.ndim != 2 or matrix.shape[0] != items:
        raise InputError(
            f"features has shape {matrix.shape}: one row per item of test_matrix ({items}) expected",
            "<features>",
        )
    if matrix.dtype.kind not in "biuf":
        raise InputError(f"features must hold numbers, got {matrix.dtype}", "<features>")
    matrix = matrix.astype(np.float64)
    matrix.sum_duplicates()
    bad = ~np.isfinite(matrix.data)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        row = int(np.searchsorted(matrix.indptr, i, side="right") - 1)
        raise InputError(
            f"item {row}, feature {int(matrix.indices[i])}: {matrix.data[i]} is not finite", "<features>"
        )
    matrix.eliminate_zeros()  # the kernels count stored entries as the features an item has
    return ItemFeatures(matrix=matrix)


def expected_items(expected: Any, shape: tuple[int, int]) -> scipy.sparse.csr_array:
    """``expected=`` as a users × items CSR matrix of booleans, indices sorted: from a sparse matrix of
    test_matrix's shape (its stored entries, whatever their values, as ``exclude=``'s), or from a users × m
    integer array of item indices, ``-1`` padding (a primitive recommender's lists), whose rows and items
    :func:`irspec.recsys.matrices.evaluate_topk` has checked as it checks ``top_items``."""
    if scipy.sparse.issparse(expected):
        if expected.shape != shape:
            raise InputError(
                f"expected has shape {expected.shape}; expected {shape}, test_matrix's", "<expected>"
            )
        matrix = scipy.sparse.csr_array(expected, copy=True)
    else:
        rows, cols = np.nonzero(expected >= 0)
        items = expected[rows, cols].astype(np.int64)
        matrix = scipy.sparse.csr_array((np.ones(len(rows), dtype=bool), (rows, items)), shape=shape)
    matrix.sum_duplicates()  # an item given twice is expected once
    matrix.data = np.ones(len(matrix.data), dtype=bool)
    return matrix
