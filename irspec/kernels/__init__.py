"""``irspec.kernels``, the path of :mod:`irspec.builtin.kernels` until irspec 0.1.0, kept for one release:
importing it warns (a :class:`DeprecationWarning`) and gives that package itself (and each of its modules
under the old name: ``irspec.kernels.gain``)."""

import irspec.builtin.kernels as new
from irspec.lazy import moved_module

moved_module(__name__, new)
