"""Every plugin hook is a marked hook spec with a docstring that shows its literal signature.

After datasette's ``tests/test_docs.py``: the check is a function, and the last tests prove that it
fails for a hook that is not documented, so a new undocumented hook cannot slip through.
"""

from __future__ import annotations

import inspect

import pluggy
import pytest

from irspec.spec import hooks as hookspecs
from irspec.spec.plugins import get_plugin_manager


def _hook_functions() -> list:
    by_name = {f.__name__: f for f in hookspecs.HOOKS}
    for name, value in vars(hookspecs).items():
        if name.startswith("irspec_") and callable(value):
            by_name.setdefault(name, value)
    return [by_name[n] for n in sorted(by_name)]


def literal_signature(fn) -> str:
    """``name(arg1, arg2)``: the hook's name and argument names, as a plugin author writes them."""
    params = [p.name for p in inspect.signature(fn).parameters.values()]
    return f"{fn.__name__}({', '.join(params)})"


def hook_problems(fn, project: str = "irspec") -> list[str]:
    """What is wrong with the documentation of one hook spec (empty when nothing is)."""
    problems = []
    if getattr(fn, f"{project}_spec", None) is None:
        problems.append(f"{fn.__name__} has no @hookspec marker")
    doc = inspect.getdoc(fn) or ""
    if not doc.strip():
        problems.append(f"{fn.__name__} has no docstring")
    elif literal_signature(fn) not in doc:
        problems.append(
            f"the docstring of {fn.__name__} does not show its signature {literal_signature(fn)!r}"
        )
    return problems


HOOK_FUNCTIONS = _hook_functions()


def test_there_are_hooks():
    assert HOOK_FUNCTIONS
    assert "irspec_register_metrics" in [f.__name__ for f in HOOK_FUNCTIONS]


@pytest.mark.parametrize("hook", HOOK_FUNCTIONS, ids=lambda f: f.__name__)
def test_hook_is_documented(hook):
    assert hook_problems(hook) == []


def test_register_metrics_signature_is_in_its_docstring():
    assert literal_signature(hookspecs.irspec_register_metrics) == "irspec_register_metrics(register)"
    assert "irspec_register_metrics(register)" in hookspecs.irspec_register_metrics.__doc__


def test_register_readers_signature_is_in_its_docstring():
    assert literal_signature(hookspecs.irspec_register_readers) == "irspec_register_readers(register)"
    assert "irspec_register_readers(register)" in hookspecs.irspec_register_readers.__doc__


def test_hooks_tuple_lists_every_hook_of_the_module():
    in_module = {n for n, v in vars(hookspecs).items() if n.startswith("irspec_") and callable(v)}
    assert {f.__name__ for f in hookspecs.HOOKS} == in_module


def test_hooks_are_the_plugin_managers_hooks():
    pm = get_plugin_manager(load_entry_points=False)
    hook_names = {n for n in vars(pm.hook) if n.startswith("irspec_")}
    assert hook_names == {f.__name__ for f in HOOK_FUNCTIONS}


def test_hookspecs_exports_the_markers():
    import irspec

    assert irspec.hookimpl is hookspecs.hookimpl
    assert isinstance(hookspecs.hookspec, pluggy.HookspecMarker)
    # irspec's own marker, made without pluggy, which marks as pluggy's marker does (tests/test_registry.py)
    assert isinstance(hookspecs.hookimpl, hookspecs.HookimplMarker)
    assert hookspecs.hookimpl.project_name == pluggy.HookimplMarker("irspec").project_name


# --- the check fails when a hook is not documented -----------------------------------------------------


def test_check_fails_without_a_marker():
    def irspec_unmarked(register):
        """irspec_unmarked(register): documented, but not a hook spec."""

    assert hook_problems(irspec_unmarked) == ["irspec_unmarked has no @hookspec marker"]


def test_check_fails_without_a_docstring():
    @hookspecs.hookspec
    def irspec_undocumented(register):
        pass

    assert hook_problems(irspec_undocumented) == ["irspec_undocumented has no docstring"]


def test_check_fails_when_the_docstring_lacks_the_signature():
    @hookspecs.hookspec
    def irspec_vague(register, options):
        """Does things with register (but never spells out the call)."""

    problems = hook_problems(irspec_vague)
    assert len(problems) == 1
    assert "irspec_vague(register, options)" in problems[0]


def test_check_passes_for_a_documented_hook():
    @hookspecs.hookspec
    def irspec_good(register, options):
        """Do a thing.

        Signature: ``irspec_good(register, options)``.
        """

    assert hook_problems(irspec_good) == []
