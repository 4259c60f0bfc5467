"""Every docstring example of the package runs, module by module.

The modules are found by walking ``prunecheck`` on disk
(:func:`pkgutil.walk_packages`), so a new module's examples run without
being listed here, and each is imported by its canonical name
(``prunecheck.sim.drivers.shape``, never an old alias or a file path).
Only ``__main__`` modules are left out: importing one runs the command
line.  A module that needs an optional library (a framework adapter) is
skipped only when that library is not installed; the dev install has them
all, so CI runs every example.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil
import re
import types
from pathlib import Path

import pytest

import prunecheck


def _module_names() -> list[str]:
    """Every module of ``prunecheck`` on disk, packages included, sorted."""
    found = {"prunecheck"}
    for info in pkgutil.walk_packages(prunecheck.__path__, "prunecheck."):
        if info.name.rsplit(".", 1)[-1] != "__main__":
            found.add(info.name)
    return sorted(found)


MODULES = _module_names()


def _import(name: str) -> types.ModuleType:
    """``name`` imported; skipped only if a library outside prunecheck is missing."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] == "prunecheck":
            raise
        pytest.skip(f"{name} needs the optional library {exc.name!r}, not installed")


def run_doctests(module: types.ModuleType) -> doctest.TestResults:
    """Run the examples of every docstring defined in ``module`` (not of
    names it imports), as :func:`doctest.testmod` would."""
    runner = doctest.DocTestRunner(verbose=False)
    for test in doctest.DocTestFinder().find(module, module.__name__):
        runner.run(test)
    return runner.summarize(verbose=False)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    result = run_doctests(_import(name))
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"


_PROMPT = re.compile(r"^\s*>>> ", re.MULTILINE)


def test_every_module_that_shows_an_example_has_it_collected() -> None:
    """A module with a line that starts with ``>>>`` has examples the finder
    sees: the walk reaches it and its examples are in docstrings that run."""
    shown, collected = [], []
    for name in MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError:
            continue  # an optional library is missing: its test above is skipped
        if not _PROMPT.search(Path(inspect.getfile(module)).read_text(encoding="utf-8")):
            continue
        shown.append(name)
        if any(t.examples for t in doctest.DocTestFinder().find(module, name)):
            collected.append(name)
    assert shown == collected
    assert {
        "prunecheck.model.provider.rules",
        "prunecheck.model.provider.request_body",
        "prunecheck.model.exposure",
        "prunecheck.model.errors",
        "prunecheck.sim.drivers.shape",
        "prunecheck.sim.stats.survival",
        "prunecheck.guard.store",
    } <= set(collected)


_BROKEN = '''
def add(a, b):
    """
    >>> add(2, 2)
    5
    """
    return a + b
'''


def test_a_wrong_example_fails() -> None:
    module = types.ModuleType("prunecheck_doctest_probe")
    exec(_BROKEN, module.__dict__)  # a module whose one example is wrong
    result = run_doctests(module)
    assert (result.attempted, result.failed) == (1, 1)
