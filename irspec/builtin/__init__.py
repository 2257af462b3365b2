"""The built-in metrics, each family a plugin module registered through ``irspec_register_metrics``.

These modules only declare definitions (names, parameters, docs); the numerical kernels live in
:mod:`irspec.builtin.kernels` and are named by ``"module:function"`` strings, so that parsing a spec never
imports numpy.
"""
