"""ranx's ``ranx.data_structures.run``: ``Run`` and the file kinds runs are read from and written to."""

from irspec.compat.ranx._structures import Run, get_file_kind

__all__ = ["Run", "get_file_kind"]
