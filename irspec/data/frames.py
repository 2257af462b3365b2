"""Data frames out: columns of values made into a polars or pandas DataFrame, whichever is asked for.

The results' and the comparisons' ``to_frame`` build plain columns (lists or numpy arrays) and their
types, and this module makes the frame. Neither library is imported until a frame is asked for:
polars is an irspec dependency, pandas is installed separately (a clear error says so when it is not).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from irspec.errors import IrspecError, suggest

__all__ = ["BACKENDS", "check_backend", "make_frame"]

BACKENDS = ("polars", "pandas")
"""The data-frame libraries ``to_frame`` can make a frame of."""

_POLARS_TYPES = {"str": "Utf8", "int": "Int64", "float": "Float64", "bool": "Boolean"}


def check_backend(backend: str) -> None:
    """Raise :class:`~irspec.errors.IrspecError` unless ``backend`` is one of :data:`BACKENDS`."""
    if backend not in BACKENDS:
        close = suggest(str(backend), BACKENDS, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise IrspecError(f"to_frame: backend must be one of {', '.join(BACKENDS)}, not {backend!r}{hint}")


def make_frame(columns: Mapping[str, Any], types: Mapping[str, str], backend: str = "polars") -> Any:
    """A DataFrame of ``columns`` (name -> list or numpy array, in order), each of the type ``types``
    names (``str``, ``int``, ``float`` or ``bool``), so that an empty frame or a column of nulls has the
    same types as a full one. ``None`` is null; so is a float NaN in polars (in pandas NaN is its null).
    """
    check_backend(backend)
    if backend == "pandas":
        try:
            import pandas
        except ImportError:
            raise IrspecError(
                "to_frame(backend='pandas') needs pandas: pip install pandas (or use backend='polars')"
            ) from None
        return pandas.DataFrame(dict(columns), columns=list(columns))
    import polars

    schema = {name: getattr(polars, _POLARS_TYPES[types[name]]) for name in columns}
    # polars turns NaN into null only in numpy input; a float column of Python numbers becomes one
    data = {
        name: np.asarray(col, dtype=np.float64) if types[name] == "float" else col
        for name, col in columns.items()
    }
    return polars.DataFrame(data, schema=schema, nan_to_null=True)
