"""``irspec.datasets``, the path of :mod:`irspec.data.datasets` until irspec 0.1.0, kept for one release:
importing it warns (a :class:`DeprecationWarning`) and gives that module itself."""

import irspec.data.datasets as new
from irspec.lazy import moved_module

moved_module(__name__, new)
