"""irspec-usermodel: user-model metrics for irspec (ERR, RBP and its residual, NCG).

The metrics are declared in :mod:`irspec_usermodel.plugin` (loaded by irspec through the ``irspec`` entry
point) and computed in :mod:`irspec_usermodel.kernels`, which is imported only when they are evaluated.
"""

__version__ = "0.1.0"
