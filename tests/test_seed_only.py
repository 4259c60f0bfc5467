"""The same seed gives the same search whatever the process imported (issue 30:
the command line, the Python API and the pytest plugin give the same bytes).

Hypothesis draws now and then from a pool of constants of the process's local
modules (:mod:`prunecheck.sim.support.seed_only`); a module full of small
integers, imported between two searches of one seed, changed the second
search's draws before prunecheck's searches emptied that pool.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from loops_fake import FakeAdapter, buggy

from prunecheck.model.trace import dumps
from prunecheck.sim.api.python_api import search_policy
from prunecheck.sim.drivers.action_search import search
from prunecheck.sim.subjects.loops.scenarios import SCENARIOS, ScenarioClass
from prunecheck.sim.subjects.loops.steps import schedule_to_json
from prunecheck.sim.subjects.loops.system import LoopSystem
from prunecheck.sim.support import seed_only as seed_only_module
from prunecheck.sim.support.seed_only import seed_only


def _load_constants_module(tmp_path: Path) -> None:
    """A local module (outside site-packages) whose source holds many constants."""
    path = tmp_path / "many_constants.py"
    values = ", ".join(str(n) for n in range(2, 400))
    words = ", ".join(repr(f"user message {n}") for n in range(60))
    path.write_text(f"NUMBERS = ({values},)\nWORDS = ({words},)\n")
    spec = importlib.util.spec_from_file_location("prunecheck_test_many_constants", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)


def _found(seed: int) -> tuple[str, int, int, list[tuple[str, int]]]:
    """What a search of ``seed`` did: the schedule it found, how many it ran,
    their steps, and how often each kind of step was taken."""
    result = search(LoopSystem.of(FakeAdapter(), buggy, SCENARIOS[ScenarioClass.CANCEL]), seed=seed,
                    max_examples=30)  # fmt: skip
    found = result.found
    text = schedule_to_json(found.steps, target="t", framework="fake") if found else ""
    return text, result.examples, result.steps, sorted(result.exercised.items())


def _policy_search(seed: int) -> str:
    """A policy search's counterexample of ``seed``, as trace JSON ("" if none)."""
    result = search_policy("recency", seed=seed, max_examples=5)
    return dumps(result.trace) if result.trace is not None else ""


def test_a_search_draws_the_same_after_more_local_modules_are_imported(tmp_path: Path) -> None:
    """Seed 2's policy search found another counterexample once the module was
    imported, before searches emptied the pool (seeds 1 and 3 did not change)."""
    before = _found(1), _policy_search(2)
    _load_constants_module(tmp_path)
    after = _found(1), _policy_search(2)
    assert after == before


def test_the_pool_comes_back_after_the_last_search(monkeypatch: pytest.MonkeyPatch) -> None:
    from hypothesis.internal.conjecture import providers

    own, cache = providers._get_local_constants, providers.CONSTANTS_CACHE
    with seed_only():
        with seed_only():
            assert len(providers._get_local_constants()) == 0
        assert providers._get_local_constants is not own  # the outer search still runs
    assert (providers._get_local_constants, providers.CONSTANTS_CACHE) == (own, cache)
    assert seed_only_module._depth == 0
