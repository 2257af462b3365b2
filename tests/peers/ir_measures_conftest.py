"""The conftest.py put beside ir_measures 0.4.3's own tests (from its sdist) by tests/test_ir_measures_suite.py.

``IRSPEC_SUITE_MODE`` says what the tests' ``import ir_measures`` gets:

- ``peer``: ir_measures itself, nothing of irspec (the baseline: what fails here whatever irspec does);
- ``dropin``: ``irspec.compat.ir_measures``, under the name ``ir_measures``. The module standing in keeps
  the installed package's ``__spec__``, ``__path__`` and ``__file__``, so that a package resource
  ir_measures reads by its name (gdeval's script, ``pkgutil.get_data("ir_measures", ...)``) is still found;
  every attribute is the drop-in's;
- ``registered``: ir_measures itself with irspec's provider put first in its default pipeline and its
  registry (``irspec.compat.ir_measures.register()``), as PyTerrier's users run it.

In every mode, ir_measures' providers that are not available here (their packages are not installed, as
``ranx`` and ``trectools``) are left out of its registry of providers, so that the tests which compare
every registered provider (``test_measures.py``) compare those that can run rather than stop at the first
that cannot.
"""

import os
import sys
import types

import ir_measures

for _name, _provider in list(ir_measures.providers.registry.items()):
    if not _provider.is_available():
        del ir_measures.providers.registry[_name]

_MODE = os.environ.get("IRSPEC_SUITE_MODE", "peer")
if _MODE == "dropin":
    import irspec.compat.ir_measures as _dropin

    class _StandIn(types.ModuleType):
        def __getattr__(self, name):
            return getattr(_dropin, name)

    _module = _StandIn("ir_measures")
    _module.__spec__, _module.__path__, _module.__file__ = (
        ir_measures.__spec__,
        ir_measures.__path__,
        ir_measures.__file__,
    )
    sys.modules["ir_measures"] = _module
elif _MODE == "registered":
    import irspec.compat.ir_measures as _dropin

    _dropin.register()
elif _MODE != "peer":
    raise SystemExit(f"IRSPEC_SUITE_MODE: peer, dropin or registered, not {_MODE!r}")
