"""irspec-online: online metrics for irspec, computed from search interaction logs.

:mod:`irspec_online.plugin` registers the ``log`` input reader and the metrics (loaded by irspec through
the ``irspec`` entry point); :mod:`irspec_online.log` reads logs; :mod:`irspec_online.kernels` computes;
:mod:`irspec_online.streaming` evaluates a log larger than memory in one pass; :mod:`irspec_online.ab`
compares a log's arms (online A/B tests); :mod:`irspec_online.spark` runs the same on Spark.
"""

__version__ = "0.1.0"
