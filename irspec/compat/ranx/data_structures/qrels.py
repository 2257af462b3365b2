"""ranx's ``ranx.data_structures.qrels``: ``Qrels`` and the file kinds qrels are read from and written to."""

from __future__ import annotations

from irspec.compat.ranx._structures import QRELS_KINDS, Qrels
from irspec.compat.ranx._structures import get_file_kind as _kind

__all__ = ["Qrels", "get_file_kind"]


def get_file_kind(path: str = "qrels.json", kind: str | None = None) -> str:
    """The kind of a qrels file (``json``, ``trec``, ``gz``, ``parquet``): ``kind``, else the extension."""
    return _kind(path, kind, QRELS_KINDS)
