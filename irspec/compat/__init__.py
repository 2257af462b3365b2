"""Drop-in replacements for other evaluation libraries' APIs, computed by irspec's engine.

``irspec.compat.pytrec_eval``: pytrec_eval's ``RelevanceEvaluator`` and module functions, so that code
written against pytrec_eval changes one line: ``import irspec.compat.pytrec_eval as pytrec_eval``.
``irspec.compat.ir_measures``: ir_measures' top level (``import irspec.compat.ir_measures as ir_measures``),
and irspec as a provider inside ir_measures itself (``irspec.compat.ir_measures.register()``).
``irspec.compat.ranx``: ranx's ``Qrels``, ``Run``, ``evaluate``, ``compare``, ``fuse``, ...: ``from
irspec.compat import ranx``.
``irspec.compat.torchmetrics``: torchmetrics' retrieval metrics (``from irspec.compat.torchmetrics import
RetrievalNormalizedDCG``), every query at once, on numpy arrays or torch tensors.
Importing this package loads nothing else.
"""
