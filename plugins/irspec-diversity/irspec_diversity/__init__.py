"""irspec-diversity: the intent-aware (diversity) metrics of TREC's Web track, as ndeval computes them.

The metrics are declared in :mod:`irspec_diversity.plugin` (loaded by irspec through the ``irspec`` entry
point), the qrels with subtopics are read by :mod:`irspec_diversity.subtopics`, and the values are
computed in :mod:`irspec_diversity.kernels`, imported only when a metric is evaluated.
"""

__version__ = "0.1.0"
