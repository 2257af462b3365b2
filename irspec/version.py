"""The version of irspec, in one module every other can import (``pyproject.toml`` repeats it)."""

__version__ = "0.1.0"
