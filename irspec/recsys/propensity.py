"""Jain et al.'s propensity model of extreme classification: how likely a relevant item is observed.

Jain, Prabhu & Varma (KDD 2016) model the propensity of item l, the chance that it is marked relevant
where it is, as ``p_l = 1 / (1 + C (N_l + B)^-A)`` with ``C = (ln N - 1) (B + 1)^A``: ``N`` the number of
training points (users), ``N_l`` those with item l, and ``A``, ``B`` fitted per data set (0.55 and 1.5
in general; 0.5 and 0.4 for Wikipedia, 0.6 and 2.6 for Amazon). Popular items get a propensity near 1,
rare ones a small one, whose inverse the propensity-scored metrics (PSP@k, PSnDCG@k: see
:mod:`irspec.builtin.propensity`) weigh them by.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse

from irspec.errors import EvaluationError

__all__ = ["jain_propensity"]


def jain_propensity(train_matrix: Any, A: float = 0.55, B: float = 1.5) -> np.ndarray:
    """Each item's propensity under Jain et al.'s model, from a users × items training matrix (any
    scipy.sparse format, or a dense array): a float array with one value in (0, 1] per column.

    ``N``, the training points, is the matrix's number of rows, every one counted (as pyxclib's
    ``compute_inv_propesity`` counts them): give the training users' rows alone, not a matrix over
    an index that also holds users with no training interaction (held-out or cold-start users), which
    would raise N; :func:`~irspec.recsys.tables.evaluate_tables` does so. ``N_l`` counts the users
    whose stored value for item l is positive (for a 0/1 matrix, its column sum, as pyxclib's function
    takes; that function returns the inverses, ``1 / p``).
    Raises :class:`~irspec.errors.EvaluationError` for fewer than 3 users (``ln N - 1`` would not be
    positive) or ``A``, ``B`` that are not positive numbers.
    """
    for name, value in (("A", A), ("B", B)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
            raise EvaluationError(f"jain_propensity: {name} must be a positive number, got {value!r}")
    matrix = scipy.sparse.csc_array(train_matrix) if not scipy.sparse.issparse(train_matrix) else train_matrix
    if len(matrix.shape) != 2:
        raise EvaluationError(f"jain_propensity: expected a users × items matrix, got shape {matrix.shape}")
    users, items = matrix.shape
    if users < 3:
        raise EvaluationError(
            f"jain_propensity: the model needs at least 3 users (ln N - 1 > 0), the matrix has {users}"
        )
    coo = scipy.sparse.coo_array(matrix)
    # each (user, item) pair once, however many times a COO matrix stores it
    positive = scipy.sparse.coo_array(
        (np.ones(int((coo.data > 0).sum())), (coo.row[coo.data > 0], coo.col[coo.data > 0])),
        shape=(users, items),
    ).tocsc()
    positive.sum_duplicates()
    counts = np.diff(positive.indptr).astype(np.float64)
    C = (np.log(users) - 1.0) * (B + 1.0) ** A
    return 1.0 / (1.0 + C * (counts + B) ** -A)
