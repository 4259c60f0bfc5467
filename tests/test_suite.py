"""One seeded suite (sim/api/suite.py) for check, baseline and regress:
the same scenarios, in the same order, giving the same runs."""

from __future__ import annotations

import inspect

from prunecheck.model.config import CheckAt, RuntimeConfig
from prunecheck.sim.api.check import check_policy
from prunecheck.sim.api.regress import run_suite
from prunecheck.sim.api.suite import (
    DEFAULT_HORIZON,
    DEFAULT_LEVELS,
    DEFAULT_SEEDS,
    Suite,
)
from prunecheck.sim.subjects.loader import load_system


def test_the_defaults_are_defined_once() -> None:
    defaults = inspect.signature(check_policy).parameters
    assert (defaults["levels"].default, defaults["seeds"].default) == (
        DEFAULT_LEVELS,
        DEFAULT_SEEDS,
    )
    assert defaults["horizon"].default == DEFAULT_HORIZON
    assert Suite() == Suite(DEFAULT_LEVELS, DEFAULT_SEEDS, DEFAULT_HORIZON)


def test_of_fills_what_the_command_line_left_out() -> None:
    assert Suite.of(None, None, None) == Suite()
    assert Suite.of([], [], 0) == Suite()
    assert Suite.of([0.5], None, 60.0) == Suite((0.5,), DEFAULT_SEEDS, 60.0)


def test_scenarios_run_every_seed_at_a_level_then_the_next() -> None:
    suite = Suite((0.2, 1.0), (3, 1), 60.0)
    assert [(s.level, s.seed) for s in suite.scenarios()] == [
        (0.2, 3),
        (0.2, 1),
        (1.0, 3),
        (1.0, 1),
    ]
    assert suite.size() == 4
    assert {s.check_at for s in suite.scenarios(CheckAt.BEFORE_INVOKE)} == {CheckAt.BEFORE_INVOKE}


def test_check_and_regress_run_the_same_runs() -> None:
    suite = Suite((0.6, 1.0), (1, 2), 200.0)
    config = RuntimeConfig(check_at=CheckAt.AFTER_APPEND)
    checked = check_policy(
        "lowest_salience",
        config=config,
        levels=suite.levels,
        seeds=suite.seeds,
        horizon=suite.horizon,
        slow_levels=suite.slow_levels,
        max_examples=0,
    )
    baseline = list(run_suite(load_system("lowest_salience"), config, suite))
    assert [s.scenario.name for s in checked.scenarios] == [s.name for s in suite.scenarios()]
    assert [(r.level, r.seed) for r in baseline] == [(s.level, s.seed) for s in suite.scenarios()]
    assert [
        (s.invocations, s.events, dict(s.incidents), dict(s.exposed)) for s in checked.scenarios
    ] == [(r.invocations, r.events, dict(r.incidents), dict(r.exposed)) for r in baseline]
    assert any(r.incidents for r in baseline)  # the comparison compared something
