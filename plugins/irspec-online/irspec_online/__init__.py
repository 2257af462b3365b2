"""irspec-online: online metrics for irspec, computed from search interaction logs.

:mod:`irspec_online.plugin` registers the ``log`` input reader, the metrics and the plan's ``ab:`` section
(loaded by irspec through the ``irspec`` entry point). Bottom to top, each module importing only those
before it: :mod:`irspec_online.records`, the records' format, checks and summaries and the
:class:`~irspec_online.records.InteractionLog` the metrics read; :mod:`irspec_online.kernels`, the metrics'
computations; :mod:`irspec_online.ab`, A/B tests of a log's arms; :mod:`irspec_online.streaming`, a log
larger than memory in one pass, and :mod:`irspec_online.spark`, the same kernels on Spark;
:mod:`irspec_online.sources`, the forms a log comes in; :mod:`irspec_online.log`, the reader irspec
calls (``read_log``). The plugin imports of irspec only the face and :mod:`irspec.plugin_api`.
"""

__version__ = "0.1.0"
