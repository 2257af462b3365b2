"""irspec-online: online metrics for irspec, computed from search interaction logs.

:mod:`irspec_online.plugin` registers the ``log`` input reader and the metrics (loaded by irspec through
the ``irspec`` entry point); :mod:`irspec_online.log` reads logs; :mod:`irspec_online.kernels` computes.
"""

__version__ = "0.1.0"
