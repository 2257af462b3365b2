"""Fixtures of irspec-diversity's tests: irspec.testing's ``irspec_plugin``, here once for every test
module (a module that imported it as well as taking it as an argument redefined the name), also when
irspec is not installed and its pytest11 entry point is missing."""

from __future__ import annotations

from irspec.testing import irspec_plugin  # noqa: F401  (the fixture, also when irspec is not installed)
