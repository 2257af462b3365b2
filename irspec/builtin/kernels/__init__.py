"""Vectorised metric kernels: ``kernel(ctx, metric) -> per-query float array``.

Each module computes one family over all queries at once from a :class:`irspec.evaluation.context.Context`. The
formulas and references are in the definitions' docs (:mod:`irspec.builtin`) and repeated briefly in
each kernel's docstring.
"""
