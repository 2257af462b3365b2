"""Drop-in replacements for other evaluation libraries' APIs, computed by irspec's engine.

``irspec.compat.pytrec_eval``: pytrec_eval's ``RelevanceEvaluator`` and module functions, so that code
written against pytrec_eval changes one line: ``import irspec.compat.pytrec_eval as pytrec_eval``.
``irspec.compat.torchmetrics``: torchmetrics' retrieval metrics (``from irspec.compat.torchmetrics import
RetrievalNormalizedDCG``), every query at once, on numpy arrays or torch tensors.
Importing this package loads nothing else.
"""
