"""Modules moved into subpackages stay importable under their old names."""

from __future__ import annotations

import importlib
import sys
import warnings

import pytest

from prunecheck.sim import MOVED


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_name_is_the_moved_module_with_a_warning(old: str) -> None:
    new = importlib.import_module(f"prunecheck.sim.{MOVED[old]}")
    sys.modules.pop(f"prunecheck.sim.{old}", None)  # imported by an earlier test
    with pytest.warns(DeprecationWarning, match=f"moved to {new.__name__}"):
        aliased = importlib.import_module(f"prunecheck.sim.{old}")
    assert aliased is new


def test_submodule_of_a_moved_package_is_not_a_second_copy() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        old = importlib.import_module("prunecheck.sim.frameworks.spec")
    assert old is importlib.import_module("prunecheck.sim.adapters.frameworks.spec")


def _old(module: str, name: str) -> object:
    """``from <module> import <name>``, spelled so that mypy does not look
    for ``module`` among the files: old names exist only through the finder
    in ``prunecheck/sim/__init__.py``, at run time."""
    return getattr(importlib.import_module(module), name)


def test_names_users_import_from_the_old_homes() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from prunecheck.sim.adapters import ListPolicy, list_policy

        check_policy = _old("prunecheck.sim.check", "check_policy")
        load_policy = _old("prunecheck.sim.loading", "load_policy")
        execution = _old("prunecheck.sim.stimuli", "Execution")
        under_test = _old("prunecheck.sim.stimuli", "RuntimeUnderTest")
        incidents_of = _old("prunecheck.sim.under_test", "incidents_of")
    assert all(callable(x) for x in (list_policy, check_policy, load_policy, incidents_of))
    assert all(isinstance(x, type) for x in (ListPolicy, execution, under_test))
