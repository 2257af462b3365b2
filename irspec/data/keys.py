"""Keys of docnos given as bytes, and of (query, docno) pairs: how a run read by numpy
(:mod:`irspec.data.plain`) is joined with the judgments (:attr:`irspec.evaluation.index.QrelsIndex.plain_keys`).

A module of its own, apart from the reader: the engine's index and ranking key their sides with these
functions at the top of their modules, and a run of dicts (the pytrec_eval drop-in) loads no reader of
files for them.
"""

from __future__ import annotations

import numpy as np

__all__ = ["pair_keys", "text_hash"]

_MIX = np.uint64(0x9E3779B97F4A7C15)  # odd 64-bit constants: a docno's words mixed into one key
_MIXES = (_MIX, np.uint64(0xC2B2AE3D27D4EB4F), np.uint64(0x165667B19E3779F9), np.uint64(0xD6E8FEB86659FD93))


def text_hash(texts: np.ndarray) -> np.ndarray:
    """A 64-bit key of each of ``texts`` (bytes ``S8``, ``S16``, ... zero-padded): equal texts, equal
    keys, whatever their arrays' widths (a zero word adds nothing). Texts unalike may share a key:
    whoever matches by keys checks the texts."""
    words = np.ascontiguousarray(texts).view(np.uint64).reshape(len(texts), texts.dtype.itemsize // 8)
    with np.errstate(over="ignore"):
        key = words[:, 0] * _MIX
        for j in range(1, words.shape[1]):
            key ^= words[:, j] * _MIXES[j % 4]
        # a product's low bits see only the word's low bytes: the high ones folded down (all_distinct
        # compares keys by their low bits)
        key ^= key >> np.uint64(29)
    return key


def pair_keys(hashes: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Keys of (query code, docno) pairs from the docnos' :func:`text_hash` and the query codes: equal
    pairs, equal keys (the engine's join of a :class:`~irspec.data.plain.PlainRun` with the qrels, every match checked)."""
    with np.errstate(over="ignore"):
        return hashes ^ (codes.astype(np.uint64) * _MIXES[1])
